//! `CF.SCANDUMP` / `CF.LOADCHUNK`: a filter as a sequence of self-describing chunks.
//!
//! ```text
//! Chunk: magic "RKCF" | version u8 | kind u8 | reserved u16 | crc32 u32 LE (of the payload) | payload
//!   kind 1, header (cursor 1):   cuckoo params (26 bytes) | tally slots u64 LE × 33
//!   kind 2, page (cursor >= 2):  sub u32 LE | page u32 LE | the stored page (FpPage)
//! ```
//!
//! Cursors as in the Bloom filter's dump (`crate::bloom`'s `dump.rs`): positions
//! (1 the header, 2 and on the stored pages) tagged with the chain they belong to.

use super::{cuckoo_params, sub_of, CuckooFilter, Sub, DELETES_SLOT};
use crate::chunk::{self, DumpCursor};
use crate::error::{CuckooError, Error, Result};
use crate::keys;
use crate::meta::{CuckooParams, KeyType, Params};
use rocksketch_merge::bytes::{le_u32, le_u64};

const MAGIC: &[u8; 4] = b"RKCF";
const KIND_HEADER: u8 = 1;
const KIND_PAGE: u8 = 2;
const TALLY_SLOTS: usize = DELETES_SLOT + 1;
const HEADER_LEN: usize = CuckooParams::ENCODED_LEN + 8 * TALLY_SLOTS;

fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    chunk::frame(MAGIC, kind, payload)
}

/// Checks a chunk's frame and returns its kind and payload.
fn unframe(chunk: &[u8]) -> Result<(u8, &[u8])> {
    chunk::unframe(MAGIC, chunk).ok_or(Error::from(CuckooError::BadChunk))
}

impl CuckooFilter {
    /// One step of a dump (`CF.SCANDUMP`): the next cursor (0 at the end) and a chunk.
    pub fn scandump(&self, cursor: i64) -> Result<(i64, Vec<u8>)> {
        let guard = self.store.share(self.ns, &self.key);
        let (meta, params, prefix) = self.existing(&guard)?;
        let tag = DumpCursor::tag(meta.version, params.filters);
        let at = DumpCursor::parse(cursor).ok_or(CuckooError::InvalidPosition)?;
        if cursor == 0 {
            let counts = self.counts(&prefix)?;
            let mut payload = Vec::with_capacity(HEADER_LEN);
            params.encode_into(&mut payload);
            for slot in 0..TALLY_SLOTS {
                payload.extend_from_slice(&counts.get(slot).to_le_bytes());
            }
            let next = DumpCursor { tag, position: 1 };
            return Ok((next.encode(), frame(KIND_HEADER, &payload)));
        }
        if at.tag != tag {
            return Err(CuckooError::DumpChanged.into());
        }
        let subs: Vec<Sub> = (0..params.filters)
            .map(|i| sub_of(&params, i))
            .collect::<Result<_>>()?;
        let pages: Vec<u32> = subs.iter().map(|s| s.pages).collect();
        let Some(chunk::StoredPage {
            next,
            sub,
            page,
            value: raw,
        }) = chunk::next_stored_page(&self.store, &prefix, &pages, at.position)?
        else {
            return Ok((0, Vec::new()));
        };
        // Check it before sending it on.
        self.checked_page(&raw, &subs[sub as usize])?;
        let mut payload = Vec::with_capacity(8 + raw.len());
        payload.extend_from_slice(&sub.to_le_bytes());
        payload.extend_from_slice(&page.to_le_bytes());
        payload.extend_from_slice(&raw);
        let next = DumpCursor {
            tag,
            position: next,
        };
        Ok((next.encode(), frame(KIND_PAGE, &payload)))
    }

    /// Replays a chunk from [`CuckooFilter::scandump`] (`CF.LOADCHUNK`): the header chunk
    /// (cursor 1) creates the filter, which must not exist; page chunks fill it.
    pub fn loadchunk(&self, cursor: i64, chunk: &[u8]) -> Result<()> {
        let (kind, payload) = unframe(chunk)?;
        let position = DumpCursor::parse(cursor).map(|c| c.position);
        match (kind, position) {
            (KIND_HEADER, Some(1)) => self.load_header(payload),
            (KIND_PAGE, Some(p)) if p >= 2 => self.load_page(payload),
            _ => Err(CuckooError::InvalidPosition.into()),
        }
    }

    fn load_header(&self, payload: &[u8]) -> Result<()> {
        let bad = || Error::from(CuckooError::BadChunk);
        if payload.len() != HEADER_LEN {
            return Err(bad());
        }
        let params =
            CuckooParams::decode(&payload[..CuckooParams::ENCODED_LEN]).map_err(|_| bad())?;
        super::validate_stored(&params, self.store.page_cells() * 4).map_err(|_| bad())?;
        for i in 0..params.filters {
            sub_of(&params, i).map_err(|_| bad())?;
        }
        let counts: Vec<u64> = (0..TALLY_SLOTS)
            .map(|i| le_u64(payload, CuckooParams::ENCODED_LEN + 8 * i))
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        match self
            .store
            .create_restored(self.ns, &self.key, Params::Cuckoo(params), counts)?
        {
            true => Ok(()),
            false => Err(CuckooError::ItemExists.into()),
        }
    }

    fn load_page(&self, payload: &[u8]) -> Result<()> {
        let bad = || Error::from(CuckooError::BadChunk);
        let guard = self.store.share(self.ns, &self.key);
        let meta = guard
            .typed_meta(KeyType::Cuckoo)?
            .ok_or(CuckooError::NotFound)?;
        let params = cuckoo_params(&meta)?;
        let (sub_index, page) = (
            le_u32(payload, 0).map_err(|_| bad())?,
            le_u32(payload, 4).map_err(|_| bad())?,
        );
        let raw = payload.get(8..).ok_or_else(bad)?;
        if sub_index >= params.filters {
            return Err(bad());
        }
        let sub = sub_of(&params, sub_index)?;
        if page >= sub.pages {
            return Err(bad());
        }
        self.checked_page(raw, &sub).map_err(|_| bad())?;
        // The page as it was: restoring into the empty filter the header created.
        let prefix = keys::version_prefix(self.ns, &self.key, meta.version);
        let mut batch = self.store.batch()?;
        batch.put_page(keys::page_key(&prefix, sub_index as u16, page), raw);
        self.store.write(batch)
    }
}
