//! The host's command table: its own commands (connection, keyspace, server,
//! transactions) followed by the engine's ([`rocksketch::command::table::SKETCHES`]),
//! in one [`Table`]. Dispatch, `COMMAND`, `MULTI`'s checks, `INFO commandstats` and
//! `WATCH` read this one view; nothing else knows a command's arity.

use crate::cluster::commands as cluster;
use crate::commands::host;
use crate::conn::Connection;
use rocksketch::command::args::Args;
use rocksketch::command::table::{SketchFn, Spec as Row, Table, SKETCHES};
use rocksketch::command::Reply;
use std::sync::LazyLock;

/// A command of the host's own, over a connection: its reply, or its error reply.
pub(crate) type HostFn = fn(&mut Connection, &mut Args) -> std::result::Result<Reply, Reply>;

/// What runs a command.
#[derive(Clone, Copy)]
pub(crate) enum Handler {
    /// One of the engine's commands (RedisBloom's and Ribbon's).
    Sketch(SketchFn),
    /// One of the host's commands (connection, keyspace, server).
    Host(HostFn),
    /// `QUIT`: reply, then close the connection.
    Quit,
    /// `SHUTDOWN`: close the connection and stop the server.
    Shutdown,
    /// `MULTI`, `EXEC`, `DISCARD`: the connection's transaction protocol.
    Transaction,
    /// `WAIT`: parks the client until replicas acknowledge.
    Wait,
    /// `PSYNC`, `SYNC`: the connection becomes a replica's feed.
    Psync,
}

/// A row of the host's table.
pub(crate) type Spec = Row<Handler>;

const TRANSACTION: Handler = Handler::Transaction;

const fn host(name: &'static str, arity: i64, flags: Flags, keys: Keys, run: HostFn) -> Spec {
    Spec::new(name, arity, flags, keys, Handler::Host(run))
}

const fn spec(name: &'static str, arity: i64, flags: Flags, keys: Keys, h: Handler) -> Spec {
    Spec::new(name, arity, flags, keys, h)
}

type Flags = &'static [&'static str];
type Keys = (i64, i64, i64);

const CONN: Flags = &[
    "noscript",
    "loading",
    "stale",
    "fast",
    "no_auth",
    "allow_busy",
];
const NONE: Keys = (0, 0, 0);
const KEY1: Keys = (1, 1, 1);
const ALL_KEYS: Keys = (1, -1, 1);

/// Every command the host answers: its own, then the engine's.
pub(crate) static COMMANDS: LazyLock<Table<Handler>> = LazyLock::new(|| {
    let engine = SKETCHES.rows().iter();
    let engine = engine.map(|row| row.with_handler(Handler::Sketch(row.handler)));
    Table::new(HOST_ROWS.iter().copied().chain(engine))
});

/// The row of the command a request names, in any case.
pub(crate) fn lookup(name: &[u8]) -> Option<&'static Spec> {
    COMMANDS.lookup(name)
}

/// The position of the command a request names in [`COMMANDS`], in any case.
pub(crate) fn request_index(name: &[u8]) -> Option<usize> {
    COMMANDS.request_index(name)
}

