//! The frame around `SCANDUMP` chunks, shared by the filters' dump formats:
//!
//! ```text
//! magic [u8; 4] | version u8 | kind u8 | reserved u16 (zero) | crc32 u32 LE (of the payload) | payload
//! ```

mod dump;
mod window;

pub(crate) use dump::{loadchunk, scandump, split_page, Chain, ChainDump, DumpError};

use crate::error::Result;
use crate::keys;
use crate::store::Store;
use rocksdb::ReadOptions;
use rocksketch_merge::bytes::le_u32;

const VERSION_1: u8 = 1;
const FRAME_LEN: usize = 4 + 1 + 1 + 2 + 4;

/// Frames `payload` as a chunk of `kind`.
pub(crate) fn frame(magic: &[u8; 4], kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(FRAME_LEN + payload.len());
    out.extend_from_slice(magic);
    out.push(VERSION_1);
    out.push(kind);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// A chunk's kind and payload, if its frame (magic, version, checksum) is intact.
pub(crate) fn unframe<'a>(magic: &[u8; 4], chunk: &'a [u8]) -> Option<(u8, &'a [u8])> {
    let (head, payload) = chunk.split_at_checked(FRAME_LEN)?;
    let intact = head.starts_with(magic)
        && head.get(4) == Some(&VERSION_1)
        && head.get(6..8) == Some(&[0, 0][..])
        && le_u32(head, 8).ok() == Some(crc32fast::hash(payload));
    intact.then(|| (head[5], payload))
}

/// A dump cursor: the position in the dump (1 the header chunk, 2 and on the pages, in
/// bits 0..34) and a tag of the chain being dumped (bits 34..53: the number of
/// sub-filters and 13 bits of the key version's hash), so that a cursor handed out
/// before the chain grew, or before the key was recreated, is refused instead of
/// sending chunks that do not fit the header already sent. Clients treat cursors as
/// opaque integers, but JavaScript's read them as doubles: every cursor stays below
/// 2^53, exact in a double (node-redis's `scanDump`/`loadChunk` changed larger ones).
/// `LOADCHUNK` reads only the position; a cursor of the earlier layout (position in
/// bits 0..38) has the same low 34 bits, so chunks saved with one still load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DumpCursor {
    pub tag: u32,
    pub position: u64,
}

const POSITION_BITS: u32 = 34;
const TAG_BITS: u32 = 19;
/// Bits of the key version's hash in a tag (the rest counts the sub-filters).
const VERSION_BITS: u32 = 13;

impl DumpCursor {
    /// The tag of a chain of `filters` sub-filters at key version `version`.
    pub fn tag(version: u64, filters: u32) -> u32 {
        let version_hash = rocksketch_merge::hash::murmur64a(&version.to_le_bytes(), 0) as u32;
        ((filters & 0x3f) << VERSION_BITS) | (version_hash & ((1 << VERSION_BITS) - 1))
    }

    /// Splits a client's cursor; `None` for a negative one.
    pub fn parse(cursor: i64) -> Option<DumpCursor> {
        let raw = u64::try_from(cursor).ok()?;
        Some(DumpCursor {
            tag: (raw >> POSITION_BITS) as u32,
            position: raw & ((1 << POSITION_BITS) - 1),
        })
    }

    /// The cursor as the client sees it.
    pub fn encode(self) -> i64 {
        let tag = u64::from(self.tag) & ((1 << TAG_BITS) - 1);
        ((tag << POSITION_BITS) | (self.position & ((1 << POSITION_BITS) - 1))) as i64
    }
}

/// A stored page found by [`next_stored_page`].
pub(crate) struct StoredPage {
    /// The dump position after this page.
    pub next: u64,
    pub sub: u32,
    pub page: u32,
    pub value: Vec<u8>,
}

