//! Formats are forever, for the kinds that came after the first fixtures:
//! `tests/fixtures/format-kinds-2026-11` holds 12-bit cuckoo pages and operands (cuckoo
//! format version 2), t-digest pages and operands (compress operands included) and
//! Top-K pages and operands (version 1 of both), as compacted pages, operands in an L0
//! file and operands only in the WAL. It must read like a fresh store that ran the same
//! operations.
//!
//! Regenerate it only when adding a format version (keeping the old fixture):
//! `cargo test --test format_fixture_kinds -- --ignored write_fixture`.

mod common;

use rocksketch::{CuckooOptions, Store};
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-kinds-2026-11")
}

fn phase(store: &Store, n: u32) {
    let (cf, td, tk) = (store.cuckoo("c12"), store.tdigest("td"), store.topk("tk"));
    if n == 0 {
        cf.reserve(CuckooOptions {
            capacity: 200,
            bucket_size: 4,
            expansion: 2,
            fp_bits: 12,
            ..Default::default()
        })
        .unwrap();
        td.create(20).unwrap();
        tk.reserve(5, 50, 3, 0.9).unwrap();
    }
    for i in 0..150 {
        cf.add(format!("c{n}-{i}")).unwrap();
    }
    for i in 0..20 {
        assert!(cf.delete(format!("c{n}-{i}")).unwrap());
    }
    let values: Vec<f64> = (0..300)
        .map(|i| f64::from((i * 37 + n * 11) % 1000) / 7.0)
        .collect();
    for chunk in values.chunks(40) {
        td.add(chunk).unwrap();
    }
    td.quantiles(&[0.5]).unwrap();
    let items: Vec<String> = (0..200).map(|i| format!("t{}", (i * i + n) % 23)).collect();
    tk.add(&items).unwrap();
}

type Answers = (
    Vec<u64>,
    String,
    Vec<u64>,
    String,
    Vec<(Vec<u8>, u32)>,
    Vec<u32>,
);

fn answers(store: &Store) -> Answers {
    let probes: Vec<String> = (0..3)
        .flat_map(|n| (0..150).map(move |i| format!("c{n}-{i}")))
        .chain((0..100).map(|i| format!("x{i}")))
        .collect();
    let cf = store.cuckoo("c12");
    let td = store.tdigest("td");
    let qs = [0.0, 0.1, 0.5, 0.9, 1.0];
    let items: Vec<String> = (0..30).map(|i| format!("t{i}")).collect();
    (
        probes.iter().map(|p| cf.count(p).unwrap()).collect(),
        format!("{:?} {:?}", cf.info().unwrap(), td.info().unwrap()),
        td.quantiles(&qs)
            .unwrap()
            .iter()
            .map(|q| q.to_bits())
            .collect(),
        format!("{:?}", store.topk("tk").info().unwrap()),
        store.topk("tk").list().unwrap(),
        store.topk("tk").count(&items).unwrap(),
    )
}

#[test]
fn the_fixture_reads_like_a_fresh_store() {
    let fixture = common::Fixture::open(&fixture(), phase);
    let (old, got) = (&fixture.old, fixture.answers(answers));
    let info = old.cuckoo("c12").info().unwrap();
    assert_eq!((info.inserted, info.deleted), (3 * 130, 3 * 20));
    assert!(info.filters >= 2);
    for n in 0..3 {
        for i in 20..150 {
            assert!(got.0[n * 150 + i] >= 1, "c{n}-{i} reads absent");
        }
    }
    assert_eq!(old.tdigest("td").info().unwrap().observations, 900);
    assert!(!got.4.is_empty());
    fixture.compacts_to(&got, answers);
}

#[test]
#[ignore = "writes the fixture; run only when adding a format version"]
fn write_fixture() {
    common::write_fixture(&fixture(), phase);
}
