//! When the data last reached table files: `SAVE`, `BGSAVE`, `LASTSAVE` and `INFO
//! persistence`. Every acknowledged write is already in RocksDB's write-ahead log; a
//! "save" here is a flush of the memtables, which shortens the log a restart replays.

use parking_lot::Mutex;
use rocksketch::Store;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The time of the last flush: ours (`SAVE`, `BGSAVE`, shutdown) and RocksDB's own,
/// seen as a newer table at level 0 by [`FlushClock::watch`].
pub(crate) struct FlushClock {
    /// Unix seconds of the last flush seen.
    last: AtomicU64,
    /// The newest level-0 table seen.
    newest_table: AtomicU64,
    background: Mutex<Background>,
    /// The last `SAVE` or `BGSAVE` failed.
    failed: AtomicBool,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl FlushClock {
    /// Starts from the newest level-0 table's modification time, or (as Redis does
    /// without a snapshot) from now.
    pub(crate) fn new(store: &Store) -> FlushClock {
        let newest = store.newest_level0_table().ok().flatten();
        let last = newest
            .and_then(|(_, modified)| modified?.duration_since(UNIX_EPOCH).ok())
            .map_or_else(unix_now, |d| d.as_secs());
        FlushClock {
            last: AtomicU64::new(last),
            newest_table: AtomicU64::new(newest.map_or(0, |(number, _)| number)),
            background: Mutex::default(),
            failed: AtomicBool::new(false),
        }
    }

    /// Notes a flush RocksDB made by itself (a full memtable): called every second.
    pub(crate) fn watch(&self, store: &Store) {
        if let Ok(Some((number, _))) = store.newest_level0_table() {
            if number > self.newest_table.fetch_max(number, Ordering::Relaxed) {
                self.last.store(unix_now(), Ordering::Relaxed);
            }
        }
    }

    /// Flushes the memtables now (`SAVE`, and `BGSAVE` on its own thread).
    pub(crate) fn flush(&self, store: &Store) -> rocksketch::Result<()> {
        let flushed = store.flush();
        self.failed.store(flushed.is_err(), Ordering::Relaxed);
        match &flushed {
            Ok(()) => {
                self.last.store(unix_now(), Ordering::Relaxed);
                self.watch(store);
            }
            Err(e) => log::warn!("flushing the memtables failed: {e}"),
        }
        flushed
    }

    /// Claims the one background flush, or (`schedule`) asks the running one for
    /// another pass once it ends.
    pub(crate) fn begin_background(&self, schedule: bool) -> Begun {
        let mut background = self.background.lock();
        if !background.running {
            background.running = true;
            Begun::Start
        } else if schedule {
            background.scheduled = true;
            Begun::Scheduled
        } else {
            Begun::Busy
        }
    }

    /// The background flush claimed by [`FlushClock::begin_background`]: flushes, again
    /// while passes were scheduled meanwhile, then lets the next one start.
    pub(crate) fn run_background(&self, store: &Store) {
        loop {
            let _ = self.flush(store);
            let mut background = self.background.lock();
            if !std::mem::take(&mut background.scheduled) {
                background.running = false;
                return;
            }
        }
    }

    /// Gives back a claim whose flush could not start.
    pub(crate) fn abandon_background(&self) {
        *self.background.lock() = Background::default();
    }

    /// `LASTSAVE`: Unix seconds of the last flush.
    pub(crate) fn last(&self) -> u64 {
        self.last.load(Ordering::Relaxed)
    }

    pub(crate) fn background_running(&self) -> bool {
        self.background.lock().running
    }

    pub(crate) fn last_failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }
}

/// The background flush: whether it runs, and whether another pass was asked for.
#[derive(Default)]
struct Background {
    running: bool,
    scheduled: bool,
}

/// What [`FlushClock::begin_background`] did.
pub(crate) enum Begun {
    Start,
    Scheduled,
    Busy,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flush_rocksdb_makes_by_itself_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Default::default()).unwrap();
        let clock = FlushClock::new(&store);
        clock.last.store(0, Ordering::Relaxed);
        clock.watch(&store);
        assert_eq!(clock.last(), 0, "nothing was flushed");
        store.ns(0).cms(b"c").init_by_dim(100, 3).unwrap();
        store.flush().unwrap(); // not through the clock, as RocksDB's own flushes
        clock.watch(&store);
        assert!(clock.last() >= unix_now() - 1);
        clock.last.store(0, Ordering::Relaxed);
        clock.watch(&store);
        assert_eq!(clock.last(), 0, "the same table is not a new flush");
    }

    #[test]
    fn one_background_flush_runs_and_a_scheduled_one_follows_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Default::default()).unwrap();
        let clock = FlushClock::new(&store);
        assert!(matches!(clock.begin_background(false), Begun::Start));
        assert!(matches!(clock.begin_background(false), Begun::Busy));
        assert!(matches!(clock.begin_background(true), Begun::Scheduled));
        assert!(clock.background_running());
        clock.run_background(&store);
        assert!(!clock.background_running());
        assert!(!clock.background.lock().scheduled);
        assert!(!clock.last_failed());
        assert!(matches!(clock.begin_background(false), Begun::Start));
    }
}
