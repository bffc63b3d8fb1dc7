//! A namespace (a Redis database): its keys and the generic operations over them.

use super::{keys, now_ms, Store};
use crate::error::{Error, Result};
use crate::meta::{KeyType, Meta};
use rocksdb::IteratorMode;

/// The keys of one namespace, and the generic operations over them.
#[derive(Clone)]
pub struct Namespace {
    pub(crate) store: Store,
    pub(crate) ns: u16,
}

impl Namespace {
    /// The namespace number.
    pub fn id(&self) -> u16 {
        self.ns
    }

    /// Whether `key` exists (and has not expired).
    pub fn exists(&self, key: &[u8]) -> Result<bool> {
        Ok(self.store.meta(self.ns, key)?.is_some())
    }

    /// The type of structure at `key`, if any.
    pub fn key_type(&self, key: &[u8]) -> Result<Option<KeyType>> {
        Ok(self.store.meta(self.ns, key)?.map(|m| m.key_type()))
    }

    /// Deletes `key` and all its pages; returns whether it existed. A later structure at
    /// the same key gets a new version and never sees the old pages.
    pub fn delete(&self, key: &[u8]) -> Result<bool> {
        let guard = self.store.lock(self.ns, key);
        let Some(meta) = guard.stored_meta()? else {
            return Ok(false);
        };
        guard.delete(&meta)?;
        Ok(!meta.is_expired(now_ms()))
    }

    /// Up to `limit` live keys after `after` (exclusive; `None` from the start) in key
    /// order, with their types: a cursor for listing a large namespace in steps.
    pub fn scan(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<(Vec<u8>, KeyType)>> {
        let mut out = Vec::new();
        if limit > 0 {
            self.each_live(after, |key, meta| {
                out.push((key.to_vec(), meta.key_type()));
                out.len() < limit
            })?;
        }
        Ok(out)
    }

    /// Live keys in the namespace, and how many of them have an expiry (`DBSIZE` and
    /// `INFO keyspace`). Reads every metadata record of the namespace.
    pub fn counts(&self) -> Result<(u64, u64)> {
        let (mut live, mut expiring) = (0, 0);
        self.each_live(None, |_, meta| {
            live += 1;
            expiring += u64::from(meta.expire_at_ms != 0);
            true
        })?;
        Ok((live, expiring))
    }

    /// Calls `visit` with each live key of the namespace after `after` (exclusive) and
    /// its metadata, in key order, while it returns true.
    fn each_live(
        &self,
        after: Option<&[u8]>,
        mut visit: impl FnMut(&[u8], &Meta) -> bool,
    ) -> Result<()> {
        let start = keys::meta_key(self.ns, after.unwrap_or_default());
        let db = self.store.db()?;
        let iter = db.iterator_cf(
            db.meta_cf()?,
            IteratorMode::From(&start, rocksdb::Direction::Forward),
        );
        let now = now_ms();
        for item in iter {
            let (raw_key, raw_meta) = item?;
            let Some((ns, key)) = keys::split_meta_key(&raw_key) else {
                continue;
            };
            if ns != self.ns {
                break;
            }
            if after == Some(key) {
                continue;
            }
            let meta = Meta::decode(&raw_meta)
                .map_err(|source| Error::corrupt(key, "metadata", source))?;
            if !meta.is_expired(now) && !visit(key, &meta) {
                break;
            }
        }
        Ok(())
    }

    /// Every live key of the namespace, in key order.
    pub fn keys(&self) -> Result<Vec<(Vec<u8>, KeyType)>> {
        self.scan(None, usize::MAX)
    }

    /// The live keys `keep` accepts, in key order: the others are never collected, so
    /// a filter that matches few keys of a large namespace (`KEYS prefix*`) holds only
    /// those.
    pub fn keys_where(&self, mut keep: impl FnMut(&[u8]) -> bool) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        self.each_live(None, |key, _| {
            if keep(key) {
                out.push(key.to_vec());
            }
            true
        })?;
        Ok(out)
    }

    /// Sets `key` to expire at `at_ms` (Unix time in milliseconds); a time not in the
    /// future deletes the key at once. Returns whether it was set (or deleted); `false`
    /// for a missing key.
    pub fn expire_at(&self, key: &[u8], at_ms: u64) -> Result<bool> {
        self.expire_at_if(key, at_ms, |_| true)
    }

    /// [`Namespace::expire_at`] if `allow` agrees, given the key's current expiry time
    /// (`None` for none): `EXPIRE`'s `NX`, `XX`, `GT` and `LT` options.
    pub fn expire_at_if(
        &self,
        key: &[u8],
        at_ms: u64,
        allow: impl FnOnce(Option<u64>) -> bool,
    ) -> Result<bool> {
        let guard = self.store.lock(self.ns, key);
        let Some(meta) = guard.meta()? else {
            return Ok(false);
        };
        if !allow((meta.expire_at_ms != 0).then_some(meta.expire_at_ms)) {
            return Ok(false);
        }
        if at_ms <= now_ms() {
            guard.delete(&meta)?;
            return Ok(true);
        }
        let meta = Meta {
            expire_at_ms: at_ms,
            ..meta
        };
        guard.put_meta(meta, self.store.batch()?)?;
        Ok(true)
    }

    /// Removes `key`'s expiry; whether it had one.
    pub fn persist(&self, key: &[u8]) -> Result<bool> {
        let guard = self.store.lock(self.ns, key);
        match guard.meta()? {
            Some(meta) if meta.expire_at_ms != 0 => {
                let meta = Meta {
                    expire_at_ms: 0,
                    ..meta
                };
                guard.put_meta(meta, self.store.batch()?)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// When `key` expires: `None` if it does not exist, `Some(0)` if it never expires,
    /// else the Unix time in milliseconds.
    pub fn expire_time(&self, key: &[u8]) -> Result<Option<u64>> {
        Ok(self.store.meta(self.ns, key)?.map(|m| m.expire_at_ms))
    }

    /// Deletes every key of the namespace (Redis's `FLUSHDB`), a page of keys at a time;
    /// returns how many were deleted. Keys written while it runs may survive it.
    pub fn flush(&self) -> Result<u64> {
        let mut deleted = 0;
        let mut after: Option<Vec<u8>> = None;
        loop {
            let page = self.scan(after.as_deref(), 1024)?;
            let Some((last, _)) = page.last() else {
                return Ok(deleted);
            };
            after = Some(last.clone());
            for (key, _) in &page {
                deleted += u64::from(self.delete(key)?);
            }
        }
    }
}
