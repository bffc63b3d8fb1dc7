//! `COMMAND INFO` and `COMMAND LIST` against Redis itself (Debian's `redis-server`
//! 7.0), in RESP2 and RESP3, for every command and subcommand both answer: flags, ACL
//! categories, tips (the request and response policies cluster clients route keyless
//! commands by), key specifications and subcommands, reply types included. Then the
//! engine's key specifications, and Redis's refusal of `no_multi` commands in `MULTI`.

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use redis_server::RedisServer;
use resp_client::{error, ok, temp_server, Client, Value};

/// Redis 7.2's subcommands, which the 7.0 oracle does not know.
const SINCE_7_2: &[&str] = &["client|no-touch", "client|setinfo"];

fn names(list: Value) -> Vec<String> {
    let Value::Array(names) = list else {
        panic!("COMMAND LIST answers an array: {list:?}")
    };
    names
        .into_iter()
        .map(|n| match n {
            Value::Bulk(b) => String::from_utf8(b).unwrap(),
            other => panic!("a name: {other:?}"),
        })
        .collect()
}

fn entry(c: &mut Client, name: &str) -> Value {
    match c.cmd(&["COMMAND", "INFO", name]) {
        Value::Array(mut one) if one.len() == 1 => one.pop().unwrap(),
        other => panic!("COMMAND INFO {name}: {other:?}"),
    }
}

/// An entry with its subcommands in name order, keeping those named in `keep` (Redis
/// lists them in its hash table's order; each side has some the other lacks: Redis
/// 7.0 those the host does not answer, the host Redis 7.2's `CLIENT NO-TOUCH` and
/// `SETINFO`).
fn normalized(entry: Value, keep: &[String]) -> Value {
    let Value::Array(mut fields) = entry else {
        return entry;
    };
    if let Some(Value::Array(subs)) = fields.get_mut(9) {
        subs.retain(|s| keep.contains(&sub_name(s)));
        subs.sort_by_key(sub_name);
    }
    Value::Array(fields)
}

fn sub_name(sub: &Value) -> String {
    match sub {
        Value::Array(f) => text(&f[0]),
        other => panic!("a subcommand: {other:?}"),
    }
}

