//! Scalable Bloom filters: RedisBloom's sizing on blocked bit pages.
//!
//! A filter is a chain of sub-filters. Sub-filter `i` holds `capacity × expansion^i`
//! items at error `error / 2^(i+1)` (a non-scaling filter has one sub-filter at the full
//! error), with `-ln(error) / ln(2)^2` bits per item and `ceil(ln 2 × bits per item)`
//! hashes, as RedisBloom sizes them. Each sub-filter is cut into pages, and all of an
//! item's bits fall in one page (a blocked filter), so an add is one small operand: a
//! few bit positions. Items per sub-filter live in the key's tally page, one slot each.

use crate::chain::{self as tally, ChainCounts};
use crate::error::{BloomError, Error, Result};
use crate::keys;
use crate::meta::{BloomParams, KeyType, Meta, Params};
use crate::store::{KeyGuard, Store};
use crate::window::{Window, WindowInfo};
use rocksketch_merge::bits::BitDelta;
use std::collections::BTreeMap;

#[cfg(feature = "baselines")]
mod baseline;
mod create;
mod debug;
mod dump;
mod pages;
mod sizing;

use create::IfMissing;
pub use debug::SubFilterInfo;
use pages::{add_operands, Fresh, Probes};
use sizing::{chain, hashes, sub_of, validate, validate_stored, Sub};

/// RedisBloom's defaults for a filter created by `BF.ADD`.
pub const DEFAULT_ERROR: f64 = 0.01;
/// RedisBloom's capacity for a filter `BF.ADD` creates.
pub const DEFAULT_CAPACITY: u64 = 100;
/// RedisBloom's growth factor for each next sub-filter.
pub const DEFAULT_EXPANSION: u32 = 2;
pub use rocksketch_merge::layout::bloom::{MAX_CAPACITY, MAX_ERROR, MAX_EXPANSION, MAX_FILTERS};

/// `BF.INFO`'s fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BloomInfo {
    /// Items the whole chain holds before it grows again.
    pub capacity: u64,
    /// RedisBloom's memory accounting for the chain (its `BF.INFO` `Size`: its
    /// structs and its sub-filters' bitmaps as RedisBloom sizes them); this store's own
    /// bytes on disk are `rocksketch inspect`'s.
    pub size: u64,
    /// Sub-filters in the chain.
    pub filters: u32,
    /// Items added (what `BF.CARD` answers).
    pub items: u64,
    /// `None` for a non-scaling filter.
    pub expansion: Option<u32>,
}

/// A handle on the Bloom filter at one key. Creating the handle reads nothing.
pub struct BloomFilter {
    store: Store,
    ns: u16,
    key: Vec<u8>,
}

handle_constructors!(bloom, BloomFilter, "Bloom filter");

impl BloomFilter {
    pub(crate) fn new(store: Store, ns: u16, key: Vec<u8>) -> BloomFilter {
        BloomFilter { store, ns, key }
    }

