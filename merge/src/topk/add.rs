//! RedisBloom's `TopK_Add`, `TopK_Query`, `TopK_Count` and `TopK_List`, over counters
//! that are either a page's own or an overlay of changes on a shared page (what a
//! writer uses to compute its replies without copying the counters).

use super::{Cell, HeapEntry, Shape, TopKPage, FINGERPRINT_SEED};
use crate::hash::murmur2;
use std::collections::HashMap;

/// Counters an add reads and writes.
pub trait Counters {
    /// The counter at `at`.
    fn cell(&self, at: usize) -> Cell;
    /// Replaces the counter at `at`.
    fn set_cell(&mut self, at: usize, cell: Cell);
}

impl Counters for Vec<Cell> {
    fn cell(&self, at: usize) -> Cell {
        self.get(at).copied().unwrap_or_default()
    }

    fn set_cell(&mut self, at: usize, cell: Cell) {
        if let Some(slot) = self.get_mut(at) {
            *slot = cell;
        }
    }
}

/// Counters changed over a page's: a map of the changes for a few, a copy of all the
/// counters once the changes would be many (a copy is cheaper than that many inserts).
pub enum Overlay<'a> {
    /// A few counters changed: the page's, and the changes.
    Sparse {
        /// The page's counters.
        base: &'a [Cell],
        /// Changed counters by position.
        changes: HashMap<usize, Cell>,
    },
    /// Many changed: a copy of every counter.
    Dense(Vec<Cell>),
}

impl Counters for Overlay<'_> {
    fn cell(&self, at: usize) -> Cell {
        match self {
            Overlay::Sparse { base, changes } => match changes.get(&at) {
                Some(cell) => *cell,
                None => base.get(at).copied().unwrap_or_default(),
            },
            Overlay::Dense(cells) => cells.cell(at),
        }
    }

    fn set_cell(&mut self, at: usize, cell: Cell) {
        match self {
            Overlay::Sparse { changes, .. } => {
                changes.insert(at, cell);
            }
            Overlay::Dense(cells) => cells.set_cell(at, cell),
        }
    }
}

/// What an add works on: counters, the heap and the draw count.
pub struct Sketch<C> {
    shape: Shape,
    table: Box<[f64; 256]>,
    cells: C,
    heap: Vec<HeapEntry>,
    draws: u64,
}

impl TopKPage {
    /// A sketch over this page's counters that leaves the page as it is (the heap is
    /// copied: at most `k` entries), for an add of about `pairs` pairs.
    pub fn overlay(&self, pairs: usize) -> Sketch<Overlay<'_>> {
        let touched = pairs.saturating_mul(self.shape.depth as usize);
        let cells = if touched.saturating_mul(8) < self.cells.len() {
            Overlay::Sparse {
                base: &self.cells,
                changes: HashMap::with_capacity(touched),
            }
        } else {
            Overlay::Dense(self.cells.clone())
        };
        Sketch {
            shape: self.shape,
            table: self.table.clone(),
            cells,
            heap: self.heap.clone(),
            draws: self.draws,
        }
    }

    /// Applies `(item, increment)` pairs in order, as RedisBloom's `TopK_Add` does.
    pub fn add_all<'i>(&mut self, pairs: impl IntoIterator<Item = (&'i [u8], u32)>) {
        let mut sketch = Sketch {
            shape: self.shape,
            table: self.table.clone(),
            cells: std::mem::take(&mut self.cells),
            heap: std::mem::take(&mut self.heap),
            draws: self.draws,
        };
        for (item, increment) in pairs {
            sketch.add(item, increment);
        }
        self.cells = sketch.cells;
        self.heap = sketch.heap;
        self.draws = sketch.draws;
    }

    /// `TOPK.QUERY`: whether `item` is in the heap.
    pub fn query(&self, item: &[u8]) -> bool {
        find(&self.heap, item, murmur2(item, FINGERPRINT_SEED)).is_some()
    }

    /// `TOPK.COUNT`: the largest count among the item's cells that hold its fingerprint
    /// (for an item in the heap, only counts at or above the heap's minimum).
    pub fn count(&self, item: &[u8]) -> u32 {
        let fp = murmur2(item, FINGERPRINT_SEED);
        let heap_min = self.heap.first().map_or(0, |e| e.count);
        let in_heap = find(&self.heap, item, fp).is_some();
        (0..self.shape.depth)
            .map(|row| self.cells.cell(cell_index(&self.shape, item, row)))
            .filter(|c| c.fp == fp && (!in_heap || c.count >= heap_min))
            .map(|c| c.count)
            .max()
            .unwrap_or(0)
    }

    /// `TOPK.LIST`: the heap by count, largest first (equal counts in heap order), up
    /// to the first count of 0; items as C strings (cut at a NUL byte).
    pub fn list(&self) -> Vec<(&[u8], u32)> {
        let mut entries: Vec<&HeapEntry> = self.heap.iter().collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.count));
        entries
            .into_iter()
            .take_while(|e| e.count != 0)
            .map(|e| (c_string(e.item.as_deref().unwrap_or_default()), e.count))
            .collect()
    }
}

