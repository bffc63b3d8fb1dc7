//! A namespace (a Redis database): its keys and the generic operations over them.

use super::{now_ms, Span, Store};
use crate::error::Result;
use crate::meta::{KeyType, Meta};

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
        let page = self.span().scan(after.map(|key| (self.ns, key)), limit)?;
        Ok(page.into_iter().map(|(_, key, t)| (key, t)).collect())
    }

    /// Live keys in the namespace, and how many of them have an expiry (`DBSIZE` and
    /// `INFO keyspace`). Reads every metadata record of the namespace.
    pub fn counts(&self) -> Result<(u64, u64)> {
        self.span().counts()
    }

    /// The namespace alone, as a [`Span`].
    pub fn span(&self) -> Span {
        self.store.span(self.ns, self.ns)
    }

    /// Every live key of the namespace, in key order.
    pub fn keys(&self) -> Result<Vec<(Vec<u8>, KeyType)>> {
        self.scan(None, usize::MAX)
    }

    /// The live keys `keep` accepts, in key order: the others are never collected, so
    /// a filter that matches few keys of a large namespace (`KEYS prefix*`) holds only
    /// those.
    pub fn keys_where(&self, keep: impl FnMut(&[u8]) -> bool) -> Result<Vec<Vec<u8>>> {
        self.span().keys_where(keep)
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
        self.span().flush()
    }
}
