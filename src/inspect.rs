//! `rocksketch inspect`: what a storage engineer asks of a store, read offline through a
//! read-only open (nothing is written, not even the WAL's replay): per key its type,
//! format version, parameters, pages, the merge operands waiting in each page and the
//! bytes it takes on disk; per column family its files by level.

use crate::keys;
use crate::meta::{KeyType, Meta};
use crate::store::{StoreOptions, META_CF, PAGES_CF};
use crate::{Error, Result};
use rocksdb::{Cache, Range, DB};
use std::collections::BTreeMap;
use std::path::Path;

/// A store, as [`inspect`] sees it.
#[derive(Debug, Clone)]
pub struct Report {
    /// The store's column families.
    pub column_families: Vec<CfReport>,
    /// Every key, in key order.
    pub keys: Vec<KeyReport>,
}

/// One column family: its files by level, and what sits in memory.
#[derive(Debug, Clone)]
pub struct CfReport {
    /// The column family's name.
    pub name: String,
    /// `(level, files, bytes)` for every level holding a file.
    pub levels: Vec<(i32, u64, u64)>,
    /// Bytes in its memtables.
    pub memtable_bytes: u64,
    /// RocksDB's estimate of its keys.
    pub estimated_keys: u64,
}

/// One key.
#[derive(Debug, Clone)]
pub struct KeyReport {
    /// The namespace (a server's database number).
    pub db: u16,
    /// The key.
    pub key: Vec<u8>,
    /// What it holds.
    pub key_type: KeyType,
    /// Distinguishes this incarnation of the key; its pages live under it.
    pub version: u64,
    /// Unix ms; 0 for never.
    pub expire_at_ms: u64,
    /// The parameters, as the engine holds them.
    pub params: String,
    /// Its pages, in order.
    pub pages: Vec<PageReport>,
    /// RocksDB's estimate of the key's pages in SST files.
    pub bytes_on_disk: u64,
}

/// One page of a key (sub-filter 65535 is the key's tally).
#[derive(Debug, Clone)]
pub struct PageReport {
    /// The sub-filter (or row group) the page belongs to.
    pub sub: u16,
    /// The page within it.
    pub page: u32,
    /// The page's bytes once merged (what a read decodes).
    pub bytes: usize,
    /// Merge operands stored after the page's base value, that a read or a compaction
    /// folds in (0 once compaction has folded them).
    pub operands: usize,
}

/// Opens `dir` read-only and reports every key (or only keys named `only`, in any
/// namespace) and every column family.
pub fn inspect(dir: &Path, only: Option<&[u8]>) -> Result<Report> {
    if !dir.join("CURRENT").is_file() {
        return Err(Error::InvalidArgument(format!(
            "{} holds no database",
            dir.display()
        )));
    }
    let options = StoreOptions::default();
    let cache = Cache::new_lru_cache(8 << 20);
    let db = crate::store::open_db(dir, &options, &cache, true)?;
    let column_families = [META_CF, PAGES_CF]
        .iter()
        .map(|name| cf_report(&db, name))
        .collect::<Result<_>>()?;
    let meta_cf = cf(&db, META_CF)?;
    let mut keys = Vec::new();
    for entry in db.iterator_cf(meta_cf, rocksdb::IteratorMode::Start) {
        let (raw_key, raw_meta) = entry?;
        let Some((ns, key)) = keys::split_meta_key(&raw_key) else {
            continue;
        };
        if only.is_some_and(|wanted| wanted != key) {
            continue;
        }
        let meta = Meta::decode(&raw_meta)
            .map_err(|source| Error::corrupt(key, "the metadata record", source))?;
        keys.push(key_report(&db, ns, key, &meta)?);
    }
    Ok(Report {
        column_families,
        keys,
    })
}

fn cf<'a>(db: &'a DB, name: &str) -> Result<&'a rocksdb::ColumnFamily> {
    db.cf_handle(name)
        .ok_or_else(|| Error::Storage(format!("column family {name} missing")))
}

fn cf_report(db: &DB, name: &str) -> Result<CfReport> {
    let mut levels: BTreeMap<i32, (u64, u64)> = BTreeMap::new();
    for file in db
        .live_files()?
        .iter()
        .filter(|f| f.column_family_name == name)
    {
        let level = levels.entry(file.level).or_default();
        level.0 += 1;
        level.1 += file.size as u64;
    }
    let handle = cf(db, name)?;
    let int = |property: &str| {
        db.property_int_value_cf(handle, property)
            .ok()
            .flatten()
            .unwrap_or(0)
    };
    Ok(CfReport {
        name: name.to_owned(),
        levels: levels
            .into_iter()
            .map(|(l, (files, bytes))| (l, files, bytes))
            .collect(),
        memtable_bytes: int("rocksdb.cur-size-all-mem-tables"),
        estimated_keys: int("rocksdb.estimate-num-keys"),
    })
}

fn key_report(db: &DB, ns: u16, key: &[u8], meta: &Meta) -> Result<KeyReport> {
    let pages_cf = cf(db, PAGES_CF)?;
    let prefix = keys::version_prefix(ns, key, meta.version);
    let mut pages = Vec::new();
    let mut iter = db.raw_iterator_cf(pages_cf);
    // The merge runs while the iterator steps onto a key: the count is read after each
    // step (the merge operator records how many operands it was given).
    crate::operator::take_merged_operands();
    iter.seek(&prefix);
    while let (Some(page_key), Some(value)) = (iter.key(), iter.value()) {
        let Some(rest) = page_key.strip_prefix(&prefix[..]) else {
            break;
        };
        let operands = crate::operator::take_merged_operands();
        if let (Some(sub), Some(page)) = (rest.get(..2), rest.get(2..6)) {
            pages.push(PageReport {
                sub: u16::from_be_bytes([sub[0], sub[1]]),
                page: u32::from_be_bytes([page[0], page[1], page[2], page[3]]),
                bytes: value.len(),
                operands,
            });
        }
        iter.next();
    }
    iter.status()?;
    let end = keys::prefix_end(&prefix).unwrap_or_default();
    let bytes_on_disk = db
        .get_approximate_sizes_cf(pages_cf, &[Range::new(&prefix[..], &end[..])])
        .first()
        .copied()
        .unwrap_or(0);
    Ok(KeyReport {
        db: ns,
        key: key.to_vec(),
        key_type: meta.key_type(),
        version: meta.version,
        expire_at_ms: meta.expire_at_ms,
        params: format!("{:?}", meta.params),
        pages,
        bytes_on_disk,
    })
}
