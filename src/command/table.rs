//! The one table of every command: name, arity, flags and key positions (what `COMMAND`
//! reports), the handler, and for the commands whose pipelined neighbours on one key
//! run as one engine call, the batch that runs them. Dispatch, `COMMAND`, `MULTI`'s
//! checks, `INFO commandstats` and batching all read it; nothing else knows a
//! command's arity.

use super::args::Args;
use super::batch::Run;
use super::{bloom, cms, cuckoo, ribbon, tdigest, topk, Reply};
use crate::error::Result;
use crate::fast::FastMap;
use crate::server::commands::host;
use crate::server::Connection;
use crate::store::Namespace;
use std::sync::LazyLock;

/// A RedisBloom command over a namespace.
pub(crate) type SketchFn = fn(&Namespace, &mut Args) -> Result<Reply>;

/// A command of the host's own, over a connection: its reply, or its error reply.
pub(crate) type HostFn = fn(&mut Connection, &mut Args) -> std::result::Result<Reply, Reply>;

/// Runs a run of requests of one batchable command on one key (see [`batch`]).
pub(crate) type BatchFn = fn(&Namespace, Run) -> Vec<Reply>;

/// What runs a command.
#[derive(Clone, Copy)]
pub(crate) enum Handler {
    /// A RedisBloom command: the library's and the host's.
    Sketch(SketchFn),
    /// One of the host's commands (connection, keyspace, server).
    Host(HostFn),
    /// `QUIT`: reply, then close the connection.
    Quit,
    /// `SHUTDOWN`: close the connection and stop the server.
    Shutdown,
    /// `MULTI`, `EXEC`, `DISCARD`: the connection's transaction protocol.
    Transaction,
}

const TRANSACTION: Handler = Handler::Transaction;

/// A command's row, with Redis's arity convention: `n` exactly n arguments (the name
/// included), `-n` at least n.
pub(crate) struct Spec {
    pub(crate) name: &'static str,
    pub(crate) arity: i64,
    pub(crate) flags: &'static [&'static str],
    /// First key, last key (-1: the last argument) and step; 0s for none.
    pub(crate) keys: (i64, i64, i64),
    pub(crate) handler: Handler,
    pub(crate) batch: Option<BatchFn>,
}

impl Spec {
    /// Whether `argc` arguments (the name included) fit this command's arity.
    pub(crate) fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i64;
        match self.arity >= 0 {
            true => argc == self.arity,
            false => argc >= -self.arity,
        }
    }

    /// Whether the command reads a key without writing it (Redis counts its lookups as
    /// keyspace hits and misses).
    pub(crate) fn is_key_read(&self) -> bool {
        self.keys.0 > 0 && self.flags.contains(&"readonly")
    }

    /// The keys `request` names, by the row's key positions.
    pub(crate) fn keys_of<'r>(&self, request: &'r [Vec<u8>]) -> impl Iterator<Item = &'r [u8]> {
        let (first, last, step) = self.keys;
        let len = request.len() as i64;
        let last = if last < 0 {
            len + last
        } else {
            last.min(len - 1)
        };
        // No keys (first 0), or none in this request: an empty range.
        let (from, to) = if first > 0 && step > 0 {
            (first, last)
        } else {
            (1, 0)
        };
        (from.max(1)..=to)
            .step_by(step.max(1) as usize)
            .map(move |at| request[at as usize].as_slice())
    }

    /// Pipelined neighbours of this command on one key run as one batch.
    const fn batched(self, batch: BatchFn) -> Spec {
        Spec {
            batch: Some(batch),
            ..self
        }
    }
}

/// A RedisBloom command: its key is its first argument.
const fn sketch(name: &'static str, arity: i64, flags: Flags, run: SketchFn) -> Spec {
    spec(name, arity, flags, KEY1, Handler::Sketch(run))
}

const fn host(name: &'static str, arity: i64, flags: Flags, keys: Keys, run: HostFn) -> Spec {
    spec(name, arity, flags, keys, Handler::Host(run))
}

const fn spec(name: &'static str, arity: i64, flags: Flags, keys: Keys, h: Handler) -> Spec {
    Spec {
        name,
        arity,
        flags,
        keys,
        handler: h,
        batch: None,
    }
}

type Flags = &'static [&'static str];
type Keys = (i64, i64, i64);

const READ: Flags = &["readonly", "fast"];
const WRITE: Flags = &["write", "denyoom"];
const CONN: Flags = &["fast", "no-auth", "loading", "stale"];
const ADMIN: Flags = &["admin", "noscript"];
const NONE: Keys = (0, 0, 0);
const KEY1: Keys = (1, 1, 1);
const ALL_KEYS: Keys = (1, -1, 1);

