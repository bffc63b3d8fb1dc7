//! Where one count-min sketch's counters live: its parameters and page keys.

use crate::error::{Error, Result};
use crate::keys::{self, TALLY_SUB};
use crate::meta::{CmsParams, Meta, Params};
use crate::window::{Prefixes, Window};
use rocksketch_merge::layout::cms::CmsLayout;
use std::cell::OnceCell;

/// Where one key's counters live. A windowed sketch is a sketch per generation: the
/// layout's `prefix` is the current generation's (where increments go), `older` the
/// other live ones' (which reads add in).
#[derive(Debug, Clone)]
pub(super) struct Layout {
    pub(super) params: CmsParams,
    pub(super) prefix: Vec<u8>,
    pub(super) older: Vec<Vec<u8>>,
    pub(super) window: Option<Window>,
}

impl Layout {
    /// The layout of the key version `meta` as read at `now` (the store's clock).
    pub(super) fn new(ns: u16, key: &[u8], meta: &Meta, now: u64) -> Result<Layout> {
        match meta.params {
            Params::Cms(params) => {
                let prefixes = Prefixes::of(
                    keys::version_prefix(ns, key, meta.version),
                    meta.window,
                    now,
                );
                Ok(Layout {
                    params,
                    prefix: prefixes.write().to_vec(),
                    older: prefixes.older().to_vec(),
                    window: meta.window,
                })
            }
            Params::Bloom(_)
            | Params::Cuckoo(_)
            | Params::TDigest(_)
            | Params::TopK(_)
            | Params::Ribbon(_)
            | Params::Hll => Err(Error::WrongType),
        }
    }

    /// Each older live generation as a sketch of its own (none without a window).
    pub(super) fn older_generations(&self) -> impl Iterator<Item = Layout> + '_ {
        self.older.iter().map(|prefix| Layout {
            params: self.params,
            prefix: prefix.clone(),
            older: Vec::new(),
            window: None,
        })
    }

    /// Every live generation, the current one first (the layout itself without a
    /// window): what a merge or `CMS.INFO` visits.
    pub(super) fn generations(&self) -> impl Iterator<Item = Layout> + '_ {
        let current = Layout {
            older: Vec::new(),
            ..self.clone()
        };
        std::iter::once(current).chain(self.older_generations())
    }

    pub(super) fn shape(&self) -> CmsLayout {
        CmsLayout {
            width: self.params.width,
            depth: self.params.depth,
            page_cells: self.params.page_cells,
        }
    }

    pub(super) fn pages(&self) -> u32 {
        self.shape().pages()
    }

    /// Counters in page `page` (the last page may be short).
    pub(super) fn page_len(&self, page: u32) -> u32 {
        self.shape().page_len(page)
    }

    /// `(page, offset)` of `item`'s counter in each row.
    pub(super) fn slots<'a>(&self, item: &'a [u8]) -> impl Iterator<Item = (u32, u32)> + 'a {
        let shape = self.shape();
        (0..shape.depth).map(move |row| shape.slot(item, row))
    }

    /// Every item's counter slots, hashed once for all the uses of one call.
    pub(super) fn item_slots<'a>(&self, items: impl Iterator<Item = &'a [u8]>) -> ItemSlots {
        let depth = self.params.depth as usize;
        let (lower, _) = items.size_hint();
        let mut slots = Vec::with_capacity(lower.saturating_mul(depth));
        for item in items {
            slots.extend(self.slots(item));
        }
        ItemSlots {
            depth,
            slots,
            by_counter: OnceCell::new(),
        }
    }

    pub(super) fn page_key(&self, page: u32) -> Vec<u8> {
        keys::page_key(&self.prefix, 0, page)
    }

    pub(super) fn tally_key(&self) -> Vec<u8> {
        keys::page_key(&self.prefix, TALLY_SUB, 0)
    }
}

/// The `(page, offset)` of each item's counter in each row, `depth` per item in order.
pub(super) struct ItemSlots {
    depth: usize,
    slots: Vec<(u32, u32)>,
    by_counter: OnceCell<Vec<(u32, u32, usize)>>,
}

impl ItemSlots {
    /// Item `i`'s slots, one per row.
    pub(super) fn of(&self, i: usize) -> &[(u32, u32)] {
        let start = i.saturating_mul(self.depth);
        self.slots
            .get(start..start.saturating_add(self.depth))
            .unwrap_or(&[])
    }

