//! The I/O threads: a fixed pool, each multiplexing its connections with readiness I/O
//! (`mio`, epoll on Linux). A worker reads what a ready connection sent, runs the
//! complete requests, and writes the replies without blocking; a client that does not
//! read its replies stops having its requests run (its input stays buffered, up to the
//! query buffer limit) and never holds up the others.
//!
//! Fairness: each turn of the loop gives every client with work one slice, at most
//! 256 KiB read ahead (`client.rs`) and one run of requests ([`super::conn::MAX_RUN`]); a
//! client left with work (input parsed and not run, or bytes still in its socket) is
//! taken up again on the next turn, after the others, without waiting for an event.
//! A client that half-closes (shuts down its writing side) has every complete request
//! it sent run and answered before the connection closes.

use super::admit::Deregister;
use super::client::{Client, Turn};
use super::together;
use super::Shared;
use crate::fast::{FastMap, FastSet};
use crate::replication;
use mio::{Events, Poll, Token, Waker};
use parking_lot::Mutex;
use std::io::{self, ErrorKind};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const WAKER: Token = Token(usize::MAX);

/// How often clients parked by `WAIT` are looked at (a replica's acknowledgement wakes
/// the thread sooner).
const WAIT_TICK: Duration = Duration::from_millis(1);

/// Bytes read from a socket at a time.
const READ_CHUNK: usize = 16 << 10;

/// A connection accepted and registered, on its way to a worker.
pub(crate) struct Admitted {
    /// First, so that it drops before the stream (see [`Client`]).
    pub(crate) entry: Deregister,
    pub(crate) id: u64,
    pub(crate) stream: std::net::TcpStream,
    /// What it ran last, shared with its entry in the client table.
    pub(crate) activity: Arc<crate::activity::Activity>,
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
    /// Connections sent to it (by the accepting thread alone).
    sent: usize,
    /// What the worker reports of its connections.
    load: Arc<Load>,
}

/// A worker's connections as it reports them once a pass: those it took from its
/// inbox and those it holds now (closed ones gone).
#[derive(Default)]
struct Load {
    taken: AtomicUsize,
    held: AtomicUsize,
}

impl Lane {
    /// Its connections: those it holds, and those sent that it has not taken yet.
    fn open(&self) -> usize {
        let taken = self.load.taken.load(Ordering::Relaxed);
        self.sent.saturating_sub(taken) + self.load.held.load(Ordering::Relaxed)
    }
}

/// The pool: where to send new connections, and the threads to join.
pub(crate) struct Workers {
    lanes: Vec<Lane>,
    threads: Vec<JoinHandle<()>>,
    next: usize,
    /// See [`crate::ServerConfig::thread_fill`].
    fill: usize,
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

    /// Makes the connection's worker look at its parked clients now.
    pub(crate) fn wake(&self) {
        let _ = self.waker.wake();
    }

    pub(crate) fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }
}

impl Workers {
    pub(crate) fn start(shared: &Arc<Shared>, count: usize, fill: usize) -> io::Result<Workers> {
        let mut workers = Workers {
            lanes: Vec::new(),
            threads: Vec::new(),
            next: 0,
            fill,
        };
        for n in 0..count.max(1) {
            let poll = Poll::new()?;
            let waker = Arc::new(Waker::new(poll.registry(), WAKER)?);
            shared.replication.add_waker(waker.clone());
            let (sender, inbox) = channel();
            let kills = Arc::new(Mutex::new(Vec::new()));
            let shared = shared.clone();
            let lane_kills = kills.clone();
            let load = Arc::new(Load::default());
            let lane_load = load.clone();
            let thread = std::thread::Builder::new()
                .name(format!("io-{n}"))
                .spawn(move || run(&shared, poll, &inbox, &lane_kills, &lane_load))?;
            workers.lanes.push(Lane {
                sender,
                kills,
                waker,
                sent: 0,
                load,
            });
            workers.threads.push(thread);
        }
        Ok(workers)
    }

