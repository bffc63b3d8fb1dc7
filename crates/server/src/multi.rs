//! `MULTI` / `EXEC` / `DISCARD`: a connection's queued transaction, with Redis 7's
//! replies. `EXEC` runs the queue holding the transaction gate exclusively
//! ([`super::gate`]), so no other client's command runs in between.

use super::commands::{self, Outcome};
use super::conn::Connection;
use crate::cluster;
use rocksketch::command::Reply;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// Commands queued since `MULTI`.
#[derive(Default)]
pub(crate) struct Transaction {
    queued: Vec<Vec<Vec<u8>>>,
    bytes: usize,
    /// A queued command was refused (unknown, wrong arity, too large): `EXEC` aborts.
    failed: bool,
}

impl Transaction {
    /// Whether a queued command is a write (as `CLIENT PAUSE WRITE` counts them).
    fn writes(&self) -> bool {
        self.queued.iter().any(|request| {
            let spec = request.first().and_then(|name| crate::table::lookup(name));
            spec.is_some_and(crate::pause::is_write)
        })
    }
}

/// Whether a request runs at once inside a transaction instead of being queued:
/// `EXEC`, `DISCARD`, `MULTI` and `WATCH` (answered errors there), `QUIT`, `RESET`.
pub(crate) fn controls(name: &[u8]) -> bool {
    ["exec", "discard", "multi", "watch", "quit", "reset"]
        .iter()
        .any(|c| name.eq_ignore_ascii_case(c.as_bytes()))
}

const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";

const EXECABORT_BECAUSE: &str = "EXECABORT Transaction discarded because of: ";

/// The reply to a command that panicked where its connection stays open until its
/// replies are written: inside `EXEC`'s array, or in a batch of several clients'.
pub(crate) const PANICKED: &str = "ERR internal error: the command failed unexpectedly";

impl Connection {
    /// Handles `request` if it belongs to the transaction protocol: `MULTI`, `EXEC`,
    /// `DISCARD`, `WATCH` inside `MULTI`, or any command while a transaction is open
    /// (queued): its reply, or [`Outcome::Paused`] for an `EXEC` that a pause holds.
    /// `None`: run it as usual.
    pub(crate) fn transaction_step(&mut self, request: &[Vec<u8>]) -> Option<Outcome> {
        let open = self.transaction.is_some();
        let is = |name: &str| request[0].eq_ignore_ascii_case(name.as_bytes());
        // The common case, checked without allocating: no transaction, no MULTI.
        if !self.authenticated || !(open || is("multi") || is("exec") || is("discard")) {
            return None;
        }
        let name = String::from_utf8_lossy(&request[0]).to_ascii_lowercase();
        let reply = match (name.as_str(), open) {
            // `EXEC` of the wrong arity ends the transaction, as Redis's does.
            ("exec", true) if request.len() != 1 => {
                self.transaction = None;
                Reply::Error(format!(
                    "{EXECABORT_BECAUSE}wrong number of arguments for 'exec' command"
                ))
            }
            // With arguments, these are wrong-arity errors: queued (to fail) or answered.
            ("multi" | "discard", true) if request.len() != 1 => self.queue(request),
            ("multi" | "exec" | "discard", false) if request.len() != 1 => return None,
            ("multi", false) => {
                self.transaction = Some(Transaction::default());
                Reply::ok()
            }
            ("multi", true) => Reply::Error("ERR MULTI calls can not be nested".to_owned()),
            ("exec", false) => Reply::Error("ERR EXEC without MULTI".to_owned()),
            ("discard", false) => Reply::Error("ERR DISCARD without MULTI".to_owned()),
            ("discard", true) => {
                self.transaction = None;
                self.shared.watches.unwatch(&mut self.watched);
                Reply::ok()
            }
            ("exec", true) => match self.exec() {
                Some(reply) => reply,
                None => return Some(Outcome::Paused),
            },
            ("watch", true) => Reply::Error("ERR WATCH inside MULTI is not allowed".to_owned()),
            // Refused inside a transaction (Redis's `no_multi` flag: `SAVE`, `SHUTDOWN`,
            // `PSYNC`, `SYNC`), once its arity is right: the transaction fails.
            (_, true)
                if crate::table::lookup(&request[0]).is_some_and(|s| {
                    s.flags.contains(&"no_multi") && s.arity_ok(request.len())
                }) =>
            {
                if let Some(transaction) = self.transaction.as_mut() {
                    transaction.failed = true;
                }
                Reply::Error("ERR Command not allowed inside a transaction".to_owned())
            }
            // Run at once, as Redis does, even inside a transaction.
            ("quit" | "reset", _) => return None,
            // Redis answers a transaction that holds `CLIENT REPLY` with a broken
            // stream (an array whose elements it then drops): refused here instead.
            ("client", true)
                if request
                    .get(1)
                    .is_some_and(|w| w.eq_ignore_ascii_case(b"reply")) =>
            {
                if let Some(transaction) = self.transaction.as_mut() {
                    transaction.failed = true;
                }
                Reply::Error("ERR CLIENT REPLY is not allowed inside a transaction".to_owned())
            }
            (_, true) => self.queue(request),
            (_, false) => return None,
        };
        let queued = self.transaction.as_ref().map(|t| t.queued.len());
        self.activity.set_queued(queued);
        Some(Outcome::Reply(reply))
    }

