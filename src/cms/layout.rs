//! Where one count-min sketch's counters live: its parameters and page keys.

use crate::error::{Error, Result};
use crate::keys::{self, TALLY_SUB};
use crate::meta::{CmsParams, Meta, Params};
use crate::window::{Prefixes, Window};
use rocksketch_merge::layout::cms::CmsLayout;

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

    /// Every item's counter slots, hashed once for all the uses of one call.
    pub(super) fn item_slots<'a>(&self, items: impl Iterator<Item = &'a [u8]>) -> ItemSlots {
        let shape = self.shape();
        let depth = self.params.depth as usize;
        let (lower, _) = items.size_hint();
        let mut slots = Vec::with_capacity(lower.saturating_mul(depth));
        for item in items {
            slots.extend(shape.slots(item));
        }
        ItemSlots {
            depth,
            page_cells: shape.page_cells.max(1),
            cells: shape.cells(),
            slots,
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
    page_cells: u32,
    cells: u64,
    slots: Vec<(u32, u32)>,
}

impl ItemSlots {
    /// Slots as given (`depth` per item), for tests of what is computed from them.
    #[cfg(test)]
    pub(super) fn from_parts(
        depth: usize,
        page_cells: u32,
        cells: u64,
        slots: Vec<(u32, u32)>,
    ) -> ItemSlots {
        ItemSlots {
            depth,
            page_cells,
            cells,
            slots,
        }
    }

    /// Item `i`'s slots, one per row.
    pub(super) fn of(&self, i: usize) -> &[(u32, u32)] {
        let start = i.saturating_mul(self.depth);
        self.slots
            .get(start..start.saturating_add(self.depth))
            .unwrap_or(&[])
    }

    /// Every slot: slot `n` is item `n / depth`'s, in row `n % depth`.
    pub(super) fn all(&self) -> &[(u32, u32)] {
        &self.slots
    }

    /// Rows per item.
    pub(super) fn depth(&self) -> usize {
        self.depth
    }

    /// Counters per page: a slot's counter is `page * page_cells + offset`.
    pub(super) fn page_cells(&self) -> u32 {
        self.page_cells
    }

    /// Counters in the sketch.
    pub(super) fn cells(&self) -> u64 {
        self.cells
    }

    /// The pages the items touch, sorted, each once.
    pub(super) fn pages(&self) -> Vec<u32> {
        let mut pages: Vec<u32> = self.slots.iter().map(|(page, _)| *page).collect();
        pages.dedup();
        pages.sort_unstable();
        pages.dedup();
        pages
    }
}
