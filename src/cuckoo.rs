//! Cuckoo filters on blind merges: page-local inserts, kick-outs inside the merge operator.
//!
//! A filter is a chain of sub-filters (RedisBloom's layout): sub-filter `i` has
//! `buckets × expansion^i` buckets of `bucket_size` slots. Each sub-filter is cut into
//! pages of a power-of-two number of buckets, and an item's page, its first bucket and
//! its fingerprint all come from one 64-bit MurmurHash64A of the item (seed 0, as
//! RedisBloom): `i = hash mod buckets`, page `i / page_buckets`, bucket `i mod
//! page_buckets`, fingerprint `hash mod 255 + 1` (8 bits, RedisBloom's) or `hash mod
//! 65535 + 1` (16 bits). The alternate bucket is taken inside the page (see
//! [`rocksketch_merge::cuckoo`]), so an add is one operand, `insert(bucket, fp)`, and the
//! merge operator does the rest, kick-outs included; nothing inserted is ever lost.
//!
//! The chain grows when the newest sub-filter's item count reaches its load target (a
//! share of its slots that page-local cuckoo hashing reaches without stashing); the
//! writer decides from an in-memory count, never from pages. Counts per sub-filter and
//! the number of deletes live in the key's tally page.

use crate::chain::{self as tally, ChainCounts};
use crate::error::{CuckooError, Error, Result};
use crate::fast::FastMap;
use crate::keys;
use crate::meta::{CuckooParams, KeyType, Meta, Params};
use crate::store::{KeyGuard, Store};
use crate::window::Window;
use rocksketch_merge::cuckoo::{FpOp, FpOps};
use rocksketch_merge::layout::{self, cuckoo::CuckooChain, cuckoo::CuckooSub as Sub};
use rocksketch_merge::Page;
use std::sync::Arc;

mod add_nx;
#[cfg(feature = "baselines")]
mod baseline;
mod dump;
mod options;
mod pages;
mod read;
mod write;

pub use options::CuckooOptions;
use options::{cuckoo_params, validate, validate_stored};

/// RedisBloom's defaults for a filter created by `CF.ADD`.
pub const DEFAULT_CAPACITY: u64 = 1024;
/// RedisBloom's fingerprints per bucket.
pub const DEFAULT_BUCKET_SIZE: u8 = 2;
/// RedisBloom's most kick-outs an insert tries.
pub const DEFAULT_MAX_ITERATIONS: u16 = 20;
/// RedisBloom's growth factor for each next sub-filter.
pub const DEFAULT_EXPANSION: u16 = 1;
pub use rocksketch_merge::layout::cuckoo::{MAX_CAPACITY, MAX_EXPANSION, MAX_FILTERS};

/// `CF.INFO`'s fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooInfo {
    /// RedisBloom's memory accounting for the filter (its structs and a byte per slot),
    /// not the bytes this store keeps.
    pub size: u64,
    /// Buckets of the first sub-filter.
    pub buckets: u64,
    /// Sub-filters in the chain.
    pub filters: u32,
    /// Items held now (inserts less deletes).
    pub inserted: u64,
    /// Items deleted.
    pub deleted: u64,
    /// Fingerprints per bucket.
    pub bucket_size: u8,
    /// Growth factor of each next sub-filter.
    pub expansion: u16,
    /// Most kick-outs an insert tries.
    pub max_iterations: u16,
}

/// What shapes the sub-filters of a filter with these parameters.
fn chain(params: &CuckooParams) -> CuckooChain {
    CuckooChain {
        buckets: params.buckets,
        bucket_size: params.bucket_size,
        fp_bits: params.fp_bits,
        expansion: params.expansion,
        page_buckets: params.page_buckets,
    }
}

/// The shape of sub-filter `index`.
fn sub_of(params: &CuckooParams, index: u32) -> Result<Sub> {
    chain(params)
        .sub(index)
        .map_err(Error::encode("a sub-filter's shape"))
}

/// The layouts of a chain's sub-filters, and pages keyed by (sub-filter, page).
type ItemPages = (Vec<Sub>, FastMap<(u32, u32), Arc<Page>>);

/// An item's hash and fingerprint.
#[derive(Debug, Clone, Copy)]
struct Hashed {
    h: u64,
    fp: u16,
}

