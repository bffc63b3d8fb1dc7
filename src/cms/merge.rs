//! `CMS.MERGE`, streamed: the weighted sum of the sources is computed and written a
//! page at a time, so memory stays at a page whatever the sketch's size, and the
//! result still replaces the destination atomically.
//!
//! The pages go to a new version of the destination key, which nothing reads until the
//! last batch switches the metadata to it (dropping the old version's pages in the same
//! batch). A marker written first names the new version; if the process dies before
//! the switch, [`Store::open`] drops the pages it names, so nothing is left behind.

use super::{Cms, Layout};
use crate::error::{CmsError, Result};
use crate::meta::Meta;
use rocksdb::ReadOptions;
use rocksketch_merge::counter::CounterPage;
use rocksketch_merge::tally::Tally;

/// A batch of merged pages is written once it holds this many bytes.
const BATCH_BYTES: usize = 4 << 20;

/// Most page reads one merge may make (pages × sources): the work of a command is
/// bounded, whatever number of sources a client names. The largest sketch (65 536
/// pages) can still be merged from 256 sources, the default one from millions.
const MAX_MERGE_READS: u64 = 1 << 24;

impl Cms {
    /// Replaces this sketch with the weighted sum of `sources` (`CMS.MERGE`); this sketch
    /// may itself be a source. All sketches must have this one's width and depth. If any
    /// counter, or the total count, falls outside `[0, u32::MAX]` (resp. `[0, i64::MAX]`),
    /// nothing changes and the error is `CMS: MERGE overflow`.
    ///
    /// Sources are read at one snapshot, a page at a time, under this key's exclusive
    /// lock. Every increment of this key holds its shared lock from its write to its
    /// reply, so one acknowledged before the merge began is in the sources' snapshot
    /// (when this key is a source) or replaced (when not), and one that waited for the
    /// merge is applied after it: none is lost.
    pub fn merge<K: AsRef<[u8]>>(&self, sources: &[(K, i64)]) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        // One time for every sketch, so that windowed ones line up generation by
        // generation.
        let now = self.store.clock().now_ms();
        let dest = self.check_at(guard.meta()?, now)?;
        // Each source's metadata and pages from one snapshot, taken first (a source
        // deleted and made again between a metadata read and a later snapshot would
        // read as zeros).
        let db = self.store.db()?;
        let snapshot = db.snapshot();
        let mut read_opts = ReadOptions::default();
        read_opts.set_snapshot(&snapshot);
        let mut layouts = Vec::with_capacity(sources.len());
        for (source, weight) in sources {
            let meta = guard.other_meta_at(source.as_ref(), &read_opts)?;
            let layout = Cms::new(self.store.clone(), self.ns, source.as_ref().to_vec())
                .check_at(meta, now)?;
            if (layout.params.width, layout.params.depth) != (dest.params.width, dest.params.depth)
            {
                return Err(CmsError::DimensionsDiffer.into());
            }
            if layout.window != dest.window {
                return Err(CmsError::WindowsDiffer.into());
            }
            layouts.push((layout, *weight));
        }
        // Each result page reads at least one page of each source, and every page of a
        // source with smaller pages; a window repeats that for each live generation.
        let generations = 1 + dest.older.len() as u64;
        let reads = layouts.iter().fold(0u64, |reads, (layout, _)| {
            reads.saturating_add(u64::from(dest.pages().max(layout.pages())) * generations)
        });
        if reads > MAX_MERGE_READS {
            return Err(CmsError::MergeTooLarge.into());
        }

        // Generation by generation (one, without a window): the sources' j-th live
        // generation summed into the result's.
        let per_generation: Vec<Vec<(Layout, i64)>> = (0..generations as usize)
            .map(|j| {
                layouts
                    .iter()
                    .filter_map(|(layout, weight)| Some((layout.generations().nth(j)?, *weight)))
                    .collect()
            })
            .collect();
        let mut totals = Vec::with_capacity(per_generation.len());
        for sources in &per_generation {
            let mut counts = Vec::with_capacity(sources.len());
            for (layout, weight) in sources {
                counts.push((i128::from(self.read_count(layout, &read_opts)?), *weight));
            }
            match weighted_sum(counts) {
                Some(count) if count >= 0 => totals.push(count as u64),
                _ => return Err(CmsError::MergeOverflow.into()),
            }
        }

