//! `SAVE` and `BGSAVE` make backups a server starts from: checkpoints in the backup
//! directory, taken while clients write, that `rocksketch serve --dir` opens with every
//! structure answering as the server did at that moment.

#[path = "../../server/tests/common/resp_client.rs"]
mod resp_client;

#[path = "common/process.rs"]
mod process;

use process::start;
use resp_client::{Client, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn info_field(c: &mut Client, field: &str) -> String {
    let Value::Bulk(text) = c.cmd(&["INFO", "persistence"]) else {
        panic!("INFO answers a bulk string");
    };
    let text = String::from_utf8(text).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {text}"))
        .to_owned()
}

fn int(value: Value) -> i64 {
    match value {
        Value::Int(n) => n,
        other => panic!("not an integer: {other:?}"),
    }
}

/// The first integer of an array reply (`CMS.QUERY`'s).
fn first_int(value: Value) -> i64 {
    match value {
        Value::Array(items) => int(items.into_iter().next().expect("an item")),
        other => panic!("not an array: {other:?}"),
    }
}

/// What every structure answers for the items `0..items`.
fn answers(c: &mut Client, items: i64) -> Vec<Value> {
    let mut out = vec![
        c.cmd(&["TOPK.LIST", "tk", "WITHCOUNT"]),
        c.cmd(&["TDIGEST.QUANTILE", "td", "0.1", "0.5", "0.9"]),
        c.cmd(&["CMS.QUERY", "cms", "x"]),
    ];
    for i in 0..items {
        let item = i.to_string();
        out.push(c.cmd(&["BF.EXISTS", "bf", &item]));
        out.push(c.cmd(&["CF.COUNT", "cf", &item]));
        out.push(c.cmd(&["CMS.QUERY", "cms", &item]));
    }
    out
}

fn wait_for_save(c: &mut Client, saves: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while info_field(c, "rdb_saves") != saves || info_field(c, "rdb_bgsave_in_progress") != "0" {
        assert!(Instant::now() < deadline, "BGSAVE did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn saves_under_writers_are_backups_a_server_starts_from() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = start(&data, &[]);
    let mut c = Client::connect(server.addr);
    for create in [
        "BF.RESERVE bf 0.01 100000",
        "CF.RESERVE cf 100000",
        "CMS.INITBYDIM cms 2000 5",
        "TOPK.RESERVE tk 10",
        "TDIGEST.CREATE td",
    ] {
        assert_eq!(
            c.cmd(&create.split(' ').collect::<Vec<_>>()),
            Value::Simple("OK".into())
        );
    }
    let started = int(c.cmd(&["LASTSAVE"]));

    // Writers, each on its own connection; `acked` counts the rounds answered (each
    // round's last write is `CMS.INCRBY cms x 1`).
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicI64::new(0));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (stop, acked, addr) = (stop.clone(), acked.clone(), server.addr);
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                let mut i = w;
                while !stop.load(Ordering::Relaxed) {
                    let item = (i % 500).to_string();
                    for cmd in [
                        vec!["BF.ADD", "bf", &item],
                        vec!["CF.ADD", "cf", &item],
                        vec!["CMS.INCRBY", "cms", &item, "1"],
                        vec!["TOPK.ADD", "tk", &item],
                        vec!["TDIGEST.ADD", "td", &item],
                        vec!["CMS.INCRBY", "cms", "x", "1"],
                    ] {
                        assert!(!matches!(c.cmd(&cmd), Value::Error(_)), "{cmd:?}");
                    }
                    acked.fetch_add(1, Ordering::Release);
                    i += 4;
                }
            })
        })
        .collect();

    // A BGSAVE in the middle of the writes.
    std::thread::sleep(Duration::from_millis(300));
    let before = acked.load(Ordering::Acquire);
    assert_eq!(
        c.cmd(&["BGSAVE"]),
        Value::Simple("Background saving started".into())
    );
    wait_for_save(&mut c, "1");
    let after = acked.load(Ordering::Acquire);
    assert_eq!(info_field(&mut c, "rdb_last_bgsave_status"), "ok");
    let during = PathBuf::from(info_field(&mut c, "checkpoint_latest"));
    assert!(
        during.starts_with(data.join("backups")),
        "{}",
        during.display()
    );
    {
        let copy = start(&during, &[]);
        let mut r = Client::connect(copy.addr);
        let count = first_int(r.cmd(&["CMS.QUERY", "cms", "x"]));
        assert!(
            (before..=after).contains(&count),
            "{count} not in [{before}, {after}]"
        );
        for key in ["bf", "cf", "cms", "tk", "td"] {
            assert_eq!(r.cmd(&["TYPE", key]), c.cmd(&["TYPE", key]), "{key}");
        }
    }

    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    // A SAVE once the writes have stopped: the copy answers as the server does.
    assert_eq!(c.cmd(&["SAVE"]), Value::Simple("OK".into()));
    assert!(int(c.cmd(&["LASTSAVE"])) >= started);
    assert_eq!(info_field(&mut c, "rdb_saves"), "2");
    let saved = PathBuf::from(info_field(&mut c, "checkpoint_latest"));
    assert_ne!(saved, during);
    assert!(!during.exists(), "the older checkpoint is removed");
    assert_eq!(
        std::fs::canonicalize(data.join("backups/latest")).unwrap(),
        std::fs::canonicalize(&saved).unwrap()
    );
    let expected = answers(&mut c, 500);
    assert!(first_int(c.cmd(&["CMS.QUERY", "cms", "x"])) > after);
    drop(server);

    let copy = start(&data.join("backups/latest"), &[]);
    let mut r = Client::connect(copy.addr);
    assert_eq!(answers(&mut r, 500), expected);
}

