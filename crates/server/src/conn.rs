//! One client connection's state: parse complete requests from its input, run them, and
//! encode the replies. The I/O is the worker's (see [`super::worker`]).

use super::activity::Activity;
use super::commands::{self, Outcome};
use super::introspect::SlowLog;
use super::multi::{self, Transaction};
use super::reply_mode::ReplyMode;
use super::{Shared, UNAUTHENTICATED_LIMITS};
use crate::cluster;
use crate::table::{self, COMMANDS};
use rocksketch::command::{self, Reply};
use rocksketch::resp::{self, Inbox, Protocol, Request};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod parking;

use parking::{Parked, Parking};

/// Requests parsed and run in one go: their replies are written before more are run,
/// which bounds the output a pipeline can pile up, and the I/O thread turns to its
/// other clients before it runs more of this one's (see `worker.rs`).
pub(crate) const MAX_RUN: usize = 512;

/// Once this much output is pending, no more requests are run until it is written.
pub(crate) const FLUSH_AT: usize = 64 << 10;

/// The state of one connection.
pub(crate) struct Connection {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: u64,
    /// What it ran last (`CLIENT LIST`'s `cmd` and `idle`), and its flags.
    pub(crate) activity: Arc<Activity>,
    /// `CLIENT REPLY`'s mode.
    pub(crate) replies: ReplyMode,
    pub(crate) protocol: Protocol,
    pub(crate) db: u16,
    /// The namespace of the running command's keys: `db`'s, or in cluster mode the
    /// namespace of their slot (set by dispatch).
    pub(crate) key_ns: u16,
    /// In cluster mode, whether reads may be served by a replica (`READONLY`).
    pub(crate) readonly: bool,
    pub(crate) authenticated: bool,
    /// What the client sent and has not yet run, parsed once.
    pub(crate) inbox: Inbox,
    /// Commands queued since `MULTI`, if one is open.
    pub(crate) transaction: Option<Transaction>,
    /// The keys this connection `WATCH`es.
    pub(crate) watched: super::watch::Watched,
    /// A `WAIT` in progress, and the requests parsed after it, run once it is over; or
    /// requests held while a slot's hand-over or `CLIENT PAUSE` pauses them.
    parked: Option<Parked>,
    /// Until when a write held for a hand-over may wait (then it is answered
    /// `TRYAGAIN`); none while no request of this connection is held.
    held_until: Option<Instant>,
    /// The port a replica said it listens on (`REPLCONF listening-port`).
    pub(crate) replica_port: u16,
    /// Set by `PSYNC`: the connection is handed over to a replica's feed.
    pub(crate) handoff: Option<crate::replication::Handoff>,
    /// Set by `CLUSTERX IMPORT slot 0`: the link a migrating node sends the slot by.
    pub(crate) import_link: Option<crate::cluster::ImportLink>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.shared.watches.unwatch(&mut self.watched);
        if let Some(link) = self.import_link.take() {
            crate::cluster::link_closed(&self.shared, link);
        }
    }
}

