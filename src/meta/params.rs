//! The parameters of Bloom filters, cuckoo filters and t-digests, and their encodings.

use rocksketch_merge::bytes::{le_u16, le_u32, le_u64};
use rocksketch_merge::Error as CodecError;

/// Parameters of a scalable Bloom filter; each sub-filter's size follows from them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomParams {
    /// The error rate asked for (the first sub-filter gets half of it when scaling).
    pub error: f64,
    /// Items the first sub-filter holds.
    pub capacity: u64,
    /// Growth factor of each next sub-filter; 0 for a non-scaling filter.
    pub expansion: u32,
    /// Sub-filters in the chain so far (at least 1).
    pub filters: u32,
    /// Bits per page.
    pub page_bits: u32,
}

impl BloomParams {
    /// Encoded size in bytes.
    pub const ENCODED_LEN: usize = 28;

    /// Appends the 28-byte encoding (also the start of a dump's header chunk).
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.error.to_le_bytes());
        out.extend_from_slice(&self.capacity.to_le_bytes());
        out.extend_from_slice(&self.expansion.to_le_bytes());
        out.extend_from_slice(&self.filters.to_le_bytes());
        out.extend_from_slice(&self.page_bits.to_le_bytes());
    }

    /// Decodes and checks the 28-byte encoding.
    pub(crate) fn decode(bytes: &[u8]) -> Result<BloomParams, CodecError> {
        if bytes.len() != Self::ENCODED_LEN {
            return Err(CodecError::Invalid("Bloom parameters of the wrong size"));
        }
        let p = BloomParams {
            error: f64::from_bits(le_u64(bytes, 0)?),
            capacity: le_u64(bytes, 8)?,
            expansion: le_u32(bytes, 16)?,
            filters: le_u32(bytes, 20)?,
            page_bits: le_u32(bytes, 24)?,
        };
        let valid = p.error > 0.0
            && p.error < 1.0
            && p.capacity > 0
            && p.filters > 0
            && p.page_bits > 0
            && p.page_bits.is_multiple_of(8);
        if !valid {
            return Err(CodecError::Invalid("Bloom filter parameters out of range"));
        }
        Ok(p)
    }
}

/// Parameters of a cuckoo filter; each sub-filter's size follows from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooParams {
    /// The capacity asked for.
    pub capacity: u64,
    /// Buckets of the first sub-filter (a power of two).
    pub buckets: u32,
    pub bucket_size: u8,
    /// Fingerprint width: 8 (RedisBloom's) or 16 bits.
    pub fp_bits: u8,
    /// RedisBloom's MAXITERATIONS, kept and reported; the merge kicks up to its own bound.
    pub max_iterations: u16,
    /// Growth factor of each next sub-filter (a power of two); 0 never grows.
    pub expansion: u16,
    /// Sub-filters in the chain so far (at least 1).
    pub filters: u32,
    /// Buckets per page (a power of two; a small sub-filter is one smaller page).
    pub page_buckets: u32,
}

impl CuckooParams {
    /// Encoded size in bytes.
    pub const ENCODED_LEN: usize = 26;

    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.capacity.to_le_bytes());
        out.extend_from_slice(&self.buckets.to_le_bytes());
        out.push(self.bucket_size);
        out.push(self.fp_bits);
        out.extend_from_slice(&self.max_iterations.to_le_bytes());
        out.extend_from_slice(&self.expansion.to_le_bytes());
        out.extend_from_slice(&self.filters.to_le_bytes());
        out.extend_from_slice(&self.page_buckets.to_le_bytes());
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<CuckooParams, CodecError> {
        if bytes.len() != Self::ENCODED_LEN {
            return Err(CodecError::Invalid("cuckoo parameters of the wrong size"));
        }
        let p = CuckooParams {
            capacity: le_u64(bytes, 0)?,
            buckets: le_u32(bytes, 8)?,
            bucket_size: bytes[12],
            fp_bits: bytes[13],
            max_iterations: le_u16(bytes, 14)?,
            expansion: le_u16(bytes, 16)?,
            filters: le_u32(bytes, 18)?,
            page_buckets: le_u32(bytes, 22)?,
        };
        let valid = p.capacity > 0
            && p.buckets.is_power_of_two()
            && p.bucket_size > 0
            && matches!(p.fp_bits, 8 | 12 | 16)
            && (p.expansion == 0 || p.expansion.is_power_of_two())
            && p.filters > 0
            && p.page_buckets.is_power_of_two();
        if !valid {
            return Err(CodecError::Invalid("cuckoo filter parameters out of range"));
        }
        Ok(p)
    }
}

/// Parameters of a t-digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TDigestParams {
    /// 1 to [`rocksketch_merge::tdigest::MAX_COMPRESSION`].
    pub compression: u32,
}
