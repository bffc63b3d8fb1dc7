//! How a Bloom filter's chain is sized (RedisBloom's rules), where an item's bits fall,
//! and the checks parameters pass, whether a client sent them or a dump carried them.

use super::{BloomParams, MAX_CAPACITY, MAX_ERROR, MAX_EXPANSION, MAX_FILTERS};
use crate::error::{BloomError, Result};
use rocksketch_merge::hash::murmur64a;
use std::f64::consts::LN_2;

/// The shape of one sub-filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Sub {
    pub(super) capacity: u64,
    pub(super) hashes: u32,
    pub(super) pages: u32,
    pub(super) page_bits: u32,
}

impl Sub {
    /// The capacity and error rate of sub-filter `index`.
    pub(super) fn target(params: &BloomParams, index: u32) -> (u64, f64) {
        if params.expansion == 0 {
            (params.capacity, params.error)
        } else {
            let growth = u64::from(params.expansion).saturating_pow(index);
            (
                params.capacity.saturating_mul(growth),
                params.error * 0.5f64.powi(index as i32 + 1),
            )
        }
    }

    /// Whether every sub-filter the chain can grow to has an error rate that sizes it
    /// (one halved past the smallest double would need infinitely many bits per item).
    fn all_sizable(params: &BloomParams) -> bool {
        let reach = if params.expansion == 0 {
            1
        } else {
            MAX_FILTERS
        };
        (0..reach).all(|i| {
            let (_, error) = Sub::target(params, i);
            error > 0.0 && (-error.ln()).is_finite()
        })
    }

    pub(super) fn of(params: &BloomParams, index: u32) -> Sub {
        let (capacity, error) = Sub::target(params, index);
        let bits_per_item = -error.ln() / (LN_2 * LN_2);
        let hashes = (LN_2 * bits_per_item).ceil().max(1.0) as u32;
        let bits = (capacity as f64 * bits_per_item).ceil().max(8.0);
        let pages = (bits / f64::from(params.page_bits)).ceil().max(1.0);
        // Never 0, even for parameters `validate` refuses (a corrupt record): an item's
        // bits are taken modulo it.
        let page_bits = (((bits / pages / 8.0).ceil() * 8.0) as u32).max(8);
        Sub {
            capacity,
            hashes,
            pages: pages.min(f64::from(u32::MAX)) as u32,
            page_bits,
        }
    }

    pub(super) fn bytes(&self) -> u64 {
        u64::from(self.pages) * u64::from(self.page_bits / 8)
    }

    /// The page and the bit positions of an item with hashes `(a, b)`.
    pub(super) fn locate(&self, (a, b): (u64, u64)) -> (u32, Vec<u32>) {
        let page = ((u128::from(a) * u128::from(self.pages)) >> 64) as u32;
        // Double hashing within the page; the step comes from a's low bits, which the
        // page choice (a's high bits) hardly depends on.
        let step = (a ^ (a >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9) | 1;
        let bits = (0..u64::from(self.hashes))
            .map(|j| (b.wrapping_add(j.wrapping_mul(step)) % u64::from(self.page_bits)) as u32)
            .collect();
        (page, bits)
    }
}

/// RedisBloom's two 64-bit hashes of an item.
pub(super) fn hashes(item: &[u8]) -> (u64, u64) {
    let a = murmur64a(item, 0xc6a4_a793_5bd1_e995);
    (a, murmur64a(item, a))
}

/// RedisBloom's checks of `BF.RESERVE`'s numbers.
pub(super) fn validate(error: f64, capacity: u64, expansion: u32) -> Result<BloomParams> {
    if !(error > 0.0 && error < 1.0) {
        return Err(BloomError::ErrorRateRange.into());
    }
    if !(1..=MAX_CAPACITY).contains(&capacity) {
        return Err(BloomError::CapacityRange.into());
    }
    if expansion > MAX_EXPANSION {
        return Err(BloomError::BadExpansion.into());
    }
    let params = BloomParams {
        error: error.min(MAX_ERROR),
        capacity,
        expansion,
        filters: 1,
        page_bits: 8,
    };
    if !Sub::all_sizable(&params) {
        return Err(BloomError::ErrorRateTooSmall.into());
    }
    Ok(params)
}

/// Checks parameters that come from outside (a dump's header) as `BF.RESERVE` checks
/// its arguments, plus what only a stored filter has: its chain length and page size.
pub(super) fn validate_stored(params: &BloomParams, max_page_bits: u32) -> Result<()> {
    let fresh = validate(params.error, params.capacity, params.expansion)?;
    let fits = fresh.error == params.error
        && (1..=MAX_FILTERS).contains(&params.filters)
        && (params.expansion != 0 || params.filters == 1)
        && (8..=max_page_bits).contains(&params.page_bits)
        && params.page_bits.is_multiple_of(8);
    match fits {
        true => Ok(()),
        false => Err(BloomError::BadChunk.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(error: f64, capacity: u64, expansion: u32) -> BloomParams {
        BloomParams {
            page_bits: 16384 * 8,
            ..validate(error, capacity, expansion).unwrap()
        }
    }

    #[test]
    fn sizing_follows_redisbloom() {
        let p = params(0.01, 1000, 2);
        let first = Sub::of(&p, 0);
        // Half the error: 0.005 -> 11.03 bits per item, 8 hashes.
        assert_eq!(first.hashes, 8);
        let bits = u64::from(first.pages) * u64::from(first.page_bits);
        assert!((11_030..=11_040).contains(&bits), "{bits}");
        let second = Sub::of(&p, 1);
        assert_eq!(second.capacity, 2000);
        assert_eq!(second.hashes, 9);
        let fixed = Sub::of(&params(0.01, 1000, 0), 0);
        assert_eq!(fixed.hashes, 7);
    }

    #[test]
    fn located_bits_stay_in_the_page() {
        let sub = Sub::of(&params(0.001, 1_000_000, 2), 0);
        assert!(sub.pages > 1);
        for i in 0..1000u32 {
            let (page, bits) = sub.locate(hashes(&i.to_le_bytes()));
            assert!(page < sub.pages);
            assert!(bits.iter().all(|b| *b < sub.page_bits));
        }
    }
}
