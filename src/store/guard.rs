//! The key guard: a held key stripe (see [`crate::locks`]) and what may be done under it.

use super::Batch;
use super::{check_new_key, keys, now_ms, Store};
use crate::error::{Error, Result};
use crate::locks::Held;
use crate::meta::{KeyType, Meta, Params};

/// A key's stripe, held (see [`crate::locks`]): the one way to reach a key's metadata
/// under its lock, and, held exclusively, to change it.
pub(crate) struct KeyGuard<'a> {
    pub(super) store: &'a Store,
    pub(super) ns: u16,
    pub(super) key: &'a [u8],
    pub(super) held: Held<'a>,
    pub(super) _one: OnlyGuard,
    /// A key created by this operation and not yet written: the next batch made by
    /// [`KeyGuard::batch`] writes it along with the operation's first write, so a
    /// refused write creates nothing.
    pub(super) pending: std::cell::Cell<Option<Meta>>,
}

/// Marks the one key guard a thread may hold. The stripes are not reentrant (two keys
/// may share one), so taking a second guard while holding one could deadlock the
/// thread against itself; in debug builds (every test) it panics at once instead, naming
/// the mistake, and the way to read another key under a lock is
/// [`KeyGuard::other_meta_at`].
pub(crate) struct OnlyGuard(());

thread_local! {
    static HOLDS_GUARD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl OnlyGuard {
    /// Taken before the stripe is locked, so a second guard fails before it blocks.
    pub(super) fn take() -> OnlyGuard {
        let held_before = HOLDS_GUARD.with(|held| held.replace(true));
        debug_assert!(
            !held_before,
            "a key lock was taken while this thread holds another (locks are not reentrant)"
        );
        OnlyGuard(())
    }
}

impl Drop for OnlyGuard {
    fn drop(&mut self) {
        HOLDS_GUARD.with(|held| held.set(false));
    }
}

impl<'a> KeyGuard<'a> {
    /// An empty batch, holding the key's creation if it is still to be written (see
    /// [`KeyGuard::create_with_first_write`]).
    pub(crate) fn batch(&self) -> Result<Batch<'a>> {
        let mut batch = self.store.batch()?;
        if let Some(meta) = self.pending.take() {
            // As `put_meta`: an expired version the key still holds goes in this batch.
            if let Some(old) = self.store.read_meta(self.ns, self.key, false)? {
                if old.version != meta.version {
                    self.store
                        .delete_into(&mut batch, self.ns, self.key, &old)?;
                }
            }
            let mkey = keys::meta_key(self.ns, self.key);
            batch.put_meta(&mkey, &meta.encode());
            batch.created = Some((mkey, meta));
        }
        Ok(batch)
    }
}

