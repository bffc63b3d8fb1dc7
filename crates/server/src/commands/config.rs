//! `CONFIG GET | SET | RESETSTAT | REWRITE` and `SLOWLOG GET | LEN | RESET`, with Redis's
//! replies and error texts.

use super::*;
use crate::introspect::LOG_LEVELS;

/// The longest slow log `CONFIG SET slowlog-max-len` accepts.
const MAX_SLOWLOG_LEN: usize = 10_000;

/// Every parameter `CONFIG GET` knows, in the order it lists them.
const PARAMETERS: &[&str] = &[
    "bind",
    "port",
    "requirepass",
    "maxclients",
    "databases",
    "proto-max-bulk-len",
    "max-args",
    "client-query-buffer-limit",
    "io-threads",
    "enable-debug-command",
    "slowlog-log-slower-than",
    "slowlog-max-len",
    "loglevel",
    "timeout",
    "save",
    "appendonly",
    "maxmemory",
    "maxmemory-policy",
    "replicaof",
    "slaveof",
    "masterauth",
    "replica-read-only",
    "slave-read-only",
    "repl-timeout",
    "repl-backlog-size",
    "repl-backlog-ttl",
    "min-replicas-to-write",
    "min-slaves-to-write",
    "cluster-enabled",
];

/// A parameter's current value.
fn value(conn: &Connection, name: &str) -> String {
    let shared = &conn.shared;
    let config = &shared.config;
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_owned();
    match name {
        "bind" => config.bind.clone(),
        "port" => shared.addr.port().to_string(),
        "requirepass" => shared.live.requirepass().unwrap_or_default(),
        "maxclients" => shared.live.max_clients().to_string(),
        "databases" => config.databases.to_string(),
        "proto-max-bulk-len" => shared.live.limits(config.limits).max_bulk.to_string(),
        "max-args" => shared.live.limits(config.limits).max_args.to_string(),
        "client-query-buffer-limit" => shared.live.max_query_buffer().to_string(),
        "io-threads" => config.threads.to_string(),
        "enable-debug-command" => yes_no(config.enable_debug_command),
        "cluster-enabled" => yes_no(config.cluster_enabled),
        "slowlog-log-slower-than" => shared.live.slower_than_us().to_string(),
        "slowlog-max-len" => shared.live.slowlog_max_len().to_string(),
        "loglevel" => shared.live.log_level().to_owned(),
        // Writes are durable through RocksDB's write-ahead log, not snapshots or an AOF;
        // idle clients are never timed out; memory is bounded by the page cache budget.
        "timeout" | "maxmemory" => "0".to_owned(),
        "save" => String::new(),
        "appendonly" => "no".to_owned(),
        "maxmemory-policy" => "noeviction".to_owned(),
        "replicaof" | "slaveof" => shared
            .replication
            .primary()
            .map(|(host, port, _)| format!("{host} {port}"))
            .unwrap_or_default(),
        "masterauth" => shared.replication.masterauth().unwrap_or_default(),
        "replica-read-only" | "slave-read-only" => "yes".to_owned(),
        "repl-timeout" => crate::replication::REPL_TIMEOUT.as_secs().to_string(),
        // The backlog is the write-ahead log on disk: the live logs always, flushed
        // ones as far as these say (0: none kept).
        "repl-backlog-size" => config.repl_backlog.0.saturating_mul(1 << 20).to_string(),
        "repl-backlog-ttl" => config.repl_backlog.1.to_string(),
        // No write is ever refused for want of replicas.
        "min-replicas-to-write" | "min-slaves-to-write" => "0".to_owned(),
        _ => String::new(),
    }
}

/// `CONFIG subcommand ...`.
pub(crate) fn config(conn: &mut Connection, args: &mut Args) -> HostResult {
    let sub = args.next_arg()?;
    Ok(match (lower(sub).as_str(), args.rest()) {
        ("get", patterns @ [_, ..]) => config_get(conn, patterns),
        ("set", pairs) if !pairs.is_empty() && pairs.len() % 2 == 0 => config_set(conn, pairs),
        ("set", _) => err("ERR wrong number of arguments for 'config|set' command"),
        ("resetstat", []) => {
            let shared = &conn.shared;
            for counter in [
                &shared.stats.commands,
                &shared.stats.connections,
                &shared.stats.rejected,
            ] {
                counter.store(0, Ordering::Relaxed);
            }
            shared.command_stats.reset();
            Reply::ok()
        }
        ("rewrite", []) => err("ERR The server is running without a config file"),
        _ => Reply::Error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CONFIG HELP.",
            String::from_utf8_lossy(sub)
        )),
    })
}

