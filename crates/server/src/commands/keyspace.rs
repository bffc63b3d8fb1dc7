//! Keyspace commands: `DEL`, `EXISTS`, `TYPE`, `KEYS`, `SCAN`, the `EXPIRE` and `TTL`
//! families, `FLUSHDB` and `FLUSHALL`.

use super::*;

pub(crate) fn dbsize(conn: &mut Connection, args: &mut Args) -> HostResult {
    args.finish()?;
    let (keys, _) = conn.keyspace().counts()?;
    Ok(Reply::Int(keys as i64))
}

/// `DEL` / `UNLINK key [key ...]`: how many of the keys were there.
pub(crate) fn del(conn: &mut Connection, args: &mut Args) -> HostResult {
    let ns = conn.ns();
    let mut deleted = 0;
    for key in args.rest_nonempty()? {
        deleted += i64::from(ns.delete(key)?);
    }
    Ok(Reply::Int(deleted))
}

/// `EXISTS key [key ...]`: how many of the keys are there (a key named twice counts
/// twice).
pub(crate) fn exists(conn: &mut Connection, args: &mut Args) -> HostResult {
    let ns = conn.ns();
    let mut found = 0;
    for key in args.rest_nonempty()? {
        found += i64::from(ns.exists(key)?);
    }
    Ok(Reply::Int(found))
}

pub(crate) fn key_type(conn: &mut Connection, args: &mut Args) -> HostResult {
    let key = args.next_key()?;
    args.finish()?;
    Ok(match conn.ns().key_type(key)? {
        Some(t) => Reply::Simple(t.redis_name().to_owned()),
        None => Reply::Simple("none".to_owned()),
    })
}

pub(crate) fn keys(conn: &mut Connection, args: &mut Args) -> HostResult {
    let pattern = args.next_arg()?;
    args.finish()?;
    let keys = conn
        .keyspace()
        .keys_where(|key| glob::matches(pattern, key))?;
    Ok(Reply::Array(keys.into_iter().map(Reply::Bulk).collect()))
}

pub(crate) fn persist(conn: &mut Connection, args: &mut Args) -> HostResult {
    let key = args.next_key()?;
    args.finish()?;
    Ok(Reply::Int(i64::from(conn.ns().persist(key)?)))
}

