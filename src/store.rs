//! The store: a RocksDB database with a `meta` and a `pages` column family, a metadata
//! cache, striped key locks, and the generic key operations.

mod backup;
mod batch;
mod cache;
mod db;
mod expiry;
mod guard;
mod hints;
mod hot;
mod namespace;
mod options;
mod span;
pub(crate) use options::open_db;
mod pending;
mod read;
mod recover;
mod replica;
mod resync;
mod tables;
mod tail;
mod transfer;
mod wal;

pub(crate) use batch::Batch;
pub use db::Db;
use db::DbSlot;
pub use guard::take_last_lookup;
pub(crate) use guard::KeyGuard;
pub use namespace::Namespace;
pub use options::{ColumnFamilies, StoreOptions, META_CF, PAGES_CF};
pub use pending::INTERNAL_NS;
pub use span::{Listed, Span};
pub use tail::WalTail;
pub use transfer::LogsHeld;

/// The longest key name a structure can be created under, in bytes. Every page key and
/// every operand of a structure carries its key's name, so a long name is multiplied by
/// its pages and writes (a 16 MiB name on a 20-row sketch made each `CMS.INCRBY` write
/// hundreds of MiB); 8 KiB leaves room for the longest names applications use (URLs,
/// composite keys) while bounding that cost. Redis allows 512 MiB.
pub const MAX_KEY_LEN: usize = 8 << 10;

/// Refuses to create a key whose name is longer than [`MAX_KEY_LEN`].
pub(crate) fn check_new_key(key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_LEN {
        return Err(Error::InvalidArgument(format!(
            "key is too long ({} bytes; at most {MAX_KEY_LEN})",
            key.len()
        )));
    }
    Ok(())
}
pub(crate) use read::wrong_kind;

use crate::combine::Combiner;
use crate::error::{Error, Result};
use crate::keys;
use crate::locks::KeyLocks;
use crate::meta::Meta;
use cache::BoundedMap;
use guard::live;
use hot::HotPages;
use rocksdb::{Cache, WriteOptions, DB};
use rocksketch_merge::tally::Tally;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A store of sketches and filters. Cheap to clone; `Send + Sync`.
///
/// One `Store` should own a database's rocksketch column families: the metadata cache
/// is per `Store`, so two of them over one database could see each other's changes late.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    db: DbSlot,
    /// Recovery from write errors, for a database the store opened itself.
    watch: Option<Arc<recover::Watch>>,
    cfs: ColumnFamilies,
    locks: KeyLocks,
    /// Held by a Ribbon build for its key, from start to end (see [`crate::ribbon`]).
    builds: KeyLocks,
    cache: BoundedMap<Meta>,
    hints: BoundedMap<Arc<AtomicU64>>,
    last_version: AtomicU64,
    /// A replica: writes only what [`Store::apply_replicated`] applies.
    replica: std::sync::atomic::AtomicBool,
    write_opts: WriteOptions,
    page_cells: u32,
    combiners: Combiners,
    hot: HotPages,
    /// Key versions of multi-batch writes given up while writes failed, whose pages
    /// are still to be dropped (see `pending.rs`).
    abandoned: parking_lot::Mutex<Vec<Vec<u8>>>,
    /// The time windows are read by.
    clock: crate::Clock,
    /// The oldest live generation each windowed key version had when the sweep last
    /// dropped its older ones, by version prefix (see [`crate::window`]).
    swept: BoundedMap<u64>,
}

