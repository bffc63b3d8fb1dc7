//! The in-memory count of items in each sub-filter of a chain (Bloom, cuckoo): what
//! decides growth without a read of the tally page on every blind write. It only steers
//! growth, never correctness; the tally page is the truth and loads it the first time.

use super::{keys, Store};
use crate::error::Result;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Room taken in a sub-filter's count for blind adds about to be written: given back
/// when dropped, unless the adds were written ([`CountReservation::written`]), so that
/// nothing that failed to be added moves the count that steers growth.
#[must_use = "dropping a reservation gives its room back"]
pub(crate) struct CountReservation {
    count: Arc<AtomicU64>,
    n: u64,
}

impl CountReservation {
    /// The adds were written: the room stays taken.
    pub(crate) fn written(mut self) {
        self.n = 0;
    }
}

impl Drop for CountReservation {
    fn drop(&mut self) {
        if self.n > 0 {
            self.count.fetch_sub(self.n, Ordering::Relaxed);
        }
    }
}

impl Store {
    /// Takes room for `n` adds in sub-filter `sub` of the key version `prefix` if its
    /// count stays within `limit`; `None` (nothing taken) if it would not, which sends
    /// the writer to the locked path that grows the chain.
    pub(crate) fn reserve_count(
        &self,
        key: &[u8],
        prefix: &[u8],
        sub: u32,
        n: u64,
        limit: u64,
    ) -> Result<Option<CountReservation>> {
        let count = self.count_of(key, prefix, sub)?;
        let reservation = CountReservation { count, n };
        if reservation
            .count
            .fetch_add(n, Ordering::Relaxed)
            .saturating_add(n)
            > limit
        {
            return Ok(None);
        }
        Ok(Some(reservation))
    }

    /// Adds `delta` (wrapping: a negative one as its two's complement) to the count of
    /// sub-filter `sub`, if one is kept: after a locked write changed what it holds.
    pub(crate) fn count_changed(&self, prefix: &[u8], sub: u32, delta: i64) {
        if let Some(count) = self.inner.hints.get(&slot(prefix, sub)) {
            count.fetch_add(delta as u64, Ordering::Relaxed);
        }
    }

    /// The count of sub-filter `sub`, loaded from the key's tally the first time.
    fn count_of(&self, key: &[u8], prefix: &[u8], sub: u32) -> Result<Arc<AtomicU64>> {
        let slot = slot(prefix, sub);
        if let Some(count) = self.inner.hints.get(&slot) {
            return Ok(count);
        }
        let loaded = self.read_tally(key, prefix)?.get(sub as usize);
        Ok(self
            .inner
            .hints
            .get_or_insert(slot, Arc::new(AtomicU64::new(loaded))))
    }
}

/// Names the count of sub-filter `sub` of a key version.
fn slot(prefix: &[u8], sub: u32) -> Vec<u8> {
    keys::page_key(prefix, sub as u16, u32::MAX)
}

#[cfg(test)]
mod tests {
    use crate::{Store, StoreOptions};
    use std::sync::atomic::Ordering;

    #[test]
    fn room_is_given_back_unless_written_and_never_taken_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        // A key with no tally page yet: its counts load as zero.
        let prefix = b"\x00\x00key-version";
        let count = |store: &Store| {
            store
                .count_of(b"key", prefix, 1)
                .unwrap()
                .load(Ordering::Relaxed)
        };
        let room = store
            .reserve_count(b"key", prefix, 1, 3, 10)
            .unwrap()
            .unwrap();
        assert_eq!(count(&store), 3);
        drop(room);
        assert_eq!(count(&store), 0, "a failed write gives its room back");
        store
            .reserve_count(b"key", prefix, 1, 4, 10)
            .unwrap()
            .unwrap()
            .written();
        assert_eq!(count(&store), 4);
        assert!(store
            .reserve_count(b"key", prefix, 1, 7, 10)
            .unwrap()
            .is_none());
        assert_eq!(count(&store), 4, "a refused reservation takes nothing");
        store
            .reserve_count(b"key", prefix, 1, 6, 10)
            .unwrap()
            .unwrap()
            .written();
        store.count_changed(prefix, 1, -2);
        assert_eq!(count(&store), 8);
        assert_eq!(
            store
                .count_of(b"key", prefix, 0)
                .unwrap()
                .load(Ordering::Relaxed),
            0
        );
    }
}
