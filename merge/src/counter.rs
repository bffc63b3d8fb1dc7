//! Count-min counter pages and their delta operands.
//!
//! ```text
//! CounterPage  (kind 0x01, v1) payload: cell u32 LE × n
//! CounterDelta (kind 0x02, v1) payload: page_len u32 LE | form u8 | body
//!   form 0, sparse:  (index u32 LE, add u32 LE) × k       (8 k bytes; read, no longer written)
//!   form 1, dense:   add u32 LE × page_len                (4 page_len bytes)
//!   form 2, compact: (index varint, add varint) × k       (LEB128; since 2026-12)
//! ```
//!
//! The compact form carries what form 0 did in a third of the bytes for the usual
//! delta (an index under 16 384 and an addition under 128 take 3 bytes): a hot
//! sketch's deltas are most of its WAL, memtable and L0 bytes. No entry takes more
//! than 8 bytes (an index is under 2^21), so it is never larger than form 0.
//!
//! Cells are `u32` and additions saturate at `u32::MAX` (RedisBloom's semantics). All
//! additions are non-negative, so saturating addition is associative and commutative:
//! applying deltas one by one, combined, or in any grouping gives the same cells. An
//! addition larger than `u32::MAX` saturates any cell, so adds are stored as `u32`.
//!
//! A delta names the length of the page it was written for; a full merge skips a delta
//! whose length differs from the page's, or whose indices fall outside it.

use crate::bytes::{le_u32, put_varint_u32, take_varint_u32, u32_pairs, u32s, varint_u32_len};
use crate::error::{Error, Result};
use crate::header::{self, Kind};

const PAGE_LEN_OFFSET: usize = 0;
const FORM_OFFSET: usize = PAGE_LEN_OFFSET + 4;
const BODY_OFFSET: usize = FORM_OFFSET + 1;
const SPARSE_ENTRY_LEN: usize = 8;
const FORM_SPARSE: u8 = 0;
const FORM_DENSE: u8 = 1;
const FORM_COMPACT: u8 = 2;
/// The most bytes a compact entry takes: an index under 2^21 (pages are smaller) in 3,
/// an addition in 5.
const MAX_COMPACT_ENTRY: usize = 8;
/// The fewest: a one-byte index and a one-byte addition.
const MIN_COMPACT_ENTRY: usize = 2;
const _: () = assert!(crate::MAX_PAGE_BYTES / 4 <= 1 << 21);

/// A materialized page of counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterPage {
    cells: Vec<u32>,
}

impl CounterPage {
    /// A page of `len` zero counters: what a missing page reads as.
    pub fn zeroed(len: usize) -> CounterPage {
        CounterPage {
            cells: vec![0; len],
        }
    }

    /// A page holding `cells`.
    pub fn from_cells(cells: Vec<u32>) -> CounterPage {
        CounterPage { cells }
    }

    /// The counters.
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// Consumes the page, returning its counters.
    pub fn into_cells(self) -> Vec<u32> {
        self.cells
    }

    /// Whether every counter is zero (such a page need not be stored).
    pub fn is_zero(&self) -> bool {
        self.cells.iter().all(|c| *c == 0)
    }

    /// Decodes a stored page, checking header, checksum and length.
    pub fn decode(bytes: &[u8]) -> Result<CounterPage> {
        let framed = header::decode(bytes)?;
        expect_kind(framed.kind, Kind::CounterPage)?;
        Ok(CounterPage {
            cells: read_u32s(framed.payload)?,
        })
    }

