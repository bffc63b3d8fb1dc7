//! The host's own commands (connection, keyspace, server) and the dispatch to the
//! RedisBloom commands in [`crate::command`].

use super::conn::Connection;
use super::glob;
use crate::command::{self, parse::parse_i64, Reply};
use crate::resp::Protocol;
use crate::store::Namespace;
use crate::{now_ms, KeyType};
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

/// What the connection does after a command.
pub(crate) enum Outcome {
    Reply(Reply),
    /// Send the reply, then close the connection (`QUIT`).
    Close(Reply),
    /// Close the connection and stop the server (`SHUTDOWN`).
    Shutdown,
}

/// A command's entry in the table `COMMAND` reports, with Redis's arity convention:
/// `n` exactly n arguments (the name included), `-n` at least n.
struct Spec {
    name: &'static str,
    arity: i64,
    flags: &'static [&'static str],
    first_key: i64,
    last_key: i64,
    step: i64,
}

const fn spec(
    name: &'static str,
    arity: i64,
    flags: &'static [&'static str],
    keys: (i64, i64, i64),
) -> Spec {
    Spec {
        name,
        arity,
        flags,
        first_key: keys.0,
        last_key: keys.1,
        step: keys.2,
    }
}

const READ: &[&str] = &["readonly", "fast"];
const WRITE: &[&str] = &["write", "denyoom"];
const CONN: &[&str] = &["fast", "no-auth", "loading", "stale"];
const ADMIN: &[&str] = &["admin", "noscript"];
const NONE: (i64, i64, i64) = (0, 0, 0);
const KEY1: (i64, i64, i64) = (1, 1, 1);

/// Every command the host answers.
const COMMANDS: &[Spec] = &[
    spec("ping", -1, &["fast"], NONE),
    spec("echo", 2, &["fast"], NONE),
    spec("hello", -1, CONN, NONE),
    spec("auth", -2, CONN, NONE),
    spec("client", -2, &["noscript", "loading", "stale"], NONE),
    spec("select", 2, &["loading", "stale", "fast"], NONE),
    spec("quit", -1, CONN, NONE),
    spec("info", -1, &["loading", "stale"], NONE),
    spec("dbsize", 1, &["readonly", "fast"], NONE),
    spec("del", -2, &["write"], (1, -1, 1)),
    spec("unlink", -2, &["write", "fast"], (1, -1, 1)),
    spec("exists", -2, READ, (1, -1, 1)),
    spec("type", 2, READ, KEY1),
    spec("keys", 2, &["readonly"], NONE),
    spec("scan", -2, &["readonly"], NONE),
    spec("expire", -3, &["write", "fast"], KEY1),
    spec("pexpire", -3, &["write", "fast"], KEY1),
    spec("expireat", -3, &["write", "fast"], KEY1),
    spec("pexpireat", -3, &["write", "fast"], KEY1),
    spec("ttl", 2, READ, KEY1),
    spec("pttl", 2, READ, KEY1),
    spec("expiretime", 2, READ, KEY1),
    spec("pexpiretime", 2, READ, KEY1),
    spec("persist", 2, &["write", "fast"], KEY1),
    spec("flushdb", -1, &["write"], NONE),
    spec("flushall", -1, &["write"], NONE),
    spec("command", -1, &["loading", "stale"], NONE),
    spec("module", -2, ADMIN, NONE),
    spec("shutdown", -1, ADMIN, NONE),
    spec("debug", -2, ADMIN, NONE),
    spec("multi", 1, &["noscript", "loading", "stale", "fast"], NONE),
    spec("exec", 1, &["noscript", "loading", "stale"], NONE),
    spec(
        "discard",
        1,
        &["noscript", "loading", "stale", "fast"],
        NONE,
    ),
    spec("cms.initbydim", 4, WRITE, KEY1),
    spec("cms.initbyprob", 4, WRITE, KEY1),
    spec("cms.incrby", -4, WRITE, KEY1),
    spec("cms.query", -3, READ, KEY1),
    spec("cms.merge", -4, WRITE, KEY1),
    spec("cms.info", 2, READ, KEY1),
    spec("cf.reserve", -3, WRITE, KEY1),
    spec("cf.add", 3, WRITE, KEY1),
    spec("cf.addnx", 3, WRITE, KEY1),
    spec("cf.insert", -3, WRITE, KEY1),
    spec("cf.insertnx", -4, WRITE, KEY1),
    spec("cf.exists", 3, READ, KEY1),
    spec("cf.mexists", -3, READ, KEY1),
    spec("cf.count", 3, READ, KEY1),
    spec("cf.del", 3, WRITE, KEY1),
    spec("cf.delete", 3, WRITE, KEY1),
    spec("cf.info", 2, READ, KEY1),
    spec("cf.stats", 2, READ, KEY1),
    spec("cf.scandump", 3, READ, KEY1),
    spec("cf.loadchunk", 4, WRITE, KEY1),
    spec("bf.reserve", -4, WRITE, KEY1),
    spec("bf.add", 3, WRITE, KEY1),
    spec("bf.madd", -3, WRITE, KEY1),
    spec("bf.insert", -4, WRITE, KEY1),
    spec("bf.exists", 3, READ, KEY1),
    spec("bf.mexists", -3, READ, KEY1),
    spec("bf.info", -2, READ, KEY1),
    spec("bf.card", 2, READ, KEY1),
    spec("bf.scandump", 3, READ, KEY1),
    spec("bf.loadchunk", 4, WRITE, KEY1),
    spec("bf.debug", 2, READ, KEY1),
    spec("cf.debug", 2, READ, KEY1),
    spec("tdigest.create", -2, WRITE, KEY1),
    spec("tdigest.add", -3, WRITE, KEY1),
    spec("tdigest.reset", 2, WRITE, KEY1),
    spec("tdigest.merge", -4, WRITE, KEY1),
    spec("tdigest.min", 2, READ, KEY1),
    spec("tdigest.max", 2, READ, KEY1),
    spec("tdigest.quantile", -3, READ, KEY1),
    spec("tdigest.cdf", -3, READ, KEY1),
    spec("tdigest.rank", -3, READ, KEY1),
    spec("tdigest.revrank", -3, READ, KEY1),
    spec("tdigest.byrank", -3, READ, KEY1),
    spec("tdigest.byrevrank", -3, READ, KEY1),
    spec("tdigest.trimmed_mean", 4, READ, KEY1),
    spec("tdigest.info", 2, READ, KEY1),
    spec("topk.reserve", -3, WRITE, KEY1),
    spec("topk.add", -3, WRITE, KEY1),
    spec("topk.incrby", -4, WRITE, KEY1),
    spec("topk.query", -3, READ, KEY1),
    spec("topk.count", -3, READ, KEY1),
    spec("topk.list", -2, READ, KEY1),
    spec("topk.info", 2, READ, KEY1),
];

