//! Ribbon filters: items staged by blind merges, sealed by builds into static,
//! solved generations (see [`rocksketch_merge::ribbon`] for the filter itself).
//!
//! Layout of a key version's pages:
//! - staging pages: sub-filter `STAGE_SUB`, page `epoch << 10 | h >> 54` (`STAGE_BITS`): a sorted set
//!   of the staged hashes, grown by blind operands;
//! - generation `g`'s shards: sub-filter `g`, page `h × shards[g] / 2^64`: one
//!   solved shard each, written whole by the build that made the generation;
//! - the tally page: slot 0 counts adds ever staged.
//!
//! A lookup reads one staging page per unsealed epoch (one, but while a build runs) and
//! one shard per generation, through the hot-page cache. See `ribbon/build.rs` for how a build
//! seals staged items without stopping adds or lookups, and without losing any if the
//! process dies part-way.

mod build;
mod dump;

use crate::error::{Error, Result, RibbonError};
use crate::fast::FastMap;
use crate::keys::{self, TALLY_SUB};
use crate::meta::{KeyType, Meta, Params, RibbonParams};
use crate::store::{wrong_kind, KeyGuard, Store};
use rocksketch_merge::ribbon::{item_hash, StageOps, StagePage};
use rocksketch_merge::tally::Tally;
use rocksketch_merge::Page;
use std::sync::Arc;

/// The error rate of a filter that `RIBBON.ADD` creates.
pub const DEFAULT_ERROR: f64 = 0.01;
/// Staged adds a key may hold between builds (repeats count): far below what its
/// staging pages can hold (`2^STAGE_BITS` × [`rocksketch_merge::ribbon::MAX_STAGED_PER_PAGE`]).
pub const MAX_STAGED: u64 = 1 << 25;
/// The sub-filter number of staging pages.
pub(crate) const STAGE_SUB: u16 = 255;
/// Staging pages per epoch are chosen by a hash's top `STAGE_BITS` bits.
pub(crate) const STAGE_BITS: u32 = 10;

/// `RIBBON.INFO`'s fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RibbonInfo {
    /// The false-positive rate it was reserved with.
    pub error: f64,
    /// Bits per result: `ceil(log2(1 / error))`.
    pub result_bits: u8,
    /// Builds that added items, each a generation of shards.
    pub generations: u8,
    /// Items sealed into generations.
    pub built: u64,
    /// Adds staged since the last build began (repeats count).
    pub staged: u64,
    /// Bytes of solved shard pages (headers included).
    pub bytes: u64,
}

/// A handle on the Ribbon filter at one key. Creating the handle reads nothing.
pub struct RibbonFilter {
    store: Store,
    ns: u16,
    key: Vec<u8>,
}

handle_constructors!(ribbon, RibbonFilter, "Ribbon filter");

impl RibbonFilter {
    pub(crate) fn new(store: Store, ns: u16, key: Vec<u8>) -> RibbonFilter {
        RibbonFilter { store, ns, key }
    }

    /// Creates a filter with false-positive rate `error` per generation (`RIBBON.RESERVE`).
    ///
    /// ```
    /// # fn main() -> rocksketch::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let store = rocksketch::Store::open(dir.path(), Default::default())?;
    /// let seen = store.ribbon("seen");
    /// seen.reserve(0.01)?;
    /// seen.add(&[b"a".as_slice(), b"b"])?;
    /// assert!(seen.exists(b"a")?); // staged: found exactly
    /// assert_eq!(seen.build()?, 2);
    /// assert!(seen.exists(b"b")? && !seen.exists(b"c")?);
    /// # Ok(()) }
    /// ```
    pub fn reserve(&self, error: f64) -> Result<()> {
        let params = validate(error)?;
        let guard = self.store.lock(self.ns, &self.key);
        if guard.meta()?.is_some() {
            return Err(RibbonError::KeyExists.into());
        }
        self.create(&guard, params).map(|_| ())
    }