        let Some(old) = guard.meta()? else {
            return Err(CmsError::KeyDoesNotExist.into());
        };
        let meta = Meta {
            version: self.store.next_version(),
            ..old
        };
        let result = Layout::new(self.ns, &self.key, &meta, now)?;
        let version_prefix = guard.prefix(&meta);
        self.store.mark_pending(&version_prefix)?;
        let switched = result
            .generations()
            .zip(&per_generation)
            .zip(&totals)
            .try_for_each(|((generation, sources), total)| {
                self.write_sums(&generation, sources, &read_opts)?;
                let mut batch = self.store.batch()?;
                batch.put_page(
                    generation.tally_key(),
                    Tally::new(vec![*total]).encode_page(),
                );
                self.store.write(batch)
            })
            .and_then(|()| {
                let mut batch = self.store.batch()?;
                self.store.clear_pending_into(&mut batch, &version_prefix);
                // The switch: the new version's metadata, and the old version's pages dropped.
                guard.put_meta(meta, batch)
            });
        if switched.is_err() {
            // Cut short (a full disk): the destination keeps its old version, and the
            // new one's pages go now or once writes are accepted again.
            self.store.abandon_pending(&version_prefix);
        }
        switched
    }

    /// Writes the weighted sums of `sources`, page by page, under `result`'s version
    /// (all-zero pages are left out: a missing page reads as zeros). Sketches made
    /// under different page sizes line up by counter, not by page: each result page
    /// reads the source pages that hold its counters.
    fn write_sums(
        &self,
        result: &Layout,
        sources: &[(Layout, i64)],
        read_opts: &ReadOptions,
    ) -> Result<()> {
        let mut batch = self.store.batch()?;
        for page in 0..result.pages() {
            // Each cell's sum, or None once a term or a partial sum left 64 bits.
            let mut sums = vec![Some(0i64); result.page_len(page) as usize];
            let first = u64::from(page) * u64::from(result.params.page_cells);
            for (layout, weight) in sources {
                let per = u64::from(layout.params.page_cells);
                let last = first + sums.len() as u64 - 1;
                let wanted: Vec<u32> = ((first / per) as u32..=(last / per) as u32).collect();
                let read = self.read_page_set(layout, &wanted, Some(read_opts))?;
                for (cell, sum) in (first..).zip(sums.iter_mut()) {
                    let value = read.cell((cell / per) as u32, (cell % per) as u32);
                    *sum = sum.and_then(|s| {
                        weighted_sum([(i128::from(s), 1), (i128::from(value), *weight)])
                    });
                }
            }
            let in_range =
                |s: &Option<i64>| matches!(s, Some(s) if (0..=i64::from(u32::MAX)).contains(s));
            if !sums.iter().all(in_range) {
                return Err(CmsError::MergeOverflow.into());
            }
            let cells =
                CounterPage::from_cells(sums.into_iter().map(|s| s.unwrap_or(0) as u32).collect());
            if !cells.is_zero() {
                batch.put_page(result.page_key(page), cells.encode());
            }
            if batch.size_in_bytes() >= BATCH_BYTES {
                self.store
                    .write(std::mem::replace(&mut batch, self.store.batch()?))?;
            }
        }
        self.store.write(batch)
    }
}

/// `sum(value x weight)` as RedisBloom's merge computes it (`checkOverflow` in cms.c):
/// each product and each partial sum must fit in 64 signed bits, or None (`MERGE
/// overflow`), though a wider sum might have come back into range. Values are the
/// counters (32-bit cells, or the 64-bit unsigned total count).
fn weighted_sum(terms: impl IntoIterator<Item = (i128, i64)>) -> Option<i64> {
    terms.into_iter().try_fold(0i64, |sum, (value, weight)| {
        let product = i64::try_from(value.checked_mul(i128::from(weight))?).ok()?;
        sum.checked_add(product)
    })
}

#[cfg(test)]
mod tests {
    use super::weighted_sum;

    #[test]
    fn a_term_or_partial_sum_past_64_bits_overflows_as_in_redisbloom() {
        let big = i128::from(i64::MAX) + (1 << 31); // a total count past i64::MAX
        assert_eq!(weighted_sum([(big, -1), (big, 1)]), None);
        assert_eq!(
            weighted_sum([(i128::from(i64::MAX), 1), (1, 1), (1, -1)]),
            None
        );
        assert_eq!(weighted_sum([(3, 1 << 62)]), None);
        assert_eq!(weighted_sum([(5, -1), (7, 1)]), Some(2));
        assert_eq!(
            weighted_sum([(i128::from(i64::MAX), 1), (1, -1)]),
            Some(i64::MAX - 1)
        );
    }
}
