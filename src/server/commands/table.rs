//! The table of every command the host answers (name, arity, flags, key positions),
//! what `COMMAND` reports and what dispatch checks arity against.

use super::*;
use std::collections::HashMap;
use std::sync::LazyLock;

/// A command's entry in the table `COMMAND` reports, with Redis's arity convention:
/// `n` exactly n arguments (the name included), `-n` at least n.
pub(super) struct Spec {
    pub(super) name: &'static str,
    pub(super) arity: i64,
    pub(super) flags: &'static [&'static str],
    pub(super) first_key: i64,
    pub(super) last_key: i64,
    pub(super) step: i64,
}

pub(super) const fn spec(
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

pub(super) const READ: &[&str] = &["readonly", "fast"];

pub(super) const WRITE: &[&str] = &["write", "denyoom"];

pub(super) const CONN: &[&str] = &["fast", "no-auth", "loading", "stale"];

pub(super) const ADMIN: &[&str] = &["admin", "noscript"];

pub(super) const NONE: (i64, i64, i64) = (0, 0, 0);

pub(super) const KEY1: (i64, i64, i64) = (1, 1, 1);

/// Every command the host answers.
pub(super) const COMMANDS: &[Spec] = &[
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
    spec("save", 1, ADMIN, NONE),
    spec("bgsave", -1, ADMIN, NONE),
    spec("lastsave", 1, &["fast", "loading", "stale"], NONE),
    spec(
        "config",
        -2,
        &["admin", "noscript", "loading", "stale"],
        NONE,
    ),
    spec("slowlog", -2, &["admin", "loading", "stale"], NONE),
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
    spec("ribbon.reserve", 3, WRITE, KEY1),
    spec("ribbon.add", -3, WRITE, KEY1),
    spec("ribbon.build", 2, WRITE, KEY1),
    spec("ribbon.exists", 3, READ, KEY1),
    spec("ribbon.mexists", -3, READ, KEY1),
    spec("ribbon.info", -2, READ, KEY1),
    spec("ribbon.scandump", 3, READ, KEY1),
    spec("ribbon.loadchunk", 4, WRITE, KEY1),
];

pub(super) fn lookup(name: &str) -> Option<&'static Spec> {
    command_index(name).map(|i| &COMMANDS[i])
}

/// The position of a command (by its lower-case name) in the table.
pub(crate) fn command_index(name: &str) -> Option<usize> {
    static INDEX: LazyLock<HashMap<&'static str, usize>> = LazyLock::new(|| {
        COMMANDS
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name, i))
            .collect()
    });
    INDEX.get(name).copied()
}

/// The position of the command a request names, in any case, without allocating.
pub(crate) fn request_index(name: &[u8]) -> Option<usize> {
    let mut lower = [0u8; 32];
    let lower = lower.get_mut(..name.len())?;
    for (l, c) in lower.iter_mut().zip(name) {
        *l = c.to_ascii_lowercase();
    }
    command_index(std::str::from_utf8(lower).ok()?)
}

/// Whether command `index` reads a key without writing it (Redis counts its lookups as
/// keyspace hits and misses).
pub(crate) fn is_key_read(index: usize) -> bool {
    COMMANDS
        .get(index)
        .is_some_and(|s| s.first_key > 0 && s.flags.contains(&"readonly"))
}

/// Every command's name, in the table's order.
pub(crate) fn command_names() -> impl Iterator<Item = &'static str> {
    COMMANDS.iter().map(|s| s.name)
}

pub(super) fn arity_ok(arity: i64, argc: usize) -> bool {
    let argc = argc as i64;
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

pub(super) fn command_entry(spec: &Spec) -> Reply {
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
pub(super) fn command_cmd(_conn: &Connection, args: &[Vec<u8>]) -> Reply {
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
