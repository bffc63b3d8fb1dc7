//! Keyspace commands: `DEL`, `EXISTS`, `TYPE`, `KEYS`, `SCAN`, the `EXPIRE` and `TTL`
//! families, `FLUSHDB` and `FLUSHALL`.

use super::*;

pub(super) fn del(conn: &Connection, args: &[Vec<u8>]) -> Reply {
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

pub(super) fn exists(conn: &Connection, args: &[Vec<u8>]) -> Reply {
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

pub(super) fn key_type(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    match conn.ns().key_type(&args[1]) {
        Ok(Some(t)) => Reply::Simple(t.redis_name().to_owned()),
        Ok(None) => Reply::Simple("none".to_owned()),
        Err(e) => Reply::from(&e),
    }
}

pub(super) fn keys(conn: &Connection, args: &[Vec<u8>]) -> Reply {
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
pub(super) fn scan(conn: &Connection, args: &[Vec<u8>]) -> Reply {
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
pub(super) fn expire(conn: &Connection, args: &[Vec<u8>], name: &str) -> Reply {
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
pub(super) fn ttl(conn: &Connection, args: &[Vec<u8>], name: &str) -> Reply {
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
pub(super) fn flush(conn: &Connection, args: &[Vec<u8>], all: bool) -> Reply {
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
