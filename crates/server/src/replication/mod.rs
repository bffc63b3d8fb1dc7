//! Replication: a replica follows its primary by applying the primary's write-ahead log,
//! batch by batch (`Store::updates_since` on the primary, `Store::apply_replicated` on
//! the replica), not by running commands again. RocksDB's sequence numbers are the
//! replication offset: a replica that applied the same batches in the same order holds
//! the same records at the same sequence.
//!
//! A replica connects as Redis's do (`AUTH` with `masterauth`, `REPLCONF
//! listening-port`, `PSYNC <replid> <offset>`). The primary answers `+CONTINUE` when its
//! log still reaches back to the offset and the replication id is its own (or the one
//! it took over on promotion, up to where it took over), and streams batches from
//! there; otherwise `+FULLRESYNC`: it streams a checkpoint's files, the replica swaps
//! its database for them and asks again, from the checkpoint's sequence. See
//! `rocksketch_resp::stream` for the frames, `feed.rs` for the primary's side and `follow.rs` for the replica's.
//!
//! The backlog is the write-ahead log on disk (kept for `repl-backlog-ttl` seconds and
//! up to `repl-backlog-size`), so a lagging replica costs the primary no memory; each
//! replica is fed by a thread of its own that never holds up the primary's writes (a
//! replica that stops reading is dropped after `repl-timeout`).

mod feed;
mod follow;
mod ids;

pub(crate) use feed::{next_batches, serve_replica, Handoff, Peer};
pub(crate) use ids::{new_id, Ids};

