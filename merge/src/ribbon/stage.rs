//! Staged hashes: a sorted set per staging page, grown by blind operands.

use crate::bytes::u64s;
use crate::error::{Error, Result};
use crate::header::{self, Kind};
use crate::MAX_PAGE_BYTES;

/// The most hashes a staging page holds (its size limit, [`MAX_PAGE_BYTES`]); an
/// operand that would take a page past it is skipped by the merge, so writers bound
/// what they stage well below it.
pub const MAX_STAGED_PER_PAGE: usize = MAX_PAGE_BYTES / 8;

/// A staging page: distinct hashes, ascending.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StagePage {
    hashes: Vec<u64>,
}

/// Hashes to stage, in any order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageOps {
    hashes: Vec<u64>,
}

impl StagePage {
    /// The page of these hashes (sorted, repeats dropped).
    pub fn new(mut hashes: Vec<u64>) -> StagePage {
        hashes.sort_unstable();
        hashes.dedup();
        StagePage { hashes }
    }

    /// The staged hashes, ascending.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Whether `h` is staged.
    pub fn contains(&self, h: u64) -> bool {
        self.hashes.binary_search(&h).is_ok()
    }

    /// Adds an operand's hashes; `false` (page unchanged) for one that does not decode
    /// or would take the page past [`MAX_STAGED_PER_PAGE`], as the full merge skips it.
    pub fn apply_operand(&mut self, operand: &[u8]) -> bool {
        match StageOps::decode(operand) {
            Ok(ops) => self.add(&ops.hashes),
            Err(_) => false,
        }
    }

    fn add(&mut self, hashes: &[u64]) -> bool {
        let mut merged = union(&self.hashes, hashes);
        if merged.len() > MAX_STAGED_PER_PAGE {
            return false;
        }
        std::mem::swap(&mut self.hashes, &mut merged);
        true
    }

    /// Encodes the page.
    pub fn encode(&self) -> Vec<u8> {
        encode(Kind::StagePage, &self.hashes)
    }

    /// Decodes a stored page: hashes strictly ascending.
    pub fn decode(bytes: &[u8]) -> Result<StagePage> {
        let hashes = decode(bytes, Kind::StagePage)?;
        if hashes.windows(2).any(|w| w.first() >= w.get(1)) {
            return Err(Error::Invalid("staged hashes out of order"));
        }
        Ok(StagePage { hashes })
    }
}

impl StageOps {
    /// An operand staging `hashes`; `None` for more than a page holds.
    pub fn new(hashes: Vec<u64>) -> Option<StageOps> {
        (hashes.len() <= MAX_STAGED_PER_PAGE).then_some(StageOps { hashes })
    }

    /// The hashes.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Encodes the operand.
    pub fn encode(&self) -> Vec<u8> {
        encode(Kind::StageOps, &self.hashes)
    }

    /// Decodes an operand.
    pub fn decode(bytes: &[u8]) -> Result<StageOps> {
        let hashes = decode(bytes, Kind::StageOps)?;
        if hashes.len() > MAX_STAGED_PER_PAGE {
            return Err(Error::Invalid("more staged hashes than a page holds"));
        }
        Ok(StageOps { hashes })
    }
}

/// The sorted union of a sorted, distinct `base` and any `more`: `more` is sorted, then
/// the two are merged in one pass (linear in the page, as adds to a large page must be).
fn union(base: &[u64], more: &[u64]) -> Vec<u64> {
    let mut more = more.to_vec();
    more.sort_unstable();
    let mut out = Vec::with_capacity(base.len() + more.len());
    let (mut a, mut b) = (base.iter().peekable(), more.iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x <= y => a.next(),
            (Some(_), Some(_)) | (None, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => break,
        };
        if let Some(h) = next {
            if out.last() != Some(h) {
                out.push(*h);
            }
        }
    }
    out
}

fn encode(kind: Kind, hashes: &[u64]) -> Vec<u8> {
    let mut out = header::begin(kind, hashes.len() * 8);
    for h in hashes {
        out.extend_from_slice(&h.to_le_bytes());
    }
    header::finish(out)
}

fn decode(bytes: &[u8], kind: Kind) -> Result<Vec<u64>> {
    let framed = header::decode_as(bytes, kind)?;
    if framed.payload.len() % 8 != 0 {
        return Err(Error::Invalid("staged hashes of a partial size"));
    }
    Ok(u64s(framed.payload).collect())
}

/// The full merge of a staging page: the union of the stored page and the operands, in
/// order; an operand that does not decode or does not fit is skipped. A stored value
/// that does not decode is kept as it is.
impl crate::fold::PageKind for StagePage {
    type Page = StagePage;

    fn decode(bytes: &[u8]) -> Result<StagePage> {
        StagePage::decode(bytes)
    }

    fn start(_operands: &[&[u8]]) -> Option<StagePage> {
        Some(StagePage::default())
    }

    fn apply(page: &mut StagePage, operand: &[u8]) -> bool {
        page.apply_operand(operand)
    }

    /// All operands at once (one sort of their hashes, one pass over the page) when
    /// they all decode and fit.
    fn apply_all(page: &mut StagePage, operands: &[&[u8]]) -> bool {
        let Some(decoded) = operands
            .iter()
            .map(|op| StageOps::decode(op).ok())
            .collect::<Option<Vec<StageOps>>>()
        else {
            return false;
        };
        let all: Vec<u64> = decoded
            .iter()
            .flat_map(|ops| ops.hashes.iter().copied())
            .collect();
        if page.hashes.len() + all.len() > MAX_STAGED_PER_PAGE {
            return false;
        }
        page.hashes = union(&page.hashes, &all);
        true
    }

    fn encode(page: StagePage) -> Vec<u8> {
        page.encode()
    }
}

/// Combines operands into one (their sorted union), or declines where one does not
/// decode or the union would not fit a page.
pub fn partial_merge(operands: &[&[u8]]) -> Option<Vec<u8>> {
    let mut all = Vec::new();
    for op in operands {
        all.extend_from_slice(StageOps::decode(op).ok()?.hashes());
        if all.len() > 2 * MAX_STAGED_PER_PAGE {
            return None;
        }
    }
    StageOps::new(union(&[], &all)).map(|ops| ops.encode())
}