fn lookup(name: &str) -> Option<&'static Spec> {
    COMMANDS.iter().find(|s| s.name == name)
}

fn arity_ok(arity: i64, argc: usize) -> bool {
    let argc = argc as i64;
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

fn lower(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).to_ascii_lowercase()
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_owned())
}

fn bulk(text: impl Into<Vec<u8>>) -> Reply {
    Reply::Bulk(text.into())
}

const NOAUTH: &str = "NOAUTH Authentication required.";
const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
const SYNTAX: &str = "ERR syntax error";
const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

/// Whether `args` names a known command with a valid number of arguments; else the
/// error Redis answers (what `MULTI` checks before it queues a command).
pub(crate) fn check_call(args: &[Vec<u8>]) -> Result<(), Reply> {
    match lookup(&lower(&args[0])) {
        None => Err(command::unknown_command(args)),
        Some(spec) if !arity_ok(spec.arity, args.len()) => Err(Reply::wrong_arity(spec.name)),
        Some(_) => Ok(()),
    }
}

/// Runs one command for `conn`.
pub(crate) fn dispatch(conn: &mut Connection, args: &[Vec<u8>]) -> Outcome {
    let name = lower(&args[0]);
    if !conn.authenticated && !matches!(name.as_str(), "auth" | "hello" | "quit") {
        return Outcome::Reply(err(NOAUTH));
    }
    let spec = lookup(&name);
    if let Some(spec) = spec {
        if !arity_ok(spec.arity, args.len()) {
            return Outcome::Reply(Reply::wrong_arity(spec.name));
        }
    }
    let reply = match name.as_str() {
        "ping" => ping(args),
        "echo" => bulk(args[1].clone()),
        "hello" => hello(conn, args),
        "auth" => auth(conn, args),
        "client" => client(conn, args),
        "select" => select(conn, args),
        "quit" => return Outcome::Close(Reply::ok()),
        "shutdown" => return Outcome::Shutdown,
        "debug" => debug(conn, args),
        "info" => info(conn, args),
        "dbsize" => match conn.ns().counts() {
            Ok((keys, _)) => Reply::Int(keys as i64),
            Err(e) => Reply::from(&e),
        },
        "del" | "unlink" => del(conn, args),
        "exists" => exists(conn, args),
        "type" => key_type(conn, args),
        "keys" => keys(conn, args),
        "scan" => scan(conn, args),
        "expire" | "pexpire" | "expireat" | "pexpireat" => expire(conn, args, &name),
        "ttl" | "pttl" | "expiretime" | "pexpiretime" => ttl(conn, args, &name),
        "persist" => match conn.ns().persist(&args[1]) {
            Ok(done) => Reply::Int(i64::from(done)),
            Err(e) => Reply::from(&e),
        },
        "flushdb" | "flushall" => flush(conn, args, name == "flushall"),
        "command" => command_cmd(conn, args),
        "module" => module(args),
        _ => command::execute(&conn.ns(), args),
    };
    Outcome::Reply(reply)
}

