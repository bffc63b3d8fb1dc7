//! The error cases of each command family, with the texts their clients see.

/// Declares a family's error enum, each case with its wire text written once: the
/// variant's documentation shows the text, and `text()` returns it.
macro_rules! family {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:expr,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[non_exhaustive]
        pub enum $name {
            $(
                #[doc = concat!("`", $text, "`")]
                #[doc = ""]
                $(#[$vdoc])*
                $variant,
            )*
        }

        impl $name {
            /// The error text RedisBloom replies with.
            pub fn text(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }
    };
}

family! {
    /// Errors of the count-min sketch commands, with RedisBloom's exact texts.
    CmsError {
        KeyDoesNotExist => "CMS: key does not exist",
        KeyAlreadyExists => "CMS: key already exists",
        InvalidWidth => "CMS: invalid width",
        InvalidDepth => "CMS: invalid depth",
        InvalidInitArguments => "CMS: invalid init arguments",
        InvalidOverestimation => "CMS: invalid overestimation value",
        InvalidProb => "CMS: invalid prob value",
        CannotParseNumber => "CMS: Cannot parse number",
        NumberNegative => "CMS: Number cannot be negative",
        DimensionsDiffer => "CMS: width/depth is not equal",
        InvalidNumkeys => "CMS: invalid numkeys",
        NumkeysNotPositive => "CMS: Number of keys must be positive",
        WrongNumberOfKeys => "CMS: wrong number of keys",
        WrongNumberOfKeysWeights => "CMS: wrong number of keys/weights",
        InvalidWeight => "CMS: invalid weight value",
        MergeOverflow => "CMS: MERGE overflow",
        IncrbyOverflow => "CMS: INCRBY overflow",
        /// Ours: more rows than [`crate::cms::MAX_DEPTH`].
        DepthTooLarge => "CMS: invalid depth: at most 128 rows (a failure probability of 2^-128)",
        /// Ours: more counters than [`crate::cms::MAX_CELLS`].
        TooManyCounters => "CMS: invalid init arguments: width x depth is at most 268435456 counters",
        /// Ours: a `CMS.MERGE` whose pages × sources pass 2^24 reads.
        MergeTooLarge => "CMS: MERGE too large: at most 16777216 page reads (pages x sources)",
        /// Ours: a `CMS.MERGE` of sketches whose windows (or lack of one) differ.
        WindowsDiffer => "CMS: window/slices is not equal",
    }
}

family! {
    /// Errors of the cuckoo filter commands, with RedisBloom's exact texts.
    CuckooError {
        BadCapacity => "Bad capacity",
        CapacityRange => "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]",
        /// `CF.INSERT`'s, which names RedisBloom's setting for the default bucket size.
        InsertCapacityRange => "Capacity must be in the range [cf-bucket-size * 2, 1073741824]",
        BucketSizeParse => "Couldn't parse BUCKETSIZE",
        BucketSizeRange => "BUCKETSIZE: value must be in the range [1, 255]",
        MaxIterationsParse => "Couldn't parse MAXITERATIONS",
        MaxIterationsRange => "MAXITERATIONS: value must be in the range [1, 65535]",
        ExpansionParse => "Couldn't parse EXPANSION",
        ExpansionRange => "EXPANSION: value must be in the range [0, 32768]",
        FingerprintParse => "Couldn't parse FINGERPRINT",
        FingerprintRange => "FINGERPRINT: value must be 8, 12 or 16",
        ItemExists => "ERR item exists",
        /// `CF.INSERT ... NOCREATE` and `CF.INFO` on a missing key.
        NotFound => "ERR not found",
        /// `CF.DEL` on a missing key.
        DelNotFound => "Not found",
        FilterFull => "Filter is full",
        MaximumExpansions => "Maximum expansions reached",
        UnknownArgument => "Unknown argument received",
        InvalidPosition => "Invalid position",
        BadChunk => "ERR received bad data",
        /// `CF.LOADCHUNK` of a page chunk that does not load.
        LoadChunkFailed => "Couldn't load chunk!",
        /// `CF.LOADCHUNK` of a header chunk that does not load.
        InvalidHeader => "Invalid header",
        /// A `CF.SCANDUMP` cursor from before the chain grew or the key was recreated.
        DumpChanged => "ERR the filter changed during the dump; restart it from cursor 0",
    }
}

family! {
    /// Errors of the Bloom filter commands, with RedisBloom's exact texts.
    BloomError {
        BadErrorRate => "ERR bad error rate",
        ErrorRateRange => "ERR error rate must be in the range (0.000000, 1.000000)",
        /// An error rate so small that a sub-filter the chain may grow to cannot be sized
        /// (its halved rate underflows to zero): RedisBloom's text for a filter it
        /// cannot create.
        ErrorRateTooSmall => "ERR could not create filter",
        BadCapacity => "ERR bad capacity",
        CapacityRange => "ERR capacity must be in the range [1, 1073741824]",
        BadExpansion => "ERR bad expansion",
        NoExpansion => "ERR no expansion",
        ExpansionRange => "ERR expansion must be in the range [0, 32768]",
        /// `BF.INSERT`'s texts for its options' values.
        InsertBadErrorRate => "Bad error rate",
        InsertBadCapacity => "Bad capacity",
        InsertBadExpansion => "Bad expansion",
        UnknownArgument => "Unknown argument received",
        /// `BF.INFO key FIELD` of an unknown field (and `RIBBON.INFO`'s).
        InvalidInformation => "Invalid information value",
        NonScalingCannotExpand => "Nonscaling filters cannot expand",
        ItemExists => "ERR item exists",
        NonScalingFull => "ERR non scaling filter is full",
        NotFound => "ERR not found",
        MaximumExpansions => "Maximum expansions reached",
        InvalidPosition => "Invalid position",
        /// `BF.SCANDUMP`'s and `BF.LOADCHUNK`'s for a cursor that is not an integer.
        ScanDumpNotNumeric => "Second argument must be numeric",
        LoadChunkNotNumeric => "ERR Second argument must be numeric",
        BadChunk => "ERR received bad data",
        /// A `BF.SCANDUMP` cursor from before the chain grew or the key was recreated.
        DumpChanged => "ERR the filter changed during the dump; restart it from cursor 0",
    }
}

family! {
    /// Errors of the t-digest commands, with RedisBloom's exact texts.
    TDigestError {
        KeyDoesNotExist => "ERR T-Digest: key does not exist",
        KeyAlreadyExists => "ERR T-Digest: key already exists",
        WrongKeyword => "ERR T-Digest: wrong keyword",
        CompressionParse => "ERR T-Digest: error parsing compression parameter",
        CompressionNotPositive => "ERR T-Digest: compression parameter needs to be a positive integer",
        /// Also ours past [`rocksketch_merge::tdigest::MAX_COMPRESSION`].
        AllocationFailed => "ERR T-Digest: allocation failed",
        /// Also ours past [`rocksketch_merge::tdigest::MAX_COMPRESSION`].
        MergeAllocationFailed => "ERR T-Digest: allocation of destination digest failed",
        Overflow => "ERR T-Digest: overflow detected",
        ValParse => "ERR T-Digest: error parsing val parameter",
        ValNotFinite => "ERR T-Digest: val parameter needs to be a finite number",
        QuantileParse => "ERR T-Digest: error parsing quantile",
        QuantileRange => "ERR T-Digest: quantile should be in [0,1]",
        CdfParse => "ERR T-Digest: error parsing cdf",
        ValueParse => "ERR T-Digest: error parsing value",
        RankParse => "ERR T-Digest: error parsing rank",
        RankNegative => "ERR T-Digest: rank needs to be non negative",
        LowCutParse => "ERR T-Digest: error parsing low_cut_percentile",
        HighCutParse => "ERR T-Digest: error parsing high_cut_percentile",
        CutRange => "ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]",
        CutOrder => "ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile",
        NumkeysParse => "ERR T-Digest: error parsing numkeys",
        NumkeysNotPositive => "ERR T-Digest: numkeys needs to be a positive integer",
    }
}

family! {
    /// Errors of the Top-K commands, with RedisBloom's exact texts (most without `ERR`).
    TopKError {
        KeyDoesNotExist => "TopK: key does not exist",
        KeyAlreadyExists => "TopK: key already exists",
        InvalidK => "TopK: invalid k",
        InvalidWidth => "TopK: invalid width",
        InvalidDepth => "TopK: invalid depth",
        InvalidDecay => "TopK: invalid decay value. must be '<= 1' & '> 0'",
        /// Also ours past [`rocksketch_merge::topk::MAX_CELLS`] counters,
        /// [`rocksketch_merge::topk::MAX_DEPTH`] rows or [`rocksketch_merge::topk::MAX_K`]
        /// items.
        InsufficientMemory => "ERR Insufficient memory to create topk data structure",
        BadIncrement => concat!(
            "TopK: increment must be an integer greater or equal to 0",
            "                            ",
            "and smaller or equal to 100,000"
        ),
        WithcountExpected => "WITHCOUNT keyword expected",
        /// Ours: an item longer than [`rocksketch_merge::topk::MAX_ITEM_BYTES`].
        ItemTooLong => "TopK: item longer than 1024 bytes",
    }
}

family! {
    /// Errors of the Ribbon filter commands (our own family), in Redis's style.
    RibbonError {
        NotFound => "ERR not found",
        KeyExists => "ERR item exists",
        BadErrorRate => "ERR bad error rate",
        ErrorRateRange => "ERR error rate must be in the range [2.3283064365386963e-10, 1) (2^-32: at most 32 result bits)",
        /// More than 32 builds with items.
        TooManyGenerations => "ERR too many generations: a ribbon filter holds at most 32 builds",
        /// More staged items than [`crate::ribbon::MAX_STAGED`].
        TooManyStaged => "ERR too many staged items: at most 33554432 between builds; run RIBBON.BUILD",
        /// More than 2^22 - 1 builds, finished or not.
        TooManyBuilds => "ERR too many builds of this key",
        /// A shard solved with none of the seeds and sizes tried (never seen in practice).
        Unsolvable => "ERR build failed: a shard did not solve; items stay staged",
        InvalidPosition => "Invalid position",
        BadChunk => "ERR received bad data",
        DumpChanged => "ERR the filter changed during the dump; restart it from cursor 0",
    }
}

family! {
    /// Errors of the HyperLogLog commands, with Redis's exact texts.
    HllError {
        /// A string that is not a HyperLogLog (what `SET` of any other string answers:
        /// this store keeps strings only as HyperLogLogs).
        NotHll => "WRONGTYPE Key is not a valid HyperLogLog string value.",
        /// A HyperLogLog string with the magic whose registers do not decode.
        Corrupt => "INVALIDOBJ Corrupted HLL object detected",
        /// `PFDEBUG` of a missing key.
        NoSuchKey => "ERR The specified key does not exist",
        /// `PFDEBUG DECODE` of a dense HyperLogLog.
        NotSparse => "ERR HLL encoding is not sparse",
    }
}
