//! Count-min sketches: RedisBloom's semantics on blind-merge pages.
//!
//! Counters are laid out row-major and cut into pages
//! ([`rocksketch_merge::layout::cms`]), so every estimate equals RedisBloom's. An
//! increment writes one sparse delta operand per page it touches and one tally delta for
//! the total count, in one write batch, without reading anything.

mod answers;
#[cfg(feature = "baselines")]
mod baseline;
mod fold;
mod layout;
mod merge;
mod operands;
mod pages;

use crate::error::{CmsError, Error, Result};
use crate::meta::{CmsParams, KeyType, Meta, Params};
use crate::store::{KeyGuard, Store};
use crate::window::{Window, WindowInfo};
use rocksdb::ReadOptions;
use std::collections::BTreeMap;

pub use rocksketch_merge::layout::cms::{MAX_CELLS, MAX_DEPTH};

pub(crate) use answers::Request as CombinedRequest;
use answers::Request;
use layout::{ItemSlots, Layout};
use operands::{additions, increment_operands, saturate};

/// `CMS.INFO`'s fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmsInfo {
    /// Counters per row.
    pub width: u32,
    /// Rows (hash functions).
    pub depth: u32,
    /// The sum of all increments (wrapping at 2^64, like RedisBloom's `size_t`).
    pub count: u64,
}

/// A handle on the count-min sketch at one key. Creating the handle reads nothing.
pub struct Cms {
    store: Store,
    ns: u16,
    key: Vec<u8>,
}

handle_constructors!(cms, Cms, "count-min sketch");

impl Cms {
    pub(crate) fn new(store: Store, ns: u16, key: Vec<u8>) -> Cms {
        Cms { store, ns, key }
    }

    /// The key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Creates a sketch of `width` × `depth` counters (`CMS.INITBYDIM`).
    ///
    /// ```
    /// # fn main() -> rocksketch::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let store = rocksketch::Store::open(dir.path(), Default::default())?;
    /// let cms = store.cms("clicks");
    /// cms.init_by_dim(2000, 7)?;
    /// cms.incr_by(&[("home", 3), ("about", 1), ("home", 2)])?;
    /// assert_eq!(cms.query(&["home", "about", "never"])?, vec![5, 1, 0]);
    /// assert_eq!(cms.info()?.count, 6);
    /// # Ok(()) }
    /// ```
    pub fn init_by_dim(&self, width: u64, depth: u64) -> Result<()> {
        self.init(width, depth, None)
    }

    /// [`Cms::init_by_dim`] over a sliding window (`CMS.INITBYDIM ... WINDOW ms`): a
    /// sketch of `width` × `depth` per generation, queries summing the live ones.
    pub fn init_by_dim_windowed(&self, width: u64, depth: u64, window: Window) -> Result<()> {
        self.init(width, depth, Some(window))
    }

    /// [`Cms::init_by_prob`] over a sliding window.
    pub fn init_by_prob_windowed(
        &self,
        error: f64,
        probability: f64,
        window: Window,
    ) -> Result<()> {
        let (width, depth) = dims_from_prob(error, probability)?;
        self.init(width, depth, Some(window))
    }

