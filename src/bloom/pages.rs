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
    /// Reads every page the probed items fall in, in every sub-filter, of the key
    /// version or generation `prefix`, through the hot-page cache; pages never written
    /// are left out.
    pub(super) fn read_item_pages(&self, prefix: &[u8], probes: &Probes) -> Result<BitPages> {
        self.store.read_sorted_chain_pages(
            &self.key,
            "a bit page",
            prefix,
            &probes.wanted,
            |i, page| self.check_page(page, &probes.subs[i as usize]),
        )
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

/// Where each item of a call falls in every sub-filter of the chain: its page and bit
/// positions, worked out once and tested against every generation the call reads.
pub(super) struct Probes {
    /// The chain's sub-filters.
    subs: Vec<Sub>,
    /// `(sub-filter, page)` of every item, sorted, each once: the pages to read.
    wanted: Vec<(u32, u32)>,
    /// Per item and sub-filter (item-major): its page and where its bits start in
    /// `bits` (they run to the next entry's start).
    at: Vec<(u32, usize)>,
    bits: Vec<u32>,
}

impl Probes {
    pub(super) fn new(params: &BloomParams, hashed: &[(u64, u64)]) -> Probes {
        let subs: Vec<Sub> = (0..params.filters).map(|i| sub_of(params, i)).collect();
        let mut at = Vec::with_capacity(hashed.len() * subs.len() + 1);
        let mut bits = Vec::new();
        for h in hashed {
            for sub in &subs {
                let (page, item_bits) = sub.locate(*h);
                at.push((page, bits.len()));
                bits.extend(item_bits);
            }
        }
        at.push((0, bits.len()));
        let wanted = tally::pages_to_read(at[..at.len() - 1].iter().map(|(p, _)| *p), subs.len());
        Probes {
            subs,
            wanted,
            at,
            bits,
        }
    }

    /// Sub-filters probed: the chain's when the call began.
    pub(super) fn filters(&self) -> u32 {
        self.subs.len() as u32
    }

    /// Whether each probed bit (as [`Probes`] lists them) is set in `pages`, read for
    /// every item in one pass, for [`Probes::contains_read`]. A filter larger than the
    /// processor's cache misses it on nearly every probe; these loads do not depend on
    /// one another, so the processor overlaps their misses, where testing an item at a
    /// time with early exits takes them one after another (`perf`, `BF.ADD` on 64
    /// filters of 1M items: a tenth of the I/O thread waited on them).
    pub(super) fn read_all(&self, pages: &BitPages) -> Vec<bool> {
        let n = self.subs.len().max(1);
        let mut read = vec![false; self.bits.len()];
        for (entry, window) in self.at.windows(2).enumerate() {
            let ((page, start), (_, end)) = (window[0], window[1]);
            if let Some(Page::Bits(p)) = pages.get(&((entry % n) as u32, page)).map(|p| &**p) {
                for (to, &bit) in read[start..end].iter_mut().zip(&self.bits[start..end]) {
                    *to = p.get(bit);
                }
            }
        }
        read
    }

    /// Whether every bit of item `item` is set in some sub-filter, as [`Probes::read_all`]
    /// read the pages, or in `fresh`, the bits set since they were read.
    pub(super) fn contains_read(&self, read: &[bool], fresh: &Fresh, item: usize) -> bool {
        let n = self.subs.len();
        (0..n).any(|i| {
            let entry = item * n + i;
            let (page, start) = self.at[entry];
            let end = self.at[entry + 1].1;
            let set = fresh.get(&(i as u32, page)).map_or(&[][..], Vec::as_slice);
            (start..end).all(|j| read[j] || set.contains(&self.bits[j]))
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::{quickcheck, TestResult};
    use rocksketch_merge::bits::BitPage;

    /// Whether every bit of item `item` is set in some sub-filter's page of `pages`, or
    /// in `fresh`, tested on the pages themselves: what `contains_read` must answer.
    fn contains(probes: &Probes, pages: &BitPages, fresh: &Fresh, item: usize) -> bool {
        let n = probes.subs.len();
        (0..n).any(|i| {
            let entry = item * n + i;
            let (page, start) = probes.at[entry];
            let bits = &probes.bits[start..probes.at[entry + 1].1];
            let read = match pages.get(&(i as u32, page)).map(|p| &**p) {
                Some(Page::Bits(p)) => Some(p),
                _ => None,
            };
            let set = fresh.get(&(i as u32, page)).map_or(&[][..], Vec::as_slice);
            bits.iter()
                .all(|b| read.is_some_and(|p| p.get(*b)) || set.contains(b))
        })
    }

    quickcheck! {
        /// Testing items from what `read_all` read answers as testing them on the pages,
        /// over chains of several sub-filters, pages missing or with any share of bits
        /// set, and bits set by the batch itself.
        fn contains_read_matches_contains(
            items: Vec<u32>, filters: u8, fill: u64, missing: u8, fresh_items: Vec<u8>
        ) -> TestResult {
            if items.is_empty() {
                return TestResult::discard();
            }
            let params = BloomParams {
                error: 0.01,
                capacity: 200,
                expansion: 2,
                filters: u32::from(filters % 4) + 1,
                page_bits: 256,
            };
            let hashed: Vec<(u64, u64)> =
                items.iter().map(|i| hashes(&i.to_le_bytes())).collect();
            let probes = Probes::new(&params, &hashed);
            let mut pages = BitPages::default();
            for (n, &(sub, page)) in probes.wanted.iter().enumerate() {
                if (n as u8).wrapping_mul(37) < missing {
                    continue;
                }
                let bits = probes.subs[sub as usize].page_bits;
                let mut p = BitPage::zeroed(bits);
                // Each page its own share of set bits, none to all, so that an item's
                // answer depends on which pages its bits are read from.
                let share = (fill.rotate_left(n as u32 * 7) % 9) as u32;
                for bit in 0..bits {
                    if (bit.wrapping_mul(0x9E37_79B9) >> 7) % 8 < share {
                        p.set(bit);
                    }
                }
                pages.insert((sub, page), Arc::new(Page::Bits(p)));
            }
            let mut fresh = Fresh::new();
            for &i in &fresh_items {
                let item = usize::from(i) % items.len();
                let sub = probes.filters() - 1;
                let (page, bits) = probes.subs[sub as usize].locate(hashed[item]);
                fresh.entry((sub, page)).or_default().extend(bits);
            }
            let read = probes.read_all(&pages);
            TestResult::from_bool((0..items.len()).all(|n| {
                probes.contains_read(&read, &fresh, n) == contains(&probes, &pages, &fresh, n)
            }))
        }
    }
}