/// Every command the engine and the host answer.
pub(crate) static COMMANDS: &[Spec] = &[
    host("ping", -1, &["fast"], NONE, host::ping),
    host("echo", 2, &["fast"], NONE, host::echo),
    host("hello", -1, CONN, NONE, host::hello),
    host("auth", -2, CONN, NONE, host::auth),
    host(
        "client",
        -2,
        &["noscript", "loading", "stale"],
        NONE,
        host::client,
    ),
    host(
        "select",
        2,
        &["loading", "stale", "fast"],
        NONE,
        host::select,
    ),
    spec("quit", -1, CONN, NONE, Handler::Quit),
    host("reset", 1, CONN, NONE, host::reset),
    host(
        "watch",
        -2,
        &["noscript", "loading", "stale", "fast"],
        ALL_KEYS,
        host::watch,
    ),
    host(
        "unwatch",
        1,
        &["noscript", "loading", "stale", "fast"],
        NONE,
        host::unwatch,
    ),
    host("info", -1, &["loading", "stale"], NONE, host::info),
    host("dbsize", 1, &["readonly", "fast"], NONE, host::dbsize),
    host("del", -2, &["write"], ALL_KEYS, host::del),
    host("unlink", -2, &["write", "fast"], ALL_KEYS, host::del),
    host("exists", -2, READ, ALL_KEYS, host::exists),
    host("type", 2, READ, KEY1, host::key_type),
    host("keys", 2, &["readonly"], NONE, host::keys),
    host("scan", -2, &["readonly"], NONE, host::scan),
    host("expire", -3, &["write", "fast"], KEY1, host::expire),
    host("pexpire", -3, &["write", "fast"], KEY1, host::expire),
    host("expireat", -3, &["write", "fast"], KEY1, host::expire),
    host("pexpireat", -3, &["write", "fast"], KEY1, host::expire),
    host("ttl", 2, READ, KEY1, host::ttl),
    host("pttl", 2, READ, KEY1, host::ttl),
    host("expiretime", 2, READ, KEY1, host::ttl),
    host("pexpiretime", 2, READ, KEY1, host::ttl),
    host("persist", 2, &["write", "fast"], KEY1, host::persist),
    host("flushdb", -1, &["write"], NONE, host::flush),
    host("flushall", -1, &["write"], NONE, host::flush),
    host("command", -1, &["loading", "stale"], NONE, host::command),
    host("module", -2, ADMIN, NONE, host::module),
    spec("shutdown", -1, ADMIN, NONE, Handler::Shutdown),
    host("debug", -2, ADMIN, NONE, host::debug),
    host("save", 1, ADMIN, NONE, host::save),
    host("bgsave", -1, ADMIN, NONE, host::bgsave),
    host(
        "lastsave",
        1,
        &["fast", "loading", "stale"],
        NONE,
        host::lastsave,
    ),
    host(
        "config",
        -2,
        &["admin", "noscript", "loading", "stale"],
        NONE,
        host::config,
    ),
    host(
        "slowlog",
        -2,
        &["admin", "loading", "stale"],
        NONE,
        host::slowlog,
    ),
    spec(
        "multi",
        1,
        &["noscript", "loading", "stale", "fast"],
        NONE,
        TRANSACTION,
    ),
    spec(
        "exec",
        1,
        &["noscript", "loading", "stale"],
        NONE,
        TRANSACTION,
    ),
    spec(
        "discard",
        1,
        &["noscript", "loading", "stale", "fast"],
        NONE,
        TRANSACTION,
    ),
    sketch("cms.initbydim", 4, WRITE, cms::init_by_dim),
    sketch("cms.initbyprob", 4, WRITE, cms::init_by_prob),
    sketch("cms.incrby", -4, WRITE, cms::incr_by).batched(cms::incr_by_run),
    sketch("cms.query", -3, READ, cms::query).batched(cms::query_run),
    sketch("cms.merge", -4, WRITE, cms::merge),
    sketch("cms.info", 2, READ, cms::info),
    sketch("cf.reserve", -3, WRITE, cuckoo::reserve),
    sketch("cf.add", 3, WRITE, cuckoo::add).batched(cuckoo::add_run),
    sketch("cf.addnx", 3, WRITE, cuckoo::add_nx).batched(cuckoo::add_nx_run),
    sketch("cf.insert", -3, WRITE, cuckoo::insert),
    sketch("cf.insertnx", -4, WRITE, cuckoo::insert_nx),
    sketch("cf.exists", 3, READ, cuckoo::exists).batched(cuckoo::exists_run),
    sketch("cf.mexists", -3, READ, cuckoo::mexists),
    sketch("cf.count", 3, READ, cuckoo::count),
    sketch("cf.del", 3, WRITE, cuckoo::del),
    sketch("cf.delete", 3, WRITE, cuckoo::del),
    sketch("cf.info", 2, READ, cuckoo::info),
    sketch("cf.stats", 2, READ, cuckoo::info),
    sketch("cf.scandump", 3, READ, cuckoo::scandump),
    sketch("cf.loadchunk", 4, WRITE, cuckoo::loadchunk),
    sketch("bf.reserve", -4, WRITE, bloom::reserve),
    sketch("bf.add", 3, WRITE, bloom::add).batched(bloom::add_run),
    sketch("bf.madd", -3, WRITE, bloom::madd),
    sketch("bf.insert", -4, WRITE, bloom::insert),
    sketch("bf.exists", 3, READ, bloom::exists).batched(bloom::exists_run),
    sketch("bf.mexists", -3, READ, bloom::mexists),
    sketch("bf.info", -2, READ, bloom::info),
    sketch("bf.card", 2, READ, bloom::card),
    sketch("bf.scandump", 3, READ, bloom::scandump),
    sketch("bf.loadchunk", 4, WRITE, bloom::loadchunk),
    sketch("bf.debug", 2, READ, bloom::debug),
    sketch("cf.debug", 2, READ, cuckoo::debug),
    sketch("tdigest.create", -2, WRITE, tdigest::create),
    sketch("tdigest.add", -3, WRITE, tdigest::add).batched(tdigest::add_run),
    sketch("tdigest.reset", 2, WRITE, tdigest::reset),
    sketch("tdigest.merge", -4, WRITE, tdigest::merge),
    sketch("tdigest.min", 2, READ, tdigest::min),
    sketch("tdigest.max", 2, READ, tdigest::max),
    sketch("tdigest.quantile", -3, READ, tdigest::quantile),
    sketch("tdigest.cdf", -3, READ, tdigest::cdf),
    sketch("tdigest.rank", -3, READ, tdigest::rank),
    sketch("tdigest.revrank", -3, READ, tdigest::rank),
    sketch("tdigest.byrank", -3, READ, tdigest::by_rank),
    sketch("tdigest.byrevrank", -3, READ, tdigest::by_rank),
    sketch("tdigest.trimmed_mean", 4, READ, tdigest::trimmed_mean),
    sketch("tdigest.info", 2, READ, tdigest::info),
    sketch("topk.reserve", -3, WRITE, topk::reserve),
    sketch("topk.add", -3, WRITE, topk::add).batched(topk::add_run),
    sketch("topk.incrby", -4, WRITE, topk::add).batched(topk::add_run),
    sketch("topk.query", -3, READ, topk::query),
    sketch("topk.count", -3, READ, topk::count),
    sketch("topk.list", -2, READ, topk::list),
    sketch("topk.info", 2, READ, topk::info),
    sketch("ribbon.reserve", 3, WRITE, ribbon::reserve),
    sketch("ribbon.add", -3, WRITE, ribbon::add).batched(ribbon::add_run),
    sketch("ribbon.build", 2, WRITE, ribbon::build),
    sketch("ribbon.exists", 3, READ, ribbon::exists).batched(ribbon::exists_run),
    sketch("ribbon.mexists", -3, READ, ribbon::mexists),
    sketch("ribbon.info", -2, READ, ribbon::info),
    sketch("ribbon.scandump", 3, READ, ribbon::scandump),
    sketch("ribbon.loadchunk", 4, WRITE, ribbon::loadchunk),
];

