//! The store: a RocksDB database with a `meta` and a `pages` column family, a metadata
//! cache, striped key locks, and the generic key operations.

use crate::bloom::BloomFilter;
use crate::cms::Cms;
use crate::cuckoo::CuckooFilter;
use crate::error::{Error, Result};
use crate::keys;
use crate::locks::{Held, KeyLocks};
use crate::meta::{KeyType, Meta};
use crate::operator::register_merge_operator;
use parking_lot::RwLock;
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, IteratorMode, ReadOptions,
    WriteBatch, WriteOptions, DB,
};
use rocksketch_merge::tally::Tally;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Name of the column family that holds metadata records.
pub const META_CF: &str = "meta";
/// Name of the column family that holds pages; the merge operator is registered here.
pub const PAGES_CF: &str = "pages";

/// Options of a [`Store`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Sync the WAL on every write (durable against power loss, slower). Default: off;
    /// the WAL itself is always on, so acknowledged writes survive a process crash.
    pub sync_writes: bool,
    /// Bytes per page of new count-min sketches. Default 16 KiB (4096 counters): see
    /// the README's benchmark section for why.
    pub page_bytes: u32,
    /// Metadata records kept in memory. Default 100 000.
    pub meta_cache_entries: usize,
    /// RocksDB's `max_successive_merges` for the pages column family: once a page has
    /// this many operands in the memtable, the next write folds them into one value, so
    /// a read never merges a long pile of operands. `Store::open` makes the bound strict
    /// (it holds even when the fold must read a block from a file). Default 32; 0
    /// disables it.
    pub max_successive_merges: usize,
    /// Memtable size of the pages column family. Default 32 MiB.
    pub write_buffer_bytes: usize,
    /// Block cache shared by both column families. Default 64 MiB.
    pub block_cache_bytes: usize,
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            sync_writes: false,
            page_bytes: 16 << 10,
            meta_cache_entries: 100_000,
            max_successive_merges: 32,
            write_buffer_bytes: 32 << 20,
            block_cache_bytes: 64 << 20,
        }
    }
}

impl StoreOptions {
    /// Column family options for the pages column family, with the merge operator. A host
    /// database can start from these, or register the operator on its own options with
    /// [`crate::register_merge_operator`].
    pub fn pages_cf_options(&self, cache: &Cache) -> rocksdb::Options {
        let mut opts = rocksdb::Options::default();
        register_merge_operator(&mut opts);
        opts.set_max_successive_merges(self.max_successive_merges);
        opts.set_write_buffer_size(self.write_buffer_bytes);
        opts.set_compression_type(DBCompressionType::Lz4);
        opts.set_block_based_table_factory(&table_options(cache));
        opts
    }

    /// Column family options for the meta column family.
    pub fn meta_cf_options(&self, cache: &Cache) -> rocksdb::Options {
        let mut opts = rocksdb::Options::default();
        opts.set_compression_type(DBCompressionType::Lz4);
        opts.set_block_based_table_factory(&table_options(cache));
        opts
    }

    /// Descriptors of both column families, for `DB::open_cf_descriptors`.
    pub fn column_families(&self, cache: &Cache) -> Vec<ColumnFamilyDescriptor> {
        vec![
            ColumnFamilyDescriptor::new(META_CF, self.meta_cf_options(cache)),
            ColumnFamilyDescriptor::new(PAGES_CF, self.pages_cf_options(cache)),
        ]
    }
}

fn table_options(cache: &Cache) -> BlockBasedOptions {
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(cache);
    // Point reads dominate: a filter spares a read of every L0 file that lacks the key.
    table.set_bloom_filter(10.0, false);
    table.set_cache_index_and_filter_blocks(true);
    table
}

/// Names of the column families a host database gives rocksketch.
#[derive(Debug, Clone)]
pub struct ColumnFamilies {
    pub meta: String,
    pub pages: String,
}

