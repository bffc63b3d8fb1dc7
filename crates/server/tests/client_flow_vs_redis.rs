//! `CLIENT REPLY`, `PAUSE`, `UNPAUSE`, `UNBLOCK`, `NO-EVICT`, `NO-TOUCH`, `GETREDIR` and
//! `TRACKINGINFO` against Redis itself (Debian's `redis-server` 7.0): the same scripts
//! sent to both, the same bytes back. `CLIENT REPLY`'s scripts are random, run by many
//! clients at once whose byte streams are cut at random points, so the host's batching
//! of pipelined and concurrent requests meets every reply mode.

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis_server::RedisServer;
use resp_client::{temp_server, wire, Client, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// A raw connection: bytes in, bytes out.
struct Raw(TcpStream);

impl Raw {
    fn connect(addr: SocketAddr) -> Raw {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        Raw(stream)
    }

    /// Switches to RESP3, reading past `HELLO`'s map (which names the server).
    fn hello3(&mut self) {
        self.0.write_all(&wire(&["HELLO", "3"])).unwrap();
        self.0.write_all(&wire(&["ECHO", "hello"])).unwrap();
        self.read_until(b"$5\r\nhello\r\n");
    }

    /// Sends `bytes` cut at random points, with short pauses between the pieces.
    fn send_split(&mut self, bytes: &[u8], rng: &mut StdRng) {
        let mut at = 0;
        while at < bytes.len() {
            let piece = rng
                .gen_range(1..=bytes.len() - at)
                .min(rng.gen_range(1..64));
            self.0.write_all(&bytes[at..at + piece]).unwrap();
            at += piece;
            if rng.gen_bool(0.2) {
                std::thread::sleep(Duration::from_micros(rng.gen_range(0..800)));
            }
        }
    }

    /// Reads until the output ends with `end`.
    fn read_until(&mut self, end: &[u8]) -> Vec<u8> {
        self.0
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while !out.ends_with(end) {
            let n = self.0.read(&mut buf).expect("the reply arrives");
            assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&out));
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    /// What arrives within `wait` (nothing, if the server holds the requests).
    fn read_for(&mut self, wait: Duration) -> Vec<u8> {
        self.0.set_read_timeout(Some(wait)).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = self.0.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        out
    }
}

/// A random script of commands for client `c`, ending with replies on and a marker.
fn script(rng: &mut StdRng, c: usize) -> (Vec<u8>, Vec<u8>) {
    let key = format!("hll{c}");
    let mut out = Vec::new();
    // `CLIENT REPLY` is refused inside a transaction here (Redis answers a broken
    // stream), so the scripts leave it out there.
    let mut in_multi = false;
    for _ in 0..rng.gen_range(5..60) {
        let item = format!("i{}", rng.gen_range(0..40));
        let pick = match in_multi {
            true => rng.gen_range(5..14),
            false => rng.gen_range(0..14),
        };
        in_multi = match pick {
            9 => true,
            10 => false,
            _ => in_multi,
        };
        let words: Vec<&str> = match pick {
            0 => vec!["CLIENT", "REPLY", "OFF"],
            1 => vec!["CLIENT", "REPLY", "SKIP"],
            2 => vec!["CLIENT", "REPLY", "ON"],
            3 => vec!["CLIENT", "REPLY", "maybe"],
            4 => vec!["CLIENT", "REPLY"],
            5 => vec!["PING"],
            6 => vec!["ECHO", &item],
            7 => vec!["NOSUCH", &item],
            8 => vec!["PFCOUNT", &key],
            9 => vec!["MULTI"],
            10 => vec!["EXEC"],
            // Runs of one batchable command, which the host answers as one batch.
            _ => {
                for _ in 0..rng.gen_range(1..20) {
                    out.extend(wire(&["PFADD", &key, &format!("{}", rng.gen_range(0..99))]));
                }
                vec!["PFADD", &key, &item]
            }
        };
        out.extend(wire(&words));
    }
    let marker = format!("end-of-{c}");
    out.extend(wire(&["DISCARD"]));
    out.extend(wire(&["CLIENT", "REPLY", "ON"]));
    out.extend(wire(&["ECHO", &marker]));
    (
        out,
        format!("${}\r\n{marker}\r\n", marker.len()).into_bytes(),
    )
}

/// Many clients at once on each server, each with its own key and random script, cut at
/// random points: every byte each one reads equals what Redis sent for its script.
#[test]
fn client_reply_answers_byte_for_byte_as_redis() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    for round in 0..4u64 {
        let clients = 8;
        let run = |addr: SocketAddr| {
            let threads: Vec<_> = (0..clients)
                .map(|c| {
                    std::thread::spawn(move || {
                        let mut rng = StdRng::seed_from_u64(round * 100 + c as u64);
                        let (bytes, end) = script(&mut rng, c);
                        let mut conn = Raw::connect(addr);
                        if c % 2 == 1 {
                            conn.hello3();
                        }
                        // The same script, cut differently on each server.
                        let mut cuts = StdRng::seed_from_u64(addr.port() as u64 + c as u64);
                        conn.send_split(&bytes, &mut cuts);
                        conn.read_until(&end)
                    })
                })
                .collect();
            let outputs: Vec<Vec<u8>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
            outputs
        };
        let flush = wire(&["FLUSHALL"]);
        for addr in [ours.addr, theirs.addr] {
            let mut conn = Raw::connect(addr);
            conn.0.write_all(&flush).unwrap();
            conn.read_until(b"+OK\r\n");
        }
        let (a, b) = (run(ours.addr), run(theirs.addr));
        for (c, (a, b)) in a.iter().zip(&b).enumerate() {
            assert_eq!(
                String::from_utf8_lossy(a),
                String::from_utf8_lossy(b),
                "round {round}, client {c}"
            );
        }
    }
}