use crate::Shared;
use follow::Follower;
use parking_lot::Mutex;
use rocksketch::Store;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a link may stay silent (a replica that stops reading, a primary that stops
/// sending even its pings) before it is dropped: Redis's `repl-timeout`.
pub(crate) const REPL_TIMEOUT: Duration = Duration::from_secs(60);

/// This server's part in replication.
pub(crate) struct Replication {
    /// The store's directory: the replication state file, and checkpoints for syncs.
    dir: PathBuf,
    ids: Mutex<Ids>,
    /// The primary followed, if this server is a replica.
    follower: Mutex<Option<Follower>>,
    masterauth: Mutex<Option<String>>,
    /// The replicas fed from here.
    peers: Mutex<Vec<Arc<feed::Peer>>>,
    /// How many: the write path looks at `peers` only when there are some.
    feeds: AtomicUsize,
    /// Changes when this server's history is replaced (a full sync): feeds of the old
    /// history stop.
    epoch: AtomicU64,
    pub(crate) full_syncs: AtomicU64,
    pub(crate) partial_ok: AtomicU64,
    pub(crate) partial_err: AtomicU64,
    /// `WAIT`s parked now, on any I/O thread.
    waits: Arc<AtomicUsize>,
    /// The I/O threads' wakers: a replica's acknowledgement wakes them while a `WAIT`
    /// is parked, so that it answers at once rather than at its thread's next tick.
    wakers: Mutex<Vec<Arc<mio::Waker>>>,
}

impl Replication {
    pub(crate) fn new(store: &Store, masterauth: Option<String>) -> std::io::Result<Replication> {
        let dir = store.path().map_err(std::io::Error::other)?;
        let latest = store.latest_sequence().unwrap_or(0);
        let ids = Ids::load(&dir, store.is_replica(), latest);
        ids.save(&dir);
        feed::remove_stale_checkpoints(&dir);
        Ok(Replication {
            dir,
            ids: Mutex::new(ids),
            follower: Mutex::new(None),
            masterauth: Mutex::new(masterauth),
            peers: Mutex::new(Vec::new()),
            feeds: AtomicUsize::new(0),
            epoch: AtomicU64::new(0),
            full_syncs: AtomicU64::new(0),
            partial_ok: AtomicU64::new(0),
            partial_err: AtomicU64::new(0),
            waits: Arc::new(AtomicUsize::new(0)),
            wakers: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn ids(&self) -> Ids {
        self.ids.lock().clone()
    }

    fn set_ids(&self, ids: Ids) {
        ids.save(&self.dir);
        *self.ids.lock() = ids;
    }

    pub(crate) fn masterauth(&self) -> Option<String> {
        self.masterauth.lock().clone()
    }

    pub(crate) fn set_masterauth(&self, password: &str) {
        *self.masterauth.lock() = (!password.is_empty()).then(|| password.to_owned());
    }

    /// Whether this server follows a primary.
    pub(crate) fn is_replica(&self) -> bool {
        self.follower.lock().is_some()
    }

    /// The primary followed: host, port and the link's state.
    pub(crate) fn primary(&self) -> Option<(String, u16, Arc<follow::Link>)> {
        let follower = self.follower.lock();
        follower
            .as_ref()
            .map(|f| (f.host.clone(), f.port, f.link.clone()))
    }

    /// Follows `host:port` from now on (`REPLICAOF host port`): own writes are refused,
    /// a follower thread syncs and applies what the primary ships.
    pub(crate) fn follow(shared: &Arc<Shared>, host: String, port: u16) {
        let rep = &shared.replication;
        let mut follower = rep.follower.lock();
        if let Some(old) = follower.take() {
            old.stop();
        }
        let _ = shared.store.set_replica(true);
        log::info!("replicating from {host}:{port}");
        *follower = Some(Follower::start(shared.clone(), host, port));
    }

    /// Stops following and takes writes (`REPLICAOF NO ONE`): a new replication id,
    /// the old one kept as the second, up to the offset reached, so that the old
    /// primary's other replicas can continue from here.
    pub(crate) fn promote(shared: &Shared) -> rocksketch::Result<()> {
        let rep = &shared.replication;
        let mut follower = rep.follower.lock();
        let Some(old) = follower.take() else {
            return Ok(());
        };
        old.stop();
        shared.store.set_replica(false)?;
        let offset = shared.store.latest_sequence()?;
        rep.set_ids(rep.ids().promoted(offset));
        log::info!("promoted to primary at offset {offset}");
        Ok(())
    }

    /// Stops the follower, if any (the server is shutting down).
    pub(crate) fn stop(&self) {
        if let Some(old) = self.follower.lock().take() {
            old.stop();
        }
        for peer in self.peers.lock().iter() {
            peer.close();
        }
    }

    /// Ends the feeds of this server's replicas: its history was replaced.
    fn new_epoch(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        for peer in self.peers.lock().iter() {
            peer.close();
        }
    }

    /// The replicas fed from here now.
    pub(crate) fn peers(&self) -> Vec<Arc<feed::Peer>> {
        self.peers.lock().clone()
    }

    /// Has every replica's feed send what is written now (a `WAIT` waits for it).
    fn hurry(&self) {
        for peer in self.peers.lock().iter() {
            peer.hurry();
        }
    }

    /// Something may have been written: idle feeds send it now. Called by the I/O
    /// threads after each pass over their ready clients, and by a replica after each
    /// write it applies (for replicas of its own).
    pub(crate) fn wrote(&self) {
        if self.feeds.load(Ordering::Relaxed) == 0 {
            return;
        }
        for peer in self.peers.lock().iter() {
            peer.wrote();
        }
    }

    /// Registers an I/O thread's waker (see [`Replication::acknowledged`]).
    pub(crate) fn add_waker(&self, waker: Arc<mio::Waker>) {
        self.wakers.lock().push(waker);
    }

    /// A replica acknowledged more: the I/O threads look at their parked `WAIT`s now,
    /// if there are any.
    fn acknowledged(&self) {
        if self.waits.load(Ordering::SeqCst) > 0 {
            self.wake_io_threads();
        }
    }

    /// Wakes every I/O thread (`CLIENT UNPAUSE`: the clients it held go on now).
    pub(crate) fn wake_io_threads(&self) {
        for waker in self.wakers.lock().iter() {
            let _ = waker.wake();
        }
    }

    /// How many replicas acknowledged every write up to `offset`.
    pub(crate) fn acked(&self, offset: u64) -> usize {
        self.peers
            .lock()
            .iter()
            .filter(|p| p.acked() >= offset)
            .count()
    }
}

/// A `WAIT` in progress: its client is parked until enough replicas acknowledged the
/// writes made before it, or its time is up.
pub(crate) struct Wait {
    offset: u64,
    needed: usize,
    deadline: Option<Instant>,
    /// Counted in [`Replication::waits`] while it lives.
    waits: Arc<AtomicUsize>,
}

impl Wait {
    /// A wait for `needed` replicas to acknowledge `offset`: the feeds send what is
    /// written now rather than after their pause, if that is still missing.
    pub(crate) fn new(
        rep: &Replication,
        offset: u64,
        needed: usize,
        timeout: Option<Duration>,
    ) -> Wait {
        rep.waits.fetch_add(1, Ordering::SeqCst);
        if rep.acked(offset) < needed {
            rep.hurry();
        }
        Wait {
            offset,
            needed,
            deadline: timeout.map(|t| Instant::now() + t),
            waits: rep.waits.clone(),
        }
    }

    /// The reply, once the wait is over: the number of replicas that acknowledged.
    pub(crate) fn poll(&self, rep: &Replication) -> Option<i64> {
        let acked = rep.acked(self.offset);
        let over = acked >= self.needed || self.deadline.is_some_and(|d| Instant::now() >= d);
        over.then_some(acked as i64)
    }

    /// The reply now, without waiting (`WAIT` inside `MULTI`).
    pub(crate) fn now(&self, rep: &Replication) -> i64 {
        rep.acked(self.offset) as i64
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        self.waits.fetch_sub(1, Ordering::SeqCst);
    }
}
