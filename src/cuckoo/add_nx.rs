//! `CF.ADDNX` for many items at once: the batch that combined adds run as.

use super::{cuckoo_params, hash_all, CuckooFilter, Hashed};
use crate::error::{Error, Result};
use crate::fast::FastSet;

impl CuckooFilter {
    /// Adds each item that is not present, in order (`CF.ADDNX` for many items):
    /// whether each was added. An error stops the run and is returned with the answers
    /// before it (whose adds are kept).
    ///
    /// Under the key's lock: one read of every page the items fall in, the items checked
    /// and inserted in order into those pages in memory (so a repeated item, or one
    /// sharing a fingerprint and bucket with an earlier one, reads as present), then one
    /// write batch. If the adds would pass the newest sub-filter's target, the items go
    /// one by one instead, each growing the chain as it needs.
    pub fn add_nx_many<I: AsRef<[u8]>>(&self, items: &[I]) -> (Vec<bool>, Option<Error>) {
        match self.add_nx_batch(items) {
            Ok(Some(added)) => (added, None),
            Ok(None) => {
                let mut added = Vec::with_capacity(items.len());
                for item in items {
                    match self.add_nx_alone(item.as_ref()) {
                        Ok(new) => added.push(new),
                        Err(err) => return (added, Some(err)),
                    }
                }
                (added, None)
            }
            Err(err) => (Vec::new(), Some(err)),
        }
    }

    /// The one-batch path of [`CuckooFilter::add_nx_many`]; `None` (nothing written) if
    /// the items must go one by one.
    fn add_nx_batch<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Option<Vec<bool>>> {
        let guard = self.store.lock(self.ns, &self.key);
        let meta = self.meta_or_create(&guard)?;
        let params = cuckoo_params(&meta)?;
        let prefixes = guard.prefixes(&meta);
        let prefix = prefixes.write();
        let hashed = hash_all(items, params.fp_bits);
        let (subs, pages) = self.item_pages(prefix, &params, &hashed)?;
        // A windowed filter: present in an older live generation is present.
        let older = self.counts_in(prefixes.older(), &params, &hashed)?;
        let newest = params.filters - 1;
        let Some(sub) = subs.last() else {
            return Ok(None);
        };
        let mut added = Vec::with_capacity(items.len());
        let mut new: Vec<Hashed> = Vec::new();
        // This batch's inserts into the newest sub-filter, as (page, bucket, fingerprint):
        // read along with the pages (which stay as read: the cache shares them).
        let mut fresh: FastSet<(u32, u32, u16)> = FastSet::default();
        for (h, older) in hashed.iter().zip(older) {
            let present = older > 0
                || subs.iter().enumerate().any(|(i, s)| {
                    let (page, bucket) = s.locate(h.h);
                    pages
                        .get(&(i as u32, page))
                        .and_then(|p| p.as_fp())
                        .is_some_and(|p| p.contains(bucket, h.fp))
                })
                || {
                    // Found as a page finds it: in the item's bucket or its alternate (the
                    // pairing is symmetric).
                    let (page, bucket) = sub.locate(h.h);
                    fresh.contains(&(page, bucket, h.fp))
                        || fresh.contains(&(page, sub.shape.alt(bucket, h.fp), h.fp))
                };
            if !present {
                let (page, bucket) = sub.locate(h.h);
                fresh.insert((page, bucket, h.fp));
                new.push(*h);
            }
            added.push(!present);
        }
        if new.is_empty() {
            guard.write_pending()?;
            return Ok(Some(added));
        }
        let n = new.len() as u64;
        if self.counts(prefix)?.items_in(newest).saturating_add(n) > sub.target {
            return Ok(None);
        }
        // Let go of the pages first: the write applies to the cached pages in place,
        // which would copy a page still shared here.
        drop(pages);
        let batch = self.insert_batch(&guard, prefix, &params, newest, &new)?;
        self.store.write(batch)?;
        self.store.count_changed(prefix, newest, n as i64);
        drop(guard);
        Ok(Some(added))
    }
}
