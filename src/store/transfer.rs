//! A namespace moved whole from one store to another (a cluster slot's migration).
//!
//! Every record of namespace `ns` starts with its two bytes in both column families,
//! so the namespace is one key range per family: `[ns, ns + 1)`. The source exports
//! the range as of one snapshot ([`Store::export_ns`]: metadata and pages as they read,
//! operands merged), then the writes to the range its write-ahead log holds after the
//! snapshot's sequence number ([`Store::ns_changes`]); the target writes both with
//! [`Store::import_ns`], which refuses any write outside the namespace, and the
//! source drops the range at the end ([`Store::drop_ns`]). Chunks are
//! [`rocksketch_merge::transfer`]'s, which name column families by role: two stores
//! number theirs independently.

use super::wal::{self, Record};
use super::{Store, INTERNAL_NS};
use crate::error::{Error, Result};
use rocksdb::{IteratorMode, ReadOptions, WriteBatch};
use rocksketch_merge::transfer::{self, Family, Op};

impl Store {
    /// Hands every metadata record and page of namespace `ns`, as of one snapshot, to
    /// `send` in chunks of about `chunk_bytes` (puts of the values as they read); the
    /// snapshot's sequence number: the namespace's later writes are those
    /// [`Store::ns_changes`] finds after it. Holds the database handle throughout (a
    /// reopen after a write error waits for it).
    pub fn export_ns(
        &self,
        ns: u16,
        chunk_bytes: usize,
        mut send: impl FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<u64> {
        let db = self.db()?;
        let snapshot = db.snapshot();
        let (from, to) = ns_range(ns)?;
        let mut chunk = transfer::begin();
        for (family, cf) in [
            (Family::Meta, db.meta_cf()?),
            (Family::Pages, db.pages_cf()?),
        ] {
            let mut options = ReadOptions::default();
            options.set_snapshot(&snapshot);
            options.set_iterate_upper_bound(to.clone());
            options.fill_cache(false);
            let mode = IteratorMode::From(&from, rocksdb::Direction::Forward);
            for item in db.iterator_cf_opt(cf, options, mode) {
                let (key, value) = item?;
                Op::Put(family, &key, &value).encode_into(&mut chunk);
                if chunk.len() >= chunk_bytes {
                    send(std::mem::replace(&mut chunk, transfer::begin()))?;
                }
            }
        }
        if chunk.len() > 1 {
            send(chunk)?;
        }
        Ok(snapshot.sequence_number())
    }

    /// The writes to namespace `ns` in `batches` (as [`Store::updates_since`] returns
    /// them) whose sequence number is at most `upto`, as chunks of about `chunk_bytes`
    /// (none if there are no such writes). Writes to other column families than the
    /// store's two are not kept.
    pub fn ns_changes(
        &self,
        ns: u16,
        batches: &[(u64, Vec<u8>)],
        upto: u64,
        chunk_bytes: usize,
    ) -> Result<Vec<Vec<u8>>> {
        let (meta_cf, pages_cf) = self.family_ids()?;
        let (from, to) = ns_range(ns)?;
        let inside = |key: &[u8]| key >= from.as_slice() && key < to.as_slice();
        let mut chunks = Vec::new();
        let mut chunk = transfer::begin();
        for (first, data) in batches {
            for (at, (cf, record)) in wal::records_cf(data)?.into_iter().enumerate() {
                if first + at as u64 > upto {
                    break;
                }
                let family = match cf {
                    _ if cf == meta_cf => Family::Meta,
                    _ if cf == pages_cf => Family::Pages,
                    _ => continue,
                };
                let op = match record {
                    Record::Put(k, v) if inside(k) => Op::Put(family, k, v),
                    Record::Merge(k, v) if inside(k) => Op::Merge(family, k, v),
                    Record::Delete(k) if inside(k) => Op::Delete(family, k),
                    Record::DeleteRange(a, b) => {
                        // A range reaching into the namespace, cut to it.
                        let (a, b) = (a.max(from.as_slice()), b.min(to.as_slice()));
                        if a >= b {
                            continue;
                        }
                        Op::DeleteRange(family, a, b)
                    }
                    _ => continue,
                };
                op.encode_into(&mut chunk);
                if chunk.len() >= chunk_bytes {
                    chunks.push(std::mem::replace(&mut chunk, transfer::begin()));
                }
            }
        }
        if chunk.len() > 1 {
            chunks.push(chunk);
        }
        Ok(chunks)
    }

    /// Writes a chunk another store exported or found for namespace `ns`, as one atomic
    /// write with this store's caches kept coherent; how many writes it held. A chunk
    /// that does not decode, or writes anything outside the namespace, is refused
    /// whole, nothing written.
    pub fn import_ns(&self, ns: u16, chunk: &[u8]) -> Result<usize> {
        let ops = transfer::decode(chunk).map_err(|e| Error::Storage(e.to_string()))?;
        let (from, to) = ns_range(ns)?;
        let inside = |key: &[u8]| key >= from.as_slice() && key < to.as_slice();
        let db = self.db()?;
        let (meta, pages) = (db.meta_cf()?, db.pages_cf()?);
        let mut batch = WriteBatch::default();
        let mut records = Vec::with_capacity(ops.len());
        for op in &ops {
            let (family, key) = op.target();
            let fits = match *op {
                Op::DeleteRange(_, a, b) => inside(a) && a < b && b <= to.as_slice(),
                _ => inside(key),
            };
            if !fits {
                return Err(Error::InvalidArgument(format!(
                    "a migrated write outside namespace {ns} was refused"
                )));
            }
            let cf = match family {
                Family::Meta => meta,
                Family::Pages => pages,
            };
            let record = match *op {
                Op::Put(_, k, v) => {
                    batch.put_cf(cf, k, v);
                    Record::Put(k, v)
                }
                Op::Merge(_, k, v) => {
                    batch.merge_cf(cf, k, v);
                    Record::Merge(k, v)
                }
                Op::Delete(_, k) => {
                    batch.delete_cf(cf, k);
                    Record::Delete(k)
                }
                Op::DeleteRange(_, a, b) => {
                    batch.delete_range_cf(cf, a, b);
                    Record::DeleteRange(a, b)
                }
            };
            records.push((family == Family::Meta, record));
        }
        drop(db);
        self.apply_records(batch, &records)?;
        Ok(ops.len())
    }

    /// Deletes every record of namespace `ns` (one range delete per column family, in
    /// one batch) and forgets what the caches hold of it.
    pub fn drop_ns(&self, ns: u16) -> Result<()> {
        let (from, to) = ns_range(ns)?;
        let db = self.db()?;
        let mut batch = WriteBatch::default();
        batch.delete_range_cf(db.meta_cf()?, &from, &to);
        batch.delete_range_cf(db.pages_cf()?, &from, &to);
        drop(db);
        let records = [
            (true, Record::DeleteRange(&from, &to)),
            (false, Record::DeleteRange(&from, &to)),
        ];
        self.apply_records(batch, &records)
    }

    /// The numbers RocksDB gives the metadata and the pages column families in write
    /// batches (read back from a batch that is never written).
    pub(crate) fn family_ids(&self) -> Result<(u32, u32)> {
        let db = self.db()?;
        let mut probe = WriteBatch::default();
        probe.delete_cf(db.meta_cf()?, b"");
        probe.delete_cf(db.pages_cf()?, b"");
        match wal::records_cf(probe.data())?.as_slice() {
            [(meta, _), (pages, _)] => Ok((*meta, *pages)),
            _ => Err(Error::Storage("a probe batch read back wrong".to_owned())),
        }
    }
}

/// While held, RocksDB deletes no file: a migration reads the write-ahead log from its
/// snapshot's sequence number on, which a flush would otherwise make obsolete (and
/// files compacted away stay on disk until it lets go).
pub struct LogsHeld {
    store: Store,
}

impl Store {
    /// Keeps every write-ahead log (and table file) until the result is dropped.
    pub fn hold_logs(&self) -> Result<LogsHeld> {
        self.db()?.disable_file_deletions()?;
        Ok(LogsHeld {
            store: self.clone(),
        })
    }
}

impl Drop for LogsHeld {
    fn drop(&mut self) {
        // A database reopened meanwhile (after a write error) deletes files already.
        if let Ok(db) = self.store.db() {
            if let Err(e) = db.enable_file_deletions() {
                log::warn!("file deletions stay off: {e}");
            }
        }
    }
}

/// The keys of namespace `ns` in either family: `[ns, ns + 1)`, big-endian. The
/// store's own namespace, the last, never moves.
fn ns_range(ns: u16) -> Result<(Vec<u8>, Vec<u8>)> {
    match ns.checked_add(1) {
        Some(next) if ns != INTERNAL_NS => {
            Ok((ns.to_be_bytes().to_vec(), next.to_be_bytes().to_vec()))
        }
        _ => Err(Error::InvalidArgument(
            "the store's own namespace does not move".to_owned(),
        )),
    }
}
