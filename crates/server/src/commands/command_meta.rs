//! What Redis 7's `COMMAND` reports of a command beyond its arity, flags and key
//! positions: its ACL categories, its tips (the request and response policies by which
//! cluster clients send a keyless command to every node and combine the replies, as
//! go-redis and node-redis do), its key specifications, and the subcommands of the
//! container commands. Redis 7.0's own values for its commands (checked against
//! `redis-server` by `tests/command_info_vs_redis.rs`); for the engine's commands, key
//! specifications that say what each does to its key, and a merge's sources as a
//! second one.

use crate::table::Spec;
use rocksketch::command::Reply;

type Words = &'static [&'static str];

/// Where a key specification's keys are: the first at `begin`, then as `find` says.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeySpec {
    /// Redis's note on the flags, or "".
    pub notes: &'static str,
    /// `RO`, `RW`, `OW`, `RM` and what the command does to the keys.
    pub flags: Words,
    /// The argument the keys begin at.
    pub begin: i64,
    /// How the keys go on from there.
    pub find: Find,
}

/// How a key specification's keys go on from its first.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Find {
    /// Up to `last` (-1: the last argument; 0: the first alone), every `step`.
    Range { last: i64, step: i64 },
    /// As many as the argument at `index` (counted from the first) says, beginning
    /// `first` arguments on, every `step`.
    Keynum { index: i64, first: i64, step: i64 },
}

/// A subcommand of a container command (`CLIENT LIST` is `client|list`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sub {
    pub name: &'static str,
    pub arity: i64,
    pub flags: Words,
    pub acl: Words,
    pub tips: Words,
}

/// A command's ACL categories, tips and key specifications.
pub(crate) struct Meta {
    pub acl: Words,
    pub tips: Words,
    pub specs: &'static [KeySpec],
}

const fn range(flags: Words, begin: i64, last: i64) -> KeySpec {
    KeySpec {
        notes: "",
        flags,
        begin,
        find: Find::Range { last, step: 1 },
    }
}

/// An engine command that reads its key.
const READS: &[KeySpec] = &[range(&["RO", "access"], 1, 0)];
/// An engine command that writes its key (and answers from it, as `BF.ADD` does).
const WRITES: &[KeySpec] = &[range(&["RW", "access", "update"], 1, 0)];
/// `CMS.MERGE dest numkeys src...` and `TDIGEST.MERGE`: the destination, then the
/// sources that the count after it numbers (RedisBloom declares the destination
/// alone, so a client finds the sources only through `COMMAND GETKEYS`).
const MERGES: &[KeySpec] = &[
    range(&["RW", "access", "update"], 1, 0),
    KeySpec {
        notes: "",
        flags: &["RO", "access"],
        begin: 2,
        find: Find::Keynum {
            index: 0,
            first: 1,
            step: 1,
        },
    },
];