    /// Encodes the page with its header.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = header::begin(Kind::CounterPage, self.cells.len() * 4);
        out.extend(self.cells.iter().flat_map(|cell| cell.to_le_bytes()));
        header::finish(out)
    }

    /// Applies one operand as [`crate::full_merge`] does (saturating additions); `false`
    /// (page unchanged) for one the full merge would skip.
    pub(crate) fn apply_operand(&mut self, operand: &[u8]) -> bool {
        match DeltaView::decode(operand) {
            Ok(delta) if delta.page_len() as usize == self.cells.len() => {
                let cells = &mut self.cells;
                delta.for_each(|index, add| {
                    if let Some(cell) = cells.get_mut(index as usize) {
                        *cell = cell.saturating_add(add);
                    }
                });
                true
            }
            _ => false,
        }
    }

    /// Checks an encoded page (header, checksum, length) without decoding its cells.
    fn check(bytes: &[u8]) -> Result<()> {
        let framed = header::decode(bytes)?;
        expect_kind(framed.kind, Kind::CounterPage)?;
        if framed.payload.len().is_multiple_of(4) {
            Ok(())
        } else {
            Err(Error::Invalid("length is not a whole number of u32 cells"))
        }
    }
}

/// The body of a delta.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeltaBody {
    /// `(index, add)` pairs, in the order they apply.
    Sparse(Vec<(u32, u32)>),
    /// One addition per cell of the page.
    Dense(Vec<u32>),
}

/// A delta operand: saturating additions to some cells of one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterDelta {
    page_len: u32,
    body: DeltaBody,
}

impl CounterDelta {
    /// A sparse delta for a page of `page_len` cells. Returns `Invalid` if an index is
    /// out of range.
    pub fn sparse(page_len: u32, entries: Vec<(u32, u32)>) -> Result<CounterDelta> {
        if page_len as usize > crate::MAX_PAGE_BYTES / 4 {
            return Err(Error::Invalid("delta page length beyond the largest page"));
        }
        if entries.iter().any(|(index, _)| *index >= page_len) {
            return Err(Error::Invalid("delta index beyond the page"));
        }
        Ok(CounterDelta {
            page_len,
            body: DeltaBody::Sparse(entries),
        })
    }

    /// A dense delta: one addition per cell.
    pub fn dense(adds: Vec<u32>) -> Result<CounterDelta> {
        let page_len =
            u32::try_from(adds.len()).map_err(|_| Error::Invalid("page longer than u32"))?;
        Ok(CounterDelta {
            page_len,
            body: DeltaBody::Dense(adds),
        })
    }

    /// Whether `entries` encode smaller sparse (in the compact form) than as a dense
    /// delta for a page of `page_len` cells.
    pub fn sparse_is_smaller(page_len: u32, entries: &[(u32, u32)]) -> bool {
        let dense = page_len as usize * 4;
        entries.len() * MAX_COMPACT_ENTRY < dense || compact_len(entries.iter().copied()) < dense
    }

    /// The length of the page this delta was written for.
    pub fn page_len(&self) -> u32 {
        self.page_len
    }

    /// The body.
    pub fn body(&self) -> &DeltaBody {
        &self.body
    }

    /// Decodes an operand, checking header, checksum and every index.
    pub fn decode(bytes: &[u8]) -> Result<CounterDelta> {
        let view = DeltaView::decode(bytes)?;
        let body = match view.form {
            Form::Sparse | Form::Compact => {
                let per_entry = match view.form {
                    Form::Sparse => SPARSE_ENTRY_LEN,
                    _ => MIN_COMPACT_ENTRY,
                };
                let mut entries = Vec::with_capacity(view.body.len() / per_entry);
                view.for_each(|index, add| entries.push((index, add)));
                DeltaBody::Sparse(entries)
            }
            Form::Dense => DeltaBody::Dense(read_u32s(view.body)?),
        };
        Ok(CounterDelta {
            page_len: view.page_len,
            body,
        })
    }

