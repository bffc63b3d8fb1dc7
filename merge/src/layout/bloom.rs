//! Bloom filters: RedisBloom's sizing on blocked bit pages.
//!
//! A filter is a chain of sub-filters. Sub-filter `i` holds `capacity × expansion^i`
//! items at error `error / 2^(i+1)` (a non-scaling filter, expansion 0, has one
//! sub-filter at the full error), with `-ln(error) / ln(2)^2` bits per item and
//! `ceil(ln 2 × bits per item)` hashes, as RedisBloom sizes them. Each sub-filter is cut
//! into pages and all of an item's bits fall in one page, so an add is one small operand.

use crate::hash::murmur64a;
use std::f64::consts::LN_2;

/// Error rates above this are lowered to it (RedisBloom's cap).
pub const MAX_ERROR: f64 = 0.25;
/// Largest initial capacity.
pub const MAX_CAPACITY: u64 = 1 << 30;
/// Largest expansion factor.
pub const MAX_EXPANSION: u32 = 32768;
/// Sub-filters a chain may grow to.
pub const MAX_FILTERS: u32 = 32;

/// What sizes every sub-filter of a chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomChain {
    /// The error rate asked for (in (0, 1)).
    pub error: f64,
    /// Items the first sub-filter holds.
    pub capacity: u64,
    /// Growth factor of each next sub-filter; 0 for a non-scaling filter.
    pub expansion: u32,
    /// The largest page, in bits (a multiple of 8).
    pub page_bits: u32,
}

/// The shape of one sub-filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomSub {
    /// Items it holds before the chain grows.
    pub capacity: u64,
    /// Bits set per item.
    pub hashes: u32,
    /// Pages it is split into.
    pub pages: u32,
    /// Bits per page (a multiple of 8, never 0).
    pub page_bits: u32,
}

impl BloomChain {
    /// The capacity and error rate of sub-filter `index`.
    pub fn target(&self, index: u32) -> (u64, f64) {
        if self.expansion == 0 {
            (self.capacity, self.error)
        } else {
            let growth = u64::from(self.expansion).saturating_pow(index);
            (
                self.capacity.saturating_mul(growth),
                self.error * 0.5f64.powi(index as i32 + 1),
            )
        }
    }

    /// RedisBloom's memory accounting for a chain of its first `filters` sub-filters,
    /// what its `BF.INFO` reports as `Size`: its chain struct (32 bytes), then per
    /// sub-filter its link struct (64 bytes) and its bitmap ([`Self::redisbloom_bytes`]).
    pub fn redisbloom_size(&self, filters: u32) -> u64 {
        const CHAIN: u64 = 32;
        const LINK: u64 = 64;
        (0..filters).fold(CHAIN, |size, index| {
            size.saturating_add(LINK)
                .saturating_add(self.redisbloom_bytes(index))
        })
    }

    /// The bytes RedisBloom gives sub-filter `index`'s bitmap, what `BF.DEBUG` reports
    /// (as `bytes`, and 8 times that as `bits`): `capacity x bits per item` bits, with
    /// RedisBloom's own constant for ln(2)^2, cut to an integer (at least 1) and rounded
    /// up to 64-bit words. This store's pages hold a few more bits or fewer: see
    /// [`BloomChain::sub`].
    pub fn redisbloom_bytes(&self, index: u32) -> u64 {
        const LN2_SQUARED: f64 = 0.480453013918201; // bloom.c's calc_bpe
        let (capacity, error) = self.target(index);
        let bits = ((capacity as f64 * (-(error.ln() / LN2_SQUARED)).abs()) as u64).max(1);
        bits.div_ceil(64).saturating_mul(8)
    }

    /// Whether every sub-filter the chain can grow to has an error rate that sizes it
    /// (one halved past the smallest double would need infinitely many bits per item).
    pub fn sizable(&self) -> bool {
        let reach = if self.expansion == 0 { 1 } else { MAX_FILTERS };
        (0..reach).all(|i| {
            let (_, error) = self.target(i);
            error > 0.0 && (-error.ln()).is_finite()
        })
    }

