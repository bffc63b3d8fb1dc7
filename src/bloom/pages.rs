//! A Bloom filter's pages as an operation sees them: membership over the pages it read,
//! and the operands of a blind add.

use super::sizing::{hashes, sub_of, Sub};
use super::BloomFilter;
use crate::chain as tally;
use crate::error::{Error, Result};
use crate::fast::FastMap;
use crate::keys;
use crate::meta::BloomParams;
use crate::store::wrong_kind;
use rocksketch_merge::bits::BitDelta;
use rocksketch_merge::layout::bloom::ItemBits;
use rocksketch_merge::Page;
use std::collections::BTreeMap;
use std::sync::Arc;

impl BloomFilter {
    /// Reads every page the items fall in, in every sub-filter, through the hot-page
    /// cache; pages never written are left out.
    pub(super) fn read_item_pages(
        &self,
        prefix: &[u8],
        params: &BloomParams,
        hashed: &[(u64, u64)],
    ) -> Result<BitPages> {
        let wanted: Vec<(u32, u32)> = (0..params.filters)
            .flat_map(|i| {
                let sub = sub_of(params, i);
                hashed.iter().map(move |h| (i, sub.page_of(h.0)))
            })
            .collect();
        self.store
            .read_chain_pages(&self.key, "a bit page", prefix, wanted, |i, page| {
                self.check_page(page, &sub_of(params, i))
            })
    }

    /// Checks that a page read is a bit page of the sub-filter's size.
    fn check_page(&self, page: &Page, sub: &Sub) -> Result<()> {
        match page {
            Page::Bits(bits) if bits.page_bits() == sub.page_bits => Ok(()),
            Page::Bits(_) => Err(Error::corrupt(
                &self.key,
                "a bit page",
                rocksketch_merge::Error::Invalid("page size differs from the filter's layout"),
            )),
            _ => Err(wrong_kind(&self.key, "a bit page")),
        }
    }
}

/// Whether every bit of the item with hashes `h` is set in some sub-filter's page.
/// `fresh` holds the bits set since the pages were read.
pub(super) fn contains(
    pages: &BitPages,
    fresh: &Fresh,
    params: &BloomParams,
    h: (u64, u64),
) -> bool {
    (0..params.filters).any(|i| {
        let (page, bits) = sub_of(params, i).locate(h);
        let read = match pages.get(&(i, page)).map(|p| &**p) {
            Some(Page::Bits(p)) => Some(p),
            _ => None,
        };
        let set = fresh.get(&(i, page)).map_or(&[][..], Vec::as_slice);
        bits.into_iter()
            .all(|b| read.is_some_and(|p| p.get(b)) || set.contains(&b))
    })
}

/// Bits set by an operation not yet written, by (sub-filter, page).
pub(super) type Fresh = BTreeMap<(u32, u32), Vec<u32>>;

/// The pages an operation read (checked to be bit pages), by (sub-filter, page).
pub(super) type BitPages = FastMap<(u32, u32), Arc<Page>>;

/// The `(page key, operand)` pairs of a blind add to the newest sub-filter: one bit
/// operand per page the items fall in, then the tally delta.
pub(super) fn add_operands<I: AsRef<[u8]>>(
    prefix: &[u8],
    params: &BloomParams,
    items: &[I],
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let newest = params.filters - 1;
    let sub = sub_of(params, newest);
    let mut located: Vec<(u32, ItemBits)> = items
        .iter()
        .map(|i| sub.locate(hashes(i.as_ref())))
        .collect();
    located.sort_unstable_by_key(|(page, _)| *page);
    let mut out = Vec::new();
    for group in located.chunk_by(|a, b| a.0 == b.0) {
        let bits: Vec<u32> = group.iter().flat_map(|(_, bits)| bits.clone()).collect();
        let delta = BitDelta::sparse(sub.page_bits, bits).map_err(Error::encode("a bit delta"))?;
        out.push((
            keys::page_key(prefix, newest as u16, group[0].0),
            delta.encode(),
        ));
    }
    let added = tally::added_operand(newest, items.len() as u64);
    out.push((tally::page_key(prefix), added));
    Ok(out)
}
