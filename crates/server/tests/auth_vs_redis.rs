//! Authentication against Redis itself (Debian's `redis-server` 7.0), both with
//! `requirepass`: a seeded random script of `AUTH` and `HELLO` in all their forms (right,
//! wrong and missing passwords, other users, protocol versions, `SETNAME`), `RESET`,
//! `SELECT`, transactions, and commands that need a login (known, unknown, of the
//! wrong arity) before and after it. Every reply must be Redis's; a `HELLO` map is
//! compared by its field names and protocol (the server's id, version and modules are
//! its own).

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis_server::RedisServer;
use resp_client::{Client, TestServer, Value};
use rocksketch_server::ServerConfig;

const SCRIPT: &[&[&str]] = &[
    &["AUTH", "s3cret"],
    &["AUTH", "wrong"],
    &["AUTH", "default", "s3cret"],
    &["AUTH", "default", "wrong"],
    &["AUTH", "someone", "s3cret"],
    &["AUTH"],
    &["AUTH", "a", "b", "c"],
    &["HELLO"],
    &["HELLO", "2"],
    &["HELLO", "3"],
    &["HELLO", "4"],
    &["HELLO", "x"],
    &["HELLO", "3", "AUTH", "default", "s3cret"],
    &["HELLO", "2", "AUTH", "default", "wrong"],
    &["HELLO", "3", "AUTH", "someone", "s3cret"],
    &["HELLO", "3", "AUTH", "default"],
    // With the login: unauthenticated, Redis 7.0 keeps the name though it refuses
    // the `HELLO` (7.2, which the host follows, does not).
    &["HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "me"],
    &["HELLO", "3", "SETNAME", "a b"],
    &["HELLO", "AUTH", "default", "s3cret"],
    &["HELLO", "3", "BOGUS"],
    &["RESET"],
    &["PING"],
    &["PING", "hi"],
    &["ECHO", "x"],
    &["ECHO"],
    &["PFADD", "k", "x"],
    &["PFCOUNT", "k"],
    &["NOSUCH", "x"],
    &["PFADD"],
    &["CLIENT", "SETNAME", "n"],
    &["CLIENT", "GETNAME"],
    &["SELECT", "1"],
    &["SELECT", "0"],
    &["MULTI"],
    &["EXEC"],
    &["DISCARD"],
];

/// A reply with what is each server's own made equal: a `HELLO` map (or its RESP2
/// array), alone or in `EXEC`'s array, becomes its field names and protocol.
fn normal(words: &[&str], reply: Value) -> Value {
    match (words[0], reply) {
        ("EXEC", Value::Array(replies)) => {
            Value::Array(replies.into_iter().map(hello_fields).collect())
        }
        // Redis 7.2 named the protocol in this text; the oracle is 7.0, the host 7.2.
        ("HELLO", Value::Error(e)) => Value::Error(e.replace("HELLO <proto> AUTH", "HELLO AUTH")),
        ("HELLO", reply) => hello_fields(reply),
        (_, reply) => reply,
    }
}

/// A `HELLO` reply's field names, and its protocol; anything else as it is.
fn hello_fields(reply: Value) -> Value {
    let pairs: Vec<(Value, Value)> = match reply {
        Value::Map(pairs) => pairs,
        Value::Array(flat) if flat.first() == Some(&Value::bulk("server")) => flat
            .chunks(2)
            .map(|kv| (kv[0].clone(), kv[1].clone()))
            .collect(),
        other => return other,
    };
    let proto = Value::bulk("proto");
    let fields = pairs.into_iter().map(|(k, v)| {
        let v = if k == proto { v } else { Value::Nil };
        Value::Array(vec![k, v])
    });
    Value::Array(fields.collect())
}

#[test]
fn authentication_answers_as_redis() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        requirepass: Some("s3cret".to_owned()),
        ..ServerConfig::default()
    };
    let ours = TestServer::start(dir.path(), config);
    // Set once started: the harness's check that it started asks `INFO` unauthenticated.
    let theirs = RedisServer::start();
    let set = ["CONFIG", "SET", "requirepass", "s3cret"];
    assert_eq!(
        Client::connect(theirs.addr).cmd(&set),
        Value::Simple("OK".into())
    );
    let mut rng = StdRng::seed_from_u64(3);
    let mut history: Vec<String> = Vec::new();
    for round in 0..20 {
        // A fresh connection now and then: unauthenticated again.
        let (mut a, mut b) = (ours.client(), Client::connect(theirs.addr));
        for step in 0..150 {
            let words = SCRIPT[rng.gen_range(0..SCRIPT.len())];
            let (x, y) = (normal(words, a.cmd(words)), normal(words, b.cmd(words)));
            history.push(format!("{words:?} -> {y:?}"));
            let recent = &history[history.len().saturating_sub(45)..];
            assert_eq!(
                x, y,
                "round {round} step {step}: {words:?} after {recent:#?}"
            );
        }
    }
}
