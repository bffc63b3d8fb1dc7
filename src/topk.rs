//! Top-K: RedisBloom's HeavyKeeper on one blind-merge page per key.
//!
//! `TOPK.ADD` and `TOPK.INCRBY` answer with the items they expel from the top list, so
//! their replies need the state: under the key's exclusive lock, the page is read
//! (through the hot-page cache), the pairs are applied to an overlay of it to compute
//! the replies, and one small operand of the pairs is written. The merge applies the
//! same pairs to the same page with the same deterministic draws, so the stored Top-K
//! evolves exactly as the replies said; no write rewrites the page. [`TopK::add_blind`]
//! writes the operand without reading, for callers that need no reply.

#[cfg(feature = "baselines")]
mod baseline;

use crate::error::{Error, Result, TopKError};
use crate::keys;
use crate::meta::{Meta, Params};
use crate::store::{wrong_kind, KeyGuard, Store};
use rocksketch_merge::topk::{ops, Shape, TopKPage, MAX_ITEM_BYTES};
use rocksketch_merge::Page;
use std::sync::Arc;

const WHAT: &str = "top-k page";

/// A handle on the Top-K at one key. Creating the handle reads nothing.
pub struct TopK {
    store: Store,
    ns: u16,
    key: Vec<u8>,
}

handle_constructors!(topk, TopK, "Top-K");

impl TopK {
    pub(crate) fn new(store: Store, ns: u16, key: Vec<u8>) -> TopK {
        TopK { store, ns, key }
    }