impl Default for ColumnFamilies {
    fn default() -> ColumnFamilies {
        ColumnFamilies {
            meta: META_CF.to_owned(),
            pages: PAGES_CF.to_owned(),
        }
    }
}

/// A store of sketches and filters. Cheap to clone; `Send + Sync`.
///
/// One `Store` should own a database's rocksketch column families: the metadata cache
/// is per `Store`, so two of them over one database could see each other's changes late.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    db: Arc<DB>,
    cfs: ColumnFamilies,
    locks: KeyLocks,
    cache: MetaCache,
    hints: CountHints,
    last_version: AtomicU64,
    write_opts: WriteOptions,
    page_cells: u32,
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
        let mut db_opts = rocksdb::Options::default();
        db_opts.create_if_missing(true);
        db_opts.create_missing_column_families(true);
        db_opts.set_max_background_jobs(2);
        let db = DB::open_cf_descriptors(&db_opts, dir, options.column_families(&cache))?;
        if options.max_successive_merges > 0 {
            // Hold the bound even when the page's base value is in a file not yet in
            // the block cache (right after a flush); otherwise RocksDB skips the fold
            // and a page's operands pile up until some read caches its block.
            // rust-rocksdb has no setter for it; RocksDB takes it as a string option.
            let pages = db
                .cf_handle(PAGES_CF)
                .ok_or_else(|| Error::Storage("pages column family missing".to_owned()))?;
            db.set_options_cf(pages, &[("strict_max_successive_merges", "true")])?;
        }
        Store::with_db(Arc::new(db), ColumnFamilies::default(), options)
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
                db,
                cfs,
                locks: KeyLocks::default(),
                cache: MetaCache::new(options.meta_cache_entries),
                hints: CountHints::new(options.meta_cache_entries),
                last_version: AtomicU64::new(0),
                write_opts,
                page_cells: options.page_bytes / 4,
            }),
        };
        store.drop_abandoned_versions()?;
        Ok(store)
    }

    /// The underlying database (for hosts, statistics and compaction).
    pub fn db(&self) -> &Arc<DB> {
        &self.inner.db
    }

    /// The keys of namespace `ns` (Redis's numbered databases map to namespaces).
    pub fn ns(&self, ns: u16) -> Namespace {
        Namespace {
            store: self.clone(),
            ns,
        }
    }

    /// The Bloom filter at `key` in namespace 0.
    pub fn bloom(&self, key: impl AsRef<[u8]>) -> BloomFilter {
        self.ns(0).bloom(key)
    }

    /// The cuckoo filter at `key` in namespace 0.
    pub fn cuckoo(&self, key: impl AsRef<[u8]>) -> CuckooFilter {
        self.ns(0).cuckoo(key)
    }

    /// The count-min sketch at `key` in namespace 0.
    pub fn cms(&self, key: impl AsRef<[u8]>) -> Cms {
        self.ns(0).cms(key)
    }

    /// Flushes memtables and compacts both column families fully.
    pub fn compact(&self) -> Result<()> {
        for cf in [self.meta_cf()?, self.pages_cf()?] {
            self.inner.db.flush_cf(cf)?;
            self.inner
                .db
                .compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
        }
        Ok(())
    }

    /// Deletes expired keys found in up to `limit` metadata records from `cursor` (a raw
    /// metadata key; `None` from the start), in every namespace: their metadata and
    /// pages go in one batch per key. Returns how many it deleted and where to go on
    /// (`None` once it reached the end). The RESP host runs it in a background thread;
    /// reads never wait for it, since an expired key reads as absent already.
    /// A `limit` of 0 is an error: such a sweep could never advance.
    pub fn sweep_expired(
        &self,
        cursor: Option<&[u8]>,
        limit: usize,
    ) -> Result<(usize, Option<Vec<u8>>)> {
        if limit == 0 {
            return Err(Error::InvalidArgument(
                "sweep_expired needs a limit of at least 1 record".to_owned(),
            ));
        }
        let cf = self.meta_cf()?;
        let mode = match cursor {
            Some(from) => IteratorMode::From(from, rocksdb::Direction::Forward),
            None => IteratorMode::Start,
        };
        let now = now_ms();
        let mut expired = Vec::new();
        let mut next = None;
        for (seen, item) in self.inner.db.iterator_cf(cf, mode).enumerate() {
            let (raw_key, raw_meta) = item?;
            if seen == limit {
                next = Some(raw_key.to_vec());
                break;
            }
            // Undecodable records are left for the reader to report.
            if let (Some((ns, key)), Ok(meta)) =
                (keys::split_meta_key(&raw_key), Meta::decode(&raw_meta))
            {
                if meta.is_expired(now) {
                    expired.push((ns, key.to_vec()));
                }
            }
        }
        let mut deleted = 0;
        for (ns, key) in expired {
            let guard = self.lock(ns, &key);
            match guard.stored_meta()? {
                Some(meta) if meta.is_expired(now_ms()) => {
                    guard.delete(&meta)?;
                    deleted += 1;
                }
                _ => {}
            }
        }
        Ok((deleted, next))
    }

    /// Makes every acknowledged write durable in the table files: syncs the write-ahead
    /// log and flushes both column families' memtables. For a clean shutdown.
    pub fn flush(&self) -> Result<()> {
        self.inner.db.flush_wal(true)?;
        for cf in [self.meta_cf()?, self.pages_cf()?] {
            self.inner.db.flush_cf(cf)?;
        }
        Ok(())
    }

    /// A RocksDB integer property of the pages column family (see
    /// `rocksdb::properties`), summed over its levels where RocksDB does so.
    pub fn pages_property(&self, name: &str) -> Result<Option<u64>> {
        Ok(self
            .inner
            .db
            .property_int_value_cf(self.pages_cf()?, name)?)
    }

    /// Operands that merges in this process skipped as undecodable (see
    /// [`rocksketch_merge::full_merge`]); non-zero means some stored bytes are corrupt.
    pub fn skipped_operands(&self) -> u64 {
        crate::operator::skipped_operands()
    }

    // ---- crate-internal plumbing for the typed handles ----

    pub(crate) fn meta_cf(&self) -> Result<&rocksdb::ColumnFamily> {
        self.cf(&self.inner.cfs.meta)
    }

    pub(crate) fn pages_cf(&self) -> Result<&rocksdb::ColumnFamily> {
        self.cf(&self.inner.cfs.pages)
    }

    fn cf(&self, name: &str) -> Result<&rocksdb::ColumnFamily> {
        self.inner
            .db
            .cf_handle(name)
            .ok_or_else(|| Error::Storage(format!("column family '{name}' is gone")))
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
        }
    }

    /// The live metadata of a key, for an answer that reads nothing else of the key
    /// (`EXISTS`, `TYPE`, `TTL`): from the cache, else read under the shared lock.
    /// Must not be called with any key's lock held (see [`Store::meta_peek`]).
    pub(crate) fn meta(&self, ns: u16, key: &[u8]) -> Result<Option<Meta>> {
        match self.inner.cache.get(&keys::meta_key(ns, key)) {
            Some(meta) => Ok(live(Some(meta))),
            None => self.share(ns, key).meta(),
        }
    }

    /// [`Store::meta`] without the lock, for a caller holding another key's lock: it
    /// does not fill the cache, so it cannot leave a stale entry there.
    pub(crate) fn meta_peek(&self, ns: u16, key: &[u8]) -> Result<Option<Meta>> {
        Ok(live(self.read_meta(ns, key, false)?))
    }

    /// The stored metadata, expired or not: from the cache, else from the database
    /// (then cached if `fill`, which needs the key's lock held).
    fn read_meta(&self, ns: u16, key: &[u8], fill: bool) -> Result<Option<Meta>> {
        let mkey = keys::meta_key(ns, key);
        if let Some(meta) = self.inner.cache.get(&mkey) {
            return Ok(Some(meta));
        }
        let Some(raw) = self.inner.db.get_pinned_cf(self.meta_cf()?, &mkey)? else {
            return Ok(None);
        };
        let meta = Meta::decode(&raw).map_err(|source| Error::Corruption {
            key: key.to_vec(),
            what: "metadata",
            source,
        })?;
        if fill {
            self.inner.cache.insert(mkey, meta);
        }
        Ok(Some(meta))
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
    fn delete_into(&self, batch: &mut WriteBatch, ns: u16, key: &[u8], meta: &Meta) -> Result<()> {
        batch.delete_cf(self.meta_cf()?, keys::meta_key(ns, key));
        let prefix = keys::version_prefix(ns, key, meta.version);
        let end = keys::prefix_end(&prefix)
            .ok_or_else(|| Error::InvalidArgument("key too long".to_owned()))?;
        batch.delete_range_cf(self.pages_cf()?, prefix, end);
        Ok(())
    }

    pub(crate) fn write(&self, batch: WriteBatch) -> Result<()> {
        Ok(self.inner.db.write_opt(batch, &self.inner.write_opts)?)
    }

    /// Reads pages by key; `None` for a page never written.
    pub(crate) fn get_pages(
        &self,
        page_keys: &[Vec<u8>],
        read_opts: &ReadOptions,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let cf = self.pages_cf()?;
        self.inner
            .db
            .multi_get_cf_opt(page_keys.iter().map(|k| (cf, k)), read_opts)
            .into_iter()
            .map(|r| r.map_err(Error::from))
            .collect()
    }

    /// Records that pages under the key version `prefix` are about to be written in
    /// more than one batch (see `CMS.MERGE`), before they become the key's version:
    /// if the process dies first, the next open drops them.
    pub(crate) fn mark_pending(&self, prefix: &[u8]) -> Result<()> {
        let mut batch = WriteBatch::default();
        batch.put_cf(self.meta_cf()?, pending_key(prefix), b"");
        self.write(batch)
    }

    /// Adds the end of a pending write (the version is now live) to `batch`.
    pub(crate) fn clear_pending_into(&self, batch: &mut WriteBatch, prefix: &[u8]) -> Result<()> {
        batch.delete_cf(self.meta_cf()?, pending_key(prefix));
        Ok(())
    }

    /// Abandons a pending write: drops its pages and its marker, in one batch.
    pub(crate) fn drop_pending(&self, prefix: &[u8]) -> Result<()> {
        let mut batch = WriteBatch::default();
        let end = keys::prefix_end(prefix)
            .ok_or_else(|| Error::InvalidArgument("key too long".to_owned()))?;
        batch.delete_range_cf(self.pages_cf()?, prefix.to_vec(), end);
        self.clear_pending_into(&mut batch, prefix)?;
        self.write(batch)
    }

    /// Drops the pages of every pending write a previous process left unfinished.
    fn drop_abandoned_versions(&self) -> Result<()> {
        let start = keys::meta_key(INTERNAL_NS, PENDING_TAG);
        let iter = self.inner.db.iterator_cf(
            self.meta_cf()?,
            IteratorMode::From(&start, rocksdb::Direction::Forward),
        );
        let mut abandoned = Vec::new();
        for item in iter {
            let (raw_key, _) = item?;
            match raw_key.strip_prefix(start.as_slice()) {
                Some(prefix) => abandoned.push(prefix.to_vec()),
                None => break,
            }
        }
        for prefix in abandoned {
            self.drop_pending(&prefix)?;
        }
        Ok(())
    }

    /// A raw iterator over the pages column family (merged values).
    pub(crate) fn page_iterator(
        &self,
        read_opts: ReadOptions,
    ) -> Result<rocksdb::DBRawIterator<'_>> {
        Ok(self
            .inner
            .db
            .raw_iterator_cf_opt(self.pages_cf()?, read_opts))
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
        let guard = self.lock(ns, key);
        if guard.meta()?.is_some() {
            return Ok(false);
        }
        let meta = Meta {
            version: self.next_version(),
            expire_at_ms: 0,
            params,
        };
        let prefix = keys::version_prefix(ns, key, meta.version);
        let mut batch = WriteBatch::default();
        batch.put_cf(
            self.pages_cf()?,
            keys::page_key(&prefix, keys::TALLY_SUB, 0),
            Tally::new(counts).encode_page(),
        );
        guard.put_meta(meta, batch)?;
        Ok(true)
    }

    /// The tally page of a key version (`prefix`); zeros if never written.
    pub(crate) fn read_tally(&self, key: &[u8], prefix: &[u8]) -> Result<Tally> {
        let page = keys::page_key(prefix, keys::TALLY_SUB, 0);
        match self
            .get_pages(&[page], &ReadOptions::default())?
            .pop()
            .flatten()
        {
            None => Ok(Tally::default()),
            Some(raw) => Tally::decode_page(&raw)
                .map_err(|source| Error::corrupt(key, "the tally page", source)),
        }
    }

    /// The in-memory count of items in sub-filter `sub` of the key version `prefix`,
    /// loaded from the key's tally the first time. Blind writers decide a chain's growth
    /// from it instead of reading the tally page on every write; it only steers growth,
    /// never correctness.
    pub(crate) fn count_hint(&self, key: &[u8], prefix: &[u8], sub: u32) -> Result<Arc<AtomicU64>> {
        let slot = hint_slot(prefix, sub);
        if let Some(hint) = self.inner.hints.map.read().get(&slot) {
            return Ok(hint.clone());
        }
        let loaded = self.read_tally(key, prefix)?.get(sub as usize);
        Ok(self
            .inner
            .hints
            .insert(slot, Arc::new(AtomicU64::new(loaded))))
    }

    /// The count hint of a sub-filter, if one is kept (see [`Store::count_hint`]).
    pub(crate) fn existing_count_hint(&self, prefix: &[u8], sub: u32) -> Option<Arc<AtomicU64>> {
        self.inner
            .hints
            .map
            .read()
            .get(&hint_slot(prefix, sub))
            .cloned()
    }
}

