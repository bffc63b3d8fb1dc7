//! The host's own commands (connection, keyspace, server) and the dispatch of every
//! command through the one table ([`crate::table`]).

use super::conn::Connection;
use super::glob;
use crate::cluster;
use crate::table::{self, Handler, Spec};
use rocksketch::command::args::Args;
use rocksketch::command::{self, parse::parse_i64, Reply};
use rocksketch::resp::Protocol;
use rocksketch::Namespace;
use rocksketch::{now_ms, KeyType};
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

mod admin;
mod client;
mod client_flow;
mod command_meta;
pub(crate) use command_meta::{stat_count, stat_index, stat_name};
mod config;
mod connection;
mod help;
mod info;
mod keyspace;
mod listing;
mod replication;

use connection::{bloom_module, REDIS_VERSION};
pub(crate) use replication::is_this_host;

/// The host's handlers, as the command table names them.
pub(crate) mod host {
    pub(crate) use super::admin::{bgsave, debug, lastsave, module, save, time};
    pub(crate) use super::client::client;
    pub(crate) use super::config::{config, slowlog};
    pub(crate) use super::connection::{auth, echo, hello, ping, reset, select, unwatch, watch};
    pub(crate) use super::info::info;
    pub(crate) use super::keyspace::{
        dbsize, del, exists, expire, flush, key_type, keys, persist, scan, ttl,
    };
    pub(crate) use super::listing::command;
    pub(crate) use super::replication::{replconf, replicaof, role};
}

/// A host command's reply, or its error reply.
pub(crate) type HostResult = Result<Reply, Reply>;

/// What the connection does after a command.
pub(crate) enum Outcome {
    Reply(Reply),
    /// Send the reply, then close the connection (`QUIT`).
    Close(Reply),
    /// Close the connection and stop the server (`SHUTDOWN`).
    Shutdown,
    /// Park the client until the wait is over (`WAIT`), running nothing more of it.
    Wait(crate::replication::Wait),
    /// Hand the connection over to a replica's feed (`PSYNC`).
    Handoff(crate::replication::Handoff),
    /// Park the client, this command included, while a slot's hand-over pauses its
    /// writes; it runs again (and is redirected) once the pause is over.
    Held,
    /// Park the client, this command included, while `CLIENT PAUSE` holds it (found
    /// under the transaction gate, see [`crate::pause`]).
    Paused,
}

/// What a replica answers to a write command of a client.
const READONLY: &str = "READONLY You can't write against a read only replica.";

fn lower(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).to_ascii_lowercase()
}

pub(crate) fn err(text: &str) -> Reply {
    Reply::Error(text.to_owned())
}

pub(crate) fn bulk(text: impl Into<Vec<u8>>) -> Reply {
    Reply::Bulk(text.into())
}

const NOAUTH: &str = "NOAUTH Authentication required.";

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

const SYNTAX: &str = "ERR syntax error";

pub(crate) const NOT_INTEGER: &str = "ERR value is not an integer or out of range";

/// The row of the known command `request` names, if its number of arguments fits;
/// else the error Redis answers (what `MULTI` checks before it queues a command).
pub(crate) fn check_call(request: &[Vec<u8>]) -> Result<&'static Spec, Reply> {
    let spec = request.first().and_then(|name| table::lookup(name));
    checked(spec, request)
}

