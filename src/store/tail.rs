//! Following the live write-ahead log as RocksDB appends to it, for a replica that has
//! caught up: each poll reads only the bytes appended since the last one.
//!
//! RocksDB's own iterator (`GetUpdatesSince`, [`Store::updates_since`]) seeks by
//! reading its log file from the start, checksums and all, every time it is made, and
//! one made when the replica has everything must be made again for the next write: on
//! a busy primary that re-read the file a thousand times a second (perf: 43 % of the
//! primary's CPU in `SeekToStartSequence`'s crc32c with two replicas). So the primary
//! keeps its place in the file instead, reading RocksDB's log format itself
//! ([`rocksketch_merge::wal_log`]). Bytes a poll cannot make whole yet (a record still
//! being written) wait for the next poll. When the file has nothing
//! more and a newer log exists, RocksDB has switched logs (it writes no more to the old
//! one), and the tail moves on. Any doubt (a gap in sequence numbers, a record that
//! stays corrupt, a log deleted before it was opened) is an error: the caller falls back
//! to RocksDB's iterator, and the replica's own check refuses a gap in any case.

use super::Store;
use crate::error::{Error, Result};
use rocksketch_merge::wal_log::{self, parse, Parsed};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

const BLOCK: u64 = wal_log::BLOCK;
/// Bytes read from the file in one poll at most.
const READ_MAX: usize = 4 << 20;
/// Polls a record may stay unreadable (a write in progress) before it is corruption.
const PATIENCE: u32 = 5000;

/// A position in the live write-ahead log (see the module's docs).
pub struct WalTail {
    dir: PathBuf,
    number: u64,
    file: File,
    /// The file offset of `buf[0]`.
    at: u64,
    buf: Vec<u8>,
    /// A batch cut across blocks, so far.
    fragment: Option<Vec<u8>>,
    /// The sequence number of the next batch to hand out.
    next: u64,
    stuck: u32,
}

impl Store {
    /// A tail of the live write-ahead log from the batch after sequence `after` on, or
    /// `None` where the live logs no longer hold it (or the store is a host's, whose
    /// log may be elsewhere): use [`Store::updates_since`] then.
    pub fn tail_wal(&self, after: u64) -> Result<Option<WalTail>> {
        if self.inner.watch.is_none() {
            return Ok(None);
        }
        let (dir, latest) = {
            let db = self.db()?;
            (db.path().to_path_buf(), db.latest_sequence_number())
        };
        let mut logs = log_numbers(&dir)?;
        logs.sort_unstable();
        // The newest log whose first batch is at or before the one wanted.
        for &number in logs.iter().rev() {
            let Ok(mut tail) = WalTail::open(&dir, number, after + 1) else {
                continue;
            };
            match tail.first_sequence()? {
                Some(first) if first <= after + 1 => return Ok(Some(tail)),
                // Nothing written to the newest log yet: right if nothing is newer.
                None if number == logs.last().copied().unwrap_or(0) && latest == after => {
                    return Ok(Some(tail))
                }
                _ => {}
            }
        }
        Ok(None)
    }
}

impl WalTail {
    fn open(dir: &Path, number: u64, next: u64) -> std::io::Result<WalTail> {
        Ok(WalTail {
            dir: dir.to_owned(),
            number,
            file: File::open(log_path(dir, number))?,
            at: 0,
            buf: Vec::new(),
            fragment: None,
            next,
            stuck: 0,
        })
    }

    /// The sequence number of the file's first batch, if one is written (the tail is
    /// left at the start of the file).
    fn first_sequence(&mut self) -> Result<Option<u64>> {
        // The first batch starts in the first block, and is rarely longer than a few.
        (&mut self.file)
            .take(4 * BLOCK)
            .read_to_end(&mut self.buf)?;
        let mut at = 0;
        let mut fragment = None;
        let mut first = None;
        parse(&self.buf, self.at, &mut at, &mut fragment, &mut |batch| {
            first = first.or(sequence_of(batch));
            false
        })
        .map_err(|e| broken(&e.0))?;
        Ok(first)
    }