/// A key's stripe, held (see [`crate::locks`]): the one way to reach a key's metadata
/// under its lock, and, held exclusively, to change it.
pub(crate) struct KeyGuard<'a> {
    store: &'a Store,
    ns: u16,
    key: &'a [u8],
    held: Held<'a>,
}

impl KeyGuard<'_> {
    /// The key's live metadata (an expired key reads as absent). A cache miss fills
    /// the cache: safe under either lock, since only an exclusive holder changes it.
    pub(crate) fn meta(&self) -> Result<Option<Meta>> {
        Ok(live(self.stored_meta()?))
    }

    /// [`KeyGuard::meta`] of a key that must hold `kind` if it exists (else `WRONGTYPE`).
    pub(crate) fn typed_meta(&self, kind: KeyType) -> Result<Option<Meta>> {
        match self.meta()? {
            Some(meta) if meta.key_type() != kind => Err(Error::WrongType),
            other => Ok(other),
        }
    }

    /// The stored metadata, expired or not.
    pub(crate) fn stored_meta(&self) -> Result<Option<Meta>> {
        self.store.read_meta(self.ns, self.key, true)
    }

    /// Whether the lock is held exclusively.
    pub(crate) fn is_exclusive(&self) -> bool {
        matches!(self.held, Held::Exclusive(_))
    }

    fn require_exclusive(&self) -> Result<()> {
        match self.is_exclusive() {
            true => Ok(()),
            false => Err(Error::Storage(
                "internal: metadata changed under a shared lock".to_owned(),
            )),
        }
    }

    /// Writes `meta` along with `batch` (the lock must be exclusive). Writing a new
    /// version over an older record (one that expired and was not yet swept) removes
    /// the older version's pages in the same batch. The cache changes only once the
    /// batch is written.
    pub(crate) fn put_meta(&self, meta: Meta, mut batch: WriteBatch) -> Result<()> {
        self.require_exclusive()?;
        let store = self.store;
        if let Some(old) = store.read_meta(self.ns, self.key, false)? {
            if old.version != meta.version {
                store.delete_into(&mut batch, self.ns, self.key, &old)?;
            }
        }
        let mkey = keys::meta_key(self.ns, self.key);
        batch.put_cf(store.meta_cf()?, &mkey, meta.encode());
        store.write(batch)?;
        store.inner.cache.insert(mkey, meta);
        Ok(())
    }

    /// Deletes the key version `meta` names: its metadata and, with a range delete,
    /// all its pages (the lock must be exclusive).
    pub(crate) fn delete(&self, meta: &Meta) -> Result<()> {
        self.require_exclusive()?;
        let mut batch = WriteBatch::default();
        self.store
            .delete_into(&mut batch, self.ns, self.key, meta)?;
        self.store.write(batch)?;
        self.store
            .inner
            .cache
            .remove(&keys::meta_key(self.ns, self.key));
        Ok(())
    }
}