impl Connection {
    fn ns(&self) -> Namespace {
        self.shared.store.ns(self.db)
    }
}

fn ping(args: &[Vec<u8>]) -> Reply {
    match args {
        [_] => Reply::Simple("PONG".to_owned()),
        [_, message] => bulk(message.clone()),
        _ => Reply::wrong_arity("ping"),
    }
}

/// `HELLO [protover [AUTH user pass] [SETNAME name]]`.
fn hello(conn: &mut Connection, args: &[Vec<u8>]) -> Reply {
    let mut protocol = conn.protocol;
    if let Some(version) = args.get(1) {
        protocol = match parse_i64(version) {
            None => return err("ERR Protocol version is not an integer or out of range"),
            Some(2) => Protocol::Resp2,
            Some(3) => Protocol::Resp3,
            Some(_) => return err("NOPROTO unsupported protocol version"),
        };
    }
    let mut credentials = None;
    let mut setname = None;
    let mut at = 2;
    while at < args.len() {
        let option = lower(&args[at]);
        match option.as_str() {
            "auth" if at + 2 < args.len() => {
                credentials = Some((&args[at + 1], &args[at + 2]));
                at += 3;
            }
            "setname" if at + 1 < args.len() => {
                setname = Some(&args[at + 1]);
                at += 2;
            }
            _ => {
                return Reply::Error(format!(
                    "ERR Syntax error in HELLO option '{}'",
                    String::from_utf8_lossy(&args[at])
                ))
            }
        }
    }
    if let Some((user, pass)) = credentials {
        if !password_matches(conn, user, pass) {
            return err(WRONGPASS);
        }
        conn.authenticate();
    }
    if !conn.authenticated {
        return err(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and \
             select the RESP protocol version at the same time",
        );
    }
    if let Some(name) = setname {
        if let Err(reply) = set_name(conn, name) {
            return reply;
        }
    }
    conn.protocol = protocol;
    let resp = if protocol == Protocol::Resp3 { 3 } else { 2 };
    conn.shared.update_client(conn.id, |c| c.resp = resp);
    let field = |k: &str| bulk(k);
    Reply::Map(vec![
        (field("server"), bulk("redis")),
        (field("version"), bulk(REDIS_VERSION)),
        (field("proto"), Reply::Int(i64::from(resp))),
        (field("id"), Reply::Int(conn.id as i64)),
        (field("mode"), bulk("standalone")),
        (field("role"), bulk("master")),
        (field("modules"), Reply::Array(vec![bloom_module()])),
    ])
}

/// The Redis version the host reports; clients pick features by it.
const REDIS_VERSION: &str = "7.2.0";

/// The RedisBloom module, as `MODULE LIST` and `HELLO` describe it.
fn bloom_module() -> Reply {
    Reply::Map(vec![
        (bulk("name"), bulk("bf")),
        (bulk("ver"), Reply::Int(20612)),
        (bulk("path"), bulk("rocksketch")),
        (bulk("args"), Reply::Array(vec![])),
    ])
}

