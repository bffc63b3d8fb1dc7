//! An increment's operands: per page it touches, one counter delta with the summed
//! additions (sparse, or dense where that is smaller), and one tally delta.

use super::layout::Layout;
use crate::error::{Error, Result};
use rocksketch_merge::counter::CounterDelta;
use rocksketch_merge::tally::Tally;

/// The `(page key, operand)` pairs of an increment, `pages` its additions summed per
/// counter ([`Folded::pages`](super::fold::Folded::pages)): per page, one delta with the summed additions, sorted
/// by page; then one tally delta with the summed increments.
pub(super) fn increment_operands<I>(
    layout: &Layout,
    items: &[(I, u64)],
    pages: Vec<(u32, Vec<(u32, u32)>)>,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let count = items
        .iter()
        .fold(0u64, |count, (_, incr)| count.wrapping_add(*incr));
    let mut out = Vec::with_capacity(pages.len() + 1);
    for (page, entries) in pages {
        out.push((
            layout.page_key(page),
            encode_delta(layout.page_len(page), entries)?,
        ));
    }
    out.push((layout.tally_key(), Tally::new(vec![count]).encode_delta()));
    Ok(out)
}

/// Each item's increment as the saturating `u32` addition its counters get.
pub(super) fn additions<I>(items: &[(I, u64)]) -> Vec<u32> {
    items.iter().map(|(_, incr)| saturate(*incr)).collect()
}

/// An increment as a saturating `u32` addition: anything at or above `u32::MAX`
/// saturates a counter either way.
pub(super) fn saturate(incr: u64) -> u32 {
    u32::try_from(incr).unwrap_or(u32::MAX)
}

/// A delta in its smaller form: sparse entries (compact), or dense.
fn encode_delta(page_len: u32, entries: Vec<(u32, u32)>) -> Result<Vec<u8>> {
    let delta = if CounterDelta::sparse_is_smaller(page_len, &entries) {
        CounterDelta::sparse(page_len, entries)
    } else {
        let mut adds = vec![0u32; page_len as usize];
        for (offset, add) in entries {
            if let Some(slot) = adds.get_mut(offset as usize) {
                *slot = slot.saturating_add(add);
            }
        }
        CounterDelta::dense(adds)
    };
    delta
        .map(|d| d.encode())
        .map_err(Error::encode("a counter delta"))
}
