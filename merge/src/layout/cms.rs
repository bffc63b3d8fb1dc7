//! Count-min sketches: counters row-major (`row * width + column`), cut into pages of
//! `page_cells` counters; row `i` of an item is column `murmur2(item, i) % width`, as
//! RedisBloom hashes it, so every estimate equals RedisBloom's.

use crate::hash::murmur2;

/// Width × depth above this many counters is refused (1 GiB of counters): every
/// command's work is bounded by the sketch's size (`CMS.MERGE` reads every page of
/// every source), so the size is bounded too.
pub const MAX_CELLS: u64 = 1 << 28;
/// Rows above this are refused: each row halves the probability of exceeding the error
/// bound, so 128 rows already give 2^-128, and every query reads a page per row.
pub const MAX_DEPTH: u64 = 128;

/// The shape of a sketch's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmsLayout {
    /// Counters per row.
    pub width: u32,
    /// Rows (hash functions).
    pub depth: u32,
    /// Counters per page (at least 1).
    pub page_cells: u32,
}

impl CmsLayout {
    /// Counters in all rows.
    pub fn cells(&self) -> u64 {
        u64::from(self.width) * u64::from(self.depth)
    }

    /// Pages the counters take.
    pub fn pages(&self) -> u32 {
        self.cells().div_ceil(u64::from(self.page_cells.max(1))) as u32
    }

    /// Counters in page `page` (the last page may be short; 0 past the last).
    pub fn page_len(&self, page: u32) -> u32 {
        let cells_per = u64::from(self.page_cells.max(1));
        (self.cells().saturating_sub(u64::from(page) * cells_per)).min(cells_per) as u32
    }

    /// `(page, offset)` of `item`'s counter in row `row`.
    pub fn slot(&self, item: &[u8], row: u32) -> (u32, u32) {
        let width = u64::from(self.width.max(1));
        let cells_per = u64::from(self.page_cells.max(1));
        let cell = u64::from(row) * width + u64::from(murmur2(item, row)) % width;
        ((cell / cells_per) as u32, (cell % cells_per) as u32)
    }

    /// `(page, offset)` of `item`'s counter in each row.
    pub fn slots<'a>(&'a self, item: &'a [u8]) -> impl Iterator<Item = (u32, u32)> + 'a {
        (0..self.depth).map(move |row| self.slot(item, row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_row_major_and_in_range() {
        let layout = CmsLayout {
            width: 1000,
            depth: 5,
            page_cells: 512,
        };
        assert_eq!(layout.pages(), 10);
        assert_eq!(layout.page_len(9), 5000 - 9 * 512);
        assert_eq!(layout.page_len(10), 0);
        for (row, (page, offset)) in layout.slots(b"item").enumerate() {
            let cell = u64::from(page) * 512 + u64::from(offset);
            assert_eq!(cell / 1000, row as u64);
            assert_eq!(cell % 1000, u64::from(murmur2(b"item", row as u32)) % 1000);
        }
    }
}