/// Whether `user`/`pass` are the default user's credentials. Without a configured
/// password, the default user accepts any (as Redis's `nopass`).
fn password_matches(conn: &Connection, user: &[u8], pass: &[u8]) -> bool {
    if user != b"default" {
        return false;
    }
    match &conn.shared.config.requirepass {
        None => true,
        Some(secret) => constant_time_eq(secret.as_bytes(), pass),
    }
}

/// Compares without stopping at the first difference, so timing does not leak a prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// `AUTH [user] pass`.
fn auth(conn: &mut Connection, args: &[Vec<u8>]) -> Reply {
    let (user, pass): (&[u8], &[u8]) = match args {
        [_, pass] => (b"default", pass),
        [_, user, pass] => (user, pass),
        _ => return err(SYNTAX),
    };
    if conn.shared.config.requirepass.is_none() && args.len() == 2 {
        return err(
            "ERR AUTH <password> called without any password configured for the default user. \
             Are you sure your configuration is correct?",
        );
    }
    if password_matches(conn, user, pass) {
        conn.authenticate();
        Reply::ok()
    } else {
        err(WRONGPASS)
    }
}

fn set_name(conn: &Connection, name: &[u8]) -> Result<(), Reply> {
    if name.iter().any(|b| !(b'!'..=b'~').contains(b)) {
        return Err(err(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    let name = String::from_utf8_lossy(name).into_owned();
    conn.shared.update_client(conn.id, |c| c.name = name);
    Ok(())
}

/// `CLIENT SETINFO | SETNAME | GETNAME | ID | INFO | LIST`.
fn client(conn: &mut Connection, args: &[Vec<u8>]) -> Reply {
    let sub = lower(&args[1]);
    let arity = |n: usize| {
        if args.len() == n {
            None
        } else {
            Some(Reply::Error(format!(
                "ERR wrong number of arguments for 'client|{sub}' command"
            )))
        }
    };
    match sub.as_str() {
        "id" => arity(2).unwrap_or(Reply::Int(conn.id as i64)),
        "setname" => arity(3).unwrap_or_else(|| match set_name(conn, &args[2]) {
            Ok(()) => Reply::ok(),
            Err(reply) => reply,
        }),
        "getname" => arity(2).unwrap_or_else(|| {
            let name = conn
                .shared
                .clients
                .lock()
                .get(&conn.id)
                .map(|c| c.info.name.clone());
            match name {
                Some(name) if !name.is_empty() => bulk(name),
                _ => Reply::Nil,
            }
        }),
        "setinfo" => arity(4).unwrap_or_else(|| {
            let value = String::from_utf8_lossy(&args[3]).into_owned();
            if value.bytes().any(|b| !(b'!'..=b'~').contains(&b)) {
                return Reply::Error(format!(
                    "ERR {} cannot contain spaces, newlines or special characters.",
                    lower(&args[2])
                ));
            }
            match lower(&args[2]).as_str() {
                "lib-name" => conn.shared.update_client(conn.id, |c| c.lib_name = value),
                "lib-ver" => conn.shared.update_client(conn.id, |c| c.lib_ver = value),
                _ => {
                    return Reply::Error(format!(
                        "ERR Unrecognized option '{}'",
                        String::from_utf8_lossy(&args[2])
                    ))
                }
            }
            Reply::ok()
        }),
        "info" => arity(2).unwrap_or_else(|| {
            let clients = conn.shared.clients.lock();
            let line = clients
                .get(&conn.id)
                .map(|c| client_line(conn.id, &c.info))
                .unwrap_or_default();
            bulk(line)
        }),
        "list" => {
            let clients = conn.shared.clients.lock();
            let mut ids: Vec<&u64> = clients.keys().collect();
            ids.sort();
            let text: String = ids
                .into_iter()
                .filter_map(|id| clients.get(id).map(|c| client_line(*id, &c.info)))
                .collect();
            bulk(text)
        }
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

fn client_line(id: u64, c: &super::ClientInfo) -> String {
    let age = c.connected.map_or(0, |t| t.elapsed().as_secs());
    format!(
        "id={id} addr={} laddr={} fd=0 name={} age={age} idle=0 flags=N db={} sub=0 psub=0 \
         ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 \
         omem=0 tot-mem=0 events=r cmd=client|list user=default redir=-1 resp={} \
         lib-name={} lib-ver={}\n",
        c.addr, c.laddr, c.name, c.db, c.resp, c.lib_name, c.lib_ver
    )
}

fn select(conn: &mut Connection, args: &[Vec<u8>]) -> Reply {
    let Some(index) = parse_i64(&args[1]) else {
        return err(NOT_INTEGER);
    };
    match u16::try_from(index) {
        Ok(db) if db < conn.shared.config.databases => {
            conn.db = db;
            conn.shared.update_client(conn.id, |c| c.db = db);
            Reply::ok()
        }
        _ => err("ERR DB index is out of range"),
    }
}

fn del(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    let ns = conn.ns();
    let mut deleted = 0;
    for key in &args[1..] {
        match ns.delete(key) {
            Ok(true) => deleted += 1,
            Ok(false) => {}
            Err(e) => return Reply::from(&e),
        }
    }
    Reply::Int(deleted)
}

fn exists(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    let ns = conn.ns();
    let mut found = 0;
    for key in &args[1..] {
        match ns.exists(key) {
            Ok(true) => found += 1,
            Ok(false) => {}
            Err(e) => return Reply::from(&e),
        }
    }
    Reply::Int(found)
}

fn key_type(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    match conn.ns().key_type(&args[1]) {
        Ok(Some(t)) => Reply::Simple(t.redis_name().to_owned()),
        Ok(None) => Reply::Simple("none".to_owned()),
        Err(e) => Reply::from(&e),
    }
}

fn keys(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    match conn.ns().keys() {
        Ok(all) => Reply::Array(
            all.into_iter()
                .filter(|(key, _)| glob::matches(&args[1], key))
                .map(|(key, _)| Reply::Bulk(key))
                .collect(),
        ),
        Err(e) => Reply::from(&e),
    }
}

/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`.
fn scan(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    let Some(cursor) = std::str::from_utf8(&args[1])
        .ok()
        .and_then(|c| c.parse::<u64>().ok())
    else {
        return err("ERR invalid cursor");
    };
    let (mut pattern, mut count, mut wanted_type) = (None, 10usize, None);
    let mut options = args[2..].chunks(2);
    for option in options.by_ref() {
        let [name, value] = option else {
            return err(SYNTAX);
        };
        match lower(name).as_str() {
            "match" => pattern = Some(value.as_slice()),
            "count" => match parse_i64(value) {
                Some(n) if n >= 1 => count = (n as usize).min(1 << 20),
                Some(_) => return err(SYNTAX),
                None => return err(NOT_INTEGER),
            },
            "type" => wanted_type = Some(lower(value)),
            _ => return err(SYNTAX),
        }
    }
    let ns = conn.ns();
    let after = match cursor {
        0 => None,
        id => match conn.shared.cursors.lock().get(ns.id(), id) {
            Some(last) => Some(last),
            None => return err("ERR invalid cursor"),
        },
    };
    let page = match ns.scan(after.as_deref(), count) {
        Ok(page) => page,
        Err(e) => return Reply::from(&e),
    };
    let next = match page.last() {
        Some((last, _)) if page.len() == count => {
            conn.shared.cursors.lock().save(ns.id(), last.clone())
        }
        _ => 0,
    };
    let type_matches = |t: KeyType| {
        wanted_type
            .as_deref()
            .is_none_or(|w| t.redis_name().eq_ignore_ascii_case(w))
    };
    let keys = page
        .into_iter()
        .filter(|(key, t)| type_matches(*t) && pattern.is_none_or(|p| glob::matches(p, key)))
        .map(|(key, _)| Reply::Bulk(key))
        .collect();
    Reply::Array(vec![bulk(next.to_string()), Reply::Array(keys)])
}

/// `EXPIRE key seconds [NX|XX|GT|LT]` and its `PEXPIRE`, `EXPIREAT`, `PEXPIREAT` kin.
fn expire(conn: &Connection, args: &[Vec<u8>], name: &str) -> Reply {
    let Some(amount) = parse_i64(&args[2]) else {
        return err(NOT_INTEGER);
    };
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for option in &args[3..] {
        match lower(option).as_str() {
            "nx" => nx = true,
            "xx" => xx = true,
            "gt" => gt = true,
            "lt" => lt = true,
            _ => {
                return Reply::Error(format!(
                    "ERR Unsupported option {}",
                    String::from_utf8_lossy(option)
                ))
            }
        }
    }
    if nx && (xx || gt || lt) {
        return err("ERR NX and XX, GT or LT options at the same time are not compatible");
    }
    if gt && lt {
        return err("ERR GT and LT options at the same time are not compatible");
    }
    let (scale, relative) = match name {
        "expire" => (1000, true),
        "pexpire" => (1, true),
        "expireat" => (1000, false),
        _ => (1, false),
    };
    let base = if relative { now_ms() as i64 } else { 0 };
    let at = amount
        .checked_mul(scale)
        .and_then(|ms| ms.checked_add(base))
        .filter(|at| *at <= i64::MAX / 2);
    let Some(at) = at else {
        return Reply::Error(format!("ERR invalid expire time in '{name}' command"));
    };
    let at = at.max(0) as u64;
    // A key without expiry counts as expiring at infinity (as Redis has it).
    let allow = |current: Option<u64>| {
        let after = current.is_some_and(|c| at > c);
        let before = current.is_none_or(|c| at < c);
        !(nx && current.is_some() || xx && current.is_none() || gt && !after || lt && !before)
    };
    match conn.ns().expire_at_if(&args[1], at, allow) {
        Ok(done) => Reply::Int(i64::from(done)),
        Err(e) => Reply::from(&e),
    }
}

/// `TTL` / `PTTL` (time left; -1 without expiry, -2 for a missing key) and
/// `EXPIRETIME` / `PEXPIRETIME` (the Unix time it expires at).
fn ttl(conn: &Connection, args: &[Vec<u8>], name: &str) -> Reply {
    let at = match conn.ns().expire_time(&args[1]) {
        Ok(None) => return Reply::Int(-2),
        Ok(Some(0)) => return Reply::Int(-1),
        Ok(Some(at)) => at as i64,
        Err(e) => return Reply::from(&e),
    };
    let left = (at - now_ms() as i64).max(0);
    Reply::Int(match name {
        "ttl" => (left + 500) / 1000,
        "pttl" => left,
        "expiretime" => at / 1000,
        _ => at,
    })
}

/// `FLUSHDB` / `FLUSHALL [ASYNC|SYNC]`: both run synchronously.
fn flush(conn: &Connection, args: &[Vec<u8>], all: bool) -> Reply {
    match args {
        [_] => {}
        [_, mode] if matches!(lower(mode).as_str(), "async" | "sync") => {}
        _ => return err(SYNTAX),
    }
    let dbs = if all {
        0..conn.shared.config.databases
    } else {
        conn.db..conn.db + 1
    };
    for db in dbs {
        if let Err(e) = conn.shared.store.ns(db).flush() {
            return Reply::from(&e);
        }
    }
    Reply::ok()
}

fn command_entry(spec: &Spec) -> Reply {
    Reply::Array(vec![
        bulk(spec.name),
        Reply::Int(spec.arity),
        Reply::Array(
            spec.flags
                .iter()
                .map(|f| Reply::Simple((*f).to_owned()))
                .collect(),
        ),
        Reply::Int(spec.first_key),
        Reply::Int(spec.last_key),
        Reply::Int(spec.step),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
    ])
}

/// `COMMAND [COUNT | LIST | INFO name... | DOCS [name...]]`.
fn command_cmd(_conn: &Connection, args: &[Vec<u8>]) -> Reply {
    let Some(sub) = args.get(1).map(|s| lower(s)) else {
        return Reply::Array(COMMANDS.iter().map(command_entry).collect());
    };
    let named = || args[2..].iter().map(|n| lookup(&lower(n)));
    match sub.as_str() {
        "count" => Reply::Int(COMMANDS.len() as i64),
        "list" => Reply::Array(COMMANDS.iter().map(|s| bulk(s.name)).collect()),
        "info" if args.len() == 2 => Reply::Array(COMMANDS.iter().map(command_entry).collect()),
        "info" => Reply::Array(
            named()
                .map(|s| s.map_or(Reply::Nil, command_entry))
                .collect(),
        ),
        "docs" => {
            let specs: Vec<&Spec> = if args.len() == 2 {
                COMMANDS.iter().collect()
            } else {
                named().flatten().collect()
            };
            Reply::Map(
                specs
                    .into_iter()
                    .map(|s| {
                        let doc = Reply::Map(vec![(bulk("summary"), bulk(""))]);
                        (bulk(s.name), doc)
                    })
                    .collect(),
            )
        }
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try COMMAND HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

/// `DEBUG PANIC` (a panicking command: the client gets an error and its connection
/// closes, the server carries on) and `DEBUG SLEEP seconds`, when enabled.
fn debug(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    if !conn.shared.config.enable_debug_command {
        return err(
            "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", \
             you can run it from a local connection, otherwise you need to set this option in the \
             configuration file, and then restart the server.",
        );
    }
    match (lower(&args[1]).as_str(), args.len()) {
        ("panic", 2) => panic!("DEBUG PANIC"),
        ("sleep", 3) => match std::str::from_utf8(&args[2])
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
        {
            Some(secs) if (0.0..=60.0).contains(&secs) => {
                std::thread::sleep(std::time::Duration::from_secs_f64(secs));
                Reply::ok()
            }
            _ => err("ERR DEBUG SLEEP takes seconds from 0 to 60"),
        },
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

fn module(args: &[Vec<u8>]) -> Reply {
    match lower(&args[1]).as_str() {
        "list" => Reply::Array(vec![bloom_module()]),
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try MODULE HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

/// `INFO [section ...]`: server, clients, stats, keyspace and rocksketch's own section.
fn info(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    let wanted: Vec<String> = args[1..].iter().map(|a| lower(a)).collect();
    let all = wanted.is_empty()
        || wanted
            .iter()
            .any(|w| matches!(w.as_str(), "all" | "default" | "everything"));
    let want = |section: &str| all || wanted.iter().any(|w| w == section);
    let shared = &conn.shared;
    let mut text = String::new();
    if want("server") {
        let _ = write!(
            text,
            "# Server\r\nredis_version:{REDIS_VERSION}\r\nredis_mode:standalone\r\n\
             rocksketch_version:{}\r\nos:{}\r\narch_bits:{}\r\nprocess_id:{}\r\n\
             tcp_port:{}\r\nuptime_in_seconds:{}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            usize::BITS,
            std::process::id(),
            shared.addr.port(),
            shared.started.elapsed().as_secs(),
        );
    }
    if want("clients") {
        let _ = write!(
            text,
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\n\r\n",
            shared.clients.lock().len(),
            shared.config.max_clients
        );
    }
    if want("stats") {
        let stats = &shared.stats;
        let (hits, misses, cached) = shared.store.page_cache_stats();
        let _ = write!(
            text,
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
             rejected_connections:{}\r\npage_cache_hits:{hits}\r\n\
             page_cache_misses:{misses}\r\npage_cache_bytes:{cached}\r\n\r\n",
            stats.connections.load(Ordering::Relaxed),
            stats.commands.load(Ordering::Relaxed),
            stats.rejected.load(Ordering::Relaxed),
        );
    }
    if want("replication") {
        text.push_str("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n");
    }
    if want("cluster") {
        text.push_str("# Cluster\r\ncluster_enabled:0\r\n\r\n");
    }
    if want("keyspace") {
        text.push_str("# Keyspace\r\n");
        for db in 0..shared.config.databases {
            if let Ok((keys, expires)) = shared.store.ns(db).counts() {
                if keys > 0 {
                    let _ = write!(text, "db{db}:keys={keys},expires={expires},avg_ttl=0\r\n");
                }
            }
        }
        text.push_str("\r\n");
    }
    if want("rocksketch") {
        text.push_str("# Rocksketch\r\n");
        let store = &shared.store;
        for (field, property) in [
            ("pages_estimated_keys", "rocksdb.estimate-num-keys"),
            ("pages_live_data_bytes", "rocksdb.estimate-live-data-size"),
            ("pages_sst_bytes", "rocksdb.total-sst-files-size"),
            ("pages_memtable_bytes", "rocksdb.cur-size-all-mem-tables"),
            ("pages_block_cache_bytes", "rocksdb.block-cache-usage"),
            ("running_compactions", "rocksdb.num-running-compactions"),
            (
                "pending_compaction_bytes",
                "rocksdb.estimate-pending-compaction-bytes",
            ),
        ] {
            if let Ok(Some(value)) = store.pages_property(property) {
                let _ = write!(text, "{field}:{value}\r\n");
            }
        }
        let _ = write!(
            text,
            "skipped_operands:{}\r\n\r\n",
            store.skipped_operands()
        );
    }
    // Redis ends the text without the last blank line.
    let text = text.trim_end_matches("\r\n").to_owned() + "\r\n";
    bulk(text)
}
