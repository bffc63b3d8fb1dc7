//! A cuckoo filter's locked write path: inserts into the newest sub-filter, growing the
//! chain when it reaches its target.

use super::{cuckoo_params, sub_of, CuckooFilter, Hashed, MAX_FILTERS};
use crate::chain as tally;
use crate::error::{CuckooError, Error, Result};
use crate::keys;
use crate::meta::{CuckooParams, Meta, Params};
use crate::store::{Batch, KeyGuard};
use rocksketch_merge::cuckoo::{FpOp, FpOps};

impl CuckooFilter {
    /// Inserts into the newest sub-filter, growing the chain first if it is at its
    /// target (from the tally, read under the exclusive `guard`).
    pub(super) fn insert_locked(&self, guard: &KeyGuard, meta: Meta, h: Hashed) -> Result<()> {
        let mut params = cuckoo_params(&meta)?;
        let prefix = guard.prefixes(&meta).write().to_vec();
        let counts = self.counts(&prefix)?;
        let mut newest = params.filters - 1;
        let mut grown = None;
        if counts.items_in(newest) >= sub_of(&params, newest)?.target {
            if params.expansion == 0 {
                return Err(CuckooError::FilterFull.into());
            }
            if params.filters >= MAX_FILTERS {
                return Err(CuckooError::MaximumExpansions.into());
            }
            params.filters += 1;
            newest += 1;
            grown = Some(Meta {
                params: Params::Cuckoo(params),
                ..meta
            });
        }
        let batch = self.insert_batch(guard, &prefix, &params, newest, &[h])?;
        match grown {
            Some(meta) => guard.put_meta(meta, batch)?,
            None => self.store.write(batch)?,
        }
        self.store.count_changed(&prefix, newest, 1);
        Ok(())
    }

    /// The inserts of `items` into sub-filter `sub_index` (one operand per page touched)
    /// and the tally delta, as one batch (with the key's creation, if `guard` made it).
    pub(super) fn insert_batch<'a>(
        &self,
        guard: &KeyGuard<'a>,
        prefix: &[u8],
        params: &CuckooParams,
        sub_index: u32,
        items: &[Hashed],
    ) -> Result<Batch<'a>> {
        let sub = sub_of(params, sub_index)?;
        // By page, each page's inserts in the items' order (a stable sort): one vector,
        // not one per page.
        let mut located: Vec<(u32, FpOp)> = items
            .iter()
            .map(|h| {
                let (page, bucket) = sub.locate(h.h);
                (page, FpOp::Insert { bucket, fp: h.fp })
            })
            .collect();
        located.sort_by_key(|(page, _)| *page);
        let mut batch = guard.batch()?;
        for run in located.chunk_by(|a, b| a.0 == b.0) {
            let ops = run.iter().map(|(_, op)| *op).collect();
            let ops = FpOps::new(sub.shape, ops).map_err(Error::encode("cuckoo inserts"))?;
            batch.merge_page(
                keys::page_key(prefix, sub_index as u16, run[0].0),
                ops.encode(),
            );
        }
        let added = tally::added_operand(sub_index, items.len() as u64);
        batch.merge_page(tally::page_key(prefix), added);
        Ok(batch)
    }
}
