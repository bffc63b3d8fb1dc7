//! The I/O threads: a fixed pool, each multiplexing its connections with readiness I/O
//! (`mio`, epoll on Linux). A worker reads what a ready connection sent, runs the
//! complete requests, and writes the replies without blocking; a client that does not
//! read its replies stops having its requests run (its input stays buffered, up to the
//! query buffer limit) and never holds up the others.

use super::admit::Deregister;
use super::conn::{BatchKey, Connection, FLUSH_AT};
use super::together;
use super::Shared;
use crate::command::Reply;
use crate::resp;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Registry, Token, Waker};
use std::collections::HashMap;
use std::io::{self, ErrorKind, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

const WAKER: Token = Token(usize::MAX);

/// Bytes read from a socket at a time.
const READ_CHUNK: usize = 16 << 10;

/// Buffers larger than this are given back once empty, so idle clients stay small.
const KEEP_CAPACITY: usize = 64 << 10;

/// A connection accepted and registered, on its way to a worker.
pub(crate) struct Admitted {
    /// First, so that it drops before the stream (see [`Client`]).
    pub(crate) entry: Deregister,
    pub(crate) id: u64,
    pub(crate) stream: std::net::TcpStream,
}

/// The pool: where to send new connections, and the threads to join.
pub(crate) struct Workers {
    inboxes: Vec<(Sender<Admitted>, Arc<Waker>)>,
    threads: Vec<JoinHandle<()>>,
    next: usize,
}

impl Workers {
    pub(crate) fn start(shared: &Arc<Shared>, count: usize) -> io::Result<Workers> {
        let mut workers = Workers {
            inboxes: Vec::new(),
            threads: Vec::new(),
            next: 0,
        };
        for n in 0..count.max(1) {
            let poll = Poll::new()?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
            let (sender, inbox) = channel();
            let shared = shared.clone();
            let thread = std::thread::Builder::new()
                .name(format!("io-{n}"))
                .spawn(move || run(&shared, poll, &inbox))?;
            workers.inboxes.push((sender, waker));
            workers.threads.push(thread);
        }
        Ok(workers)
    }

    /// Hands a connection to the next worker (round robin).
    pub(crate) fn assign(&mut self, admitted: Admitted) {
        let (sender, waker) = &self.inboxes[self.next % self.inboxes.len()];
        self.next = self.next.wrapping_add(1);
        if sender.send(admitted).is_ok() {
            let _ = waker.wake();
        }
    }

    /// Wakes every worker (to notice shutdown) and waits for them.
    pub(crate) fn join(self) {
        for (_, waker) in &self.inboxes {
            let _ = waker.wake();
        }
        drop(self.inboxes);
        for thread in self.threads {
            let _ = thread.join();
        }
    }
}

/// One worker's loop, until the server shuts down.
fn run(shared: &Arc<Shared>, mut poll: Poll, inbox: &Receiver<Admitted>) {
    let mut events = Events::with_capacity(1024);
    let mut clients: HashMap<Token, Client> = HashMap::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    while !shared.is_shutting_down() {
        if let Err(e) = poll.poll(&mut events, Some(Duration::from_millis(200))) {
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        let mut ready = Vec::with_capacity(events.iter().count());
        for event in &events {
            let token = event.token();
            if token == WAKER {
                while let Ok(admitted) = inbox.try_recv() {
                    if let Some(client) = Client::register(shared, poll.registry(), admitted) {
                        clients.insert(client.token, client);
                    }
                }
            } else if let Some(client) = clients.get_mut(&token) {
                client.read_input(&mut chunk);
                ready.push(token);
            }
        }
        // What several clients sent for one key runs as one batch; then each client's
        // other requests run on their own.
        if ready.len() > 1 {
            together::run(&ready, &mut clients);
        }
        for token in ready {
            let Some(client) = clients.get_mut(&token) else {
                continue;
            };
            // A panic outside a command's own guard ends this connection, not the worker.
            let keep = catch_unwind(AssertUnwindSafe(|| {
                client.service(poll.registry(), &mut chunk)
            }))
            .unwrap_or(false);
            if !keep {
                if let Some(mut client) = clients.remove(&token) {
                    let _ = poll.registry().deregister(&mut client.stream);
                }
            }
        }
    }
}

/// A connection served by a worker.
pub(crate) struct Client {
    /// First, so that it drops first: the connection leaves the client table before its
    /// socket closes, and a client that saw the close finds its slot free (`maxclients`).
    _entry: Deregister,
    token: Token,
    stream: TcpStream,
    conn: Connection,
    input: Vec<u8>,
    output: Vec<u8>,
    /// Bytes of `output` already written.
    sent: usize,
    /// Whether the socket is registered for writability (output is pending).
    writing: bool,
    /// The client closed its end, the socket failed, or a reply asked to close.
    closing: bool,
    /// Reading stopped at the query buffer limit, with more perhaps in the socket.
    unread: bool,
}

impl Client {
    fn register(shared: &Arc<Shared>, registry: &Registry, admitted: Admitted) -> Option<Client> {
        admitted.stream.set_nonblocking(true).ok()?;
        let mut stream = TcpStream::from_std(admitted.stream);
        let token = Token(admitted.id as usize);
        registry
            .register(&mut stream, token, Interest::READABLE)
            .ok()?;
        Some(Client {
            _entry: admitted.entry,
            token,
            stream,
            conn: Connection::new(shared.clone(), admitted.id),
            input: Vec::new(),
            output: Vec::new(),
            sent: 0,
            writing: false,
            closing: false,
            unread: false,
        })
    }

    /// Reads everything the client sent so far, or until its input passes the query
    /// buffer limit (then [`Client::service`] answers the error and closes).
    fn read_input(&mut self, chunk: &mut [u8]) {
        let limit = self.conn.shared.live.max_query_buffer();
        while self.input.len() <= limit {
            match self.stream.read(chunk) {
                Ok(0) => {
                    self.closing = true;
                    break;
                }
                Ok(n) => self.input.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.closing = true;
                    break;
                }
            }
        }
        // Stopped by the loop's condition (the limit), not by the socket.
        self.unread = self.input.len() > limit;
    }

    /// The client's whole input, if it is one run of requests that can be batched
    /// with other clients' (and no replies are waiting to be written).
    pub(crate) fn take_whole_batch(&mut self) -> Option<(BatchKey, Vec<Vec<Vec<u8>>>)> {
        if self.closing || self.sent < self.output.len() {
            return None;
        }
        let taken = self.conn.whole_batch(&self.input)?;
        self.input.clear();
        Some(taken)
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.conn.shared
    }

    pub(crate) fn id(&self) -> u64 {
        self.conn.id
    }

    pub(crate) fn protocol(&self) -> crate::resp::Protocol {
        self.conn.protocol
    }

    pub(crate) fn output_mut(&mut self) -> &mut Vec<u8> {
        &mut self.output
    }

    /// Closes the connection once its pending output is written.
    pub(crate) fn close_after_output(&mut self) {
        self.closing = true;
    }

    /// Runs what can run of the input read, writes what can be written; `false` when
    /// the connection must close.
    fn service(&mut self, registry: &Registry, chunk: &mut [u8]) -> bool {
        loop {
            if !self.run_input() {
                return false;
            }
            if self.input.len() > self.conn.shared.live.max_query_buffer() {
                let err = Reply::Error("ERR Protocol error: query buffer limit reached".into());
                resp::encode(&err, self.conn.protocol, &mut self.output);
                let _ = self.flush();
                return false;
            }
            if self.closing {
                let _ = self.flush();
                return false;
            }
            // Reading stopped at the limit and the input has shrunk since: read on (the
            // socket will not be reported readable again for what it already holds).
            if self.unread && self.sent >= self.output.len() {
                self.read_input(chunk);
                continue;
            }
            break;
        }
        self.shrink();
        self.set_writing(registry, self.sent < self.output.len())
    }

    /// Runs the input's complete requests while their replies can be written; `false`
    /// when the connection must close.
    fn run_input(&mut self) -> bool {
        loop {
            if !self.flush() {
                return false;
            }
            if self.sent < self.output.len() || self.input.is_empty() {
                return true;
            }
            let (consumed, close) = self.conn.run_requests(&self.input, &mut self.output);
            self.input.drain(..consumed);
            if close || self.conn.shared.is_shutting_down() {
                let _ = self.flush();
                return false;
            }
            if consumed == 0 {
                return true;
            }
        }
    }

    /// Writes pending output until done or the socket is full; `false` on an error.
    fn flush(&mut self) -> bool {
        while self.sent < self.output.len() {
            match self.stream.write(&self.output[self.sent..]) {
                Ok(0) => return false,
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        self.output.clear();
        self.sent = 0;
        true
    }

    /// Registers for writability while output is pending, and only then.
    fn set_writing(&mut self, registry: &Registry, pending: bool) -> bool {
        if pending == self.writing {
            return true;
        }
        self.writing = pending;
        let interest = if pending {
            Interest::READABLE | Interest::WRITABLE
        } else {
            Interest::READABLE
        };
        registry
            .reregister(&mut self.stream, self.token, interest)
            .is_ok()
    }

    fn shrink(&mut self) {
        if self.input.is_empty() && self.input.capacity() > KEEP_CAPACITY {
            self.input = Vec::new();
        }
        if self.output.is_empty() && self.output.capacity() > KEEP_CAPACITY.max(FLUSH_AT) {
            self.output = Vec::new();
        }
    }
}