/// The row `request` names (`spec`, looked up from its name), if its arity fits.
fn checked(spec: Option<&'static Spec>, request: &[Vec<u8>]) -> Result<&'static Spec, Reply> {
    match spec {
        None => Err(command::unknown_command(request)),
        Some(spec) if !spec.arity_ok(request.len()) => Err(Reply::wrong_arity(spec.name)),
        // Only the host's own commands have subcommands: one comparison for the rest.
        Some(spec) if matches!(spec.handler, Handler::Host(_)) => {
            match command_meta::sub_error(spec.name, request) {
                Some(reply) => Err(reply),
                None => Ok(spec),
            }
        }
        Some(spec) => Ok(spec),
    }
}

/// A request refused before it runs. An `EXEC` so refused, in a transaction or not,
/// is answered as Redis answers it: `EXECABORT Transaction discarded because of: ...`.
fn rejected(request: &[Vec<u8>], reply: Reply) -> Outcome {
    let exec = request[0].eq_ignore_ascii_case(b"exec");
    Outcome::Reply(match reply {
        Reply::Error(e) if exec => Reply::Error(format!(
            "EXECABORT Transaction discarded because of: {}",
            e.strip_prefix("ERR ").unwrap_or(&e)
        )),
        other => other,
    })
}

/// Runs one command for `conn`.
pub(crate) fn dispatch(conn: &mut Connection, request: &[Vec<u8>]) -> Outcome {
    let spec = request.first().and_then(|name| table::lookup(name));
    // Redis 7's order: an unknown command or a wrong argument count first, then the
    // login.
    let spec = match checked(spec, request) {
        Ok(spec) => spec,
        Err(reply) => return rejected(request, reply),
    };
    if !conn.authenticated && !spec.flags.contains(&"no_auth") {
        return rejected(request, err(NOAUTH));
    }
    // In cluster mode, a command whose keys another node serves is redirected (a write
    // sent to a replica included); otherwise, the namespace of its keys.
    conn.key_ns = match conn.shared.route(spec, request, conn.db, conn.readonly) {
        Ok(ns) => ns,
        Err(reply) if cluster::is_paused(&reply) && conn.may_hold() => return Outcome::Held,
        Err(reply) => return Outcome::Reply(reply),
    };
    // The flag (an atomic load) first: on a primary, no scan of the command's flags.
    if conn.shared.store.is_replica() && spec.flags.contains(&"write") {
        return Outcome::Reply(err(READONLY));
    }
    if let (Handler::Host(_), [_, word]) = (spec.handler, request) {
        if word.eq_ignore_ascii_case(b"help") {
            if let Some(help) = help::help(spec.name) {
                let disabled = spec.name == "cluster" && conn.shared.cluster.is_none();
                return Outcome::Reply(match disabled {
                    true => err(cluster::commands::DISABLED),
                    false => help,
                });
            }
        }
    }
    let mut args = Args::new(spec.name, request);
    Outcome::Reply(match spec.handler {
        Handler::Sketch(run) => command::reply(run(&conn.ns(), &mut args)),
        Handler::Host(run) => run(conn, &mut args).unwrap_or_else(|reply| reply),
        Handler::Quit => return Outcome::Close(Reply::ok()),
        Handler::Shutdown => match shutdown_options(args.rest()) {
            // `SAVE` makes a checkpoint first; one that fails stops the shutdown unless
            // `FORCE` says to stop anyway, as Redis does.
            Ok(Stop { save, force }) => {
                if !save || conn.shared.saves.save(&conn.shared.store).is_ok() || force {
                    return Outcome::Shutdown;
                }
                err("ERR Errors trying to SHUTDOWN. Check logs.")
            }
            Err(reply) => reply,
        },
        Handler::Wait => match replication::wait(conn, &mut args) {
            // Already acknowledged (a replica may answer before the WAIT arrives): no
            // park, whose first look would be the I/O thread's next tick.
            Ok(wait) => match wait.poll(&conn.shared.replication) {
                Some(count) => Reply::Int(count),
                None => return Outcome::Wait(wait),
            },
            Err(reply) => reply,
        },
        Handler::Psync => match replication::psync(conn, request) {
            Ok(handoff) => return Outcome::Handoff(handoff),
            Err(reply) => reply,
        },
        // Run by the connection before dispatch; here only if it declined the request.
        Handler::Transaction => match conn.transaction_step(request) {
            Some(Outcome::Reply(reply)) => reply,
            Some(other) => return other,
            None => Reply::wrong_arity(spec.name),
        },
    })
}

/// `SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]`: whether to stop. A shutdown here
/// is never in progress (it starts and ends within the command), so `ABORT` has none to
/// abort, as Redis answers when it has none.
fn shutdown_options(options: &[Vec<u8>]) -> Result<Stop, Reply> {
    let (mut save, mut nosave, mut abort, mut force) = (false, false, false, false);
    for option in options {
        match lower(option).as_str() {
            "save" => save = true,
            "nosave" => nosave = true,
            "force" => force = true,
            "now" => {}
            "abort" => abort = true,
            _ => return Err(err(SYNTAX)),
        }
    }
    if (save && nosave) || (abort && options.len() > 1) {
        return Err(err(SYNTAX));
    }
    if abort {
        return Err(err("ERR No shutdown in progress."));
    }
    Ok(Stop { save, force })
}

/// What `SHUTDOWN` was asked to do on its way.
struct Stop {
    save: bool,
    force: bool,
}

impl Connection {
    /// The namespace of the running command's keys.
    fn ns(&self) -> Namespace {
        self.shared.store.ns(self.key_ns)
    }

    /// What the running keyless command lists (`DBSIZE`, `KEYS`, `SCAN`, `FLUSHDB`).
    fn keyspace(&self) -> rocksketch::Span {
        self.shared.keyspace(self.db)
    }
}