/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`.
pub(crate) fn scan(conn: &mut Connection, args: &mut Args) -> HostResult {
    let Some(cursor) = std::str::from_utf8(args.next_arg()?)
        .ok()
        .and_then(|c| c.parse::<u64>().ok())
    else {
        return Err(err("ERR invalid cursor"));
    };
    let (mut pattern, mut count, mut wanted_type) = (None, 10usize, None);
    while let Some(name) = args.next_opt() {
        let Some(value) = args.next_opt() else {
            return Err(err(SYNTAX));
        };
        match lower(name).as_str() {
            "match" => pattern = Some(value),
            "count" => match parse_i64(value) {
                Some(n) if n >= 1 => count = (n as usize).min(1 << 20),
                Some(_) => return Err(err(SYNTAX)),
                None => return Err(err(NOT_INTEGER)),
            },
            "type" => wanted_type = Some(lower(value)),
            _ => return Err(err(SYNTAX)),
        }
    }
    let span = conn.keyspace();
    let scope = span.bounds().0;
    let after = match cursor {
        0 => None,
        id => match conn.shared.cursors.lock().get(scope, id) {
            Some(position) => Some(position),
            None => return Err(err("ERR invalid cursor")),
        },
    };
    let after_ref = after.as_ref().map(|(ns, key)| (*ns, key.as_slice()));
    let page = span.scan(after_ref, count)?;
    let next = match page.last() {
        Some((ns, last, _)) if page.len() == count => {
            conn.shared
                .cursors
                .lock()
                .save(conn.id, scope, (*ns, last.clone()))
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
        .filter(|(_, key, t)| type_matches(*t) && pattern.is_none_or(|p| glob::matches(p, key)))
        .map(|(_, key, _)| Reply::Bulk(key))
        .collect();
    Ok(Reply::Array(vec![
        bulk(next.to_string()),
        Reply::Array(keys),
    ]))
}

/// `EXPIRE key seconds [NX|XX|GT|LT]` and its `PEXPIRE`, `EXPIREAT`, `PEXPIREAT` kin.
pub(crate) fn expire(conn: &mut Connection, args: &mut Args) -> HostResult {
    let name = args.command();
    let key = args.next_key()?;
    // Redis checks the options before the number.
    let amount = parse_i64(args.next_arg()?);
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for option in args.rest() {
        match lower(option).as_str() {
            "nx" => nx = true,
            "xx" => xx = true,
            "gt" => gt = true,
            "lt" => lt = true,
            _ => {
                // As Redis prints it: a C string (to the first NUL), trailing line
                // breaks trimmed.
                let shown = option.split(|b| *b == 0).next().unwrap_or_default();
                let end = shown.len()
                    - shown
                        .iter()
                        .rev()
                        .take_while(|b| matches!(b, b'\r' | b'\n'))
                        .count();
                return Err(Reply::Error(format!(
                    "ERR Unsupported option {}",
                    String::from_utf8_lossy(&shown[..end])
                )));
            }
        }
    }
    if nx && (xx || gt || lt) {
        return Err(err(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if gt && lt {
        return Err(err(
            "ERR GT and LT options at the same time are not compatible",
        ));
    }
    let Some(amount) = amount else {
        return Err(err(NOT_INTEGER));
    };
    let (scale, relative) = match name {
        "expire" => (1000, true),
        "pexpire" => (1, true),
        "expireat" => (1000, false),
        _ => (1, false),
    };
    let base = if relative { now_ms() as i64 } else { 0 };
    let at = amount
        .checked_mul(scale)
        .and_then(|ms| ms.checked_add(base));
    let Some(at) = at else {
        return Err(Reply::Error(format!(
            "ERR invalid expire time in '{name}' command"
        )));
    };
    let at = at.max(0) as u64;
    // A key without expiry counts as expiring at infinity (as Redis has it).
    let allow = |current: Option<u64>| {
        let after = current.is_some_and(|c| at > c);
        let before = current.is_none_or(|c| at < c);
        !(nx && current.is_some() || xx && current.is_none() || gt && !after || lt && !before)
    };
    Ok(Reply::Int(i64::from(
        conn.ns().expire_at_if(key, at, allow)?,
    )))
}

/// `TTL` / `PTTL` (time left; -1 without expiry, -2 for a missing key) and
/// `EXPIRETIME` / `PEXPIRETIME` (the Unix time it expires at).
pub(crate) fn ttl(conn: &mut Connection, args: &mut Args) -> HostResult {
    let key = args.next_key()?;
    args.finish()?;
    let at = match conn.ns().expire_time(key)? {
        None => return Ok(Reply::Int(-2)),
        Some(0) => return Ok(Reply::Int(-1)),
        Some(at) => at as i64,
    };
    let left = (at - now_ms() as i64).max(0);
    Ok(Reply::Int(match args.command() {
        "ttl" => (left + 500) / 1000,
        "pttl" => left,
        "expiretime" => at / 1000,
        _ => at,
    }))
}

/// `FLUSHDB` / `FLUSHALL [ASYNC|SYNC]`: both run synchronously.
pub(crate) fn flush(conn: &mut Connection, args: &mut Args) -> HostResult {
    match args.rest() {
        [] => {}
        [mode] if matches!(lower(mode).as_str(), "async" | "sync") => {}
        _ => return Err(err(SYNTAX)),
    }
    // In cluster mode there is one database, its keyspace every slot's namespace.
    let dbs = if args.command() == "flushall" && conn.shared.cluster.is_none() {
        0..conn.shared.config.databases
    } else {
        conn.db..conn.db + 1
    };
    let shared = &conn.shared;
    shared.watches.flushing(dbs.clone(), |db, key| {
        let ns = shared.store.ns(shared.key_ns(db, key));
        ns.exists(key).unwrap_or(false)
    });
    for db in dbs {
        shared.keyspace(db).flush()?;
    }
    Ok(Reply::ok())
}
