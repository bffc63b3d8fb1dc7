//! The keyspace commands against Redis itself (Debian's `redis-server` 7.0): a seeded
//! random script over HyperLogLog keys, which both keep, in several databases:
//! `EXPIRE`/`PEXPIRE`/`EXPIREAT`/`PEXPIREAT` with every option and values past their
//! limits, `EXPIRETIME`, `TTL` and `PTTL` (compared by sign and absence, since time
//! passes between the two servers), `PERSIST`, `DEL`, `UNLINK`, `EXISTS` and `TOUCH`
//! with repeated keys, `TYPE`, `DBSIZE` (which in Redis counts expired keys not yet
//! collected), `SELECT`, `KEYS` and a whole `SCAN` (both compared as sets),
//! `FLUSHDB`. Every reply must be Redis's.

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis_server::RedisServer;
use resp_client::{temp_server, Client, Value};

const KEYS: &[&str] = &["a", "b", "c", "d", "{t}x"];
/// Deadlines now, past or far: none that would pass during the run, where the
/// servers' clocks, a few microseconds apart, could disagree on it.
const SECONDS: &[&str] = &[
    "100000",
    "0",
    "-1",
    "-100",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854",
    "4102444800",
    "1000000000000",
    "x",
    "1.5",
    "",
];
const OPTIONS: &[&[&str]] = &[
    &[],
    &["NX"],
    &["XX"],
    &["GT"],
    &["LT"],
    &["NX", "XX"],
    &["GT", "LT"],
    &["nx", "GT"],
    &["XX", "GT"],
    &["BOGUS"],
];

/// A reply made comparable across two servers a few microseconds apart: a remaining
/// time by its sign, lists of names as sorted sets.
fn normal(words: &[String], reply: Value) -> Value {
    match (words[0].as_str(), reply) {
        ("TTL" | "PTTL", Value::Int(n)) if n > 0 => Value::Int(1),
        ("KEYS", Value::Array(mut names)) => {
            names.sort_by_key(|n| format!("{n:?}"));
            Value::Array(names)
        }
        (_, reply) => reply,
    }
}

