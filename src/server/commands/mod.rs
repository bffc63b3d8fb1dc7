//! The host's own commands (connection, keyspace, server) and the dispatch to the
//! RedisBloom commands in [`crate::command`].

use super::conn::Connection;
use super::glob;
use crate::command::{self, parse::parse_i64, Reply};
use crate::resp::Protocol;
use crate::store::Namespace;
use crate::{now_ms, KeyType};
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

mod admin;
mod config;
mod connection;
mod info;
mod keyspace;
mod table;

use admin::*;
use config::*;
use connection::*;
use info::*;
use keyspace::*;
use table::*;

pub(crate) use table::{command_names, is_key_read, request_index};

/// What the connection does after a command.
pub(crate) enum Outcome {
    Reply(Reply),
    /// Send the reply, then close the connection (`QUIT`).
    Close(Reply),
    /// Close the connection and stop the server (`SHUTDOWN`).
    Shutdown,
}

fn lower(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).to_ascii_lowercase()
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_owned())
}

fn bulk(text: impl Into<Vec<u8>>) -> Reply {
    Reply::Bulk(text.into())
}

const NOAUTH: &str = "NOAUTH Authentication required.";

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

const SYNTAX: &str = "ERR syntax error";

const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

/// Whether `args` names a known command with a valid number of arguments; else the
/// error Redis answers (what `MULTI` checks before it queues a command).
pub(crate) fn check_call(args: &[Vec<u8>]) -> Result<(), Reply> {
    match lookup(&lower(&args[0])) {
        None => Err(command::unknown_command(args)),
        Some(spec) if !arity_ok(spec.arity, args.len()) => Err(Reply::wrong_arity(spec.name)),
        Some(_) => Ok(()),
    }
}

/// Runs one command for `conn`.
pub(crate) fn dispatch(conn: &mut Connection, args: &[Vec<u8>]) -> Outcome {
    let name = lower(&args[0]);
    if !conn.authenticated && !matches!(name.as_str(), "auth" | "hello" | "quit") {
        return Outcome::Reply(err(NOAUTH));
    }
    let spec = lookup(&name);
    if let Some(spec) = spec {
        if !arity_ok(spec.arity, args.len()) {
            return Outcome::Reply(Reply::wrong_arity(spec.name));
        }
    }
    let reply = match name.as_str() {
        "ping" => ping(args),
        "echo" => bulk(args[1].clone()),
        "hello" => hello(conn, args),
        "auth" => auth(conn, args),
        "client" => client(conn, args),
        "select" => select(conn, args),
        "quit" => return Outcome::Close(Reply::ok()),
        "shutdown" => return Outcome::Shutdown,
        "debug" => debug(conn, args),
        "config" => config(conn, args),
        "slowlog" => slowlog(conn, args),
        "info" => info(conn, args),
        "dbsize" => match conn.ns().counts() {
            Ok((keys, _)) => Reply::Int(keys as i64),
            Err(e) => Reply::from(&e),
        },
        "del" | "unlink" => del(conn, args),
        "exists" => exists(conn, args),
        "type" => key_type(conn, args),
        "keys" => keys(conn, args),
        "scan" => scan(conn, args),
        "expire" | "pexpire" | "expireat" | "pexpireat" => expire(conn, args, &name),
        "ttl" | "pttl" | "expiretime" | "pexpiretime" => ttl(conn, args, &name),
        "persist" => match conn.ns().persist(&args[1]) {
            Ok(done) => Reply::Int(i64::from(done)),
            Err(e) => Reply::from(&e),
        },
        "flushdb" | "flushall" => flush(conn, args, name == "flushall"),
        "command" => command_cmd(conn, args),
        "module" => module(args),
        "save" => save(conn),
        "bgsave" => bgsave(conn, args),
        "lastsave" => lastsave(conn),
        _ => command::execute(&conn.ns(), args),
    };
    Outcome::Reply(reply)
}

impl Connection {
    fn ns(&self) -> Namespace {
        self.shared.store.ns(self.db)
    }
}
