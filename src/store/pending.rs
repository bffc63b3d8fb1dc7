//! Key versions written in more than one batch (a streamed `CMS.MERGE`): a marker in
//! the meta column family names the version while its pages are written, and
//! [`Store::open`] drops the pages of any version a previous process left unfinished.

use super::Batch;
use super::{keys, Store};
use crate::error::Result;
use rocksdb::IteratorMode;

/// The namespace of the store's own records in the meta column family. The RESP host
/// never maps a database to it (`SELECT` stops below it); library users must not use it.
pub const INTERNAL_NS: u16 = u16::MAX;

/// Marks a key version whose pages are being written in several batches.
const PENDING_TAG: &[u8] = b"pending-version:";

fn pending_key(prefix: &[u8]) -> Vec<u8> {
    let mut key = keys::meta_key(INTERNAL_NS, PENDING_TAG);
    key.extend_from_slice(prefix);
    key
}

impl Store {
    /// Records that pages under the key version `prefix` are about to be written in
    /// more than one batch (see `CMS.MERGE`), before they become the key's version:
    /// if the process dies first, the next open drops them.
    pub(crate) fn mark_pending(&self, prefix: &[u8]) -> Result<()> {
        let mut batch = self.batch()?;
        batch.put_meta(&pending_key(prefix), b"");
        self.write(batch)
    }

    /// Adds the end of a pending write (the version is now live) to `batch`.
    pub(crate) fn clear_pending_into(&self, batch: &mut Batch<'_>, prefix: &[u8]) {
        batch.delete_meta(&pending_key(prefix));
    }

    /// Abandons a pending write: drops its pages and its marker, in one batch.
    pub(crate) fn drop_pending(&self, prefix: &[u8]) -> Result<()> {
        let mut batch = self.batch()?;
        batch.delete_pages(prefix)?;
        self.clear_pending_into(&mut batch, prefix);
        self.write(batch)
    }

    /// Gives up a pending write that failed part-way: drops its pages and marker now,
    /// or, if that write fails too (the disk is still full), remembers it, and
    /// [`Store::retry_abandoned`] drops them once writes are accepted again, instead
    /// of leaving them until the next process start.
    pub(crate) fn abandon_pending(&self, prefix: &[u8]) {
        if let Err(err) = self.drop_pending(prefix) {
            log::warn!("dropping an unfinished merge's pages failed ({err}); retried later");
            self.inner.abandoned.lock().push(prefix.to_vec());
        }
    }

    /// Drops the pages of pending writes given up while writes failed; those that still
    /// cannot be dropped are kept for the next try. Whether none is left.
    pub(crate) fn retry_abandoned(&self) -> bool {
        let abandoned = std::mem::take(&mut *self.inner.abandoned.lock());
        let mut left = Vec::new();
        for prefix in abandoned {
            if self.drop_pending(&prefix).is_err() {
                left.push(prefix);
            }
        }
        let mut kept = self.inner.abandoned.lock();
        kept.extend(left);
        kept.is_empty()
    }

    /// Drops the pages of every pending write a previous process left unfinished.
    pub(super) fn drop_abandoned_versions(&self) -> Result<()> {
        let start = keys::meta_key(INTERNAL_NS, PENDING_TAG);
        let db = self.db()?;
        let iter = db.iterator_cf(
            db.meta_cf()?,
            IteratorMode::From(&start, rocksdb::Direction::Forward),
        );
        let mut abandoned = Vec::new();
        for item in iter {
            let (raw_key, _) = item?;
            match raw_key.strip_prefix(start.as_slice()) {
                Some(prefix) => abandoned.push(prefix.to_vec()),
                None => break,
            }
        }
        for prefix in abandoned {
            self.drop_pending(&prefix)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreOptions;
    use rocksdb::ReadOptions;

    #[test]
    fn pages_of_an_unfinished_multi_batch_write_are_dropped_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let pending = keys::version_prefix(0, b"k", 42);
        let live = keys::version_prefix(0, b"k", 41);
        let page = |prefix: &[u8]| keys::page_key(prefix, 0, 1);
        {
            let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
            store.mark_pending(&pending).unwrap();
            let mut batch = store.batch().unwrap();
            batch.put_page(page(&pending), b"half-written");
            batch.put_page(page(&live), b"kept");
            store.write(batch).unwrap();
            // The process dies here, before the switch.
        }
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let got = store
            .get_pages(&[page(&pending), page(&live)], &ReadOptions::default())
            .unwrap();
        assert_eq!(got, vec![None, Some(b"kept".to_vec())]);
        let db = store.db().unwrap();
        let marker = db
            .get_cf(db.meta_cf().unwrap(), pending_key(&pending))
            .unwrap();
        assert_eq!(marker, None);
    }

    #[test]
    fn pages_of_a_write_given_up_while_writes_failed_are_dropped_on_the_retry() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let pending = keys::version_prefix(0, b"k", 42);
        let page = keys::page_key(&pending, 0, 1);
        store.mark_pending(&pending).unwrap();
        let mut batch = store.batch().unwrap();
        batch.put_page(page.clone(), b"half-written");
        store.write(batch).unwrap();
        // As `abandon_pending` leaves it when its own write is refused too.
        store.inner.abandoned.lock().push(pending.clone());
        assert!(store.retry_abandoned(), "dropped once writes are accepted");
        let got = store.get_pages(&[page], &ReadOptions::default()).unwrap();
        assert_eq!(got, vec![None]);
        assert!(store.inner.abandoned.lock().is_empty());
        let db = store.db().unwrap();
        let marker = db
            .get_cf(db.meta_cf().unwrap(), pending_key(&pending))
            .unwrap();
        assert_eq!(marker, None);
    }
}
