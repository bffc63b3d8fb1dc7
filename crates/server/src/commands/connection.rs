//! Connection commands: `PING`, `HELLO`, `AUTH`, `SELECT`, `WATCH`, `UNWATCH`,
//! `RESET` (`CLIENT` is in `client.rs`).

use super::*;

pub(crate) fn ping(_conn: &mut Connection, args: &mut Args) -> HostResult {
    let message = args.next_opt();
    args.finish()?;
    Ok(message.map_or_else(|| Reply::Simple("PONG".to_owned()), bulk))
}

pub(crate) fn echo(_conn: &mut Connection, args: &mut Args) -> HostResult {
    let message = args.next_arg()?;
    args.finish()?;
    Ok(bulk(message))
}

/// `HELLO [protover [AUTH user pass] [SETNAME name]]`.
pub(crate) fn hello(conn: &mut Connection, args: &mut Args) -> HostResult {
    let mut protocol = conn.protocol;
    if let Some(version) = args.next_opt() {
        protocol = match parse_i64(version) {
            None => {
                return Err(err(
                    "ERR Protocol version is not an integer or out of range",
                ))
            }
            Some(2) => Protocol::Resp2,
            Some(3) => Protocol::Resp3,
            Some(_) => return Err(err("NOPROTO unsupported protocol version")),
        };
    }
    let mut credentials = None;
    let mut setname = None;
    while let Some(option) = args.next_opt() {
        match lower(option).as_str() {
            "auth" if args.len() >= 2 => {
                credentials = Some((args.next_arg()?, args.next_arg()?));
            }
            // Checked as it is read, before the login, as Redis does.
            "setname" if !args.is_empty() => {
                let name = args.next_arg()?;
                check_name(name)?;
                setname = Some(name);
            }
            _ => {
                return Err(Reply::Error(format!(
                    "ERR Syntax error in HELLO option '{}'",
                    String::from_utf8_lossy(option)
                )))
            }
        }
    }
    if let Some((user, pass)) = credentials {
        if !password_matches(conn, user, pass) {
            return Err(err(WRONGPASS));
        }
        conn.authenticate();
    }
    if !conn.authenticated {
        return Err(err(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and \
             select the RESP protocol version at the same time",
        ));
    }
    if let Some(name) = setname {
        set_name(conn, name)?;
    }
    conn.protocol = protocol;
    let resp = if protocol == Protocol::Resp3 { 3 } else { 2 };
    conn.shared.update_client(conn.id, |c| c.resp = resp);
    let field = |k: &str| bulk(k);
    Ok(Reply::Map(vec![
        (field("server"), bulk("redis")),
        (field("version"), bulk(REDIS_VERSION)),
        (field("proto"), Reply::Int(i64::from(resp))),
        (field("id"), Reply::Int(conn.id as i64)),
        (field("mode"), bulk("standalone")),
        (field("role"), bulk("master")),
        (field("modules"), Reply::Array(vec![bloom_module()])),
    ]))
}

/// The Redis version the host reports; clients pick features by it.
pub(super) const REDIS_VERSION: &str = "7.2.0";

/// The RedisBloom module, as `MODULE LIST` and `HELLO` describe it.
/// The RedisBloom version `MODULE LIST` and `INFO modules` report (2.6.12: the command
/// set served, `TDIGEST.*` and `TOPK.*` included, is RedisBloom 2.6's, with the error
/// texts of later versions where `COMPAT.md` says so).
pub(super) const BLOOM_MODULE_VERSION: i64 = 20612;

pub(super) fn bloom_module() -> Reply {
    Reply::Map(vec![
        (bulk("name"), bulk("bf")),
        (bulk("ver"), Reply::Int(BLOOM_MODULE_VERSION)),
        (bulk("path"), bulk("rocksketch")),
        (bulk("args"), Reply::Array(vec![])),
    ])
}

