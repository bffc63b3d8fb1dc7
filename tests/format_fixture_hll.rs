//! Formats are forever, for HyperLogLogs: `tests/fixtures/format-hll-2026-12` holds
//! HyperLogLog keys' metadata, pages in the packed and the dense encoding (version 1;
//! a compaction after the first phase materializes the 40-register `small` packed),
//! operands of pairs and of a dense layout (a `PFMERGE`), and a page put by an import
//! (`SET`), as compacted pages, operands in an L0 file and operands only in the WAL. It
//! must read like a fresh store that ran the same operations.
//!
//! Regenerate it only when adding a format version (keeping the old fixture):
//! `cargo test --test format_fixture_hll -- --ignored write_fixture`.

mod common;

use rocksketch::Store;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-hll-2026-12")
}

fn phase(store: &Store, n: u32) {
    let (small, big) = (store.hll("small"), store.hll("big"));
    for i in 0..40 {
        small.add(&[format!("s{n}-{i}")]).unwrap();
    }
    let items: Vec<String> = (0..3_000).map(|i| format!("b{n}-{i}")).collect();
    for chunk in items.chunks(250) {
        big.add_blind(chunk).unwrap();
    }
    store.hll("merged").merge_from(&["small", "big"]).unwrap();
    if n == 1 {
        let string = small.export().unwrap().unwrap();
        store.hll("imported").import(&string).unwrap();
    }
}

type Answers = (Vec<u64>, u64, Vec<Vec<u8>>);

fn answers(store: &Store) -> Answers {
    let keys = ["small", "big", "merged", "imported"];
    (
        keys.iter().map(|k| store.hll(k).count().unwrap()).collect(),
        store.hll_count(&keys).unwrap(),
        keys.iter()
            .map(|k| {
                store
                    .hll(k)
                    .registers()
                    .unwrap()
                    .unwrap()
                    .as_bytes()
                    .to_vec()
            })
            .collect(),
    )
}

#[test]
fn the_fixture_reads_like_a_fresh_store() {
    let fixture = common::Fixture::open(&fixture(), phase);
    let (old, got) = (&fixture.old, fixture.answers(answers));
    // 120 and 9000 distinct items: within Redis's error of their counts.
    assert!((115..=125).contains(&got.0[0]), "{:?}", got.0);
    assert!((8_700..=9_300).contains(&got.0[1]), "{:?}", got.0);
    assert_eq!(got.0[2], old.hll_count(&["small", "big"]).unwrap());
    fixture.compacts_to(&got, answers);
}

#[test]
#[ignore = "writes the fixture; run only when adding a format version"]
fn write_fixture() {
    common::write_fixture(&fixture(), phase);
}
