//! A full disk, as a client and the operator see it: `rocksketch serve` on a small tmpfs,
//! filled by writers until RocksDB refuses the write-ahead log. Every refused write
//! answers the one stable disk-full text (no server path reaches a client) and writes
//! nothing; reads keep answering; the log has RocksDB's whole message; `SHUTDOWN` exits
//! cleanly and says it could not flush; after the filesystem grows, a restart finds
//! every acknowledged write and no refused one. With and without `--sync`.
//!
//! Mounting a tmpfs needs root: elsewhere the test says so and passes without running.

#[path = "../../server/tests/common/resp_client.rs"]
mod resp_client;

#[path = "common/full_disk.rs"]
mod full_disk;

use full_disk::{assert_refused_keys_absent, count, fill_keys, on_small_disk, start, Tmpfs, BIN};
use resp_client::{Client, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn cycle(sync: bool) {
    let Some((fs, dir, mut server, mut c)) = on_small_disk("disk_full", sync) else {
        return;
    };
    let filled = fill_keys(&mut c);
    let acked = filled.acked;
    assert!(acked > 0);
    // Reads keep answering, from what was acknowledged.
    assert_eq!(count(&mut c, "x"), acked as i64);
    assert_eq!(c.cmd(&["BF.EXISTS", "bf:0:0", "item"]), Value::Int(1));
    // SHUTDOWN in the error state: a clean exit that says what it could not do.
    c.send(&[b"SHUTDOWN"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "SHUTDOWN did not stop the server"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = server.log.take().unwrap().join().unwrap();
    assert!(status.success(), "exit {status:?}: {log}");
    assert!(
        log.contains("No space left on device"),
        "the log lacks RocksDB's message: {log}"
    );
    assert!(log.contains("stopped without flushing"), "{log}");
    // Space freed: a restart finds every acknowledged increment, and no refused one.
    fs.grow(64);
    let server = start(&dir, sync);
    let mut c = Client::connect(server.addr);
    assert_eq!(count(&mut c, "x"), acked as i64);
    assert_refused_keys_absent(&mut c, &filled);
    assert_eq!(
        c.cmd(&["CMS.INCRBY", "c", "x", "1"]),
        Value::Array(vec![Value::Int(acked as i64 + 1)])
    );
    drop(c);
    drop(server);
}

#[test]
fn a_full_disk_refuses_writes_plainly_and_loses_nothing() {
    cycle(false);
}

#[test]
fn a_full_disk_with_synchronous_commits() {
    cycle(true);
}

/// `rocksketch serve --dir DIR --port 0` that must fail at start: its one line of error
/// and its exit status.
fn refused_start(dir: &Path) -> (String, std::process::ExitStatus) {
    let out = Command::new(BIN)
        .args(["serve", "--port", "0", "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status,
    )
}

#[test]
fn a_missing_read_only_or_locked_directory_stops_the_start() {
    let missing = Path::new("/nonexistent-rocksketch-parent/data");
    let (err, status) = refused_start(missing);
    assert!(!status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is missing, and so is its parent"), "{err}");
    assert!(!missing.parent().unwrap().exists());

    let dir = tempfile::tempdir().unwrap();
    let held = start(dir.path(), false);
    let (err, status) = refused_start(dir.path());
    assert!(!status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("lock"), "{err}");
    drop(held);

    let Some(fs) = Tmpfs::mount(1) else {
        println!("disk_full: cannot mount a tmpfs here (needs root); read-only case not run");
        return;
    };
    let status = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&fs.path)
        .status()
        .unwrap();
    assert!(status.success());
    let (err, status) = refused_start(&fs.path.join("data"));
    assert!(!status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("Read-only file system"), "{err}");
}
