//! The I/O threads: a fixed pool, each multiplexing its connections with readiness I/O
//! (`mio`, epoll on Linux). A worker reads what a ready connection sent, runs the
//! complete requests, and writes the replies without blocking; a client that does not
//! read its replies stops having its requests run (its input stays buffered, up to the
//! query buffer limit) and never holds up the others.
//!
//! Fairness: each turn of the loop gives every client with work one slice, at most
//! [`READ_AHEAD`] bytes read and one run of requests ([`super::conn::MAX_RUN`]); a
//! client left with work (input parsed and not run, or bytes still in its socket) is
//! taken up again on the next turn, after the others, without waiting for an event.
//! A client that half-closes (shuts down its writing side) has every complete request
//! it sent run and answered before the connection closes.

use super::admit::Deregister;
use super::conn::{BatchKey, Connection, FLUSH_AT};
use super::together;
use super::Shared;
use crate::command::Reply;
use crate::resp;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Registry, Token, Waker};
use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::io::{self, ErrorKind, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

const WAKER: Token = Token(usize::MAX);

/// Bytes read from a socket at a time.
const READ_CHUNK: usize = 16 << 10;

/// Input a client may have read ahead of what it has run: reading stops there for the
/// turn (unless no complete request is in yet: a large request is read whole).
const READ_AHEAD: usize = 256 << 10;

/// Output buffers larger than this are given back once empty, so idle clients stay small.
const KEEP_CAPACITY: usize = 64 << 10;

/// A connection accepted and registered, on its way to a worker.
pub(crate) struct Admitted {
    /// First, so that it drops before the stream (see [`Client`]).
    pub(crate) entry: Deregister,
    pub(crate) id: u64,
    pub(crate) stream: std::net::TcpStream,
    /// Its kill switch's flag: a connection killed before its worker took it is
    /// closed as it arrives.
    pub(crate) killed: Arc<AtomicBool>,
}

/// Where a worker is reached from other threads: its new connections, the connections
/// to kill, and the waker that makes it look.
struct Lane {
    sender: Sender<Admitted>,
    kills: Arc<Mutex<Vec<Token>>>,
    waker: Arc<Waker>,
}

/// The pool: where to send new connections, and the threads to join.
pub(crate) struct Workers {
    lanes: Vec<Lane>,
    threads: Vec<JoinHandle<()>>,
    next: usize,
}

/// Ends one connection from any thread (`CLIENT KILL`): its worker closes it as soon as
/// it wakes, before running anything more of it.
#[derive(Clone)]
pub(crate) struct KillSwitch {
    token: Token,
    flag: Arc<AtomicBool>,
    kills: Arc<Mutex<Vec<Token>>>,
    waker: Arc<Waker>,
}

impl KillSwitch {
    pub(crate) fn kill(&self) {
        if !self.flag.swap(true, Ordering::SeqCst) {
            self.kills.lock().push(self.token);
            let _ = self.waker.wake();
        }
    }

    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }
}

impl Workers {
    pub(crate) fn start(shared: &Arc<Shared>, count: usize) -> io::Result<Workers> {
        let mut workers = Workers {
            lanes: Vec::new(),
            threads: Vec::new(),
            next: 0,
        };
        for n in 0..count.max(1) {
            let poll = Poll::new()?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
            let (sender, inbox) = channel();
            let kills = Arc::new(Mutex::new(Vec::new()));
            let shared = shared.clone();
            let lane_kills = kills.clone();
            let thread = std::thread::Builder::new()
                .name(format!("io-{n}"))
                .spawn(move || run(&shared, poll, &inbox, &lane_kills))?;
            workers.lanes.push(Lane {
                sender,
                kills,
                waker,
            });
            workers.threads.push(thread);
        }
        Ok(workers)
    }

    /// The worker the next connection goes to (round robin), and the kill switch of
    /// connection `id` there.
    pub(crate) fn next_lane(&mut self, id: u64) -> (usize, KillSwitch) {
        let lane = self.next % self.lanes.len();
        self.next = self.next.wrapping_add(1);
        let switch = KillSwitch {
            token: Token(id as usize),
            flag: Arc::new(AtomicBool::new(false)),
            kills: self.lanes[lane].kills.clone(),
            waker: self.lanes[lane].waker.clone(),
        };
        (lane, switch)
    }