    /// Stages items (`RIBBON.ADD`), creating the filter at [`DEFAULT_ERROR`] if the key
    /// is missing: one blind operand per staging page touched and a tally delta, in one
    /// batch; nothing is read. Returns the number of items staged.
    pub fn add<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<u64> {
        let shared = self.store.share(self.ns, &self.key);
        let (guard, meta) = match shared.typed_meta(KeyType::Ribbon)? {
            Some(meta) => (shared, meta),
            None => {
                drop(shared);
                let guard = self.store.lock(self.ns, &self.key);
                let meta = match guard.typed_meta(KeyType::Ribbon)? {
                    Some(meta) => meta,
                    // Written with the staged items: a refused add creates nothing.
                    None => {
                        guard.create_with_first_write(Params::Ribbon(validate(DEFAULT_ERROR)?))?
                    }
                };
                (guard, meta)
            }
        };
        let params = ribbon_params(&meta)?;
        let prefix = keys::version_prefix(self.ns, &self.key, meta.version);
        let n = items.len() as u64;
        // The count of adds bounds what is staged beyond the adds already sealed.
        let limit = MAX_STAGED.saturating_add(params.adds_sealed);
        let Some(room) = self.store.reserve_count(&self.key, &prefix, 0, n, limit)? else {
            return Err(RibbonError::TooManyStaged.into());
        };
        let mut hashes: Vec<u64> = items.iter().map(|i| item_hash(i.as_ref())).collect();
        hashes.sort_unstable();
        self.write_staged(&guard, &prefix, params.staging, &hashes)?;
        room.written();
        Ok(n)
    }

    /// Stages ascending `hashes` in `epoch` of the key version `prefix`: one operand per
    /// staging page they fall in and the tally delta, in one batch (the caller holds
    /// the key's lock and keeps the count hint).
    fn write_staged(
        &self,
        guard: &KeyGuard,
        prefix: &[u8],
        epoch: u32,
        hashes: &[u64],
    ) -> Result<()> {
        let mut batch = guard.batch()?;
        // A page keeps each hash once: repeats are dropped before the per-page limit
        // (140 000 copies of one item were refused as too many for a page), and the
        // tally still counts every add.
        let mut unique = hashes.to_vec();
        unique.dedup();
        for group in unique.chunk_by(|a, b| stage_page(*a) == stage_page(*b)) {
            let ops = StageOps::new(group.to_vec())
                .ok_or_else(|| Error::InvalidArgument("too many items in one call".to_owned()))?;
            batch.merge_page(stage_key(prefix, epoch, group[0]), ops.encode());
        }
        batch.merge_page(
            keys::page_key(prefix, TALLY_SUB, 0),
            Tally::new(vec![hashes.len() as u64]).encode_delta(),
        );
        self.store.write(batch)
    }

    /// Whether the item may be in the filter (`RIBBON.EXISTS`): staged (exactly) or in
    /// some generation (false positives at about `2^-r` per generation); false for a
    /// missing key.
    pub fn exists(&self, item: impl AsRef<[u8]>) -> Result<bool> {
        Ok(self.mexists(&[item])?[0])
    }

    /// [`RibbonFilter::exists`] for many items (`RIBBON.MEXISTS`).
    pub fn mexists<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Vec<bool>> {
        let guard = self.store.share(self.ns, &self.key);
        let Some(meta) = guard.typed_meta(KeyType::Ribbon)? else {
            return Ok(vec![false; items.len()]);
        };
        let params = ribbon_params(&meta)?;
        let prefix = keys::version_prefix(self.ns, &self.key, meta.version);
        let hashes: Vec<u64> = items.iter().map(|i| item_hash(i.as_ref())).collect();
        let epochs = params.sealed..=params.staging;
        let generations = params.generation_shards();
        let staged_at = |e: u32, h: u64| (STAGE_SUB, stage_page_number(e, h));
        let staged = self.read_set(
            &prefix,
            hashes
                .iter()
                .flat_map(|h| epochs.clone().map(move |e| staged_at(e, *h))),
            true,
        )?;
        let shard_at = |g: usize, shards: u16, h: u64| (g as u16, shard_of(h, shards));
        let shards = self.read_set(
            &prefix,
            hashes.iter().flat_map(|h| {
                let at = move |(g, shards): (usize, &u16)| shard_at(g, *shards, *h);
                generations.iter().enumerate().map(at)
            }),
            false,
        )?;
        let mut found = Vec::with_capacity(hashes.len());
        for h in &hashes {
            let mut hit = false;
            for e in epochs.clone() {
                if let Some(page) = staged.get(&staged_at(e, *h)) {
                    let page = page
                        .as_stage()
                        .ok_or_else(|| wrong_kind(&self.key, STAGED))?;
                    hit |= page.contains(*h);
                }
            }
            for (g, count) in generations.iter().enumerate() {
                if hit {
                    break;
                }
                let shard = match shards.get(&shard_at(g, *count, *h)).map(|p| &**p) {
                    Some(Page::Ribbon(shard)) => shard,
                    Some(_) => return Err(wrong_kind(&self.key, SHARD)),
                    None => return Err(Error::corrupt(&self.key, SHARD, MISSING)),
                };
                hit = shard.contains(*h);
            }
            found.push(hit);
        }
        Ok(found)
    }