/// `CONFIG GET pattern [pattern ...]`: name-value pairs, each parameter once; a map in
/// RESP3, a flat array in RESP2.
fn config_get(conn: &Connection, patterns: &[Vec<u8>]) -> Reply {
    let matched = PARAMETERS.iter().filter(|name| {
        patterns
            .iter()
            .any(|p| glob::matches(lower(p).as_bytes(), name.as_bytes()))
    });
    let pairs: Vec<(Reply, Reply)> = matched
        .map(|name| (bulk(*name), bulk(value(conn, name))))
        .collect();
    match conn.protocol {
        Protocol::Resp3 => Reply::Map(pairs),
        Protocol::Resp2 => Reply::Array(pairs.into_iter().flat_map(|(k, v)| [k, v]).collect()),
    }
}

/// A checked `CONFIG SET` of one parameter, applied only once all of them check.
type Apply = Box<dyn FnOnce(&Connection)>;

/// `CONFIG SET name value [name value ...]`: all or nothing, as Redis 7.
fn config_set(conn: &Connection, pairs: &[Vec<u8>]) -> Reply {
    let mut changes: Vec<Apply> = Vec::new();
    let mut pairs = Args::of("config|set", pairs);
    while let Some(name) = pairs.next_opt() {
        let Some(value) = pairs.next_opt() else {
            return err("ERR wrong number of arguments for 'config|set' command");
        };
        let name = lower(name);
        let value = String::from_utf8_lossy(value).into_owned();
        match check_set(conn, &name, value) {
            Ok(apply) => changes.push(apply),
            Err(reason) => {
                return Reply::Error(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}"
                ))
            }
        }
    }
    for apply in changes {
        apply(conn);
    }
    Reply::ok()
}

/// The fewest arguments `CONFIG SET max-args` allows a command (Redis has no such
/// setting; a lower one would only lock clients out).
const MIN_MAX_ARGS: usize = 1024;

fn check_set(conn: &Connection, name: &str, value: String) -> Result<Apply, String> {
    let number = |v: &str| {
        v.parse::<i64>()
            .map_err(|_| "argument couldn't be parsed into an integer".to_owned())
    };
    Ok(match name {
        "requirepass" => Box::new(move |c: &Connection| c.shared.live.set_requirepass(&value)),
        "masterauth" => Box::new(move |c: &Connection| c.shared.replication.set_masterauth(&value)),
        // A replica holds exactly its primary's log: a write of its own would take a
        // sequence number the primary gives to another write.
        "replica-read-only" | "slave-read-only" if value.eq_ignore_ascii_case("yes") => {
            Box::new(|_: &Connection| {})
        }
        "replica-read-only" | "slave-read-only" => {
            return Err(
                "writable replicas are not supported: a replica applies its primary's \
                 write-ahead log, and a write of its own would diverge from it"
                    .to_owned(),
            )
        }
        "maxclients" => {
            let n = number(&value)?;
            let n = usize::try_from(n)
                .ok()
                .filter(|n| *n >= 1)
                .ok_or("argument must be between 1 and 2147483647 inclusive")?;
            let allowed = super::super::fit_max_clients(n);
            if allowed < n {
                return Err(format!(
                    "The operating system is not able to handle the specified number of clients, try with {allowed}"
                ));
            }
            Box::new(move |c: &Connection| c.shared.live.set_max_clients(n))
        }
        "proto-max-bulk-len" | "max-args" | "client-query-buffer-limit" => {
            // Floors that leave every client able to send `CONFIG SET` again: Redis's
            // 1 MiB for the two byte limits; ours for the argument count.
            let floor = if name == "max-args" {
                MIN_MAX_ARGS
            } else {
                1 << 20
            };
            let n = size(&value)?;
            if n < floor {
                return Err(format!(
                    "argument must be between {floor} and 9223372036854775807 inclusive"
                ));
            }
            match name {
                "proto-max-bulk-len" => {
                    Box::new(move |c: &Connection| c.shared.live.set_max_bulk(n))
                }
                "max-args" => Box::new(move |c: &Connection| c.shared.live.set_max_args(n)),
                _ => Box::new(move |c: &Connection| c.shared.live.set_max_query_buffer(n)),
            }
        }
        "slowlog-log-slower-than" => {
            let n = number(&value)?;
            if n < -1 {
                return Err(
                    "argument must be between -1 and 9223372036854775807 inclusive".to_owned(),
                );
            }
            Box::new(move |c: &Connection| c.shared.live.set_slower_than_us(n))
        }
        "slowlog-max-len" => {
            let n = number(&value)?;
            // Bounded (Redis allows up to 2^63): every entry keeps up to 4 KiB of
            // arguments, and the log must not grow the server without bound.
            let n = usize::try_from(n)
                .ok()
                .filter(|n| *n <= MAX_SLOWLOG_LEN)
                .ok_or(format!(
                    "argument must be between 0 and {MAX_SLOWLOG_LEN} inclusive"
                ))?;
            Box::new(move |c: &Connection| {
                c.shared.live.set_slowlog_max_len(n);
                c.shared.slowlog.trim(n);
            })
        }
        "loglevel" => {
            let level = value.to_ascii_lowercase();
            if !LOG_LEVELS.contains(&level.as_str()) {
                return Err(
                    "argument(s) must be one of the following: debug, verbose, notice, warning"
                        .to_owned(),
                );
            }
            Box::new(move |c: &Connection| {
                c.shared.live.set_log_level(&level);
            })
        }
        // One Redis changes at run time and this host keeps fixed: setting the value it
        // has changes nothing, so it succeeds (`CONFIG SET save ""`, `maxmemory 0`).
        known
            if RUNTIME_IN_REDIS.contains(&known)
                && same(known, &self::value(conn, known), &value) =>
        {
            Box::new(|_: &Connection| {})
        }
        known if PARAMETERS.contains(&known) => return Err("can't set immutable config".to_owned()),
        unknown => {
            return Err(format!(
                "Unknown option or number of arguments for CONFIG SET - '{unknown}'"
            ))
        }
    })
}