/// [`hashed`] of each item.
fn hash_all<I: AsRef<[u8]>>(items: &[I], fp_bits: u8) -> Vec<Hashed> {
    items.iter().map(|i| hashed(i.as_ref(), fp_bits)).collect()
}

fn hashed(item: &[u8], fp_bits: u8) -> Hashed {
    let (h, fp) = layout::cuckoo::hash(item, fp_bits);
    Hashed { h, fp }
}

/// A handle on the cuckoo filter at one key. Creating the handle reads nothing.
pub struct CuckooFilter {
    store: Store,
    ns: u16,
    key: Vec<u8>,
}

handle_constructors!(cuckoo, CuckooFilter, "cuckoo filter");

impl CuckooFilter {
    pub(crate) fn new(store: Store, ns: u16, key: Vec<u8>) -> CuckooFilter {
        CuckooFilter { store, ns, key }
    }

    /// Creates a filter (`CF.RESERVE`). Checks the options as RedisBloom does; the
    /// caller parses them.
    pub fn reserve(&self, options: CuckooOptions) -> Result<()> {
        let params = validate(options, self.store.page_cells() * 4)?;
        let guard = self.store.lock(self.ns, &self.key);
        // A key of another type is WRONGTYPE, as RedisBloom answers.
        if guard.typed_meta(KeyType::Cuckoo)?.is_some() {
            return Err(CuckooError::ItemExists.into());
        }
        guard.create(Params::Cuckoo(params)).map(|_| ())
    }

    /// Creates a filter over a sliding window of the last `window.ms` milliseconds
    /// (`CF.RESERVE ... WINDOW ms [SLICES g]`): each generation is a chain of its own
    /// sized for `capacity × slice_ms / ms` items, what one slice of the window sees at
    /// a steady rate (growing as any chain does when it takes more). A cuckoo filter
    /// has no error to divide: its false-positive rate, `2 × bucket_size / 2^fp_bits`
    /// per generation at most, is paid once per live generation a lookup asks.
    pub fn reserve_windowed(&self, options: CuckooOptions, window: Window) -> Result<()> {
        // The capacity asked is checked as is; each generation's is a share of it.
        validate(options, self.store.page_cells() * 4)?;
        let per_slice = (u128::from(options.capacity) * u128::from(window.slice_ms()))
            .div_ceil(u128::from(window.ms)) as u64;
        let generation = CuckooOptions {
            capacity: per_slice.max(1),
            ..options
        };
        let params = validate(generation, self.store.page_cells() * 4)?;
        let guard = self.store.lock(self.ns, &self.key);
        if guard.typed_meta(KeyType::Cuckoo)?.is_some() {
            return Err(CuckooError::ItemExists.into());
        }
        guard
            .create_windowed(Params::Cuckoo(params), Some(window))
            .map(|_| ())
    }

    /// Adds an item (`CF.ADD`), creating the filter with RedisBloom's defaults if the key
    /// is missing. Blind: one insert operand and a tally delta, no read of any page;
    /// adding an item twice keeps two copies, as RedisBloom does.
    pub fn add(&self, item: impl AsRef<[u8]>) -> Result<()> {
        if self.add_batch(std::slice::from_ref(&item))?.is_some() {
            return Ok(());
        }
        // The newest sub-filter is at its target: the locked path grows the chain.
        let guard = self.store.lock(self.ns, &self.key);
        let meta = self.meta_or_create(&guard)?;
        let params = cuckoo_params(&meta)?;
        self.insert_locked(&guard, meta, hashed(item.as_ref(), params.fp_bits))
    }

    /// [`CuckooFilter::add`] for many items: one write batch with one operand per page
    /// touched, unless the newest sub-filter would pass its target, when they go one by
    /// one (the locked path grows the chain). Returns how many were added, and the
    /// error that stopped the rest, if any.
    pub fn add_many<I: AsRef<[u8]>>(&self, items: &[I]) -> (usize, Option<Error>) {
        match self.add_batch(items) {
            Ok(Some(())) => (items.len(), None),
            Ok(None) => {
                for (done, item) in items.iter().enumerate() {
                    if let Err(err) = self.add(item) {
                        return (done, Some(err));
                    }
                }
                (items.len(), None)
            }
            Err(err) => (0, Some(err)),
        }
    }

