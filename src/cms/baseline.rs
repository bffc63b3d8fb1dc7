//! Baselines for `rocksketch bench`: the same increment written the way other designs
//! write it, over the same layout, so the benchmark compares like with like.

use super::operands::{additions, increment_operands, saturate};
use super::Cms;
use crate::error::Result;
use rocksdb::ReadOptions;
use rocksketch_merge::counter::CounterPage;
use rocksketch_merge::tally::Tally;

impl Cms {
    /// Kvrocks' design: under the key's lock, read every page the items touch, add, and
    /// put the whole pages (and the tally) back.
    #[doc(hidden)]
    pub fn incr_by_rewriting_pages<I: AsRef<[u8]>>(&self, items: &[(I, u64)]) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let slots = layout.item_slots(items.iter().map(|(item, _)| item.as_ref()));
        let read = self.read_pages(&layout, &slots)?;
        let mut pages: std::collections::BTreeMap<u32, Vec<u32>> = read
            .0
            .iter()
            .filter_map(|(page, p)| Some((*page, p.as_counter()?.cells().to_vec())))
            .collect();
        let mut count = self.read_count(&layout, &ReadOptions::default())?;
        for (i, (_, incr)) in items.iter().enumerate() {
            count = count.wrapping_add(*incr);
            for &(page, offset) in slots.of(i) {
                let cells = pages
                    .entry(page)
                    .or_insert_with(|| vec![0; layout.page_len(page) as usize]);
                if let Some(cell) = cells.get_mut(offset as usize) {
                    *cell = cell.saturating_add(saturate(*incr));
                }
            }
        }
        let mut batch = self.store.batch()?;
        for (page, cells) in pages {
            batch.put_page(
                layout.page_key(page),
                CounterPage::from_cells(cells).encode(),
            );
        }
        batch.put_page(layout.tally_key(), Tally::new(vec![count]).encode_page());
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
        let slots = layout.item_slots(items.iter().map(|(item, _)| item.as_ref()));
        let pages = slots.fold(&additions(items)).pages;
        let mut batch = self.store.batch()?;
        for (mut key, operand) in increment_operands(&layout, items, pages)? {
            key.extend_from_slice(&seq.to_be_bytes());
            batch.put_page(key, operand);
        }
        self.store.write(batch)
    }
}