    /// Rows per item: slot `n` is item `n / depth`'s.
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    /// How many slots there are, `depth` per item.
    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Every slot as `(page, offset, n)`, `n` its place among all the items' slots,
    /// sorted: one counter's slots together and in item order. Sorted once for all
    /// the uses of one call (the operands, the estimates, the pages to read).
    pub(super) fn by_counter(&self) -> &[(u32, u32, usize)] {
        self.by_counter
            .get_or_init(|| sorted_by_counter(&self.slots))
    }

    /// The pages the items touch, sorted, each once.
    pub(super) fn pages(&self) -> Vec<u32> {
        let mut pages: Vec<u32> = match self.by_counter.get() {
            Some(order) => order.iter().map(|(page, _, _)| *page).collect(),
            None => {
                let mut pages: Vec<u32> = self.slots.iter().map(|(page, _)| *page).collect();
                pages.sort_unstable();
                pages
            }
        };
        pages.dedup();
        pages
    }
}

/// Bits of a packed sort key for the page, the offset and the slot's place.
const PAGE_BITS: u32 = 16;
const OFFSET_BITS: u32 = 24;
const PLACE_BITS: u32 = 64 - PAGE_BITS - OFFSET_BITS;

/// `slots` as `(page, offset, n)`, sorted. A hot key's batch holds thousands of slots
/// and sorting them was a seventh of `CMS.INCRBY`'s I/O thread on one key: where every
/// field fits, each slot sorts as one `u64` (page, offset, place, high bits first), the
/// same order as the tuples' and about twice as fast; otherwise the tuples sort.
fn sorted_by_counter(slots: &[(u32, u32)]) -> Vec<(u32, u32, usize)> {
    let fits = slots.len() < 1 << PLACE_BITS
        && slots
            .iter()
            .all(|&(page, offset)| page < 1 << PAGE_BITS && offset < 1 << OFFSET_BITS);
    if !fits {
        let mut order: Vec<(u32, u32, usize)> = slots
            .iter()
            .enumerate()
            .map(|(n, &(page, offset))| (page, offset, n))
            .collect();
        order.sort_unstable();
        return order;
    }
    let mut packed: Vec<u64> = slots
        .iter()
        .enumerate()
        .map(|(n, &(page, offset))| {
            (u64::from(page) << (OFFSET_BITS + PLACE_BITS))
                | (u64::from(offset) << PLACE_BITS)
                | n as u64
        })
        .collect();
    packed.sort_unstable();
    let mask = |bits: u32| (1u64 << bits) - 1;
    packed
        .into_iter()
        .map(|key| {
            let page = (key >> (OFFSET_BITS + PLACE_BITS)) as u32;
            let offset = ((key >> PLACE_BITS) & mask(OFFSET_BITS)) as u32;
            (page, offset, (key & mask(PLACE_BITS)) as usize)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tuples_sorted(slots: &[(u32, u32)]) -> Vec<(u32, u32, usize)> {
        let mut order: Vec<_> = slots
            .iter()
            .enumerate()
            .map(|(n, &(page, offset))| (page, offset, n))
            .collect();
        order.sort();
        order
    }

    #[test]
    fn packed_order_is_the_tuples_order_at_the_fields_limits() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let limit_page = (1u32 << PAGE_BITS) - 1;
        let limit_offset = (1u32 << OFFSET_BITS) - 1;
        let mut slots: Vec<(u32, u32)> = (0..5000)
            .map(|_| ((next() % 7) as u32, (next() % 50) as u32))
            .collect();
        slots.extend([(limit_page, limit_offset), (0, 0), (limit_page, 0), (3, 7)]);
        assert_eq!(sorted_by_counter(&slots), tuples_sorted(&slots));
        // Past a field's limit the tuples sort, in the same order.
        for past in [
            (1u32 << PAGE_BITS, 0),
            (0, 1u32 << OFFSET_BITS),
            (u32::MAX, u32::MAX),
        ] {
            let mut beyond = slots.clone();
            beyond.insert(17, past);
            assert_eq!(sorted_by_counter(&beyond), tuples_sorted(&beyond));
        }
    }
}
