//! One client connection's state: parse complete requests from its input, run them, and
//! encode the replies. The I/O is the worker's (see [`super::worker`]).

use super::commands::{self, Outcome};
use super::introspect::SlowLog;
use super::multi::Transaction;
use super::{Shared, UNAUTHENTICATED_LIMITS};
use crate::command::table::{self, COMMANDS};
use crate::command::{self, Reply};
use crate::resp::{self, Protocol, RequestParser};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Requests parsed and run in one go: their replies are written before more are run,
/// which bounds the output a pipeline can pile up.
const MAX_RUN: usize = 512;

/// Once this much output is pending, no more requests are run until it is written.
pub(crate) const FLUSH_AT: usize = 64 << 10;

/// The state of one connection.
pub(crate) struct Connection {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: u64,
    pub(crate) protocol: Protocol,
    pub(crate) db: u16,
    pub(crate) authenticated: bool,
    parser: RequestParser,
    /// Commands queued since `MULTI`, if one is open.
    pub(crate) transaction: Option<Transaction>,
}

/// A batch key across connections: database, command and key.
pub(crate) type BatchKey = (u16, &'static str, Vec<u8>);

/// What a client gets when its command panicked; the connection is closed after it.
const PANICKED: &str =
    "ERR internal error: the command failed unexpectedly; closing the connection";

impl Connection {
    pub(crate) fn new(shared: Arc<Shared>, id: u64) -> Connection {
        let authenticated = !shared.live.has_password();
        let limits = if authenticated {
            shared.live.limits(shared.config.limits)
        } else {
            UNAUTHENTICATED_LIMITS
        };
        Connection {
            shared,
            id,
            protocol: Protocol::Resp2,
            db: 0,
            authenticated,
            parser: RequestParser::new(limits),
            transaction: None,
        }
    }

    /// Marks the client authenticated, lifting the small limits of a stranger.
    pub(crate) fn authenticate(&mut self) {
        self.authenticated = true;
        self.parser
            .set_limits(self.shared.live.limits(self.shared.config.limits));
    }

    /// If `input` is nothing but complete requests that can run as one batch (see
    /// [`command::batch`]), on an authenticated connection outside `MULTI`: those
    /// requests, their batch key (with this connection's database) and the bytes they
    /// take. The caller runs them with other connections' requests of the same key.
    pub(crate) fn whole_batch(&mut self, input: &[u8]) -> Option<(BatchKey, Vec<Vec<Vec<u8>>>)> {
        if !self.authenticated || self.transaction.is_some() || input.is_empty() {
            return None;
        }
        let (requests, used, broken) = self.parse_requests(input, false);
        if broken.is_some() || used != input.len() || requests.is_empty() {
            return None;
        }
        let (name, key) = command::batch::batch_key(&requests[0])?;
        if command::batch::run_length(&requests, 0) != requests.len() {
            return None;
        }
        let key = (self.db, name, key.to_vec());
        Some((key, requests))
    }

    /// Runs complete requests from the start of `input` (at most [`MAX_RUN`], and none
    /// once `output` holds [`FLUSH_AT`] bytes), encoding replies into `output`; returns
    /// the bytes consumed and whether to close the connection afterwards. Neighbouring
    /// requests that can run as one batch (see [`command::batch`]) do so.
    pub(crate) fn run_requests(&mut self, input: &[u8], output: &mut Vec<u8>) -> (usize, bool) {
        let mut consumed = 0;
        loop {
            // A stranger's requests are parsed one at a time, each under the limits in
            // force when it is reached: an `AUTH` lifts them for the requests after it.
            let one_only = !self.authenticated;
            let (requests, used, broken) = self.parse_requests(&input[consumed..], one_only);
            consumed += used;
            if self.run_parsed(&requests, output) {
                return (consumed, true);
            }
            if let Some(reply) = broken {
                self.transaction = None;
                resp::encode(&reply, self.protocol, output);
                return (consumed, true);
            }
            if !one_only || used == 0 || output.len() >= FLUSH_AT {
                return (consumed, false);
            }
        }
    }

    /// The complete requests at the start of `input` (only the first if `one_only`),
    /// the bytes they took, and the error of a request that breaks the protocol.
    fn parse_requests(
        &mut self,
        input: &[u8],
        one_only: bool,
    ) -> (Vec<Vec<Vec<u8>>>, usize, Option<Reply>) {
        let mut consumed = 0;
        let mut requests = Vec::new();
        // `CONFIG SET proto-max-bulk-len | max-args` applies from the next request on.
        if self.authenticated {
            let limits = self.shared.live.limits(self.shared.config.limits);
            self.parser.set_limits(limits);
        }
        while requests.len() < MAX_RUN {
            match self.parser.next(&input[consumed..]) {
                Ok(Some((args, used))) => {
                    consumed += used;
                    if !args.is_empty() {
                        requests.push(args);
                        if one_only {
                            return (requests, consumed, None);
                        }
                    }
                }
                Ok(None) => return (requests, consumed, None),
                Err(e) => {
                    log::debug!("protocol error from client {}: {e}", self.id);
                    return (requests, consumed, Some(Reply::Error(e.to_string())));
                }
            }
        }
        (requests, consumed, None)
    }

    /// Runs parsed requests in order, batching neighbours where they allow it; whether
    /// the connection must close.
    fn run_parsed(&mut self, requests: &[Vec<Vec<u8>>], output: &mut Vec<u8>) -> bool {
        let mut at = 0;
        while at < requests.len() {
            // Inside MULTI, every request is queued or answered on its own.
            let run = if self.authenticated && self.transaction.is_none() {
                command::batch::run_length(requests, at)
            } else {
                1
            };
            self.shared
                .stats
                .commands
                .fetch_add(run as u64, Ordering::Relaxed);
            crate::store::take_last_lookup();
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                self.run_one(&requests[at..at + run], output)
            }));
            let failed = match &outcome {
                Ok((_, failed)) => *failed,
                Err(_) => run as u64,
            };
            self.observe(&requests[at..at + run], started.elapsed(), failed);
            match outcome.map(|(outcome, _)| outcome) {
                Ok(Some(Outcome::Reply(_))) | Ok(None) => {}
                Ok(Some(Outcome::Close(reply))) => {
                    resp::encode(&reply, self.protocol, output);
                    return true;
                }
                Ok(Some(Outcome::Shutdown)) => {
                    self.shared.begin_shutdown();
                    return true;
                }
                Err(_) => {
                    // The panic was printed by the panic hook. The command's state is
                    // unknown: answer, and close this connection only.
                    resp::encode(&Reply::Error(PANICKED.to_owned()), self.protocol, output);
                    return true;
                }
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
            if let Some(reply) = self.transaction_step(request) {
                resp::encode(&reply, self.protocol, output);
                return (None, failed(&reply));
            }
        }
        let gate = self.shared.gate;
        let _gate = gate.shared(self.id);
        if run.len() > 1 {
            let ns = self.shared.store.ns(self.db);
            let mut errors = 0;
            for reply in command::batch::execute_run(&ns, run) {
                errors += failed(&reply);
                resp::encode(&reply, self.protocol, output);
            }
            return (None, errors);
        }
        match commands::dispatch(self, &run[0]) {
            Outcome::Reply(reply) => {
                resp::encode(&reply, self.protocol, output);
                (None, failed(&reply))
            }
            other => (Some(other), 0),
        }
    }

    /// Counts a run of one command in `INFO commandstats` and logs it if slow (each
    /// request of a batched run is charged an equal share of the run's time).
    fn observe(&self, run: &[Vec<Vec<u8>>], elapsed: Duration, failed: u64) {
        let shared = &self.shared;
        let Some(index) = run[0].first().and_then(|name| table::request_index(name)) else {
            return;
        };
        let micros = elapsed.as_micros().min(u128::from(u64::MAX)) as u64;
        shared
            .command_stats
            .add(self.id, index, run.len() as u64, micros, failed);
        if COMMANDS[index].is_key_read() {
            if let Some(found) = crate::store::take_last_lookup() {
                shared
                    .command_stats
                    .lookup(self.id, found, run.len() as u64);
            }
        }
        let share = elapsed / run.len() as u32;
        if !SlowLog::is_slow(&shared.live, share) {
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