impl Drop for Store {
    fn drop(&mut self) {
        // A handle among many (the common case) costs one load.
        if Arc::strong_count(&self.inner) <= 2 {
            if let Some(watch) = &self.inner.watch {
                watch.release(|| Arc::strong_count(&self.inner));
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(watch) = &self.watch {
            watch.stop();
        }
    }
}

/// One combiner per kind of answered write (see [`crate::combine`]).
#[derive(Default)]
pub(crate) struct Combiners {
    pub(crate) bf_add: Combiner<Vec<u8>, bool>,
    pub(crate) cf_add_nx: Combiner<Vec<u8>, bool>,
    pub(crate) cms_incr: Combiner<crate::cms::CombinedRequest, Vec<u32>>,
}

impl Store {
    /// Opens (creating if needed) a store in directory `dir`.
    ///
    /// ```
    /// # fn main() -> rocksketch::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let store = rocksketch::Store::open(dir.path(), Default::default())?;
    /// assert!(!store.ns(0).exists(b"nothing")?);
    /// # Ok(()) }
    /// ```
    pub fn open(dir: impl AsRef<Path>, options: StoreOptions) -> Result<Store> {
        let cache = Cache::new_lru_cache(options.block_cache_bytes);
        let db = options::open_db(dir.as_ref(), &options, &cache, false)?;
        options::report_dropped_wal_bytes(dir.as_ref());
        let watch = recover::Watch::new(dir.as_ref(), options.clone(), cache);
        let cfs = ColumnFamilies::default();
        let store = Store::build(Arc::new(db), cfs, options, Some(Arc::clone(&watch)))?;
        watch.start(Arc::downgrade(&store.inner))?;
        Ok(store)
    }

    /// A store over a database the host opened itself, whose pages column family has
    /// rocksketch's merge operator registered (see [`crate::register_merge_operator`]).
    ///
    /// The host keeps its own column family options. For reads that stay cheap before
    /// compaction, give the pages column family RocksDB's `max_successive_merges` (as
    /// [`StoreOptions::pages_cf_options`] does) and, after opening,
    /// `set_options_cf(pages, &[("strict_max_successive_merges", "true")])`, as
    /// [`Store::open`] does; the README's benchmark section shows what each is worth.
    pub fn with_db(db: Arc<DB>, cfs: ColumnFamilies, options: StoreOptions) -> Result<Store> {
        Store::build(db, cfs, options, None)
    }

    fn build(
        db: Arc<DB>,
        cfs: ColumnFamilies,
        options: StoreOptions,
        watch: Option<Arc<recover::Watch>>,
    ) -> Result<Store> {
        for name in [&cfs.meta, &cfs.pages] {
            if db.cf_handle(name).is_none() {
                return Err(Error::InvalidArgument(format!(
                    "column family '{name}' does not exist in the database"
                )));
            }
        }
        if !(4..=1 << 20).contains(&options.page_bytes) {
            return Err(Error::InvalidArgument(format!(
                "page_bytes must be in [4, 1048576], got {}",
                options.page_bytes
            )));
        }
        let mut write_opts = WriteOptions::default();
        write_opts.set_sync(options.sync_writes);
        let store = Store {
            inner: Arc::new(Inner {
                db: DbSlot::new(db),
                watch,
                cfs,
                locks: KeyLocks::default(),
                builds: KeyLocks::default(),
                cache: BoundedMap::new(options.meta_cache_entries),
                hints: BoundedMap::new(options.meta_cache_entries.max(1)),
                last_version: AtomicU64::new(0),
                replica: options.replica.into(),
                write_opts,
                page_cells: options.page_bytes / 4,
                combiners: Combiners::default(),
                hot: HotPages::new(options.page_cache_bytes),
                abandoned: Default::default(),
                swept: BoundedMap::new(options.meta_cache_entries.max(1)),
                clock: options.clock,
            }),
        };
        if !options.replica {
            store.drop_abandoned_versions()?;
        }
        Ok(store)
    }

    /// The time sliding windows are read by ([`StoreOptions::clock`]).
    pub fn clock(&self) -> &crate::Clock {
        &self.inner.clock
    }

    /// The keys of namespace `ns` (Redis's numbered databases map to namespaces).
    pub fn ns(&self, ns: u16) -> Namespace {
        Namespace {
            store: self.clone(),
            ns,
        }
    }

    /// Flushes memtables and compacts both column families fully.
    pub fn compact(&self) -> Result<()> {
        // Forced, so the bottommost level is rewritten too: a lone file moved down without
        // a rewrite would keep its merge operands unmerged on disk.
        let mut options = rocksdb::CompactOptions::default();
        options.set_bottommost_level_compaction(rocksdb::BottommostLevelCompaction::Force);
        let db = self.db()?;
        for cf in [db.meta_cf()?, db.pages_cf()?] {
            db.flush_cf(cf)?;
            db.compact_range_cf_opt(cf, None::<&[u8]>, None::<&[u8]>, &options);
        }
        Ok(())
    }

    /// Makes every acknowledged write durable in the table files: syncs the write-ahead
    /// log and flushes both column families' memtables. For a clean shutdown.
    pub fn flush(&self) -> Result<()> {
        let db = self.db()?;
        db.flush_wal(true)?;
        for cf in [db.meta_cf()?, db.pages_cf()?] {
            db.flush_cf(cf)?;
        }
        Ok(())
    }

    /// Operands that merges in this process skipped as undecodable (see
    /// [`rocksketch_merge::full_merge`]); non-zero means some stored bytes are corrupt.
    pub fn skipped_operands(&self) -> u64 {
        crate::operator::skipped_operands()
    }

    // ---- crate-internal plumbing for the typed handles ----

    /// Empties the metadata cache, the count hints and the hot-page cache (after a
    /// reopen, which may have replayed a write whose caller saw it fail).
    fn clear_caches(&self) {
        self.inner.cache.clear();
        self.inner.hints.clear();
        self.inner.hot.drop_prefix(&[]);
    }

    pub(crate) fn combiners(&self) -> &Combiners {
        &self.inner.combiners
    }

    pub(crate) fn page_cells(&self) -> u32 {
        self.inner.page_cells
    }

    /// Locks `key` exclusively: for creation, deletion, expiry, growth and replies that
    /// depend on a read. See [`crate::locks`].
    pub(crate) fn lock<'a>(&'a self, ns: u16, key: &'a [u8]) -> KeyGuard<'a> {
        KeyGuard {
            store: self,
            ns,
            key,
            held: self.inner.locks.exclusive(ns, key),
            _one: guard::OnlyGuard::take(),
            pending: Default::default(),
        }
    }

    /// Locks `key` shared: for blind writes and reads, which must not see the key's
    /// version deleted or replaced half-way through them. See [`crate::locks`].
    pub(crate) fn share<'a>(&'a self, ns: u16, key: &'a [u8]) -> KeyGuard<'a> {
        KeyGuard {
            store: self,
            ns,
            key,
            held: self.inner.locks.shared(ns, key),
            _one: guard::OnlyGuard::take(),
            pending: Default::default(),
        }
    }

    /// Serializes the builds of a Ribbon filter. Taken before, never under, a key lock.
    pub(crate) fn build_lock(&self, ns: u16, key: &[u8]) -> crate::locks::Held<'_> {
        self.inner.builds.exclusive(ns, key)
    }

    /// The live metadata of a key, for an answer that reads nothing else of the key
    /// (`EXISTS`, `TYPE`, `TTL`): from the cache, else read under the shared lock.
    /// Under a key's lock, the guard's [`KeyGuard::other_meta_at`] reads another key.
    pub(crate) fn meta(&self, ns: u16, key: &[u8]) -> Result<Option<Meta>> {
        match self.inner.cache.get(&keys::meta_key(ns, key)) {
            Some(meta) => Ok(live(Some(meta))),
            None => self.share(ns, key).meta(),
        }
    }

    /// A version newer than any this process handed out before: the time in
    /// microseconds, or one more than the last if the clock has not moved on.
    pub(crate) fn next_version(&self) -> u64 {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        let prev = self
            .inner
            .last_version
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
                Some(now.max(last + 1))
            })
            .unwrap_or(0);
        now.max(prev + 1)
    }

    /// Adds the removal of a key's metadata and all its pages to `batch`.
    fn delete_into(&self, batch: &mut Batch<'_>, ns: u16, key: &[u8], meta: &Meta) -> Result<()> {
        batch.delete_meta(&keys::meta_key(ns, key));
        batch.delete_pages(&keys::version_prefix(ns, key, meta.version))
    }

    /// Creates `key` from a dump's header chunk: metadata with a new version and the
    /// tally page, in one batch. `false` (nothing written) if the key exists.
    pub(crate) fn create_restored(
        &self,
        ns: u16,
        key: &[u8],
        params: crate::meta::Params,
        counts: Vec<u64>,
    ) -> Result<bool> {
        self.create_restored_with(ns, key, params, None, vec![(None, counts)])
    }

    /// [`Store::create_restored`] of a windowed filter: the window, and each
    /// generation's tally.
    pub(crate) fn create_restored_windowed(
        &self,
        ns: u16,
        key: &[u8],
        params: crate::meta::Params,
        window: crate::Window,
        generations: Vec<(u64, Vec<u64>)>,
    ) -> Result<bool> {
        let tallies = generations
            .into_iter()
            .map(|(g, counts)| (Some(g), counts))
            .collect();
        self.create_restored_with(ns, key, params, Some(window), tallies)
    }

    fn create_restored_with(
        &self,
        ns: u16,
        key: &[u8],
        params: crate::meta::Params,
        window: Option<crate::Window>,
        tallies: Vec<(Option<u64>, Vec<u64>)>,
    ) -> Result<bool> {
        let guard = self.lock(ns, key);
        if guard.meta()?.is_some() {
            return Ok(false);
        }
        check_new_key(key)?;
        let meta = Meta {
            version: self.next_version(),
            expire_at_ms: 0,
            params,
            window,
        };
        let prefix = keys::version_prefix(ns, key, meta.version);
        let mut batch = self.batch()?;
        for (generation, counts) in tallies {
            let at = match generation {
                None => prefix.clone(),
                Some(g) => crate::window::generation_prefix(&prefix, g),
            };
            batch.put_page(
                keys::page_key(&at, keys::TALLY_SUB, 0),
                Tally::new(counts).encode_page(),
            );
        }
        guard.put_meta(meta, batch)?;
        Ok(true)
    }
}

/// The Unix time in milliseconds, as expiry times are kept.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
