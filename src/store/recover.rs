//! Recovery from write errors without a restart.
//!
//! When a write fails with an I/O error (a full disk, most often), RocksDB stops taking
//! writes. It resumes by itself in some cases: for a full disk, its file manager looks
//! every 5 seconds and resumes once the free space exceeds the memtable budget (64 MiB
//! by default), however the failure arose. In the others (less space freed than that,
//! an I/O error that is not a full disk, a failed resume) it stays stopped until the
//! database is closed and opened again.
//!
//! So a store opened by [`Store::open`] watches: after a failed write, a thread probes
//! the database every [`TICK`] with an empty write. Once the probe succeeds, RocksDB
//! has resumed. Once the probe has kept failing for [`GRACE`] while the disk has room for
//! a reopen (the write-ahead logs' size again, plus [`MARGIN`]), the thread reopens the
//! database inside the store: it empties the store's slot (operations wait, see
//! [`super::db`]), waits for the operations still on the old database, closes it,
//! opens it again (RocksDB replays the logs: everything acknowledged, and nothing torn),
//! empties the caches (a write whose caller saw it fail after its record reached the
//! log, a failed sync, is replayed: the caches must not contradict it), and fills the
//! slot.
//! Connections stay open; reads pause for the reopen only. If the open fails, the
//! database is opened read-only so reads go on, and the thread tries again later.
//!
//! A store over a host's database ([`Store::with_db`]) is the host's to reopen.

use super::db::{Closed, Slot};
use super::options::open_db;
use super::{Inner, Store, StoreOptions};
use parking_lot::{Condvar, Mutex};
use rocksdb::Cache;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// How often a failing store is probed.
const TICK: Duration = Duration::from_secs(1);
/// How long RocksDB is left to resume by itself once there is room (its own check runs
/// every 5 seconds; this leaves it a margin).
const GRACE: Duration = Duration::from_secs(7);
/// Free bytes wanted beyond the write-ahead logs' size before a reopen is tried.
const MARGIN: u64 = 4 << 20;
/// How long a reopen waits for the operations on the old database.
const DRAIN: Duration = Duration::from_secs(5);

/// What the recovery thread needs to reopen the database, and its state.
pub(crate) struct Watch {
    pub(super) dir: PathBuf,
    pub(super) options: StoreOptions,
    pub(super) cache: Cache,
    state: Mutex<State>,
    wake: Condvar,
    /// Signalled when a tick ends (see [`Watch::release`]).
    idle: Condvar,
    /// The recovery thread, once started.
    thread: std::sync::OnceLock<std::thread::ThreadId>,
}

#[derive(Default)]
struct State {
    /// The thread holds the store (a tick is running).
    ticking: bool,
    /// When the first of the failed writes not yet recovered from failed.
    failing_since: Option<Instant>,
    /// Since when the disk has had room for a reopen, while failing.
    room_since: Option<Instant>,
    stopped: bool,
}

impl Watch {
    pub(crate) fn new(dir: &Path, options: StoreOptions, cache: Cache) -> Arc<Watch> {
        Arc::new(Watch {
            dir: dir.to_owned(),
            options,
            cache,
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
            idle: Condvar::new(),
            thread: std::sync::OnceLock::new(),
        })
    }

    /// Starts the thread that watches the store behind `inner`.
    pub(crate) fn start(self: &Arc<Watch>, inner: Weak<Inner>) -> std::io::Result<()> {
        let watch = Arc::clone(self);
        std::thread::Builder::new()
            .name("rocksketch-recover".to_owned())
            .spawn(move || watch.run(inner))
            .map(drop)
    }

    /// Called after a write failed with `err`.
    pub(crate) fn write_failed(&self, err: &rocksdb::Error) {
        if !matches!(
            err.kind(),
            rocksdb::ErrorKind::IOError | rocksdb::ErrorKind::NotSupported
        ) {
            return;
        }
        let mut state = self.state.lock();
        if state.failing_since.is_none() {
            state.failing_since = Some(Instant::now());
            self.wake.notify_all();
        }
    }

    /// Stops the thread (the store is being dropped).
    pub(crate) fn stop(&self) {
        self.state.lock().stopped = true;
        self.wake.notify_all();
    }

    /// Called as a handle of the store is dropped, with the count of strong references
    /// to it: the last handle but the one a tick holds waits for the tick to end, so
    /// that the database closes on the dropping thread, before its drop returns (a
    /// store opened again at once would otherwise find the database still locked); the
    /// last handle stops the thread from taking the store again.
    pub(crate) fn release(&self, count: impl Fn() -> usize) {
        if self.thread.get() == Some(&std::thread::current().id()) {
            return;
        }
        let mut state = self.state.lock();
        loop {
            match count() {
                1 => {
                    state.stopped = true;
                    return;
                }
                2 if state.ticking => self.idle.wait(&mut state),
                _ => return,
            }
        }
    }