/// The position of a command (by its lower-case name) in the table.
fn index_of(name: &str) -> Option<usize> {
    static INDEX: LazyLock<FastMap<&'static str, usize>> = LazyLock::new(|| {
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
    index_of(std::str::from_utf8(lower).ok()?)
}

/// The row of the command a request names, in any case.
pub(crate) fn lookup(name: &[u8]) -> Option<&'static Spec> {
    request_index(name).map(|i| &COMMANDS[i])
}

/// The batch a request may join: its command and its key. `None` for a command that
/// does not batch, or whose arity alone makes it an error.
pub(crate) fn batch_key(request: &[Vec<u8>]) -> Option<(&'static Spec, &[u8])> {
    let spec = lookup(request.first()?)?;
    let key = request.get(1)?;
    (spec.batch.is_some() && spec.arity_ok(request.len())).then_some((spec, key.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_lower_case_and_found_in_any_case() {
        for (i, spec) in COMMANDS.iter().enumerate() {
            assert_eq!(spec.name, spec.name.to_ascii_lowercase());
            assert_eq!(request_index(spec.name.to_uppercase().as_bytes()), Some(i));
        }
        assert!(lookup(b"no.such").is_none());
        assert!(lookup(&[b'a'; 40]).is_none());
    }

    #[test]
    fn batches_join_only_commands_of_a_valid_arity() {
        let req = |words: &[&str]| -> Vec<Vec<u8>> {
            words.iter().map(|w| w.as_bytes().to_vec()).collect()
        };
        let add = req(&["BF.ADD", "k", "x"]);
        assert_eq!(
            batch_key(&add).map(|(s, k)| (s.name, k)),
            Some(("bf.add", &b"k"[..]))
        );
        assert!(batch_key(&req(&["BF.ADD", "k"])).is_none());
        assert!(batch_key(&req(&["BF.ADD", "k", "x", "y"])).is_none());
        assert!(batch_key(&req(&["BF.MADD", "k", "x"])).is_none());
        assert!(batch_key(&req(&["CMS.INCRBY", "k", "x", "1"])).is_some());
    }
}
