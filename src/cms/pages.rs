//! Reading a sketch's counter pages: through the hot-page cache, or at a snapshot.

use super::layout::ItemSlots;
use super::{Cms, Layout};
use crate::error::{Error, Result};
use crate::store::wrong_kind;
use rocksdb::ReadOptions;
use rocksketch_merge::tally::Tally;
use rocksketch_merge::Page;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Pages read for a command (checked to be counter pages of the layout's lengths), by
/// page number; a page never written is left out and reads as zeros.
pub(super) struct Pages(pub(super) BTreeMap<u32, Arc<Page>>);

impl Pages {
    pub(super) fn cell(&self, page: u32, offset: u32) -> u32 {
        self.0
            .get(&page)
            .and_then(|p| p.as_counter())
            .and_then(|p| p.cells().get(offset as usize))
            .copied()
            .unwrap_or(0)
    }
}

impl Cms {
    /// Reads and decodes the pages that the items of `slots` touch.
    pub(super) fn read_pages(&self, layout: &Layout, slots: &ItemSlots) -> Result<Pages> {
        self.read_page_set(layout, &slots.pages(), None)
    }

    /// Reads pages by number: through the hot-page cache, or from RocksDB with
    /// `read_opts` (a snapshot) if given.
    pub(super) fn read_page_set(
        &self,
        layout: &Layout,
        pages: &[u32],
        read_opts: Option<&ReadOptions>,
    ) -> Result<Pages> {
        const WHAT: &str = "a counter page";
        let page_keys: Vec<Vec<u8>> = pages.iter().map(|p| layout.page_key(*p)).collect();
        let values = match read_opts {
            None => self.store.read_pages(&self.key, WHAT, &page_keys)?,
            Some(opts) => self
                .store
                .read_pages_at(&self.key, WHAT, &page_keys, opts)?,
        };
        let mut out = BTreeMap::new();
        for (page, value) in pages.iter().zip(values) {
            let Some(value) = value else {
                continue;
            };
            match value.as_counter() {
                Some(p) if p.cells().len() == layout.page_len(*page) as usize => {}
                Some(_) => {
                    return Err(Error::corrupt(
                        &self.key,
                        WHAT,
                        rocksketch_merge::Error::Invalid(
                            "page length differs from the sketch's layout",
                        ),
                    ))
                }
                None => return Err(wrong_kind(&self.key, WHAT)),
            }
            out.insert(*page, value);
        }
        Ok(Pages(out))
    }

    pub(super) fn read_count(&self, layout: &Layout, read_opts: &ReadOptions) -> Result<u64> {
        let value = self
            .store
            .get_pages(&[layout.tally_key()], read_opts)?
            .pop()
            .flatten();
        match value {
            None => Ok(0),
            Some(raw) => Ok(Tally::decode_page(&raw)
                .map_err(|source| Error::corrupt(&self.key, "the tally page", source))?
                .get(0)),
        }
    }
}