    /// The one-batch path of [`CuckooFilter::add_many`]; `None` (nothing written) when
    /// the items must go one by one.
    /// Runs under the key's shared lock (the exclusive one to create a missing filter).
    fn add_batch<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Option<()>> {
        let shared = self.store.share(self.ns, &self.key);
        // A missing filter is created in the same batch as the adds (a crash between
        // two writes would leave an empty filter that no add made).
        let (guard, meta, created) = match shared.typed_meta(KeyType::Cuckoo)? {
            Some(meta) => (shared, meta, false),
            None => {
                drop(shared);
                let guard = self.store.lock(self.ns, &self.key);
                match guard.typed_meta(KeyType::Cuckoo)? {
                    Some(meta) => (guard, meta, false),
                    None => {
                        let meta = guard.new_meta(Params::Cuckoo(self.default_params()?))?;
                        (guard, meta, true)
                    }
                }
            }
        };
        let params = cuckoo_params(&meta)?;
        let prefix = guard.prefixes(&meta).write().to_vec();
        let newest = params.filters - 1;
        let sub = sub_of(&params, newest)?;
        let n = items.len() as u64;
        let Some(room) = self
            .store
            .reserve_count(&self.key, &prefix, newest, n, sub.target)?
        else {
            return Ok(None);
        };
        let hashed: Vec<Hashed> = items
            .iter()
            .map(|i| hashed(i.as_ref(), params.fp_bits))
            .collect();
        let batch = self.insert_batch(&guard, &prefix, &params, newest, &hashed)?;
        match created {
            true => guard.put_meta(meta, batch)?,
            false => self.store.write(batch)?,
        }
        room.written();
        Ok(Some(()))
    }

    /// Adds an item only if it is not present (`CF.ADDNX`); whether it was added.
    ///
    /// Concurrent calls on one filter are combined: they run as one
    /// [`CuckooFilter::add_nx_many`], answered as if run one after another.
    pub fn add_nx(&self, item: impl AsRef<[u8]>) -> Result<bool> {
        let store = &self.store;
        store.combiners().cf_add_nx.run(
            self.ns,
            &self.key,
            item.as_ref().to_vec(),
            |ns, key, items| {
                let filter = CuckooFilter::new(store.clone(), ns, key.to_vec());
                let (added, error) = filter.add_nx_many(items);
                added.into_iter().map(Ok).chain(error.map(Err)).collect()
            },
        )
    }

    /// [`CuckooFilter::add_nx`] alone: under the key's lock, reads the item's pages and
    /// inserts it if absent (growing the chain if the newest sub-filter is full).
    fn add_nx_alone(&self, item: &[u8]) -> Result<bool> {
        let guard = self.store.lock(self.ns, &self.key);
        let meta = self.meta_or_create(&guard)?;
        let params = cuckoo_params(&meta)?;
        let h = hashed(item, params.fp_bits);
        if self.counts_in(&guard.prefixes(&meta).live, &params, &[h])?[0] > 0 {
            guard.write_pending()?;
            return Ok(false);
        }
        self.insert_locked(&guard, meta, h)?;
        Ok(true)
    }

