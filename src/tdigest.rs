//! T-Digests: RedisBloom's merging t-digest on one blind-merge page per key.
//!
//! `TDIGEST.ADD` answers only `OK`, so an add is a blind operand of raw values under the
//! key's shared lock: no read, no page rewrite. The merge operator adds them as
//! RedisBloom's `td_add` does (compressing whenever the buffer fills), so the page holds
//! what RedisBloom would. RedisBloom's reads also compress the digest they read; a read
//! here answers from a compressed copy and, when that compression changed anything,
//! appends a one-byte compress operand, so later answers and `INFO` stay RedisBloom's.

#[cfg(feature = "baselines")]
mod baseline;
mod merge;

use crate::error::{Error, Result, TDigestError};
use crate::keys;
use crate::meta::{KeyType, Meta, Params, TDigestParams};
use crate::store::{wrong_kind, KeyGuard, Store};
use rocksketch_merge::tdigest::ops::DigestOps;
use rocksketch_merge::tdigest::{Digest, MAX_COMPRESSION};
use std::sync::Arc;

/// At most this many values go in one operand; a longer add writes several, in one
/// batch, so no operand is larger than 64 KiB.
pub const MAX_OP_VALUES: usize = 8192;
const WHAT: &str = "t-digest page";

/// `TDIGEST.INFO`'s fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TDigestInfo {
    /// The compression parameter.
    pub compression: u32,
    /// Centroids and values it holds at most before it compresses.
    pub capacity: u64,
    /// Centroids merged.
    pub merged_nodes: u64,
    /// Values waiting unmerged.
    pub unmerged_nodes: u64,
    /// Total weight of the merged centroids.
    pub merged_weight: i64,
    /// Total weight of the values waiting unmerged.
    pub unmerged_weight: i64,
    /// Values added.
    pub observations: i64,
    /// Times the digest was compressed.
    pub total_compressions: i64,
    /// RedisBloom's figure for the digest's memory: 80 + 16 x capacity bytes.
    pub memory_usage: u64,
}

impl From<&Digest> for TDigestInfo {
    fn from(d: &Digest) -> TDigestInfo {
        let capacity = d.capacity() as u64;
        TDigestInfo {
            compression: d.compression(),
            capacity,
            merged_nodes: d.merged_nodes() as u64,
            unmerged_nodes: d.unmerged_nodes() as u64,
            merged_weight: d.merged_weight(),
            unmerged_weight: d.unmerged_weight(),
            observations: d.observations(),
            total_compressions: d.total_compressions(),
            memory_usage: 80 + 16 * capacity,
        }
    }
}

/// A handle on the t-digest at one key. Creating the handle reads nothing.
pub struct TDigest {
    store: Store,
    ns: u16,
    key: Vec<u8>,
}

/// Where one key's digest lives.
struct Layout {
    compression: u32,
    version: u64,
    page_key: Vec<u8>,
}

handle_constructors!(tdigest, TDigest, "t-digest");

impl TDigest {
    pub(crate) fn new(store: Store, ns: u16, key: Vec<u8>) -> TDigest {
        TDigest { store, ns, key }
    }

