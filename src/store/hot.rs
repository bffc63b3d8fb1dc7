//! The hot-page cache: decoded pages in memory, answered without RocksDB, a copy or a
//! checksum; the pages in RocksDB stay the durable copy.
//!
//! A write applies each of its operands to the cached page (with the merge crate's
//! [`Page::apply`], the full merge's own code) once RocksDB has taken the write; a put
//! or an operand the page refuses drops the page instead. A failed write changes
//! nothing. A reader that misses reads RocksDB and installs what it read, unless a
//! write of that page was in flight or began meanwhile (the fill race: the value read
//! may or may not hold that write's operand, so installing it could lose the operand or
//! apply it twice). Each page key's slot counts its writers in flight and holds at most
//! one pending fill, which any writer's start cancels.
//!
//! Writes of one page that overlap (blind writers under the key's shared lock) reach
//! RocksDB in an order the cache does not see: it applies each operand as its write
//! ends. Where the order of operands changes the page (a t-digest's compress points, a
//! cuckoo page's kick-outs, a Top-K's decay) such a write drops the cached page
//! instead, and the next read takes RocksDB's; counters, bits, tallies and staged sets
//! are the same in any order and stay cached.
//!
//! Bounded: pages are evicted (clock order) when a shard's pages pass its share of the
//! budget. A page larger than a shard's share (a Top-K of k = 1000 is 1.6 MiB, a
//! t-digest of compression 10 000 near 1 MiB, a shard's share of the default 64 MiB is
//! 1 MiB) is cached too, up to a quarter of the budget each and half of it for all such
//! pages together: every page a structure makes can be cached, and reads of a large
//! page do not replay its pending operands every time.

use parking_lot::Mutex;
use rocksketch_merge::Page;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

const SHARDS: usize = 64;

/// Bytes a slot costs beyond its page (key, map entry, counters), roughly.
const SLOT_OVERHEAD: usize = 96;

pub(crate) struct HotPages {
    shards: Box<[Mutex<Shard>]>,
    shard_budget: usize,
    /// The whole cache's budget.
    budget: usize,
    /// Bytes of cached pages larger than a shard's share (see the module docs).
    oversized: AtomicUsize,
    next_fill: AtomicU64,
    /// Numbers each write batch, for overlaps (see [`HotPages::begin_writes`]).
    next_batch: AtomicU64,
    pub(crate) stats: HotStats,
}

/// Counters for `INFO` and the benchmarks.
#[derive(Default)]
pub(crate) struct HotStats {
    pub(crate) hits: AtomicU64,
    pub(crate) misses: AtomicU64,
}

#[derive(Default)]
struct Shard {
    slots: HashMap<Vec<u8>, Slot>,
    /// Bytes of cached pages and their slots.
    bytes: usize,
}

#[derive(Default)]
struct Slot {
    page: Option<Arc<Page>>,
    /// Known never written (a read found nothing, and no write began since): lookups
    /// answer "absent" without RocksDB. Never set along with `page`.
    absent: bool,
    /// Writes of this page begun and not yet finished.
    writers: u32,
    /// Two of the writes in flight overlapped (see the module docs).
    overlapped: bool,
    /// The batch that began the latest write of this page.
    batch: u64,
    /// The write in flight began on a page known never written, with no other writer:
    /// if it is the only one when it ends, its operand alone makes the page.
    born_absent: bool,
    /// The reader allowed to install the page it is reading, if any.
    fill: Option<u64>,
    /// Clock bit: read since the eviction hand last passed.
    used: bool,
}

impl Slot {
    fn is_empty(&self) -> bool {
        self.page.is_none() && !self.absent && self.writers == 0 && self.fill.is_none()
    }

    fn cost(&self, key: &[u8]) -> usize {
        match &self.page {
            Some(p) => p.size() + key.len() + SLOT_OVERHEAD,
            None if self.absent => key.len() + SLOT_OVERHEAD,
            None => 0,
        }
    }

    /// Forgets the page or the absence held, returning the bytes that frees.
    fn clear(&mut self, key: &[u8]) -> usize {
        let cost = self.cost(key);
        self.page = None;
        self.absent = false;
        self.born_absent = false;
        cost
    }
}

