//! The sweep that reclaims expired keys.

use super::{keys, now_ms, Store};
use crate::error::{Error, Result};
use crate::meta::Meta;
use crate::window::dead_range;
use rocksdb::IteratorMode;

impl Store {
    /// Deletes expired keys found in up to `limit` metadata records from `cursor` (a raw
    /// metadata key; `None` from the start), in every namespace: their metadata and
    /// pages go in one batch per key. Returns how many it deleted and where to go on
    /// (`None` once it reached the end). The RESP host runs it in a background thread;
    /// reads never wait for it, since an expired key reads as absent already.
    /// A `limit` of 0 is an error: such a sweep could never advance.
    pub fn sweep_expired(
        &self,
        cursor: Option<&[u8]>,
        limit: usize,
    ) -> Result<(usize, Option<Vec<u8>>)> {
        if limit == 0 {
            return Err(Error::InvalidArgument(
                "sweep_expired needs a limit of at least 1 record".to_owned(),
            ));
        }
        let db = self.db()?;
        let cf = db.meta_cf()?;
        let mode = match cursor {
            Some(from) => IteratorMode::From(from, rocksdb::Direction::Forward),
            None => IteratorMode::Start,
        };
        let now = now_ms();
        let window_now = self.clock().now_ms();
        let mut expired = Vec::new();
        let mut aged = Vec::new();
        let mut next = None;
        for (seen, item) in db.iterator_cf(cf, mode).enumerate() {
            let (raw_key, raw_meta) = item?;
            if seen == limit {
                next = Some(raw_key.to_vec());
                break;
            }
            // Undecodable records are left for the reader to report.
            if let (Some((ns, key)), Ok(meta)) =
                (keys::split_meta_key(&raw_key), Meta::decode(&raw_meta))
            {
                if meta.is_expired(now) {
                    expired.push((ns, key.to_vec()));
                } else if let Some(window) = meta.window {
                    let oldest = *window.live(window_now).start();
                    let prefix = keys::version_prefix(ns, key, meta.version);
                    if self
                        .inner
                        .swept
                        .get(&prefix)
                        .is_none_or(|swept| swept < oldest)
                    {
                        aged.push((ns, key.to_vec()));
                    }
                }
            }
        }
        drop(db);
        let mut deleted = 0;
        for (ns, key) in expired {
            let guard = self.lock(ns, &key);
            match guard.stored_meta()? {
                Some(meta) if meta.is_expired(now_ms()) => {
                    guard.delete(&meta)?;
                    deleted += 1;
                }
                _ => {}
            }
        }
        for (ns, key) in aged {
            self.drop_aged_generations(ns, &key)?;
        }
        Ok((deleted, next))
    }

    /// Drops the generations of windowed key `key` that are no longer live, with one
    /// range delete, under its exclusive lock: no write to a generation is in flight
    /// while it goes, and every later one reads the clock anew (see [`crate::window`]).
    /// The cached pages of those generations go too, so that a clock set back never
    /// reads a page the store no longer holds.
    fn drop_aged_generations(&self, ns: u16, key: &[u8]) -> Result<()> {
        let guard = self.lock(ns, key);
        let Some(meta) = guard.meta()? else {
            return Ok(());
        };
        let Some(window) = meta.window else {
            return Ok(());
        };
        let prefix = guard.prefix(&meta);
        let oldest = *window.live(self.clock().now_ms()).start();
        let (from, to) = dead_range(&prefix, oldest);
        let mut batch = self.batch()?;
        batch.delete_page_range(&from, &to, &[]);
        self.write(batch)?;
        self.inner.hot.drop_range(&from, &to);
        self.inner.swept.insert(prefix, oldest);
        Ok(())
    }
}
