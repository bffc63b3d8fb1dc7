//! A cuckoo filter's options, and the checks its parameters pass (from a client or a
//! dump).

use super::*;

/// How a new filter is shaped (`CF.RESERVE`'s arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooOptions {
    /// Items the first sub-filter is sized for.
    pub capacity: u64,
    /// Fingerprints per bucket (1 to 255).
    pub bucket_size: u8,
    /// Most kick-outs an insert tries (1 to 65535).
    pub max_iterations: u16,
    /// 0 never grows; otherwise rounded up to a power of two, as RedisBloom does.
    pub expansion: u32,
    /// Fingerprint width: 8 (RedisBloom's), 12 (about 0.2 % false positives with buckets
    /// of 4, packed two in three bytes) or 16 bits.
    pub fp_bits: u8,
}

impl Default for CuckooOptions {
    fn default() -> CuckooOptions {
        CuckooOptions {
            capacity: DEFAULT_CAPACITY,
            bucket_size: DEFAULT_BUCKET_SIZE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            expansion: u32::from(DEFAULT_EXPANSION),
            fp_bits: 8,
        }
    }
}

pub(super) fn cuckoo_params(meta: &Meta) -> Result<CuckooParams> {
    match meta.params {
        Params::Cuckoo(params) => Ok(params),
        Params::Cms(_)
        | Params::Bloom(_)
        | Params::TDigest(_)
        | Params::TopK(_)
        | Params::Ribbon(_)
        | Params::Hll => Err(Error::WrongType),
    }
}

/// RedisBloom's checks of `CF.RESERVE`'s numbers, then the sizing: a power-of-two
/// number of buckets for the capacity, pages of about `page_bytes`.
pub(super) fn validate(options: CuckooOptions, page_bytes: u32) -> Result<CuckooParams> {
    let CuckooOptions {
        capacity,
        bucket_size,
        max_iterations,
        expansion,
        fp_bits,
    } = options;
    if bucket_size == 0 {
        return Err(CuckooError::BucketSizeRange.into());
    }
    if max_iterations == 0 {
        return Err(CuckooError::MaxIterationsRange.into());
    }
    if expansion > MAX_EXPANSION {
        return Err(CuckooError::ExpansionRange.into());
    }
    if !matches!(fp_bits, 8 | 12 | 16) {
        return Err(CuckooError::FingerprintRange.into());
    }
    if capacity < 2 * u64::from(bucket_size) || capacity > MAX_CAPACITY {
        return Err(CuckooError::CapacityRange.into());
    }
    let chain = CuckooChain::sized(capacity, bucket_size, expansion, fp_bits, page_bytes);
    Ok(CuckooParams {
        capacity,
        buckets: chain.buckets,
        bucket_size,
        fp_bits,
        max_iterations,
        expansion: chain.expansion,
        filters: 1,
        page_buckets: chain.page_buckets,
    })
}

/// Checks parameters that come from outside (a dump's header) as `CF.RESERVE` checks
/// its arguments: they must be what a reserve with the same options makes, in a chain
/// of at most [`MAX_FILTERS`] (one if it never grows), with pages no larger than
/// `page_bytes` makes.
pub(super) fn validate_stored(params: &CuckooParams, page_bytes: u32) -> Result<()> {
    let options = CuckooOptions {
        capacity: params.capacity,
        bucket_size: params.bucket_size,
        max_iterations: params.max_iterations,
        expansion: u32::from(params.expansion),
        fp_bits: params.fp_bits,
    };
    let fresh = validate(options, page_bytes)?;
    let fits = fresh.buckets == params.buckets
        && fresh.expansion == params.expansion
        && params.page_buckets <= fresh.page_buckets
        && (1..=MAX_FILTERS).contains(&params.filters)
        && (params.expansion != 0 || params.filters == 1);
    match fits {
        true => Ok(()),
        false => Err(CuckooError::BadChunk.into()),
    }
}
