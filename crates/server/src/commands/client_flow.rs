//! The `CLIENT` subcommands that change how a connection, or every connection, is
//! served: `PAUSE`, `UNPAUSE`, `REPLY`, `UNBLOCK`, `NO-EVICT` and `NO-TOUCH`, and the
//! client-side caching queries `GETREDIR` and `TRACKINGINFO` (tracking is not offered,
//! so they answer as Redis does for a connection that has not turned it on). Replies and
//! errors are Redis 7's (Debian's `redis-server` is the oracle, see
//! `tests/client_flow_vs_redis.rs`).

use super::*;
use crate::activity::{Unblocked, NO_EVICT, NO_TOUCH};
use std::time::{Duration, Instant};

/// `CLIENT sub rest...` for the subcommands here (`sub` in lower case, `typed` as the
/// client wrote it); `None` for any other subcommand.
pub(super) fn client(
    conn: &mut Connection,
    sub: &str,
    typed: &[u8],
    rest: &[Vec<u8>],
) -> Option<HostResult> {
    Some(match (sub, rest) {
        ("pause", [timeout]) => pause(conn, timeout, None),
        ("pause", [timeout, mode]) => pause(conn, timeout, Some(mode)),
        ("unpause", []) => {
            conn.shared.pause.unpause();
            conn.shared.replication.wake_io_threads();
            Ok(Reply::ok())
        }
        ("reply", [word]) => match conn.replies.set(&lower(word)) {
            true => Ok(Reply::ok()),
            false => Err(err(SYNTAX)),
        },
        ("unblock", [id]) => unblock(conn, id, None),
        ("unblock", [id, reason]) => unblock(conn, id, Some(reason)),
        ("no-evict", [word]) => set_flag(conn, NO_EVICT, word),
        ("no-touch", [word]) => set_flag(conn, NO_TOUCH, word),
        ("getredir", []) => Ok(Reply::Int(-1)),
        ("trackinginfo", []) => Ok(Reply::Map(vec![
            (bulk("flags"), Reply::Set(vec![bulk("off")])),
            (bulk("redirect"), Reply::Int(-1)),
            (bulk("prefixes"), Reply::Array(Vec::new())),
        ])),
        // Redis checks these two's arity in the command, after the table's minimum.
        ("pause" | "unblock", rest) if rest.len() > 2 => Err(Reply::Error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(typed)
        ))),
        (
            "pause" | "unpause" | "reply" | "unblock" | "no-evict" | "no-touch" | "getredir"
            | "trackinginfo",
            _,
        ) => Err(Reply::Error(format!(
            "ERR wrong number of arguments for 'client|{sub}' command"
        ))),
        _ => return None,
    })
}

/// `CLIENT PAUSE timeout [WRITE | ALL]`: the mode is checked first, as Redis does.
fn pause(conn: &Connection, timeout: &[u8], mode: Option<&Vec<u8>>) -> HostResult {
    let all = match mode.map(|m| lower(m)).as_deref() {
        None | Some("all") => true,
        Some("write") => false,
        Some(_) => return Err(err("ERR CLIENT PAUSE mode must be WRITE or ALL")),
    };
    let ms =
        parse_i64(timeout).ok_or_else(|| err("ERR timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(err("ERR timeout is negative"));
    }
    if ms > i64::MAX - rocksketch::now_ms() as i64 {
        return Err(err("ERR timeout is out of range"));
    }
    let now = Instant::now();
    // Past what an `Instant` holds (some 292 years of milliseconds): a century is as
    // good as forever, and `CLIENT UNPAUSE` ends it.
    let until = now
        .checked_add(Duration::from_millis(ms as u64))
        .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 86_400)))
        .unwrap_or(now);
    conn.shared.pause.pause(until, all);
    Ok(Reply::ok())
}

/// `CLIENT UNBLOCK id [TIMEOUT | ERROR]`: ends connection `id`'s `WAIT`; 1 if it had
/// one, else 0 (a connection held by `CLIENT PAUSE` is not blocked in a command and
/// stays held, as in Redis 7.2).
fn unblock(conn: &Connection, id: &[u8], reason: Option<&Vec<u8>>) -> HostResult {
    let how = match reason.map(|r| lower(r)).as_deref() {
        None | Some("timeout") => Unblocked::Timeout,
        Some("error") => Unblocked::Error,
        Some(_) => return Err(err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")),
    };
    let id = parse_i64(id).ok_or_else(|| err(NOT_INTEGER))?;
    let clients = conn.shared.clients.lock();
    let Some(entry) = clients.get(&(id as u64)).filter(|_| id > 0) else {
        return Ok(Reply::Int(0));
    };
    let unblocked = entry.activity.unblock(how);
    if unblocked {
        // Its I/O thread looks at once, not at its next tick.
        entry.kill.wake();
    }
    Ok(Reply::Int(i64::from(unblocked)))
}

/// `CLIENT NO-EVICT | NO-TOUCH ON | OFF`. No client is ever evicted here and keys keep
/// no access times, so the flags change only what `CLIENT LIST` shows.
fn set_flag(conn: &Connection, flag: u8, word: &[u8]) -> HostResult {
    let on = match lower(word).as_str() {
        "on" => true,
        "off" => false,
        _ => return Err(err(SYNTAX)),
    };
    conn.activity.set_flag(flag, on);
    Ok(Reply::ok())
}
