//! Formats are forever: `tests/fixtures/format-v1` is a database written by format
//! version 1 of every page, operand and metadata record, and must stay readable. It holds
//! compacted pages, operands flushed to an L0 file, and operands only in the WAL.
//!
//! Regenerate it only when adding a format version (keeping the old fixture):
//! `cargo test --test format_fixture -- --ignored write_fixture`.

mod common;

use rocksketch::{Store, StoreOptions};
use std::path::{Path, PathBuf};

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

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn the_v1_fixture_reads_like_a_fresh_store() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let old = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let fresh = common::TempStore::new();
    for n in 0..3 {
        phase(fresh.store(), n);
    }
    let got = answers(&old);
    assert_eq!(got, answers(fresh.store()));
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
    old.compact().unwrap();
    assert_eq!(answers(&old), got);
    assert_eq!(old.skipped_operands(), 0);
}

#[test]
#[ignore = "writes the fixture; run only when adding a format version"]
fn write_fixture() {
    let path = fixture();
    let _ = std::fs::remove_dir_all(&path);
    {
        let store = Store::open(&path, StoreOptions::default()).unwrap();
        phase(&store, 0);
        store.compact().unwrap(); // whole pages in the last level
        phase(&store, 1);
        let db = store.db();
        db.flush_cf(db.cf_handle(rocksketch::PAGES_CF).unwrap())
            .unwrap(); // operands in L0
        phase(&store, 2); // operands only in the WAL
    }
    for entry in std::fs::read_dir(&path).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("LOG") || name == "LOCK" {
            std::fs::remove_file(path.join(name)).unwrap();
        }
    }
}
