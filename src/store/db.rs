//! The database under a store, in a slot that a reopen can empty and refill while the
//! store is in use (see [`super::recover`]).
//!
//! Every operation loads the slot once ([`Store::db`]) and works on that database until
//! it drops its handle. A load is a few instructions (arc-swap's thread-local debts, no
//! shared counter), so the slot costs the hot paths nothing measurable. While the slot
//! is being refilled, loads wait for it, up to [`WAIT`].

use super::{ColumnFamilies, Store};
use crate::error::{Error, Result};
use arc_swap::{ArcSwap, Guard};
use parking_lot::{Condvar, Mutex};
use rocksdb::{ColumnFamily, DB};
use std::ops::Deref;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long an operation waits for a reopen before it answers an error.
const WAIT: Duration = Duration::from_secs(30);

/// What the slot holds.
pub(crate) enum Slot {
    Open(Arc<DB>),
    /// Closed for a reopen: operations wait.
    Reopening,
}

/// What [`DbSlot::close`] found.
pub(crate) enum Closed {
    /// The database, no longer used by any operation.
    Db(DB),
    /// The slot was empty already (a reopen that failed).
    Empty,
    /// Operations still use the database: the slot holds it again.
    Busy,
}

/// The slot and what waiting operations sleep on.
pub(crate) struct DbSlot {
    slot: ArcSwap<Slot>,
    refilled: (Mutex<()>, Condvar),
}

impl DbSlot {
    pub(crate) fn new(db: Arc<DB>) -> DbSlot {
        DbSlot {
            slot: ArcSwap::from_pointee(Slot::Open(db)),
            refilled: (Mutex::new(()), Condvar::new()),
        }
    }

    /// Empties the slot; returns what it held. Operations that load it from now on wait.
    pub(crate) fn take(&self) -> Arc<Slot> {
        self.slot.swap(Arc::new(Slot::Reopening))
    }

    /// Fills the slot and wakes the waiting operations.
    pub(crate) fn fill(&self, slot: Arc<Slot>) {
        let _held = self.refilled.0.lock();
        self.slot.store(slot);
        self.refilled.1.notify_all();
    }

    /// Empties the slot for a reopen and waits, up to `drain`, for the operations still
    /// on its database; then the database is the caller's to close. If operations
    /// still hold it, the slot is filled again as it was and [`Closed::Busy`] answered.
    pub(crate) fn close(&self, drain: Duration) -> Closed {
        let old = self.take();
        let deadline = Instant::now() + drain;
        while Arc::strong_count(&old) > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        match Arc::try_unwrap(old) {
            Ok(Slot::Open(db)) => match Arc::try_unwrap(db) {
                Ok(db) => Closed::Db(db),
                Err(db) => {
                    self.fill(Arc::new(Slot::Open(db)));
                    Closed::Busy
                }
            },
            Ok(Slot::Reopening) => Closed::Empty,
            Err(old) => {
                self.fill(old);
                Closed::Busy
            }
        }
    }

    /// Whether the slot holds a database now.
    pub(crate) fn is_open(&self) -> bool {
        matches!(**self.slot.load(), Slot::Open(_))
    }

    fn load(&self) -> Result<Guard<Arc<Slot>>> {
        let deadline = Instant::now() + WAIT;
        loop {
            let guard = self.slot.load();
            if matches!(**guard, Slot::Open(_)) {
                return Ok(guard);
            }
            drop(guard);
            let mut held = self.refilled.0.lock();
            if matches!(**self.slot.load(), Slot::Open(_)) {
                continue;
            }
            if self.refilled.1.wait_until(&mut held, deadline).timed_out() {
                return Err(Error::Storage(
                    "the database is being reopened after a write error".to_owned(),
                ));
            }
        }
    }
}

/// The database as one operation sees it; derefs to RocksDB's handle.
pub struct Db<'s> {
    guard: Guard<Arc<Slot>>,
    cfs: &'s ColumnFamilies,
}

impl Deref for Db<'_> {
    type Target = DB;

    fn deref(&self) -> &DB {
        match &**self.guard {
            Slot::Open(db) => db,
            // A `Db` is only made from an open slot (`DbSlot::load`).
            Slot::Reopening => unreachable!("a Db over an empty slot"),
        }
    }
}

impl Db<'_> {
    /// The metadata column family.
    pub fn meta_cf(&self) -> Result<&ColumnFamily> {
        self.cf(&self.cfs.meta)
    }

    /// The pages column family.
    pub fn pages_cf(&self) -> Result<&ColumnFamily> {
        self.cf(&self.cfs.pages)
    }

    fn cf(&self, name: &str) -> Result<&ColumnFamily> {
        self.cf_handle(name)
            .ok_or_else(|| Error::Storage(format!("column family '{name}' is gone")))
    }
}

impl Store {
    /// The database (for hosts, statistics and compaction). While the store reopens its
    /// database after a write error, this waits for it (up to 30 seconds, then errs).
    /// Hold the handle only as long as one operation: a reopen waits for every handle.
    pub fn db(&self) -> Result<Db<'_>> {
        Ok(Db {
            guard: self.inner.db.load()?,
            cfs: &self.inner.cfs,
        })
    }
}