    fn init(&self, width: u64, depth: u64, window: Option<Window>) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        // An expired key's pages go with the new metadata, in one batch (`put_meta`).
        if guard.meta()?.is_some() {
            return Err(CmsError::KeyAlreadyExists.into());
        }
        if width == 0 {
            return Err(CmsError::InvalidWidth.into());
        }
        if depth == 0 {
            return Err(CmsError::InvalidDepth.into());
        }
        let fits = |n: u64| u32::try_from(n).ok();
        let (Some(width), Some(depth)) = (fits(width), fits(depth)) else {
            return Err(CmsError::InvalidInitArguments.into());
        };
        if u64::from(depth) > MAX_DEPTH {
            return Err(CmsError::DepthTooLarge.into());
        }
        if u64::from(width) * u64::from(depth) > MAX_CELLS {
            return Err(CmsError::TooManyCounters.into());
        }
        // No pages are written: a missing page reads as zeros.
        let page_cells = self.store.page_cells();
        let params = Params::Cms(CmsParams {
            width,
            depth,
            page_cells,
        });
        guard.create_windowed(params, window)?;
        Ok(())
    }

    /// Creates a sketch sized for an overestimation `error` (a fraction of the total
    /// count) with probability `probability` of exceeding it (`CMS.INITBYPROB`):
    /// width `ceil(2 / error)`, depth `ceil(log10(probability) / log10(0.5))`, the latter
    /// in 32-bit float as RedisBloom computes it.
    pub fn init_by_prob(&self, error: f64, probability: f64) -> Result<()> {
        let (width, depth) = dims_from_prob(error, probability)?;
        self.init_by_dim(width, depth)
    }

    /// Adds each `(item, increment)` blindly: one write batch, no read. Counters saturate
    /// at `u32::MAX`.
    pub fn incr_by<I: AsRef<[u8]>>(&self, items: &[(I, u64)]) -> Result<()> {
        let guard = self.store.share(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let slots = layout.item_slots(items.iter().map(|(item, _)| item.as_ref()));
        let folded = slots.fold(&additions(items));
        self.write_increments(&layout, items, folded.pages)
    }

    /// Adds each `(item, increment)` and returns each item's estimate right after its own
    /// increment (`CMS.INCRBY`'s reply; `u32::MAX` means saturated).
    ///
    /// The write is the same blind batch as [`Cms::incr_by`], under the key's shared
    /// lock (so no delete or `CMS.MERGE` of the key lands between the write and the
    /// read; other writers do not wait); then the touched pages are read. An item's estimate is each row's counter as read,
    /// less the increments this call made to that counter after the item's own, so the
    /// answers are those of applying the pairs in order. Concurrent writers' increments
    /// may show in the estimates (as if they came just before); an estimate never falls
    /// below the item's true count.
    ///
    /// A counter read saturated says nothing of its value before this call's later
    /// increments; only then are the counters read again as they were before the write
    /// (from a snapshot taken before it) and the pairs applied to them in order.
    ///
    /// Concurrent calls on one sketch are combined: their pairs go as one call (one
    /// write batch, one read), each answered with its own pairs' estimates.
    pub fn incr_by_with_estimates<I: AsRef<[u8]>>(&self, items: &[(I, u64)]) -> Result<Vec<u32>> {
        let store = &self.store;
        store.combiners().cms_incr.run(
            self.ns,
            &self.key,
            Request::new(items),
            |ns, key, requests| {
                let pairs = answers::all_pairs(requests);
                let cms = Cms::new(store.clone(), ns, key.to_vec());
                answers::per_request(requests, cms.incr_by_with_estimates_alone(&pairs))
            },
        )
    }

    /// The increments written and their estimates: an outer error when nothing was
    /// written, an inner one when the increments were written but their estimates
    /// could not be read.
    fn incr_by_with_estimates_alone(&self, items: &[(&[u8], u64)]) -> Result<Result<Vec<u32>>> {
        let guard = self.store.share(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let db = self.store.db()?;
        let before = db.snapshot();
        let slots = layout.item_slots(items.iter().map(|(item, _)| *item));
        let folded = slots.fold(&additions(items));
        self.write_increments(&layout, items, folded.pages)?;
        Ok(self
            .estimates_after(&layout, &before, items, &slots, &folded.later)
            .and_then(|mut estimates| {
                if !layout.older.is_empty() {
                    self.add_older(&layout, &slots, &slots.pages(), &mut estimates)?;
                }
                Ok(estimates)
            }))
    }

    /// What `items` read after their increments were written (see
    /// [`Cms::incr_by_with_estimates_alone`]), `before` being a snapshot from before and
    /// `later` each slot's later additions ([`fold::Folded::later`]).
    fn estimates_after(
        &self,
        layout: &Layout,
        before: &rocksdb::SnapshotWithThreadMode<'_, rocksdb::DB>,
        items: &[(&[u8], u64)],
        slots: &ItemSlots,
        later: &[u32],
    ) -> Result<Vec<u32>> {
        let pages = self.read_pages(layout, slots)?;
        let mut estimates = vec![0; items.len()];
        let mut ambiguous = false;
        for (i, estimate) in estimates.iter_mut().enumerate() {
            let mut min = u32::MAX;
            let first = i * slots.depth();
            for (n, &(page, offset)) in slots.of(i).iter().enumerate() {
                let after = later.get(first + n).copied().unwrap_or(0);
                let read = pages.cell(page, offset);
                ambiguous |= read == u32::MAX && after > 0;
                min = min.min(read.saturating_sub(after));
            }
            *estimate = min;
        }
        if !ambiguous {
            return Ok(estimates);
        }
        let mut read_opts = ReadOptions::default();
        read_opts.set_snapshot(before);
        let wanted = slots.pages();
        let earlier = self.read_page_set(layout, &wanted, Some(&read_opts))?;
        let mut cells: BTreeMap<u32, Vec<u32>> = wanted
            .iter()
            .map(|page| {
                let read = earlier.0.get(page).and_then(|p| p.as_counter());
                let cells = read.map_or_else(
                    || vec![0; layout.page_len(*page) as usize],
                    |p| p.cells().to_vec(),
                );
                (*page, cells)
            })
            .collect();
        for (i, (estimate, (_, incr))) in estimates.iter_mut().zip(items).enumerate() {
            let add = saturate(*incr);
            *estimate = slots
                .of(i)
                .iter()
                .map(|&(page, offset)| {
                    let cell = cells
                        .entry(page)
                        .or_default()
                        .get_mut(offset as usize)
                        .map_or(0, |cell| {
                            *cell = cell.saturating_add(add);
                            *cell
                        });
                    cell
                })
                .min()
                .unwrap_or(0);
        }
        Ok(estimates)
    }

    /// The estimate of each item (`CMS.QUERY`); over a window, the sum of each live
    /// generation's estimate.
    pub fn query<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<Vec<u32>> {
        let guard = self.store.share(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let slots = layout.item_slots(items.iter().map(AsRef::as_ref));
        let wanted = slots.pages();
        let mut estimates = self.estimates_in(&layout, &slots, &wanted, items.len())?;
        self.add_older(&layout, &slots, &wanted, &mut estimates)?;
        Ok(estimates)
    }

    /// Each item's estimate in the sketch (or generation) `layout` names, `wanted`
    /// being the pages its slots touch.
    fn estimates_in(
        &self,
        layout: &Layout,
        slots: &ItemSlots,
        wanted: &[u32],
        n: usize,
    ) -> Result<Vec<u32>> {
        let pages = self.read_page_set(layout, wanted, None)?;
        Ok((0..n)
            .map(|i| {
                slots
                    .of(i)
                    .iter()
                    .map(|&(page, offset)| pages.cell(page, offset))
                    .min()
                    .unwrap_or(0)
            })
            .collect())
    }

    /// Adds the older live generations' estimates of a windowed sketch to `estimates`
    /// (the current generation's): each generation's estimate is at least its true
    /// count, so the sum is at least the window's, and tighter than the minimum of
    /// summed rows.
    fn add_older(
        &self,
        layout: &Layout,
        slots: &ItemSlots,
        wanted: &[u32],
        estimates: &mut [u32],
    ) -> Result<()> {
        for older in layout.older_generations() {
            let theirs = self.estimates_in(&older, slots, wanted, estimates.len())?;
            for (sum, e) in estimates.iter_mut().zip(theirs) {
                *sum = sum.saturating_add(e);
            }
        }
        Ok(())
    }

    /// Width, depth and total count (`CMS.INFO`).
    pub fn info(&self) -> Result<CmsInfo> {
        let guard = self.store.share(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        Ok(CmsInfo {
            width: layout.params.width,
            depth: layout.params.depth,
            count: self.window_count(&layout)?,
        })
    }

    /// The window and each live generation's count (`CMS.INFO`'s window fields);
    /// `None` for a sketch without a window.
    pub fn window_info(&self) -> Result<Option<WindowInfo>> {
        let guard = self.store.share(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let Some(window) = layout.window else {
            return Ok(None);
        };
        let mut fill = Vec::new();
        for generation in layout.generations() {
            fill.push(self.read_count(&generation, &ReadOptions::default())?);
        }
        Ok(Some(WindowInfo::new(
            window,
            self.store.clock().now_ms(),
            fill,
        )))
    }

    /// The total count over the live generations (the sketch's, without a window).
    fn window_count(&self, layout: &Layout) -> Result<u64> {
        let mut count = 0u64;
        for generation in layout.generations() {
            count = count.wrapping_add(self.read_count(&generation, &ReadOptions::default())?);
        }
        Ok(count)
    }

    /// Width and depth, or RedisBloom's error for a missing key or another type.
    pub fn dims(&self) -> Result<(u32, u32)> {
        let layout = self.layout(&self.store.share(self.ns, &self.key))?;
        Ok((layout.params.width, layout.params.depth))
    }

    /// Reads this key's metadata under `guard` and checks it is a count-min sketch.
    fn layout(&self, guard: &KeyGuard) -> Result<Layout> {
        self.check(guard.meta()?)
    }

    fn check(&self, meta: Option<Meta>) -> Result<Layout> {
        self.check_at(meta, self.store.clock().now_ms())
    }

    /// [`Cms::check`], a window read at `now`.
    fn check_at(&self, meta: Option<Meta>, now: u64) -> Result<Layout> {
        match meta {
            None => Err(CmsError::KeyDoesNotExist.into()),
            Some(meta) if meta.key_type() == KeyType::Cms => {
                Layout::new(self.ns, &self.key, &meta, now)
            }
            Some(_) => Err(Error::WrongType),
        }
    }

    /// The blind write: per page, one delta with the summed additions; one tally delta.
    fn write_increments<I: AsRef<[u8]>>(
        &self,
        layout: &Layout,
        items: &[(I, u64)],
        pages: Vec<(u32, Vec<(u32, u32)>)>,
    ) -> Result<()> {
        let mut batch = self.store.batch()?;
        for (key, operand) in increment_operands(layout, items, pages)? {
            batch.merge_page(key, operand);
        }
        self.store.write(batch)
    }
}

/// RedisBloom's `CMS_DimFromProb`, validated as its command does.
pub fn dims_from_prob(error: f64, probability: f64) -> Result<(u64, u64)> {
    if !(error > 0.0 && error < 1.0) {
        return Err(CmsError::InvalidOverestimation.into());
    }
    if !(probability > 0.0 && probability < 1.0) {
        return Err(CmsError::InvalidProb.into());
    }
    let width = (2.0 / error).ceil() as u64;
    let depth = ((probability as f32).log10() / 0.5f32.log10()).ceil() as u64;
    Ok((width, depth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_from_prob_matches_redisbloom() {
        assert_eq!(dims_from_prob(0.001, 0.01).unwrap(), (2000, 7));
        assert_eq!(dims_from_prob(0.01, 0.001).unwrap(), (200, 10));
        assert_eq!(dims_from_prob(0.05, 0.2).unwrap(), (40, 3));
        assert!(matches!(
            dims_from_prob(0.0, 0.1),
            Err(Error::Cms(CmsError::InvalidOverestimation))
        ));
        assert!(matches!(
            dims_from_prob(0.1, 1.0),
            Err(Error::Cms(CmsError::InvalidProb))
        ));
    }
}
