//! `TDIGEST.MERGE`: the destination replaced by a new digest built as RedisBloom builds
//! it, from sources read at one snapshot.

use super::{check_compression, Layout, TDigest, WHAT};
use crate::error::{Result, TDigestError};
use crate::meta::{KeyType, Meta, Params, TDigestParams};
use rocksdb::ReadOptions;
use rocksketch_merge::tdigest::Digest;

impl TDigest {
    /// Replaces this digest with the merge of `sources` (`TDIGEST.MERGE`); this key may
    /// be one of them, and need not exist. The result's compression is `compression` if
    /// given, else this digest's (when it exists and `replace` is false), else the
    /// largest of the sources'. The result holds this digest's centroids first (unless
    /// `replace`, RedisBloom's `OVERRIDE`), then each source's in order, added as
    /// RedisBloom's `td_merge` adds them.
    ///
    /// Under this key's exclusive lock; the sources (their metadata and their pages)
    /// are read at one snapshot. RedisBloom
    /// compresses each source in place; so does this, with a compress operand on each
    /// source written after the merge, under that source's own lock.
    pub fn merge<K: AsRef<[u8]>>(
        &self,
        sources: &[K],
        compression: Option<u64>,
        replace: bool,
    ) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let dest = guard.typed_meta(KeyType::TDigest)?;
        // Each source's metadata and pages from one snapshot, taken first.
        let db = self.store.db()?;
        let snapshot = db.snapshot();
        let mut read_opts = ReadOptions::default();
        read_opts.set_snapshot(&snapshot);
        let mut layouts = Vec::with_capacity(sources.len());
        for source in sources {
            let source = source.as_ref();
            let meta = guard.other_meta_at(source, &read_opts)?;
            let meta = meta.ok_or(TDigestError::KeyDoesNotExist)?;
            let handle = TDigest::new(self.store.clone(), self.ns, source.to_vec());
            layouts.push((handle.layout_of(&meta)?, handle));
        }
        let dest_layout = dest.as_ref().map(|m| self.layout_of(m)).transpose()?;
        let compression = match (compression, &dest_layout) {
            (Some(c), _) => check_compression(c, TDigestError::MergeAllocationFailed)?,
            (None, Some(d)) if !replace => d.compression,
            _ => layouts
                .iter()
                .map(|(l, _)| l.compression)
                .max()
                .unwrap_or(1),
        };

        let mut result = Digest::new(compression);
        let mut overflow = false;
        if let (Some(d), false) = (&dest_layout, replace) {
            let mut digest = self.read_at(d, &read_opts)?;
            overflow |= result.merge_from(&mut digest).is_err();
        }
        // Sources whose buffer a merge compressed, for their compress operands.
        let mut compressed = Vec::new();
        for (layout, handle) in &layouts {
            if overflow {
                break;
            }
            let mut digest = handle.read_at(layout, &read_opts)?;
            if digest.needs_compress() {
                // What the snapshot held of it, to tell later adds apart.
                let seen = (digest.observations(), digest.unmerged_nodes());
                compressed.push((layout, handle, seen));
            }
            overflow |= result.merge_from(&mut digest).is_err();
        }
        drop(snapshot);
        if !overflow {
            let meta = Meta {
                version: dest.map_or_else(|| self.store.next_version(), |m| m.version),
                // RedisBloom sets the destination's value anew, which drops its TTL.
                expire_at_ms: 0,
                params: Params::TDigest(TDigestParams { compression }),
                window: None,
            };
            let mut batch = self.store.batch()?;
            batch.put_page(self.layout_of(&meta)?.page_key, result.encode());
            guard.put_meta(meta, batch)?;
        }
        drop(guard);
        for (layout, handle, seen) in compressed {
            // A replaced destination's operand would land on the merged page instead.
            if overflow || handle.key != self.key {
                handle.compress_if_unchanged(layout, seen)?;
            }
        }
        if overflow {
            return Err(TDigestError::Overflow.into());
        }
        Ok(())
    }

    /// The digest as of `read_opts` (a missing page is an empty digest).
    fn read_at(&self, layout: &Layout, read_opts: &ReadOptions) -> Result<Digest> {
        let pages = self.store.read_pages_at(
            &self.key,
            WHAT,
            std::slice::from_ref(&layout.page_key),
            read_opts,
        )?;
        match pages.into_iter().next().flatten() {
            None => Ok(Digest::new(layout.compression)),
            Some(page) => page
                .as_digest()
                .cloned()
                .ok_or_else(|| crate::store::wrong_kind(&self.key, WHAT)),
        }
    }

    /// Writes a compress operand if the key still holds the version `layout` names and
    /// nothing was added to it since the merge read it (`seen`: its observations and
    /// unmerged nodes then), under its exclusive lock, which adds wait for. A compress
    /// written after later adds would compress values the merge never saw (RedisBloom
    /// compresses the source in place, before any later add); with later adds the
    /// source is left as they left it.
    fn compress_if_unchanged(&self, layout: &Layout, seen: (i64, usize)) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        match guard.meta()? {
            Some(meta) if meta.version == layout.version => {
                let page = self.read_digest(layout)?;
                let now = page
                    .as_digest()
                    .map(|d| (d.observations(), d.unmerged_nodes()));
                // Let go of the page first: the write applies to the cached page in place.
                drop(page);
                if now == Some(seen) {
                    self.write_compress(layout)?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
