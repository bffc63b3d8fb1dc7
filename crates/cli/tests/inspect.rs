//! `rocksketch inspect`: a store read offline, on a fixture and on a store whose operands
//! are then compacted away.

use rocksketch::inspect::inspect;
use rocksketch::{KeyType, Store, StoreOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_rocksketch");

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/format-v1")
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn operands_wait_until_a_compaction_folds_them() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        store.cms("clicks").init_by_dim(1000, 3).unwrap();
        for i in 0..20 {
            store
                .cms("clicks")
                .incr_by(&[(format!("item{i}"), 1)])
                .unwrap();
        }
        store.bloom("seen").reserve(0.01, 100, 2).unwrap();
        store.cuckoo("other").add("x").unwrap();
    }
    let report = inspect(dir.path(), Some(b"clicks")).unwrap();
    assert_eq!(report.keys.len(), 1);
    let clicks = &report.keys[0];
    assert_eq!(clicks.key_type, KeyType::Cms);
    assert!(clicks.params.contains("width: 1000"), "{}", clicks.params);
    // One page of counters (3000 cells fit a 4096-cell page) and the tally.
    assert_eq!(clicks.pages.len(), 2);
    let waiting: usize = clicks.pages.iter().map(|p| p.operands).sum();
    assert!(waiting >= 2, "{:?}", clicks.pages);
    assert!(clicks.pages.iter().any(|p| p.bytes >= 3000 * 4));

    let all = inspect(dir.path(), None).unwrap();
    let mut names: Vec<&[u8]> = all.keys.iter().map(|k| &k.key[..]).collect();
    names.sort();
    assert_eq!(names, [&b"clicks"[..], b"other", b"seen"]);
    assert_eq!(all.column_families.len(), 2);

    {
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        store.compact().unwrap();
    }
    let report = inspect(dir.path(), Some(b"clicks")).unwrap();
    let clicks = &report.keys[0];
    assert!(
        clicks.pages.iter().all(|p| p.operands == 0),
        "{:?}",
        clicks.pages
    );
    assert!(clicks.bytes_on_disk > 0);
    let pages_cf = &report.column_families[1];
    assert!(pages_cf
        .levels
        .iter()
        .any(|(_, files, bytes)| *files > 0 && *bytes > 0));
}

#[test]
fn the_fixture_is_reported_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files(&fixture()) {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let before = files(dir.path());
    let out = Command::new(BIN)
        .args(["inspect", "--json", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = report["keys"].as_array().unwrap();
    let find = |name: &str| keys.iter().find(|k| k["key"] == name).unwrap();
    assert_eq!(find("words")["type"], "CMSk-TYPE");
    assert_eq!(find("seen")["type"], "MBbloom--");
    // "seen" grew to 4 sub-filters; each has a page, and the tally one more.
    assert_eq!(find("seen")["pages"].as_array().unwrap().len(), 5);
    // The fixture keeps operands in an L0 file and in the WAL.
    assert!(find("seen")["operands_waiting"].as_u64().unwrap() > 0);
    assert_eq!(report["column_families"][1]["name"], "pages");
    assert_eq!(files(dir.path()), before, "inspect wrote to the store");

    let human = Command::new(BIN)
        .args(["inspect", "words", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("key \"words\" (db 0): CMSk-TYPE"), "{text}");
    assert!(!text.contains("\"seen\""), "{text}");
    let missing = Command::new(BIN)
        .args(["inspect", "--dir", "/nonexistent/rocksketch"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("holds no database"));
}

#[test]
fn a_metadata_record_that_does_not_decode_is_reported_as_corruption_of_its_key() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        store.cms("damaged").init_by_dim(100, 3).unwrap();
        let db = store.db().unwrap();
        let meta_cf = db.meta_cf().unwrap();
        let keys: Vec<Box<[u8]>> = db
            .iterator_cf(meta_cf, rocksdb::IteratorMode::Start)
            .map(|entry| entry.unwrap().0)
            .collect();
        assert_eq!(keys.len(), 1);
        db.put_cf(meta_cf, &keys[0], b"not a metadata record")
            .unwrap();
        store.flush().unwrap();
    }
    let err = inspect(dir.path(), None).unwrap_err();
    assert!(
        matches!(err, rocksketch::Error::Corruption { ref key, .. } if key == b"damaged"),
        "{err:?}"
    );
}