    /// Creates a filter (`BF.RESERVE`): `expansion` 0 makes it non-scaling. Error rates
    /// above 0.25 are lowered to 0.25, as RedisBloom does.
    pub fn reserve(&self, error: f64, capacity: u64, expansion: u32) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        // A key of another type is WRONGTYPE, as RedisBloom answers; an existing key is
        // refused before the parameters are sized, as RedisBloom creates the filter
        // only for a missing key.
        if guard.typed_meta(KeyType::Bloom)?.is_some() {
            return Err(BloomError::ItemExists.into());
        }
        let params = validate(error, capacity, expansion)?;
        self.create(&guard, params, None).map(|_| ())
    }

    /// Creates a filter over a sliding window of the last `window.ms` milliseconds
    /// (`BF.RESERVE ... WINDOW ms [SLICES g]`): each generation is a chain of its own
    /// holding `capacity × slice_ms / ms` items (what one slice of the window sees at a
    /// steady rate) at `error / L`, `L` being the most generations a read combines, so
    /// a lookup that asks every live generation stays within `error`. A generation that
    /// takes more grows as any chain does (a non-scaling one refuses).
    pub fn reserve_windowed(
        &self,
        error: f64,
        capacity: u64,
        expansion: u32,
        window: Window,
    ) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        if guard.typed_meta(KeyType::Bloom)?.is_some() {
            return Err(BloomError::ItemExists.into());
        }
        let asked = validate(error, capacity, expansion)?;
        let per_slice = (u128::from(capacity) * u128::from(window.slice_ms()))
            .div_ceil(u128::from(window.ms)) as u64;
        let params = validate(
            asked.error / window.max_live() as f64,
            per_slice.max(1),
            expansion,
        )?;
        self.create(&guard, params, Some(window)).map(|_| ())
    }

    /// Adds an item (`BF.ADD`), creating the filter with RedisBloom's defaults if the key
    /// is missing. Returns whether the item was new; a present item (or a false
    /// positive) writes nothing.
    ///
    /// Concurrent adds to one filter are combined: they run as one [`BloomFilter::madd`]
    /// (one lock, one read, one write batch), answered as if run one after another.
    pub fn add(&self, item: impl AsRef<[u8]>) -> Result<bool> {
        let store = &self.store;
        store.combiners().bf_add.run(
            self.ns,
            &self.key,
            item.as_ref().to_vec(),
            |ns, key, items| {
                let (added, error) = BloomFilter::new(store.clone(), ns, key.to_vec()).madd(items);
                added.into_iter().map(Ok).chain(error.map(Err)).collect()
            },
        )
    }

    /// Adds each item in turn (`BF.MADD`): whether each was new; an error stops the run
    /// and is returned with the answers before it (whose adds are kept). A failed write
    /// answers nothing: no add of the call was made.
    ///
    /// Under the key's lock: one read of every page the items fall in and of the tally,
    /// the items applied in order to those pages in memory (so a repeated item reads as
    /// present), then one write batch: an operand per page touched, a tally delta, and
    /// the metadata if the chain grew.
    pub fn madd<I: AsRef<[u8]>>(&self, items: &[I]) -> (Vec<bool>, Option<Error>) {
        self.madd_creating(items, IfMissing::Defaults)
    }

    /// [`BloomFilter::madd`], doing what `if_missing` says to a missing filter (a
    /// filter it creates is written in the adds' batch).
    fn madd_creating<I: AsRef<[u8]>>(
        &self,
        items: &[I],
        if_missing: IfMissing,
    ) -> (Vec<bool>, Option<Error>) {
        let mut added = Vec::with_capacity(items.len());
        match self.add_locked(items, &mut added, if_missing) {
            Ok(()) => (added, None),
            Err(err) => (added, Some(err)),
        }
    }

    fn add_locked<I: AsRef<[u8]>>(
        &self,
        items: &[I],
        answers: &mut Vec<bool>,
        if_missing: IfMissing,
    ) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let meta = self.meta_or_create_with(&guard, if_missing)?;
        let mut params = bloom_params(&meta)?;
        let stored_filters = params.filters;
        let prefixes = guard.prefixes(&meta);
        let prefix = prefixes.write().to_vec();
        let hashed: Vec<(u64, u64)> = items.iter().map(|i| hashes(i.as_ref())).collect();
        let probes = Probes::new(&params, &hashed);
        // The probed bits as read, the pages let go at once: the write applies its bits
        // to the cached pages in place, which would copy a page still shared here.
        let read = probes.read_all(&self.read_item_pages(&prefix, &probes)?);
        // A windowed filter: the older live generations answer whether an item is new,
        // but an item they hold is still written to the current one, which keeps it
        // for a whole window from now.
        let older = prefixes
            .older()
            .iter()
            .map(|p| Ok(probes.read_all(&self.read_item_pages(p, &probes)?)))
            .collect::<Result<Vec<Vec<bool>>>>()?;
        let mut counts = self.counts(&prefix)?.per_sub();
        let mut added_to = vec![0u64; MAX_FILTERS as usize];
        // The bits this batch sets, by (sub-filter, page): the operands it writes, and
        // what a later item of the batch reads along with the pages (which stay as
        // read: the cache shares them). A page holds a few of a batch's items, so
        // its list is short.
        let mut new_bits: Fresh = BTreeMap::new();
        // The answers stand only once the write has succeeded.
        let mut added = Vec::with_capacity(items.len());
        let mut outcome = Ok(());
        for (n, h) in hashed.iter().enumerate() {
            if probes.contains_read(&read, &new_bits, n)
                || in_grown(&probes, &params, &new_bits, *h)
            {
                added.push(false);
                continue;
            }
            let seen = older
                .iter()
                .any(|read| probes.contains_read(read, &Fresh::new(), n));
            let mut newest = params.filters - 1;
            if counts[newest as usize] >= sub_of(&params, newest).capacity {
                if params.expansion == 0 {
                    outcome = Err(BloomError::NonScalingFull.into());
                    break;
                }
                if params.filters >= MAX_FILTERS {
                    outcome = Err(BloomError::MaximumExpansions.into());
                    break;
                }
                params.filters += 1;
                newest += 1;
            }
            let sub = sub_of(&params, newest);
            let (page, bits) = sub.locate(*h);
            new_bits.entry((newest, page)).or_default().extend(bits);
            counts[newest as usize] += 1;
            added_to[newest as usize] += 1;
            added.push(!seen);
        }
        let grown = (params.filters > stored_filters).then_some(Meta {
            params: Params::Bloom(params),
            ..meta
        });
        self.write_adds(&guard, &prefix, &params, grown, new_bits, &added_to)?;
        answers.extend(added);
        outcome
    }

    /// Writes the bits the adds set (one operand per page), the tally delta, and the
    /// grown metadata, in one batch; then advances the blind writers' count hints.
    fn write_adds(
        &self,
        guard: &KeyGuard,
        prefix: &[u8],
        params: &BloomParams,
        grown: Option<Meta>,
        new_bits: Fresh,
        added_to: &[u64],
    ) -> Result<()> {
        if new_bits.is_empty() {
            return guard.write_pending();
        }
        let mut batch = guard.batch()?;
        for ((i, page), bits) in new_bits {
            let delta = BitDelta::sparse(sub_of(params, i).page_bits, bits)
                .map_err(Error::encode("a bit delta"))?;
            batch.merge_page(keys::page_key(prefix, i as u16, page), delta.encode());
        }
        let added = tally::added_per_sub_operand(&added_to[..params.filters as usize]);
        batch.merge_page(tally::page_key(prefix), added);
        match grown {
            Some(meta) => guard.put_meta(meta, batch)?,
            None => self.store.write(batch)?,
        }
        for (i, n) in added_to.iter().enumerate().filter(|(_, n)| **n > 0) {
            self.store.count_changed(prefix, i as u32, *n as i64);
        }
        Ok(())
    }

    /// Adds items without answering whether each was new: one write batch of bit
    /// operands (one per page) and a tally delta, and no read of any bit page. The
    /// chain's growth is decided from an in-memory count of the newest sub-filter (read
    /// from the tally page once per process); when that sub-filter is full, the growth
    /// itself takes the key's lock. Items are
    /// counted as added whether or not they were present, since telling would need a
    /// read, so `card` is an upper bound after blind adds of repeated items.
    pub fn add_blind<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<()> {
        if self.try_add_blind(items)? {
            return Ok(());
        }
        // Full (or about to be): the locked path grows the chain, item by item.
        for item in items {
            self.add(item)?;
        }
        Ok(())
    }

    /// The blind write of [`BloomFilter::add_blind`], under the key's shared lock (the
    /// exclusive one to create a missing filter); `false` (nothing written) when the
    /// newest sub-filter would pass its capacity.
    fn try_add_blind<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<bool> {
        let shared = self.store.share(self.ns, &self.key);
        let (guard, meta) = match shared.typed_meta(KeyType::Bloom)? {
            Some(meta) => (shared, meta),
            None => {
                drop(shared);
                let guard = self.store.lock(self.ns, &self.key);
                let meta = self.meta_or_create(&guard)?;
                (guard, meta)
            }
        };
        let params = bloom_params(&meta)?;
        let prefixes = guard.prefixes(&meta);
        let prefix = prefixes.write();
        let newest = params.filters - 1;
        let limit = sub_of(&params, newest).capacity;
        let n = items.len() as u64;
        let Some(room) = self
            .store
            .reserve_count(&self.key, prefix, newest, n, limit)?
        else {
            return Ok(false);
        };
        let mut batch = guard.batch()?;
        for (key, operand) in add_operands(prefix, &params, items)? {
            batch.merge_page(key, operand);
        }
        self.store.write(batch)?;
        room.written();
        Ok(true)
    }

    /// `BF.INSERT`: adds items like [`BloomFilter::madd`], creating a missing filter
    /// with `create`'s parameters (error, capacity, expansion), or answering
    /// `ERR not found` when `create` is `None` (NOCREATE).
    pub fn insert<I: AsRef<[u8]>>(
        &self,
        items: &[I],
        create: Option<(f64, u64, u32)>,
    ) -> Result<(Vec<bool>, Option<Error>)> {
        // A missing filter is created in the adds' batch: a refused add creates nothing.
        // Its parameters are checked only if it is missing, as before.
        let missing = self.store.meta(self.ns, &self.key)?.is_none();
        let if_missing = match (create, missing) {
            (None, true) => return Err(BloomError::NotFound.into()),
            (None, false) => IfMissing::NotFound,
            (Some((error, capacity, expansion)), true) => {
                IfMissing::Create(validate(error, capacity, expansion)?)
            }
            // Deleted in between: created as asked if the parameters hold.
            (Some((error, capacity, expansion)), false) => {
                validate(error, capacity, expansion).map_or(IfMissing::NotFound, IfMissing::Create)
            }
        };
        Ok(self.madd_creating(items, if_missing))
    }

    /// Whether the item may be present (`BF.EXISTS`); false for a missing key.
    pub fn exists(&self, item: impl AsRef<[u8]>) -> Result<bool> {
        Ok(self.mexists(&[item])?[0])
    }

    /// [`BloomFilter::exists`] for many items (`BF.MEXISTS`).
    pub fn mexists<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Vec<bool>> {
        let guard = self.store.share(self.ns, &self.key);
        let Some(meta) = guard.typed_meta(KeyType::Bloom)? else {
            return Ok(vec![false; items.len()]);
        };
        let params = bloom_params(&meta)?;
        let hashed: Vec<(u64, u64)> = items.iter().map(|i| hashes(i.as_ref())).collect();
        let probes = Probes::new(&params, &hashed);
        let mut found = vec![false; items.len()];
        // Over a window, each live generation in turn, until every item is found.
        for prefix in &guard.prefixes(&meta).live {
            let pages = self.read_item_pages(prefix, &probes)?;
            let read = probes.read_all(&pages);
            for (n, found) in found.iter_mut().enumerate() {
                *found = *found || probes.contains_read(&read, &Fresh::new(), n);
            }
            if found.iter().all(|f| *f) {
                break;
            }
        }
        Ok(found)
    }

    /// Items added (`BF.CARD`); 0 for a missing key.
    pub fn card(&self) -> Result<u64> {
        let guard = self.store.share(self.ns, &self.key);
        match guard.typed_meta(KeyType::Bloom)? {
            None => Ok(0),
            Some(meta) => self.card_of(&meta),
        }
    }

    /// Items added to the key version `meta` names (over a window: to its live
    /// generations); its lock must be held.
    fn card_of(&self, meta: &Meta) -> Result<u64> {
        let mut items = 0u64;
        for count in self.generation_items(meta)? {
            items = items.wrapping_add(count);
        }
        Ok(items)
    }

    /// Items added to each live generation, the current one first (one figure, the
    /// chain's, without a window).
    fn generation_items(&self, meta: &Meta) -> Result<Vec<u64>> {
        let prefixes = crate::window::Prefixes::of(
            keys::version_prefix(self.ns, &self.key, meta.version),
            meta.window,
            self.store.clock().now_ms(),
        );
        prefixes
            .live
            .iter()
            .map(|prefix| Ok(self.counts(prefix)?.items(MAX_FILTERS)))
            .collect()
    }

    /// The window and each live generation's items (`BF.INFO`'s window fields); `None`
    /// for a filter without a window, `ERR not found` for a missing key.
    pub fn window_info(&self) -> Result<Option<WindowInfo>> {
        let guard = self.store.share(self.ns, &self.key);
        let meta = guard
            .typed_meta(KeyType::Bloom)?
            .ok_or(BloomError::NotFound)?;
        let Some(window) = meta.window else {
            return Ok(None);
        };
        let fill = self.generation_items(&meta)?;
        Ok(Some(WindowInfo::new(
            window,
            self.store.clock().now_ms(),
            fill,
        )))
    }

    /// `BF.INFO`'s fields; `ERR not found` for a missing key.
    pub fn info(&self) -> Result<BloomInfo> {
        let guard = self.store.share(self.ns, &self.key);
        let meta = guard
            .typed_meta(KeyType::Bloom)?
            .ok_or(BloomError::NotFound)?;
        let params = bloom_params(&meta)?;
        let subs: Vec<Sub> = (0..params.filters).map(|i| sub_of(&params, i)).collect();
        Ok(BloomInfo {
            capacity: subs.iter().map(|s| s.capacity).sum(),
            size: sizing::chain(&params).redisbloom_size(params.filters),
            filters: params.filters,
            items: self.card_of(&meta)?,
            expansion: (params.expansion != 0).then_some(params.expansion),
        })
    }

    fn counts(&self, prefix: &[u8]) -> Result<ChainCounts> {
        Ok(ChainCounts::new(self.store.read_tally(&self.key, prefix)?))
    }
}

