//! `COMMAND GETKEYS` against Redis itself (Debian's `redis-server` 7.0) for the core
//! commands both answer, errors included; and for the sketches, the keys a cluster
//! routes by: every key a merge names (RedisBloom declares only the destination, so
//! its own `GETKEYS` misses the sources a cross-slot merge needs), with `movablekeys`
//! in `COMMAND INFO`, as Redis flags commands whose keys follow a count.

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use redis_server::RedisServer;
use resp_client::{temp_server, Value};

#[test]
fn getkeys_answers_as_redis() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let (mut a, mut b) = (ours.client(), resp_client::Client::connect(theirs.addr));
    let forms: &[&[&str]] = &[
        &["COMMAND", "GETKEYS"],
        &["COMMAND", "GETKEYS", "PING"],
        &["COMMAND", "GETKEYS", "PFADD"],
        &["COMMAND", "GETKEYS", "NOSUCH", "a"],
        &["COMMAND", "GETKEYS", "CLIENT", "LIST"],
        &["COMMAND", "GETKEYS", "SCAN", "0"],
        &["COMMAND", "GETKEYS", "PFADD", "k", "x", "y"],
        &["COMMAND", "GETKEYS", "pfcount", "a", "b", "c"],
        &["COMMAND", "GETKEYS", "PFMERGE", "d", "s1", "s2"],
        &["COMMAND", "GETKEYS", "DEL", "a", "b"],
        &["COMMAND", "GETKEYS", "EXISTS", "a"],
        &["COMMAND", "GETKEYS", "EXPIRE", "a", "10"],
        &["COMMAND", "GETKEYS", "EXPIRE", "a"],
        &["COMMAND", "GETKEYS", "TTL", "a", "b"],
        &["COMMAND", "GETKEYS", "WATCH", "a", "b"],
        &["COMMAND", "GETKEYS", "TYPE", "a"],
    ];
    for form in forms {
        assert_eq!(a.cmd(form), b.cmd(form), "{form:?}");
    }
    // `GETKEYSANDFLAGS`: the same keys with their key specifications' flags, in both
    // protocols (the flags are a set in RESP3).
    for protocol in ["2", "3"] {
        assert!(matches!(
            a.cmd(&["HELLO", protocol]),
            Value::Map(_) | Value::Array(_)
        ));
        assert!(matches!(
            b.cmd(&["HELLO", protocol]),
            Value::Map(_) | Value::Array(_)
        ));
        for form in forms {
            let mut form = form.to_vec();
            form[1] = "GETKEYSANDFLAGS";
            assert_eq!(a.cmd(&form), b.cmd(&form), "RESP{protocol} {form:?}");
        }
    }
}

#[test]
fn getkeys_names_every_key_a_sketch_command_routes_by() {
    let (_dir, ours) = temp_server();
    let mut c = ours.client();
    let keys = |words: &[&str]| Value::Array(words.iter().map(|w| Value::bulk(w)).collect());
    let cases: &[(&[&str], &[&str])] = &[
        (&["BF.ADD", "k", "x"], &["k"]),
        (&["BF.MADD", "k", "a", "b"], &["k"]),
        (
            &["CMS.MERGE", "d", "2", "a", "b", "WEIGHTS", "1", "2"],
            &["d", "a", "b"],
        ),
        (&["TDIGEST.MERGE", "d", "2", "a", "b"], &["d", "a", "b"]),
        (&["TOPK.LIST", "k"], &["k"]),
    ];
    for (request, expected) in cases {
        let form: Vec<&str> = ["COMMAND", "GETKEYS"]
            .iter()
            .chain(*request)
            .copied()
            .collect();
        assert_eq!(c.cmd(&form), keys(expected), "{request:?}");
        // The same keys with their flags: a merge's destination is written, its
        // sources read; `TOPK.LIST` reads.
        let mut form = form;
        form[1] = "GETKEYSANDFLAGS";
        let Value::Array(pairs) = c.cmd(&form) else {
            panic!("{form:?}")
        };
        let found: Vec<Value> = pairs
            .iter()
            .map(|p| match p {
                Value::Array(kf) => kf[0].clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(Value::Array(found), keys(expected), "{request:?}");
        for (i, pair) in pairs.iter().enumerate() {
            let flags = format!("{pair:?}");
            let write = i == 0 && !request[0].starts_with("TOPK");
            assert_eq!(flags.contains("\"RW\""), write, "{request:?}: {flags}");
            assert_eq!(flags.contains("\"RO\""), !write, "{request:?}: {flags}");
        }
    }
    // A merge's count as a client writes it, at its limits: the keys there are, and no
    // panic (a count near 2^63 overflowed the last key's position).
    for count in [
        "9223372036854775807",
        "-9223372036854775808",
        "-5",
        "0",
        "x",
        "3",
    ] {
        for sub in ["GETKEYS", "GETKEYSANDFLAGS"] {
            let reply = c.cmd(&["COMMAND", sub, "CMS.MERGE", "d", count, "a", "b"]);
            assert!(matches!(reply, Value::Array(_)), "{sub} {count}: {reply:?}");
        }
    }
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    let Value::Array(info) = c.cmd(&["COMMAND", "INFO", "cms.merge", "bf.add"]) else {
        panic!("COMMAND INFO answers an array");
    };
    let flags = |entry: &Value| match entry {
        Value::Array(fields) => format!("{:?}", fields[2]),
        other => panic!("an entry: {other:?}"),
    };
    assert!(flags(&info[0]).contains("movablekeys"), "{info:?}");
    assert!(!flags(&info[1]).contains("movablekeys"), "{info:?}");
}
