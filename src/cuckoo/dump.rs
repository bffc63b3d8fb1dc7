//! `CF.SCANDUMP` / `CF.LOADCHUNK`: a filter as a sequence of self-describing chunks.
//!
//! ```text
//! Chunk: magic "RKCF" | version u8 | kind u8 | reserved u16 | crc32 u32 LE (of the payload) | payload
//!   kind 1, header (cursor 1):   cuckoo params (26 bytes) | tally slots u64 LE × 33
//!   kind 2, page (cursor >= 2):  sub u32 LE | page u32 LE | the stored page (FpPage)
//!   kinds 3 and 4: a windowed filter's header and pages (`crate::chunk`'s `window.rs`),
//!                  each generation's header as kind 1's payload, its pages as kind 2's
//! ```
//!
//! Cursors as in the Bloom filter's dump (`crate::bloom`'s `dump.rs`): positions
//! (1 the header, 2 and on the stored pages) tagged with the chain they belong to.

use super::{cuckoo_params, sub_of, CuckooFilter};
use crate::chain::SLOTS as TALLY_SLOTS;
use crate::chunk::{self, Chain, ChainDump, DumpError};
use crate::error::{CuckooError, Error, Result};
use crate::keys;
use crate::meta::{CuckooParams, KeyType, Params};
use crate::store::{KeyGuard, Store};
use rocksketch_merge::bytes::le_u64;

const HEADER_LEN: usize = CuckooParams::ENCODED_LEN + 8 * TALLY_SLOTS;

impl CuckooFilter {
    /// One step of a dump (`CF.SCANDUMP`): the next cursor (0 at the end) and a chunk.
    pub fn scandump(&self, cursor: i64) -> Result<(i64, Vec<u8>)> {
        let guard = self.store.share(self.ns, &self.key);
        chunk::scandump(self, &guard, cursor)
    }

    /// Replays a chunk from [`CuckooFilter::scandump`] (`CF.LOADCHUNK`): the header chunk
    /// (cursor 1) creates the filter, which must not exist; page chunks fill it.
    pub fn loadchunk(&self, cursor: i64, chunk: &[u8]) -> Result<()> {
        chunk::loadchunk(self, cursor, chunk)
    }
}

impl ChainDump for CuckooFilter {
    type Params = CuckooParams;
    const MAGIC: &'static [u8; 4] = b"RKCF";

    fn store(&self) -> &Store {
        &self.store
    }

    fn dump_error(error: DumpError) -> Error {
        match error {
            DumpError::BadChunk => CuckooError::LoadChunkFailed,
            DumpError::BadHeader => CuckooError::InvalidHeader,
            DumpError::HeaderForExisting => CuckooError::ItemExists,
            DumpError::NotFound => CuckooError::NotFound,
            DumpError::InvalidPosition => CuckooError::InvalidPosition,
            DumpError::Changed => CuckooError::DumpChanged,
        }
        .into()
    }

    fn chain(&self, guard: &KeyGuard) -> Result<Chain<CuckooParams>> {
        let (meta, params, prefix) = self.existing(guard)?;
        let pages = (0..params.filters)
            .map(|i| sub_of(&params, i).map(|sub| sub.pages))
            .collect::<Result<_>>()?;
        Ok(Chain {
            version: meta.version,
            params,
            pages,
            prefix,
            window: chunk::window_of(&self.store, &meta),
        })
    }

    fn header(&self, chain: &Chain<CuckooParams>, tally_prefix: &[u8]) -> Result<Vec<u8>> {
        let counts = self.counts(tally_prefix)?;
        let mut payload = Vec::with_capacity(HEADER_LEN);
        chain.params.encode_into(&mut payload);
        for slot in 0..TALLY_SLOTS {
            payload.extend_from_slice(&counts.slot(slot).to_le_bytes());
        }
        Ok(payload)
    }

    /// The stored page as it is, checked against its sub-filter's shape.
    fn page_body(&self, chain: &Chain<CuckooParams>, sub: u32, raw: Vec<u8>) -> Result<Vec<u8>> {
        self.checked_page(&raw, &sub_of(&chain.params, sub)?)?;
        Ok(raw)
    }

    fn present(&self) -> Result<bool> {
        let guard = self.store.share(self.ns, &self.key);
        Ok(guard.typed_meta(KeyType::Cuckoo)?.is_some())
    }

    fn ns_key(&self) -> (u16, &[u8]) {
        (self.ns, &self.key)
    }

    fn parse_header(&self, payload: &[u8]) -> Result<(Params, Vec<u64>)> {
        let bad = || Error::from(CuckooError::BadChunk);
        if payload.len() != HEADER_LEN {
            return Err(bad());
        }
        let params =
            CuckooParams::decode(&payload[..CuckooParams::ENCODED_LEN]).map_err(|_| bad())?;
        // Pages up to the format's largest, not just this store's size: a dump from a
        // server that makes larger pages loads here too.
        let max_page_bytes = rocksketch_merge::MAX_PAGE_BYTES as u32;
        super::validate_stored(&params, max_page_bytes).map_err(|_| bad())?;
        for i in 0..params.filters {
            sub_of(&params, i).map_err(|_| bad())?;
        }
        let counts: Vec<u64> = (0..TALLY_SLOTS)
            .map(|i| le_u64(payload, CuckooParams::ENCODED_LEN + 8 * i))
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        Ok((Params::Cuckoo(params), counts))
    }

    fn load_page(&self, payload: &[u8], generation: Option<u64>) -> Result<()> {
        let bad = || Error::from(CuckooError::BadChunk);
        let guard = self.store.share(self.ns, &self.key);
        let meta = guard
            .typed_meta(KeyType::Cuckoo)?
            .ok_or(CuckooError::NotFound)?;
        let prefix =
            chunk::restore_prefix(self.ns, &self.key, &meta, generation).ok_or_else(bad)?;
        let params = cuckoo_params(&meta)?;
        let (sub_index, page, raw) = chunk::split_page(payload).ok_or_else(bad)?;
        if sub_index >= params.filters {
            return Err(bad());
        }
        let sub = sub_of(&params, sub_index)?;
        if page >= sub.pages {
            return Err(bad());
        }
        self.checked_page(raw, &sub).map_err(|_| bad())?;
        // The page as it was: restoring into the empty filter the header created.
        let mut batch = self.store.batch()?;
        batch.put_page(keys::page_key(&prefix, sub_index as u16, page), raw);
        self.store.write(batch)
    }
}