    /// The shape of sub-filter `index`.
    pub fn sub(&self, index: u32) -> BloomSub {
        let (capacity, error) = self.target(index);
        let bits_per_item = -error.ln() / (LN_2 * LN_2);
        let hashes = (LN_2 * bits_per_item).ceil().max(1.0) as u32;
        let bits = (capacity as f64 * bits_per_item).ceil().max(8.0);
        let pages = (bits / f64::from(self.page_bits.max(8))).ceil().max(1.0);
        // Never 0, even for parameters a validation refuses (a corrupt record): an
        // item's bits are taken modulo it.
        let page_bits = (((bits / pages / 8.0).ceil() * 8.0) as u32).max(8);
        BloomSub {
            capacity,
            hashes,
            pages: pages.min(f64::from(u32::MAX)) as u32,
            page_bits,
        }
    }
}

impl BloomSub {
    /// Bytes of bitmap.
    pub fn bytes(&self) -> u64 {
        u64::from(self.pages) * u64::from(self.page_bits / 8)
    }

    /// The page and the bit positions of an item with hashes `(a, b)` (see [`hashes`]).
    pub fn locate(&self, (a, b): (u64, u64)) -> (u32, ItemBits) {
        // Double hashing within the page; the step comes from a's low bits, which the
        // page choice (a's high bits) hardly depends on.
        let step = (a ^ (a >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9) | 1;
        let bits = ItemBits {
            next: b,
            step,
            page_bits: u64::from(self.page_bits.max(1)),
            left: self.hashes,
        };
        (self.page_of(a), bits)
    }

    /// The page of an item whose first hash is `a`.
    pub fn page_of(&self, a: u64) -> u32 {
        ((u128::from(a) * u128::from(self.pages)) >> 64) as u32
    }
}

/// The bit positions of one item within its page, computed as they are taken (an add
/// and a lookup visit them without allocating): `b + j * step` modulo the page's bits
/// for `j` in `0..hashes`.
#[derive(Debug, Clone)]
pub struct ItemBits {
    next: u64,
    step: u64,
    page_bits: u64,
    left: u32,
}

impl Iterator for ItemBits {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        self.left = self.left.checked_sub(1)?;
        let bit = (self.next % self.page_bits) as u32;
        self.next = self.next.wrapping_add(self.step);
        Some(bit)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for ItemBits {}

/// RedisBloom's two 64-bit hashes of an item.
pub fn hashes(item: &[u8]) -> (u64, u64) {
    let a = murmur64a(item, 0xc6a4_a793_5bd1_e995);
    (a, murmur64a(item, a))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(error: f64, capacity: u64, expansion: u32) -> BloomChain {
        BloomChain {
            error,
            capacity,
            expansion,
            page_bits: 16384 * 8,
        }
    }

    #[test]
    fn sizing_follows_redisbloom() {
        let c = chain(0.01, 1000, 2);
        let first = c.sub(0);
        // Half the error: 0.005 -> 11.03 bits per item, 8 hashes.
        assert_eq!(first.hashes, 8);
        let bits = u64::from(first.pages) * u64::from(first.page_bits);
        assert!((11_030..=11_040).contains(&bits), "{bits}");
        let second = c.sub(1);
        assert_eq!(second.capacity, 2000);
        assert_eq!(second.hashes, 9);
        assert_eq!(chain(0.01, 1000, 0).sub(0).hashes, 7);
    }

    #[test]
    fn located_bits_stay_in_the_page() {
        let sub = chain(0.001, 1_000_000, 2).sub(0);
        assert!(sub.pages > 1);
        for i in 0..1000u32 {
            let (page, bits) = sub.locate(hashes(&i.to_le_bytes()));
            assert!(page < sub.pages);
            assert_eq!(bits.len(), sub.hashes as usize);
            assert!(bits.clone().all(|b| b < sub.page_bits));
            // The positions as first released: b + j * step, modulo the page's bits.
            let (a, b) = hashes(&i.to_le_bytes());
            let step = (a ^ (a >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9) | 1;
            let expected: Vec<u32> = (0..u64::from(sub.hashes))
                .map(|j| (b.wrapping_add(j.wrapping_mul(step)) % u64::from(sub.page_bits)) as u32)
                .collect();
            assert_eq!(bits.collect::<Vec<_>>(), expected);
        }
    }
}