#[test]
fn a_save_that_cannot_be_written_answers_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let blocked = dir.path().join("a-file");
    std::fs::write(&blocked, b"not a directory").unwrap();
    let backups = blocked.join("backups");
    let server = start(
        &dir.path().join("data"),
        &["--backup-dir", backups.to_str().unwrap()],
    );
    let mut c = Client::connect(server.addr);
    assert_eq!(c.cmd(&["BF.ADD", "bf", "a"]), Value::Int(1));
    assert!(matches!(c.cmd(&["SAVE"]), Value::Error(e) if e.starts_with("ERR")));
    assert_eq!(info_field(&mut c, "rdb_last_bgsave_status"), "err");
    assert_eq!(info_field(&mut c, "rdb_saves"), "0");
    assert_eq!(
        c.cmd(&["BGSAVE"]),
        Value::Simple("Background saving started".into())
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(info_field(&mut c, "rdb_last_bgsave_status"), "err");
    // Nothing lost: the server goes on, and a SHUTDOWN SAVE that cannot save does not
    // stop it unless forced.
    assert_eq!(c.cmd(&["BF.EXISTS", "bf", "a"]), Value::Int(1));
    assert_eq!(
        c.cmd(&["SHUTDOWN", "SAVE"]),
        Value::Error("ERR Errors trying to SHUTDOWN. Check logs.".into())
    );
    assert_eq!(c.cmd(&["BF.EXISTS", "bf", "a"]), Value::Int(1));
    c.send(&[b"SHUTDOWN", b"SAVE", b"FORCE"]);
    assert!(c.try_read().is_none(), "forced, it stops");
}

#[test]
fn shutdown_save_leaves_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut server = start(&data, &[]);
    let mut c = Client::connect(server.addr);
    assert_eq!(c.cmd(&["BF.ADD", "bf", "a"]), Value::Int(1));
    c.send(&[b"SHUTDOWN", b"SAVE"]);
    assert!(c.try_read().is_none());
    assert!(server.child.wait().unwrap().success());
    let copy = start(&data.join("backups/latest"), &[]);
    let mut r = Client::connect(copy.addr);
    assert_eq!(r.cmd(&["BF.EXISTS", "bf", "a"]), Value::Int(1));
}
