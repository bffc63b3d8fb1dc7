//! `INFO commandstats` against Redis itself (Debian's `redis-server` 7.0): the same
//! seeded random script on both, then every command's and subcommand's calls,
//! rejected calls and failed calls compared. The script mixes commands that run, fail
//! as they run, and are refused first (argument counts, a transaction's queueing
//! errors), in and out of `MULTI`: Redis counts a queued command when `EXEC` runs it,
//! a subcommand under its own name (`config|get`), and a refusal as rejected. Then
//! `WATCH` across two clients, one watching while the other writes, expires and
//! flushes: every reply, `EXEC`'s included, Redis's.

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis_server::RedisServer;
use resp_client::{temp_server, Client, Value};
use std::collections::BTreeMap;

const POOL: &[&[&str]] = &[
    &["PFADD", "h", "x"],
    &["PFADD", "h", "y", "z"],
    &["PFADD"],
    &["PFCOUNT", "h"],
    &["PFCOUNT"],
    &["DEL", "h"],
    &["EXISTS", "h", "g"],
    &["EXPIRE", "h", "100"],
    &["EXPIRE", "h", "soon"],
    &["PERSIST", "h"],
    &["TYPE", "h"],
    &["PING"],
    &["ECHO", "a"],
    &["ECHO"],
    &["CLIENT", "INFO", "x"],
    &["CLIENT", "SETNAME", "n"],
    &["CLIENT", "SETNAME", "a b"],
    &["CLIENT", "GETNAME", "extra"],
    &["CLIENT", "NOSUCH"],
    &["CONFIG", "GET", "loglevel"],
    &["CONFIG", "GET"],
    &["CONFIG", "SET", "loglevel", "notice"],
    &["CONFIG", "SET", "loglevel", "loud"],
    &["COMMAND", "COUNT", "x"],
    &["COMMAND", "INFO", "ping"],
    &["DBSIZE"],
    &["MULTI"],
    &["MULTI"],
    &["EXEC"],
    &["EXEC"],
    &["DISCARD"],
    &["WATCH", "h"],
    &["UNWATCH"],
    &["SAVE"],
];

/// `cmdstat_<name>` -> (calls, rejected, failed).
fn stats(c: &mut Client) -> BTreeMap<String, (u64, u64, u64)> {
    let Value::Bulk(text) = c.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO commandstats")
    };
    let text = String::from_utf8(text).unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("cmdstat_"))
        .map(|line| {
            let (name, fields) = line.split_once(':').unwrap();
            let field = |f: &str| -> u64 {
                fields
                    .split(',')
                    .find_map(|kv| kv.strip_prefix(f)?.strip_prefix('='))
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            let counts = (
                field("calls"),
                field("rejected_calls"),
                field("failed_calls"),
            );
            (name.to_owned(), counts)
        })
        .collect()
}

#[test]
fn commandstats_count_as_redis_counts() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let (mut a, mut b) = (ours.client(), Client::connect(theirs.addr));
    let mut rng = StdRng::seed_from_u64(7);
    for (round, length) in [(0, 40), (1, 300), (2, 300)] {
        for c in [&mut a, &mut b] {
            assert_eq!(c.cmd(&["RESET"]), Value::Simple("RESET".into()));
            assert_eq!(c.cmd(&["CONFIG", "RESETSTAT"]), Value::Simple("OK".into()));
        }
        let mut in_multi = false;
        for _ in 0..length {
            let words = POOL[rng.gen_range(0..POOL.len())];
            // `SAVE` outside a transaction makes a snapshot on both: only in one, where
            // it is refused.
            if words[0] == "SAVE" && !in_multi {
                continue;
            }
            let (ours, theirs) = (a.cmd(words), b.cmd(words));
            // The replies agree where both keep the same state (not `CLIENT ID` or
            // `COMMAND COUNT`), so the counts below compare like with like.
            if !matches!(
                words,
                ["CLIENT", "ID"] | ["COMMAND", ..] | ["CONFIG", "GET", "port"]
            ) {
                assert_eq!(ours, theirs, "round {round}: {words:?}");
            }
            match words[0] {
                "MULTI" => in_multi = true,
                "EXEC" | "DISCARD" => in_multi = false,
                _ => {}
            }
        }
        // Out of any transaction the script left open (`RESET` is counted on both).
        for c in [&mut a, &mut b] {
            assert_eq!(c.cmd(&["RESET"]), Value::Simple("RESET".into()));
        }
        let (ours, theirs) = (stats(&mut a), stats(&mut b));
        assert_eq!(ours, theirs, "round {round}");
        assert!(theirs.len() > 5, "{theirs:?}");
    }
}

/// `WATCH` across two clients: one watches and runs transactions, the other writes the
/// watched keys (changing them or not), flushes, expires; every reply of both, `EXEC`'s
/// null array or its results included, equals `redis-server`'s.
#[test]
fn watch_sees_what_redis_sees_across_clients() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let mut watcher = (ours.client(), Client::connect(theirs.addr));
    let mut writer = (ours.client(), Client::connect(theirs.addr));
    let watching: &[&[&str]] = &[
        &["WATCH", "h"],
        &["WATCH", "g", "nokey"],
        &["UNWATCH"],
        &["MULTI"],
        &["EXEC"],
        &["DISCARD"],
        &["PFADD", "h", "w"],
        &["PFCOUNT", "h", "g"],
        &["EXISTS", "h"],
    ];
    let writing: &[&[&str]] = &[
        &["PFADD", "h", "x"],
        &["PFADD", "h", "NEW"],
        &["PFADD", "g", "y"],
        &["PFADD", "nokey"],
        &["DEL", "h"],
        &["DEL", "nokey"],
        &["EXPIRE", "h", "100"],
        &["EXPIRE", "nokey", "100"],
        &["PERSIST", "h"],
        &["PFMERGE", "g", "h"],
        &["PFMERGE", "h"],
        &["FLUSHDB"],
        &["FLUSHALL"],
    ];
    let mut rng = StdRng::seed_from_u64(11);
    let mut history: Vec<String> = Vec::new();
    for step in 0..3000 {
        let (side, pool) = match rng.gen_bool(0.5) {
            true => (&mut watcher, watching),
            false => (&mut writer, writing),
        };
        let words = pool[rng.gen_range(0..pool.len())];
        let fresh = format!("e{step}");
        let words: Vec<&str> = words
            .iter()
            .map(|w| if *w == "NEW" { fresh.as_str() } else { w })
            .collect();
        let (ours, theirs) = (side.0.cmd(&words), side.1.cmd(&words));
        let who = if pool == watching {
            "watcher"
        } else {
            "writer"
        };
        history.push(format!("{who} {words:?} -> {theirs:?}"));
        let recent = &history[history.len().saturating_sub(16)..];
        assert_eq!(ours, theirs, "step {step}: {words:?} after {recent:#?}");
    }
}
