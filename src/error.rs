//! The engine's error type: storage failures, corruption, and the user-facing cases, each
//! with the text RedisBloom sends for it.

use std::fmt;

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

/// Everything that can go wrong in the engine.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// RocksDB reported an error (its message; rust-rocksdb's error is only a string).
    Storage(String),
    /// An I/O error outside RocksDB.
    Io(std::io::Error),
    /// A stored page or record of `key` could not be decoded.
    Corruption {
        key: Vec<u8>,
        what: &'static str,
        source: rocksketch_merge::Error,
    },
    /// The key holds another type of structure.
    WrongType,
    /// An argument is out of range; the text says which and why.
    InvalidArgument(String),
    /// A count-min sketch command error.
    Cms(CmsError),
    /// A Bloom filter command error.
    Bloom(BloomError),
    /// A cuckoo filter command error.
    Cuckoo(CuckooError),
    /// A t-digest command error.
    TDigest(TDigestError),
    /// A Top-K command error.
    TopK(TopKError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Storage(msg) => write!(f, "ERR storage: {msg}"),
            Error::Io(err) => write!(f, "ERR i/o: {err}"),
            Error::Corruption { key, what, source } => write!(
                f,
                "ERR corruption in {what} of key '{}': {source}",
                String::from_utf8_lossy(key)
            ),
            Error::WrongType => {
                f.write_str("WRONGTYPE Operation against a key holding the wrong kind of value")
            }
            Error::InvalidArgument(msg) => write!(f, "ERR {msg}"),
            Error::Cms(err) => f.write_str(err.text()),
            Error::Bloom(err) => f.write_str(err.text()),
            Error::Cuckoo(err) => f.write_str(err.text()),
            Error::TDigest(err) => f.write_str(err.text()),
            Error::TopK(err) => f.write_str(err.text()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(err) => Some(err),
            Error::Corruption { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<rocksdb::Error> for Error {
    fn from(err: rocksdb::Error) -> Error {
        Error::Storage(err.into_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Error {
        Error::Io(err)
    }
}

impl Error {
    /// Corruption found in `what` of `key`.
    pub(crate) fn corrupt(
        key: &[u8],
        what: &'static str,
        source: rocksketch_merge::Error,
    ) -> Error {
        Error::Corruption {
            key: key.to_vec(),
            what,
            source,
        }
    }
}

impl From<CuckooError> for Error {
    fn from(err: CuckooError) -> Error {
        Error::Cuckoo(err)
    }
}

impl From<BloomError> for Error {
    fn from(err: BloomError) -> Error {
        Error::Bloom(err)
    }
}

impl From<TopKError> for Error {
    fn from(err: TopKError) -> Error {
        Error::TopK(err)
    }
}

impl From<TDigestError> for Error {
    fn from(err: TDigestError) -> Error {
        Error::TDigest(err)
    }
}

impl From<CmsError> for Error {
    fn from(err: CmsError) -> Error {
        Error::Cms(err)
    }
}

/// `Result` with the engine's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<&Error> for rocksketch_resp::Reply {
    /// An error reply carrying the error's text (RedisBloom's, where it has one).
    fn from(err: &Error) -> rocksketch_resp::Reply {
        rocksketch_resp::Reply::Error(err.to_string())
    }
}