/// A batch key across connections: database, command and key.
pub(crate) type BatchKey = (u16, &'static str, Vec<u8>);

/// What a client gets when its command panicked; the connection is closed after it.
const PANICKED: &str =
    "ERR internal error: the command failed unexpectedly; closing the connection";

impl Connection {
    pub(crate) fn new(shared: Arc<Shared>, id: u64, activity: Arc<Activity>) -> Connection {
        let authenticated = !shared.live.has_password();
        let limits = if authenticated {
            shared.live.limits(shared.config.limits)
        } else {
            UNAUTHENTICATED_LIMITS
        };
        Connection {
            shared,
            id,
            activity,
            replies: ReplyMode::default(),
            protocol: Protocol::Resp2,
            db: 0,
            key_ns: 0,
            readonly: false,
            authenticated,
            inbox: Inbox::new(limits),
            transaction: None,
            watched: Default::default(),
            parked: None,
            held_until: None,
            replica_port: 0,
            handoff: None,
            import_link: None,
        }
    }

    /// Marks the client authenticated, lifting the small limits of a stranger.
    pub(crate) fn authenticate(&mut self) {
        self.authenticated = true;
        self.inbox
            .set_limits(self.shared.live.limits(self.shared.config.limits));
    }

    /// Parses what the inbox holds, as far as the next run may go: up to [`MAX_RUN`]
    /// requests, or one from a client that has not authenticated (its next request is
    /// parsed under the limits the one before it leaves: an `AUTH` lifts them).
    /// `CONFIG SET proto-max-bulk-len | max-args` applies from the next request parsed.
    pub(crate) fn parse_ahead(&mut self) {
        if self.authenticated {
            let limits = self.shared.live.limits(self.shared.config.limits);
            self.inbox.set_limits(limits);
            self.inbox.parse(MAX_RUN);
        } else {
            self.inbox.parse(1);
        }
    }

    /// Back to a stranger's small limits, for the requests after this one (`RESET`).
    pub(crate) fn deauthenticate(&mut self) {
        self.authenticated = false;
        self.inbox.set_limits(UNAUTHENTICATED_LIMITS);
    }

    /// If the inbox holds nothing but complete requests that can run as one batch (see
    /// [`command::batch`]), on an authenticated connection outside `MULTI`: those
    /// requests, taken, and their batch key (with this connection's database). The
    /// caller runs them with other connections' requests of the same key. Otherwise
    /// the inbox is left as it was, for [`Connection::run_requests`].
    pub(crate) fn whole_batch(&mut self) -> Option<(BatchKey, Vec<Request>)> {
        if !self.authenticated
            || self.transaction.is_some()
            || self.parked.is_some()
            || !self.replies.is_on()
            || self.shared.pause.may_be_active()
        {
            return None;
        }
        self.parse_ahead();
        let (shared, db, readonly) = (&self.shared, self.db, self.readonly);
        // In cluster mode, only requests this node runs: a redirection is answered
        // by `run_requests`.
        let one_run = |queue: &[Request]| {
            let Some((spec, _)) = command::table::batch_key(&queue[0]) else {
                return false;
            };
            command::batch::run_length(queue, 0) == queue.len()
                && shared.route(spec, &queue[0], db, readonly).is_ok()
        };
        let requests = self.inbox.take_whole_if(one_run)?;
        let (name, key) = command::batch::batch_key(&requests[0])?;
        Some(((self.db, name, key.to_vec()), requests))
    }

    /// Runs one slice of the inbox's complete requests (at most [`MAX_RUN`]; a
    /// stranger's one at a time until `output` holds [`FLUSH_AT`] bytes), encoding
    /// replies into `output`; whether to close the connection once they are written.
    /// Neighbouring requests that can run as one batch (see [`command::batch`]) do so.
    /// A request that breaks the protocol is answered, after the requests before it,
    /// and closes the connection.
    pub(crate) fn run_requests(&mut self, output: &mut Vec<u8>) -> bool {
        for _ in 0..MAX_RUN {
            if self.parked.is_some() {
                return false;
            }
            let one_only = !self.authenticated;
            self.parse_ahead();
            let requests = self.inbox.take(MAX_RUN);
            if requests.is_empty() {
                if let Some(error) = self.inbox.error() {
                    log::debug!("protocol error from client {}: {error}", self.id);
                    let reply = Reply::Error(error.to_string());
                    self.transaction = None;
                    if !self.replies.drops_reply() {
                        resp::encode(&reply, self.protocol, output);
                    }
                    return true;
                }
                return false;
            }
            if self.run_parsed(&requests, output) {
                return true;
            }
            if !one_only || output.len() >= FLUSH_AT {
                return false;
            }
        }
        false
    }

    /// Runs parsed requests in order, batching neighbours where they allow it; whether
    /// the connection must close.
    fn run_parsed(&mut self, requests: &[Vec<Vec<u8>>], output: &mut Vec<u8>) -> bool {
        let mut at = 0;
        while at < requests.len() {
            if self.shared.pause.holds(self, &requests[at]) {
                self.park(Parking::ClientPause, requests[at..].to_vec());
                return false;
            }
            // Inside MULTI, every request is queued or answered on its own; under
            // `CLIENT REPLY OFF | SKIP`, every request is answered (or not) on its own.
            let run = if self.authenticated && self.transaction.is_none() && self.replies.is_on() {
                command::batch::run_length(requests, at)
            } else {
                1
            };
            let mark = output.len();
            self.shared
                .stats
                .commands
                .fetch_add(run as u64, Ordering::Relaxed);
            rocksketch::take_last_lookup();
            // A request an open transaction queues (or refuses), rather than runs.
            let queued = self.transaction.is_some() && !multi::controls(&requests[at][0]);
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                self.run_one(&requests[at..at + run], output)
            }));
            let failed = match &outcome {
                Ok((_, failed)) => *failed,
                Err(_) => run as u64,
            };
            let found = rocksketch::take_last_lookup();
            if !matches!(outcome, Ok((Some(Outcome::Paused), _))) {
                self.observe(
                    &requests[at..at + run],
                    started.elapsed(),
                    failed,
                    found,
                    queued,
                );
            }
            let held = matches!(outcome, Ok((Some(Outcome::Held | Outcome::Paused), _)));
            if !matches!(outcome, Ok((Some(Outcome::Held), _))) {
                self.held_until = None;
            }
            // Whether `CLIENT REPLY` drops this command's reply (all that `output`
            // gained since `mark`), decided once it has run.
            let dropped = self.replies.drops_reply();
            if !held {
                self.replies.next_command();
            }
            match outcome.map(|(outcome, _)| outcome) {
                Ok(Some(Outcome::Reply(_))) | Ok(None) => {}
                Ok(Some(Outcome::Close(reply))) => {
                    if !dropped {
                        resp::encode(&reply, self.protocol, output);
                    }
                    return true;
                }
                Ok(Some(Outcome::Shutdown)) => {
                    self.shared.begin_shutdown();
                    return true;
                }
                Ok(Some(Outcome::Wait(wait))) => {
                    self.activity.begin_wait();
                    self.park(Parking::Wait(wait, dropped), requests[at + run..].to_vec());
                    return false;
                }
                Ok(Some(Outcome::Held)) => {
                    self.hold(requests[at..].to_vec());
                    return false;
                }
                Ok(Some(Outcome::Paused)) => {
                    self.park(Parking::ClientPause, requests[at..].to_vec());
                    return false;
                }
                Ok(Some(Outcome::Handoff(handoff))) => {
                    self.handoff = Some(handoff);
                    return true;
                }
                Err(_) => {
                    // The panic was printed by the panic hook. The command's state is
                    // unknown: answer, and close this connection only.
                    output.truncate(mark);
                    if !dropped {
                        resp::encode(&Reply::Error(PANICKED.to_owned()), self.protocol, output);
                    }
                    return true;
                }
            }
            if dropped {
                output.truncate(mark);
            }
            at += run;
        }
        false
    }

    /// Runs a run of requests from [`command::batch::run_length`] (or one request):
    /// replies go to `output`; an outcome that ends the connection is returned, with
    /// how many of the run's replies were errors.
    fn run_one(&mut self, run: &[Vec<Vec<u8>>], output: &mut Vec<u8>) -> (Option<Outcome>, u64) {
        let failed = |reply: &Reply| u64::from(matches!(reply, Reply::Error(_)));
        if let [request] = run {
            match self.transaction_step(request) {
                Some(Outcome::Reply(reply)) => {
                    resp::encode(&reply, self.protocol, output);
                    return (None, failed(&reply));
                }
                Some(other) => return (Some(other), 0),
                None => {}
            }
        }
        let gate = self.shared.gate;
        // `CLIENT PAUSE` runs outside the gate, then takes it exclusively as a barrier
        // (see `pause.rs`); every other command looks for a pause again under it.
        let pausing = run.len() == 1 && crate::pause::is_client_pause(&run[0]);
        let _gate = (!pausing).then(|| gate.shared(self.id));
        if !pausing && self.shared.pause.holds(self, &run[0]) {
            return (Some(Outcome::Paused), 0);
        }
        if run.len() > 1 {
            // A run exists only of a batchable command of a valid arity.
            let routed = match command::table::batch_key(&run[0]) {
                Some((spec, _)) => self.shared.route(spec, &run[0], self.db, self.readonly),
                None => Ok(self.db),
            };
            let ns = match routed {
                Ok(ns) => self.shared.store.ns(ns),
                Err(reply) if cluster::is_paused(&reply) && self.may_hold() => {
                    return (Some(Outcome::Held), 0);
                }
                Err(reply) => {
                    for _ in run {
                        resp::encode(&reply, self.protocol, output);
                    }
                    return (None, run.len() as u64);
                }
            };
            let mut errors = 0;
            let replies = command::batch::execute_run(&ns, run);
            // Every request of the run names the same command and key.
            self.shared
                .watches
                .touch_answered(self.db, &run[0], &replies);
            for reply in replies {
                errors += failed(&reply);
                resp::encode(&reply, self.protocol, output);
            }
            return (None, errors);
        }
        let db = self.db;
        let outcome = commands::dispatch(self, &run[0]);
        match &outcome {
            Outcome::Reply(reply) => {
                let replies = std::slice::from_ref(reply);
                self.shared.watches.touch_answered(db, &run[0], replies);
            }
            _ => self.shared.watches.touch(db, &run[0]),
        }
        if pausing {
            drop(gate.exclusive());
        }
        match outcome {
            Outcome::Reply(reply) => {
                resp::encode(&reply, self.protocol, output);
                (None, failed(&reply))
            }
            other => (Some(other), 0),
        }
    }

    /// Counts a run of one command in `INFO commandstats` (and, for a key read, the
    /// keyspace hit or miss `found` says) and logs it if slow (each request of a batched
    /// run is charged an equal share of the run's time). A request a transaction
    /// `queued` counts when `EXEC` runs it, as Redis counts it; refused there, or
    /// refused for its argument count, it counts as rejected, not as a call.
    pub(crate) fn observe(
        &self,
        run: &[Request],
        elapsed: Duration,
        failed: u64,
        found: Option<bool>,
        queued: bool,
    ) {
        let shared = &self.shared;
        let Some(index) = run[0].first().and_then(|name| table::request_index(name)) else {
            return;
        };
        self.activity.ran(index, &run[run.len() - 1]);
        let Some(stat) = commands::stat_index(index, &run[0]) else {
            return;
        };
        let refused = failed > 0 && (queued || commands::check_call(&run[0]).is_err());
        if refused {
            shared.command_stats.reject(self.id, stat, failed);
        }
        if queued || refused {
            return;
        }
        let micros = elapsed.as_micros().min(u128::from(u64::MAX)) as u64;
        shared
            .command_stats
            .add(self.id, stat, run.len() as u64, micros, failed);
        let spec = &COMMANDS.rows()[index];
        if spec.is_key_read() {
            if let Some(found) = found {
                shared
                    .command_stats
                    .lookup(self.id, found, run.len() as u64);
            }
        }
        let share = elapsed / run.len() as u32;
        // `EXEC` (Redis's `skip_slowlog`): the commands it ran are logged instead.
        if !SlowLog::is_slow(&shared.live, share) || spec.flags.contains(&"skip_slowlog") {
            return;
        }
        for request in run {
            log::debug!(
                "slow command: {} us: {}",
                share.as_micros(),
                String::from_utf8_lossy(&request.join(&b' ')[..])
                    .chars()
                    .take(200)
                    .collect::<String>()
            );
            shared.slowlog.record(&shared.live, share, request, || {
                let clients = shared.clients.lock();
                clients.get(&self.id).map_or_else(Default::default, |c| {
                    (c.info.addr.clone(), c.info.name.clone())
                })
            });
        }
    }
}
