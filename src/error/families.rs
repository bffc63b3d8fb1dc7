//! The error cases of each command family, with the texts their clients see.

/// Errors of the count-min sketch commands, with RedisBloom's exact texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CmsError {
    KeyDoesNotExist,
    KeyAlreadyExists,
    InvalidWidth,
    InvalidDepth,
    InvalidInitArguments,
    InvalidOverestimation,
    InvalidProb,
    CannotParseNumber,
    NumberNegative,
    DimensionsDiffer,
    InvalidNumkeys,
    NumkeysNotPositive,
    WrongNumberOfKeys,
    WrongNumberOfKeysWeights,
    InvalidWeight,
    MergeOverflow,
    IncrbyOverflow,
    /// Ours: more rows than [`crate::cms::MAX_DEPTH`].
    DepthTooLarge,
    /// Ours: more counters than [`crate::cms::MAX_CELLS`].
    TooManyCounters,
    /// Ours: a `CMS.MERGE` whose pages × sources pass 2^24 reads.
    MergeTooLarge,
}

impl CmsError {
    /// The error text RedisBloom replies with.
    pub fn text(self) -> &'static str {
        match self {
            CmsError::KeyDoesNotExist => "CMS: key does not exist",
            CmsError::KeyAlreadyExists => "CMS: key already exists",
            CmsError::InvalidWidth => "CMS: invalid width",
            CmsError::InvalidDepth => "CMS: invalid depth",
            CmsError::InvalidInitArguments => "CMS: invalid init arguments",
            CmsError::InvalidOverestimation => "CMS: invalid overestimation value",
            CmsError::InvalidProb => "CMS: invalid prob value",
            CmsError::CannotParseNumber => "CMS: Cannot parse number",
            CmsError::NumberNegative => "CMS: Number cannot be negative",
            CmsError::DimensionsDiffer => "CMS: width/depth is not equal",
            CmsError::InvalidNumkeys => "CMS: invalid numkeys",
            CmsError::NumkeysNotPositive => "CMS: Number of keys must be positive",
            CmsError::WrongNumberOfKeys => "CMS: wrong number of keys",
            CmsError::WrongNumberOfKeysWeights => "CMS: wrong number of keys/weights",
            CmsError::InvalidWeight => "CMS: invalid weight value",
            CmsError::MergeOverflow => "CMS: MERGE overflow",
            CmsError::IncrbyOverflow => "CMS: INCRBY overflow",
            CmsError::DepthTooLarge => {
                "CMS: invalid depth: at most 128 rows (a failure probability of 2^-128)"
            }
            CmsError::MergeTooLarge => {
                "CMS: MERGE too large: at most 16777216 page reads (pages x sources)"
            }
            CmsError::TooManyCounters => {
                "CMS: invalid init arguments: width x depth is at most 268435456 counters"
            }
        }
    }
}

/// Errors of the cuckoo filter commands, with RedisBloom's exact texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CuckooError {
    BadCapacity,
    CapacityRange,
    BucketSizeParse,
    BucketSizeRange,
    MaxIterationsParse,
    MaxIterationsRange,
    ExpansionParse,
    ExpansionRange,
    FingerprintParse,
    FingerprintRange,
    ItemExists,
    /// `CF.INSERT ... NOCREATE` and `CF.INFO` on a missing key.
    NotFound,
    /// `CF.DEL` on a missing key.
    DelNotFound,
    FilterFull,
    MaximumExpansions,
    UnknownArgument,
    InvalidPosition,
    BadChunk,
    /// A `CF.SCANDUMP` cursor from before the chain grew or the key was recreated.
    DumpChanged,
}

impl CuckooError {
    /// The error text RedisBloom replies with.
    pub fn text(self) -> &'static str {
        match self {
            CuckooError::BadCapacity => "Bad capacity",
            CuckooError::CapacityRange => {
                "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]"
            }
            CuckooError::BucketSizeParse => "Couldn't parse BUCKETSIZE",
            CuckooError::BucketSizeRange => "BUCKETSIZE: value must be in the range [1, 255]",
            CuckooError::MaxIterationsParse => "Couldn't parse MAXITERATIONS",
            CuckooError::MaxIterationsRange => {
                "MAXITERATIONS: value must be in the range [1, 65535]"
            }
            CuckooError::ExpansionParse => "Couldn't parse EXPANSION",
            CuckooError::ExpansionRange => "EXPANSION: value must be in the range [0, 32768]",
            CuckooError::FingerprintParse => "Couldn't parse FINGERPRINT",
            CuckooError::FingerprintRange => "FINGERPRINT: value must be 8, 12 or 16",
            CuckooError::ItemExists => "ERR item exists",
            CuckooError::NotFound => "ERR not found",
            CuckooError::DelNotFound => "Not found",
            CuckooError::FilterFull => "Filter is full",
            CuckooError::MaximumExpansions => "Maximum expansions reached",
            CuckooError::UnknownArgument => "Unknown argument received",
            CuckooError::InvalidPosition => "Invalid position",
            CuckooError::BadChunk => "ERR received bad data",
            CuckooError::DumpChanged => DUMP_CHANGED,
        }
    }
}

