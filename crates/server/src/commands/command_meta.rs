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

// Redis 7.0's ACL categories, tips and key specifications, as named sets.
const ADMIN: Words = &["@admin", "@slow", "@dangerous"];
const ADMIN_FAST: Words = &["@admin", "@fast", "@dangerous"];
const ADMIN_CONN: Words = &["@admin", "@slow", "@dangerous", "@connection"];
const CONN: Words = &["@fast", "@connection"];
const SLOW: Words = &["@slow"];
const SLOW_CONN: Words = &["@slow", "@connection"];
const TX: Words = &["@fast", "@transaction"];
const KEY_READ: Words = &["@keyspace", "@read", "@fast"];
const KEY_WRITE: Words = &["@keyspace", "@write", "@fast"];
const FLUSH: Words = &["@keyspace", "@write", "@slow", "@dangerous"];
const HLL_WRITE: Words = &["@write", "@hyperloglog", "@slow"];
const NONE: Words = &[];
const NONDET: Words = &["nondeterministic_output"];
const UNORDERED: Words = &["nondeterministic_output_order"];
const SUMMED: Words = &["request_policy:all_shards", "response_policy:agg_sum"];
const SPLIT_SUMMED: Words = &["request_policy:multi_shard", "response_policy:agg_sum"];
const ON_ALL: Words = &["request_policy:all_shards", "response_policy:all_succeeded"];
const NO_KEYS: &[KeySpec] = &[];
const READ1: &[KeySpec] = &[range(&["RO", "access"], 1, 0)];
const LOOK1: &[KeySpec] = &[range(&["RO"], 1, 0)];
const LOOK_ALL: &[KeySpec] = &[range(&["RO"], 1, -1)];
const UPDATE1: &[KeySpec] = &[range(&["RW", "update"], 1, 0)];
const DELETE_ALL: &[KeySpec] = &[range(&["RM", "delete"], 1, -1)];
const PFCOUNT: &[KeySpec] = &[KeySpec {
    notes: "RW because it may change the internal representation of the key, and \
            propagate to replicas",
    ..range(&["RW", "access"], 1, -1)
}];
const PFMERGE: &[KeySpec] = &[
    range(&["RW", "access", "insert"], 1, 0),
    range(&["RO", "access"], 2, -1),
];
const SET: &[KeySpec] = &[KeySpec {
    notes: "RW and ACCESS due to the optional `GET` argument",
    ..range(&["RW", "access", "update", "variable_flags"], 1, 0)
}];

/// The metadata `COMMAND` reports for a command of the table.
pub(crate) fn meta(spec: &Spec) -> Meta {
    let (acl, tips, specs): (Words, Words, &'static [KeySpec]) = match spec.name {
        "asking" | "auth" | "echo" | "hello" | "quit" | "readonly" | "readwrite" | "reset"
        | "select" => (CONN, NONE, NO_KEYS),
        "bgsave" | "debug" | "psync" | "replconf" | "replicaof" | "save" | "shutdown"
        | "slaveof" | "sync" => (ADMIN, NONE, NO_KEYS),
        "client" | "cluster" | "config" | "module" | "slowlog" => (SLOW, NONE, NO_KEYS),
        "command" => (SLOW_CONN, UNORDERED, NO_KEYS),
        "dbsize" => (KEY_READ, SUMMED, NO_KEYS),
        "del" => (&["@keyspace", "@write", "@slow"], SPLIT_SUMMED, DELETE_ALL),
        "unlink" => (KEY_WRITE, SPLIT_SUMMED, DELETE_ALL),
        "discard" | "multi" | "unwatch" => (TX, NONE, NO_KEYS),
        "exec" => (&["@slow", "@transaction"], NONE, NO_KEYS),
        "watch" => (TX, NONE, LOOK_ALL),
        "exists" | "touch" => (KEY_READ, SPLIT_SUMMED, LOOK_ALL),
        "type" => (KEY_READ, NONE, LOOK1),
        "expire" | "expireat" | "pexpire" | "pexpireat" | "persist" => (KEY_WRITE, NONE, UPDATE1),
        "expiretime" | "pexpiretime" => (KEY_READ, NONE, READ1),
        "ttl" | "pttl" => (KEY_READ, NONDET, READ1),
        "flushall" | "flushdb" => (FLUSH, ON_ALL, NO_KEYS),
        "info" => (
            &["@slow", "@dangerous"],
            &[
                "nondeterministic_output",
                "request_policy:all_shards",
                "response_policy:special",
            ],
            NO_KEYS,
        ),
        "keys" => (
            &["@keyspace", "@read", "@slow", "@dangerous"],
            &["request_policy:all_shards", "nondeterministic_output_order"],
            NO_KEYS,
        ),
        "scan" => (
            &["@keyspace", "@read", "@slow"],
            &["nondeterministic_output", "request_policy:special"],
            NO_KEYS,
        ),
        "lastsave" => (ADMIN_FAST, NONDET, NO_KEYS),
        "role" => (ADMIN_FAST, NONE, NO_KEYS),
        "ping" => (CONN, ON_ALL, NO_KEYS),
        "time" => (&["@fast"], NONDET, NO_KEYS),
        "wait" => (
            SLOW_CONN,
            &["request_policy:all_shards", "response_policy:agg_min"],
            NO_KEYS,
        ),
        "pfadd" => (
            &["@write", "@hyperloglog", "@fast"],
            NONE,
            const { &[range(&["RW", "insert"], 1, 0)] },
        ),
        "pfcount" => (&["@read", "@hyperloglog", "@slow"], NONE, PFCOUNT),
        "pfmerge" => (HLL_WRITE, NONE, PFMERGE),
        "pfdebug" => (
            &["@write", "@hyperloglog", "@admin", "@slow", "@dangerous"],
            NONE,
            const { &[range(&["RW", "access"], 2, 0)] },
        ),
        "get" => (&["@read", "@string", "@fast"], NONE, READ1),
        "set" => (&["@write", "@string", "@slow"], NONE, SET),
        // Kvrocks' topology command, not Redis's: an administrator's.
        "clusterx" => (ADMIN, NONE, NO_KEYS),
        _ if spec.counted_sources => (NONE, NONE, MERGES),
        _ if spec.keys.0 <= 0 => (NONE, NONE, NO_KEYS),
        _ if spec.flags.contains(&"write") => (NONE, NONE, WRITES),
        _ => (NONE, NONE, READS),
    };
    Meta { acl, tips, specs }
}