impl<C: Counters> Sketch<C> {
    /// Draw number `draws`, as `rand() / RAND_MAX` (see the module docs of `topk`).
    fn draw(&mut self) -> f64 {
        let mut z = self.draws.wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.draws = self.draws.wrapping_add(1);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 33) as f64 / 2_147_483_647.0
    }

    /// The chance that a count decays by one: `decay^count`, from the table as
    /// RedisBloom reads it.
    fn decay_of(&self, count: u32) -> f64 {
        let at = |i: u32| self.table.get(i as usize).copied().unwrap_or(0.0);
        if count < 256 {
            at(count)
        } else {
            at(255).powf(f64::from(count / 255)) * at(count % 255)
        }
    }

    /// `TopK_Add`: returns the item expelled from the heap, if any.
    pub fn add(&mut self, item: &[u8], increment: u32) -> Option<Vec<u8>> {
        let heap_min = self.heap.first().map_or(0, |e| e.count);
        let fp = murmur2(item, FINGERPRINT_SEED);
        let mut max_count = 0;
        for row in 0..self.shape.depth {
            let at = cell_index(&self.shape, item, row);
            let mut cell = self.cells.cell(at);
            if cell.count == 0 {
                cell = Cell {
                    fp,
                    count: increment,
                };
                max_count = max_count.max(increment);
            } else if cell.fp == fp {
                cell.count = cell.count.wrapping_add(increment);
                max_count = max_count.max(cell.count);
            } else {
                for local in (1..=increment).rev() {
                    let chance = self.decay_of(cell.count);
                    if chance == 0.0 {
                        // No draw can decay it: the remaining draws change nothing.
                        self.draws = self.draws.wrapping_add(u64::from(local));
                        break;
                    }
                    if self.draw() < chance {
                        cell.count -= 1;
                        if cell.count == 0 {
                            cell = Cell { fp, count: local };
                            max_count = max_count.max(local);
                            break;
                        }
                    }
                }
            }
            self.cells.set_cell(at, cell);
        }
        if max_count < heap_min {
            return None;
        }
        if let Some(at) = find(&self.heap, item, fp) {
            if let Some(entry) = self.heap.get_mut(at) {
                entry.count = max_count;
            }
            heapify_down(&mut self.heap, at);
            return None;
        }
        let entry = HeapEntry {
            count: max_count,
            fp,
            item: Some(item.to_vec()),
        };
        let expelled = self.heap.first_mut().map(|e| std::mem::replace(e, entry));
        heapify_down(&mut self.heap, 0);
        expelled.and_then(|e| e.item)
    }
}

/// The counter of `item` in `row`.
fn cell_index(shape: &Shape, item: &[u8], row: u32) -> usize {
    row as usize * shape.width as usize + (murmur2(item, row) % shape.width) as usize
}

/// Where `item` is in the heap, scanning from the end as RedisBloom does.
fn find(heap: &[HeapEntry], item: &[u8], fp: u32) -> Option<usize> {
    heap.iter()
        .rposition(|e| e.fp == fp && e.item.as_deref() == Some(item))
}

/// An item as RedisBloom replies with it: cut at its first NUL byte.
pub fn c_string(item: &[u8]) -> &[u8] {
    match item.iter().position(|b| *b == 0) {
        Some(end) => item.get(..end).unwrap_or_default(),
        None => item,
    }
}

/// RedisBloom's `heapifyDown`: a min-heap on count whose first step moves on equal
/// counts and whose later steps move only past strictly smaller ones.
fn heapify_down(heap: &mut [HeapEntry], mut start: usize) {
    let len = heap.len();
    let count = |heap: &[HeapEntry], i: usize| heap.get(i).map_or(0, |e| e.count);
    if len < 2 || (len - 2) / 2 < start {
        return;
    }
    let mut child = 2 * start + 1;
    if child + 1 < len && count(heap, child) > count(heap, child + 1) {
        child += 1;
    }
    if count(heap, child) > count(heap, start) {
        return;
    }
    let top_count = count(heap, start);
    loop {
        heap.swap(start, child);
        start = child;
        if (len - 2) / 2 < child {
            break;
        }
        child = 2 * child + 1;
        if child + 1 < len && count(heap, child) > count(heap, child + 1) {
            child += 1;
        }
        if count(heap, child) >= top_count {
            break;
        }
    }
}