    fn run(&self, inner: Weak<Inner>) {
        let _ = self.thread.set(std::thread::current().id());
        loop {
            {
                let mut state = self.state.lock();
                if state.stopped {
                    return;
                }
                let _ = self.wake.wait_for(&mut state, TICK);
                if state.stopped || inner.strong_count() == 0 {
                    return;
                }
                if state.failing_since.is_none() {
                    continue;
                }
                // Taken under the lock the last handle's release takes.
                state.ticking = true;
            }
            // Only while failing: holding the store here must not close its database
            // from this thread in the common case of a store dropped by its user.
            if let Some(inner) = inner.upgrade() {
                self.tick(&Store { inner });
            }
            self.state.lock().ticking = false;
            self.idle.notify_all();
        }
    }

    fn tick(&self, store: &Store) {
        let probe = store.inner.db.is_open()
            && store
                .db()
                .is_ok_and(|db| db.write(rocksdb::WriteBatch::default()).is_ok());
        if probe {
            // Writes are accepted: drop what failed merges left, first.
            let cleaned = store.retry_abandoned();
            let mut state = self.state.lock();
            if let Some(since) = state.failing_since.take() {
                log::warn!(
                    "writes are accepted again, {:.1} s after they began to fail",
                    since.elapsed().as_secs_f64()
                );
            }
            state.room_since = None;
            if !cleaned {
                // Keep watching until they are gone.
                state.failing_since = Some(Instant::now());
            }
            return;
        }
        let room = self.has_room();
        let due = {
            let mut state = self.state.lock();
            if !room {
                state.room_since = None;
                return;
            }
            state.room_since.get_or_insert_with(Instant::now).elapsed() >= GRACE
        };
        if due {
            self.reopen(store);
        }
    }

    /// Whether the disk has room to replay and flush the write-ahead logs.
    fn has_room(&self) -> bool {
        let Ok(stat) = rustix::fs::statvfs(&self.dir) else {
            return false;
        };
        let free = stat.f_bavail.saturating_mul(stat.f_frsize);
        free >= wal_bytes(&self.dir).saturating_add(MARGIN)
    }

    fn reopen(&self, store: &Store) {
        let slot = &store.inner.db;
        match slot.close(DRAIN) {
            Closed::Db(db) => drop(db),
            Closed::Empty => {}
            Closed::Busy => {
                log::warn!("reopen put off: operations still use the database");
                return;
            }
        }
        let reopened = open_db(&self.dir, &self.options, &self.cache, false);
        store.clear_caches();
        match reopened {
            Ok(db) => {
                slot.fill(Arc::new(Slot::Open(Arc::new(db))));
                let cleaned = store.retry_abandoned();
                let mut state = self.state.lock();
                state.failing_since = (!cleaned).then(Instant::now);
                state.room_since = None;
                log::warn!("reopened the database after a write error; writes are accepted");
            }
            Err(e) => {
                log::warn!("reopening the database failed ({e}); serving reads only");
                // A full grace period before the next try.
                self.state.lock().room_since = None;
                match open_db(&self.dir, &self.options, &self.cache, true) {
                    Ok(db) => slot.fill(Arc::new(Slot::Open(Arc::new(db)))),
                    Err(e) => log::warn!("opening the database read-only failed too: {e}"),
                }
            }
        }
    }
}

/// Bytes of the write-ahead logs in `dir`.
fn wal_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store's last handle dropped while a tick holds the store: the drop waits for
    /// the tick, so the database is closed when it returns and opens again at once.
    /// (Found by `disk_recovery`: a store dropped as recovery ended closed on the
    /// recovery thread, and reopening it found its lock held.)
    #[test]
    fn the_last_handle_waits_for_a_tick_and_closes_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let watch = Arc::clone(store.inner.watch.as_ref().unwrap());
        watch.state.lock().ticking = true;
        // What a tick holds (the recovery thread's own handle skips the release).
        let held = Arc::clone(&store.inner);
        let tick = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
            watch.state.lock().ticking = false;
            watch.idle.notify_all();
        });
        let started = Instant::now();
        drop(store);
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "did not wait"
        );
        Store::open(dir.path(), StoreOptions::default()).expect("the database was closed");
        tick.join().unwrap();
    }
}