/// The metadata `COMMAND` reports for a command of the table.
pub(crate) fn meta(spec: &Spec) -> Meta {
    let (acl, tips, specs): (Words, Words, &'static [KeySpec]) = match spec.name {
        "asking" => (&["@fast", "@connection"], &[], &[]),
        "auth" => (&["@fast", "@connection"], &[], &[]),
        "bgsave" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        "client" => (&["@slow"], &[], &[]),
        "cluster" => (&["@slow"], &[], &[]),
        "command" => (
            &["@slow", "@connection"],
            &["nondeterministic_output_order"],
            &[],
        ),
        "config" => (&["@slow"], &[], &[]),
        "dbsize" => (
            &["@keyspace", "@read", "@fast"],
            &["request_policy:all_shards", "response_policy:agg_sum"],
            &[],
        ),
        "debug" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        "del" => (
            &["@keyspace", "@write", "@slow"],
            &["request_policy:multi_shard", "response_policy:agg_sum"],
            const { &[range(&["RM", "delete"], 1, -1)] },
        ),
        "discard" => (&["@fast", "@transaction"], &[], &[]),
        "echo" => (&["@fast", "@connection"], &[], &[]),
        "exec" => (&["@slow", "@transaction"], &[], &[]),
        "exists" => (
            &["@keyspace", "@read", "@fast"],
            &["request_policy:multi_shard", "response_policy:agg_sum"],
            const { &[range(&["RO"], 1, -1)] },
        ),
        "expire" => (
            &["@keyspace", "@write", "@fast"],
            &[],
            const { &[range(&["RW", "update"], 1, 0)] },
        ),
        "expireat" => (
            &["@keyspace", "@write", "@fast"],
            &[],
            const { &[range(&["RW", "update"], 1, 0)] },
        ),
        "expiretime" => (
            &["@keyspace", "@read", "@fast"],
            &[],
            const { &[range(&["RO", "access"], 1, 0)] },
        ),
        "flushall" => (
            &["@keyspace", "@write", "@slow", "@dangerous"],
            &["request_policy:all_shards", "response_policy:all_succeeded"],
            &[],
        ),
        "flushdb" => (
            &["@keyspace", "@write", "@slow", "@dangerous"],
            &["request_policy:all_shards", "response_policy:all_succeeded"],
            &[],
        ),
        "get" => (
            &["@read", "@string", "@fast"],
            &[],
            const { &[range(&["RO", "access"], 1, 0)] },
        ),
        "hello" => (&["@fast", "@connection"], &[], &[]),
        "info" => (
            &["@slow", "@dangerous"],
            &[
                "nondeterministic_output",
                "request_policy:all_shards",
                "response_policy:special",
            ],
            &[],
        ),
        "keys" => (
            &["@keyspace", "@read", "@slow", "@dangerous"],
            &["request_policy:all_shards", "nondeterministic_output_order"],
            &[],
        ),
        "lastsave" => (
            &["@admin", "@fast", "@dangerous"],
            &["nondeterministic_output"],
            &[],
        ),
        "module" => (&["@slow"], &[], &[]),
        "multi" => (&["@fast", "@transaction"], &[], &[]),
        "persist" => (
            &["@keyspace", "@write", "@fast"],
            &[],
            const { &[range(&["RW", "update"], 1, 0)] },
        ),
        "pexpire" => (
            &["@keyspace", "@write", "@fast"],
            &[],
            const { &[range(&["RW", "update"], 1, 0)] },
        ),
        "pexpireat" => (
            &["@keyspace", "@write", "@fast"],
            &[],
            const { &[range(&["RW", "update"], 1, 0)] },
        ),
        "pexpiretime" => (
            &["@keyspace", "@read", "@fast"],
            &[],
            const { &[range(&["RO", "access"], 1, 0)] },
        ),
        "pfadd" => (
            &["@write", "@hyperloglog", "@fast"],
            &[],
            const { &[range(&["RW", "insert"], 1, 0)] },
        ),
        "pfcount" => (
            &["@read", "@hyperloglog", "@slow"],
            &[],
            const {
                &[KeySpec { notes: "RW because it may change the internal representation of the key, and propagate to replicas", flags: &["RW", "access"], begin: 1, find: Find::Range { last: -1, step: 1 } }]
            },
        ),
        "pfdebug" => (
            &["@write", "@hyperloglog", "@admin", "@slow", "@dangerous"],
            &[],
            const { &[range(&["RW", "access"], 2, 0)] },
        ),
        "pfmerge" => (
            &["@write", "@hyperloglog", "@slow"],
            &[],
            const {
                &[
                    range(&["RW", "access", "insert"], 1, 0),
                    range(&["RO", "access"], 2, -1),
                ]
            },
        ),
        "ping" => (
            &["@fast", "@connection"],
            &["request_policy:all_shards", "response_policy:all_succeeded"],
            &[],
        ),
        "psync" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        "pttl" => (
            &["@keyspace", "@read", "@fast"],
            &["nondeterministic_output"],
            const { &[range(&["RO", "access"], 1, 0)] },
        ),
        "quit" => (&["@fast", "@connection"], &[], &[]),
        "readonly" => (&["@fast", "@connection"], &[], &[]),
        "readwrite" => (&["@fast", "@connection"], &[], &[]),
        "replconf" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        "replicaof" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        "reset" => (&["@fast", "@connection"], &[], &[]),
        "role" => (&["@admin", "@fast", "@dangerous"], &[], &[]),
        "save" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        "scan" => (
            &["@keyspace", "@read", "@slow"],
            &["nondeterministic_output", "request_policy:special"],
            &[],
        ),
        "select" => (&["@fast", "@connection"], &[], &[]),
        "set" => (
            &["@write", "@string", "@slow"],
            &[],
            const {
                &[KeySpec {
                    notes: "RW and ACCESS due to the optional `GET` argument",
                    flags: &["RW", "access", "update", "variable_flags"],
                    begin: 1,
                    find: Find::Range { last: 0, step: 1 },
                }]
            },
        ),
        "shutdown" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        "slaveof" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        "slowlog" => (&["@slow"], &[], &[]),
        "sync" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        "time" => (&["@fast"], &["nondeterministic_output"], &[]),
        "touch" => (
            &["@keyspace", "@read", "@fast"],
            &["request_policy:multi_shard", "response_policy:agg_sum"],
            const { &[range(&["RO"], 1, -1)] },
        ),
        "ttl" => (
            &["@keyspace", "@read", "@fast"],
            &["nondeterministic_output"],
            const { &[range(&["RO", "access"], 1, 0)] },
        ),
        "type" => (
            &["@keyspace", "@read", "@fast"],
            &[],
            const { &[range(&["RO"], 1, 0)] },
        ),
        "unlink" => (
            &["@keyspace", "@write", "@fast"],
            &["request_policy:multi_shard", "response_policy:agg_sum"],
            const { &[range(&["RM", "delete"], 1, -1)] },
        ),
        "unwatch" => (&["@fast", "@transaction"], &[], &[]),
        "wait" => (
            &["@slow", "@connection"],
            &["request_policy:all_shards", "response_policy:agg_min"],
            &[],
        ),
        "watch" => (
            &["@fast", "@transaction"],
            &[],
            const { &[range(&["RO"], 1, -1)] },
        ),
        // Kvrocks' topology command, not Redis's: an administrator's.
        "clusterx" => (&["@admin", "@slow", "@dangerous"], &[], &[]),
        _ if spec.counted_sources => (&[], &[], MERGES),
        _ if spec.keys.0 <= 0 => (&[], &[], &[]),
        _ if spec.flags.contains(&"write") => (&[], &[], WRITES),
        _ => (&[], &[], READS),
    };
    Meta { acl, tips, specs }
}

