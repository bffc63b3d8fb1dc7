//! A write batch that knows which pages it writes, so that the hot-page cache follows
//! every write (see [`super::hot`]).

use super::hot::PageWrite;
use super::{Db, Store};
use crate::error::{Error, Result};
use crate::keys;
use rocksdb::WriteBatch;

/// Metadata and page writes, applied atomically by [`Store::write`] to the database
/// they were made for.
pub(crate) struct Batch<'a> {
    pub(super) inner: WriteBatch,
    db: Db<'a>,
    /// Page writes in order, for the cache (empty when the cache is off).
    pub(super) pages: Vec<(Vec<u8>, PageWrite)>,
    /// Key versions whose pages the batch range-deletes.
    pub(super) dropped: Vec<Vec<u8>>,
    /// A key the batch creates (its metadata key and record), for the metadata cache
    /// once written.
    pub(super) created: Option<(Vec<u8>, crate::meta::Meta)>,
    track: bool,
}

impl Store {
    /// An empty batch.
    pub(crate) fn batch(&self) -> Result<Batch<'_>> {
        let db = self.db()?;
        // Checked here, so the writers below find them (a database keeps its families).
        db.meta_cf()?;
        db.pages_cf()?;
        Ok(Batch {
            inner: WriteBatch::default(),
            db,
            pages: Vec::new(),
            dropped: Vec::new(),
            created: None,
            track: self.inner.hot.enabled(),
        })
    }

    /// Writes `batch` atomically; the hot-page cache follows it if it succeeds.
    pub(crate) fn write(&self, batch: Batch<'_>) -> Result<()> {
        if self.is_replica() {
            return Err(Error::ReadOnly);
        }
        let hot = &self.inner.hot;
        hot.begin_writes(batch.pages.iter().map(|(key, _)| key.as_slice()));
        let written = batch.db.write_opt(batch.inner, &self.inner.write_opts);
        if let (Err(e), Some(watch)) = (&written, &self.inner.watch) {
            watch.write_failed(e);
        }
        let pages = batch
            .pages
            .iter()
            .map(|(key, write)| (key.as_slice(), write));
        hot.end_writes(pages, written.is_ok());
        written?;
        for prefix in &batch.dropped {
            hot.drop_prefix(prefix);
        }
        if let Some((mkey, meta)) = batch.created {
            self.inner.cache.insert(mkey, meta);
        }
        Ok(())
    }
}

impl Batch<'_> {
    /// Appends an operand to a page.
    pub(crate) fn merge_page(&mut self, key: Vec<u8>, operand: Vec<u8>) {
        if let Ok(cf) = self.db.pages_cf() {
            self.inner.merge_cf(cf, &key, &operand);
        }
        if self.track {
            self.pages.push((key, PageWrite::Merge(operand)));
        }
    }

    /// Replaces a page.
    pub(crate) fn put_page(&mut self, key: Vec<u8>, value: impl AsRef<[u8]>) {
        if let Ok(cf) = self.db.pages_cf() {
            self.inner.put_cf(cf, &key, value);
        }
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
    /// must cover the range; empty: the caller drops them).
    pub(crate) fn delete_page_range(&mut self, from: &[u8], to: &[u8], cached: &[u8]) {
        if let Ok(cf) = self.db.pages_cf() {
            self.inner.delete_range_cf(cf, from, to);
        }
        if self.track && !cached.is_empty() {
            self.dropped.push(cached.to_vec());
        }
    }

    /// Writes a metadata record.
    pub(crate) fn put_meta(&mut self, key: &[u8], value: &[u8]) {
        if let Ok(cf) = self.db.meta_cf() {
            self.inner.put_cf(cf, key, value);
        }
    }

    /// Deletes a metadata record.
    pub(crate) fn delete_meta(&mut self, key: &[u8]) {
        if let Ok(cf) = self.db.meta_cf() {
            self.inner.delete_cf(cf, key);
        }
    }

    /// Bytes of the batch's records.
    pub(crate) fn size_in_bytes(&self) -> usize {
        self.inner.size_in_bytes()
    }
}
