//! The key guard: a held key stripe (see [`crate::locks`]) and what may be done under it.

use super::Batch;
use super::{keys, now_ms, Store};
use crate::error::{Error, Result};
use crate::locks::Held;
use crate::meta::{KeyType, Meta};

/// A key's stripe, held (see [`crate::locks`]): the one way to reach a key's metadata
/// under its lock, and, held exclusively, to change it.
pub(crate) struct KeyGuard<'a> {
    pub(super) store: &'a Store,
    pub(super) ns: u16,
    pub(super) key: &'a [u8],
    pub(super) held: Held<'a>,
}

impl KeyGuard<'_> {
    /// The key's live metadata (an expired key reads as absent). A cache miss fills
    /// the cache: safe under either lock, since only an exclusive holder changes it.
    pub(crate) fn meta(&self) -> Result<Option<Meta>> {
        Ok(live(self.stored_meta()?))
    }

    /// [`KeyGuard::meta`] of a key that must hold `kind` if it exists (else `WRONGTYPE`).
    pub(crate) fn typed_meta(&self, kind: KeyType) -> Result<Option<Meta>> {
        match self.meta()? {
            Some(meta) if meta.key_type() != kind => Err(Error::WrongType),
            other => Ok(other),
        }
    }

    /// The stored metadata, expired or not.
    pub(crate) fn stored_meta(&self) -> Result<Option<Meta>> {
        self.store.read_meta(self.ns, self.key, true)
    }

    /// Whether the lock is held exclusively.
    pub(crate) fn is_exclusive(&self) -> bool {
        matches!(self.held, Held::Exclusive(_))
    }

    fn require_exclusive(&self) -> Result<()> {
        match self.is_exclusive() {
            true => Ok(()),
            false => Err(Error::Storage(
                "internal: metadata changed under a shared lock".to_owned(),
            )),
        }
    }

    /// Writes `meta` along with `batch` (the lock must be exclusive). Writing a new
    /// version over an older record (one that expired and was not yet swept) removes
    /// the older version's pages in the same batch. The cache changes only once the
    /// batch is written.
    pub(crate) fn put_meta(&self, meta: Meta, mut batch: Batch<'_>) -> Result<()> {
        self.require_exclusive()?;
        let store = self.store;
        if let Some(old) = store.read_meta(self.ns, self.key, false)? {
            if old.version != meta.version {
                store.delete_into(&mut batch, self.ns, self.key, &old)?;
            }
        }
        let mkey = keys::meta_key(self.ns, self.key);
        batch.put_meta(&mkey, &meta.encode());
        store.write(batch)?;
        store.inner.cache.insert(mkey, meta);
        Ok(())
    }

    /// Deletes the key version `meta` names: its metadata and, with a range delete,
    /// all its pages (the lock must be exclusive).
    pub(crate) fn delete(&self, meta: &Meta) -> Result<()> {
        self.require_exclusive()?;
        let mut batch = self.store.batch()?;
        self.store
            .delete_into(&mut batch, self.ns, self.key, meta)?;
        self.store.write(batch)?;
        self.store
            .inner
            .cache
            .remove(&keys::meta_key(self.ns, self.key));
        Ok(())
    }
}

/// `meta` unless it has expired.
pub(super) fn live(meta: Option<Meta>) -> Option<Meta> {
    let meta = meta.filter(|m| !m.is_expired(now_ms()));
    LAST_LOOKUP.with(|last| last.set(Some(meta.is_some())));
    meta
}

thread_local! {
    /// Whether the last lookup of a key's metadata on this thread found a live key.
    static LAST_LOOKUP: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Whether the last key lookup on this thread (since the last call) found the key, for
/// `INFO stats`' keyspace hits and misses; `None` if there was none.
pub(crate) fn take_last_lookup() -> Option<bool> {
    LAST_LOOKUP.with(|last| last.take())
}
