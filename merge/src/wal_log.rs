//! RocksDB's write-ahead log format, read as it is appended to (and written, for tests
//! and fuzzing), so that a primary can follow its live log without re-reading it.
//!
//! ```text
//! file:    32 KiB blocks; a block's last < 7 bytes are zero padding
//! record:  crc32c u32 LE (masked, of type and payload) | length u16 LE | type u8 | payload
//! types:   1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST (a batch cut across blocks);
//!          10 timestamp sizes and any type with bit 7 set: skipped; 0: not written yet;
//!          recycled-log and compression types: refused
//! payload: a write batch (`sequence u64 | count u32 | records`, see [`crate::batch`])
//! ```
//! (RocksDB's `db/log_format.h`, `db/log_writer.cc`.) Bytes that do not make a whole
//! record yet are left for the next call: the log may be in the middle of a write.

use crate::batch::BadBatch;

/// The log's block size.
pub const BLOCK: u64 = 32 << 10;
const HEADER: usize = 7;
const MASK_DELTA: u32 = 0xa282_ead8;

/// How a walk over the bytes at hand ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// Every whole record was read; the rest (if any) is not whole yet.
    End,
    /// The taker asked to stop.
    Stopped,
    /// A record whose checksum does not match: corrupt, or still being written.
    Corrupt,
}

/// Walks the whole records of `buf` (which starts at file offset `base`) from `*at`,
/// handing each batch to `take` (which answers whether to go on); `*at` ends after
/// the last record walked. A batch cut across blocks is gathered in `fragment`, which
/// the caller keeps between calls.
pub fn parse(
    buf: &[u8],
    base: u64,
    at: &mut usize,
    fragment: &mut Option<Vec<u8>>,
    take: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<Parsed, BadBatch> {
    loop {
        let offset = base + *at as u64;
        let left_in_block = (BLOCK - offset % BLOCK) as usize;
        let rest = buf.get(*at..).unwrap_or_default();
        if left_in_block < HEADER {
            if rest.len() < left_in_block {
                return Ok(Parsed::End);
            }
            *at += left_in_block;
            continue;
        }
        let Some((header, body)) = rest.split_first_chunk::<HEADER>() else {
            return Ok(Parsed::End);
        };
        let [c0, c1, c2, c3, l0, l1, kind] = *header;
        let crc = u32::from_le_bytes([c0, c1, c2, c3]);
        let len = usize::from(u16::from_le_bytes([l0, l1]));
        if kind == 0 {
            // Not written yet (or preallocated): wait.
            return Ok(Parsed::End);
        }
        let Some(payload) = body.get(..len) else {
            return Ok(Parsed::End);
        };
        if unmask(crc) != crc32c::crc32c_append(crc32c::crc32c(&[kind]), payload) {
            return Ok(Parsed::Corrupt);
        }
        let mut go_on = true;
        match kind {
            1 => go_on = take(payload),
            2 => *fragment = Some(payload.to_vec()),
            3 | 4 => {
                let Some(mut batch) = fragment.take() else {
                    return Err(BadBatch("a batch's piece without its start".to_owned()));
                };
                batch.extend_from_slice(payload);
                if kind == 4 {
                    go_on = take(&batch);
                } else {
                    *fragment = Some(batch);
                }
            }
            10 => {}
            k if k & 0x80 != 0 => {}
            k => return Err(BadBatch(format!("a log record of type {k}"))),
        }
        *at += HEADER + len;
        if !go_on {
            return Ok(Parsed::Stopped);
        }
    }
}

/// RocksDB's `crc32c::Unmask`.
fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Appends `batch` to a log whose bytes are `log`, as RocksDB's log writer does
/// (records cut at block ends, short block tails zero-padded).
pub fn append(log: &mut Vec<u8>, batch: &[u8]) {
    let mut left = batch;
    let mut first = true;
    loop {
        let room = (BLOCK - log.len() as u64 % BLOCK) as usize;
        if room < HEADER {
            log.resize(log.len() + room, 0);
            continue;
        }
        let take = left.len().min(room - HEADER);
        let (piece, rest) = left.split_at(take);
        let kind = match (first, rest.is_empty()) {
            (true, true) => 1,
            (true, false) => 2,
            (false, false) => 3,
            (false, true) => 4,
        };
        let crc = mask(crc32c::crc32c_append(crc32c::crc32c(&[kind]), piece));
        log.extend_from_slice(&crc.to_le_bytes());
        log.extend_from_slice(&(take as u16).to_le_bytes());
        log.push(kind);
        log.extend_from_slice(piece);
        if rest.is_empty() {
            return;
        }
        left = rest;
        first = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(sequence: u64, len: usize) -> Vec<u8> {
        let mut out = sequence.to_le_bytes().to_vec();
        out.extend_from_slice(&1u32.to_le_bytes());
        out.resize(12 + len, sequence as u8);
        out
    }

    #[test]
    fn batches_of_every_size_read_back_from_any_cuts() {
        let batches: Vec<Vec<u8>> = (0..60u64)
            .map(|i| batch(i + 1, (i as usize * 977) % 70_000))
            .collect();
        let mut log = Vec::new();
        for b in &batches {
            append(&mut log, b);
        }
        for step in [1usize, 7, 4096, 32 << 10, 1 << 20] {
            let (mut got, mut at, mut fragment) = (Vec::new(), 0, None);
            let mut seen = 0;
            while seen < log.len() {
                seen = (seen + step).min(log.len());
                let parsed = parse(&log[..seen], 0, &mut at, &mut fragment, &mut |b| {
                    got.push(b.to_vec());
                    true
                });
                assert_ne!(parsed.unwrap(), Parsed::Corrupt);
            }
            assert_eq!(got, batches, "read {step} bytes at a time");
        }
        // A flipped byte is a checksum mismatch, never a wrong batch.
        let mut bad = log.clone();
        bad[10] ^= 1; // inside the first batch
        let (mut at, mut fragment) = (0, None);
        let parsed = parse(&bad, 0, &mut at, &mut fragment, &mut |_| true).unwrap();
        assert_eq!(parsed, Parsed::Corrupt);
        assert_eq!(at, 0);
    }
}