/// The sequences Redis answers in a way worth naming, one by one.
#[test]
fn client_reply_edge_cases_answer_as_redis() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let scripts: &[&[&[&str]]] = &[
        // OFF silences errors and itself; SKIP under OFF does nothing; ON answers.
        &[
            &["CLIENT", "REPLY", "OFF"],
            &["PING"],
            &["NOSUCH"],
            &["CLIENT", "REPLY", "SKIP"],
            &["PING", "x"],
            &["CLIENT", "REPLY", "ON"],
            &["PING", "y"],
        ],
        // SKIP skips the next SKIP, which skips the command after it.
        &[
            &["CLIENT", "REPLY", "SKIP"],
            &["CLIENT", "REPLY", "SKIP"],
            &["PING", "1"],
            &["PING", "2"],
        ],
        // ON after SKIP is answered.
        &[
            &["CLIENT", "REPLY", "SKIP"],
            &["CLIENT", "REPLY", "ON"],
            &["PING", "3"],
        ],
        // SKIP before MULTI skips MULTI's own reply only.
        &[
            &["CLIENT", "REPLY", "SKIP"],
            &["MULTI"],
            &["PING", "8"],
            &["EXEC"],
            &["PING", "9"],
        ],
        // A WAIT (no replicas: answered 0 at its timeout) whose reply is skipped.
        &[
            &["CLIENT", "REPLY", "SKIP"],
            &["WAIT", "1", "50"],
            &["PING", "after-wait"],
        ],
    ];
    for script in scripts {
        let mut bytes: Vec<u8> = script.iter().flat_map(|w| wire(w)).collect();
        bytes.extend(wire(&["ECHO", "end"]));
        let mut replies = Vec::new();
        for addr in [ours.addr, theirs.addr] {
            let mut conn = Raw::connect(addr);
            conn.0.write_all(&bytes).unwrap();
            replies.push(String::from_utf8_lossy(&conn.read_until(b"$3\r\nend\r\n")).into_owned());
        }
        assert_eq!(replies[0], replies[1], "{script:?}");
    }
}

/// Replies to the subcommands' every form, errors included, in RESP2 and RESP3.
#[test]
fn subcommand_forms_answer_as_redis() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let forms: &[&[&str]] = &[
        &["CLIENT", "PAUSE"],
        &["CLIENT", "PAUSE", "abc"],
        &["CLIENT", "PAUSE", "-1"],
        &["CLIENT", "PAUSE", "1.5"],
        &["CLIENT", "PAUSE", "10", "FOO"],
        &["CLIENT", "PAUSE", "x", "FOO"],
        &["CLIENT", "PAUSE", "10", "write", "x"],
        &["CLIENT", "PAUSE", "0"],
        &["CLIENT", "PAUSE", "1", "WRITE"],
        &["CLIENT", "PAUSE", "1", "all"],
        &["CLIENT", "UNPAUSE"],
        &["CLIENT", "UNPAUSE", "x"],
        &["CLIENT", "REPLY"],
        &["CLIENT", "REPLY", "maybe"],
        &["CLIENT", "REPLY", "on", "x"],
        &["CLIENT", "REPLY", "On"],
        &["CLIENT", "NO-EVICT"],
        &["CLIENT", "NO-EVICT", "maybe"],
        &["CLIENT", "NO-EVICT", "on", "x"],
        &["CLIENT", "NO-EVICT", "ON"],
        &["CLIENT", "no-evict", "off"],
        &["CLIENT", "GETREDIR"],
        &["CLIENT", "GETREDIR", "1"],
        &["CLIENT", "TRACKINGINFO"],
        &["CLIENT", "TRACKINGINFO", "x"],
        &["CLIENT", "UNBLOCK"],
        &["CLIENT", "UNBLOCK", "abc"],
        &["CLIENT", "UNBLOCK", "abc", "FOO"],
        &["CLIENT", "UNBLOCK", "1", "FOO"],
        &["CLIENT", "UNBLOCK", "1", "error"],
        &["CLIENT", "UNBLOCK", "999999", "TIMEOUT"],
        &["CLIENT", "UNBLOCK", "-5"],
        &["CLIENT", "UNBLOCK", "1", "TIMEOUT", "x"],
    ];
    for resp3 in [false, true] {
        let mut replies = Vec::new();
        for addr in [ours.addr, theirs.addr] {
            let mut conn = Raw::connect(addr);
            let mut bytes = Vec::new();
            if resp3 {
                conn.hello3();
                bytes.extend(wire(&["CLIENT", "REPLY", "SKIP"]));
                bytes.extend(wire(&["ECHO", "skipped"]));
            }
            for form in forms {
                bytes.extend(wire(form));
            }
            bytes.extend(wire(&["ECHO", "end"]));
            conn.0.write_all(&bytes).unwrap();
            replies.push(String::from_utf8_lossy(&conn.read_until(b"$3\r\nend\r\n")).into_owned());
        }
        assert_eq!(replies[0], replies[1], "RESP3 {resp3}");
    }
}

