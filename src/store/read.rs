//! Reading pages: through the hot-page cache (see [`super::hot`]), or straight from
//! RocksDB at a snapshot.

use super::{keys, Store};
use crate::error::{Error, Result};
use crate::fast::FastMap;
use crate::meta::Meta;
use rocksdb::ReadOptions;
use rocksketch_merge::tally::Tally;
use rocksketch_merge::Page;
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Store {
    /// The stored metadata as of `read_opts` (its snapshot), from the database: never
    /// from the cache, which is newer than any snapshot.
    pub(super) fn read_meta_at(
        &self,
        ns: u16,
        key: &[u8],
        read_opts: &rocksdb::ReadOptions,
    ) -> Result<Option<Meta>> {
        let mkey = keys::meta_key(ns, key);
        let db = self.db()?;
        let raw = db.get_pinned_cf_opt(db.meta_cf()?, &mkey, read_opts)?;
        raw.map(|raw| decode_meta(key, &raw)).transpose()
    }

    /// The stored metadata, expired or not: from the cache, else from the database
    /// (then cached if `fill`, which needs the key's lock held).
    pub(super) fn read_meta(&self, ns: u16, key: &[u8], fill: bool) -> Result<Option<Meta>> {
        let mkey = keys::meta_key(ns, key);
        if let Some(meta) = self.inner.cache.get(&mkey) {
            return Ok(Some(meta));
        }
        let db = self.db()?;
        let Some(raw) = db.get_pinned_cf(db.meta_cf()?, &mkey)? else {
            return Ok(None);
        };
        let meta = decode_meta(key, &raw)?;
        if fill {
            self.inner.cache.insert(mkey, meta);
        }
        Ok(Some(meta))
    }

    /// Reads pages by key through the hot-page cache, decoded; `None` for a page never
    /// written. A page that does not decode is reported as corruption of `what` in `key`.
    pub(crate) fn read_pages(
        &self,
        key: &[u8],
        what: &'static str,
        page_keys: &[Vec<u8>],
    ) -> Result<Vec<Option<Arc<Page>>>> {
        self.read_pages_impl(key, what, page_keys, None)
    }

    /// [`Store::read_pages`] where a page never written reads (and is cached) as
    /// `absent()`: right only for pages whose full merge starts from that page when
    /// there is no stored value (Ribbon staging pages), so that lookups of pages that
    /// were never written stay in memory too.
    pub(crate) fn read_pages_or(
        &self,
        key: &[u8],
        what: &'static str,
        page_keys: &[Vec<u8>],
        absent: impl Fn() -> Page,
    ) -> Result<Vec<Option<Arc<Page>>>> {
        self.read_pages_impl(key, what, page_keys, Some(&absent))
    }

    fn read_pages_impl(
        &self,
        key: &[u8],
        what: &'static str,
        page_keys: &[Vec<u8>],
        absent: Option<&dyn Fn() -> Page>,
    ) -> Result<Vec<Option<Arc<Page>>>> {
        let hot = &self.inner.hot;
        if !hot.enabled() {
            return self.read_pages_at(key, what, page_keys, &ReadOptions::default());
        }
        let (mut found, misses) = hot.lookup(page_keys);
        if misses.is_empty() {
            return Ok(found);
        }
        let wanted: Vec<&[u8]> = misses.iter().map(|m| page_keys[m.at].as_slice()).collect();
        let read = self.get_pages(&wanted, &ReadOptions::default());
        let values = match read.map_err(|err| damaged_table(key, what, err)) {
            Ok(values) => values,
            Err(err) => {
                for miss in &misses {
                    hot.fill(&page_keys[miss.at], miss, None);
                }
                return Err(err);
            }
        };
        let mut failure = None;
        for (miss, value) in misses.iter().zip(values) {
            let page = match value.map(|raw| Page::decode(&raw)) {
                None if absent.is_none() => {
                    hot.fill_absent(&page_keys[miss.at], miss);
                    continue;
                }
                None => absent.map(|make| Arc::new(make())),
                Some(Ok(page)) => Some(Arc::new(page)),
                Some(Err(source)) => {
                    failure.get_or_insert(Error::corrupt(key, what, source));
                    None
                }
            };
            hot.fill(&page_keys[miss.at], miss, page.as_ref());
            found[miss.at] = page;
        }
        match failure {
            Some(err) => Err(err),
            None => Ok(found),
        }
    }

    /// The pages `(sub-filter, page)` of a filter chain's key version `prefix`, each
    /// read once through the cache and passed to `check`; pages never written are left
    /// out. Bloom and cuckoo reads of an item's pages in every sub-filter go here.
    pub(crate) fn read_chain_pages(
        &self,
        key: &[u8],
        what: &'static str,
        prefix: &[u8],
        mut wanted: Vec<(u32, u32)>,
        check: impl Fn(u32, &Page) -> Result<()>,
    ) -> Result<FastMap<(u32, u32), Arc<Page>>> {
        wanted.sort_unstable();
        wanted.dedup();
        self.read_sorted_chain_pages(key, what, prefix, &wanted, check)
    }

    /// [`Store::read_chain_pages`] of pages already sorted and each named once (a
    /// windowed filter's generations are read from one such list).
    pub(crate) fn read_sorted_chain_pages(
        &self,
        key: &[u8],
        what: &'static str,
        prefix: &[u8],
        wanted: &[(u32, u32)],
        check: impl Fn(u32, &Page) -> Result<()>,
    ) -> Result<FastMap<(u32, u32), Arc<Page>>> {
        let page_keys: Vec<Vec<u8>> = wanted
            .iter()
            .map(|(sub, page)| keys::page_key(prefix, *sub as u16, *page))
            .collect();
        let mut pages = FastMap::with_capacity_and_hasher(wanted.len(), Default::default());
        let values = self.read_pages(key, what, &page_keys)?;
        for (&(sub, page), value) in wanted.iter().zip(values) {
            if let Some(value) = value {
                check(sub, &value)?;
                pages.insert((sub, page), value);
            }
        }
        Ok(pages)
    }

    /// [`Store::read_pages`] straight from RocksDB with `read_opts` (a snapshot, say).
    pub(crate) fn read_pages_at(
        &self,
        key: &[u8],
        what: &'static str,
        page_keys: &[Vec<u8>],
        read_opts: &ReadOptions,
    ) -> Result<Vec<Option<Arc<Page>>>> {
        self.get_pages(page_keys, read_opts)
            .map_err(|err| damaged_table(key, what, err))?
            .into_iter()
            .map(|value| {
                value
                    .map(|raw| Page::decode(&raw).map(Arc::new))
                    .transpose()
                    .map_err(|source| Error::corrupt(key, what, source))
            })
            .collect()
    }

    /// The hot-page cache's hits, misses and bytes held.
    pub fn page_cache_stats(&self) -> (u64, u64, usize) {
        let hot = &self.inner.hot;
        (
            hot.stats.hits.load(Ordering::Relaxed),
            hot.stats.misses.load(Ordering::Relaxed),
            hot.bytes(),
        )
    }

    /// Reads pages by key, encoded as stored; `None` for a page never written.
    pub(crate) fn get_pages<K: AsRef<[u8]>>(
        &self,
        page_keys: &[K],
        read_opts: &ReadOptions,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let db = self.db()?;
        let cf = db.pages_cf()?;
        db.multi_get_cf_opt(page_keys.iter().map(|k| (cf, k)), read_opts)
            .into_iter()
            .map(|r| r.map_err(Error::from))
            .collect()
    }

    /// The tally page of a key version (`prefix`); zeros if never written.
    pub(crate) fn read_tally(&self, key: &[u8], prefix: &[u8]) -> Result<Tally> {
        let page = keys::page_key(prefix, keys::TALLY_SUB, 0);
        match self
            .read_pages(key, "the tally page", &[page])?
            .pop()
            .flatten()
            .as_deref()
        {
            None => Ok(Tally::default()),
            Some(Page::Tally(tally)) => Ok(tally.clone()),
            Some(_) => Err(wrong_kind(key, "the tally page")),
        }
    }
}

/// A read that RocksDB failed because a table block of `key`'s pages is damaged (its
/// checksum does not match) is corruption of that key, named as such; other errors stay
/// as they are.
fn damaged_table(key: &[u8], what: &'static str, err: Error) -> Error {
    match err {
        Error::RocksDb(err) if err.kind() == rocksdb::ErrorKind::Corruption => {
            log::warn!(
                "damaged table block read for key {:?}: {}",
                String::from_utf8_lossy(key),
                err.as_ref()
            );
            Error::corrupt(
                key,
                what,
                rocksketch_merge::Error::Invalid("a damaged table block (checksum mismatch)"),
            )
        }
        other => other,
    }
}

/// The error of a page of another kind than its key's layout says.
pub(crate) fn wrong_kind(key: &[u8], what: &'static str) -> Error {
    Error::corrupt(
        key,
        what,
        rocksketch_merge::Error::Invalid("a page of another kind"),
    )
}

/// `key`'s stored metadata record, decoded; damage is corruption of that key.
fn decode_meta(key: &[u8], raw: &[u8]) -> Result<Meta> {
    Meta::decode(raw).map_err(|source| Error::Corruption {
        key: key.to_vec(),
        what: "metadata",
        source,
    })
}
