//! What every chain of sub-filters (Bloom, cuckoo) keeps in its key's tally page, as
//! typed views: slot `i` counts the items in sub-filter `i` (at most 32 of them), and
//! the slot after the last a chain may have counts deletes (cuckoo's only). The
//! in-memory count that steers growth is the store's ([`crate::store`]'s `hints`).

use crate::keys::{self, TALLY_SUB};
use rocksketch_merge::tally::Tally;

/// Sub-filters a chain may have: both kinds' limit.
const MAX_SUBS: usize = rocksketch_merge::layout::bloom::MAX_FILTERS as usize;
const _: () = assert!(MAX_SUBS == rocksketch_merge::layout::cuckoo::MAX_FILTERS as usize);

/// The slot that counts deletes.
const DELETES: usize = MAX_SUBS;

/// The tally slots a chain's dump carries: one per sub-filter it may have, and deletes.
pub(crate) const SLOTS: usize = DELETES + 1;

/// A chain's counts, as its tally page holds them.
pub(crate) struct ChainCounts(Tally);

impl ChainCounts {
    /// The counts a tally page holds.
    pub(crate) fn new(tally: Tally) -> ChainCounts {
        ChainCounts(tally)
    }

    /// Items in sub-filter `sub`.
    pub(crate) fn items_in(&self, sub: u32) -> u64 {
        self.0.get(sub as usize)
    }

    /// Items in the first `subs` sub-filters (a count that a delete lowered wraps back).
    pub(crate) fn items(&self, subs: u32) -> u64 {
        (0..subs)
            .map(|sub| self.items_in(sub))
            .fold(0, u64::wrapping_add)
    }

    /// Items deleted.
    pub(crate) fn deleted(&self) -> u64 {
        self.0.get(DELETES)
    }

    /// Slot `slot` as a dump carries it (see [`SLOTS`]).
    pub(crate) fn slot(&self, slot: usize) -> u64 {
        self.0.get(slot)
    }

    /// Items in every sub-filter a chain may have, the ones it lacks as 0.
    pub(crate) fn per_sub(&self) -> Vec<u64> {
        (0..MAX_SUBS as u32).map(|sub| self.items_in(sub)).collect()
    }

    /// Counts `n` more items in sub-filter `sub` (a baseline's rewrite of the page).
    #[cfg(feature = "baselines")]
    pub(crate) fn add(&mut self, sub: u32, n: u64) {
        self.0.add(&added(sub, n));
    }

    /// The page as stored, for a write that rewrites it whole (a baseline's).
    #[cfg(feature = "baselines")]
    pub(crate) fn encode_page(&self) -> Vec<u8> {
        self.0.encode_page()
    }
}

/// The `(sub-filter, page)` pairs to read, sorted and each once, for `pages` listed per
/// item and sub-filter (item-major) in a chain of `subs` sub-filters.
pub(crate) fn pages_to_read(pages: impl Iterator<Item = u32>, subs: usize) -> Vec<(u32, u32)> {
    let mut wanted: Vec<(u32, u32)> = pages
        .enumerate()
        .map(|(n, page)| ((n % subs.max(1)) as u32, page))
        .collect();
    wanted.sort_unstable();
    wanted.dedup();
    wanted
}

/// The tally page of the key version `prefix`.
pub(crate) fn page_key(prefix: &[u8]) -> Vec<u8> {
    keys::page_key(prefix, TALLY_SUB, 0)
}

/// The tally delta of `n` items added to sub-filter `sub`.
fn added(sub: u32, n: u64) -> Tally {
    let mut slots = vec![0; sub as usize + 1];
    slots[sub as usize] = n;
    Tally::new(slots)
}

/// The operand that counts `n` items added to sub-filter `sub`.
pub(crate) fn added_operand(sub: u32, n: u64) -> Vec<u8> {
    added(sub, n).encode_delta()
}

/// The operand that counts the items added to each sub-filter (`per_sub[i]` to `i`).
pub(crate) fn added_per_sub_operand(per_sub: &[u64]) -> Vec<u8> {
    Tally::new(per_sub.to_vec()).encode_delta()
}

/// The operand that counts one item deleted from sub-filter `sub`.
pub(crate) fn deleted_operand(sub: u32) -> Vec<u8> {
    let mut slots = vec![0u64; SLOTS];
    slots[sub as usize] = u64::MAX; // -1, wrapping
    slots[DELETES] = 1;
    Tally::new(slots).encode_delta()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(counts: &mut Tally, operand: &[u8]) {
        counts.add(&Tally::decode_delta(operand).expect("a tally delta"));
    }

    #[test]
    fn adds_and_deletes_land_in_their_slots() {
        let mut tally = Tally::default();
        apply(&mut tally, &added_operand(2, 5));
        apply(&mut tally, &added_per_sub_operand(&[1, 0, 1]));
        apply(&mut tally, &deleted_operand(2));
        let counts = ChainCounts::new(tally);
        assert_eq!(
            (counts.items_in(0), counts.items_in(1), counts.items_in(2)),
            (1, 0, 5)
        );
        assert_eq!(counts.items(3), 6);
        assert_eq!(counts.items(2), 1);
        assert_eq!(counts.deleted(), 1);
        assert_eq!(counts.slot(DELETES), 1);
        assert_eq!(counts.per_sub().len(), MAX_SUBS);
        assert_eq!(counts.items_in(31), 0);
    }
}