/// The keys of one namespace, and the generic operations over them.
#[derive(Clone)]
pub struct Namespace {
    store: Store,
    ns: u16,
}

impl Namespace {
    /// The namespace number.
    pub fn id(&self) -> u16 {
        self.ns
    }

    /// The count-min sketch at `key` (it need not exist yet).
    pub fn cms(&self, key: impl AsRef<[u8]>) -> Cms {
        Cms::new(self.store.clone(), self.ns, key.as_ref().to_vec())
    }

    /// The Bloom filter at `key` (it need not exist yet).
    pub fn bloom(&self, key: impl AsRef<[u8]>) -> BloomFilter {
        BloomFilter::new(self.store.clone(), self.ns, key.as_ref().to_vec())
    }

    /// The cuckoo filter at `key` (it need not exist yet).
    pub fn cuckoo(&self, key: impl AsRef<[u8]>) -> CuckooFilter {
        CuckooFilter::new(self.store.clone(), self.ns, key.as_ref().to_vec())
    }

    /// Whether `key` exists (and has not expired).
    pub fn exists(&self, key: &[u8]) -> Result<bool> {
        Ok(self.store.meta(self.ns, key)?.is_some())
    }

    /// The type of structure at `key`, if any.
    pub fn key_type(&self, key: &[u8]) -> Result<Option<KeyType>> {
        Ok(self.store.meta(self.ns, key)?.map(|m| m.key_type()))
    }

