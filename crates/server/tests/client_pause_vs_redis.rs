//! `CLIENT PAUSE`, `UNPAUSE` and `UNBLOCK` against Redis itself (Debian's `redis-server`
//! 7.0): the same scenario on both servers, the same bytes at each step, the same
//! connections held and released (see also `pause_hostile.rs` and `pause_barrier.rs`).

#[path = "common/raw.rs"]
mod raw;
#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use raw::Raw;
use redis_server::RedisServer;
use resp_client::{client_field, temp_server, wire, Client, Value};
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// What a pause does to one server, as the test saw it: the bytes each connection read
/// at each step, and whether the held ones were released in time.
fn pause_scenario(addr: SocketAddr) -> Vec<String> {
    let held = Duration::from_millis(300);
    let mut seen: Vec<String> = Vec::new();
    let note = |seen: &mut Vec<String>, step: &str, bytes: &[u8]| {
        seen.push(format!("{step}: {}", String::from_utf8_lossy(bytes)));
    };
    let [mut p, mut w, mut r, mut q, mut m] = [0; 5].map(|_| Raw::connect(addr));
    p.0.write_all(&wire(&["PFADD", "k", "z"])).unwrap();
    p.read_until(b":1\r\n");

    // WRITE: writes (and PFCOUNT, which Redis may replicate) wait, with what follows
    // them; reads and the queueing of reads go on.
    p.0.write_all(&wire(&["CLIENT", "PAUSE", "3000", "WRITE"]))
        .unwrap();
    let paused = Instant::now();
    note(&mut seen, "pause", &p.read_until(b"+OK\r\n"));
    w.0.write_all(&[wire(&["PFADD", "k", "a"]), wire(&["PING"])].concat())
        .unwrap();
    // (Of another key: held requests of several connections resume in any order.)
    r.0.write_all(&wire(&["PFCOUNT", "other"])).unwrap();
    q.0.write_all(&[wire(&["EXISTS", "k"]), wire(&["PING", "q"])].concat())
        .unwrap();
    m.0.write_all(
        &[
            wire(&["MULTI"]),
            wire(&["PING"]),
            wire(&["PFADD", "k", "b"]),
        ]
        .concat(),
    )
    .unwrap();
    note(&mut seen, "write held", &w.read_for(held));
    note(
        &mut seen,
        "pfcount held",
        &r.read_for(Duration::from_millis(10)),
    );
    note(&mut seen, "reads go on", &q.read_until(b"$1\r\nq\r\n"));
    note(&mut seen, "queueing a read goes on", &m.read_for(held));
    // The held connections show `b`, the waiting command, and in a transaction `x`.
    p.0.write_all(&wire(&["CLIENT", "LIST"])).unwrap();
    let list = String::from_utf8_lossy(&p.read_for(held)).into_owned();
    let mut lines: Vec<String> = list
        .lines()
        .filter(|l| l.contains("flags=") && !l.contains("cmd=client|list"))
        .map(|l| {
            let f = |name| client_field(l, name);
            format!("flags={} multi={} cmd={}", f("flags"), f("multi"), f("cmd"))
        })
        .collect();
    lines.sort();
    seen.push(format!("list: {lines:?}"));
    p.0.write_all(&wire(&["INFO", "clients"])).unwrap();
    let info = String::from_utf8_lossy(&p.read_for(held)).into_owned();
    let blocked = info.lines().find(|l| l.starts_with("blocked_clients:"));
    seen.push(format!("{blocked:?}"));
    note(&mut seen, "write released", &w.read_until(b"+PONG\r\n"));
    note(&mut seen, "pfcount released", &r.read_until(b"\r\n"));
    note(
        &mut seen,
        "queueing released",
        &m.read_until(b"+QUEUED\r\n"),
    );
    let waited = paused.elapsed();
    seen.push(format!(
        "released after the pause: {}",
        waited >= Duration::from_millis(2700)
    ));
    m.0.write_all(&wire(&["EXEC"])).unwrap();
    note(&mut seen, "exec", &m.read_until(b"+PONG\r\n:1\r\n"));

    // ALL: every command waits, `CLIENT UNPAUSE` from another connection too.
    p.0.write_all(&wire(&["CLIENT", "PAUSE", "1000"])).unwrap();
    let paused = Instant::now();
    note(&mut seen, "pause all", &p.read_until(b"+OK\r\n"));
    q.0.write_all(&wire(&["PING", "all"])).unwrap();
    w.0.write_all(&wire(&["CLIENT", "UNPAUSE"])).unwrap();
    note(&mut seen, "ping held", &q.read_for(held));
    note(
        &mut seen,
        "unpause held",
        &w.read_for(Duration::from_millis(10)),
    );
    note(&mut seen, "ping released", &q.read_until(b"all\r\n"));
    note(&mut seen, "unpause released", &w.read_until(b"+OK\r\n"));
    seen.push(format!(
        "released after: {}",
        paused.elapsed() >= Duration::from_millis(800)
    ));

    // UNPAUSE ends a long WRITE pause at once.
    p.0.write_all(&wire(&["CLIENT", "PAUSE", "60000", "WRITE"]))
        .unwrap();
    note(&mut seen, "long pause", &p.read_until(b"+OK\r\n"));
    w.0.write_all(&wire(&["PFADD", "k", "c"])).unwrap();
    note(&mut seen, "held", &w.read_for(held));
    p.0.write_all(&wire(&["CLIENT", "UNPAUSE"])).unwrap();
    let unpaused = Instant::now();
    note(&mut seen, "unpause", &p.read_until(b"+OK\r\n"));
    note(&mut seen, "released", &w.read_until(b"\r\n"));
    seen.push(format!(
        "at once: {}",
        unpaused.elapsed() < Duration::from_secs(1)
    ));
    seen
}

#[test]
fn client_pause_holds_what_redis_holds() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let (a, b) = (pause_scenario(ours.addr), pause_scenario(theirs.addr));
    assert_eq!(a, b);
    // The scenario saw holds and releases (not, say, two servers that never pause).
    assert!(a.contains(&"write held: ".to_owned()), "{a:#?}");
    // Three connections held: the writer, PFCOUNT, and the transaction queueing a write.
    assert!(
        a.contains(&r#"Some("blocked_clients:3")"#.to_owned()),
        "{a:#?}"
    );
    assert!(
        a.contains(&"released after the pause: true".to_owned()),
        "{a:#?}"
    );
}

/// `CLIENT UNBLOCK` ends a `WAIT` (which, with no replicas and no timeout, waits for
/// ever): with the count so far, or with an error; 0 for a connection not blocked.
#[test]
fn client_unblock_ends_a_wait_as_redis() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let mut seen = Vec::new();
    for addr in [ours.addr, theirs.addr] {
        let (mut a, mut b) = (Client::connect(addr), Client::connect(addr));
        let Value::Int(id) = b.cmd(&["CLIENT", "ID"]) else {
            panic!("CLIENT ID answers an integer");
        };
        let id = id.to_string();
        let mut shown = vec![a.cmd(&["CLIENT", "UNBLOCK", &id])];
        for reason in ["TIMEOUT", "ERROR"] {
            b.send(&[b"WAIT", b"1", b"0"]);
            std::thread::sleep(Duration::from_millis(200));
            shown.push(a.cmd(&["CLIENT", "UNBLOCK", &id, reason]));
            shown.push(b.read());
            shown.push(b.cmd(&["PING"]));
        }
        seen.push(shown);
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0][1], Value::Int(1), "{:?}", seen[0]);
}
