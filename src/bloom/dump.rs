//! `BF.SCANDUMP` / `BF.LOADCHUNK`: a filter as a sequence of self-describing chunks.
//!
//! ```text
//! Chunk: magic "RKBF" | version u8 | kind u8 | reserved u16 | crc32 u32 LE (of the payload) | payload
//!   kind 1, header (cursor 1):   error f64 | capacity u64 | expansion u32 | filters u32 |
//!                                page_bits u32 | items u64 × filters        (all LE)
//!   kind 2, page (cursor >= 2):  sub u32 | page u32 | bitmap
//!   kinds 3 and 4: a windowed filter's header and pages (`crate::chunk`'s `window.rs`),
//!                  each generation's header as kind 1's payload, its pages as kind 2's
//! ```
//!
//! Cursor 0 starts a dump; a cursor `c >= 1` continues after the chunk before it, and
//! a returned cursor of 0 ends it. Cursors name positions (1 the header, 2 and on the
//! filter's pages, so only stored pages are sent) and carry a tag of the chain at the
//! header (`chunk::DumpCursor`): once the chain grows or the key is recreated, the next
//! `SCANDUMP` says the dump must restart, instead of sending chunks the header does
//! not describe. "position" is meant wherever the layout above says "cursor".

use super::{bloom_params, sub_of, BloomFilter};
use crate::chunk::{self, Chain, ChainDump, DumpError};
use crate::error::{BloomError, Error, Result};
use crate::keys;
use crate::meta::{BloomParams, KeyType, Params};
use crate::store::{KeyGuard, Store};
use rocksketch_merge::bits::{BitDelta, BitPage};
use rocksketch_merge::bytes::le_u64;

const HEADER_FIXED: usize = BloomParams::ENCODED_LEN;

impl BloomFilter {
    /// One step of a dump (`BF.SCANDUMP`): the next cursor (0 at the end) and a chunk.
    pub fn scandump(&self, cursor: i64) -> Result<(i64, Vec<u8>)> {
        let guard = self.store.share(self.ns, &self.key);
        chunk::scandump(self, &guard, cursor)
    }

    /// Replays a chunk from [`BloomFilter::scandump`] (`BF.LOADCHUNK`): the header chunk
    /// (cursor 1) creates the filter, which must not exist; page chunks fill it.
    pub fn loadchunk(&self, cursor: i64, chunk: &[u8]) -> Result<()> {
        chunk::loadchunk(self, cursor, chunk)
    }
}

impl ChainDump for BloomFilter {
    type Params = BloomParams;
    const MAGIC: &'static [u8; 4] = b"RKBF";

    fn store(&self) -> &Store {
        &self.store
    }

    fn dump_error(error: DumpError) -> Error {
        match error {
            DumpError::BadChunk | DumpError::BadHeader | DumpError::HeaderForExisting => {
                BloomError::BadChunk
            }
            DumpError::NotFound => BloomError::NotFound,
            DumpError::InvalidPosition => BloomError::InvalidPosition,
            DumpError::Changed => BloomError::DumpChanged,
        }
        .into()
    }

    fn chain(&self, guard: &KeyGuard) -> Result<Chain<BloomParams>> {
        let (meta, params, prefix) = self.existing(guard)?;
        let pages = (0..params.filters)
            .map(|sub| sub_of(&params, sub).pages)
            .collect();
        Ok(Chain {
            version: meta.version,
            params,
            pages,
            prefix,
            window: chunk::window_of(&self.store, &meta),
        })
    }

    fn header(&self, chain: &Chain<BloomParams>, tally_prefix: &[u8]) -> Result<Vec<u8>> {
        let counts = self.counts(tally_prefix)?;
        let params = &chain.params;
        let mut payload = Vec::with_capacity(HEADER_FIXED + 8 * params.filters as usize);
        params.encode_into(&mut payload);
        for sub in 0..params.filters {
            payload.extend_from_slice(&counts.items_in(sub).to_le_bytes());
        }
        Ok(payload)
    }

    fn page_body(&self, _: &Chain<BloomParams>, _sub: u32, raw: Vec<u8>) -> Result<Vec<u8>> {
        let bits = BitPage::decode(&raw)
            .map_err(|source| Error::corrupt(&self.key, "a bit page", source))?;
        Ok(bits.bytes().to_vec())
    }

    fn present(&self) -> Result<bool> {
        let guard = self.store.share(self.ns, &self.key);
        Ok(guard.typed_meta(KeyType::Bloom)?.is_some())
    }

    fn ns_key(&self) -> (u16, &[u8]) {
        (self.ns, &self.key)
    }

    fn parse_header(&self, payload: &[u8]) -> Result<(Params, Vec<u64>)> {
        let bad = || Error::from(BloomError::BadChunk);
        let encoded = payload.get(..BloomParams::ENCODED_LEN).ok_or_else(bad)?;
        let params = BloomParams::decode(encoded).map_err(|_| bad())?;
        // Pages up to the format's largest, not just this store's size: a dump from a
        // server that makes larger pages loads here too.
        let max_page_bits = rocksketch_merge::MAX_PAGE_BYTES as u32 * 8;
        super::validate_stored(&params, max_page_bits).map_err(|_| bad())?;
        if payload.len() != HEADER_FIXED + 8 * params.filters as usize {
            return Err(bad());
        }
        let counts: Vec<u64> = (0..params.filters as usize)
            .map(|i| le_u64(payload, HEADER_FIXED + 8 * i))
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        Ok((Params::Bloom(params), counts))
    }

    fn load_page(&self, payload: &[u8], generation: Option<u64>) -> Result<()> {
        let bad = || Error::from(BloomError::BadChunk);
        let guard = self.store.share(self.ns, &self.key);
        let meta = guard
            .typed_meta(KeyType::Bloom)?
            .ok_or(BloomError::NotFound)?;
        let prefix =
            chunk::restore_prefix(self.ns, &self.key, &meta, generation).ok_or_else(bad)?;
        let params = bloom_params(&meta)?;
        let (sub, page, bitmap) = chunk::split_page(payload).ok_or_else(bad)?;
        if sub >= params.filters {
            return Err(bad());
        }
        let shape = sub_of(&params, sub);
        if page >= shape.pages || bitmap.len() != (shape.page_bits / 8) as usize {
            return Err(bad());
        }
        // A dense OR: restoring into the empty filter the header created is exact.
        let delta = BitDelta::Dense(BitPage::from_bytes(bitmap.to_vec()));
        let mut batch = self.store.batch()?;
        batch.merge_page(keys::page_key(&prefix, sub as u16, page), delta.encode());
        self.store.write(batch)
    }
}
