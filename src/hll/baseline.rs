//! Baselines for `rocksketch bench pfadd`: the same add written the way other designs
//! write it, over the same page, so the benchmark compares like with like.

use super::Hll;
use crate::error::{Error, Result};
use crate::meta::KeyType;
use rocksketch_merge::hll::{position, HllOps};

impl Hll {
    /// Kvrocks' design: under the key's lock, read the registers, raise them, and put
    /// the whole page back (the key must exist).
    #[doc(hidden)]
    pub fn add_rewriting_page<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let meta = guard.typed_meta(KeyType::Hll)?.ok_or(Error::WrongType)?;
        let page_key = self.page_key(&meta);
        let page = self.read(&page_key)?;
        let mut regs = page.as_hll().cloned().ok_or(Error::WrongType)?;
        drop(page);
        for item in items {
            let (index, rank) = position(item.as_ref());
            regs.raise(index, rank);
        }
        let mut batch = self.store.batch()?;
        batch.put_page(page_key, regs.encode());
        self.store.write(batch)
    }

    /// The floor: the operand a blind add writes, as a plain put to a distinct key (the
    /// page key suffixed with `seq`). Nothing reads these back.
    #[doc(hidden)]
    pub fn put_add_operand<I: AsRef<[u8]>>(&self, items: &[I], seq: u64) -> Result<()> {
        let guard = self.store.share(self.ns, &self.key);
        let meta = guard.typed_meta(KeyType::Hll)?.ok_or(Error::WrongType)?;
        let mut key = self.page_key(&meta);
        key.extend_from_slice(&seq.to_be_bytes());
        let mut batch = self.store.batch()?;
        batch.put_page(key, HllOps::add(items).encode());
        self.store.write(batch)
    }
}
