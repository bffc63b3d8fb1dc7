//! Formats are forever: `tests/fixtures/format-v1` is a database written by format
//! version 1 of every page, operand and metadata record, and must stay readable. It holds
//! compacted pages, operands flushed to an L0 file, and operands only in the WAL.
//!
//! Regenerate it only when adding a format version (keeping the old fixture):
//! `cargo test --test format_fixture -- --ignored write_fixture`.

mod common;

use rocksketch::Store;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v1")
}

/// The operations, in three phases: the fixture and the fresh store both run them.
fn phase(store: &Store, n: u32) {
    let words: Vec<(String, u64)> = (0..200)
        .map(|i| (format!("w{}", i * (n + 1) % 97), u64::from(1 + i % 5)))
        .collect();
    let cms = store.cms("words");
    if n == 0 {
        cms.init_by_dim(100, 4).unwrap();
        store.bloom("seen").reserve(0.01, 50, 2).unwrap();
        store.bloom("fixed").reserve(0.001, 1000, 0).unwrap();
    }
    cms.incr_by(&words).unwrap();
    let seen = store.bloom("seen");
    for i in 0..120 {
        seen.add(format!("s{}-{i}", n)).unwrap();
    }
    store.bloom("fixed").add_blind(&[format!("f{n}")]).unwrap();
}

/// 300 words, then the 360 items `phase` adds to "seen", then 100 never added, then
/// the items added to "fixed".
fn probes() -> Vec<String> {
    let words = (0..300).map(|i| format!("w{i}"));
    let seen = (0..3).flat_map(|n| (0..120).map(move |i| format!("s{n}-{i}")));
    let absent = (0..100).map(|i| format!("x{i}"));
    let fixed = (0..3).map(|n| format!("f{n}"));
    words.chain(seen).chain(absent).chain(fixed).collect()
}

fn answers(store: &Store) -> (Vec<u32>, Vec<bool>, Vec<bool>, String, String) {
    let p = probes();
    (
        store.cms("words").query(&p).unwrap(),
        store.bloom("seen").mexists(&p).unwrap(),
        store.bloom("fixed").mexists(&p).unwrap(),
        format!("{:?}", store.cms("words").info().unwrap()),
        format!(
            "{:?} {:?}",
            store.bloom("seen").info().unwrap(),
            store.bloom("fixed").info().unwrap()
        ),
    )
}

#[test]
fn the_v1_fixture_reads_like_a_fresh_store() {
    let fixture = common::Fixture::open(&fixture(), phase);
    let (old, got) = (&fixture.old, fixture.answers(answers));
    // And facts that do not depend on the fresh store agreeing:
    assert_eq!(
        old.cms("words").info().unwrap().count,
        3 * (0..200u64).map(|i| 1 + i % 5).sum::<u64>()
    );
    assert!(
        got.1.iter().skip(300).take(360).all(|e| *e),
        "an added item reads absent"
    );
    assert!(
        got.2.iter().rev().take(3).all(|e| *e),
        "an added item reads absent"
    );
    assert!(old.bloom("seen").info().unwrap().filters >= 3);
    // Compaction of the old data under the current code keeps every answer.
    fixture.compacts_to(&got, answers);
}

#[test]
#[ignore = "writes the fixture; run only when adding a format version"]
fn write_fixture() {
    common::write_fixture(&fixture(), phase);
}

// ---- Cuckoo filters: their page and operand kinds came after the first fixture, so
// they have a fixture of their own, written the same way (three phases). ----

fn cuckoo_fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-v1-cuckoo")
}

fn cuckoo_phase(store: &Store, n: u32) {
    let cf = store.cuckoo("ids");
    if n == 0 {
        cf.reserve(rocksketch::CuckooOptions {
            capacity: 200,
            bucket_size: 4,
            expansion: 2,
            ..Default::default()
        })
        .unwrap();
        store
            .cuckoo("wide")
            .reserve(rocksketch::CuckooOptions {
                capacity: 1000,
                fp_bits: 16,
                ..Default::default()
            })
            .unwrap();
    }
    for i in 0..150 {
        cf.add(format!("c{n}-{i}")).unwrap();
    }
    for i in 0..20 {
        assert!(cf.delete(format!("c{n}-{i}")).unwrap());
    }
    store.cuckoo("wide").add(format!("w{n}")).unwrap();
}

fn cuckoo_answers(store: &Store) -> (Vec<u64>, Vec<bool>, String) {
    let probes: Vec<String> = (0..3)
        .flat_map(|n| (0..150).map(move |i| format!("c{n}-{i}")))
        .chain((0..3).map(|n| format!("w{n}")))
        .chain((0..100).map(|i| format!("x{i}")))
        .collect();
    let ids = store.cuckoo("ids");
    (
        probes.iter().map(|p| ids.count(p).unwrap()).collect(),
        store.cuckoo("wide").mexists(&probes).unwrap(),
        format!(
            "{:?} {:?}",
            ids.info().unwrap(),
            store.cuckoo("wide").info().unwrap()
        ),
    )
}

#[test]
fn the_v1_cuckoo_fixture_reads_like_a_fresh_store() {
    let fixture = common::Fixture::open(&cuckoo_fixture(), cuckoo_phase);
    let (old, got) = (&fixture.old, fixture.answers(cuckoo_answers));
    let info = old.cuckoo("ids").info().unwrap();
    assert_eq!((info.inserted, info.deleted), (3 * 130, 3 * 20));
    assert!(info.filters >= 2);
    // Items kept read present; the wide filter holds its three.
    for n in 0..3 {
        for i in 20..150 {
            assert!(got.0[n * 150 + i] >= 1, "c{n}-{i} reads absent");
        }
        assert!(got.1[450 + n]);
    }
    fixture.compacts_to(&got, cuckoo_answers);
}

#[test]
#[ignore = "writes the fixture; run only when adding a format version"]
fn write_cuckoo_fixture() {
    common::write_fixture(&cuckoo_fixture(), cuckoo_phase);
}