    /// Deletes `key` and all its pages; returns whether it existed. A later structure at
    /// the same key gets a new version and never sees the old pages.
    pub fn delete(&self, key: &[u8]) -> Result<bool> {
        let guard = self.store.lock(self.ns, key);
        let Some(meta) = guard.stored_meta()? else {
            return Ok(false);
        };
        guard.delete(&meta)?;
        Ok(!meta.is_expired(now_ms()))
    }

    /// Up to `limit` live keys after `after` (exclusive; `None` from the start) in key
    /// order, with their types: a cursor for listing a large namespace in steps.
    pub fn scan(&self, after: Option<&[u8]>, limit: usize) -> Result<Vec<(Vec<u8>, KeyType)>> {
        let mut out = Vec::new();
        if limit > 0 {
            self.each_live(after, |key, meta| {
                out.push((key.to_vec(), meta.key_type()));
                out.len() < limit
            })?;
        }
        Ok(out)
    }

    /// Live keys in the namespace, and how many of them have an expiry (`DBSIZE` and
    /// `INFO keyspace`). Reads every metadata record of the namespace.
    pub fn counts(&self) -> Result<(u64, u64)> {
        let (mut live, mut expiring) = (0, 0);
        self.each_live(None, |_, meta| {
            live += 1;
            expiring += u64::from(meta.expire_at_ms != 0);
            true
        })?;
        Ok((live, expiring))
    }

