//! Baselines for `rocksketch bench tdigest-add`: the same add written the way other
//! designs write it, over the same page, so the benchmark compares like with like.

use super::{TDigest, MAX_OP_VALUES};
use crate::error::Result;
use rocksketch_merge::tdigest::ops::DigestOps;

impl TDigest {
    /// Kvrocks' design: under the key's lock, read the digest, add, and put the whole
    /// page back.
    #[doc(hidden)]
    pub fn add_rewriting_page(&self, values: &[f64]) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let mut digest = self.read_copy(&layout)?;
        for v in values {
            let _ = digest.add(*v, 1);
        }
        let mut batch = self.store.batch()?;
        batch.put_page(layout.page_key, digest.encode());
        self.store.write(batch)
    }

    /// The floor: the operands a blind add writes, as plain puts to distinct keys (each
    /// key suffixed with `seq`). Nothing reads these back.
    #[doc(hidden)]
    pub fn put_add_operands(&self, values: &[f64], seq: u64) -> Result<()> {
        let guard = self.store.share(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let mut batch = self.store.batch()?;
        for (i, chunk) in values.chunks(MAX_OP_VALUES).enumerate() {
            let mut key = layout.page_key.clone();
            key.extend_from_slice(&seq.to_be_bytes());
            key.extend_from_slice(&(i as u32).to_be_bytes());
            batch.put_page(
                key,
                DigestOps::new(layout.compression).values(chunk).encode(),
            );
        }
        self.store.write(batch)
    }
}