/// Redis 7's refusal of a container command's subcommand before it runs: one the host
/// does not answer ("unknown subcommand 'X'. Try CONFIG HELP."), or a known one given
/// the wrong number of arguments (`CONFIG RESETSTAT x`: "wrong number of arguments
/// for 'config|resetstat' command"). `None` when it fits, or `container` has none.
pub(crate) fn sub_error(container: &str, request: &[Vec<u8>]) -> Option<Reply> {
    let word = request.get(1)?;
    let subs = subcommands(container);
    if subs.is_empty() {
        return None;
    }
    let Some(sub) = subs.iter().find(|s| {
        let name = &s.name[container.len() + 1..];
        name.as_bytes().eq_ignore_ascii_case(word)
    }) else {
        let typed: String = String::from_utf8_lossy(word).chars().take(128).collect();
        return Some(Reply::Error(format!(
            "ERR unknown subcommand '{typed}'. Try {} HELP.",
            container.to_ascii_uppercase()
        )));
    };
    let n = request.len() as i64;
    let fits = match sub.arity >= 0 {
        true => n == sub.arity,
        false => n >= -sub.arity,
    };
    (!fits).then(|| Reply::wrong_arity(sub.name))
}

/// How many entries `INFO commandstats` keeps: every command of the table, then every
/// subcommand (Redis 7 counts `config|get`, not `config`).
pub(crate) fn stat_count() -> usize {
    crate::table::COMMANDS.rows().len() + SUBCOMMANDS.len()
}

/// The name of entry `stat` of `INFO commandstats`.
pub(crate) fn stat_name(stat: usize) -> &'static str {
    let rows = crate::table::COMMANDS.rows();
    match rows.get(stat) {
        Some(spec) => spec.name,
        None => SUBCOMMANDS[stat - rows.len()].name,
    }
}

/// Where `INFO commandstats` counts a request for the command at `index` of the
/// table: its subcommand's entry for a known subcommand, else the command's own;
/// `None` for an unknown subcommand, which Redis finds no command for and counts
/// nowhere.
pub(crate) fn stat_index(index: usize, request: &[Vec<u8>]) -> Option<usize> {
    let rows = crate::table::COMMANDS.rows();
    let (Some(spec), Some(word)) = (rows.get(index), request.get(1)) else {
        return Some(index);
    };
    if subcommands(spec.name).is_empty() {
        return Some(index);
    }
    let found = SUBCOMMANDS.iter().position(|s| {
        s.name.split_once('|').is_some_and(|(container, sub)| {
            container == spec.name && sub.as_bytes().eq_ignore_ascii_case(word)
        })
    });
    found.map(|at| rows.len() + at)
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

/// The subcommands of a container command that the host answers, by name. Every
/// host command's dispatch asks (for the arity of a subcommand), so the others are
/// answered without a look at the table.
pub(crate) fn subcommands(name: &str) -> &'static [Sub] {
    if !matches!(
        name,
        "client" | "cluster" | "command" | "config" | "module" | "slowlog"
    ) {
        return &[];
    }
    let prefix = |s: &Sub| s.name.split('|').next() == Some(name);
    let first = SUBCOMMANDS.iter().position(prefix);
    let Some(first) = first else { return &[] };
    let len = SUBCOMMANDS[first..]
        .iter()
        .take_while(|s| prefix(s))
        .count();
    &SUBCOMMANDS[first..first + len]
}

