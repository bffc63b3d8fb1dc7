//! How a Bloom filter's chain is sized (RedisBloom's rules), where an item's bits fall,
//! and the checks parameters pass, whether a client sent them or a dump carried them.

use super::{BloomParams, MAX_CAPACITY, MAX_ERROR, MAX_EXPANSION, MAX_FILTERS};
use crate::error::{BloomError, Result};
use rocksketch_merge::layout::bloom::BloomChain;
pub(super) use rocksketch_merge::layout::bloom::{hashes, BloomSub as Sub};
use std::cell::RefCell;

/// What sizes the sub-filters of a filter with these parameters.
pub(super) fn chain(params: &BloomParams) -> BloomChain {
    BloomChain {
        error: params.error,
        capacity: params.capacity,
        expansion: params.expansion,
        page_bits: params.page_bits,
    }
}

/// The shape of sub-filter `index`. Sizing takes logarithms and roundings that an add
/// repeats for every item and sub-filter (a few percent of a hot `BF.ADD`'s time), so
/// each thread keeps the shapes of the chain it sized last (one hot filter's, usually).
pub(super) fn sub_of(params: &BloomParams, index: u32) -> Sub {
    thread_local! {
        static SIZED: RefCell<(SizingKey, Vec<Sub>)> = const { RefCell::new(((0, 0, 0, 0), Vec::new())) };
    }
    const KEPT: u32 = 64;
    let key = (
        params.error.to_bits(),
        params.capacity,
        params.expansion,
        params.page_bits,
    );
    if index >= KEPT {
        return chain(params).sub(index);
    }
    SIZED.with_borrow_mut(|(sized_key, subs)| {
        if *sized_key != key {
            *sized_key = key;
            subs.clear();
        }
        let chain = chain(params);
        while subs.len() <= index as usize {
            subs.push(chain.sub(subs.len() as u32));
        }
        subs[index as usize]
    })
}

/// What a chain's shapes follow from: the error rate's bits, the capacity, the
/// expansion and the page size.
type SizingKey = (u64, u64, u32, u32);

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
    if !chain(&params).sizable() {
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