/// The next stored page of a chain at or after dump position `position` (>= 1), where
/// positions number all the chain's pages, sub-filter by sub-filter (`pages_per_sub`),
/// starting at 1; `None` past the last stored page.
///
/// One seek of an iterator over the key version's pages: the work of a call does not
/// depend on how many pages the chain could have, only on the stored ones it passes,
/// and it passes none but the tally page.
pub(crate) fn next_stored_page(
    store: &Store,
    prefix: &[u8],
    pages_per_sub: &[u32],
    position: u64,
) -> Result<Option<StoredPage>> {
    // The (sub-filter, page) the position names; past the chain, nothing.
    let mut skip = position.saturating_sub(1);
    let mut start = None;
    for (sub, pages) in pages_per_sub.iter().enumerate() {
        let pages = u64::from(*pages);
        if skip < pages {
            start = Some((sub as u16, skip as u32));
            break;
        }
        skip -= pages;
    }
    let Some((sub, page)) = start else {
        return Ok(None);
    };
    let from = keys::page_key(prefix, sub, page);
    let Some(end) = keys::prefix_end(prefix) else {
        return Ok(None);
    };
    let mut read_opts = ReadOptions::default();
    read_opts.set_iterate_upper_bound(end);
    let db = store.db()?;
    let mut iter = db.raw_iterator_cf_opt(db.pages_cf()?, read_opts);
    iter.seek(&from);
    while iter.valid() {
        let (Some(key), Some(value)) = (iter.key(), iter.value()) else {
            break;
        };
        let Some((sub, page)) = split_page_suffix(prefix, key) else {
            break;
        };
        let Some(pages) = pages_per_sub.get(usize::from(sub)) else {
            // The tally page, or a sub-filter past the chain: nothing more to dump.
            break;
        };
        if page < *pages {
            let before: u64 = pages_per_sub[..usize::from(sub)]
                .iter()
                .map(|p| u64::from(*p))
                .sum();
            return Ok(Some(StoredPage {
                next: before + u64::from(page) + 2,
                sub: u32::from(sub),
                page,
                value: value.to_vec(),
            }));
        }
        iter.next();
    }
    iter.status()?;
    Ok(None)
}

/// The sub-filter and page number of a page key under `prefix`.
fn split_page_suffix(prefix: &[u8], key: &[u8]) -> Option<(u16, u32)> {
    let suffix = key.strip_prefix(prefix)?;
    let (sub, page) = suffix.split_first_chunk::<2>()?;
    let page: [u8; 4] = page.try_into().ok()?;
    Some((u16::from_be_bytes(*sub), u32::from_be_bytes(page)))
}

/// A windowed filter's window and live generations (oldest first) for its dump's
/// [`Chain`]; `None` without a window.
pub(crate) fn window_of(
    store: &Store,
    meta: &crate::meta::Meta,
) -> Option<(crate::Window, Vec<u64>)> {
    let window = meta.window?;
    Some((window, window.live(store.clock().now_ms()).collect()))
}

/// Where a page chunk of a dump is restored: the key version's pages, or those of
/// generation `generation` of a windowed filter; `None` when the chunk's kind does not
/// fit the filter (a windowed page for a plain filter, or the other way round).
pub(crate) fn restore_prefix(
    ns: u16,
    key: &[u8],
    meta: &crate::meta::Meta,
    generation: Option<u64>,
) -> Option<Vec<u8>> {
    let prefix = keys::version_prefix(ns, key, meta.version);
    match (meta.window, generation) {
        (None, None) => Some(prefix),
        (Some(_), Some(g)) => Some(crate::window::generation_prefix(&prefix, g)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_cursors_round_trip_and_stay_positive() {
        for (version, filters, position) in [(1u64, 1u32, 1u64), (u64::MAX, 32, (1 << 34) - 1)] {
            let cursor = DumpCursor {
                tag: DumpCursor::tag(version, filters),
                position,
            };
            assert!(cursor.encode() > 0);
            // Exact in a double, as JavaScript clients read integers.
            assert!(cursor.encode() < 1 << 53);
            assert_eq!(cursor.encode() as f64 as i64, cursor.encode());
            assert_eq!(DumpCursor::parse(cursor.encode()), Some(cursor));
        }
        // A cursor of the earlier layout (tag in bits 38..63) keeps its position.
        let old = (0x1ab_cdef_i64 << 38) | 5;
        assert_eq!(DumpCursor::parse(old).map(|c| c.position), Some(5));
        assert_ne!(DumpCursor::tag(7, 1), DumpCursor::tag(7, 2));
        assert_eq!(DumpCursor::parse(-1), None);
    }

    #[test]
    fn frames_round_trip_and_damage_is_caught() {
        let chunk = frame(b"TEST", 2, b"payload");
        assert_eq!(unframe(b"TEST", &chunk), Some((2, &b"payload"[..])));
        assert_eq!(unframe(b"OTHR", &chunk), None);
        for i in 0..chunk.len() {
            let mut bad = chunk.clone();
            bad[i] ^= 0x01;
            assert!(
                unframe(b"TEST", &bad) != Some((2, &b"payload"[..])),
                "flip at {i}"
            );
        }
        assert_eq!(unframe(b"TEST", &chunk[..5]), None);
    }
}