/// A dump cursor names a state the filter has left (ours: RedisBloom would send chunks
/// its own `LOADCHUNK` refuses).
const DUMP_CHANGED: &str = "ERR the filter changed during the dump; restart it from cursor 0";

/// Errors of the Bloom filter commands, with RedisBloom's exact texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BloomError {
    BadErrorRate,
    ErrorRateRange,
    /// Ours: an error rate so small that a sub-filter the chain may grow to cannot be
    /// sized (its halved rate underflows to zero).
    ErrorRateTooSmall,
    BadCapacity,
    CapacityRange,
    BadExpansion,
    NonScalingCannotExpand,
    ItemExists,
    NonScalingFull,
    NotFound,
    MaximumExpansions,
    InvalidPosition,
    BadChunk,
    /// A `BF.SCANDUMP` cursor from before the chain grew or the key was recreated.
    DumpChanged,
}

impl BloomError {
    /// The error text RedisBloom replies with.
    pub fn text(self) -> &'static str {
        match self {
            BloomError::BadErrorRate => "ERR bad error rate",
            BloomError::ErrorRateRange => {
                "ERR error rate must be in the range (0.000000, 1.000000)"
            }
            BloomError::ErrorRateTooSmall => {
                "ERR error rate too small: the filter's sub-filters could not be sized"
            }
            BloomError::BadCapacity => "ERR bad capacity",
            BloomError::CapacityRange => "ERR capacity must be in the range [1, 1073741824]",
            BloomError::BadExpansion => "ERR bad expansion",
            BloomError::NonScalingCannotExpand => "Nonscaling filters cannot expand",
            BloomError::ItemExists => "ERR item exists",
            BloomError::NonScalingFull => "ERR non scaling filter is full",
            BloomError::NotFound => "ERR not found",
            BloomError::MaximumExpansions => "Maximum expansions reached",
            BloomError::InvalidPosition => "Invalid position",
            BloomError::BadChunk => "ERR received bad data",
            BloomError::DumpChanged => DUMP_CHANGED,
        }
    }
}

/// Errors of the t-digest commands, with RedisBloom's exact texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TDigestError {
    KeyDoesNotExist,
    KeyAlreadyExists,
    WrongKeyword,
    CompressionParse,
    CompressionNotPositive,
    /// Also ours past [`rocksketch_merge::tdigest::MAX_COMPRESSION`].
    AllocationFailed,
    /// Also ours past [`rocksketch_merge::tdigest::MAX_COMPRESSION`].
    MergeAllocationFailed,
    Overflow,
    ValParse,
    ValNotFinite,
    QuantileParse,
    QuantileRange,
    CdfParse,
    ValueParse,
    RankParse,
    RankNegative,
    LowCutParse,
    HighCutParse,
    CutRange,
    CutOrder,
    NumkeysParse,
    NumkeysNotPositive,
}

