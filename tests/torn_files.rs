//! Torn and damaged files, as a crash or a disk leaves them: a write-ahead log whose last
//! record is cut at any byte, or followed by garbage, opens with every complete record
//! and none of the torn one, and the log says how many bytes were dropped; a flipped byte inside a table file's block makes reads of
//! the keys in that block answer a corruption error naming the key, while other keys
//! and writes go on; a data directory locked by another process is refused at open.

mod common;

use rocksketch::{Error, Store, StoreOptions};
use std::path::{Path, PathBuf};

/// The engine's log records, kept for the tests to read.
struct Captured;

static LINES: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
static CAPTURED: Captured = Captured;

impl log::Log for Captured {
    fn enabled(&self, _: &log::Metadata) -> bool {
        true
    }

    fn log(&self, record: &log::Record) {
        LINES.lock().unwrap().push(record.args().to_string());
    }

    fn flush(&self) {}
}

/// The log lines so far that mention `dir`.
fn logged_about(dir: &Path) -> Vec<String> {
    let _ = log::set_logger(&CAPTURED).map(|()| log::set_max_level(log::LevelFilter::Warn));
    let dir = dir.to_string_lossy().into_owned();
    let lines = LINES.lock().unwrap();
    lines.iter().filter(|l| l.contains(&dir)).cloned().collect()
}

fn open(dir: &Path) -> Store {
    Store::open(dir, StoreOptions::default()).unwrap()
}

/// The one write-ahead log file of a store that has not flushed.
fn wal(dir: &Path) -> PathBuf {
    let logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    let newest = logs
        .iter()
        .max_by_key(|p| std::fs::metadata(p).unwrap().len());
    newest.expect("a WAL file").clone()
}

fn count(store: &Store) -> u32 {
    store.cms("c").query(&["x"]).unwrap()[0]
}

#[test]
fn a_wal_cut_anywhere_in_its_last_record_opens_with_every_complete_record() {
    let live = tempfile::tempdir().unwrap();
    logged_about(live.path());
    let store = open(live.path());
    store.cms("c").init_by_dim(64, 2).unwrap();
    let mut ends = Vec::new();
    for _ in 0..10 {
        store.cms("c").incr_by(&[("x", 1)]).unwrap();
        ends.push(std::fs::metadata(wal(live.path())).unwrap().len());
    }
    // The files as a crash would leave them (the store never closed).
    let frozen = tempfile::tempdir().unwrap();
    common::copy_dir(live.path(), frozen.path());
    drop(store);
    let (before_last, last) = (ends[8], ends[9]);
    assert!(last > before_last);
    for cut in before_last..=last {
        let dir = tempfile::tempdir().unwrap();
        common::copy_dir(frozen.path(), dir.path());
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(wal(dir.path()))
            .unwrap();
        file.set_len(cut).unwrap();
        drop(file);
        let store = open(dir.path());
        let expected = if cut == last { 10 } else { 9 };
        assert_eq!(count(&store), expected, "WAL cut at {cut} of {last}");
        // The server's log says what was dropped, when something was.
        let said = logged_about(dir.path());
        let torn = cut != before_last && cut != last;
        assert_eq!(said.len(), usize::from(torn), "cut at {cut}: {said:?}");
        if torn {
            let dropped = format!("dropping {} bytes", cut - before_last);
            assert!(said[0].contains("torn write-ahead log tail"), "{said:?}");
            assert!(said[0].contains(&dropped), "cut at {cut}: {said:?}");
        }
        // And the store goes on.
        store.cms("c").incr_by(&[("x", 1)]).unwrap();
        assert_eq!(count(&store), expected + 1);
    }
    // Garbage after the last record: every record, nothing more. (Not any garbage: the
    // bundled RocksDB's WAL reader loops for ever on a tail of the bytes 0, 1, 2, ...,
    // 199, which reads as a recyclable record header; see the README.)
    for garbage in [vec![0u8; 7], vec![0xa5; 40], vec![0xff; 300]] {
        let dir = tempfile::tempdir().unwrap();
        common::copy_dir(frozen.path(), dir.path());
        let path = wal(dir.path());
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&garbage);
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(count(&open(dir.path())), 10);
    }
}

#[test]
fn a_flipped_byte_in_a_table_block_names_the_key_and_spares_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path());
        for k in ["a", "b"] {
            store.cms(k).init_by_dim(64, 2).unwrap();
            store.cms(k).incr_by(&[("x", 5)]).unwrap();
        }
        store.compact().unwrap();
    }
    // Damage the middle of the largest table file's data (the pages' blocks).
    let sst = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let mut bytes = std::fs::read(&sst).unwrap();
    bytes[40] ^= 0x20;
    std::fs::write(&sst, bytes).unwrap();
    let store = open(dir.path());
    let answers: Vec<_> = ["a", "b"]
        .iter()
        .map(|k| (k, store.cms(k).query(&["x"])))
        .collect();
    let damaged: Vec<_> = answers.iter().filter(|(_, r)| r.is_err()).collect();
    assert!(!damaged.is_empty(), "the flipped byte went unnoticed");
    for (key, result) in &damaged {
        match result {
            Err(err @ Error::Corruption { key: named, .. }) => {
                assert_eq!(named, key.as_bytes());
                let reply = rocksketch::resp::Reply::from(err);
                let rocksketch::resp::Reply::Error(text) = reply else {
                    panic!()
                };
                assert!(
                    text.contains(&format!("key '{key}'")) && !text.contains('/'),
                    "{text}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
    // Writes go on, and a new key reads back.
    store.cms("new").init_by_dim(64, 2).unwrap();
    store.cms("new").incr_by(&[("x", 3)]).unwrap();
    assert_eq!(store.cms("new").query(&["x"]).unwrap(), vec![3]);
}

#[test]
fn a_directory_locked_by_another_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let _first = open(dir.path());
    let err = Store::open(dir.path(), StoreOptions::default())
        .err()
        .expect("refused");
    assert!(err.to_string().contains("lock"), "{err}");
}