    /// The key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Creates an empty digest (`TDIGEST.CREATE`; RedisBloom's default compression is
    /// [`rocksketch_merge::tdigest::DEFAULT_COMPRESSION`]).
    ///
    /// ```
    /// # fn main() -> rocksketch::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let store = rocksketch::Store::open(dir.path(), Default::default())?;
    /// let latency = store.tdigest("latency");
    /// latency.create(100)?;
    /// latency.add(&[1.0, 2.0, 3.0, 4.0, 5.0])?;
    /// assert_eq!(latency.quantiles(&[0.5])?, vec![3.0]);
    /// assert_eq!(latency.info()?.observations, 5);
    /// # Ok(()) }
    /// ```
    pub fn create(&self, compression: u64) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        if guard.typed_meta(KeyType::TDigest)?.is_some() {
            return Err(TDigestError::KeyAlreadyExists.into());
        }
        let compression = check_compression(compression, TDigestError::AllocationFailed)?;
        let meta = guard.new_meta(Params::TDigest(TDigestParams { compression }))?;
        let mut batch = self.store.batch()?;
        let layout = self.layout_of(&meta)?;
        batch.put_page(layout.page_key, Digest::new(compression).encode());
        guard.put_meta(meta, batch)
    }

    /// Adds `values` blindly (`TDIGEST.ADD`): one write batch of value operands, no
    /// read. A NaN or infinite value is refused (RedisBloom's errors) and nothing is added.
    pub fn add(&self, values: &[f64]) -> Result<()> {
        if values.iter().any(|v| v.is_nan()) {
            return Err(TDigestError::ValParse.into());
        }
        if values.iter().any(|v| v.is_infinite()) {
            return Err(TDigestError::ValNotFinite.into());
        }
        let guard = self.store.share(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let mut batch = self.store.batch()?;
        for chunk in values.chunks(MAX_OP_VALUES) {
            let op = DigestOps::new(layout.compression).values(chunk);
            batch.merge_page(layout.page_key.clone(), op.encode());
        }
        self.store.write(batch)
    }

    /// Empties the digest, keeping its compression (`TDIGEST.RESET`).
    pub fn reset(&self) -> Result<()> {
        let guard = self.store.lock(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let mut batch = self.store.batch()?;
        batch.put_page(layout.page_key, Digest::new(layout.compression).encode());
        self.store.write(batch)
    }

    /// The digest's compression, reading only the key's metadata: what a command checks
    /// first (a missing key or another type is an error) without reading the digest.
    pub fn compression(&self) -> Result<u32> {
        let guard = self.store.share(self.ns, &self.key);
        Ok(self.layout(&guard)?.compression)
    }

    /// `TDIGEST.INFO` (reads without compressing, as RedisBloom's does).
    pub fn info(&self) -> Result<TDigestInfo> {
        self.peek(|d| TDigestInfo::from(d))
    }

    /// The smallest value added, NaN while empty (`TDIGEST.MIN`).
    pub fn min(&self) -> Result<f64> {
        self.peek(Digest::min_value)
    }

    /// The largest value added, NaN while empty (`TDIGEST.MAX`).
    pub fn max(&self) -> Result<f64> {
        self.peek(Digest::max_value)
    }

    /// The estimated value at each quantile in `[0, 1]` (`TDIGEST.QUANTILE`).
    pub fn quantiles(&self, qs: &[f64]) -> Result<Vec<f64>> {
        if qs.iter().any(|q| !(0.0..=1.0).contains(q)) {
            return Err(TDigestError::QuantileRange.into());
        }
        self.query(|d| d.quantiles(qs))
    }

    /// The estimated fraction of observations at or below each value, counting half of
    /// those equal to it (`TDIGEST.CDF`).
    pub fn cdf(&self, values: &[f64]) -> Result<Vec<f64>> {
        self.query(|d| values.iter().map(|v| d.cdf(*v)).collect())
    }

    /// The estimated rank of each value (`TDIGEST.RANK`; `reverse`: `TDIGEST.REVRANK`):
    /// -1 below the minimum (above the maximum), -2 while empty.
    pub fn ranks(&self, values: &[f64], reverse: bool) -> Result<Vec<i64>> {
        self.query(|d| d.ranks(values, reverse))
    }

    /// The estimated value with each rank (`TDIGEST.BYRANK`; `reverse`: `BYREVRANK`).
    pub fn by_ranks(&self, ranks: &[i64], reverse: bool) -> Result<Vec<f64>> {
        if ranks.iter().any(|r| *r < 0) {
            return Err(TDigestError::RankNegative.into());
        }
        self.query(|d| d.by_ranks(ranks, reverse))
    }

    /// The mean of the observations between two quantiles (`TDIGEST.TRIMMED_MEAN`).
    pub fn trimmed_mean(&self, low: f64, high: f64) -> Result<f64> {
        if !(0.0..=1.0).contains(&low) || !(0.0..=1.0).contains(&high) {
            return Err(TDigestError::CutRange.into());
        }
        if low >= high {
            return Err(TDigestError::CutOrder.into());
        }
        self.query(|d| d.trimmed_mean(low, high))
    }

    /// Runs `answer` on the stored digest under the shared lock, for answers that do
    /// not compress (no copy).
    fn peek<T>(&self, answer: impl FnOnce(&Digest) -> T) -> Result<T> {
        let guard = self.store.share(self.ns, &self.key);
        let page = self.read_digest(&self.layout(&guard)?)?;
        let digest = page
            .as_digest()
            .ok_or_else(|| wrong_kind(&self.key, WHAT))?;
        Ok(answer(digest))
    }

    /// Runs `answer` on a copy of the digest; if it compressed the copy, the stored
    /// digest gets a compress operand (see the module docs).
    ///
    /// A digest with nothing to compress is answered under the shared lock. One that
    /// will be compressed is read again and answered under the exclusive lock, which
    /// adds wait for: the compress operand must compress what the answer saw and
    /// nothing added after it (under the shared lock an add could land between the
    /// read and the operand, which then compressed a value the answer had not seen: a
    /// state no serial order gives).
    fn query<T>(&self, answer: impl FnOnce(&mut Digest) -> T) -> Result<T> {
        {
            let guard = self.store.share(self.ns, &self.key);
            let layout = self.layout(&guard)?;
            let mut digest = self.read_copy(&layout)?;
            if !digest.needs_compress() {
                return Ok(answer(&mut digest));
            }
        }
        let guard = self.store.lock(self.ns, &self.key);
        let layout = self.layout(&guard)?;
        let mut digest = self.read_copy(&layout)?;
        let buffered = digest.needs_compress();
        let out = answer(&mut digest);
        // A replica stores only what its primary ships (the primary's own compress
        // operands among it).
        if buffered && !digest.needs_compress() && !self.store.is_replica() {
            self.write_compress(&layout)?;
        }
        drop(guard);
        Ok(out)
    }

    fn write_compress(&self, layout: &Layout) -> Result<()> {
        let mut batch = self.store.batch()?;
        let op = DigestOps::new(layout.compression).compress();
        batch.merge_page(layout.page_key.clone(), op.encode());
        self.store.write(batch)
    }

    /// The stored digest (a missing page reads as an empty digest).
    /// A copy of the stored digest. The page read is dropped on return, so a write that
    /// follows lets the cache apply its operand to the cached page in place.
    fn read_copy(&self, layout: &Layout) -> Result<Digest> {
        let page = self.read_digest(layout)?;
        let digest = page
            .as_digest()
            .ok_or_else(|| wrong_kind(&self.key, WHAT))?;
        Ok(digest.clone())
    }

    fn read_digest(&self, layout: &Layout) -> Result<Arc<rocksketch_merge::Page>> {
        let page = self
            .store
            .read_pages(&self.key, WHAT, std::slice::from_ref(&layout.page_key))?
            .pop()
            .flatten();
        // A page of another kind is reported by the caller that looks into it.
        Ok(page.unwrap_or_else(|| {
            Arc::new(rocksketch_merge::Page::Digest(Digest::new(
                layout.compression,
            )))
        }))
    }

    /// Reads this key's metadata under `guard` and checks it is a t-digest.
    fn layout(&self, guard: &KeyGuard) -> Result<Layout> {
        match guard.meta()? {
            None => Err(TDigestError::KeyDoesNotExist.into()),
            Some(meta) => self.layout_of(&meta),
        }
    }

    fn layout_of(&self, meta: &Meta) -> Result<Layout> {
        match meta.params {
            Params::TDigest(p) => Ok(Layout {
                compression: p.compression,
                version: meta.version,
                page_key: keys::page_key(
                    &keys::version_prefix(self.ns, &self.key, meta.version),
                    0,
                    0,
                ),
            }),
            _ => Err(Error::WrongType),
        }
    }
}

/// A compression asked for: at least 1 (else RedisBloom's error), at most
/// [`MAX_COMPRESSION`] (else `too_large`, RedisBloom's allocation failure).
pub(crate) fn check_compression(compression: u64, too_large: TDigestError) -> Result<u32> {
    if compression == 0 {
        return Err(TDigestError::CompressionNotPositive.into());
    }
    u32::try_from(compression)
        .ok()
        .filter(|c| *c <= MAX_COMPRESSION)
        .ok_or_else(|| too_large.into())
}