    /// The batches appended since the last poll, at most about `max`, oldest first, as
    /// `(first sequence, bytes)`; empty when nothing new is whole yet.
    pub fn poll(&mut self, max: usize) -> Result<Vec<(u64, Vec<u8>)>> {
        let mut out = Vec::new();
        loop {
            let read = self.fill()?;
            let mut at = 0;
            let mut fragment = self.fragment.take();
            let mut failed = None;
            let next = &mut self.next;
            let whole = parse(&self.buf, self.at, &mut at, &mut fragment, &mut |batch| {
                match accept(batch, next) {
                    Ok(Some(sequence)) => out.push((sequence, batch.to_vec())),
                    Ok(None) => {}
                    Err(e) => failed = Some(e),
                }
                failed.is_none() && out.len() < max
            });
            self.fragment = fragment;
            self.buf.drain(..at);
            self.at += at as u64;
            if let Some(e) = failed {
                return Err(e);
            }
            let whole = whole.map_err(|e| broken(&e.0))?;
            match whole {
                Parsed::Corrupt if self.stuck >= PATIENCE => {
                    return Err(broken(&format!(
                        "log {} stays unreadable at offset {}",
                        self.number, self.at
                    )))
                }
                Parsed::Corrupt => self.stuck += 1,
                _ => self.stuck = 0,
            }
            if !out.is_empty() || read > 0 || !matches!(whole, Parsed::End) {
                return Ok(out);
            }
            // Nothing more in this log: move on if RocksDB has switched to a newer one
            // (and this one has nothing appended since the look).
            let Some(newer) = self.newer_log()? else {
                return Ok(out);
            };
            if self.fill()? > 0 {
                continue;
            }
            if !self.buf.is_empty() || self.fragment.is_some() {
                return Err(broken(&format!("log {} ends inside a record", self.number)));
            }
            let next = self.next;
            *self = WalTail::open(&self.dir, newer, next)
                .map_err(|e| broken(&format!("log {newer} cannot be opened: {e}")))?;
        }
    }

    /// Reads what the file has beyond the buffer (at most [`READ_MAX`]); the bytes read.
    fn fill(&mut self) -> Result<usize> {
        let start = self.buf.len();
        let mut chunk = (&mut self.file).take(READ_MAX as u64);
        chunk.read_to_end(&mut self.buf)?;
        Ok(self.buf.len() - start)
    }

    fn newer_log(&self) -> Result<Option<u64>> {
        Ok(log_numbers(&self.dir)?
            .into_iter()
            .filter(|&n| n > self.number)
            .min())
    }
}

/// Checks a batch against the sequence expected next: `Some(sequence)` to hand out,
/// `None` to skip (older than wanted, or empty), a gap an error.
fn accept(batch: &[u8], next: &mut u64) -> Result<Option<u64>> {
    let (sequence, count) = super::wal::header(batch)?;
    let end = sequence + u64::from(count);
    if end <= *next || count == 0 {
        return Ok(None);
    }
    if sequence != *next {
        return Err(broken(&format!(
            "a gap: batch {sequence} where {} was next",
            *next
        )));
    }
    *next = end;
    Ok(Some(sequence))
}

fn sequence_of(batch: &[u8]) -> Option<u64> {
    super::wal::header(batch).ok().map(|(sequence, _)| sequence)
}

fn broken(what: &str) -> Error {
    Error::Storage(format!("following the write-ahead log: {what}"))
}

fn log_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.log"))
}

/// The numbers of the live logs in `dir`.
fn log_numbers(dir: &Path) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        if let Some(number) = name.strip_suffix(".log").and_then(|n| n.parse().ok()) {
            out.push(number);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::{Store, StoreOptions};

    /// Writes of every size (a batch cut across blocks among them) with log switches
    /// (flushes) between them: the tail hands out exactly what RocksDB's iterator does,
    /// polled as the writes come, and started from any offset the live logs hold.
    #[test]
    fn the_tail_reads_what_rocksdbs_iterator_reads() {
        let dir = tempfile::tempdir().unwrap();
        // Flushed logs kept, so that RocksDB's iterator can read them all to compare.
        let options = StoreOptions {
            wal_keep_seconds: 3600,
            ..StoreOptions::default()
        };
        let store = Store::open(dir.path(), options).unwrap();
        let ns = store.ns(0);
        ns.cms(b"c").init_by_dim(1000, 4).unwrap();
        let start = store.latest_sequence().unwrap();
        let mut tail = store
            .tail_wal(start)
            .unwrap()
            .expect("the live log holds it");
        let mut got = Vec::new();
        for round in 0..40u32 {
            for i in 0..(round % 7) * 30 {
                let item = format!("{round}-{i}");
                ns.cms(b"c").incr_by(&[(item.as_bytes(), 1)]).unwrap();
            }
            // A large batch: a TDIGEST.ADD of many values, cut across 32 KiB blocks.
            if round % 5 == 0 {
                let values: Vec<f64> = (0..6000).map(f64::from).collect();
                let td = ns.tdigest(b"td");
                let _ = td.create(100);
                td.add(&values).unwrap();
            }
            if round % 9 == 4 {
                store.flush().unwrap(); // a new log
            }
            got.extend(tail.poll(1000).unwrap());
        }
        got.extend(tail.poll(usize::MAX).unwrap());
        let want = store.updates_since(start, usize::MAX).unwrap();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the tail differs from RocksDB's iterator");
        assert!(tail.poll(10).unwrap().is_empty());

        // Started from every offset the live logs still hold.
        let latest = store.latest_sequence().unwrap();
        let mut started = 0;
        for (sequence, _) in &want {
            let after = sequence - 1;
            if let Some(mut tail) = store.tail_wal(after).unwrap() {
                started += 1;
                let all = tail.poll(usize::MAX).unwrap();
                assert_eq!(all, store.updates_since(after, usize::MAX).unwrap());
            }
        }
        assert!(started > 0);
        assert!(store.tail_wal(latest).unwrap().is_some(), "at the end");
    }
}
