//! Formats are forever, for Ribbon filters: `tests/fixtures/format-ribbon-2026-12` holds
//! a Ribbon key's metadata, solved shard pages of two generations (version 1), staging
//! pages and operands, and its tally, as compacted pages, operands in an L0 file and
//! operands only in the WAL. It must read like a fresh store that ran the same
//! operations.
//!
//! Regenerate it only when adding a format version (keeping the old fixture):
//! `cargo test --test format_fixture_ribbon -- --ignored write_fixture`.

mod common;

use rocksketch::Store;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-ribbon-2026-12")
}

fn phase(store: &Store, n: u32) {
    let r = store.ribbon("rb");
    if n == 0 {
        r.reserve(0.001).unwrap();
    }
    let items: Vec<String> = (0..4_000).map(|i| format!("r{n}-{i}")).collect();
    for chunk in items.chunks(300) {
        r.add(chunk).unwrap();
    }
    // Two generations; the last phase's items stay staged.
    if n < 2 {
        assert_eq!(r.build().unwrap(), 4_000);
    }
}

fn answers(store: &Store) -> (Vec<bool>, String) {
    let probes: Vec<String> = (0..3)
        .flat_map(|n| (0..4_000).map(move |i| format!("r{n}-{i}")))
        .chain((0..4_000).map(|i| format!("x{i}")))
        .collect();
    let r = store.ribbon("rb");
    (
        r.mexists(&probes).unwrap(),
        format!("{:?}", r.info().unwrap()),
    )
}

#[test]
fn the_fixture_reads_like_a_fresh_store() {
    let fixture = common::Fixture::open(&fixture(), phase);
    let got = fixture.answers(answers);
    assert!(
        got.0[..12_000].iter().all(|f| *f),
        "a built or staged item reads absent"
    );
    let info = fixture.old.ribbon("rb").info().unwrap();
    assert_eq!(
        (info.generations, info.built, info.staged),
        (2, 8_000, 4_000)
    );
    fixture.compacts_to(&got, answers);
    // The staged items still build, into shards that answer as before.
    assert_eq!(fixture.old.ribbon("rb").build().unwrap(), 4_000);
    assert!(answers(&fixture.old).0[..12_000].iter().all(|f| *f));
}

#[test]
#[ignore = "writes the fixture; run only when adding a format version"]
fn write_fixture() {
    common::write_fixture(&fixture(), phase);
}