    /// Calls `visit` with each live key of the namespace after `after` (exclusive) and
    /// its metadata, in key order, while it returns true.
    fn each_live(
        &self,
        after: Option<&[u8]>,
        mut visit: impl FnMut(&[u8], &Meta) -> bool,
    ) -> Result<()> {
        let start = keys::meta_key(self.ns, after.unwrap_or_default());
        let cf = self.store.meta_cf()?;
        let iter = self
            .store
            .inner
            .db
            .iterator_cf(cf, IteratorMode::From(&start, rocksdb::Direction::Forward));
        let now = now_ms();
        for item in iter {
            let (raw_key, raw_meta) = item?;
            let Some((ns, key)) = keys::split_meta_key(&raw_key) else {
                continue;
            };
            if ns != self.ns {
                break;
            }
            if after == Some(key) {
                continue;
            }
            let meta = Meta::decode(&raw_meta)
                .map_err(|source| Error::corrupt(key, "metadata", source))?;
            if !meta.is_expired(now) && !visit(key, &meta) {
                break;
            }
        }
        Ok(())
    }

    /// Every live key of the namespace, in key order.
    pub fn keys(&self) -> Result<Vec<(Vec<u8>, KeyType)>> {
        self.scan(None, usize::MAX)
    }

    /// Sets `key` to expire at `at_ms` (Unix time in milliseconds); a time not in the
    /// future deletes the key at once. Returns whether it was set (or deleted); `false`
    /// for a missing key.
    pub fn expire_at(&self, key: &[u8], at_ms: u64) -> Result<bool> {
        self.expire_at_if(key, at_ms, |_| true)
    }