    /// Whether the open transaction queued a write (its `EXEC` waits for a `CLIENT
    /// PAUSE WRITE` to end, as Redis's does).
    pub(crate) fn transaction_writes(&self) -> bool {
        self.transaction.as_ref().is_some_and(Transaction::writes)
    }

    /// Queues a command, or answers why it cannot be (which aborts the transaction).
    fn queue(&mut self, request: &[Vec<u8>]) -> Reply {
        let limit = self.shared.config.max_query_buffer;
        let Some(transaction) = self.transaction.as_mut() else {
            return Reply::Error("ERR EXEC without MULTI".to_owned());
        };
        // In cluster mode, a command for another node fails the transaction too, as
        // Redis checks it before queueing.
        let checked = commands::check_call(request)
            .and_then(|spec| self.shared.route(spec, request, self.db, self.readonly));
        if let Err(reply) = checked {
            transaction.failed = true;
            return reply;
        }
        let size: usize = request.iter().map(Vec::len).sum();
        if transaction.bytes.saturating_add(size) > limit {
            transaction.failed = true;
            return Reply::Error(
                "ERR the transaction's queued commands passed the client query buffer limit"
                    .to_owned(),
            );
        }
        transaction.bytes += size;
        transaction.queued.push(request.to_vec());
        Reply::Simple("QUEUED".to_owned())
    }

    /// Runs the queue, every command while no other client's runs; `None` (the
    /// transaction kept) if a pause that began meanwhile holds it.
    fn exec(&mut self) -> Option<Reply> {
        let Some(transaction) = self.transaction.take() else {
            return Some(Reply::Error("ERR EXEC without MULTI".to_owned()));
        };
        let shared = self.shared.clone();
        if transaction.failed {
            shared.watches.unwatch(&mut self.watched);
            return Some(Reply::Error(EXECABORT.to_owned()));
        }
        if let Some(reply) = cluster::cross_slot(&shared, &transaction.queued) {
            shared.watches.unwatch(&mut self.watched);
            return Some(reply);
        }
        let _gate = shared.gate.exclusive();
        // Looked for before, and again here: a pause may have begun in between.
        let pause = &shared.pause;
        if pause.holds_request(&[b"exec".to_vec()], true, || transaction.writes()) {
            self.transaction = Some(transaction);
            return None;
        }
        // Routed when queued: a slot's hand-over may have paused or moved a slot since.
        if let Some(Err(reply)) = transaction
            .queued
            .iter()
            .map(|r| shared.reroute(r))
            .find(Result::is_err)
        {
            shared.watches.unwatch(&mut self.watched);
            return Some(reply);
        }
        // Under the exclusive gate: every write answered before this is counted.
        let dirty = shared.watches.dirty(&self.watched, |db, key| {
            shared
                .store
                .ns(shared.key_ns(db, key))
                .exists(key)
                .unwrap_or(false)
        });
        shared.watches.unwatch(&mut self.watched);
        if dirty {
            return Some(Reply::NullArray);
        }
        let mut replies = Vec::with_capacity(transaction.queued.len());
        // Every queued command runs: one that fails, a panic included (printed by the
        // hook), is answered its error in the array and the others still run, as a
        // command's runtime error does in Redis, so a transaction is never cut short.
        for request in &transaction.queued {
            let db = self.db;
            rocksketch::take_last_lookup();
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| commands::dispatch(self, request)));
            let found = rocksketch::take_last_lookup();
            let reply = match outcome {
                Ok(Outcome::Reply(reply) | Outcome::Close(reply)) => reply,
                // `SHUTDOWN` is refused at queueing; kept for completeness.
                Ok(Outcome::Shutdown | Outcome::Handoff(_)) => {
                    Reply::Error("ERR Command not allowed inside a transaction".to_owned())
                }
                // Inside a transaction, `WAIT` answers at once, as Redis's does.
                Ok(Outcome::Wait(wait)) => Reply::Int(wait.now(&shared.replication)),
                // Checked before the queue ran (a pause cannot begin while it runs).
                Ok(Outcome::Held | Outcome::Paused) => Reply::Error(cluster::TRYAGAIN.to_owned()),
                Err(_) => Reply::Error(PANICKED.to_owned()),
            };
            shared
                .watches
                .touch_answered(db, request, std::slice::from_ref(&reply));
            // Counted (and slow-logged) as it runs, as Redis counts a queued command.
            let failed = u64::from(matches!(reply, Reply::Error(_)));
            let run = std::slice::from_ref(request);
            self.observe(run, started.elapsed(), failed, found, false);
            replies.push(reply);
        }
        Some(Reply::Array(replies))
    }
}
