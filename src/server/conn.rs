//! One client connection: read, parse every complete request, run it, write the replies.

use super::commands::{self, Outcome};
use super::{Shared, UNAUTHENTICATED_LIMITS};
use crate::command::{self, Reply};
use crate::resp::{self, Protocol, RequestParser};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
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
}

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
        let mut requests = Vec::new();
        let mut broken = None;
        loop {
            match self.parser.next(&input[consumed..]) {
                Ok(Some((args, used))) => {
                    consumed += used;
                    if !args.is_empty() {
                        requests.push(args);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    broken = Some(Reply::Error(e.to_string()));
                    break;
                }
            }
        }
        let mut at = 0;
        while at < requests.len() {
            let run = if self.authenticated {
                command::batch::run_length(&requests, at)
            } else {
                1
            };
            self.shared
                .stats
                .commands
                .fetch_add(run as u64, Ordering::Relaxed);
            if run > 1 {
                let ns = self.shared.store.ns(self.db);
                for reply in command::batch::execute_run(&ns, &requests[at..at + run]) {
                    resp::encode(&reply, self.protocol, output);
                }
            } else {
                match commands::dispatch(self, &requests[at]) {
                    Outcome::Reply(reply) => resp::encode(&reply, self.protocol, output),
                    Outcome::Close(reply) => {
                        resp::encode(&reply, self.protocol, output);
                        return (consumed, true);
                    }
                    Outcome::Shutdown => {
                        self.shared.begin_shutdown();
                        return (consumed, true);
                    }
                }
            }
            at += run;
            if output.len() >= FLUSH_AT {
                if self.stream.write_all(output).is_err() {
                    return (consumed, true);
                }
                output.clear();
            }
        }
        match broken {
            Some(reply) => {
                resp::encode(&reply, self.protocol, output);
                (consumed, true)
            }
            None => (consumed, false),
        }
    }
}