/// What a write does to a cached page when it succeeds.
pub(crate) enum PageWrite {
    /// Apply this operand.
    Merge(Vec<u8>),
    /// The page was replaced or deleted: drop it.
    Drop,
}

/// What a miss's read found.
enum Read<'a> {
    Page(&'a Arc<Page>),
    /// Nothing: the page was never written.
    Absent,
    /// The read failed: nothing is known.
    Failed,
}

/// A miss: the page to read from RocksDB, and the fill ticket if it may be installed.
pub(crate) struct Miss {
    pub(crate) at: usize,
    fill: Option<u64>,
}

impl HotPages {
    /// A cache of about `budget` bytes (0 caches nothing).
    pub(crate) fn new(budget: usize) -> HotPages {
        HotPages {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            shard_budget: budget / SHARDS,
            budget,
            oversized: AtomicUsize::new(0),
            next_fill: AtomicU64::new(1),
            next_batch: AtomicU64::new(1),
            stats: HotStats::default(),
        }
    }

    pub(crate) fn enabled(&self) -> bool {
        self.shard_budget > 0
    }

    fn shard(&self, key: &[u8]) -> &Mutex<Shard> {
        let h = rocksketch_merge::hash::murmur64a(key, 0x5bd1_e995);
        &self.shards[(h % SHARDS as u64) as usize]
    }

    /// Looks each key up: the cached pages (`None` where missed), and the misses, each
    /// registered for a fill where no write of its page is in flight.
    pub(crate) fn lookup(&self, keys: &[Vec<u8>]) -> (Vec<Option<Arc<Page>>>, Vec<Miss>) {
        let mut found = Vec::with_capacity(keys.len());
        let mut misses = Vec::new();
        for (at, key) in keys.iter().enumerate() {
            let mut shard = self.shard(key).lock();
            if let Some(slot) = shard.slots.get_mut(key.as_slice()) {
                if let Some(page) = &slot.page {
                    slot.used = true;
                    found.push(Some(page.clone()));
                    continue;
                }
                if slot.absent {
                    slot.used = true;
                    found.push(None);
                    continue;
                }
            }
            found.push(None);
            let slot = shard.slots.entry(key.clone()).or_default();
            let fill = (slot.writers == 0 && slot.fill.is_none()).then(|| {
                let id = self.next_fill.fetch_add(1, Ordering::Relaxed);
                slot.fill = Some(id);
                id
            });
            if fill.is_none() && slot.is_empty() {
                shard.slots.remove(key.as_slice());
            }
            misses.push(Miss { at, fill });
        }
        let hits = (keys.len() - misses.len()) as u64;
        self.stats.hits.fetch_add(hits, Ordering::Relaxed);
        self.stats
            .misses
            .fetch_add(misses.len() as u64, Ordering::Relaxed);
        (found, misses)
    }

    /// Records that the page read for `miss` was never written (if the fill still
    /// stands): later lookups answer so without RocksDB until a write of it begins. A
    /// window's fresh generations and a new filter's pages are read before they are
    /// written, every lookup of them otherwise a RocksDB miss.
    pub(crate) fn fill_absent(&self, key: &[u8], miss: &Miss) {
        self.settle(key, miss, Read::Absent);
    }

    /// Installs a page read for `miss` (if its fill still stands), or withdraws the
    /// miss's fill (`page` `None`: the read failed).
    pub(crate) fn fill(&self, key: &[u8], miss: &Miss, page: Option<&Arc<Page>>) {
        self.settle(key, miss, page.map_or(Read::Failed, Read::Page));
    }