    /// Hands a connection to worker `lane` (from [`Workers::next_lane`]).
    pub(crate) fn assign(&mut self, lane: usize, admitted: Admitted) {
        let lane = &self.lanes[lane];
        if lane.sender.send(admitted).is_ok() {
            let _ = lane.waker.wake();
        }
    }

    /// Wakes every worker (to notice shutdown) and waits for them.
    pub(crate) fn join(self) {
        for lane in &self.lanes {
            let _ = lane.waker.wake();
        }
        drop(self.lanes);
        for thread in self.threads {
            let _ = thread.join();
        }
    }
}

/// One worker's loop, until the server shuts down.
fn run(
    shared: &Arc<Shared>,
    mut poll: Poll,
    inbox: &Receiver<Admitted>,
    kills: &Mutex<Vec<Token>>,
) {
    let mut events = Events::with_capacity(1024);
    let mut clients: HashMap<Token, Client> = HashMap::new();
    let mut chunk = vec![0u8; READ_CHUNK];
    // Clients left with work by their last slice, in the order they are taken up.
    let mut busy: Vec<Token> = Vec::new();
    let mut ready: Vec<Token> = Vec::new();
    let mut seen: HashSet<Token> = HashSet::new();
    while !shared.is_shutting_down() {
        // With clients still owed a slice, only look for events, do not wait for them.
        let timeout = if busy.is_empty() {
            Duration::from_millis(200)
        } else {
            Duration::ZERO
        };
        if let Err(e) = poll.poll(&mut events, Some(timeout)) {
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        ready.clear();
        seen.clear();
        for token in busy.drain(..) {
            if seen.insert(token) {
                ready.push(token);
            }
        }
        for event in &events {
            let token = event.token();
            if token == WAKER {
                while let Ok(admitted) = inbox.try_recv() {
                    if admitted.killed.load(Ordering::SeqCst) {
                        continue;
                    }
                    if let Some(client) = Client::register(shared, poll.registry(), admitted) {
                        clients.insert(client.token, client);
                    }
                }
                for token in std::mem::take(&mut *kills.lock()) {
                    if let Some(mut client) = clients.remove(&token) {
                        let _ = poll.registry().deregister(&mut client.stream);
                    }
                }
            } else if let Some(client) = clients.get_mut(&token) {
                client.read_input(&mut chunk);
                if seen.insert(token) {
                    ready.push(token);
                }
            }
        }
        // What several clients sent for one key runs as one batch; then each client's
        // other requests run on their own.
        if ready.len() > 1 {
            together::run(&ready, &mut clients);
        }
        for &token in &ready {
            let Some(client) = clients.get_mut(&token) else {
                continue;
            };
            // A panic outside a command's own guard ends this connection, not the worker.
            let turn = catch_unwind(AssertUnwindSafe(|| {
                client.service(poll.registry(), &mut chunk)
            }))
            .unwrap_or(Turn::Close);
            match turn {
                Turn::Idle => {}
                Turn::Busy => busy.push(token),
                Turn::Close => {
                    if let Some(mut client) = clients.remove(&token) {
                        let _ = poll.registry().deregister(&mut client.stream);
                    }
                }
            }
        }
    }
}

/// What a client's slice left it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// Nothing to do until its socket is ready again.
    Idle,
    /// More to do now: take it up again on the next turn.
    Busy,
    /// The connection must close.
    Close,
}

