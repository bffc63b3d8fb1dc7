//! How a store opens its database: its options and column families.

use crate::error::{Error, Result};
use crate::operator::register_merge_operator;
use rocksdb::{BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, DB};
use std::path::Path;

/// Name of the column family that holds metadata records.
pub const META_CF: &str = "meta";
/// Name of the column family that holds pages; the merge operator is registered here.
pub const PAGES_CF: &str = "pages";

/// Options of a [`Store`](crate::Store).
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// Sync the WAL on every write (durable against power loss, slower). Default: off;
    /// the WAL itself is always on, so acknowledged writes survive a process crash.
    pub sync_writes: bool,
    /// Bytes per page of new Bloom and cuckoo filters and count-min sketches (each keeps
    /// the size it was made with). Default 16 KiB (4096 counters): see the README's
    /// benchmark section for why; `rocksketch serve` makes 64 KiB pages when its
    /// hot-page cache is 256 MiB or more (`--page-bytes`).
    pub page_bytes: u32,
    /// Metadata records kept in memory. Default 100 000.
    pub meta_cache_entries: usize,
    /// RocksDB's `max_successive_merges` for the pages column family: once a page has
    /// this many operands in the memtable, the next write folds them into one value, so
    /// a read never merges a long pile of operands. `Store::open` makes the bound strict
    /// (it holds even when the fold must read a block from a file). Default 0 (off): the
    /// hot-page cache answers reads of the pages being written, and the bound costs every
    /// write a walk of its page's operands in the memtable and every 32nd a full merge
    /// of the page (half of `CF.ADD`'s throughput on one hot filter). Set it (32 is a
    /// good value) for a store whose cache is off or much smaller than its hot pages.
    pub max_successive_merges: usize,
    /// Memtable size of the pages column family. Default 32 MiB.
    pub write_buffer_bytes: usize,
    /// Block cache shared by both column families. Default 64 MiB.
    pub block_cache_bytes: usize,
    /// The hot-page cache: decoded pages kept in memory, read without RocksDB and
    /// updated by every write (see the README). Default 64 MiB; 0 turns it off.
    pub page_cache_bytes: usize,
    /// Open as a replica ([`crate::Store::set_replica`]): writes of its own are refused
    /// from the start, and the pages of a multi-batch write a previous process left
    /// unfinished are kept, since the primary's next batches finish or drop them (a
    /// primary drops them at open). Default: off.
    pub replica: bool,
    /// How long write-ahead log files are kept after their writes are flushed, in
    /// seconds, so that a replica that falls behind or reconnects resumes from the log
    /// (RocksDB's `WAL_ttl_seconds`; checked every ten minutes at most). With both this
    /// and [`StoreOptions::wal_keep_mb`] 0 (the default), only the live logs, the
    /// writes since the last flush, can be shipped.
    pub wal_keep_seconds: u64,
    /// The most megabytes of flushed write-ahead logs kept (RocksDB's
    /// `WAL_size_limit_MB`), oldest dropped first. Default 0.
    pub wal_keep_mb: u64,
    /// The time sliding windows are read by ([`crate::window`]): the system clock by
    /// default; [`crate::Clock::manual`] lets a test drive it. Key expiry (TTL) keeps the
    /// system clock.
    pub clock: crate::Clock,
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            sync_writes: false,
            page_bytes: 16 << 10,
            meta_cache_entries: 100_000,
            max_successive_merges: 0,
            write_buffer_bytes: 32 << 20,
            block_cache_bytes: 64 << 20,
            page_cache_bytes: 64 << 20,
            replica: false,
            wal_keep_seconds: 0,
            wal_keep_mb: 0,
            clock: crate::Clock::system(),
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
        with_insert_hints(opts)
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

/// Opens (creating if needed) the database of [`super::Store::open`] in `dir`, or opens it
/// read-only (for reads while a reopen after a write error fails).
pub(crate) fn open_db(
    dir: &Path,
    options: &StoreOptions,
    cache: &Cache,
    read_only: bool,
) -> Result<DB> {
    let mut db_opts = rocksdb::Options::default();
    db_opts.create_if_missing(true);
    db_opts.create_missing_column_families(true);
    db_opts.set_max_background_jobs(2);
    db_opts.set_wal_ttl_seconds(options.wal_keep_seconds);
    db_opts.set_wal_size_limit_mb(options.wal_keep_mb);
    let cfs = options.column_families(cache);
    if read_only {
        return Ok(DB::open_cf_descriptors_read_only(
            &db_opts, dir, cfs, false,
        )?);
    }
    let db = DB::open_cf_descriptors(&db_opts, dir, cfs)?;
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
    Ok(db)
}

/// Says in the log (the `log` facade, where a server's operator looks) what the open just
/// dropped of torn write-ahead logs: RocksDB writes it only to its own `LOG` file, as
/// `<file>: dropping <n> bytes; Corruption: truncated record body` and the like. A crash
/// during an append leaves such a tail; the writes in it were never acknowledged.
pub(super) fn report_dropped_wal_bytes(dir: &Path) {
    let Ok(text) = std::fs::read_to_string(dir.join("LOG")) else {
        return;
    };
    for line in text.lines().filter(|l| l.contains(": dropping ")) {
        let what = line.split_once("] ").map_or(line, |(_, what)| what);
        log::warn!("opening the database dropped a torn write-ahead log tail: {what}");
    }
}

/// The same options with RocksDB's memtable insert hints keyed by the whole page key
/// (`memtable_insert_with_hint_prefix_extractor=rocksdb.Noop`). Every write of a hot page
/// lands next to that page's previous operand, so the memtable keeps each page's last
/// insert position and the skiplist search starts there: without it the search from the
/// top of a memtable of some 10^5 operands was the largest cost of an answered write
/// (a fifth of `BF.ADD -P 16`). rust-rocksdb has no setter; RocksDB parses it from a
/// string option. If parsing ever failed, the options are used without hints.
fn with_insert_hints(mut opts: rocksdb::Options) -> rocksdb::Options {
    match opts.get_options_from_string("memtable_insert_with_hint_prefix_extractor=rocksdb.Noop") {
        Ok(hinted) => hinted,
        Err(error) => {
            log::warn!("memtable insert hints unavailable: {error}");
            opts
        }
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
    /// The metadata column family.
    pub meta: String,
    /// The pages column family, where the merge operator runs.
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
