//! `RIBBON.BUILD`: seals the staged items into a new generation.
//!
//! 1. Under the key's exclusive lock, briefly: open a new staging epoch (the metadata's
//!    `staging` moves on), so adds from here on stage into it; note the tally of adds.
//! 2. Without the key's lock: read the hashes staged in the epochs being sealed (no add
//!    writes to them any more), sort them, cut them into shards by their top bits and
//!    solve each shard. Adds and lookups go on meanwhile; lookups find the items being
//!    built in their staging pages.
//! 3. Under the exclusive lock again, in one write batch: the generation's shard pages,
//!    the removal of the sealed staging pages, and the metadata naming the generation.
//!
//! If the process dies before step 3, the epochs stay unsealed: their items stay staged
//! and found, and the next build seals them. If the key is deleted or replaced during
//! the build, step 3 writes nothing (the build counts as done before the delete).
//! Builds of one key run one at a time (the store's build locks).

use super::{ribbon_params, shard_of, RibbonFilter, STAGED, STAGE_BITS, STAGE_SUB};
use crate::error::{Error, Result, RibbonError};
use crate::keys;
use crate::meta::{KeyType, Meta, Params, RibbonParams, MAX_EPOCHS, MAX_GENERATIONS};
use rocksdb::ReadOptions;
use rocksketch_merge::ribbon::{solve, StagePage};

/// A generation's shards hold about this many items (see [`shards_for`]): large enough
/// that the 64 slots a shard needs past its items and its page header cost little (under
/// 1 %), small enough to solve with 4 % spare slots on the first seed nearly nine times
/// in ten (see `merge/src/ribbon/tests.rs`).
const SHARD_ITEMS: usize = 8192;

/// A solved generation, ready to write.
struct Generation {
    shards: u16,
    items: u64,
    /// Encoded shard pages, by shard.
    pages: Vec<Vec<u8>>,
}

impl RibbonFilter {
    /// Seals every staged item into a new generation (`RIBBON.BUILD`); returns how many
    /// distinct items it holds (0, and no generation, when nothing is staged).
    pub fn build(&self) -> Result<u64> {
        let _one_build = self.store.build_lock(self.ns, &self.key);
        let Some((version, opened, adds)) = self.open_epoch()? else {
            return Ok(0);
        };
        let prefix = keys::version_prefix(self.ns, &self.key, version);
        let hashes = self.read_staged(&prefix, opened.sealed, opened.staging)?;
        let generation = match hashes.is_empty() {
            true => None,
            false => Some(solve_generation(&hashes, opened.result_bits())?),
        };
        let items = hashes.len() as u64;
        drop(hashes);
        self.seal(version, &opened, adds, generation)?;
        Ok(items)
    }

    /// Step 1: the version, the parameters after opening a new staging epoch, and the
    /// tally of adds; `None` when nothing is staged.
    fn open_epoch(&self) -> Result<Option<(u64, RibbonParams, u64)>> {
        let guard = self.store.lock(self.ns, &self.key);
        let (meta, mut params, prefix) = self.existing(&guard)?;
        let adds = self.store.read_tally(&self.key, &prefix)?.get(0);
        if adds == params.adds_sealed {
            return Ok(None);
        }
        if usize::from(params.generations) >= MAX_GENERATIONS {
            return Err(RibbonError::TooManyGenerations.into());
        }
        if params.staging >= MAX_EPOCHS {
            return Err(RibbonError::TooManyBuilds.into());
        }
        params.staging += 1;
        let opened = Meta {
            params: Params::Ribbon(params),
            ..meta
        };
        guard.put_meta(opened, self.store.batch()?)?;
        Ok(Some((meta.version, params, adds)))
    }

    /// Step 2's read: the distinct hashes staged in epochs `from..to`, ascending.
    fn read_staged(&self, prefix: &[u8], from: u32, to: u32) -> Result<Vec<u64>> {
        let start = keys::page_key(prefix, STAGE_SUB, from << STAGE_BITS);
        let end = keys::page_key(prefix, STAGE_SUB, to << STAGE_BITS);
        let mut read_opts = ReadOptions::default();
        read_opts.set_iterate_upper_bound(end);
        let db = self.store.db()?;
        let mut iter = db.raw_iterator_cf_opt(db.pages_cf()?, read_opts);
        iter.seek(&start);
        let mut hashes = Vec::new();
        while let Some(value) = iter.value() {
            let page = StagePage::decode(value)
                .map_err(|source| Error::corrupt(&self.key, STAGED, source))?;
            hashes.extend_from_slice(page.hashes());
            iter.next();
        }
        iter.status()?;
        // One epoch's pages come in hash order; several epochs' must be merged.
        if to - from > 1 {
            hashes.sort_unstable();
            hashes.dedup();
        }
        Ok(hashes)
    }

    /// Step 3: writes the generation, drops the sealed staging pages and moves the
    /// metadata on, in one batch; nothing if the key was deleted or replaced.
    fn seal(
        &self,
        version: u64,
        opened: &RibbonParams,
        adds: u64,
        generation: Option<Generation>,
    ) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let meta = match guard.meta()? {
            Some(meta) if meta.version == version && meta.key_type() == KeyType::Ribbon => meta,
            _ => return Ok(()),
        };
        let mut params = ribbon_params(&meta)?;
        let prefix = keys::version_prefix(self.ns, &self.key, version);
        let mut batch = self.store.batch()?;
        if let Some(generation) = generation {
            let g = params.generations;
            for (shard, page) in generation.pages.iter().enumerate() {
                params.bytes += page.len() as u64;
                batch.put_page(keys::page_key(&prefix, u16::from(g), shard as u32), page);
            }
            params.shards[usize::from(g)] = generation.shards;
            params.generations += 1;
            params.built += generation.items;
        }
        batch.delete_page_range(
            &keys::page_key(&prefix, STAGE_SUB, opened.sealed << STAGE_BITS),
            &keys::page_key(&prefix, STAGE_SUB, opened.staging << STAGE_BITS),
            &keys::sub_prefix(&prefix, STAGE_SUB),
        );
        params.sealed = opened.staging;
        params.adds_sealed = adds;
        let sealed = Meta {
            params: Params::Ribbon(params),
            ..meta
        };
        guard.put_meta(sealed, batch)
    }
}

/// Shards for `n` items: the fewest that hold at most [`SHARD_ITEMS`] on average
/// (staging bounds `n`, so this fits a `u16`).
fn shards_for(n: usize) -> u16 {
    u16::try_from(n.div_ceil(SHARD_ITEMS).max(1)).unwrap_or(u16::MAX)
}

/// Cuts ascending `hashes` into shards by hash range and solves each.
fn solve_generation(hashes: &[u64], r: u8) -> Result<Generation> {
    let shards = shards_for(hashes.len());
    let mut pages = Vec::with_capacity(usize::from(shards));
    let mut rest = hashes;
    for shard in 0..u32::from(shards) {
        let take = rest.partition_point(|h| shard_of(*h, shards) == shard);
        let (mine, after) = rest.split_at(take);
        let solved = solve(mine, r).ok_or(RibbonError::Unsolvable)?;
        pages.push(solved.encode());
        rest = after;
    }
    Ok(Generation {
        shards,
        items: hashes.len() as u64,
        pages,
    })
}