    /// The pages `(sub, page)` of the key version `prefix`, each read once (through
    /// the hot-page cache); staging pages never written read as empty, other pages
    /// never written are left out.
    fn read_set(
        &self,
        prefix: &[u8],
        wanted: impl Iterator<Item = (u16, u32)>,
        staging: bool,
    ) -> Result<FastMap<(u16, u32), Arc<Page>>> {
        let mut wanted: Vec<(u16, u32)> = wanted.collect();
        wanted.sort_unstable();
        wanted.dedup();
        let page_keys: Vec<Vec<u8>> = wanted
            .iter()
            .map(|(sub, page)| keys::page_key(prefix, *sub, *page))
            .collect();
        let pages = match staging {
            true => self
                .store
                .read_pages_or(&self.key, STAGED, &page_keys, || {
                    Page::Stage(StagePage::default())
                })?,
            false => self.store.read_pages(&self.key, SHARD, &page_keys)?,
        };
        Ok(wanted
            .into_iter()
            .zip(pages)
            .filter_map(|(at, page)| Some((at, page?)))
            .collect())
    }

    /// `RIBBON.INFO`'s fields; `ERR not found` for a missing key.
    pub fn info(&self) -> Result<RibbonInfo> {
        let guard = self.store.share(self.ns, &self.key);
        let (_, params, prefix) = self.existing(&guard)?;
        let adds = self.store.read_tally(&self.key, &prefix)?.get(0);
        Ok(RibbonInfo {
            error: params.error,
            result_bits: params.result_bits(),
            generations: params.generations,
            built: params.built,
            staged: adds.saturating_sub(params.adds_sealed),
            bytes: params.bytes,
        })
    }

    /// The metadata, parameters and version prefix of the existing filter `guard`
    /// locks; `ERR not found` for a missing key.
    fn existing(&self, guard: &KeyGuard) -> Result<(Meta, RibbonParams, Vec<u8>)> {
        let (meta, prefix) = guard.existing(KeyType::Ribbon, RibbonError::NotFound)?;
        Ok((meta, ribbon_params(&meta)?, prefix))
    }

    fn create(&self, guard: &KeyGuard, params: RibbonParams) -> Result<Meta> {
        guard.create(Params::Ribbon(params))
    }
}

const STAGED: &str = "a ribbon staging page";
const SHARD: &str = "a ribbon shard";
/// A generation's shard page that is not there: a build writes all of them at once.
const MISSING: rocksketch_merge::Error =
    rocksketch_merge::Error::Invalid("a shard page is missing");

/// The parameters of a new filter at `error`, or the error for a bad rate.
fn validate(error: f64) -> Result<RibbonParams> {
    RibbonParams::new(error).ok_or_else(|| RibbonError::ErrorRateRange.into())
}

fn ribbon_params(meta: &Meta) -> Result<RibbonParams> {
    match meta.params {
        Params::Ribbon(params) => Ok(params),
        _ => Err(Error::WrongType),
    }
}

/// The staging page (within an epoch) of hash `h`.
fn stage_page(h: u64) -> u32 {
    (h >> (64 - STAGE_BITS)) as u32
}

/// The page number of the staging page of `h` in `epoch`.
fn stage_page_number(epoch: u32, h: u64) -> u32 {
    (epoch << STAGE_BITS) | stage_page(h)
}

/// The key of the staging page of `h` in `epoch`.
fn stage_key(prefix: &[u8], epoch: u32, h: u64) -> Vec<u8> {
    keys::page_key(prefix, STAGE_SUB, stage_page_number(epoch, h))
}

/// The shard of `h` in a generation of `shards` shards: ranges of the hash, in order, so
/// that sorted hashes cut into shards at a few points.
pub(crate) fn shard_of(h: u64, shards: u16) -> u32 {
    ((u128::from(h) * u128::from(shards)) >> 64) as u32
}
