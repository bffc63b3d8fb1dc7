//! A span of consecutive namespaces listed as one keyspace: a Redis database is one
//! namespace, a cluster node's database is one namespace per hash slot (so that every
//! page of a slot is one key range), and `DBSIZE`, `KEYS`, `SCAN` and `FLUSHDB` see
//! all of them. One iterator walks the span's metadata in (namespace, key) order.

use super::{keys, now_ms, Store};
use crate::error::{Error, Result};
use crate::meta::{KeyType, Meta};
use rocksdb::IteratorMode;

/// Namespaces `first..=last`, listed together.
#[derive(Clone)]
pub struct Span {
    pub(crate) store: Store,
    pub(crate) first: u16,
    pub(crate) last: u16,
}

/// A live key of a span: its namespace, its name and its type.
pub type Listed = (u16, Vec<u8>, KeyType);

impl Span {
    /// The first and last namespace of the span.
    pub fn bounds(&self) -> (u16, u16) {
        (self.first, self.last)
    }

    /// Up to `limit` live keys after `after` (a namespace and a key, exclusive; `None`
    /// from the start) in (namespace, key) order: a cursor for listing in steps.
    pub fn scan(&self, after: Option<(u16, &[u8])>, limit: usize) -> Result<Vec<Listed>> {
        let mut out = Vec::new();
        if limit > 0 {
            self.each_live(after, |ns, key, meta| {
                out.push((ns, key.to_vec(), meta.key_type()));
                out.len() < limit
            })?;
        }
        Ok(out)
    }

    /// Live keys, and how many of them have an expiry. Reads every metadata record of
    /// the span.
    pub fn counts(&self) -> Result<(u64, u64)> {
        let (mut live, mut expiring) = (0, 0);
        self.each_live(None, |_, _, meta| {
            live += 1;
            expiring += u64::from(meta.expire_at_ms != 0);
            true
        })?;
        Ok((live, expiring))
    }

    /// The live keys `keep` accepts, in order; the others are never collected.
    pub fn keys_where(&self, mut keep: impl FnMut(&[u8]) -> bool) -> Result<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        self.each_live(None, |_, key, _| {
            if keep(key) {
                out.push(key.to_vec());
            }
            true
        })?;
        Ok(out)
    }

    /// Deletes every key of the span, a page of keys at a time; how many were deleted.
    /// Keys written while it runs may survive it.
    pub fn flush(&self) -> Result<u64> {
        let mut deleted = 0;
        let mut after: Option<(u16, Vec<u8>)> = None;
        loop {
            let page = self.scan(after.as_ref().map(|(ns, k)| (*ns, k.as_slice())), 1024)?;
            let Some((ns, last, _)) = page.last() else {
                return Ok(deleted);
            };
            after = Some((*ns, last.clone()));
            for (ns, key, _) in &page {
                deleted += u64::from(self.store.ns(*ns).delete(key)?);
            }
        }
    }

    /// Calls `visit` with each live key after `after` (exclusive), its namespace and
    /// its metadata, in order, while it returns true.
    pub(crate) fn each_live(
        &self,
        after: Option<(u16, &[u8])>,
        mut visit: impl FnMut(u16, &[u8], &Meta) -> bool,
    ) -> Result<()> {
        let (from_ns, from_key) = after.unwrap_or((self.first, &[]));
        if from_ns > self.last {
            return Ok(());
        }
        let start = keys::meta_key(from_ns.max(self.first), from_key);
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
            if ns > self.last {
                break;
            }
            if after == Some((ns, key)) {
                continue;
            }
            let meta = Meta::decode(&raw_meta)
                .map_err(|source| Error::corrupt(key, "metadata", source))?;
            if !meta.is_expired(now) && !visit(ns, key, &meta) {
                break;
            }
        }
        Ok(())
    }
}

impl Store {
    /// Namespaces `first..=last` listed as one keyspace (see [`Span`]).
    pub fn span(&self, first: u16, last: u16) -> Span {
        Span {
            store: self.clone(),
            first,
            last: last.max(first),
        }
    }
}
