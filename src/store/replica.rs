//! Replication's part of the store: the write batches after a sequence number, as a
//! primary ships them, and a replica's application of them with its caches kept
//! coherent.
//!
//! A write here is a RocksDB batch of small operands and the merge operator is
//! deterministic, so a replica that starts from a checkpoint of the primary and applies
//! the same batches in the same order holds the same records: replication ships the
//! write-ahead log (RocksDB's `GetUpdatesSince`), it does not re-run commands. The
//! sequence numbers are the replication offset: a replica started from a checkpoint
//! holds the primary's sequence, and each batch applied advances both alike.

use super::hot::PageWrite;
use super::wal::{self, Record};
use super::Store;
use crate::error::{Error, Result};
use crate::keys;
use rocksdb::WriteBatch;
use std::sync::atomic::Ordering;

impl Store {
    /// The sequence number of the newest write: the replication offset.
    pub fn latest_sequence(&self) -> Result<u64> {
        Ok(self.db()?.latest_sequence_number())
    }

    /// The write batches after sequence `after`, oldest first, at most `max` of them,
    /// each as the sequence number of its first write and its bytes (RocksDB's
    /// `WriteBatch::data`, what [`Store::apply_replicated`] takes). Empty when nothing
    /// is newer. An error when the write-ahead log no longer reaches back to `after`
    /// (a replica that far behind needs a checkpoint first).
    pub fn updates_since(&self, after: u64, max: usize) -> Result<Vec<(u64, Vec<u8>)>> {
        let db = self.db()?;
        if db.latest_sequence_number() <= after {
            return Ok(Vec::new());
        }
        let mut out: Vec<(u64, Vec<u8>)> = Vec::new();
        for update in db.get_updates_since(after)? {
            let (sequence, batch) = update?;
            let next = out.last().map_or(after + 1, |(s, data)| {
                s + u64::from(wal::header(data).map_or(0, |(_, count)| count))
            });
            if sequence != next {
                return Err(Error::Storage(format!(
                    "the write-ahead log no longer holds the writes after {after} \
                     (it resumes at {sequence}, {next} was next)"
                )));
            }
            out.push((sequence, batch.data().to_vec()));
            if out.len() >= max {
                break;
            }
        }
        Ok(out)
    }

    /// Applies a batch a primary wrote ([`Store::updates_since`]) as one atomic write,
    /// and keeps this store's caches as if it had made the write itself: the hot pages
    /// it touches take its operands (or are dropped), the metadata of the keys it
    /// writes is read anew, under those keys' locks so that no reader caches what the
    /// batch replaced. A batch that does not decode is refused whole, nothing written.
    /// For a replica: the store must take no writes of its own meanwhile.
    pub fn apply_replicated(&self, data: &[u8]) -> Result<()> {
        let records = wal::records_cf(data)?;
        // Which family a write is in matters only to range deletes (rare): the
        // families' numbers are looked up only for a batch that has one.
        let ranges = records
            .iter()
            .any(|(_, r)| matches!(r, Record::DeleteRange(..)));
        let meta_cf = if ranges {
            Some(self.family_ids()?.0)
        } else {
            None
        };
        let records: Vec<_> = records
            .into_iter()
            .map(|(cf, record)| (Some(cf) == meta_cf, record))
            .collect();
        self.apply_records(WriteBatch::from_data(data), &records)
    }

    /// Writes `batch`, whose writes are `records`, as one atomic write with this
    /// store's caches kept coherent (see [`Store::apply_replicated`]); each record
    /// says whether it writes the metadata family.
    pub(crate) fn apply_records(
        &self,
        batch: WriteBatch,
        records: &[(bool, Record<'_>)],
    ) -> Result<()> {
        let mut metas: Vec<(u16, &[u8])> = Vec::new();
        let mut pages: Vec<(Vec<u8>, PageWrite)> = Vec::new();
        let mut dropped: Vec<(&[u8], &[u8])> = Vec::new();
        let mut metas_dropped = false;
        for &(meta, ref record) in records {
            match *record {
                Record::Merge(key, operand) => {
                    pages.push((key.to_vec(), PageWrite::Merge(operand.to_vec())));
                }
                Record::Put(key, _) | Record::Delete(key) => {
                    // Either family: a page replaced, or a key's metadata.
                    pages.push((key.to_vec(), PageWrite::Drop));
                    metas.extend(keys::split_meta_key(key));
                }
                Record::DeleteRange(from, to) => {
                    dropped.push((from, to));
                    metas_dropped |= meta;
                }
            }
        }
        let _held = self.inner.locks.exclusive_many(&metas);
        let hot = &self.inner.hot;
        hot.begin_writes(pages.iter().map(|(key, _)| key.as_slice()));
        let written = self
            .db()
            .and_then(|db| Ok(db.write_opt(batch, &self.inner.write_opts)?));
        hot.end_writes(
            pages.iter().map(|(key, write)| (key.as_slice(), write)),
            written.is_ok(),
        );
        for (from, to) in dropped {
            hot.drop_range(from, to);
        }
        for (ns, key) in metas {
            self.inner.cache.remove(&keys::meta_key(ns, key));
        }
        if metas_dropped {
            // A range of metadata is gone (a migrated slot dropped by its old node):
            // no cached record may outlive it.
            self.inner.cache.clear();
        }
        written
    }

    /// Makes this store a replica (`true`): every write of its own is refused with
    /// [`Error::ReadOnly`], and reads that would store what they computed (a t-digest
    /// query's compress operand) answer without storing it, so that the store holds
    /// exactly what its primary ships. `false` (a promotion) takes writes again, after
    /// forgetting the item counts kept to steer chain growth, which replicated writes
    /// did not move (the first writes read them from the tallies), and after dropping
    /// the pages of any multi-batch write (a streamed `CMS.MERGE`) the old primary did
    /// not finish, as a primary does when it opens.
    pub fn set_replica(&self, replica: bool) -> Result<()> {
        if replica {
            self.inner.replica.store(true, Ordering::SeqCst);
            return Ok(());
        }
        self.inner.hints.clear();
        self.inner.replica.store(false, Ordering::SeqCst);
        self.drop_abandoned_versions()
    }

    /// Whether this store is a replica ([`Store::set_replica`]).
    pub fn is_replica(&self) -> bool {
        self.inner.replica.load(Ordering::SeqCst)
    }
}
