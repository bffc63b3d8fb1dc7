//! A full disk, as a client and the operator see it: `rocksketch serve` on a small tmpfs,
//! filled by writers until RocksDB refuses the write-ahead log. Every refused write
//! answers the one stable disk-full text (no server path reaches a client) and writes
//! nothing; reads keep answering; the log has RocksDB's whole message; `SHUTDOWN` exits
//! cleanly and says it could not flush; after the filesystem grows, a restart finds
//! every acknowledged write and no refused one. With and without `--sync`.
//!
//! Mounting a tmpfs needs root: elsewhere the test says so and passes without running.

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{Client, Value};
use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_rocksketch");
const DISK_FULL: &str = "ERR disk full: writes are refused until space is freed";

/// A tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(mib: u32) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().ok()?;
        let path = dir.path().join("mnt");
        std::fs::create_dir(&path).ok()?;
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mib}m"), "tmpfs"])
            .arg(&path)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(Tmpfs { path, _dir: dir })
    }

    fn grow(&self, mib: u32) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={mib}m")])
            .arg(&self.path)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

/// The server on `dir`; its port from the line it prints.
/// A server process and the thread collecting its log.
struct Server {
    child: Child,
    addr: SocketAddr,
    log: Option<std::thread::JoinHandle<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(dir: &Path, sync: bool) -> Server {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--port", "0", "--cache-mb", "4", "--dir"])
        .arg(dir);
    if sync {
        cmd.arg("--sync");
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain the log as it is written (a full pipe would stall the server).
    let mut stderr = child.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let addr = resp_client::listening_addr(&mut child);
    Server {
        child,
        addr,
        log: Some(log),
    }
}

/// Fills the disk: pipelines of Bloom adds to new keys, each ending with one counted
/// increment; returns the increments acknowledged once twenty in a row were refused.
fn fill(c: &mut Client) -> u64 {
    let mut acked = 0u64;
    let mut refused = 0;
    for round in 0..20_000u32 {
        for k in 0..50 {
            let key = format!("bf:{round}:{k}");
            c.send(&[b"BF.ADD", key.as_bytes(), b"item"]);
        }
        c.send(&[b"CMS.INCRBY", b"c", b"x", b"1"]);
        for _ in 0..50 {
            match c.read() {
                Value::Int(_) => {}
                Value::Error(e) => assert_eq!(e, DISK_FULL),
                other => panic!("{other:?}"),
            }
        }
        match c.read() {
            Value::Array(v) if v.len() == 1 => {
                acked += 1;
                refused = 0;
            }
            Value::Error(e) => {
                assert_eq!(e, DISK_FULL);
                refused += 1;
                if refused == 20 {
                    return acked;
                }
            }
            other => panic!("{other:?}"),
        }
    }
    panic!("the disk never filled")
}

fn count(c: &mut Client) -> i64 {
    match c.cmd(&["CMS.QUERY", "c", "x"]) {
        Value::Array(v) => match v.as_slice() {
            [Value::Int(n)] => *n,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

fn cycle(sync: bool) {
    let Some(fs) = Tmpfs::mount(6) else {
        println!("disk_full: cannot mount a tmpfs here (needs root); not run");
        return;
    };
    let dir = fs.path.join("data");
    let mut server = start(&dir, sync);
    let mut c = Client::connect(server.addr);
    assert_eq!(
        c.cmd(&["CMS.INITBYDIM", "c", "1000", "5"]),
        Value::Simple("OK".into())
    );
    let acked = fill(&mut c);
    assert!(acked > 0);
    // Reads keep answering, from what was acknowledged.
    assert_eq!(count(&mut c), acked as i64);
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
    assert_eq!(count(&mut c), acked as i64);
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
