//! `RIBBON.SCANDUMP` / `RIBBON.LOADCHUNK`: a filter as a sequence of chunks.
//!
//! ```text
//! Chunk: magic "RKRB" | version u8 | kind u8 | reserved u16 | crc32 u32 LE (of the payload) | payload
//!   kind 1, header (cursor 1):  the key's Ribbon parameters (see `meta::RibbonParams`)
//!   kind 2, page (cursor >= 2): sub u32 LE | page u32 LE | the page as stored
//! ```
//!
//! Pages are the generations' shards (checked against the header when loaded) and the
//! unsealed staging pages, whose hashes are staged again when loaded. Cursors are
//! positions with a tag of the key version and its staging epoch ([`DumpCursor`]): a
//! build during the dump makes the next `SCANDUMP` ask for a restart.

use super::{ribbon_params, RibbonFilter, STAGE_SUB};
use crate::chunk::{self, DumpCursor};
use crate::error::{Error, Result, RibbonError};
use crate::keys;
use crate::meta::{KeyType, Params, RibbonParams};
use rocksketch_merge::ribbon::{Shard, StagePage};

const MAGIC: &[u8; 4] = b"RKRB";
const KIND_HEADER: u8 = 1;
const KIND_PAGE: u8 = 2;

impl RibbonFilter {
    /// One step of a dump (`RIBBON.SCANDUMP`): the next cursor (0 at the end) and a chunk.
    pub fn scandump(&self, cursor: i64) -> Result<(i64, Vec<u8>)> {
        let guard = self.store.share(self.ns, &self.key);
        let (meta, params, prefix) = self.existing(&guard)?;
        let tag = DumpCursor::tag(
            meta.version ^ (u64::from(params.staging) << 32),
            u32::from(params.generations),
        );
        let at = DumpCursor::parse(cursor).ok_or(RibbonError::InvalidPosition)?;
        if cursor == 0 {
            let mut payload = Vec::new();
            params.encode_into(&mut payload);
            let next = DumpCursor { tag, position: 1 };
            return Ok((next.encode(), chunk::frame(MAGIC, KIND_HEADER, &payload)));
        }
        if at.tag != tag {
            return Err(RibbonError::DumpChanged.into());
        }
        let mut pages = vec![0u32; usize::from(STAGE_SUB) + 1];
        for (g, shards) in params.generation_shards().iter().enumerate() {
            pages[g] = u32::from(*shards);
        }
        pages[usize::from(STAGE_SUB)] = u32::MAX;
        let Some(stored) = chunk::next_stored_page(&self.store, &prefix, &pages, at.position)?
        else {
            return Ok((0, Vec::new()));
        };
        let mut payload = Vec::with_capacity(8 + stored.value.len());
        payload.extend_from_slice(&stored.sub.to_le_bytes());
        payload.extend_from_slice(&stored.page.to_le_bytes());
        payload.extend_from_slice(&stored.value);
        let next = DumpCursor {
            tag,
            position: stored.next,
        };
        Ok((next.encode(), chunk::frame(MAGIC, KIND_PAGE, &payload)))
    }

    /// Replays a chunk from [`RibbonFilter::scandump`] (`RIBBON.LOADCHUNK`): the header
    /// (cursor 1) creates the filter, which must not exist; page chunks fill it.
    pub fn loadchunk(&self, cursor: i64, chunk: &[u8]) -> Result<()> {
        let bad = || Error::from(RibbonError::BadChunk);
        let (kind, payload) = chunk::unframe(MAGIC, chunk).ok_or_else(bad)?;
        let position = DumpCursor::parse(cursor).map(|c| c.position);
        match (kind, position) {
            (KIND_HEADER, Some(1)) => {
                let mut params = RibbonParams::decode(payload).map_err(|_| bad())?;
                // Staging starts afresh: the dump's staged pages are staged again.
                params.staging = 0;
                params.sealed = 0;
                params.adds_sealed = 0;
                match self.store.create_restored(
                    self.ns,
                    &self.key,
                    Params::Ribbon(params),
                    vec![0],
                )? {
                    true => Ok(()),
                    false => Err(RibbonError::KeyExists.into()),
                }
            }
            (KIND_PAGE, Some(p)) if p >= 2 => self.load_page(payload),
            _ => Err(RibbonError::InvalidPosition.into()),
        }
    }

    fn load_page(&self, payload: &[u8]) -> Result<()> {
        let bad = || Error::from(RibbonError::BadChunk);
        let (head, value) = payload.split_at_checked(8).ok_or_else(bad)?;
        let (sub, page) = head.split_at(4);
        let sub = u32::from_le_bytes(sub.try_into().map_err(|_| bad())?);
        let page = u32::from_le_bytes(page.try_into().map_err(|_| bad())?);
        let guard = self.store.share(self.ns, &self.key);
        let meta = guard
            .typed_meta(KeyType::Ribbon)?
            .ok_or(RibbonError::NotFound)?;
        let params = ribbon_params(&meta)?;
        let prefix = keys::version_prefix(self.ns, &self.key, meta.version);
        if sub == u32::from(STAGE_SUB) {
            // Staged hashes are staged again, in the restored key's current epoch.
            let staged = StagePage::decode(value).map_err(|_| bad())?;
            self.write_staged(&guard, &prefix, params.staging, staged.hashes())?;
            // Keep the staged count that bounds staging in step with the tally.
            let n = staged.hashes().len() as i64;
            self.store.count_changed(&prefix, 0, n);
            return Ok(());
        }
        let shards = *params
            .generation_shards()
            .get(sub as usize)
            .ok_or_else(bad)?;
        let shard = Shard::decode(value).map_err(|_| bad())?;
        if shard.result_bits() != params.result_bits() || page >= u32::from(shards) {
            return Err(bad());
        }
        let mut batch = self.store.batch()?;
        batch.put_page(keys::page_key(&prefix, sub as u16, page), value);
        self.store.write(batch)
    }
}
