//! An increment's operands: per page it touches, one counter delta with the summed
//! additions (sparse, or dense once it covers half the page), and one tally delta.

use super::layout::{ItemSlots, Layout};
use crate::error::{Error, Result};
use rocksketch_merge::counter::CounterDelta;
use rocksketch_merge::tally::Tally;

/// The `(page key, operand)` pairs of an increment: per page, one delta with the summed
/// additions, sorted by page; then one tally delta with the summed increments.
pub(super) fn increment_operands<I>(
    layout: &Layout,
    items: &[(I, u64)],
    slots: &ItemSlots,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let adds: Vec<u32> = items.iter().map(|(_, incr)| saturate(*incr)).collect();
    let count = items
        .iter()
        .fold(0u64, |count, (_, incr)| count.wrapping_add(*incr));
    let depth = slots.depth().max(1);
    let add_of = |n: usize| adds.get(n / depth).copied().unwrap_or(0);
    let mut out = Vec::new();
    for group in slots.by_counter().chunk_by(|a, b| a.0 == b.0) {
        let page = group[0].0;
        let mut entries: Vec<(u32, u32)> = Vec::with_capacity(group.len());
        for &(_, offset, n) in group {
            match entries.last_mut() {
                Some((last, sum)) if *last == offset => *sum = sum.saturating_add(add_of(n)),
                _ => entries.push((offset, add_of(n))),
            }
        }
        out.push((
            layout.page_key(page),
            encode_delta(layout.page_len(page), entries)?,
        ));
    }
    out.push((layout.tally_key(), Tally::new(vec![count]).encode_delta()));
    Ok(out)
}

/// An increment as a saturating `u32` addition: anything at or above `u32::MAX`
/// saturates a counter either way.
pub(super) fn saturate(incr: u64) -> u32 {
    u32::try_from(incr).unwrap_or(u32::MAX)
}

/// A delta in its smaller form: sparse entries, or dense once they cover half the page.
fn encode_delta(page_len: u32, entries: Vec<(u32, u32)>) -> Result<Vec<u8>> {
    let delta = if entries.len() * 2 < page_len as usize {
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