/// The parameters of [`PARAMETERS`] that Redis lets `CONFIG SET` change and this host
/// keeps as they are.
const RUNTIME_IN_REDIS: &[&str] = &[
    "bind",
    "port",
    "timeout",
    "save",
    "appendonly",
    "maxmemory",
    "maxmemory-policy",
    "repl-timeout",
    "repl-backlog-size",
    "repl-backlog-ttl",
    "min-replicas-to-write",
    "min-slaves-to-write",
];

/// Whether `value` is the value `current` written another way (`0mb` for `0`).
fn same(name: &str, current: &str, value: &str) -> bool {
    match name {
        "maxmemory" | "repl-backlog-size" => {
            memory(value).is_some() && memory(value) == memory(current)
        }
        _ => value.eq_ignore_ascii_case(current),
    }
}

/// A size as Redis writes them: bytes, or a number with `k`/`m`/`g` (powers of 1000) or
/// `kb`/`mb`/`gb` (powers of 1024); at least 1.
fn size(value: &str) -> Result<usize, String> {
    memory(value)
        .filter(|n| *n >= 1)
        .ok_or_else(|| "argument must be a memory value".to_owned())
}

/// A size as Redis writes them, 0 included.
fn memory(value: &str) -> Option<usize> {
    let lower = value.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let unit: u64 = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1 << 10,
        "m" => 1_000_000,
        "mb" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" => 1 << 30,
        _ => return None,
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(unit))
        .and_then(|n| usize::try_from(n).ok())
}

/// `SLOWLOG GET [count] | LEN | RESET`.
pub(crate) fn slowlog(conn: &mut Connection, args: &mut Args) -> HostResult {
    let log = &conn.shared.slowlog;
    let sub = args.next_arg()?;
    Ok(match (lower(sub).as_str(), args.rest()) {
        ("get", count @ ([] | [_])) => {
            let count = match count.first().map(|a| parse_i64(a)) {
                None => Some(10),
                Some(Some(-1)) => None,
                Some(Some(n)) if n >= 0 => Some(n as usize),
                Some(_) => return Err(err("ERR count should be greater than or equal to -1")),
            };
            Reply::Array(
                log.newest(count)
                    .into_iter()
                    .map(|e| {
                        Reply::Array(vec![
                            Reply::Int(e.id as i64),
                            Reply::Int(e.unix_secs as i64),
                            Reply::Int(e.micros as i64),
                            Reply::Array(e.args.into_iter().map(bulk).collect()),
                            bulk(e.client_addr),
                            bulk(e.client_name),
                        ])
                    })
                    .collect(),
            )
        }
        ("len", []) => Reply::Int(log.len() as i64),
        ("reset", []) => {
            log.reset();
            Reply::ok()
        }
        _ => Reply::Error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try SLOWLOG HELP.",
            String::from_utf8_lossy(sub)
        )),
    })
}
