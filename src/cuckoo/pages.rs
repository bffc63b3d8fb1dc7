//! Reading a filter's pages: through the hot-page cache, checked against the layout.

use super::{sub_of, CuckooFilter, Hashed, ItemPages, Sub};
use crate::error::{Error, Result};
use crate::keys;
use crate::meta::CuckooParams;
use crate::store::wrong_kind;
use rocksketch_merge::cuckoo::FpPage;
use rocksketch_merge::Page;
use std::sync::Arc;

impl CuckooFilter {
    /// Copies of each item's fingerprint over all sub-filters of each key version or
    /// generation in `prefixes`, summed (zeros for none): one multi-get per prefix,
    /// where each item falls worked out once for all of them.
    pub(super) fn counts_in(
        &self,
        prefixes: &[Vec<u8>],
        params: &CuckooParams,
        items: &[Hashed],
    ) -> Result<Vec<u64>> {
        let subs: Vec<Sub> = (0..params.filters)
            .map(|i| sub_of(params, i))
            .collect::<Result<_>>()?;
        // Per item and sub-filter (item-major): its page and bucket.
        let located: Vec<(u32, u32)> = items
            .iter()
            .flat_map(|h| subs.iter().map(|s| s.locate(h.h)))
            .collect();
        let wanted = crate::chain::pages_to_read(located.iter().map(|(p, _)| *p), subs.len());
        let mut sums = vec![0u64; items.len()];
        for prefix in prefixes {
            let pages = self.store.read_sorted_chain_pages(
                &self.key,
                "a cuckoo page",
                prefix,
                &wanted,
                |i, page| self.check_page(page, &subs[i as usize]),
            )?;
            for (n, (sum, h)) in sums.iter_mut().zip(items).enumerate() {
                for i in 0..subs.len() {
                    let (page, bucket) = located[n * subs.len() + i];
                    *sum += pages
                        .get(&(i as u32, page))
                        .and_then(|p| p.as_fp())
                        .map_or(0, |p| u64::from(p.count(bucket, h.fp)));
                }
            }
        }
        Ok(sums)
    }

    /// The sub-filters' layouts, and every page the items fall in, in any sub-filter,
    /// keyed by (sub-filter, page), in one multi-get; pages never written are left out.
    pub(super) fn item_pages(
        &self,
        prefix: &[u8],
        params: &CuckooParams,
        items: &[Hashed],
    ) -> Result<ItemPages> {
        let subs: Vec<Sub> = (0..params.filters)
            .map(|i| sub_of(params, i))
            .collect::<Result<_>>()?;
        let wanted: Vec<(u32, u32)> = items
            .iter()
            .flat_map(|h| {
                subs.iter()
                    .enumerate()
                    .map(|(i, s)| (i as u32, s.locate(h.h).0))
            })
            .collect();
        let pages = self.store.read_chain_pages(
            &self.key,
            "a cuckoo page",
            prefix,
            wanted,
            |i, page| self.check_page(page, &subs[i as usize]),
        )?;
        Ok((subs, pages))
    }

    pub(super) fn read_page(
        &self,
        prefix: &[u8],
        sub_index: u32,
        page: u32,
        sub: &Sub,
    ) -> Result<Option<Arc<Page>>> {
        let key = keys::page_key(prefix, sub_index as u16, page);
        let read = self
            .store
            .read_pages(&self.key, "a cuckoo page", &[key])?
            .pop()
            .flatten();
        if let Some(page) = &read {
            self.check_page(page, sub)?;
        }
        Ok(read)
    }

    /// Checks that a page read is a cuckoo page of the sub-filter's shape.
    pub(super) fn check_page(&self, page: &Page, sub: &Sub) -> Result<()> {
        match page.as_fp() {
            Some(fp) if fp.shape() == sub.shape => Ok(()),
            Some(_) => Err(Error::corrupt(
                &self.key,
                "a cuckoo page",
                rocksketch_merge::Error::Invalid("page shape differs from the filter's layout"),
            )),
            None => Err(wrong_kind(&self.key, "a cuckoo page")),
        }
    }

    /// Decodes a stored page and checks it has the sub-filter's shape.
    pub(super) fn checked_page(&self, raw: &[u8], sub: &Sub) -> Result<FpPage> {
        let page = FpPage::decode(raw)
            .map_err(|source| Error::corrupt(&self.key, "a cuckoo page", source))?;
        if page.shape() != sub.shape {
            return Err(Error::corrupt(
                &self.key,
                "a cuckoo page",
                rocksketch_merge::Error::Invalid("page shape differs from the filter's layout"),
            ));
        }
        Ok(page)
    }
}