/// Whether `user`/`pass` are the default user's credentials. Without a configured
/// password, the default user accepts any (as Redis's `nopass`).
pub(super) fn password_matches(conn: &Connection, user: &[u8], pass: &[u8]) -> bool {
    if user != b"default" {
        return false;
    }
    match conn.shared.live.requirepass() {
        None => true,
        Some(secret) => constant_time_eq(secret.as_bytes(), pass),
    }
}

/// Compares without stopping at the first difference, so timing does not leak a prefix.
pub(super) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// `AUTH [user] pass`.
pub(crate) fn auth(conn: &mut Connection, args: &mut Args) -> HostResult {
    let (user, pass): (&[u8], &[u8]) = match args.rest() {
        [pass] if !conn.shared.live.has_password() => {
            return Err(err(
                "ERR AUTH <password> called without any password configured for the default \
                 user. Are you sure your configuration is correct?",
            ))
        }
        [pass] => (b"default", pass),
        [user, pass] => (user, pass),
        _ => return Err(err(SYNTAX)),
    };
    if password_matches(conn, user, pass) {
        conn.authenticate();
        Ok(Reply::ok())
    } else {
        Err(err(WRONGPASS))
    }
}

pub(super) fn set_name(conn: &Connection, name: &[u8]) -> Result<(), Reply> {
    check_name(name)?;
    let name = String::from_utf8_lossy(name).into_owned();
    conn.shared.update_client(conn.id, |c| c.name = name);
    Ok(())
}

/// Redis's rule for a client's name: printable ASCII without spaces.
fn check_name(name: &[u8]) -> Result<(), Reply> {
    match name.iter().all(|b| (b'!'..=b'~').contains(b)) {
        true => Ok(()),
        false => Err(err(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        )),
    }
}

pub(crate) fn select(conn: &mut Connection, args: &mut Args) -> HostResult {
    let Some(index) = parse_i64(args.next_arg()?) else {
        return Err(err(NOT_INTEGER));
    };
    args.finish()?;
    if conn.shared.cluster.is_some() && index != 0 {
        return Err(err("ERR SELECT is not allowed in cluster mode"));
    }
    match u16::try_from(index) {
        Ok(db) if db < conn.shared.config.databases => {
            conn.db = db;
            conn.shared.update_client(conn.id, |c| c.db = db);
            Ok(Reply::ok())
        }
        _ => Err(err("ERR DB index is out of range")),
    }
}

/// `WATCH key [key ...]`, outside a transaction (inside, the transaction refuses it).
pub(crate) fn watch(conn: &mut Connection, args: &mut Args) -> HostResult {
    let ns = conn.ns();
    for key in args.rest_nonempty()? {
        let exists = ns.exists(key)?;
        conn.shared
            .watches
            .watch(&mut conn.watched, conn.db, key, exists);
    }
    Ok(Reply::ok())
}

/// `UNWATCH`.
pub(crate) fn unwatch(conn: &mut Connection, args: &mut Args) -> HostResult {
    args.finish()?;
    conn.shared.watches.unwatch(&mut conn.watched);
    Ok(Reply::ok())
}

/// `RESET`: the connection as if new, as Redis resets it: no transaction, nothing
/// watched, database 0, RESP2, no name, replies on, no `NO-EVICT` or `NO-TOUCH`, and
/// not authenticated if a password is set.
pub(crate) fn reset(conn: &mut Connection, args: &mut Args) -> HostResult {
    args.finish()?;
    conn.transaction = None;
    conn.activity.set_queued(None);
    conn.replies = Default::default();
    conn.activity
        .set_flag(crate::activity::NO_EVICT | crate::activity::NO_TOUCH, false);
    conn.shared.watches.unwatch(&mut conn.watched);
    conn.db = 0;
    conn.readonly = false;
    conn.protocol = rocksketch::resp::Protocol::Resp2;
    if conn.shared.live.has_password() {
        conn.deauthenticate();
    }
    conn.shared.update_client(conn.id, |c| {
        c.db = 0;
        c.resp = 2;
        c.name.clear();
    });
    Ok(Reply::Simple("RESET".to_owned()))
}