    /// `CF.INSERT` / `CF.INSERTNX`: adds each item (only if absent with `nx`), creating
    /// a missing filter with `capacity` (RedisBloom's default if `None`) unless
    /// `nocreate`, which answers `ERR not found`. Answers 1 (added), 0 (present, `nx`)
    /// or -1 (no room: the filter cannot grow) per item.
    pub fn insert<I: AsRef<[u8]>>(
        &self,
        items: &[I],
        capacity: Option<u64>,
        nocreate: bool,
        nx: bool,
    ) -> Result<Vec<i64>> {
        let mut answers = Vec::with_capacity(items.len());
        let mut rest = items;
        if self.store.meta(self.ns, &self.key)?.is_none() {
            if nocreate {
                return Err(CuckooError::NotFound.into());
            }
            let options = CuckooOptions {
                capacity: capacity.unwrap_or(DEFAULT_CAPACITY),
                ..CuckooOptions::default()
            };
            let params = validate(options, self.store.page_cells() * 4)?;
            // Created along with the first item's insert, in one batch: a refused
            // insert creates nothing. (Another client may have created it in between:
            // then every item goes to theirs, as Redis would.)
            if let Some((first, tail)) = items.split_first() {
                let guard = self.store.lock(self.ns, &self.key);
                if guard.typed_meta(KeyType::Cuckoo)?.is_none() {
                    let meta = guard.create_with_first_write(Params::Cuckoo(params))?;
                    let h = hashed(first.as_ref(), params.fp_bits);
                    self.insert_locked(&guard, meta, h)?;
                    answers.push(1);
                    rest = tail;
                }
            }
        }
        for item in rest {
            let added = if nx {
                self.add_nx(item).map(i64::from)
            } else {
                self.add(item).map(|()| 1)
            };
            answers.push(match added {
                Err(Error::Cuckoo(CuckooError::FilterFull | CuckooError::MaximumExpansions)) => -1,
                other => other?,
            });
        }
        Ok(answers)
    }

    /// Deletes one copy of an item (`CF.DEL`): only if it is present, from the newest
    /// sub-filter that holds it (over a window: of the newest live generation that
    /// holds it, undoing the latest add). `Not found` for a missing key.
    pub fn delete(&self, item: impl AsRef<[u8]>) -> Result<bool> {
        let guard = self.store.lock(self.ns, &self.key);
        let meta = guard
            .typed_meta(KeyType::Cuckoo)?
            .ok_or(CuckooError::DelNotFound)?;
        let params = cuckoo_params(&meta)?;
        let h = hashed(item.as_ref(), params.fp_bits);
        let prefixes = guard.prefixes(&meta);
        let subs = (0..params.filters).rev();
        for (prefix, sub_index) in prefixes
            .live
            .iter()
            .flat_map(|p| subs.clone().map(move |i| (p, i)))
        {
            let sub = sub_of(&params, sub_index)?;
            let (page, bucket) = sub.locate(h.h);
            let stored = self.read_page(prefix, sub_index, page, &sub)?;
            let Some(stored) = stored.as_deref().and_then(Page::as_fp) else {
                continue;
            };
            if !stored.contains(bucket, h.fp) {
                continue;
            }
            let op = FpOps::new(sub.shape, vec![FpOp::Delete { bucket, fp: h.fp }])
                .map_err(Error::encode("a cuckoo delete"))?;
            let mut batch = self.store.batch()?;
            batch.merge_page(keys::page_key(prefix, sub_index as u16, page), op.encode());
            batch.merge_page(tally::page_key(prefix), tally::deleted_operand(sub_index));
            self.store.write(batch)?;
            self.store.count_changed(prefix, sub_index, -1);
            return Ok(true);
        }
        Ok(false)
    }

    // ---- internals ----

    /// The key's metadata, creating a filter with RedisBloom's defaults if the key is
    /// missing (as `CF.ADD` does), under the exclusive `guard`.
    /// The key is written with the first write made under `guard` (see
    /// [`KeyGuard::create_with_first_write`]): a refused add creates nothing.
    fn meta_or_create(&self, guard: &KeyGuard) -> Result<Meta> {
        match guard.typed_meta(KeyType::Cuckoo)? {
            Some(meta) => Ok(meta),
            None => guard.create_with_first_write(Params::Cuckoo(self.default_params()?)),
        }
    }

    /// RedisBloom's defaults, for a filter that an add creates.
    fn default_params(&self) -> Result<CuckooParams> {
        validate(CuckooOptions::default(), self.store.page_cells() * 4)
    }

    /// The metadata, parameters and version prefix of the existing filter `guard`
    /// locks; `ERR not found` for a missing key.
    fn existing(&self, guard: &KeyGuard) -> Result<(Meta, CuckooParams, Vec<u8>)> {
        let (meta, prefix) = guard.existing(KeyType::Cuckoo, CuckooError::NotFound)?;
        Ok((meta, cuckoo_params(&meta)?, prefix))
    }

    fn counts(&self, prefix: &[u8]) -> Result<ChainCounts> {
        Ok(ChainCounts::new(self.store.read_tally(&self.key, prefix)?))
    }
}

#[cfg(test)]
mod tests;
