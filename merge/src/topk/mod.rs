//! Top-K pages: RedisBloom's HeavyKeeper (`topk.c`), so that every answer equals
//! RedisBloom's wherever its answers do not depend on its random draws.
//!
//! A Top-K is one page: `width x depth` counters (fingerprint, count) and the heap of the
//! `k` heaviest items seen (count, fingerprint, item bytes), plus the number of random
//! draws made so far. `TOPK.ADD` and `TOPK.INCRBY` write an operand of `(item,
//! increment)` pairs ([`ops`]); the full merge applies them in order exactly as
//! RedisBloom's `TopK_Add` does ([`add`]).
//!
//! RedisBloom draws a number from C's `rand()` for each decay step, so its answers then
//! depend on the process' seed. Here draw `i` of a page (counted from its creation) is
//! `splitmix64(i) >> 33`, a 31-bit number like glibc's `rand()`, divided by
//! `RAND_MAX = 2^31 - 1`: the same page and operands always give the same bytes, and the
//! draws are as uniform as RedisBloom's.
//!
//! ```text
//! Top-K page payload (version 1):
//! k u32 | width u32 | depth u32 | reserved u32 (0) | decay f64 | draws u64 |
//! counters: (fp u32 | count u32) x width x depth, row-major |
//! heap: k x (count u32 | fp u32 | item_len u32 (u32::MAX: no item) | item bytes)
//! ```

pub mod add;
pub mod ops;

use crate::bytes::{le_u32, le_u64};
use crate::error::{Error, Result};
use crate::header::{self, Kind};

/// RedisBloom's fingerprint seed.
pub const FINGERPRINT_SEED: u32 = 1919;
/// Most counters (`width x depth`) a Top-K may have: 512 KiB of counters.
pub const MAX_CELLS: u64 = 1 << 16;
/// Most rows a Top-K may have: an increment of `n` may draw `n` times per row, so rows
/// bound the work of every add (at most 100 000 x 64 draws per pair).
pub const MAX_DEPTH: u32 = 64;
/// Most items a Top-K may keep.
pub const MAX_K: u32 = 1000;
/// The longest item a Top-K keeps: with [`MAX_K`] and [`MAX_CELLS`], a page stays under
/// 1.6 MiB.
pub const MAX_ITEM_BYTES: usize = 1024;
const FIXED_LEN: usize = 32;
const NO_ITEM: u32 = u32::MAX;

/// One counter: the fingerprint it counts and its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cell {
    /// The fingerprint the counter counts.
    pub fp: u32,
    /// Its count.
    pub count: u32,
}

/// One heap entry; an entry never filled has no item.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HeapEntry {
    /// The item's count.
    pub count: u32,
    /// The item's fingerprint.
    pub fp: u32,
    /// The item, once one filled the entry.
    pub item: Option<Vec<u8>>,
}

/// A Top-K's fixed parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// How many top items it keeps.
    pub k: u32,
    /// Counters per row.
    pub width: u32,
    /// Rows (hash functions).
    pub depth: u32,
    /// The decay base: a counter of another item decays with probability decay^count.
    pub decay: f64,
}

impl Shape {
    /// Checks the limits; `None` outside them.
    pub fn new(k: u32, width: u32, depth: u32, decay: f64) -> Option<Shape> {
        let cells = u64::from(width) * u64::from(depth);
        let valid = (1..=MAX_K).contains(&k)
            && width > 0
            && depth > 0
            && depth <= MAX_DEPTH
            && cells <= MAX_CELLS
            && decay > 0.0
            && decay <= 1.0;
        valid.then_some(Shape {
            k,
            width,
            depth,
            decay,
        })
    }

    /// How many counters it has (width x depth).
    pub fn cells(&self) -> usize {
        self.width as usize * self.depth as usize
    }

    /// RedisBloom's decay table: `decay^i` for i = 0..255 (C's `pow`).
    pub fn decay_table(&self) -> [f64; 256] {
        std::array::from_fn(|i| self.decay.powf(i as f64))
    }
}

/// A decoded Top-K page.
#[derive(Debug, Clone)]
pub struct TopKPage {
    pub(crate) shape: Shape,
    pub(crate) draws: u64,
    pub(crate) cells: Vec<Cell>,
    pub(crate) heap: Vec<HeapEntry>,
    /// [`Shape::decay_table`], computed once (not stored).
    pub(crate) table: Box<[f64; 256]>,
}

