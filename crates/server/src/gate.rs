//! The transaction gate: every command holds it shared while it runs, and `EXEC` holds
//! it exclusively, so no other client's command interleaves with a transaction (as
//! Kvrocks does it, with one lock). The shared side is split over padded slots picked
//! by connection, so commands of different connections touch different cache lines:
//! holding it costs one uncontended atomic, on any number of cores. `EXEC` takes every
//! slot, in order.

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

const SLOTS: usize = 64;

/// One slot on a cache line of its own.
#[repr(align(128))]
#[derive(Default)]
struct Slot(RwLock<()>);

pub(crate) struct Gate {
    slots: Box<[Slot]>,
}

impl Default for Gate {
    fn default() -> Gate {
        Gate {
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
        }
    }
}

/// The gate held exclusively: every slot.
pub(crate) struct Exclusive<'a> {
    _slots: Vec<RwLockWriteGuard<'a, ()>>,
}

impl Gate {
    /// Held by one command of connection `id` while it runs.
    pub(crate) fn shared(&self, id: u64) -> RwLockReadGuard<'_, ()> {
        self.slots[(id % SLOTS as u64) as usize].0.read()
    }

    /// Held by `EXEC` while its queue runs. The caller must not hold a shared slot.
    pub(crate) fn exclusive(&self) -> Exclusive<'_> {
        Exclusive {
            _slots: self.slots.iter().map(|slot| slot.0.write()).collect(),
        }
    }
}