/// Each client's `flags` and `multi` in `CLIENT INFO`: `x` and the queue's length in a
/// transaction, `e` after `NO-EVICT ON`, `N` when none; (`T`, from 7.2's `NO-TOUCH`,
/// checked on ours alone: Debian's Redis is 7.0).
#[test]
fn flags_and_queue_length_show_as_redis() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let field = |info: &Value, name: &str| -> String {
        let Value::Bulk(text) = info else {
            panic!("CLIENT INFO answers text: {info:?}");
        };
        let text = String::from_utf8_lossy(text).into_owned();
        let prefix = format!("{name}=");
        text.split(' ')
            .find_map(|f| f.strip_prefix(&prefix))
            .unwrap_or_default()
            .to_owned()
    };
    let mut seen = Vec::new();
    for addr in [ours.addr, theirs.addr] {
        let mut c = Client::connect(addr);
        let mut shown = Vec::new();
        let info = c.cmd(&["CLIENT", "INFO"]);
        shown.push((field(&info, "flags"), field(&info, "multi")));
        c.cmd(&["CLIENT", "NO-EVICT", "on"]);
        let info = c.cmd(&["CLIENT", "INFO"]);
        shown.push((field(&info, "flags"), field(&info, "multi")));
        c.cmd(&["MULTI"]);
        c.cmd(&["PING"]);
        c.cmd(&["PING"]);
        c.cmd(&["CLIENT", "INFO"]);
        let Value::Array(replies) = c.cmd(&["EXEC"]) else {
            panic!("EXEC answers an array");
        };
        shown.push((field(&replies[2], "flags"), field(&replies[2], "multi")));
        c.cmd(&["CLIENT", "NO-EVICT", "off"]);
        let info = c.cmd(&["CLIENT", "INFO"]);
        shown.push((field(&info, "flags"), field(&info, "multi")));
        seen.push(shown);
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0][2], ("xe".to_owned(), "3".to_owned()));
    let mut c = ours.client();
    assert_eq!(c.cmd(&["CLIENT", "NO-TOUCH", "ON"]), resp_client::ok());
    c.cmd(&["CLIENT", "NO-EVICT", "ON"]);
    assert_eq!(field(&c.cmd(&["CLIENT", "INFO"]), "flags"), "eT");
    assert_eq!(c.cmd(&["RESET"]), Value::Simple("RESET".into()));
    assert_eq!(field(&c.cmd(&["CLIENT", "INFO"]), "flags"), "N");
    assert!(
        matches!(c.cmd(&["CLIENT", "NO-TOUCH", "maybe"]), Value::Error(e) if e == "ERR syntax error")
    );
    // Not inside a transaction: Redis would answer it with a broken reply stream.
    c.cmd(&["MULTI"]);
    assert!(matches!(
        c.cmd(&["CLIENT", "REPLY", "OFF"]),
        Value::Error(_)
    ));
    assert!(matches!(c.cmd(&["EXEC"]), Value::Error(e) if e.starts_with("EXECABORT")));
}

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
            let f = |name: &str| {
                let prefix = format!("{name}=");
                l.split(' ')
                    .find_map(|x| x.strip_prefix(&prefix))
                    .unwrap_or("")
                    .to_owned()
            };
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
