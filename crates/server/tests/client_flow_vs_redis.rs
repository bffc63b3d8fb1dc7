//! `CLIENT REPLY`, `NO-EVICT`, `NO-TOUCH`, `GETREDIR`, `TRACKINGINFO` and the forms of
//! every subcommand `client_flow.rs` answers, against Redis itself (Debian's
//! `redis-server` 7.0): the same scripts sent to both, the same bytes back. `CLIENT
//! REPLY`'s scripts are random, run by many clients at once whose byte streams are cut
//! at random points (and, on ours, half-closed after the last byte), so the host's
//! batching of pipelined and concurrent requests meets every reply mode. `PAUSE` and
//! `UNBLOCK`: `client_pause_vs_redis.rs`.

#[path = "common/raw.rs"]
mod raw;
#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use raw::Raw;
use redis_server::RedisServer;
use resp_client::{client_field, temp_server, wire, Client, Value};
use std::io::Write;
use std::net::SocketAddr;

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
/// random points: every byte each one reads equals what Redis sent for its script. On
/// ours, every other round's clients half-close once they have sent it all and read to
/// the end: the replies are the same, and then the connection closes. (Redis may drop
/// what a half-closed client sent, so it is asked without.)
#[test]
fn client_reply_answers_byte_for_byte_as_redis() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    for round in 0..4u64 {
        let clients = 8;
        let run = |addr: SocketAddr, half_close: bool| {
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
                        match half_close {
                            true => conn.finish(),
                            false => conn.read_until(&end),
                        }
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
        let (a, b) = (run(ours.addr, round % 2 == 1), run(theirs.addr, false));
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
        client_field(String::from_utf8_lossy(text).trim_end(), name).to_owned()
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