impl KeyGuard<'_> {
    /// The live metadata of `other`, another key of this namespace, read while this
    /// key's lock is held (as a merge reads its sources) as of `read_opts`' snapshot:
    /// without taking `other`'s lock, which may be this one's stripe, and without the
    /// cache (newer than any snapshot, and never filled from here, so that no stale
    /// entry can be left there). A merge reads its sources' metadata and their pages
    /// from one snapshot this way: read before the snapshot, a source deleted and made
    /// again in between had a version whose pages the snapshot no longer held, and read
    /// as empty.
    pub(crate) fn other_meta_at(
        &self,
        other: &[u8],
        read_opts: &rocksdb::ReadOptions,
    ) -> Result<Option<Meta>> {
        Ok(live(self.store.read_meta_at(self.ns, other, read_opts)?))
    }

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

    /// The live metadata of a key that must exist (else `missing`) and hold `kind`
    /// (else `WRONGTYPE`), with its version prefix.
    pub(crate) fn existing(
        &self,
        kind: KeyType,
        missing: impl Into<Error>,
    ) -> Result<(Meta, Vec<u8>)> {
        let meta = self.typed_meta(kind)?.ok_or_else(|| missing.into())?;
        let prefix = self.prefix(&meta);
        Ok((meta, prefix))
    }

    /// The version prefix of this key's pages under `meta`.
    pub(crate) fn prefix(&self, meta: &Meta) -> Vec<u8> {
        keys::version_prefix(self.ns, self.key, meta.version)
    }

    /// The metadata of a new version of this key holding `params`, not yet written
    /// (see [`KeyGuard::put_meta`]).
    /// Refuses a key longer than [`MAX_KEY_LEN`]: every page key and every operand
    /// written to it carries the key's name.
    pub(crate) fn new_meta(&self, params: Params) -> Result<Meta> {
        self.new_windowed_meta(params, None)
    }

    /// [`KeyGuard::new_meta`] of a key with a sliding window, or without one.
    pub(crate) fn new_windowed_meta(
        &self,
        params: Params,
        window: Option<crate::Window>,
    ) -> Result<Meta> {
        check_new_key(self.key)?;
        Ok(Meta {
            version: self.store.next_version(),
            expire_at_ms: 0,
            params,
            window,
        })
    }

    /// Where an operation on the key version `meta` reads and writes now: its version
    /// prefix, or its live generations' (see [`crate::window`]).
    pub(crate) fn prefixes(&self, meta: &Meta) -> crate::window::Prefixes {
        crate::window::Prefixes::of(self.prefix(meta), meta.window, self.store.clock().now_ms())
    }

    /// A new key holding `params`, to be written with this operation's first batch
    /// ([`KeyGuard::batch`]) instead of on its own (the lock must be exclusive): an
    /// add that creates its key (`BF.ADD`, `CF.ADD`, `RIBBON.ADD` ...) then either
    /// writes both or neither.
    pub(crate) fn create_with_first_write(&self, params: Params) -> Result<Meta> {
        self.require_exclusive()?;
        let meta = self.new_meta(params)?;
        self.pending.set(Some(meta));
        Ok(meta)
    }

    /// Writes the key's creation if no batch has carried it yet.
    pub(crate) fn write_pending(&self) -> Result<()> {
        match self.pending.get() {
            Some(_) => self.store.write(self.batch()?),
            None => Ok(()),
        }
    }

    /// Creates the key holding `params`, with no pages (the lock must be exclusive).
    pub(crate) fn create(&self, params: Params) -> Result<Meta> {
        self.create_windowed(params, None)
    }

    /// [`KeyGuard::create`] with a sliding window, or without one.
    pub(crate) fn create_windowed(
        &self,
        params: Params,
        window: Option<crate::Window>,
    ) -> Result<Meta> {
        let meta = self.new_windowed_meta(params, window)?;
        self.put_meta(meta, self.store.batch()?)?;
        Ok(meta)
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
        match store.read_meta(self.ns, self.key, false)? {
            Some(old) if old.version != meta.version => {
                store.delete_into(&mut batch, self.ns, self.key, &old)?;
            }
            Some(_) => {}
            None => check_new_key(self.key)?,
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
pub fn take_last_lookup() -> Option<bool> {
    LAST_LOOKUP.with(|last| last.take())
}

#[cfg(all(test, debug_assertions))]
mod tests {
    use crate::{Store, StoreOptions};

    #[test]
    #[should_panic(expected = "not reentrant")]
    fn a_second_key_lock_on_one_thread_fails_at_once_instead_of_deadlocking() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let _held = store.lock(0, b"a");
        let _second = store.share(0, b"b");
    }

    #[test]
    fn a_lock_is_free_again_once_its_guard_is_dropped_and_other_keys_read_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        store.cms("other").init_by_dim(10, 2).unwrap();
        drop(store.lock(0, b"a"));
        let guard = store.share(0, b"a");
        let now = rocksdb::ReadOptions::default();
        let other = guard
            .other_meta_at(b"other", &now)
            .unwrap()
            .expect("created above");
        assert_eq!(other.key_type(), crate::KeyType::Cms);
        assert!(guard.other_meta_at(b"missing", &now).unwrap().is_none());
        drop(guard);
        assert!(store.meta(0, b"other").unwrap().is_some());
    }
}
