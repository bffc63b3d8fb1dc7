//! `CLIENT PAUSE WRITE` is a barrier on a server of several I/O threads: once its `+OK`
//! is sent, no write runs until the pause ends, not even one that another thread had
//! begun to look at just before. Writers on their own connections (spread over the
//! threads) create keys one after another as fast as they can; after each `+OK`, the
//! keys each writer may have in flight read the same at once and a while later.

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{Client, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const WRITERS: usize = 6;

/// A server of two I/O threads over `dir`.
fn two_threads(dir: &tempfile::TempDir) -> TestServer {
    let config = ServerConfig {
        port: 0,
        threads: 2,
        ..ServerConfig::default()
    };
    TestServer::start(dir.path(), config)
}

#[test]
fn no_write_runs_after_client_pause_answers() {
    let dir = tempfile::tempdir().unwrap();
    let server = two_threads(&dir);
    let stop = Arc::new(AtomicBool::new(false));
    let sent: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (stop, sent, mut client) = (stop.clone(), sent.clone(), server.client());
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    sent[w].store(i, Ordering::SeqCst);
                    let key = format!("w{w}-{i}");
                    assert_eq!(client.cmd(&["PFADD", &key, "x"]), Value::Int(1));
                }
            })
        })
        .collect();
    let mut pauser = server.client();
    let probe = |client: &mut Client, sent: &[u64]| -> Vec<Value> {
        let keys: Vec<String> = (0..WRITERS)
            .flat_map(|w| (0..3).map(move |d| format!("w{w}-{}", sent[w] + d)))
            .collect();
        keys.iter().map(|k| client.cmd(&["EXISTS", k])).collect()
    };
    for round in 0..60 {
        assert_eq!(
            pauser.cmd(&["CLIENT", "PAUSE", "40", "WRITE"]),
            resp_client::ok()
        );
        // The writes each writer may have in flight: the one it sent last, and the next.
        let at: Vec<u64> = sent
            .iter()
            .map(|s| s.load(Ordering::SeqCst).saturating_sub(1))
            .collect();
        let first = probe(&mut pauser, &at);
        std::thread::sleep(Duration::from_millis(15));
        let later = probe(&mut pauser, &at);
        assert_eq!(first, later, "a write ran during the pause (round {round})");
        std::thread::sleep(Duration::from_millis(30));
    }
    stop.store(true, Ordering::Relaxed);
    for writer in writers {
        writer.join().unwrap();
    }
    // The writers got through between the pauses.
    assert!(sent.iter().all(|s| s.load(Ordering::SeqCst) > 10));
}

/// A write another I/O thread is running when `CLIENT PAUSE` arrives (a slow one: a
/// `DEL` of many keys) finishes before the pause's `+OK`: what reads see after the
/// `+OK` does not change while the pause lasts.
#[test]
fn a_write_running_when_the_pause_begins_finishes_before_its_ok() {
    let dir = tempfile::tempdir().unwrap();
    let server = two_threads(&dir);
    // Connections go to the I/O threads in turn: these two run on different ones.
    let mut writer = server.client();
    let mut pauser = server.client();
    const KEYS: usize = 20_000;
    let keys: Vec<String> = (0..KEYS).map(|i| format!("k{i}")).collect();
    for chunk in keys.chunks(1000) {
        let mut wire = Vec::new();
        for key in chunk {
            wire.extend(resp_client::wire(&["PFADD", key, "x"]));
        }
        writer.send_raw(&wire);
        for _ in chunk {
            assert_eq!(writer.read(), Value::Int(1));
        }
    }
    let last = keys[KEYS - 1].as_str();
    let mut del: Vec<&[u8]> = vec![b"DEL"];
    del.extend(keys.iter().map(|k| k.as_bytes()));
    writer.send(&del);
    std::thread::sleep(Duration::from_millis(20));
    // Still running (else this test shows nothing).
    let stream = writer.reader.get_ref();
    stream.set_nonblocking(true).unwrap();
    let running =
        matches!(stream.peek(&mut [0u8; 1]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
    stream.set_nonblocking(false).unwrap();
    assert!(running, "the DEL was over before the pause began");
    assert_eq!(
        pauser.cmd(&["CLIENT", "PAUSE", "20000", "WRITE"]),
        resp_client::ok()
    );
    let first = pauser.cmd(&["EXISTS", last]);
    assert_eq!(
        writer.read(),
        Value::Int(KEYS as i64),
        "the DEL is answered"
    );
    let later = pauser.cmd(&["EXISTS", last]);
    assert_eq!(first, later, "the DEL ran on after the pause's +OK");
    assert_eq!(pauser.cmd(&["CLIENT", "UNPAUSE"]), resp_client::ok());
}