impl BloomFilter {
    /// The metadata, parameters and version prefix of the existing filter `guard`
    /// locks; `ERR not found` for a missing key.
    fn existing(&self, guard: &KeyGuard) -> Result<(Meta, BloomParams, Vec<u8>)> {
        let (meta, prefix) = guard.existing(KeyType::Bloom, BloomError::NotFound)?;
        Ok((meta, bloom_params(&meta)?, prefix))
    }
}

/// Whether an item is in a sub-filter this call added to the chain (past the probed
/// ones, so never read): only the call's own bits can be there.
fn in_grown(probes: &Probes, params: &BloomParams, fresh: &Fresh, h: (u64, u64)) -> bool {
    (probes.filters()..params.filters).any(|i| {
        let (page, bits) = sub_of(params, i).locate(h);
        let set = fresh.get(&(i, page)).map_or(&[][..], Vec::as_slice);
        bits.into_iter().all(|b| set.contains(&b))
    })
}

fn bloom_params(meta: &Meta) -> Result<BloomParams> {
    match meta.params {
        Params::Bloom(params) => Ok(params),
        Params::Cms(_)
        | Params::Cuckoo(_)
        | Params::TDigest(_)
        | Params::TopK(_)
        | Params::Ribbon(_)
        | Params::Hll => Err(Error::WrongType),
    }
}
