//! A write batch that knows which pages it writes, so that the hot-page cache follows
//! every write (see [`super::hot`]).

use super::hot::PageWrite;
use super::Store;
use crate::error::{Error, Result};
use crate::keys;
use rocksdb::{ColumnFamily, WriteBatch};

/// Metadata and page writes, applied atomically by [`Store::write`].
pub(crate) struct Batch<'a> {
    pub(super) inner: WriteBatch,
    meta_cf: &'a ColumnFamily,
    pages_cf: &'a ColumnFamily,
    /// Page writes in order, for the cache (empty when the cache is off).
    pub(super) pages: Vec<(Vec<u8>, PageWrite)>,
    /// Key versions whose pages the batch range-deletes.
    pub(super) dropped: Vec<Vec<u8>>,
    track: bool,
}

impl Store {
    /// An empty batch.
    pub(crate) fn batch(&self) -> Result<Batch<'_>> {
        Ok(Batch {
            inner: WriteBatch::default(),
            meta_cf: self.meta_cf()?,
            pages_cf: self.pages_cf()?,
            pages: Vec::new(),
            dropped: Vec::new(),
            track: self.inner.hot.enabled(),
        })
    }

    /// Writes `batch` atomically; the hot-page cache follows it if it succeeds.
    pub(crate) fn write(&self, batch: Batch<'_>) -> Result<()> {
        let hot = &self.inner.hot;
        hot.begin_writes(batch.pages.iter().map(|(key, _)| key.as_slice()));
        let written = self.inner.db.write_opt(batch.inner, &self.inner.write_opts);
        let pages = batch
            .pages
            .iter()
            .map(|(key, write)| (key.as_slice(), write));
        hot.end_writes(pages, written.is_ok());
        written?;
        for prefix in &batch.dropped {
            hot.drop_prefix(prefix);
        }
        Ok(())
    }
}

impl Batch<'_> {
    /// Appends an operand to a page.
    pub(crate) fn merge_page(&mut self, key: Vec<u8>, operand: Vec<u8>) {
        self.inner.merge_cf(self.pages_cf, &key, &operand);
        if self.track {
            self.pages.push((key, PageWrite::Merge(operand)));
        }
    }

    /// Replaces a page.
    pub(crate) fn put_page(&mut self, key: Vec<u8>, value: impl AsRef<[u8]>) {
        self.inner.put_cf(self.pages_cf, &key, value);
        if self.track {
            self.pages.push((key, PageWrite::Drop));
        }
    }

    /// Deletes every page of the key version `prefix`.
    pub(crate) fn delete_pages(&mut self, prefix: &[u8]) -> Result<()> {
        let end = keys::prefix_end(prefix)
            .ok_or_else(|| Error::InvalidArgument("key too long".to_owned()))?;
        self.delete_page_range(prefix, &end, prefix);
        Ok(())
    }

    /// Deletes the pages in `[from, to)`, and drops cached pages under `cached` (which
    /// must cover the range).
    pub(crate) fn delete_page_range(&mut self, from: &[u8], to: &[u8], cached: &[u8]) {
        self.inner.delete_range_cf(self.pages_cf, from, to);
        if self.track {
            self.dropped.push(cached.to_vec());
        }
    }

    /// Writes a metadata record.
    pub(crate) fn put_meta(&mut self, key: &[u8], value: &[u8]) {
        self.inner.put_cf(self.meta_cf, key, value);
    }

    /// Deletes a metadata record.
    pub(crate) fn delete_meta(&mut self, key: &[u8]) {
        self.inner.delete_cf(self.meta_cf, key);
    }

    /// Bytes of the batch's records.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.inner.size_in_bytes()
    }
}
