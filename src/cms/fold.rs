//! One call's increments folded per counter, without sorting its slots: what the
//! call's later slots add to each slot's counter (for its answer), and one summed
//! addition per counter it touches (for its operands).
//!
//! A hot key's batch holds thousands of slots; sorting them by counter was the
//! largest single cost of `CMS.INCRBY` on one key after the network. Two passes over
//! the slots with a sum per counter replace it: backwards, each slot's later sum is
//! its counter's sum so far; forwards, each counter's sum is taken once. The sums live
//! in a zeroed scratch array indexed by counter (reused by the thread, left zeroed)
//! when the sketch is small enough, in a hash map otherwise.

use super::layout::ItemSlots;
use crate::fast::FastMap;
use std::cell::RefCell;

/// Sketches of at most this many counters fold in the thread's scratch array (4 MiB
/// at most, and only as much as the largest such sketch used); larger ones in a map.
const SCRATCH_CELLS: u64 = 1 << 20;

/// A call's slots folded per counter (see the module's comment).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Folded {
    /// Per slot, in the slots' order: the sum of the additions that the call's later
    /// slots make to the same counter (saturating; a saturated sum means the counter
    /// saturated too, which the caller checks).
    pub(super) later: Vec<u32>,
    /// Per page the call adds to, ascending: one `(offset, sum)` per counter with a
    /// non-zero sum, in the order the slots first touch them.
    pub(super) pages: Vec<(u32, Vec<(u32, u32)>)>,
}

/// Sums per counter, all zero before and after a fold.
trait Sums {
    /// Adds `add` to `cell`'s sum (saturating) and returns the sum before.
    fn add(&mut self, cell: u32, add: u32) -> u32;
    /// `cell`'s sum, leaving it zero.
    fn take(&mut self, cell: u32) -> u32;
}

impl Sums for [u32] {
    fn add(&mut self, cell: u32, add: u32) -> u32 {
        self.get_mut(cell as usize).map_or(0, |sum| {
            let before = *sum;
            *sum = before.saturating_add(add);
            before
        })
    }

    fn take(&mut self, cell: u32) -> u32 {
        self.get_mut(cell as usize).map_or(0, std::mem::take)
    }
}

impl Sums for FastMap<u32, u32> {
    fn add(&mut self, cell: u32, add: u32) -> u32 {
        let sum = self.entry(cell).or_insert(0);
        let before = *sum;
        *sum = before.saturating_add(add);
        before
    }

    fn take(&mut self, cell: u32) -> u32 {
        self.remove(&cell).unwrap_or(0)
    }
}

thread_local! {
    static SCRATCH: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

impl ItemSlots {
    /// The slots folded per counter, item `i` adding `adds[i]` to each of its counters.
    pub(super) fn fold(&self, adds: &[u32]) -> Folded {
        let cells = self.cells();
        if cells <= SCRATCH_CELLS {
            let folded = SCRATCH.with(|scratch| {
                let mut scratch = scratch.try_borrow_mut().ok()?;
                if scratch.len() < cells as usize {
                    scratch.resize(cells as usize, 0);
                }
                Some(self.fold_with(adds, scratch.as_mut_slice()))
            });
            if let Some(folded) = folded {
                return folded;
            }
        }
        self.fold_with(adds, &mut FastMap::default())
    }

    fn fold_with<S: Sums + ?Sized>(&self, adds: &[u32], sums: &mut S) -> Folded {
        let page_cells = self.page_cells();
        let cell = |(page, offset): (u32, u32)| page * page_cells + offset;
        let depth = self.depth().max(1);
        let add_of = |n: usize| adds.get(n / depth).copied().unwrap_or(0);
        let slots = self.all();
        let mut later = vec![0u32; slots.len()];
        for (n, (&slot, later)) in slots.iter().zip(later.iter_mut()).enumerate().rev() {
            *later = sums.add(cell(slot), add_of(n));
        }
        let mut entries: Vec<(u32, u32, u32)> = Vec::new();
        for &slot in slots {
            let sum = sums.take(cell(slot));
            if sum != 0 {
                entries.push((slot.0, slot.1, sum));
            }
        }
        // Already in page order when every slot is on one page (checked in one pass).
        entries.sort_by_key(|&(page, _, _)| page);
        let mut pages: Vec<(u32, Vec<(u32, u32)>)> = Vec::new();
        for (page, offset, sum) in entries {
            match pages.last_mut() {
                Some((last, page_entries)) if *last == page => page_entries.push((offset, sum)),
                _ => pages.push((page, vec![(offset, sum)])),
            }
        }
        Folded { later, pages }
    }
}

#[cfg(test)]
mod tests;
