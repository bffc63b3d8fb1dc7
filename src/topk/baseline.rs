//! Baselines for `rocksketch bench topk-add`: the same adds written the way a key-value
//! host without merges writes them, over the same page.

use super::{encode, TopK, WHAT};
use crate::error::Result;
use crate::store::wrong_kind;

impl TopK {
    /// A host without merges: under the key's lock, read the whole Top-K, add, and put
    /// it back.
    #[doc(hidden)]
    pub fn add_rewriting_page(&self, pairs: &[(&[u8], u32)]) -> Result<()> {
        encode(pairs)?;
        let guard = self.store.lock(self.ns, &self.key);
        let page_key = self.layout(&guard)?;
        let page = self.read_page(&page_key)?;
        let mut top = page
            .as_topk()
            .ok_or_else(|| wrong_kind(&self.key, WHAT))?
            .clone();
        drop(page);
        top.add_all(pairs.iter().copied());
        let mut batch = self.store.batch()?;
        batch.put_page(page_key, top.encode());
        self.store.write(batch)
    }

    /// The floor: the operand a blind add writes, as a plain put to a distinct key (the
    /// page key suffixed with `seq`). Nothing reads it back.
    #[doc(hidden)]
    pub fn put_add_operand(&self, pairs: &[(&[u8], u32)], seq: u64) -> Result<()> {
        let operand = encode(pairs)?;
        let guard = self.store.share(self.ns, &self.key);
        let mut key = self.layout(&guard)?;
        key.extend_from_slice(&seq.to_be_bytes());
        let mut batch = self.store.batch()?;
        batch.put_page(key, operand);
        self.store.write(batch)
    }
}