// Subcommands' flags.
const OWN: Words = &["noscript", "loading", "stale"];
const ADMIN_OWN: Words = &["admin", "noscript", "loading", "stale"];
const LOADING_STALE: Words = &["loading", "stale"];
const STALE: Words = &["stale"];

/// Every subcommand the host answers, grouped by container, with Redis 7.0's arity,
/// flags, ACL categories and tips (`NO-TOUCH` and `SETINFO` are Redis 7.2's).
#[rustfmt::skip]
const SUBCOMMANDS: &[Sub] = &[
    sub("client|getname", 2, OWN, SLOW_CONN, NONE),
    sub("client|getredir", 2, OWN, SLOW_CONN, NONE),
    sub("client|help", 2, LOADING_STALE, SLOW_CONN, NONE),
    sub("client|id", 2, OWN, SLOW_CONN, NONE),
    sub("client|info", 2, OWN, SLOW_CONN, NONDET),
    sub("client|kill", -3, ADMIN_OWN, ADMIN_CONN, NONE),
    sub("client|list", -2, ADMIN_OWN, ADMIN_CONN, NONDET),
    sub("client|no-evict", 3, ADMIN_OWN, ADMIN_CONN, NONE),
    sub("client|no-touch", 3, OWN, SLOW_CONN, NONE),
    sub("client|pause", -3, ADMIN_OWN, ADMIN_CONN, NONE),
    sub("client|reply", 3, OWN, SLOW_CONN, NONE),
    sub("client|setinfo", 4, OWN, SLOW_CONN, NONE),
    sub("client|setname", 3, OWN, SLOW_CONN, NONE),
    sub("client|trackinginfo", 2, OWN, SLOW_CONN, NONE),
    sub("client|unblock", -3, ADMIN_OWN, ADMIN_CONN, NONE),
    sub("client|unpause", 2, ADMIN_OWN, ADMIN_CONN, NONE),
    sub("cluster|countkeysinslot", 3, STALE, SLOW, NONE),
    sub("cluster|getkeysinslot", 4, STALE, SLOW, NONDET),
    sub("cluster|help", 2, LOADING_STALE, SLOW, NONE),
    sub("cluster|info", 2, STALE, SLOW, NONDET),
    sub("cluster|keyslot", 3, STALE, SLOW, NONE),
    sub("cluster|myid", 2, STALE, SLOW, NONE),
    sub("cluster|nodes", 2, STALE, SLOW, NONDET),
    sub("cluster|shards", 2, STALE, SLOW, NONDET),
    sub("cluster|slots", 2, STALE, SLOW, NONDET),
    sub("command|count", 2, LOADING_STALE, SLOW_CONN, NONE),
    sub("command|docs", -2, LOADING_STALE, SLOW_CONN, UNORDERED),
    sub("command|getkeys", -4, LOADING_STALE, SLOW_CONN, NONE),
    sub("command|getkeysandflags", -4, LOADING_STALE, SLOW_CONN, NONE),
    sub("command|help", 2, LOADING_STALE, SLOW_CONN, NONE),
    sub("command|info", -2, LOADING_STALE, SLOW_CONN, UNORDERED),
    sub("command|list", -2, LOADING_STALE, SLOW_CONN, UNORDERED),
    sub("config|get", -3, ADMIN_OWN, ADMIN, NONE),
    sub("config|help", 2, LOADING_STALE, SLOW, NONE),
    sub("config|resetstat", 2, ADMIN_OWN, ADMIN, NONE),
    sub("config|rewrite", 2, ADMIN_OWN, ADMIN, NONE),
    sub("config|set", -4, ADMIN_OWN, ADMIN, &["request_policy:all_nodes", "response_policy:all_succeeded"]),
    sub("module|help", 2, LOADING_STALE, SLOW, NONE),
    sub("module|list", 2, &["admin", "noscript"], ADMIN, UNORDERED),
    sub("slowlog|get", -2, &["admin", "loading", "stale"], ADMIN, &["request_policy:all_nodes", "nondeterministic_output"]),
    sub("slowlog|help", 2, LOADING_STALE, SLOW, NONE),
    sub("slowlog|len", 2, &["admin", "loading", "stale"], ADMIN,
        &["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"]),
    sub("slowlog|reset", 2, &["admin", "loading", "stale"], ADMIN, &["request_policy:all_nodes", "response_policy:all_succeeded"]),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of the table is found under its container (the guard in
    /// [`subcommands`] names every container), in name order.
    #[test]
    fn every_subcommand_is_found_under_its_container() {
        for sub in SUBCOMMANDS {
            let (container, _) = sub.name.split_once('|').expect("container|sub");
            assert!(
                subcommands(container).iter().any(|s| s.name == sub.name),
                "{}",
                sub.name
            );
        }
        assert!(SUBCOMMANDS.windows(2).all(|w| w[0].name < w[1].name));
        assert!(subcommands("ping").is_empty());
    }
}
