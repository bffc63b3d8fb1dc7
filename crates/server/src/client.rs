//! One connection served by an I/O thread: its socket, its [`Connection`], its pending
//! output, and one slice of its work at a time (see [`super::worker`] for the turns).

use super::admit::Deregister;
use super::conn::{BatchKey, Connection, FLUSH_AT};
use super::worker::Admitted;
use super::Shared;
use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use rocksketch::command::Reply;
use rocksketch::resp;
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Input a client may have read ahead of what it has run: reading stops there for the
/// turn (unless no complete request is in yet: a large request is read whole).
const READ_AHEAD: usize = 256 << 10;

/// How long a connection closed with input still arriving lingers, and how much of it
/// it reads and drops meanwhile (see [`Client::start_linger`]).
const LINGER_FOR: Duration = Duration::from_secs(2);
const LINGER_BYTES: usize = 64 << 20;

/// Output buffers larger than this are given back once empty, so idle clients stay small.
const KEEP_CAPACITY: usize = 64 << 10;

/// What a client's slice left it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Turn {
    /// Nothing to do until its socket is ready again.
    Idle,
    /// Answered and shut for writing; its input is read and dropped until the peer
    /// closes or the linger ends ([`Client::linger_over`]).
    Linger,
    /// More to do now: take it up again on the next turn.
    Busy,
    /// The connection must close.
    Close,
    /// Parked by `WAIT` (or a slot's hand-over): look again shortly, whatever the
    /// socket does.
    Waiting,
    /// Held by `CLIENT PAUSE`: look again once the pause is over.
    Paused,
    /// Hand the socket over to a replica's feed ([`Client::take_feed`]).
    Handoff,
}

/// A connection served by a worker.
pub(crate) struct Client {
    /// First, so that it drops first: the connection leaves the client table before its
    /// socket closes, and a client that saw the close finds its slot free (`maxclients`).
    /// `None` once the connection lingers: it is no longer a client then.
    _entry: Option<Deregister>,
    pub(super) token: Token,
    pub(super) stream: TcpStream,
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
    /// An event said the peer closed its side (or the socket failed): read to the end
    /// of stream, not just until a short read.
    peer_closed: bool,
    /// Until when the connection lingers, and what it dropped meanwhile.
    linger: Option<(Instant, usize)>,
}

impl Client {
    pub(super) fn register(
        shared: &Arc<Shared>,
        registry: &Registry,
        admitted: Admitted,
    ) -> Option<Client> {
        admitted.stream.set_nonblocking(true).ok()?;
        let mut stream = TcpStream::from_std(admitted.stream);
        let token = Token(admitted.id as usize);
        registry
            .register(&mut stream, token, Interest::READABLE)
            .ok()?;
        Some(Client {
            _entry: Some(admitted.entry),
            token,
            stream,
            conn: Connection::new(shared.clone(), admitted.id, admitted.activity),
            output: Vec::new(),
            sent: 0,
            writing: false,
            eof: false,
            failed: false,
            closing: false,
            unread: false,
            peer_closed: false,
            linger: None,
        })
    }

    /// Reads what the client sent, until the socket is drained, the input read ahead of
    /// what has run reaches [`READ_AHEAD`] with a complete request in it, or the input
    /// passes the query buffer limit (then [`Client::service`] answers the error).
    ///
    /// While replies wait to be written, it reads on to the limit: a client that
    /// writes its whole pipeline before it reads a reply would otherwise block in its
    /// send as the server waits for it to read (Redis, too, keeps reading then).
    pub(super) fn read_input(&mut self, chunk: &mut [u8]) {
        self.read_input_after(chunk, false);
    }

