//! A full disk for the server's tests: a small tmpfs, the server on it as a process with
//! its log collected, and a writer that fills the disk.
#![allow(dead_code)]

use crate::resp_client::{self, Client, Value};
use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_rocksketch");
pub const DISK_FULL: &str = "ERR disk full: writes are refused until space is freed";

/// A tmpfs mounted for the test, unmounted when dropped.
pub struct Tmpfs {
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Tmpfs {
    pub fn mount(mib: u32) -> Option<Tmpfs> {
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

    pub fn grow(&self, mib: u32) {
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
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub log: Option<std::thread::JoinHandle<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn start(dir: &Path, sync: bool) -> Server {
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

/// What [`fill`] left: the increments acknowledged, and the Bloom keys whose creating
/// `BF.ADD` was acknowledged or refused.
#[derive(Default)]
pub struct Filled {
    pub acked: u64,
    pub created: Vec<String>,
    pub refused: Vec<String>,
}

/// Fills the disk: pipelines of Bloom adds to new keys (each creates its key), each
/// ending with one counted increment, until twenty increments in a row were refused.
pub fn fill(c: &mut Client) -> u64 {
    fill_keys(c).acked
}

/// [`fill`], with the keys made and refused.
pub fn fill_keys(c: &mut Client) -> Filled {
    let mut filled = Filled::default();
    let mut refused = 0;
    for round in 0..20_000u32 {
        let keys: Vec<String> = (0..50).map(|k| format!("bf:{round}:{k}")).collect();
        for key in &keys {
            c.send(&[b"BF.ADD", key.as_bytes(), b"item"]);
        }
        c.send(&[b"CMS.INCRBY", b"c", b"x", b"1"]);
        for key in keys {
            match c.read() {
                // 0: the key was made before (the tests add to `bf:0:0` first).
                Value::Int(_) => filled.created.push(key),
                Value::Error(e) => {
                    assert_eq!(e, DISK_FULL);
                    filled.refused.push(key);
                }
                other => panic!("{other:?}"),
            }
        }
        match c.read() {
            Value::Array(v) if v.len() == 1 => {
                filled.acked += 1;
                refused = 0;
            }
            Value::Error(e) => {
                assert_eq!(e, DISK_FULL);
                refused += 1;
                if refused == 20 {
                    return filled;
                }
            }
            other => panic!("{other:?}"),
        }
    }
    panic!("the disk never filled")
}

/// Asserts that every key whose creating add was acknowledged holds its item, and that
/// no key whose add was refused exists (a refused write must not appear).
pub fn assert_refused_keys_absent(c: &mut Client, filled: &Filled) {
    assert!(!filled.refused.is_empty(), "no add was refused");
    for chunk in filled.refused.chunks(500) {
        for key in chunk {
            c.send(&[b"EXISTS", key.as_bytes()]);
        }
        for key in chunk {
            assert_eq!(c.read(), Value::Int(0), "{key}: refused, yet it exists");
        }
    }
    for chunk in filled.created.chunks(500) {
        for key in chunk {
            c.send(&[b"BF.EXISTS", key.as_bytes(), b"item"]);
        }
        for key in chunk {
            assert_eq!(c.read(), Value::Int(1), "{key}: acknowledged, yet lost");
        }
    }
}

pub fn count(c: &mut Client, item: &str) -> i64 {
    match c.cmd(&["CMS.QUERY", "c", item]) {
        Value::Array(v) => match v.as_slice() {
            [Value::Int(n)] => *n,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

/// A server on a fresh 6 MiB tmpfs with a client and the count-min sketch `c` made;
/// `None` (after saying so) where a tmpfs cannot be mounted.
pub fn on_small_disk(test: &str, sync: bool) -> Option<(Tmpfs, PathBuf, Server, Client)> {
    let Some(fs) = Tmpfs::mount(6) else {
        println!("{test}: cannot mount a tmpfs here (needs root); not run");
        return None;
    };
    let dir = fs.path.join("data");
    let server = start(&dir, sync);
    let mut c = Client::connect(server.addr);
    assert_eq!(
        c.cmd(&["CMS.INITBYDIM", "c", "1000", "5"]),
        Value::Simple("OK".into())
    );
    Some((fs, dir, server, c))
}