    /// Encodes the operand with its header (a sparse body in the compact form).
    pub fn encode(&self) -> Vec<u8> {
        let (form, body_len) = match &self.body {
            // Most entries take 2 to 4 bytes (a capacity, not the length).
            DeltaBody::Sparse(entries) => (FORM_COMPACT, entries.len() * 4),
            DeltaBody::Dense(adds) => (FORM_DENSE, adds.len() * 4),
        };
        let mut out = header::begin(Kind::CounterDelta, BODY_OFFSET + body_len);
        out.extend_from_slice(&self.page_len.to_le_bytes());
        out.push(form);
        match &self.body {
            DeltaBody::Sparse(entries) => {
                for &(index, add) in entries {
                    put_varint_u32(&mut out, index);
                    put_varint_u32(&mut out, add);
                }
            }
            DeltaBody::Dense(adds) => {
                for add in adds {
                    out.extend_from_slice(&add.to_le_bytes());
                }
            }
        }
        header::finish(out)
    }

    /// Encodes the sum of `adds` (one per cell of the page) in whichever form is
    /// smaller: compact sparse entries for its non-zero cells, or dense. The result is
    /// never larger than a dense delta, so never much larger than the page.
    pub fn encode_sum(adds: &[u32]) -> Vec<u8> {
        let page_len = u32::try_from(adds.len()).unwrap_or(u32::MAX);
        let non_zero = || {
            (0u32..)
                .zip(adds.iter().copied())
                .filter(|(_, add)| *add != 0)
        };
        let dense = adds.len() * 4;
        let body =
            if non_zero().count() * MAX_COMPACT_ENTRY < dense || compact_len(non_zero()) < dense {
                DeltaBody::Sparse(non_zero().collect())
            } else {
                DeltaBody::Dense(adds.to_vec())
            };
        CounterDelta { page_len, body }.encode()
    }
}

/// The bytes of `entries` in the compact form.
fn compact_len(entries: impl Iterator<Item = (u32, u32)>) -> usize {
    entries
        .map(|(index, add)| varint_u32_len(index) + varint_u32_len(add))
        .sum()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Sparse,
    Dense,
    Compact,
}

/// A checked, zero-copy view of an encoded delta, used on the merge path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DeltaView<'a> {
    page_len: u32,
    form: Form,
    body: &'a [u8],
}

impl<'a> DeltaView<'a> {
    pub(crate) fn decode(bytes: &'a [u8]) -> Result<DeltaView<'a>> {
        let framed = header::decode(bytes)?;
        expect_kind(framed.kind, Kind::CounterDelta)?;
        let payload = framed.payload;
        let fixed = payload.get(..BODY_OFFSET).ok_or(Error::Truncated {
            need: header::HEADER_LEN + BODY_OFFSET,
            have: bytes.len(),
        })?;
        let page_len = le_u32(fixed, PAGE_LEN_OFFSET)?;
        if page_len as usize > crate::MAX_PAGE_BYTES / 4 {
            return Err(Error::Invalid("delta page length beyond the largest page"));
        }
        let body = payload.get(BODY_OFFSET..).unwrap_or_default();
        let form = match fixed.get(FORM_OFFSET) {
            Some(&FORM_SPARSE) => Form::Sparse,
            Some(&FORM_DENSE) => Form::Dense,
            Some(&FORM_COMPACT) => Form::Compact,
            _ => return Err(Error::Invalid("unknown delta form")),
        };
        let view = DeltaView {
            page_len,
            form,
            body,
        };
        match form {
            Form::Sparse => {
                if !body.len().is_multiple_of(SPARSE_ENTRY_LEN) {
                    return Err(Error::Invalid("sparse delta body is not whole entries"));
                }
                let mut in_range = true;
                view.for_each(|index, _| in_range &= index < page_len);
                if !in_range {
                    return Err(Error::Invalid("delta index beyond the page"));
                }
            }
            Form::Dense => {
                if body.len() != page_len as usize * 4 {
                    return Err(Error::Invalid("dense delta length differs from its page"));
                }
            }
            Form::Compact => {
                let mut rest = body;
                while !rest.is_empty() {
                    let (Some(index), Some(_)) =
                        (take_varint_u32(&mut rest), take_varint_u32(&mut rest))
                    else {
                        return Err(Error::Invalid("compact delta body is not whole entries"));
                    };
                    if index >= page_len {
                        return Err(Error::Invalid("delta index beyond the page"));
                    }
                }
            }
        }
        Ok(view)
    }

    pub(crate) fn page_len(&self) -> u32 {
        self.page_len
    }

    /// Calls `f(index, add)` for each addition, in order.
    fn for_each(&self, mut f: impl FnMut(u32, u32)) {
        match self.form {
            Form::Sparse => {
                for (index, add) in u32_pairs(self.body) {
                    f(index, add);
                }
            }
            Form::Dense => {
                for (index, add) in (0u32..).zip(u32s(self.body)) {
                    f(index, add);
                }
            }
            Form::Compact => {
                // Checked whole by `decode`.
                let mut rest = self.body;
                while let (Some(index), Some(add)) =
                    (take_varint_u32(&mut rest), take_varint_u32(&mut rest))
                {
                    f(index, add);
                }
            }
        }
    }

    /// Adds this delta into `sums` (one slot per cell), saturating.
    pub(crate) fn add_into(&self, sums: &mut [u32]) {
        self.for_each(|index, add| {
            if let Some(sum) = sums.get_mut(index as usize) {
                *sum = sum.saturating_add(add);
            }
        });
    }
}

/// Full merge for counter pages; see [`crate::full_merge`].
///
/// Works in place on the encoded page: the stored page's checksum is verified, the
/// deltas are added to its little-endian cells, and the checksum is computed once at the
/// end. Reads before compaction and RocksDB's folds on the write path both run this.
impl crate::fold::PageKind for CounterPage {
    type Page = Vec<u8>;