    /// [`Client::read_input`] for a readiness event; `closed` if it said the peer
    /// closed or the socket failed.
    pub(super) fn read_input_after(&mut self, chunk: &mut [u8], closed: bool) {
        self.peer_closed |= closed;
        if self.eof || self.failed || self.linger.is_some() {
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
                Ok(n) => {
                    self.conn.inbox.extend(&chunk[..n]);
                    // A short read took all the socket held: what arrives later is a
                    // new readiness event, so the read that would answer WouldBlock is
                    // saved (a system call per event). Unless the peer closed: its
                    // end of stream comes with no further event.
                    if n < chunk.len() && !self.peer_closed {
                        return;
                    }
                }
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
    pub(crate) fn take_whole_batch(
        &mut self,
    ) -> Option<(BatchKey, Vec<rocksketch::resp::Request>)> {
        if self.closing || self.failed || self.sent < self.output.len() {
            return None;
        }
        self.conn.whole_batch()
    }

    pub(crate) fn connection(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
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
    pub(super) fn service(&mut self, registry: &Registry, chunk: &mut [u8]) -> Turn {
        if self.linger.is_some() {
            return self.drop_input(chunk);
        }
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
            if self.conn.is_parked() && self.conn.resume(&mut self.output) == Some(true) {
                self.closing = true;
            }
            if !self.conn.is_parked() && !self.closing {
                self.run_slice();
            }
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
        if self.closing && !pending && self.conn.handoff.is_some() {
            return Turn::Handoff;
        }
        if self.closing && !pending {
            return self.start_linger(registry, chunk);
        }
        let parked = !self.closing && self.conn.is_parked();
        // A parked connection's later requests wait with it (looked at when it is).
        let more =
            !self.closing && !parked && !pending && (self.unread || self.conn.inbox.queued() > 0);
        if self.eof && !pending && !more && !parked {
            // Everything complete the client sent has run and been answered.
            return Turn::Close;
        }
        self.shrink();
        if !self.set_writing(registry, pending) {
            return Turn::Close;
        }
        if more {
            Turn::Busy
        } else if parked && self.conn.is_paused() {
            Turn::Paused
        } else if parked {
            Turn::Waiting
        } else {
            Turn::Idle
        }
    }

    /// The socket and what `PSYNC` asked, for a replica's feed (`Turn::Handoff`). The
    /// socket is a duplicate of this client's descriptor: the caller deregisters and
    /// drops the client, the duplicate keeps the connection.
    pub(super) fn take_feed(
        &mut self,
    ) -> Option<(
        std::net::TcpStream,
        crate::replication::Handoff,
        Arc<Shared>,
    )> {
        use std::os::fd::AsFd;
        let fd = self.stream.as_fd().try_clone_to_owned().ok()?;
        let mut handoff = self.conn.handoff.take()?;
        handoff.entry = self._entry.take();
        Some((fd.into(), handoff, self.conn.shared.clone()))
    }

    /// Closing with input still arriving (a protocol error, a request past a limit, a
    /// pipeline after `QUIT`): closing now would reset the connection (unread input
    /// makes the kernel answer RST), and a client still sending would get a broken
    /// pipe and never read its error. So the socket is shut for writing (the client
    /// reads its replies, then end of stream) and what it goes on sending is read and
    /// dropped, until it closes, [`LINGER_BYTES`] or [`LINGER_FOR`]. The connection
    /// leaves the client table first, as a closed one would.
    fn start_linger(&mut self, registry: &Registry, chunk: &mut [u8]) -> Turn {
        if self.eof || (!self.unread && self.conn.inbox.buffered() == 0) {
            return Turn::Close;
        }
        self.conn.inbox.clear();
        self._entry = None;
        if self.stream.shutdown(Shutdown::Write).is_err() || !self.set_writing(registry, false) {
            return Turn::Close;
        }
        self.linger = Some((Instant::now() + LINGER_FOR, 0));
        self.drop_input(chunk)
    }

    /// Reads and drops what a lingering connection's socket holds.
    fn drop_input(&mut self, chunk: &mut [u8]) -> Turn {
        let Some((until, mut dropped)) = self.linger else {
            return Turn::Close;
        };
        loop {
            match self.stream.read(chunk) {
                Ok(0) => return Turn::Close,
                Ok(n) => dropped += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return Turn::Close,
            }
            if dropped > LINGER_BYTES {
                return Turn::Close;
            }
        }
        self.linger = Some((until, dropped));
        if Instant::now() >= until {
            return Turn::Close;
        }
        Turn::Linger
    }

    /// Whether a lingering connection's time is up.
    pub(super) fn linger_over(&self, now: Instant) -> bool {
        self.linger.is_none_or(|(until, _)| now >= until)
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
