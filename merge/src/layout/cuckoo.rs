//! Cuckoo filters: RedisBloom's chain, cut into pages of a power-of-two number of
//! buckets.
//!
//! Sub-filter `i` has `buckets × expansion^i` buckets of `bucket_size` slots. An item's
//! page, its first bucket and its fingerprint all come from one 64-bit MurmurHash64A of
//! the item (seed 0, as RedisBloom): `i = hash mod buckets`, page `i / page_buckets`,
//! bucket `i mod page_buckets`, fingerprint `hash mod (2^fp_bits - 1) + 1`. The
//! alternate bucket is taken inside the page ([`Shape::alt`]), so an insert is one
//! operand to one page.

use crate::cuckoo::Shape;
use crate::error::{Error, Result};
use crate::hash::murmur64a;

/// Largest capacity `CF.RESERVE` accepts.
pub const MAX_CAPACITY: u64 = 1 << 30;
/// Largest expansion factor (before rounding up to a power of two).
pub const MAX_EXPANSION: u32 = 32768;
/// Sub-filters a chain may grow to.
pub const MAX_FILTERS: u32 = 32;

/// What shapes every sub-filter of a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooChain {
    /// Buckets of the first sub-filter (a power of two).
    pub buckets: u32,
    /// Fingerprints per bucket.
    pub bucket_size: u8,
    /// Fingerprint width: 8, 12 or 16 bits.
    pub fp_bits: u8,
    /// Growth factor of each next sub-filter (a power of two); 0 never grows.
    pub expansion: u16,
    /// Buckets per page (a power of two).
    pub page_buckets: u32,
}

/// The shape of one sub-filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CuckooSub {
    /// Buckets in this sub-filter.
    pub buckets: u64,
    /// Buckets per page.
    pub page_buckets: u32,
    /// Pages it is split into.
    pub pages: u32,
    /// Items it takes before the chain grows (see [`load_target`]).
    pub target: u64,
    /// Every page's shape.
    pub shape: Shape,
}

/// The share of a sub-filter's slots it fills before the chain grows: what page-local
/// cuckoo hashing reaches with next to nothing in the stashes and short kick chains.
/// Reads replay a page's pending inserts, kicks included, so the last few percent of
/// load cost read latency: with buckets of 4, a 95 % target put exists' p99 before
/// compaction at 4.5x its p99 after; 93 % puts it at 1.5x (`bench cf-add`).
pub fn load_target(bucket_size: u8) -> f64 {
    match bucket_size {
        1 => 0.5,
        2 => 0.84,
        3 => 0.9,
        4..=7 => 0.93,
        _ => 0.97,
    }
}

impl CuckooChain {
    /// The chain `CF.RESERVE` makes (RedisBloom's sizing): a power-of-two number of
    /// buckets for the capacity, the largest power-of-two number of buckets that fits a
    /// page of `page_bytes`, the expansion rounded up to a power of two. The arguments
    /// are taken as checked (a bucket of at least one slot, 8-, 12- or 16-bit
    /// fingerprints, a capacity of at most 2^30); [`CuckooChain::sub`] checks the rest.
    pub fn sized(
        capacity: u64,
        bucket_size: u8,
        expansion: u32,
        fp_bits: u8,
        page_bytes: u32,
    ) -> Self {
        let bucket_size = bucket_size.max(1);
        let buckets = (capacity / u64::from(bucket_size))
            .next_power_of_two()
            .min(1 << 31) as u32;
        let bucket_bits = (u32::from(bucket_size) * u32::from(fp_bits)).max(1);
        let page_buckets = (page_bytes.saturating_mul(8) / bucket_bits).max(1);
        // The largest power of two that fits the page.
        let page_buckets = 1 << (31 - page_buckets.leading_zeros());
        let expansion = match expansion {
            0 => 0,
            e => e.next_power_of_two().min(1 << 15) as u16,
        };
        CuckooChain {
            buckets,
            bucket_size,
            fp_bits,
            expansion,
            page_buckets,
        }
    }

    /// RedisBloom's memory accounting for a chain of its first `filters` sub-filters,
    /// what its `CF.INFO` reports as `Size`: its filter struct (40 bytes), then per
    /// sub-filter its struct (16 bytes) and a byte per slot (its 8-bit fingerprints),
    /// whatever fingerprints this chain stores.
    pub fn redisbloom_size(&self, filters: u32) -> u64 {
        const FILTER: u64 = 40;
        const SUB: u64 = 16;
        let growth = u64::from(self.expansion.max(1));
        (0..filters).fold(FILTER, |size, index| {
            let buckets = u64::from(self.buckets).saturating_mul(growth.saturating_pow(index));
            size.saturating_add(SUB)
                .saturating_add(buckets.saturating_mul(u64::from(self.bucket_size)))
        })
    }

    /// The shape of sub-filter `index`; an error if it cannot be one.
    pub fn sub(&self, index: u32) -> Result<CuckooSub> {
        let growth = u64::from(self.expansion.max(1)).saturating_pow(index);
        let buckets = u64::from(self.buckets).saturating_mul(growth).min(1 << 40);
        if !buckets.is_power_of_two() {
            return Err(Error::Invalid("the bucket count is a power of two"));
        }
        let page_buckets = u64::from(self.page_buckets).min(buckets) as u32;
        let pages = u32::try_from(buckets / u64::from(page_buckets.max(1)))
            .map_err(|_| Error::Invalid("cuckoo sub-filter too large"))?;
        let slots = buckets * u64::from(self.bucket_size);
        let shape = Shape::new(self.fp_bits, self.bucket_size, page_buckets)?;
        Ok(CuckooSub {
            buckets,
            page_buckets,
            pages,
            target: ((slots as f64) * load_target(self.bucket_size)) as u64,
            shape,
        })
    }
}

impl CuckooSub {
    /// The page and the bucket within it of an item with hash `h` (see [`hash`]).
    pub fn locate(&self, h: u64) -> (u32, u32) {
        let i = h & (self.buckets - 1);
        (
            (i / u64::from(self.page_buckets)) as u32,
            (i % u64::from(self.page_buckets)) as u32,
        )
    }

    /// Bytes of fingerprint slots.
    pub fn bytes(&self) -> u64 {
        (self.buckets * u64::from(self.shape.bucket_size) * u64::from(self.shape.fp_bits))
            .div_ceil(8)
    }
}

/// An item's 64-bit hash and its fingerprint (never 0) of `fp_bits` bits.
pub fn hash(item: &[u8], fp_bits: u8) -> (u64, u16) {
    let h = murmur64a(item, 0);
    let fp = match fp_bits {
        8 => h % 255 + 1,
        12 => h % 4095 + 1,
        _ => h % 65535 + 1,
    } as u16;
    (h, fp)
}