    /// The key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Creates a Top-K keeping `k` items over `width x depth` counters decaying at
    /// `decay` (`TOPK.RESERVE`; RedisBloom's defaults are 8, 7 and 0.9). The key must
    /// not exist, whatever its type.
    ///
    /// ```
    /// # fn main() -> rocksketch::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let store = rocksketch::Store::open(dir.path(), Default::default())?;
    /// let top = store.topk("pages");
    /// top.reserve(2, 8, 7, 0.9)?;
    /// assert_eq!(top.add(&[b"/home".as_slice(), b"/home", b"/about"])?, vec![None, None, None]);
    /// assert_eq!(top.list()?[0], (b"/home".to_vec(), 2));
    /// # Ok(()) }
    /// ```
    pub fn reserve(&self, k: u64, width: u64, depth: u64, decay: f64) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        if guard.meta()?.is_some() {
            return Err(TopKError::KeyAlreadyExists.into());
        }
        let fits = |v: u64, err: TopKError| {
            u32::try_from(v)
                .ok()
                .filter(|v| *v > 0)
                .ok_or(Error::TopK(err))
        };
        let k = fits(k, TopKError::InvalidK)?;
        let width = fits(width, TopKError::InvalidWidth)?;
        let depth = fits(depth, TopKError::InvalidDepth)?;
        if !(decay > 0.0 && decay <= 1.0) {
            return Err(TopKError::InvalidDecay.into());
        }
        let shape = Shape::new(k, width, depth, decay).ok_or(TopKError::InsufficientMemory)?;
        let meta = guard.new_meta(Params::TopK(shape))?;
        let mut batch = self.store.batch()?;
        batch.put_page(self.page_key(&meta), TopKPage::new(shape).encode());
        guard.put_meta(meta, batch)
    }

    /// Adds each item once (`TOPK.ADD`); per item, the item it expelled from the top
    /// list, if any.
    pub fn add<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Vec<Option<Vec<u8>>>> {
        let pairs: Vec<(&[u8], u32)> = items.iter().map(|i| (i.as_ref(), 1)).collect();
        self.incr_by(&pairs)
    }

    /// Adds each item `increment` times (`TOPK.INCRBY`, increments up to 100 000); per
    /// pair, the item it expelled, if any. One lock, one read, one operand.
    pub fn incr_by(&self, pairs: &[(&[u8], u32)]) -> Result<Vec<Option<Vec<u8>>>> {
        let operand = encode(pairs)?;
        let guard = self.store.lock(self.ns, &self.key);
        let page_key = self.layout(&guard)?;
        let expelled = {
            let page = self.read_page(&page_key)?;
            let top = page.as_topk().ok_or_else(|| wrong_kind(&self.key, WHAT))?;
            let mut sketch = top.overlay(pairs.len());
            pairs.iter().map(|(item, n)| sketch.add(item, *n)).collect()
        };
        // The page read is dropped first, so the cache applies the operand in place.
        let mut batch = self.store.batch()?;
        batch.merge_page(page_key, operand);
        self.store.write(batch)?;
        Ok(expelled)
    }

    /// Adds the pairs blindly: one operand, no read, no reply (the library's fast path).
    pub fn add_blind(&self, pairs: &[(&[u8], u32)]) -> Result<()> {
        let operand = encode(pairs)?;
        let guard = self.store.share(self.ns, &self.key);
        let page_key = self.layout(&guard)?;
        let mut batch = self.store.batch()?;
        batch.merge_page(page_key, operand);
        self.store.write(batch)
    }

    /// Whether each item is in the top list (`TOPK.QUERY`).
    pub fn query<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Vec<bool>> {
        self.read(|top| items.iter().map(|i| top.query(i.as_ref())).collect())
    }

    /// Each item's estimated count (`TOPK.COUNT`).
    pub fn count<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Vec<u32>> {
        self.read(|top| items.iter().map(|i| top.count(i.as_ref())).collect())
    }

    /// The top list, largest count first (`TOPK.LIST`): items as RedisBloom replies with
    /// them (cut at a NUL byte) and their counts.
    pub fn list(&self) -> Result<Vec<(Vec<u8>, u32)>> {
        self.read(|top| {
            top.list()
                .into_iter()
                .map(|(item, count)| (item.to_vec(), count))
                .collect()
        })
    }

    /// `k`, width, depth and decay (`TOPK.INFO`).
    pub fn info(&self) -> Result<Shape> {
        let guard = self.store.share(self.ns, &self.key);
        Ok(self.checked(&guard)?.1)
    }

    fn read<T>(&self, answer: impl FnOnce(&TopKPage) -> T) -> Result<T> {
        let guard = self.store.share(self.ns, &self.key);
        let page_key = self.layout(&guard)?;
        let page = self.read_page(&page_key)?;
        let top = page.as_topk().ok_or_else(|| wrong_kind(&self.key, WHAT))?;
        Ok(answer(top))
    }

    fn read_page(&self, page_key: &[u8]) -> Result<Arc<Page>> {
        self.store
            .read_pages(&self.key, WHAT, &[page_key.to_vec()])?
            .pop()
            .flatten()
            .ok_or_else(|| wrong_kind(&self.key, WHAT))
    }

    /// This key's page key, checking it holds a Top-K.
    fn layout(&self, guard: &KeyGuard) -> Result<Vec<u8>> {
        Ok(self.page_key(&self.checked(guard)?.0))
    }

    /// This key's metadata and shape, or the error for a missing key or another type.
    fn checked(&self, guard: &KeyGuard) -> Result<(Meta, Shape)> {
        match guard.meta()? {
            None => Err(TopKError::KeyDoesNotExist.into()),
            Some(meta) => match meta.params {
                Params::TopK(shape) => Ok((meta, shape)),
                _ => Err(Error::WrongType),
            },
        }
    }

    fn page_key(&self, meta: &Meta) -> Vec<u8> {
        keys::page_key(
            &keys::version_prefix(self.ns, &self.key, meta.version),
            0,
            0,
        )
    }
}

/// The operand of `pairs`, or the error for an item or increment past the limits.
fn encode(pairs: &[(&[u8], u32)]) -> Result<Vec<u8>> {
    if pairs.iter().any(|(item, _)| item.len() > MAX_ITEM_BYTES) {
        return Err(TopKError::ItemTooLong.into());
    }
    ops::encode(pairs.iter().copied()).ok_or_else(|| TopKError::BadIncrement.into())
}
