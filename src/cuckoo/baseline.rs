//! Baselines for `rocksketch bench cf-add`: the same add written the way other designs
//! write it, over the same layout.

use super::{hashed, sub_of, CuckooFilter};
use crate::chain as tally;
use crate::error::Result;
use crate::keys;
use rocksketch_merge::cuckoo::{FpOp, FpOps, FpPage};

impl CuckooFilter {
    /// Kvrocks' design: under the key's lock, read the page holding both of the item's
    /// candidate buckets in the newest sub-filter and the counts, insert with kick-outs,
    /// and put the whole page and the counts back.
    #[doc(hidden)]
    pub fn add_rewriting_pages(&self, item: impl AsRef<[u8]>) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let (_, params, prefix) = self.existing(&guard)?;
        let newest = params.filters - 1;
        let sub = sub_of(&params, newest)?;
        let h = hashed(item.as_ref(), params.fp_bits);
        let (page_no, bucket) = sub.locate(h.h);
        let mut page = self
            .read_page(&prefix, newest, page_no, &sub)?
            .and_then(|p| p.as_fp().cloned())
            .unwrap_or_else(|| FpPage::empty(sub.shape));
        page.insert(bucket, h.fp);
        let mut counts = self.counts(&prefix)?;
        counts.add(newest, 1);
        let mut batch = self.store.batch()?;
        batch.put_page(
            keys::page_key(&prefix, newest as u16, page_no),
            page.encode(),
        );
        batch.put_page(tally::page_key(&prefix), counts.encode_page());
        self.store.write(batch)
    }

    /// The floor: the operands a blind add writes, as plain puts to distinct keys (each
    /// key suffixed with `seq`). Nothing reads these back.
    #[doc(hidden)]
    pub fn put_add_operands(&self, item: impl AsRef<[u8]>, seq: u64) -> Result<()> {
        let guard = self.store.share(self.ns, &self.key);
        let (_, params, prefix) = self.existing(&guard)?;
        let newest = params.filters - 1;
        let sub = sub_of(&params, newest)?;
        let h = hashed(item.as_ref(), params.fp_bits);
        let (page_no, bucket) = sub.locate(h.h);
        let op = FpOps::new(sub.shape, vec![FpOp::Insert { bucket, fp: h.fp }])
            .map_err(crate::Error::encode("cuckoo inserts"))?;
        let mut batch = self.store.batch()?;
        for (mut key, operand) in [
            (keys::page_key(&prefix, newest as u16, page_no), op.encode()),
            (tally::page_key(&prefix), tally::added_operand(newest, 1)),
        ] {
            key.extend_from_slice(&seq.to_be_bytes());
            batch.put_page(key, operand);
        }
        self.store.write(batch)
    }
}
