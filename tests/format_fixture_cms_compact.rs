//! Formats are forever, for count-min deltas in the compact form (form 2 of the counter
//! delta, since 2026-12: varint entries): `tests/fixtures/format-cms-compact-2026-12`
//! holds sketches whose increments were written in that form, as compacted pages,
//! operands in an L0 file and operands only in the WAL, with additions of every varint
//! width (1 to 5 bytes) and saturating ones. It must read like a fresh store that ran
//! the same operations. (`format-v1` keeps the fixed-width form 0 readable.)
//!
//! Regenerate it only when adding a format version (keeping the old fixture):
//! `cargo test --test format_fixture_cms_compact -- --ignored write_fixture`.

mod common;

use rocksketch::Store;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-cms-compact-2026-12")
}

/// Additions of 1 to 5 varint bytes, and one past `u32::MAX`.
const INCREMENTS: [u64; 6] = [1, 200, 40_000, 3_000_000, 1 << 29, 1 << 33];

fn phase(store: &Store, n: u32) {
    if n == 0 {
        // One page of counters, and many.
        store.cms("narrow").init_by_dim(1_000, 3).unwrap();
        store.cms("wide").init_by_dim(50_000, 2).unwrap();
    }
    for key in ["narrow", "wide"] {
        let pairs: Vec<(String, u64)> = (0..300u32)
            .map(|i| {
                let incr = INCREMENTS[(i + n) as usize % INCREMENTS.len()] / (1 + u64::from(n));
                (format!("{key}-{}", (i * (n + 3)) % 401), incr)
            })
            .collect();
        for chunk in pairs.chunks(37) {
            store.cms(key).incr_by(chunk).unwrap();
        }
        store
            .cms(key)
            .incr_by_with_estimates(&[("once", 7)])
            .unwrap();
    }
}

type Answers = (Vec<u32>, Vec<u32>, String);

fn answers(store: &Store) -> Answers {
    let probes: Vec<String> = (0..500).map(|i| format!("narrow-{i}")).collect();
    let wide: Vec<String> = (0..500).map(|i| format!("wide-{i}")).collect();
    (
        store.cms("narrow").query(&probes).unwrap(),
        store.cms("wide").query(&wide).unwrap(),
        format!(
            "{:?} {:?}",
            store.cms("narrow").info().unwrap(),
            store.cms("wide").info().unwrap()
        ),
    )
}

#[test]
fn the_fixture_reads_like_a_fresh_store() {
    let fixture = common::Fixture::open(&fixture(), phase);
    let got = fixture.answers(answers);
    // Facts that do not rest on the fresh store: items were added, some saturated.
    assert!(got.0.contains(&u32::MAX), "none saturated");
    assert!(got.1.iter().filter(|e| **e > 0).count() >= 300);
    assert_eq!(
        got.1[500 - 1],
        fixture.old.cms("wide").query(&["wide-499"]).unwrap()[0]
    );
    fixture.compacts_to(&got, answers);
}

#[test]
#[ignore = "writes the fixture; run only when adding a format version"]
fn write_fixture() {
    common::write_fixture(&fixture(), phase);
}
