//! Writes that fail (here: a full disk) answer the failure and claim nothing.
//!
//! Post-mortem: `BF.MADD` recorded its answers before its write batch, so a failed write
//! answered `[1, 1, -ERR ...]` for adds it never made; in a pipeline the batch code then
//! sliced past the end of the run and panicked.
//!
//! Needs a small tmpfs, so root; elsewhere the test says so and passes.

mod common;

use common::args;
use rocksketch::command::{execute_pipeline, Reply};
use rocksketch::{Error, Store, StoreOptions};
use std::path::Path;
use std::process::Command;

/// A tmpfs of `mib` MiB mounted on a temporary directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(mib: u32) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().ok()?;
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(dir.path())
            .status()
            .ok()?;
        status.success().then_some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Fills the file system at `dir` with a file of zeros until a write fails.
fn fill(dir: &Path) {
    use std::io::Write;
    let path = dir.join("ballast");
    let mut file = std::fs::File::create(&path).unwrap();
    let block = vec![0u8; 64 << 10];
    while file.write_all(&block).is_ok() {}
    let _ = file.sync_all();
}

#[test]
fn adds_that_fail_to_write_answer_nothing() {
    let Some(fs) = Tmpfs::mount(48) else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let options = StoreOptions {
        write_buffer_bytes: 1 << 20,
        ..StoreOptions::default()
    };
    let store = Store::open(fs.path().join("db"), options).unwrap();
    let bloom = store.bloom("f");
    bloom.reserve(0.001, 10_000_000, 2).unwrap();
    assert!(bloom.add("before").unwrap());
    fill(fs.path());

    // Write until the disk refuses; each failed call must claim no add.
    let mut failures = 0;
    let mut next = 0u64;
    while failures < 20 && next < 2_000_000 {
        let items: Vec<String> = (0..64).map(|i| format!("item-{next}-{i}")).collect();
        next += 1;
        let (answers, error) = bloom.madd(&items);
        match error {
            None => assert_eq!(answers.len(), items.len()),
            Some(Error::RocksDb(err)) => {
                assert_eq!(err.kind(), rocksdb::ErrorKind::IOError, "{err}");
                failures += 1;
                assert!(answers.is_empty(), "a failed write answered {answers:?}");
                // Nothing of the failed call is there (but a false positive or three).
                let found = bloom.mexists(&items).unwrap();
                assert!(found.iter().filter(|f| **f).count() <= 3, "{found:?}");
            }
            Some(other) => panic!("unexpected error {other}"),
        }
    }
    assert!(failures > 0, "the disk never filled");

    // A pipeline of BF.ADD on the full disk answers every command, in order.
    let ns = store.ns(0);
    let requests: Vec<Vec<Vec<u8>>> = (0..10)
        .map(|i| args(&["BF.ADD", "f", &format!("pipelined-{i}")]))
        .collect();
    let replies = execute_pipeline(&ns, &requests);
    assert_eq!(replies.len(), requests.len());
    // (A false positive answers 0 without writing.)
    assert!(
        replies
            .iter()
            .all(|r| matches!(r, Reply::Error(_) | Reply::Bool(false))),
        "{replies:?}"
    );

    // Reads keep working, and what was acknowledged is there.
    assert!(bloom.exists("before").unwrap());
}