/// Redis 7's arity error for a known subcommand given the wrong number of arguments
/// (`CONFIG RESETSTAT x`: "wrong number of arguments for 'config|resetstat'"); `None`
/// when it fits, or is not one of [`SUBCOMMANDS`] (the container answers that).
pub(crate) fn sub_arity_error(container: &str, request: &[Vec<u8>]) -> Option<Reply> {
    let word = request.get(1)?;
    let sub = subcommands(container).iter().find(|s| {
        let name = &s.name[container.len() + 1..];
        name.as_bytes().eq_ignore_ascii_case(word)
    })?;
    let n = request.len() as i64;
    let fits = match sub.arity >= 0 {
        true => n == sub.arity,
        false => n >= -sub.arity,
    };
    (!fits).then(|| Reply::wrong_arity(sub.name))
}

const fn sub(name: &'static str, arity: i64, flags: Words, acl: Words, tips: Words) -> Sub {
    Sub {
        name,
        arity,
        flags,
        acl,
        tips,
    }
}

/// The subcommands of a container command that the host answers, by name.
pub(crate) fn subcommands(name: &str) -> &'static [Sub] {
    let prefix = |s: &Sub| s.name.split('|').next() == Some(name);
    let first = SUBCOMMANDS.iter().position(prefix);
    let Some(first) = first else { return &[] };
    let len = SUBCOMMANDS[first..]
        .iter()
        .take_while(|s| prefix(s))
        .count();
    &SUBCOMMANDS[first..first + len]
}

