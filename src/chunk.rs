//! The frame around `SCANDUMP` chunks, shared by the filters' dump formats:
//!
//! ```text
//! magic [u8; 4] | version u8 | kind u8 | reserved u16 (zero) | crc32 u32 LE (of the payload) | payload
//! ```

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
        && le_u32(head, 8) == crc32fast::hash(payload);
    intact.then(|| (head[5], payload))
}

/// A stored page found by [`next_stored_page`].
pub(crate) struct StoredPage {
    /// The dump cursor after this page.
    pub next: i64,
    pub sub: u32,
    pub page: u32,
    pub value: Vec<u8>,
}

/// The next stored page of a chain at or after dump cursor `cursor` (>= 1), where the
/// cursor names positions in the sequence of all the chain's pages, sub-filter by
/// sub-filter (`pages_per_sub`), starting at 1; `None` past the last stored page.
pub(crate) fn next_stored_page(
    store: &Store,
    prefix: &[u8],
    pages_per_sub: &[u32],
    cursor: i64,
) -> Result<Option<StoredPage>> {
    let mut skip = u64::try_from(cursor - 1).unwrap_or(0);
    let mut next = cursor;
    for (sub, pages) in pages_per_sub.iter().enumerate() {
        let pages = u64::from(*pages);
        if skip >= pages {
            skip -= pages;
            continue;
        }
        for page in skip..pages {
            next += 1;
            let key = keys::page_key(prefix, sub as u16, page as u32);
            if let Some(value) = store
                .get_pages(&[key], &ReadOptions::default())?
                .pop()
                .flatten()
            {
                return Ok(Some(StoredPage {
                    next,
                    sub: sub as u32,
                    page: page as u32,
                    value,
                }));
            }
        }
        skip = 0;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

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
