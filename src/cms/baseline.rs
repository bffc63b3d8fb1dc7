//! Baselines for `rocksketch bench`: the same increment written the way other designs
//! write it, over the same layout, so the benchmark compares like with like.

use super::{increment_operands, saturate, Cms};
use crate::error::Result;
use rocksdb::{ReadOptions, WriteBatch};
use rocksketch_merge::counter::CounterPage;
use rocksketch_merge::tally::Tally;

impl Cms {
    /// Kvrocks' design: under the key's lock, read every page the items touch, add, and
    /// put the whole pages (and the tally) back.
    #[doc(hidden)]
    pub fn incr_by_rewriting_pages<I: AsRef<[u8]>>(&self, items: &[(I, u64)]) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let mut pages = self.read_pages(&layout, items.iter().map(|(i, _)| i.as_ref()))?;
        let mut count = self.read_count(&layout, &ReadOptions::default())?;
        for (item, incr) in items {
            count = count.wrapping_add(*incr);
            for (page, offset) in layout.slots(item.as_ref()) {
                if let Some(cell) = pages.0.entry(page).or_default().get_mut(offset as usize) {
                    *cell = cell.saturating_add(saturate(*incr));
                }
            }
        }
        let cf = self.store.pages_cf()?;
        let mut batch = WriteBatch::default();
        for (page, cells) in pages.0 {
            batch.put_cf(
                cf,
                layout.page_key(page),
                CounterPage::from_cells(cells).encode(),
            );
        }
        batch.put_cf(
            cf,
            layout.tally_key(),
            Tally::new(vec![count]).encode_page(),
        );
        self.store.write(batch)
    }

    /// The floor: the operands a blind increment writes, as plain puts to distinct keys
    /// (each key suffixed with `seq`). Nothing reads these back.
    #[doc(hidden)]
    pub fn put_increment_operands<I: AsRef<[u8]>>(
        &self,
        items: &[(I, u64)],
        seq: u64,
    ) -> Result<()> {
        let guard = self.store.share(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let cf = self.store.pages_cf()?;
        let mut batch = WriteBatch::default();
        for (mut key, operand) in increment_operands(&layout, items)? {
            key.extend_from_slice(&seq.to_be_bytes());
            batch.put_cf(cf, key, operand);
        }
        self.store.write(batch)
    }
}