    /// The worker the next connection goes to, and the kill switch of connection `id`
    /// there: the first with fewer than `fill` connections, else the one with fewest
    /// (round robin with `fill` 0).
    pub(crate) fn next_lane(&mut self, id: u64) -> (usize, KillSwitch) {
        let open: Vec<usize> = self.lanes.iter().map(Lane::open).collect();
        let lane = pick(&open, self.fill, self.next);
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
        let lane = &mut self.lanes[lane];
        if lane.sender.send(admitted).is_ok() {
            lane.sent += 1;
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

/// The worker for a new connection, given each worker's open connections: the first
/// with fewer than `fill`, else the one with fewest; with `fill` 0, turn by turn.
fn pick(open: &[usize], fill: usize, turn: usize) -> usize {
    if fill == 0 {
        return turn % open.len().max(1);
    }
    let fewest = (0..open.len()).min_by_key(|&i| open[i]).unwrap_or(0);
    open.iter().position(|&n| n < fill).unwrap_or(fewest)
}

/// One worker's loop, until the server shuts down.
fn run(
    shared: &Arc<Shared>,
    mut poll: Poll,
    inbox: &Receiver<Admitted>,
    kills: &Mutex<Vec<Token>>,
    load: &Load,
) {
    let mut events = Events::with_capacity(1024);
    let mut clients: FastMap<Token, Client> = FastMap::default();
    let mut chunk = vec![0u8; READ_CHUNK];
    // Clients left with work by their last slice, in the order they are taken up.
    let mut busy: Vec<Token> = Vec::new();
    let mut ready: Vec<Token> = Vec::new();
    let mut seen: FastSet<Token> = FastSet::default();
    // Connections that answered and shut for writing, dropping what still arrives.
    let mut lingering: FastSet<Token> = FastSet::default();
    // Clients parked by `WAIT`, looked at every millisecond.
    let mut waiting: Vec<Token> = Vec::new();
    // Clients held by `CLIENT PAUSE`, looked at once it is over (it ends on time, or
    // `CLIENT UNPAUSE` wakes every worker): a long pause of many clients costs nothing.
    let mut paused: FastSet<Token> = FastSet::default();
    while !shared.is_shutting_down() {
        let pause_left = match paused.is_empty() {
            true => None,
            false => Some(shared.pause.left().unwrap_or(Duration::ZERO)),
        };
        // With clients still owed a slice, only look for events, do not wait for them.
        let timeout = if !busy.is_empty() {
            Duration::ZERO
        } else if !waiting.is_empty() {
            WAIT_TICK
        } else {
            pause_left.map_or(Duration::from_millis(200), |left| {
                left.min(Duration::from_millis(200))
            })
        };
        if let Err(e) = poll.poll(&mut events, Some(timeout)) {
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        ready.clear();
        seen.clear();
        for token in busy.drain(..).chain(waiting.drain(..)) {
            if seen.insert(token) {
                ready.push(token);
            }
        }
        if !paused.is_empty() && shared.pause.left().is_none() {
            for token in paused.drain() {
                if seen.insert(token) {
                    ready.push(token);
                }
            }
        }
        for event in &events {
            let token = event.token();
            if token == WAKER {
                while let Ok(admitted) = inbox.try_recv() {
                    load.taken.fetch_add(1, Ordering::Relaxed);
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
                client.read_input_after(&mut chunk, event.is_read_closed() || event.is_error());
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
                Turn::Waiting => waiting.push(token),
                Turn::Paused => {
                    paused.insert(token);
                }
                Turn::Handoff => {
                    if let Some(mut client) = clients.remove(&token) {
                        let _ = poll.registry().deregister(&mut client.stream);
                        if let Some((stream, handoff, shared)) = client.take_feed() {
                            let feed = move || replication::serve_replica(shared, stream, handoff);
                            let _ = std::thread::Builder::new()
                                .name("replica-feed".to_owned())
                                .spawn(feed);
                        }
                    }
                }
                Turn::Linger => {
                    lingering.insert(token);
                }
                Turn::Close => {
                    lingering.remove(&token);
                    if let Some(mut client) = clients.remove(&token) {
                        let _ = poll.registry().deregister(&mut client.stream);
                    }
                }
            }
        }
        if !ready.is_empty() {
            // Whatever they wrote goes to idle replicas now.
            shared.replication.wrote();
        }
        load.held.store(clients.len(), Ordering::Relaxed);
        if !lingering.is_empty() {
            let now = Instant::now();
            lingering.retain(|token| match clients.get(token) {
                Some(client) if client.linger_over(now) => {
                    if let Some(mut client) = clients.remove(token) {
                        let _ = poll.registry().deregister(&mut client.stream);
                    }
                    false
                }
                Some(_) => true,
                None => false,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::pick;

    #[test]
    fn connections_fill_one_worker_before_the_next() {
        assert_eq!(pick(&[0, 0], 32, 7), 0);
        assert_eq!(pick(&[31, 0], 32, 7), 0);
        assert_eq!(pick(&[32, 0], 32, 7), 1);
        assert_eq!(pick(&[32, 31], 32, 7), 1);
        // Every worker full: the one with fewest.
        assert_eq!(pick(&[40, 33], 32, 7), 1);
        assert_eq!(pick(&[33, 40, 35], 32, 7), 0);
        // A worker whose connections closed takes the next ones again.
        assert_eq!(pick(&[3, 32], 32, 7), 0);
        // Round robin.
        assert_eq!(pick(&[5, 0], 0, 7), 1);
        assert_eq!(pick(&[5, 0], 0, 8), 0);
        assert_eq!(pick(&[9], 32, 0), 0);
    }
}
