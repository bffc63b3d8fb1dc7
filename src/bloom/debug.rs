//! `BF.DEBUG`: the chain's sub-filters as RedisBloom describes them.

use super::{chain, sub_of, BloomFilter};
use crate::error::Result;

/// One sub-filter as `BF.DEBUG` reports it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SubFilterInfo {
    /// Bytes of its bits, as RedisBloom sizes them (this store's pages differ a little:
    /// [`rocksketch_merge::layout::bloom::BloomChain::redisbloom_bytes`]).
    pub bytes: u64,
    /// Bits it has, as RedisBloom sizes them.
    pub bits: u64,
    /// Bits set per item.
    pub hashes: u32,
    /// Items it holds before the chain grows.
    pub capacity: u64,
    /// Items added to this sub-filter.
    pub items: u64,
    /// Its error rate.
    pub error: f64,
}

impl BloomFilter {
    /// Items in the chain and each sub-filter's shape (`BF.DEBUG`); `ERR not found` for
    /// a missing key.
    pub fn debug(&self) -> Result<(u64, Vec<SubFilterInfo>)> {
        let guard = self.store.share(self.ns, &self.key);
        let (_, params, prefix) = self.existing(&guard)?;
        let counts = self.counts(&prefix)?;
        let subs = (0..params.filters)
            .map(|i| {
                let sub = sub_of(&params, i);
                let bytes = chain(&params).redisbloom_bytes(i);
                SubFilterInfo {
                    bytes,
                    bits: bytes.saturating_mul(8),
                    hashes: sub.hashes,
                    capacity: sub.capacity,
                    items: counts.items_in(i),
                    error: chain(&params).target(i).1,
                }
            })
            .collect();
        Ok((counts.items(params.filters), subs))
    }
}