impl TDigestError {
    /// The error text RedisBloom replies with.
    pub fn text(self) -> &'static str {
        match self {
            TDigestError::KeyDoesNotExist => "ERR T-Digest: key does not exist",
            TDigestError::KeyAlreadyExists => "ERR T-Digest: key already exists",
            TDigestError::WrongKeyword => "ERR T-Digest: wrong keyword",
            TDigestError::CompressionParse => "ERR T-Digest: error parsing compression parameter",
            TDigestError::CompressionNotPositive => {
                "ERR T-Digest: compression parameter needs to be a positive integer"
            }
            TDigestError::AllocationFailed => "ERR T-Digest: allocation failed",
            TDigestError::MergeAllocationFailed => {
                "ERR T-Digest: allocation of destination digest failed"
            }
            TDigestError::Overflow => "ERR T-Digest: overflow detected",
            TDigestError::ValParse => "ERR T-Digest: error parsing val parameter",
            TDigestError::ValNotFinite => "ERR T-Digest: val parameter needs to be a finite number",
            TDigestError::QuantileParse => "ERR T-Digest: error parsing quantile",
            TDigestError::QuantileRange => "ERR T-Digest: quantile should be in [0,1]",
            TDigestError::CdfParse => "ERR T-Digest: error parsing cdf",
            TDigestError::ValueParse => "ERR T-Digest: error parsing value",
            TDigestError::RankParse => "ERR T-Digest: error parsing rank",
            TDigestError::RankNegative => "ERR T-Digest: rank needs to be non negative",
            TDigestError::LowCutParse => "ERR T-Digest: error parsing low_cut_percentile",
            TDigestError::HighCutParse => "ERR T-Digest: error parsing high_cut_percentile",
            TDigestError::CutRange => {
                "ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]"
            }
            TDigestError::CutOrder => {
                "ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile"
            }
            TDigestError::NumkeysParse => "ERR T-Digest: error parsing numkeys",
            TDigestError::NumkeysNotPositive => {
                "ERR T-Digest: numkeys needs to be a positive integer"
            }
        }
    }
}

/// Errors of the Top-K commands, with RedisBloom's exact texts (most without `ERR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TopKError {
    KeyDoesNotExist,
    KeyAlreadyExists,
    InvalidK,
    InvalidWidth,
    InvalidDepth,
    InvalidDecay,
    /// Also ours past [`rocksketch_merge::topk::MAX_CELLS`] counters,
    /// [`rocksketch_merge::topk::MAX_DEPTH`] rows or [`rocksketch_merge::topk::MAX_K`]
    /// items.
    InsufficientMemory,
    BadIncrement,
    WithcountExpected,
    /// Ours: an item longer than [`rocksketch_merge::topk::MAX_ITEM_BYTES`].
    ItemTooLong,
}

impl TopKError {
    /// The error text RedisBloom replies with.
    pub fn text(self) -> &'static str {
        match self {
            TopKError::KeyDoesNotExist => "TopK: key does not exist",
            TopKError::KeyAlreadyExists => "TopK: key already exists",
            TopKError::InvalidK => "TopK: invalid k",
            TopKError::InvalidWidth => "TopK: invalid width",
            TopKError::InvalidDepth => "TopK: invalid depth",
            TopKError::InvalidDecay => "TopK: invalid decay value. must be '<= 1' & '> 0'",
            TopKError::InsufficientMemory => {
                "ERR Insufficient memory to create topk data structure"
            }
            TopKError::BadIncrement => concat!(
                "TopK: increment must be an integer greater or equal to 0",
                "                            ",
                "and smaller or equal to 100,000"
            ),
            TopKError::WithcountExpected => "WITHCOUNT keyword expected",
            TopKError::ItemTooLong => "TopK: item longer than 1024 bytes",
        }
    }
}

/// Errors of the Ribbon filter commands (our own family), in Redis's style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RibbonError {
    NotFound,
    KeyExists,
    BadErrorRate,
    ErrorRateRange,
    /// More than [`crate::meta::MAX_GENERATIONS`] builds with items.
    TooManyGenerations,
    /// More staged items than [`crate::ribbon::MAX_STAGED`].
    TooManyStaged,
    /// More than [`crate::meta::MAX_EPOCHS`] builds, finished or not.
    TooManyBuilds,
    /// A shard solved with none of the seeds and sizes tried (never seen in practice).
    Unsolvable,
    InvalidPosition,
    BadChunk,
    DumpChanged,
}

impl RibbonError {
    /// The error text.
    pub fn text(self) -> &'static str {
        match self {
            RibbonError::NotFound => "ERR not found",
            RibbonError::KeyExists => "ERR item exists",
            RibbonError::BadErrorRate => "ERR bad error rate",
            RibbonError::ErrorRateRange => {
                "ERR error rate must be in the range [2.3283064365386963e-10, 1) (2^-32: at most 32 result bits)"
            }
            RibbonError::TooManyGenerations => {
                "ERR too many generations: a ribbon filter holds at most 32 builds"
            }
            RibbonError::TooManyStaged => {
                "ERR too many staged items: at most 33554432 between builds; run RIBBON.BUILD"
            }
            RibbonError::TooManyBuilds => "ERR too many builds of this key",
            RibbonError::Unsolvable => "ERR build failed: a shard did not solve; items stay staged",
            RibbonError::InvalidPosition => "Invalid position",
            RibbonError::BadChunk => "ERR received bad data",
            RibbonError::DumpChanged => DUMP_CHANGED,
        }
    }
}