const HOST_ROWS: &[Spec] = &[
    host("ping", -1, &["fast"], NONE, host::ping),
    host("echo", 2, &["loading", "stale", "fast"], NONE, host::echo),
    host("hello", -1, CONN, NONE, host::hello),
    host("auth", -2, CONN, NONE, host::auth),
    host("client", -2, &[], NONE, host::client),
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
        &["noscript", "loading", "stale", "fast", "allow_busy"],
        ALL_KEYS,
        host::watch,
    ),
    host(
        "unwatch",
        1,
        &["noscript", "loading", "stale", "fast", "allow_busy"],
        NONE,
        host::unwatch,
    ),
    host("info", -1, &["loading", "stale"], NONE, host::info),
    host("dbsize", 1, &["readonly", "fast"], NONE, host::dbsize),
    host("del", -2, &["write"], ALL_KEYS, host::del),
    host("unlink", -2, &["write", "fast"], ALL_KEYS, host::del),
    host("exists", -2, &["readonly", "fast"], ALL_KEYS, host::exists),
    // How many of the keys exist, as `EXISTS` counts them: no key keeps an access time
    // here for `TOUCH` to refresh.
    host("touch", -2, &["readonly", "fast"], ALL_KEYS, host::exists),
    host("type", 2, &["readonly", "fast"], KEY1, host::key_type),
    host("keys", 2, &["readonly"], NONE, host::keys),
    host("scan", -2, &["readonly"], NONE, host::scan),
    host("expire", -3, &["write", "fast"], KEY1, host::expire),
    host("pexpire", -3, &["write", "fast"], KEY1, host::expire),
    host("expireat", -3, &["write", "fast"], KEY1, host::expire),
    host("pexpireat", -3, &["write", "fast"], KEY1, host::expire),
    host("ttl", 2, &["readonly", "fast"], KEY1, host::ttl),
    host("pttl", 2, &["readonly", "fast"], KEY1, host::ttl),
    host("expiretime", 2, &["readonly", "fast"], KEY1, host::ttl),
    host("pexpiretime", 2, &["readonly", "fast"], KEY1, host::ttl),
    host("persist", 2, &["write", "fast"], KEY1, host::persist),
    host("flushdb", -1, &["write"], NONE, host::flush),
    host("flushall", -1, &["write"], NONE, host::flush),
    host("command", -1, &["loading", "stale"], NONE, host::command),
    host("module", -2, &[], NONE, host::module),
    spec(
        "shutdown",
        -1,
        &[
            "admin",
            "noscript",
            "loading",
            "stale",
            "no_multi",
            "allow_busy",
        ],
        NONE,
        Handler::Shutdown,
    ),
    host(
        "debug",
        -2,
        &["admin", "noscript", "loading", "stale"],
        NONE,
        host::debug,
    ),
    host(
        "save",
        1,
        &["admin", "noscript", "no_async_loading", "no_multi"],
        NONE,
        host::save,
    ),
    host(
        "bgsave",
        -1,
        &["admin", "noscript", "no_async_loading"],
        NONE,
        host::bgsave,
    ),
    host(
        "lastsave",
        1,
        &["loading", "stale", "fast"],
        NONE,
        host::lastsave,
    ),
    host("time", 1, &["loading", "stale", "fast"], NONE, host::time),
    host("config", -2, &[], NONE, host::config),
    host("slowlog", -2, &[], NONE, host::slowlog),
    host(
        "replicaof",
        3,
        &["admin", "noscript", "stale", "no_async_loading"],
        NONE,
        host::replicaof,
    ),
    host(
        "slaveof",
        3,
        &["admin", "noscript", "stale", "no_async_loading"],
        NONE,
        host::replicaof,
    ),
    host(
        "role",
        1,
        &["noscript", "loading", "stale", "fast"],
        NONE,
        host::role,
    ),
    spec("wait", 3, &["noscript"], NONE, Handler::Wait),
    host("cluster", -2, &[], NONE, cluster::cluster),
    host("clusterx", -2, &["admin", "stale"], NONE, cluster::clusterx),
    host(
        "readonly",
        1,
        &["loading", "stale", "fast"],
        NONE,
        cluster::readonly,
    ),
    host(
        "readwrite",
        1,
        &["loading", "stale", "fast"],
        NONE,
        cluster::readonly,
    ),
    host("asking", 1, &["fast"], NONE, cluster::asking),
    host(
        "replconf",
        -1,
        &["admin", "noscript", "loading", "stale", "allow_busy"],
        NONE,
        host::replconf,
    ),
    spec(
        "psync",
        -3,
        &["admin", "noscript", "no_async_loading", "no_multi"],
        NONE,
        Handler::Psync,
    ),
    spec(
        "sync",
        1,
        &["admin", "noscript", "no_async_loading", "no_multi"],
        NONE,
        Handler::Psync,
    ),
    spec(
        "multi",
        1,
        &["noscript", "loading", "stale", "fast", "allow_busy"],
        NONE,
        TRANSACTION,
    ),
    spec(
        "exec",
        1,
        &["noscript", "loading", "stale", "skip_slowlog"],
        NONE,
        TRANSACTION,
    ),
    spec(
        "discard",
        1,
        &["noscript", "loading", "stale", "fast", "allow_busy"],
        NONE,
        TRANSACTION,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_lower_case_and_found_in_any_case() {
        let rows = COMMANDS.rows();
        for (i, spec) in rows.iter().enumerate() {
            assert_eq!(spec.name, spec.name.to_ascii_lowercase());
            assert_eq!(request_index(spec.name.to_uppercase().as_bytes()), Some(i));
        }
        let names: std::collections::HashSet<_> = rows.iter().map(|s| s.name).collect();
        assert_eq!(
            names.len(),
            rows.len(),
            "a host command shadows an engine one"
        );
        assert_eq!(rows.len(), HOST_ROWS.len() + SKETCHES.rows().len());
        assert!(matches!(
            lookup(b"BF.ADD").map(|s| s.handler),
            Some(Handler::Sketch(_))
        ));
        assert!(matches!(
            lookup(b"ping").map(|s| s.handler),
            Some(Handler::Host(_))
        ));
    }
}
