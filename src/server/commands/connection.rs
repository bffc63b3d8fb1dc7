//! Connection commands: `PING`, `HELLO`, `AUTH`, `CLIENT`, `SELECT`.

use super::*;

pub(super) fn ping(args: &[Vec<u8>]) -> Reply {
    match args {
        [_] => Reply::Simple("PONG".to_owned()),
        [_, message] => bulk(message.clone()),
        _ => Reply::wrong_arity("ping"),
    }
}

/// `HELLO [protover [AUTH user pass] [SETNAME name]]`.
pub(super) fn hello(conn: &mut Connection, args: &[Vec<u8>]) -> Reply {
    let mut protocol = conn.protocol;
    if let Some(version) = args.get(1) {
        protocol = match parse_i64(version) {
            None => return err("ERR Protocol version is not an integer or out of range"),
            Some(2) => Protocol::Resp2,
            Some(3) => Protocol::Resp3,
            Some(_) => return err("NOPROTO unsupported protocol version"),
        };
    }
    let mut credentials = None;
    let mut setname = None;
    let mut at = 2;
    while at < args.len() {
        let option = lower(&args[at]);
        match option.as_str() {
            "auth" if at + 2 < args.len() => {
                credentials = Some((&args[at + 1], &args[at + 2]));
                at += 3;
            }
            "setname" if at + 1 < args.len() => {
                setname = Some(&args[at + 1]);
                at += 2;
            }
            _ => {
                return Reply::Error(format!(
                    "ERR Syntax error in HELLO option '{}'",
                    String::from_utf8_lossy(&args[at])
                ))
            }
        }
    }
    if let Some((user, pass)) = credentials {
        if !password_matches(conn, user, pass) {
            return err(WRONGPASS);
        }
        conn.authenticate();
    }
    if !conn.authenticated {
        return err(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and \
             select the RESP protocol version at the same time",
        );
    }
    if let Some(name) = setname {
        if let Err(reply) = set_name(conn, name) {
            return reply;
        }
    }
    conn.protocol = protocol;
    let resp = if protocol == Protocol::Resp3 { 3 } else { 2 };
    conn.shared.update_client(conn.id, |c| c.resp = resp);
    let field = |k: &str| bulk(k);
    Reply::Map(vec![
        (field("server"), bulk("redis")),
        (field("version"), bulk(REDIS_VERSION)),
        (field("proto"), Reply::Int(i64::from(resp))),
        (field("id"), Reply::Int(conn.id as i64)),
        (field("mode"), bulk("standalone")),
        (field("role"), bulk("master")),
        (field("modules"), Reply::Array(vec![bloom_module()])),
    ])
}

/// The Redis version the host reports; clients pick features by it.
pub(super) const REDIS_VERSION: &str = "7.2.0";

/// The RedisBloom module, as `MODULE LIST` and `HELLO` describe it.
pub(super) fn bloom_module() -> Reply {
    Reply::Map(vec![
        (bulk("name"), bulk("bf")),
        (bulk("ver"), Reply::Int(20612)),
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
pub(super) fn auth(conn: &mut Connection, args: &[Vec<u8>]) -> Reply {
    let (user, pass): (&[u8], &[u8]) = match args {
        [_, pass] => (b"default", pass),
        [_, user, pass] => (user, pass),
        _ => return err(SYNTAX),
    };
    if !conn.shared.live.has_password() && args.len() == 2 {
        return err(
            "ERR AUTH <password> called without any password configured for the default user. \
             Are you sure your configuration is correct?",
        );
    }
    if password_matches(conn, user, pass) {
        conn.authenticate();
        Reply::ok()
    } else {
        err(WRONGPASS)
    }
}

pub(super) fn set_name(conn: &Connection, name: &[u8]) -> Result<(), Reply> {
    if name.iter().any(|b| !(b'!'..=b'~').contains(b)) {
        return Err(err(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    let name = String::from_utf8_lossy(name).into_owned();
    conn.shared.update_client(conn.id, |c| c.name = name);
    Ok(())
}

/// `CLIENT SETINFO | SETNAME | GETNAME | ID | INFO | LIST`.
pub(super) fn client(conn: &mut Connection, args: &[Vec<u8>]) -> Reply {
    let sub = lower(&args[1]);
    let arity = |n: usize| {
        if args.len() == n {
            None
        } else {
            Some(Reply::Error(format!(
                "ERR wrong number of arguments for 'client|{sub}' command"
            )))
        }
    };
    match sub.as_str() {
        "id" => arity(2).unwrap_or(Reply::Int(conn.id as i64)),
        "setname" => arity(3).unwrap_or_else(|| match set_name(conn, &args[2]) {
            Ok(()) => Reply::ok(),
            Err(reply) => reply,
        }),
        "getname" => arity(2).unwrap_or_else(|| {
            let name = conn
                .shared
                .clients
                .lock()
                .get(&conn.id)
                .map(|c| c.info.name.clone());
            match name {
                Some(name) if !name.is_empty() => bulk(name),
                _ => Reply::Nil,
            }
        }),
        "setinfo" => arity(4).unwrap_or_else(|| {
            let value = String::from_utf8_lossy(&args[3]).into_owned();
            if value.bytes().any(|b| !(b'!'..=b'~').contains(&b)) {
                return Reply::Error(format!(
                    "ERR {} cannot contain spaces, newlines or special characters.",
                    lower(&args[2])
                ));
            }
            match lower(&args[2]).as_str() {
                "lib-name" => conn.shared.update_client(conn.id, |c| c.lib_name = value),
                "lib-ver" => conn.shared.update_client(conn.id, |c| c.lib_ver = value),
                _ => {
                    return Reply::Error(format!(
                        "ERR Unrecognized option '{}'",
                        String::from_utf8_lossy(&args[2])
                    ))
                }
            }
            Reply::ok()
        }),
        "info" => arity(2).unwrap_or_else(|| {
            let clients = conn.shared.clients.lock();
            let line = clients
                .get(&conn.id)
                .map(|c| client_line(conn.id, &c.info))
                .unwrap_or_default();
            bulk(line)
        }),
        "list" => {
            let clients = conn.shared.clients.lock();
            let mut ids: Vec<&u64> = clients.keys().collect();
            ids.sort();
            let text: String = ids
                .into_iter()
                .filter_map(|id| clients.get(id).map(|c| client_line(*id, &c.info)))
                .collect();
            bulk(text)
        }
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

pub(super) fn client_line(id: u64, c: &crate::server::ClientInfo) -> String {
    let age = c.connected.map_or(0, |t| t.elapsed().as_secs());
    format!(
        "id={id} addr={} laddr={} fd=0 name={} age={age} idle=0 flags=N db={} sub=0 psub=0 \
         ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 \
         omem=0 tot-mem=0 events=r cmd=client|list user=default redir=-1 resp={} \
         lib-name={} lib-ver={}\n",
        c.addr, c.laddr, c.name, c.db, c.resp, c.lib_name, c.lib_ver
    )
}

pub(super) fn select(conn: &mut Connection, args: &[Vec<u8>]) -> Reply {
    let Some(index) = parse_i64(&args[1]) else {
        return err(NOT_INTEGER);
    };
    match u16::try_from(index) {
        Ok(db) if db < conn.shared.config.databases => {
            conn.db = db;
            conn.shared.update_client(conn.id, |c| c.db = db);
            Reply::ok()
        }
        _ => err("ERR DB index is out of range"),
    }
}