/// Every subcommand the host answers, grouped by container, with Redis 7.0's
/// arity, flags, ACL categories and tips (`NO-TOUCH` and `SETINFO` are Redis 7.2's).
const SUBCOMMANDS: &[Sub] = &[
    sub(
        "client|getname",
        2,
        &["noscript", "loading", "stale"],
        &["@slow", "@connection"],
        &[],
    ),
    sub(
        "client|getredir",
        2,
        &["noscript", "loading", "stale"],
        &["@slow", "@connection"],
        &[],
    ),
    sub(
        "client|id",
        2,
        &["noscript", "loading", "stale"],
        &["@slow", "@connection"],
        &[],
    ),
    sub(
        "client|info",
        2,
        &["noscript", "loading", "stale"],
        &["@slow", "@connection"],
        &["nondeterministic_output"],
    ),
    sub(
        "client|kill",
        -3,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous", "@connection"],
        &[],
    ),
    sub(
        "client|list",
        -2,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous", "@connection"],
        &["nondeterministic_output"],
    ),
    sub(
        "client|no-evict",
        3,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous", "@connection"],
        &[],
    ),
    sub(
        "client|no-touch",
        3,
        &["noscript", "loading", "stale"],
        &["@slow", "@connection"],
        &[],
    ),
    sub(
        "client|pause",
        -3,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous", "@connection"],
        &[],
    ),
    sub(
        "client|reply",
        3,
        &["noscript", "loading", "stale"],
        &["@slow", "@connection"],
        &[],
    ),
    sub(
        "client|setinfo",
        4,
        &["noscript", "loading", "stale", "allow_busy"],
        &["@slow", "@connection"],
        &["request_policy:all_nodes", "response_policy:all_succeeded"],
    ),
    sub(
        "client|setname",
        3,
        &["noscript", "loading", "stale"],
        &["@slow", "@connection"],
        &[],
    ),
    sub(
        "client|trackinginfo",
        2,
        &["noscript", "loading", "stale"],
        &["@slow", "@connection"],
        &[],
    ),
    sub(
        "client|unblock",
        -3,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous", "@connection"],
        &[],
    ),
    sub(
        "client|unpause",
        2,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous", "@connection"],
        &[],
    ),
    sub("cluster|countkeysinslot", 3, &["stale"], &["@slow"], &[]),
    sub(
        "cluster|getkeysinslot",
        4,
        &["stale"],
        &["@slow"],
        &["nondeterministic_output"],
    ),
    sub(
        "cluster|info",
        2,
        &["stale"],
        &["@slow"],
        &["nondeterministic_output"],
    ),
    sub("cluster|keyslot", 3, &["stale"], &["@slow"], &[]),
    sub("cluster|myid", 2, &["stale"], &["@slow"], &[]),
    sub(
        "cluster|nodes",
        2,
        &["stale"],
        &["@slow"],
        &["nondeterministic_output"],
    ),
    sub(
        "cluster|shards",
        2,
        &["stale"],
        &["@slow"],
        &["nondeterministic_output"],
    ),
    sub(
        "cluster|slots",
        2,
        &["stale"],
        &["@slow"],
        &["nondeterministic_output"],
    ),
    sub(
        "command|count",
        2,
        &["loading", "stale"],
        &["@slow", "@connection"],
        &[],
    ),
    sub(
        "command|docs",
        -2,
        &["loading", "stale"],
        &["@slow", "@connection"],
        &["nondeterministic_output_order"],
    ),
    sub(
        "command|getkeys",
        -4,
        &["loading", "stale"],
        &["@slow", "@connection"],
        &[],
    ),
    sub(
        "command|info",
        -2,
        &["loading", "stale"],
        &["@slow", "@connection"],
        &["nondeterministic_output_order"],
    ),
    sub(
        "command|list",
        -2,
        &["loading", "stale"],
        &["@slow", "@connection"],
        &["nondeterministic_output_order"],
    ),
    sub(
        "config|get",
        -3,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous"],
        &[],
    ),
    sub(
        "config|resetstat",
        2,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous"],
        &[],
    ),
    sub(
        "config|rewrite",
        2,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous"],
        &[],
    ),
    sub(
        "config|set",
        -4,
        &["admin", "noscript", "loading", "stale"],
        &["@admin", "@slow", "@dangerous"],
        &["request_policy:all_nodes", "response_policy:all_succeeded"],
    ),
    sub(
        "module|list",
        2,
        &["admin", "noscript"],
        &["@admin", "@slow", "@dangerous"],
        &["nondeterministic_output_order"],
    ),
    sub(
        "slowlog|get",
        -2,
        &["admin", "loading", "stale"],
        &["@admin", "@slow", "@dangerous"],
        &["request_policy:all_nodes", "nondeterministic_output"],
    ),
    sub(
        "slowlog|len",
        2,
        &["admin", "loading", "stale"],
        &["@admin", "@slow", "@dangerous"],
        &[
            "request_policy:all_nodes",
            "response_policy:agg_sum",
            "nondeterministic_output",
        ],
    ),
    sub(
        "slowlog|reset",
        2,
        &["admin", "loading", "stale"],
        &["@admin", "@slow", "@dangerous"],
        &["request_policy:all_nodes", "response_policy:all_succeeded"],
    ),
];
