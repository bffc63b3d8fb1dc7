//! Baselines for `rocksketch bench bf-add`: the same add written the way other designs
//! write it, over the same layout.

use super::{add_operands, hashes, sub_of, BloomFilter};
use crate::chain as tally;
use crate::error::{Error, Result};
use crate::keys;
use rocksdb::ReadOptions;
use rocksketch_merge::bits::BitPage;

impl BloomFilter {
    /// Kvrocks' design: under the key's lock, read the item's page of the newest
    /// sub-filter and the counts, set the bits, and put the whole page and counts back.
    #[doc(hidden)]
    pub fn add_rewriting_pages(&self, item: impl AsRef<[u8]>) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let (_, params, prefix) = self.existing(&guard)?;
        let newest = params.filters - 1;
        let sub = sub_of(&params, newest);
        let (page_no, bits) = sub.locate(hashes(item.as_ref()));
        let page_key = keys::page_key(&prefix, newest as u16, page_no);
        let mut page = match self
            .store
            .get_pages(std::slice::from_ref(&page_key), &ReadOptions::default())?
            .pop()
            .flatten()
        {
            Some(raw) => BitPage::decode(&raw)
                .map_err(|source| Error::corrupt(&self.key, "a bit page", source))?,
            None => BitPage::zeroed(sub.page_bits),
        };
        for bit in bits {
            page.set(bit);
        }
        let mut counts = self.counts(&prefix)?;
        counts.add(newest, 1);
        let mut batch = self.store.batch()?;
        batch.put_page(page_key, page.encode());
        batch.put_page(tally::page_key(&prefix), counts.encode_page());
        self.store.write(batch)
    }

    /// The floor: the operands a blind add writes, as plain puts to distinct keys (each
    /// key suffixed with `seq`). Nothing reads these back.
    #[doc(hidden)]
    pub fn put_add_operands<I: AsRef<[u8]>>(&self, items: &[I], seq: u64) -> Result<()> {
        let guard = self.store.share(self.ns, &self.key);
        let (_, params, prefix) = self.existing(&guard)?;
        let mut batch = self.store.batch()?;
        for (mut key, operand) in add_operands(&prefix, &params, items)? {
            key.extend_from_slice(&seq.to_be_bytes());
            batch.put_page(key, operand);
        }
        self.store.write(batch)
    }
}