/// Every key a whole `SCAN` (with `MATCH`/`TYPE` as given) returns, sorted.
fn scan_all(c: &mut Client, extra: &[&str]) -> Value {
    let mut cursor = "0".to_owned();
    let mut keys = Vec::new();
    loop {
        let mut words = vec!["SCAN", cursor.as_str(), "COUNT", "3"];
        words.extend_from_slice(extra);
        let Value::Array(reply) = c.cmd(&words) else {
            panic!("SCAN {extra:?}")
        };
        let [Value::Bulk(next), Value::Array(found)] = &reply[..] else {
            panic!("{reply:?}")
        };
        keys.extend(found.iter().cloned());
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    keys.sort_by_key(|k| format!("{k:?}"));
    keys.dedup();
    Value::Array(keys)
}

fn random_words(rng: &mut StdRng) -> Vec<String> {
    let pick = |rng: &mut StdRng, from: &[&str]| from[rng.gen_range(0..from.len())].to_owned();
    let mut w: Vec<String> = Vec::new();
    match rng.gen_range(0..16) {
        0..=2 => {
            w.push("PFADD".into());
            w.push(pick(rng, KEYS));
            w.push(format!("e{}", rng.gen_range(0..50)));
        }
        3..=5 => {
            w.push(pick(rng, &["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"]));
            w.push(pick(rng, KEYS));
            w.push(pick(rng, SECONDS));
            let options = OPTIONS[rng.gen_range(0..OPTIONS.len())];
            // `GT`/`LT` compare with a deadline that may have been set relative to each
            // server's own clock: only with an absolute one is the answer the same.
            let relative = !w[0].ends_with("AT");
            if !(relative && options.iter().any(|o| ["GT", "LT"].contains(o))) {
                w.extend(options.iter().map(|o| o.to_string()));
            }
        }
        6 => {
            w.push(pick(
                rng,
                &[
                    "TTL",
                    "PTTL",
                    "EXPIRETIME",
                    "PEXPIRETIME",
                    "PERSIST",
                    "TYPE",
                ],
            ));
            w.push(pick(rng, KEYS));
        }
        7 => {
            w.push(pick(rng, &["DEL", "UNLINK", "EXISTS", "TOUCH"]));
            for _ in 0..rng.gen_range(1..4) {
                w.push(pick(rng, KEYS));
            }
        }
        8 => w.push("DBSIZE".into()),
        9 => {
            w.push("SELECT".into());
            w.push(pick(rng, &["0", "1", "15", "16", "-1", "x"]));
        }
        10 => {
            w.push("KEYS".into());
            w.push(pick(rng, &["*", "?", "{t}*", "[ab]", "nomatch"]));
        }
        11 => w.push("SCAN".into()),
        12 if rng.gen_bool(0.2) => w.push("FLUSHDB".into()),
        _ => {
            w.push(pick(rng, &["EXPIRE", "PERSIST", "TTL"]));
            w.push(pick(rng, KEYS));
            if w[0] == "EXPIRE" {
                w.push(pick(rng, SECONDS));
            }
        }
    }
    w
}

#[test]
fn keyspace_commands_answer_as_redis() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let (mut a, mut b) = (ours.client(), Client::connect(theirs.addr));
    let mut rng = StdRng::seed_from_u64(5);
    let mut history: Vec<String> = Vec::new();
    for step in 0..20000 {
        let words = random_words(&mut rng);
        // Redis counts a key that expired and was not yet collected; ours does not. So
        // ours must be the live keys (`KEYS *`), and at most Redis's count.
        if words[0] == "DBSIZE" {
            let (Value::Int(n), Value::Int(m)) = (a.cmd(&["DBSIZE"]), b.cmd(&["DBSIZE"])) else {
                panic!("DBSIZE")
            };
            let Value::Array(live) = a.cmd(&["KEYS", "*"]) else {
                panic!("KEYS")
            };
            assert!(
                n == live.len() as i64 && n <= m,
                "step {step}: DBSIZE {n} / {m}"
            );
            continue;
        }
        let (mut ours, theirs) = if words[0] == "SCAN" {
            let extra: &[&str] = match rng.gen_range(0..3) {
                0 => &[],
                1 => &["MATCH", "[a-c]"],
                _ => &["TYPE", "string"],
            };
            (scan_all(&mut a, extra), scan_all(&mut b, extra))
        } else {
            let refs: Vec<&str> = words.iter().map(String::as_str).collect();
            (normal(&words, a.cmd(&refs)), normal(&words, b.cmd(&refs)))
        };
        // A deadline set relative to each server's clock: the two differ by the time
        // between them (milliseconds), so the second may differ by one.
        let slack = match words[0].as_str() {
            "EXPIRETIME" => 1,
            "PEXPIRETIME" => 1000,
            _ => 0,
        };
        if let (Value::Int(x), Value::Int(y)) = (&ours, &theirs) {
            if *x > 0 && *y > 0 && (x - y).abs() <= slack {
                ours = theirs.clone();
            }
        }
        history.push(format!("{words:?} -> {theirs:?}"));
        let recent = &history[history.len().saturating_sub(60)..];
        if ours != theirs {
            if let Ok(path) = std::env::var("KEYSPACE_HISTORY") {
                std::fs::write(path, history.join("\n")).unwrap();
            }
            for (side, c) in [("ours", &mut a), ("redis", &mut b)] {
                let keys = c.cmd(&["KEYS", "*"]);
                let mut ttls = Vec::new();
                for k in KEYS {
                    ttls.push((k, c.cmd(&["PTTL", k]), c.cmd(&["PEXPIRETIME", k])));
                }
                eprintln!("{side}: {keys:?} {ttls:?}");
            }
        }
        assert_eq!(ours, theirs, "step {step}: {words:?} after {recent:#?}");
    }
}
