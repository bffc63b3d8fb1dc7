//! One client connection: read, parse every complete request, run it, write the replies.

use super::commands::{self, Outcome};
use super::multi::Transaction;
use super::{Shared, UNAUTHENTICATED_LIMITS};
use crate::command::{self, Reply};
use crate::resp::{self, Protocol, RequestParser};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Replies are written once this much is pending, even in the middle of a pipeline.
const FLUSH_AT: usize = 64 << 10;

/// The state of one connection.
pub(crate) struct Connection {
    pub(crate) shared: Arc<Shared>,
    pub(crate) id: u64,
    stream: TcpStream,
    pub(crate) protocol: Protocol,
    pub(crate) db: u16,
    pub(crate) authenticated: bool,
    parser: RequestParser,
    /// Commands queued since `MULTI`, if one is open.
    pub(crate) transaction: Option<Transaction>,
}

/// What a client gets when its command panicked; the connection is closed after it.
const PANICKED: &str =
    "ERR internal error: the command failed unexpectedly; closing the connection";

impl Connection {
    pub(crate) fn new(shared: Arc<Shared>, id: u64, stream: TcpStream) -> Connection {
        let authenticated = shared.config.requirepass.is_none();
        let limits = if authenticated {
            shared.config.limits
        } else {
            UNAUTHENTICATED_LIMITS
        };
        Connection {
            shared,
            id,
            stream,
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
        self.parser.set_limits(self.shared.config.limits);
    }

    /// Serves the connection until the client leaves, sends `QUIT`, breaks the
    /// protocol, or the server shuts down.
    pub(crate) fn serve(mut self) {
        let mut input: Vec<u8> = Vec::with_capacity(16 << 10);
        let mut output: Vec<u8> = Vec::with_capacity(16 << 10);
        let mut chunk = vec![0u8; 16 << 10];
        loop {
            let read = match self.stream.read(&mut chunk) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            input.extend_from_slice(&chunk[..read]);
            let (consumed, close) = self.run_requests(&input, &mut output);
            input.drain(..consumed);
            if !output.is_empty() && self.stream.write_all(&output).is_err() {
                return;
            }
            output.clear();
            if close || self.shared.is_shutting_down() {
                return;
            }
            if input.len() > self.shared.config.max_query_buffer {
                let err = Reply::Error("ERR Protocol error: query buffer limit reached".into());
                resp::encode(&err, self.protocol, &mut output);
                let _ = self.stream.write_all(&output);
                return;
            }
        }
    }

    /// Runs every complete request in `input`, encoding replies into `output`; returns
    /// the bytes consumed and whether to close the connection afterwards. Neighbouring
    /// requests that can run as one batch (see [`command::batch`]) do so.
    fn run_requests(&mut self, input: &[u8], output: &mut Vec<u8>) -> (usize, bool) {
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
            if !one_only || used == 0 {
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
        loop {
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
                Err(e) => return (requests, consumed, Some(Reply::Error(e.to_string()))),
            }
        }
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
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                self.run_one(&requests[at..at + run], output)
            }));
            match outcome {
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
            if output.len() >= FLUSH_AT {
                if self.stream.write_all(output).is_err() {
                    return true;
                }
                output.clear();
            }
        }
        false
    }

    /// Runs a run of requests from [`command::batch::run_length`] (or one request):
    /// replies go to `output`; an outcome that ends the connection is returned.
    fn run_one(&mut self, run: &[Vec<Vec<u8>>], output: &mut Vec<u8>) -> Option<Outcome> {
        if let [request] = run {
            if let Some(reply) = self.transaction_step(request) {
                resp::encode(&reply, self.protocol, output);
                return None;
            }
        }
        let gate = self.shared.gate;
        let _gate = gate.shared(self.id);
        if run.len() > 1 {
            let ns = self.shared.store.ns(self.db);
            for reply in command::batch::execute_run(&ns, run) {
                resp::encode(&reply, self.protocol, output);
            }
            return None;
        }
        match commands::dispatch(self, &run[0]) {
            Outcome::Reply(reply) => {
                resp::encode(&reply, self.protocol, output);
                None
            }
            other => Some(other),
        }
    }
}