fn sub_names(entry: &Value) -> Vec<String> {
    match entry {
        Value::Array(fields) => match &fields[9] {
            Value::Array(subs) => subs.iter().map(sub_name).collect(),
            _ => vec![],
        },
        other => panic!("an entry: {other:?}"),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

#[test]
fn command_info_matches_redis_for_every_command_both_answer() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    for protocol in ["2", "3"] {
        let (mut a, mut b) = (ours.client(), Client::connect(theirs.addr));
        if protocol == "3" {
            assert!(matches!(a.cmd(&["HELLO", "3"]), Value::Map(_)));
            assert!(matches!(b.cmd(&["HELLO", "3"]), Value::Map(_)));
        }
        let listed = names(a.cmd(&["COMMAND", "LIST"]));
        let mut compared = 0;
        for name in &listed {
            // The engine's commands are RedisBloom's and ours, not Redis's.
            if name.contains('.') || name == "clusterx" || SINCE_7_2.contains(&name.as_str()) {
                continue;
            }
            let theirs = entry(&mut b, name);
            assert_ne!(theirs, Value::Nil, "redis-server knows {name}");
            let ours = entry(&mut a, name);
            let (ours_subs, their_subs) = (sub_names(&ours), sub_names(&theirs));
            assert_eq!(
                normalized(ours, &their_subs),
                normalized(theirs, &ours_subs),
                "RESP{protocol} COMMAND INFO {name}"
            );
            compared += 1;
        }
        // Every host command and its subcommands (39 of them) and the HyperLogLog and
        // string ones.
        assert!(compared > 90, "{compared} compared");
        assert_eq!(
            a.cmd(&["COMMAND", "INFO", "client|nosuch"]),
            b.cmd(&["COMMAND", "INFO", "client|nosuch"])
        );
    }
}

#[test]
fn every_listed_subcommand_is_answered() {
    let (_dir, ours) = temp_server();
    let mut c = ours.client();
    let listed = names(c.cmd(&["COMMAND", "LIST"]));
    let subs: Vec<&String> = listed.iter().filter(|n| n.contains('|')).collect();
    assert!(subs.len() > 30, "{subs:?}");
    for sub in subs {
        let (container, name) = sub.split_once('|').unwrap();
        // `CLIENT KILL`/`PAUSE`/`UNBLOCK` without arguments: arity errors, not
        // "unknown subcommand".
        let reply = c.cmd(&[container, name]);
        if let Value::Error(e) = &reply {
            assert!(
                !e.to_lowercase().contains("unknown subcommand"),
                "{sub}: {e}"
            );
        }
    }
    // What `COMMAND COUNT` counts: commands, not subcommands.
    let count = listed.iter().filter(|n| !n.contains('|')).count();
    assert_eq!(c.cmd(&["COMMAND", "COUNT"]), Value::Int(count as i64));
}

/// A key specification's fields, as a RESP2 flat array.
fn spec_fields(spec: &Value) -> Vec<Value> {
    match spec {
        Value::Array(fields) => fields.clone(),
        other => panic!("a key specification: {other:?}"),
    }
}

#[test]
fn engine_key_specifications_say_what_each_command_does() {
    let (_dir, ours) = temp_server();
    let mut c = ours.client();
    let specs = |c: &mut Client, name: &str| match entry(c, name) {
        Value::Array(fields) => match &fields[8] {
            Value::Array(specs) => specs.iter().map(spec_fields).collect::<Vec<_>>(),
            other => panic!("{name}'s key specifications: {other:?}"),
        },
        other => panic!("{other:?}"),
    };
    let words = |w: &[&str]| Value::Array(w.iter().map(|f| Value::Simple((*f).into())).collect());
    let flags = |spec: &Vec<Value>| spec[1].clone();
    let listed = names(c.cmd(&["COMMAND", "LIST"]));
    for name in listed.iter().filter(|n| n.contains('.')) {
        let Value::Array(fields) = entry(&mut c, name) else {
            unreachable!()
        };
        let readonly = format!("{:?}", fields[2]).contains("readonly");
        let specs = specs(&mut c, name);
        assert!(!specs.is_empty(), "{name} has a key");
        let expected = match readonly {
            true => words(&["RO", "access"]),
            false => words(&["RW", "access", "update"]),
        };
        assert_eq!(flags(&specs[0]), expected, "{name}");
        // The key is the first argument.
        assert_eq!(
            format!("{:?}", specs[0][3]),
            format!(
                "{:?}",
                Value::Array(vec![
                    Value::bulk("type"),
                    Value::bulk("index"),
                    Value::bulk("spec"),
                    Value::Array(vec![Value::bulk("index"), Value::Int(1)]),
                ])
            ),
            "{name}"
        );
    }
    for merge in ["cms.merge", "tdigest.merge"] {
        let specs = specs(&mut c, merge);
        assert_eq!(specs.len(), 2, "{merge}: the destination, then the sources");
        assert_eq!(flags(&specs[1]), words(&["RO", "access"]));
        let keynum = Value::Array(vec![
            Value::bulk("type"),
            Value::bulk("keynum"),
            Value::bulk("spec"),
            Value::Array(vec![
                Value::bulk("keynumidx"),
                Value::Int(0),
                Value::bulk("firstkey"),
                Value::Int(1),
                Value::bulk("keystep"),
                Value::Int(1),
            ]),
        ]);
        assert_eq!(specs[1][5], keynum, "{merge}");
    }
}

#[test]
fn no_multi_commands_fail_a_transaction_as_in_redis() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let (mut a, mut b) = (ours.client(), Client::connect(theirs.addr));
    let scripts: &[&[&[&str]]] = &[
        &[&["MULTI"], &["SAVE"], &["EXEC"]],
        &[&["MULTI"], &["SAVE", "now"], &["EXEC"]],
        &[&["MULTI"], &["SYNC"], &["EXEC"]],
        &[&["MULTI"], &["PSYNC", "?", "-1"], &["EXEC"]],
        &[&["MULTI"], &["PING"], &["SHUTDOWN"], &["EXEC"]],
    ];
    for script in scripts {
        for step in *script {
            assert_eq!(a.cmd(step), b.cmd(step), "{script:?} at {step:?}");
        }
    }
    // Outside a transaction, `SAVE` runs.
    assert_eq!(a.cmd(&["SAVE"]), ok());
    assert_eq!(a.cmd(&["EXEC"]), error("ERR EXEC without MULTI"));
}

#[test]
fn subcommand_arity_errors_are_redis_7s() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let (mut a, mut b) = (ours.client(), Client::connect(theirs.addr));
    let listed = names(a.cmd(&["COMMAND", "LIST"]));
    let mut checked = 0;
    for sub in listed.iter().filter(|n| n.contains('|')) {
        if SINCE_7_2.contains(&sub.as_str()) {
            continue;
        }
        let (container, name) = sub.split_once('|').unwrap();
        for extra in [0, 1, 6] {
            let mut request = vec![container, name];
            request.extend(std::iter::repeat_n("x", extra));
            let (ours, theirs) = (a.cmd(&request), b.cmd(&request));
            let arity = |v: &Value| matches!(v, Value::Error(e) if e.contains("wrong number"));
            if arity(&ours) || arity(&theirs) {
                assert_eq!(ours, theirs, "{request:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "{checked} arity errors compared");
}

#[test]
fn help_has_redis_shape() {
    let (_dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let (mut a, mut b) = (ours.client(), Client::connect(theirs.addr));
    for container in [
        "CLIENT", "COMMAND", "CONFIG", "MODULE", "SLOWLOG", "cluster",
    ] {
        let (ours, theirs) = (a.cmd(&[container, "help"]), b.cmd(&[container, "HELP"]));
        let (Value::Array(ours), Value::Array(theirs)) = (&ours, &theirs) else {
            // Without cluster mode, both refuse `CLUSTER HELP` alike.
            assert_eq!(ours, theirs, "{container}");
            assert_eq!(container, "cluster");
            continue;
        };
        assert_eq!(ours[0], theirs[0], "{container}: the first line");
        assert_eq!(
            ours[ours.len() - 2..],
            theirs[theirs.len() - 2..],
            "{container}"
        );
        assert!(
            ours.iter().all(|l| matches!(l, Value::Simple(_))),
            "{ours:?}"
        );
        assert!(ours.len() >= 5, "{container}: {ours:?}");
    }
    assert_eq!(
        a.cmd(&["CONFIG", "HELP", "x"]),
        b.cmd(&["CONFIG", "HELP", "x"])
    );
}
