//! Top-K operands: `(item, increment)` pairs, applied in order by the full merge.
//!
//! ```text
//! Top-K ops payload (version 1): count u32 | (item_len u32 | item | increment u32) x count
//! ```
//!
//! Partial merge concatenates operands while the result stays under [`MAX_OPS_BYTES`]
//! (applying pairs in order is all the full merge does, so the concatenation is exact),
//! and declines past it.

use super::{TopKPage, MAX_ITEM_BYTES};
use crate::bytes::le_u32;
use crate::error::{Error, Result};
use crate::header::{self, Kind};

/// RedisBloom's largest increment.
pub const MAX_INCREMENT: u32 = 100_000;
/// A partial merge declines to build an operand larger than this: more than a
/// memtable's worth of one key's adds at RocksDB's sizes, far below the 4 GiB RocksDB
/// allows a merge result. (1 MiB, the bound until 2026-12, made every flush of a busy
/// key keep its operands one by one.)
pub const MAX_OPS_BYTES: usize = 64 << 20;

/// Encodes `(item, increment)` pairs as one operand; `None` if an item is longer than
/// [`MAX_ITEM_BYTES`] or an increment larger than [`MAX_INCREMENT`].
pub fn encode<'i>(pairs: impl IntoIterator<Item = (&'i [u8], u32)>) -> Option<Vec<u8>> {
    let mut payload = vec![0; 4];
    let mut count: u32 = 0;
    for (item, increment) in pairs {
        if item.len() > MAX_ITEM_BYTES || increment > MAX_INCREMENT {
            return None;
        }
        payload.extend_from_slice(&(item.len() as u32).to_le_bytes());
        payload.extend_from_slice(item);
        payload.extend_from_slice(&increment.to_le_bytes());
        count += 1;
    }
    payload.get_mut(..4)?.copy_from_slice(&count.to_le_bytes());
    Some(framed(&payload))
}

fn framed(payload: &[u8]) -> Vec<u8> {
    let mut out = header::begin(Kind::TopKOps, payload.len());
    out.extend_from_slice(payload);
    header::finish(out)
}

/// The checked pairs of an operand.
pub fn decode(bytes: &[u8]) -> Result<Vec<(&[u8], u32)>> {
    let framed = header::decode_as(bytes, Kind::TopKOps)?;
    parse(framed.payload)
}

/// The checked pairs of an operand's payload.
fn parse(p: &[u8]) -> Result<Vec<(&[u8], u32)>> {
    let count = le_u32(p, 0)? as usize;
    let mut pairs = Vec::with_capacity(count.min(p.len() / 8));
    let mut at = 4;
    for _ in 0..count {
        let len = le_u32(p, at)? as usize;
        if len > MAX_ITEM_BYTES {
            return Err(Error::Invalid("top-k item longer than the limit"));
        }
        let item = p.get(at + 4..at + 4 + len).ok_or(Error::Truncated {
            need: at + 4 + len,
            have: p.len(),
        })?;
        let increment = le_u32(p, at + 4 + len)?;
        if increment > MAX_INCREMENT {
            return Err(Error::Invalid("top-k increment out of range"));
        }
        pairs.push((item, increment));
        at += 8 + len;
    }
    if at != p.len() {
        return Err(Error::TrailingBytes {
            expected: at,
            got: p.len(),
        });
    }
    Ok(pairs)
}

impl TopKPage {
    /// Applies one operand as the full merge does; `false` (page unchanged) for one that
    /// does not decode.
    pub fn apply_operand(&mut self, operand: &[u8]) -> bool {
        match decode(operand) {
            Ok(pairs) => {
                self.add_all(pairs);
                true
            }
            Err(_) => false,
        }
    }
}

/// The full merge of a Top-K page. A page is written when the Top-K is reserved, so
/// operands without one cannot be applied (they are counted as skipped).
impl crate::fold::PageKind for TopKPage {
    type Page = TopKPage;

    fn decode(bytes: &[u8]) -> Result<TopKPage> {
        TopKPage::decode(bytes)
    }

    /// None: a Top-K page is written whole at `TOPK.RESERVE`, before any operand.
    fn start(_operands: &[&[u8]]) -> Option<TopKPage> {
        None
    }

    fn apply(page: &mut TopKPage, operand: &[u8]) -> bool {
        page.apply_operand(operand)
    }

    fn encode(page: TopKPage) -> Vec<u8> {
        page.encode()
    }
}

/// Concatenates the operands' pairs; `None` past [`MAX_OPS_BYTES`] or for an operand
/// that does not decode.
pub(crate) fn partial_merge(operands: &[&[u8]]) -> Option<Vec<u8>> {
    let mut count: u32 = 0;
    let mut payload = vec![0; 4];
    for operand in operands {
        let framed = header::decode_as(operand, Kind::TopKOps).ok()?;
        count = count.checked_add(u32::try_from(parse(framed.payload).ok()?.len()).ok()?)?;
        payload.extend_from_slice(framed.payload.get(4..)?);
        if payload.len() > MAX_OPS_BYTES {
            return None;
        }
    }
    payload.get_mut(..4)?.copy_from_slice(&count.to_le_bytes());
    Some(framed(&payload))
}