    /// Ends `miss`'s fill with what its read found, installed if the fill still stands,
    /// no write began since, and the budget admits it.
    fn settle(&self, key: &[u8], miss: &Miss, read: Read<'_>) {
        let Some(id) = miss.fill else {
            return;
        };
        let mut shard = self.shard(key).lock();
        let shard = &mut *shard;
        let Some(slot) = shard.slots.get_mut(key) else {
            return;
        };
        if slot.fill != Some(id) {
            return;
        }
        slot.fill = None;
        let cost = match read {
            Read::Page(page) => page.size() + key.len() + SLOT_OVERHEAD,
            Read::Absent => key.len() + SLOT_OVERHEAD,
            Read::Failed => 0,
        };
        let free = slot.writers == 0 && slot.page.is_none() && !slot.absent;
        if free && !matches!(read, Read::Failed) && self.admits(cost) {
            match read {
                Read::Page(page) => slot.page = Some(page.clone()),
                _ => slot.absent = true,
            }
            slot.used = true;
            self.charge(shard, key, cost);
        } else if slot.is_empty() {
            shard.slots.remove(key);
        }
    }

    /// Marks the start of a write of each key: fills pending for them are cancelled,
    /// and no fill starts until [`HotPages::end_writes`].
    pub(crate) fn begin_writes<'k>(&self, keys: impl Iterator<Item = &'k [u8]>) {
        // A batch writing one page twice is one writer, in its own order: only another
        // batch's writer in flight makes an overlap. Had one begun while this batch's
        // writes of the page are in flight, it would have marked the overlap itself.
        let batch = self.next_batch.fetch_add(1, Ordering::Relaxed);
        for key in keys {
            let mut shard = self.shard(key).lock();
            let shard = &mut *shard;
            let slot = shard.slots.entry(key.to_vec()).or_default();
            let born_absent = slot.absent;
            if slot.absent {
                // The write makes the page: the next read takes RocksDB's.
                let freed = slot.clear(key);
                shard.bytes = shard.bytes.saturating_sub(freed);
                self.account(freed, 0);
            }
            slot.overlapped |= slot.writers > 0 && slot.batch != batch;
            slot.born_absent = born_absent;
            slot.batch = batch;
            slot.writers += 1;
            slot.fill = None;
        }
    }

    /// Ends writes begun with [`HotPages::begin_writes`]: if `written`, applies each to
    /// its cached page, in order.
    pub(crate) fn end_writes<'w>(
        &self,
        writes: impl Iterator<Item = (&'w [u8], &'w PageWrite)>,
        written: bool,
    ) {
        for (key, write) in writes {
            let mut shard = self.shard(key).lock();
            let shard = &mut *shard;
            let Some(slot) = shard.slots.get_mut(key) else {
                continue;
            };
            slot.writers = slot.writers.saturating_sub(1);
            let overlapped = slot.overlapped;
            let born_absent = slot.born_absent;
            if slot.writers == 0 {
                slot.overlapped = false;
                slot.born_absent = false;
            }
            if written && slot.page.is_none() && born_absent && !overlapped {
                if let PageWrite::Merge(operand) = write {
                    self.install_made(shard, key, operand);
                }
            } else if written && slot.page.is_some() {
                let before = slot.cost(key);
                let keep = match write {
                    PageWrite::Merge(_)
                        if overlapped && slot.page.as_deref().is_some_and(order_matters) =>
                    {
                        false
                    }
                    PageWrite::Merge(operand) => slot
                        .page
                        .as_mut()
                        .is_some_and(|page| Arc::make_mut(page).apply(operand)),
                    PageWrite::Drop => false,
                };
                if !keep {
                    slot.page = None;
                }
                let after = slot.cost(key);
                shard.bytes = shard.bytes.saturating_sub(before) + after;
                self.account(before, after);
            }
            if shard.slots.get(key).is_some_and(Slot::is_empty) {
                shard.slots.remove(key);
            }
        }
    }

    /// Installs the page `operand` makes alone (the write of a page known never
    /// written, ended with no other writer of it begun meanwhile), if the budget admits
    /// it: a new filter's or a window's fresh pages are then read from memory after their
    /// first write, not read back from RocksDB and merged.
    fn install_made(&self, shard: &mut Shard, key: &[u8], operand: &[u8]) {
        let merged = rocksketch_merge::full_merge(None, [operand]);
        let page = match Page::decode(&merged.value) {
            Ok(page) if merged.skipped == 0 => page,
            _ => return,
        };
        let cost = page.size() + key.len() + SLOT_OVERHEAD;
        let Some(slot) = shard.slots.get_mut(key) else {
            return;
        };
        if !self.admits(cost) {
            return;
        }
        slot.page = Some(Arc::new(page));
        slot.used = true;
        self.charge(shard, key, cost);
    }

    /// Counts a page or an absence of `cost` just installed under `key`, and evicts
    /// others if the shard is past its share.
    fn charge(&self, shard: &mut Shard, key: &[u8], cost: usize) {
        shard.bytes += cost;
        self.account(0, cost);
        self.evict(shard, key);
    }

    /// Drops every cached page whose key starts with `prefix` (a deleted key version,
    /// or everything when the database is reopened), and withdraws the fills pending
    /// for them: a page read before the drop (from the version deleted, or from the
    /// database before its reopen) is never installed after it.
    pub(crate) fn drop_prefix(&self, prefix: &[u8]) {
        self.drop_where(|key| key.starts_with(prefix));
    }

    /// [`HotPages::drop_prefix`] for the pages whose keys fall in `[from, to)`.
    pub(crate) fn drop_range(&self, from: &[u8], to: &[u8]) {
        self.drop_where(|key| from <= key && key < to);
    }

    fn drop_where(&self, doomed: impl Fn(&[u8]) -> bool) {
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            let shard = &mut *shard;
            let mut freed = 0;
            shard.slots.retain(|key, slot| {
                if !doomed(key) {
                    return true;
                }
                let cost = slot.clear(key);
                freed += cost;
                self.account(cost, 0);
                slot.fill = None;
                !slot.is_empty()
            });
            shard.bytes = shard.bytes.saturating_sub(freed);
        }
    }

    /// Whether a page costing `cost` may be cached: within a shard's share, or within
    /// the room kept for larger pages.
    fn admits(&self, cost: usize) -> bool {
        cost <= self.shard_budget
            || (cost <= self.budget / 4
                && self.oversized.load(Ordering::Relaxed) + cost <= self.budget / 2)
    }

    /// Keeps the count of oversized pages' bytes as a slot's cost goes from `before` to
    /// `after` (0 for no page).
    fn account(&self, before: usize, after: usize) {
        let over = |cost: usize| if cost > self.shard_budget { cost } else { 0 };
        let (before, after) = (over(before), over(after));
        if after > before {
            self.oversized.fetch_add(after - before, Ordering::Relaxed);
        } else if before > after {
            self.oversized.fetch_sub(before - after, Ordering::Relaxed);
        }
    }

    /// Evicts pages (clock order) until the shard is within its share, sparing `keep`.
    fn evict(&self, shard: &mut Shard, keep: &[u8]) {
        let budget = self.shard_budget;
        let mut passes = 0;
        while shard.bytes > budget && passes < 2 {
            passes += 1;
            let mut freed = 0;
            for (key, slot) in shard.slots.iter_mut() {
                if shard.bytes - freed <= budget {
                    break;
                }
                if (slot.page.is_none() && !slot.absent) || key.as_slice() == keep {
                    continue;
                }
                if slot.used {
                    slot.used = false;
                    continue;
                }
                let cost = slot.clear(key);
                freed += cost;
                self.account(cost, 0);
            }
            shard.bytes -= freed;
            shard.slots.retain(|_, slot| !slot.is_empty());
        }
    }

    /// Bytes of pages cached now.
    pub(crate) fn bytes(&self) -> usize {
        self.shards.iter().map(|s| s.lock().bytes).sum()
    }
}

/// Evicts pages, in clock order, until the shard is within `budget`; `keep` (just
/// installed) goes last.
/// Whether the order operands are applied in changes the page (see the module docs).
fn order_matters(page: &Page) -> bool {
    match page {
        Page::Digest(_) | Page::Fp(_) | Page::TopK(_) => true,
        Page::Counter(_)
        | Page::Tally(_)
        | Page::Bits(_)
        | Page::Stage(_)
        | Page::Ribbon(_)
        | Page::Hll(_) => false,
    }
}

#[cfg(test)]
mod tests;
