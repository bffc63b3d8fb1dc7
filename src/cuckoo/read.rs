//! The read path: membership, counts, `CF.INFO` and occupancy.

use super::*;

impl CuckooFilter {
    /// Whether the item may be present (`CF.EXISTS`); false for a missing key.
    pub fn exists(&self, item: impl AsRef<[u8]>) -> Result<bool> {
        Ok(self.mexists(&[item])?[0])
    }

    /// [`CuckooFilter::exists`] for many items (`CF.MEXISTS`), in one read of the pages.
    pub fn mexists<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Vec<bool>> {
        Ok(self.mcount(items)?.into_iter().map(|n| n > 0).collect())
    }

    /// Copies of the item's fingerprint in its buckets (`CF.COUNT`): at least the times
    /// it was added and not deleted; 0 for a missing key.
    pub fn count(&self, item: impl AsRef<[u8]>) -> Result<u64> {
        Ok(self.mcount(&[item])?[0])
    }

    fn mcount<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Vec<u64>> {
        let guard = self.store.share(self.ns, &self.key);
        let Some(meta) = guard.typed_meta(KeyType::Cuckoo)? else {
            return Ok(vec![0; items.len()]);
        };
        let params = cuckoo_params(&meta)?;
        let prefixes = guard.prefixes(&meta);
        self.counts_in(&prefixes.live, &params, &hash_all(items, params.fp_bits))
    }

    /// `CF.INFO`'s fields; `ERR not found` for a missing key.
    pub fn info(&self) -> Result<CuckooInfo> {
        let guard = self.store.share(self.ns, &self.key);
        let (meta, params, _) = self.existing(&guard)?;
        let (mut inserted, mut deleted) = (0u64, 0u64);
        for prefix in &guard.prefixes(&meta).live {
            let counts = self.counts(prefix)?;
            inserted = inserted.wrapping_add(counts.items(params.filters));
            deleted = deleted.wrapping_add(counts.deleted());
        }
        Ok(CuckooInfo {
            size: chain(&params).redisbloom_size(params.filters),
            buckets: u64::from(params.buckets),
            filters: params.filters,
            inserted,
            deleted,
            bucket_size: params.bucket_size,
            expansion: params.expansion,
            max_iterations: params.max_iterations,
        })
    }

    /// The window and each live generation's items (inserts less deletes), for
    /// `CF.INFO`; `None` for a filter without a window.
    pub fn window_info(&self) -> Result<Option<crate::WindowInfo>> {
        let guard = self.store.share(self.ns, &self.key);
        let (meta, params, _) = self.existing(&guard)?;
        let Some(window) = meta.window else {
            return Ok(None);
        };
        let fill = guard
            .prefixes(&meta)
            .live
            .iter()
            .map(|prefix| Ok(self.counts(prefix)?.items(params.filters)))
            .collect::<Result<Vec<u64>>>()?;
        let now = self.store.clock().now_ms();
        Ok(Some(crate::WindowInfo::new(window, now, fill)))
    }

    /// Per sub-filter: its slots, the slots filled and the fingerprints stashed, over
    /// every stored page. How well the pages hold their load (for benchmarks and tests;
    /// reads the whole filter).
    pub fn occupancy(&self) -> Result<Vec<(u64, u64, u64)>> {
        let guard = self.store.share(self.ns, &self.key);
        let (_, params, prefix) = self.existing(&guard)?;
        let mut subs = Vec::with_capacity(params.filters as usize);
        for i in 0..params.filters {
            let sub = sub_of(&params, i)?;
            let (mut filled, mut stashed) = (0, 0);
            for page in 0..sub.pages {
                let read = self.read_page(&prefix, i, page, &sub)?;
                if let Some(p) = read.as_deref().and_then(Page::as_fp) {
                    filled += p.occupied() as u64;
                    stashed += p.stashed() as u64;
                }
            }
            subs.push((sub.buckets * u64::from(params.bucket_size), filled, stashed));
        }
        Ok(subs)
    }
}