    /// [`Namespace::expire_at`] if `allow` agrees, given the key's current expiry time
    /// (`None` for none): `EXPIRE`'s `NX`, `XX`, `GT` and `LT` options.
    pub fn expire_at_if(
        &self,
        key: &[u8],
        at_ms: u64,
        allow: impl FnOnce(Option<u64>) -> bool,
    ) -> Result<bool> {
        let guard = self.store.lock(self.ns, key);
        let Some(meta) = guard.meta()? else {
            return Ok(false);
        };
        if !allow((meta.expire_at_ms != 0).then_some(meta.expire_at_ms)) {
            return Ok(false);
        }
        if at_ms <= now_ms() {
            guard.delete(&meta)?;
            return Ok(true);
        }
        let meta = Meta {
            expire_at_ms: at_ms,
            ..meta
        };
        guard.put_meta(meta, WriteBatch::default())?;
        Ok(true)
    }

    /// Removes `key`'s expiry; whether it had one.
    pub fn persist(&self, key: &[u8]) -> Result<bool> {
        let guard = self.store.lock(self.ns, key);
        match guard.meta()? {
            Some(meta) if meta.expire_at_ms != 0 => {
                let meta = Meta {
                    expire_at_ms: 0,
                    ..meta
                };
                guard.put_meta(meta, WriteBatch::default())?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// When `key` expires: `None` if it does not exist, `Some(0)` if it never expires,
    /// else the Unix time in milliseconds.
    pub fn expire_time(&self, key: &[u8]) -> Result<Option<u64>> {
        Ok(self.store.meta(self.ns, key)?.map(|m| m.expire_at_ms))
    }

    /// Deletes every key of the namespace (Redis's `FLUSHDB`), a page of keys at a time;
    /// returns how many were deleted. Keys written while it runs may survive it.
    pub fn flush(&self) -> Result<u64> {
        let mut deleted = 0;
        let mut after: Option<Vec<u8>> = None;
        loop {
            let page = self.scan(after.as_deref(), 1024)?;
            let Some((last, _)) = page.last() else {
                return Ok(deleted);
            };
            after = Some(last.clone());
            for (key, _) in &page {
                deleted += u64::from(self.delete(key)?);
            }
        }
    }
}

/// A bounded map from meta key to metadata. When full, an arbitrary entry makes room:
/// a miss costs one point read, so a simple policy is enough.
struct MetaCache {
    map: RwLock<HashMap<Vec<u8>, Meta>>,
    capacity: usize,
}

impl MetaCache {
    fn new(capacity: usize) -> MetaCache {
        MetaCache {
            map: RwLock::new(HashMap::new()),
            capacity,
        }
    }

    fn get(&self, key: &[u8]) -> Option<Meta> {
        self.map.read().get(key).copied()
    }

    fn insert(&self, key: Vec<u8>, meta: Meta) {
        if self.capacity == 0 {
            return;
        }
        let mut map = self.map.write();
        if map.len() >= self.capacity && !map.contains_key(&key) {
            if let Some(victim) = map.keys().next().cloned() {
                map.remove(&victim);
            }
        }
        map.insert(key, meta);
    }

    fn remove(&self, key: &[u8]) {
        self.map.write().remove(key);
    }
}

fn live(meta: Option<Meta>) -> Option<Meta> {
    meta.filter(|m| !m.is_expired(now_ms()))
}

/// Names the in-memory count of sub-filter `sub` of a key version.
fn hint_slot(prefix: &[u8], sub: u32) -> Vec<u8> {
    keys::page_key(prefix, sub as u16, u32::MAX)
}

/// Bounded map of in-memory counts (see [`Store::count_hint`]).
struct CountHints {
    map: RwLock<HashMap<Vec<u8>, Arc<AtomicU64>>>,
    capacity: usize,
}

impl CountHints {
    fn new(capacity: usize) -> CountHints {
        CountHints {
            map: RwLock::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// Inserts unless another thread got there first; returns the entry kept.
    fn insert(&self, slot: Vec<u8>, hint: Arc<AtomicU64>) -> Arc<AtomicU64> {
        let mut map = self.map.write();
        if map.len() >= self.capacity && !map.contains_key(&slot) {
            if let Some(victim) = map.keys().next().cloned() {
                map.remove(&victim);
            }
        }
        map.entry(slot).or_insert(hint).clone()
    }
}

/// The namespace of the store's own records in the meta column family. The RESP host
/// never maps a database to it (`SELECT` stops below it); library users must not use it.
pub const INTERNAL_NS: u16 = u16::MAX;

/// Marks a key version whose pages are being written in several batches.
const PENDING_TAG: &[u8] = b"pending-version:";

fn pending_key(prefix: &[u8]) -> Vec<u8> {
    let mut key = keys::meta_key(INTERNAL_NS, PENDING_TAG);
    key.extend_from_slice(prefix);
    key
}

/// Milliseconds since the Unix epoch.
/// The Unix time in milliseconds, as expiry times are kept.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_of_an_unfinished_multi_batch_write_are_dropped_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let pending = keys::version_prefix(0, b"k", 42);
        let live = keys::version_prefix(0, b"k", 41);
        let page = |prefix: &[u8]| keys::page_key(prefix, 0, 1);
        {
            let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
            store.mark_pending(&pending).unwrap();
            let mut batch = WriteBatch::default();
            let cf = store.pages_cf().unwrap();
            batch.put_cf(cf, page(&pending), b"half-written");
            batch.put_cf(cf, page(&live), b"kept");
            store.write(batch).unwrap();
            // The process dies here, before the switch.
        }
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let got = store
            .get_pages(&[page(&pending), page(&live)], &ReadOptions::default())
            .unwrap();
        assert_eq!(got, vec![None, Some(b"kept".to_vec())]);
        let marker = store
            .db()
            .get_cf(store.meta_cf().unwrap(), pending_key(&pending))
            .unwrap();
        assert_eq!(marker, None);
    }
}