/// A connection served by a worker.
pub(crate) struct Client {
    /// First, so that it drops first: the connection leaves the client table before its
    /// socket closes, and a client that saw the close finds its slot free (`maxclients`).
    _entry: Deregister,
    token: Token,
    stream: TcpStream,
    conn: Connection,
    output: Vec<u8>,
    /// Bytes of `output` already written.
    sent: usize,
    /// Whether the socket is registered for writability (output is pending).
    writing: bool,
    /// The client shut down its writing side: nothing more will arrive.
    eof: bool,
    /// The socket failed: close at once.
    failed: bool,
    /// Run nothing more; close once the pending output is written (`QUIT`, a protocol
    /// error, a panic).
    closing: bool,
    /// Reading stopped before the socket was drained (the read-ahead or the query
    /// buffer limit): the socket will not be reported readable again for what it holds.
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
            output: Vec::new(),
            sent: 0,
            writing: false,
            eof: false,
            failed: false,
            closing: false,
            unread: false,
        })
    }

    /// Reads what the client sent, until the socket is drained, the input read ahead of
    /// what has run reaches [`READ_AHEAD`] with a complete request in it, or the input
    /// passes the query buffer limit (then [`Client::service`] answers the error).
    ///
    /// While replies wait to be written, it reads on to the limit: a client that
    /// writes its whole pipeline before it reads a reply would otherwise block in its
    /// send as the server waits for it to read (Redis, too, keeps reading then).
    fn read_input(&mut self, chunk: &mut [u8]) {
        if self.eof || self.failed {
            return;
        }
        let limit = self.conn.shared.live.max_query_buffer();
        let blocked = self.sent < self.output.len();
        self.unread = false;
        loop {
            let buffered = self.conn.inbox.buffered();
            if buffered > limit {
                self.unread = true;
                return;
            }
            if buffered >= READ_AHEAD && !blocked {
                self.conn.parse_ahead();
                if self.conn.inbox.queued() > 0 {
                    self.unread = true;
                    return;
                }
            }
            match self.stream.read(chunk) {
                Ok(0) => {
                    self.eof = true;
                    return;
                }
                Ok(n) => self.conn.inbox.extend(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.failed = true;
                    return;
                }
            }
        }
    }

    /// The client's whole input, if it is one run of requests that can be batched
    /// with other clients' (and no replies are waiting to be written).
    pub(crate) fn take_whole_batch(&mut self) -> Option<(BatchKey, Vec<crate::resp::Request>)> {
        if self.closing || self.failed || self.sent < self.output.len() {
            return None;
        }
        self.conn.whole_batch()
    }

    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn output_mut(&mut self) -> &mut Vec<u8> {
        &mut self.output
    }

    /// Closes the connection once its pending output is written.
    pub(crate) fn close_after_output(&mut self) {
        self.closing = true;
    }

    /// One slice of the client's work: write what is pending, read on if reading
    /// stopped early, run one run of requests, write their replies.
    fn service(&mut self, registry: &Registry, chunk: &mut [u8]) -> Turn {
        if !self.flush() || self.failed {
            return Turn::Close;
        }
        let blocked = self.sent < self.output.len();
        // Reading stopped early: read on if nothing is left to run, or if replies wait
        // (the client may be writing before it reads).
        if self.unread && !self.closing && (blocked || self.conn.inbox.queued() == 0) {
            self.read_input(chunk);
            if self.failed {
                return Turn::Close;
            }
        }
        if !blocked && !self.closing {
            self.run_slice();
            if !self.flush() {
                return Turn::Close;
            }
            if self.unread && self.sent < self.output.len() {
                // Its replies back up now: drain the socket as above.
                self.read_input(chunk);
                if self.failed {
                    return Turn::Close;
                }
            }
        }
        self.check_query_limit();
        let pending = self.sent < self.output.len();
        if self.closing && !pending {
            return Turn::Close;
        }
        let more = !self.closing && !pending && (self.unread || self.conn.inbox.queued() > 0);
        if self.eof && !pending && !more {
            // Everything complete the client sent has run and been answered.
            return Turn::Close;
        }
        self.shrink();
        if !self.set_writing(registry, pending) {
            return Turn::Close;
        }
        if more {
            Turn::Busy
        } else {
            Turn::Idle
        }
    }

    /// Runs one run of the complete requests received.
    fn run_slice(&mut self) {
        if self.conn.run_requests(&mut self.output) || self.conn.shared.is_shutting_down() {
            self.closing = true;
            return;
        }
        self.conn.parse_ahead();
    }

    /// Past the query buffer limit: answer the error and close.
    fn check_query_limit(&mut self) {
        if !self.closing && self.conn.inbox.buffered() > self.conn.shared.live.max_query_buffer() {
            let err = Reply::Error("ERR Protocol error: query buffer limit reached".into());
            resp::encode(&err, self.conn.protocol, &mut self.output);
            self.closing = true;
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
        if self.output.is_empty() && self.output.capacity() > KEEP_CAPACITY.max(FLUSH_AT) {
            self.output = Vec::new();
        }
    }
}