    fn decode(bytes: &[u8]) -> Result<Vec<u8>> {
        CounterPage::check(bytes)?;
        Ok(bytes.to_vec())
    }

    fn start(operands: &[&[u8]]) -> Option<Vec<u8>> {
        let first = operands.iter().find_map(|op| DeltaView::decode(op).ok())?;
        Some(CounterPage::zeroed(first.page_len() as usize).encode())
    }

    fn apply(page: &mut Vec<u8>, operand: &[u8]) -> bool {
        let Ok(delta) = DeltaView::decode(operand) else {
            return false;
        };
        let cells = page.get_mut(header::HEADER_LEN..).unwrap_or_default();
        if cells.len() != delta.page_len() as usize * 4 {
            return false;
        }
        delta.for_each(|index, add| {
            let at = index as usize * 4;
            if let Some(cell) = cells
                .get_mut(at..at + 4)
                .and_then(|c| c.as_chunks_mut::<4>().0.first_mut())
            {
                let sum = u32::from_le_bytes(*cell).saturating_add(add);
                *cell = sum.to_le_bytes();
            }
        });
        true
    }

    fn encode(page: Vec<u8>) -> Vec<u8> {
        header::finish(page)
    }
}

/// Partial merge for counter deltas; see [`crate::partial_merge`].
pub(crate) fn partial_merge(operands: &[&[u8]]) -> Option<Vec<u8>> {
    let mut views = operands.iter().map(|op| DeltaView::decode(op).ok());
    let first = views.next()??;
    let mut sums = vec![0u32; first.page_len() as usize];
    first.add_into(&mut sums);
    for view in views {
        let view = view?;
        if view.page_len() != first.page_len() {
            return None;
        }
        view.add_into(&mut sums);
    }
    Some(CounterDelta::encode_sum(&sums))
}

fn expect_kind(got: Kind, expected: Kind) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::WrongKind {
            expected: expected.tag(),
            got: got.tag(),
        })
    }
}

fn read_u32s(bytes: &[u8]) -> Result<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(Error::Invalid("length is not a whole number of u32 cells"));
    }
    Ok(u32s(bytes).collect())
}

#[cfg(test)]
mod tests;