impl PartialEq for TopKPage {
    fn eq(&self, other: &TopKPage) -> bool {
        self.encode() == other.encode()
    }
}

impl Eq for TopKPage {}

impl TopKPage {
    /// An empty Top-K (`TOPK.RESERVE`).
    pub fn new(shape: Shape) -> TopKPage {
        TopKPage {
            shape,
            draws: 0,
            cells: vec![Cell::default(); shape.cells()],
            heap: vec![HeapEntry::default(); shape.k as usize],
            table: Box::new(shape.decay_table()),
        }
    }

    /// The page's parameters.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The counters, row by row.
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    /// The heap of the top items, a min-heap on count.
    pub fn heap(&self) -> &[HeapEntry] {
        &self.heap
    }

    /// Random draws made so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }

    /// About the bytes the page occupies in memory.
    pub fn memory_bytes(&self) -> usize {
        FIXED_LEN
            + 8 * self.cells.len()
            + self
                .heap
                .iter()
                .map(|e| 12 + e.item.as_ref().map_or(0, Vec::len))
                .sum::<usize>()
    }

    /// Encodes the page.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = header::begin(Kind::TopKPage, self.memory_bytes());
        let s = self.shape;
        for field in [s.k, s.width, s.depth, 0] {
            out.extend_from_slice(&field.to_le_bytes());
        }
        out.extend_from_slice(&s.decay.to_le_bytes());
        out.extend_from_slice(&self.draws.to_le_bytes());
        for cell in &self.cells {
            out.extend_from_slice(&cell.fp.to_le_bytes());
            out.extend_from_slice(&cell.count.to_le_bytes());
        }
        for entry in &self.heap {
            out.extend_from_slice(&entry.count.to_le_bytes());
            out.extend_from_slice(&entry.fp.to_le_bytes());
            match &entry.item {
                None => out.extend_from_slice(&NO_ITEM.to_le_bytes()),
                Some(item) => {
                    out.extend_from_slice(&(item.len() as u32).to_le_bytes());
                    out.extend_from_slice(item);
                }
            }
        }
        header::finish(out)
    }

    /// Decodes a page, checking header, checksum, limits and every length.
    pub fn decode(bytes: &[u8]) -> Result<TopKPage> {
        let framed = header::decode_as(bytes, Kind::TopKPage)?;
        let p = framed.payload;
        let shape = Shape::new(
            le_u32(p, 0)?,
            le_u32(p, 4)?,
            le_u32(p, 8)?,
            f64::from_bits(le_u64(p, 16)?),
        )
        .filter(|_| le_u32(p, 12).ok() == Some(0))
        .ok_or(Error::Invalid("top-k shape out of range"))?;
        let draws = le_u64(p, 24)?;
        let cells_end = FIXED_LEN + 8 * shape.cells();
        let cell_bytes = p.get(FIXED_LEN..cells_end).ok_or(Error::Truncated {
            need: cells_end,
            have: p.len(),
        })?;
        let cells = crate::bytes::u32_pairs(cell_bytes)
            .map(|(fp, count)| Cell { fp, count })
            .collect();
        let mut heap = Vec::with_capacity(shape.k as usize);
        let mut at = cells_end;
        for _ in 0..shape.k {
            let (count, fp, len) = (le_u32(p, at)?, le_u32(p, at + 4)?, le_u32(p, at + 8)?);
            at += 12;
            let item = match len {
                NO_ITEM => None,
                len if len as usize <= MAX_ITEM_BYTES => {
                    let end = at + len as usize;
                    let item = p.get(at..end).ok_or(Error::Truncated {
                        need: end,
                        have: p.len(),
                    })?;
                    at = end;
                    Some(item.to_vec())
                }
                _ => return Err(Error::Invalid("top-k item longer than the limit")),
            };
            heap.push(HeapEntry { count, fp, item });
        }
        if at != p.len() {
            return Err(Error::Invalid("top-k page length does not match its heap"));
        }
        Ok(TopKPage {
            shape,
            draws,
            cells,
            heap,
            table: Box::new(shape.decay_table()),
        })
    }
}

#[cfg(test)]
mod tests;
