//! Metadata records: one per user key in the `meta` column family, written with `put`
//! under the key's lock, never on the blind write path.
//!
//! ```text
//! Meta record, 24 + params_len + 4 bytes:
//! type u8 | format u8 | reserved u16 | params_len u32 LE | key_version u64 LE |
//! expire_at_ms u64 LE (0: none) | params | crc32 u32 LE (of everything before it)
//!
//! CMS params, 12 bytes: width u32 LE | depth u32 LE | page_cells u32 LE
//! Bloom params, 28 bytes: error f64 LE | capacity u64 LE | expansion u32 LE |
//!   filters u32 LE | page_bits u32 LE
//! Cuckoo params, 26 bytes: capacity u64 LE | buckets u32 LE | bucket_size u8 |
//!   fp_bits u8 | max_iterations u16 LE | expansion u16 LE | filters u32 LE |
//!   page_buckets u32 LE
//! T-Digest params, 4 bytes: compression u32 LE
//! Top-K params, 20 bytes: k u32 LE | width u32 LE | depth u32 LE | decay f64 LE
//! Ribbon params: see [`RibbonParams`]
//! HyperLogLog params: none (0 bytes)
//!
//! Format 2 is format 1 with a window after the params (counted in params_len):
//! window_ms u64 LE | slices u16 LE (see [`crate::window`]).
//! ```

mod params;
mod ribbon;

pub use params::{BloomParams, CuckooParams, TDigestParams};
pub use ribbon::{RibbonParams, MAX_EPOCHS, MAX_GENERATIONS};

use crate::window::Window;
use rocksketch_merge::bytes::{le_u32, le_u64};
use rocksketch_merge::Error as CodecError;

const TYPE_OFFSET: usize = 0;
const FORMAT_OFFSET: usize = TYPE_OFFSET + 1;
const RESERVED_OFFSET: usize = FORMAT_OFFSET + 1;
const PARAMS_LEN_OFFSET: usize = RESERVED_OFFSET + 2;
const VERSION_OFFSET: usize = PARAMS_LEN_OFFSET + 4;
const EXPIRE_OFFSET: usize = VERSION_OFFSET + 8;
const PARAMS_OFFSET: usize = EXPIRE_OFFSET + 8;
const CRC_LEN: usize = 4;
const FORMAT_1: u8 = 1;
/// Format 1 with a window (Bloom, cuckoo and count-min keys).
const FORMAT_WINDOWED: u8 = 2;
const CMS_PARAMS_LEN: usize = 12;

/// The type of structure a key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyType {
    /// A count-min sketch.
    Cms,
    /// A scalable Bloom filter.
    Bloom,
    /// A cuckoo filter.
    Cuckoo,
    /// A t-digest.
    TDigest,
    /// A Top-K (HeavyKeeper).
    TopK,
    /// A static Ribbon filter.
    Ribbon,
    /// A HyperLogLog (a string to Redis).
    Hll,
}

impl KeyType {
    /// The name Redis's `TYPE` answers for this type (RedisBloom's module type names).
    pub fn redis_name(self) -> &'static str {
        match self {
            KeyType::Cms => "CMSk-TYPE",
            KeyType::Bloom => "MBbloom--",
            KeyType::Cuckoo => "MBbloomCF",
            KeyType::TDigest => "TDIS-TYPE",
            KeyType::TopK => "TopK-TYPE",
            KeyType::Ribbon => "RKribbon-",
            KeyType::Hll => "string",
        }
    }

    fn tag(self) -> u8 {
        match self {
            KeyType::Cms => 1,
            KeyType::Cuckoo => 2,
            KeyType::Bloom => 3,
            KeyType::TDigest => 4,
            KeyType::TopK => 5,
            KeyType::Ribbon => 6,
            KeyType::Hll => 7,
        }
    }
}

/// Parameters of a count-min sketch, fixed at creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmsParams {
    pub width: u32,
    pub depth: u32,
    /// Counters per page (the page's byte size is four times this).
    pub page_cells: u32,
}

/// The parameters of a key, by type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Params {
    Cms(CmsParams),
    Bloom(BloomParams),
    Cuckoo(CuckooParams),
    TDigest(TDigestParams),
    TopK(rocksketch_merge::topk::Shape),
    Ribbon(RibbonParams),
    /// A HyperLogLog: no parameters (Redis's are fixed).
    Hll,
}

impl Params {
    /// The type these parameters belong to.
    pub fn key_type(&self) -> KeyType {
        match self {
            Params::Cms(_) => KeyType::Cms,
            Params::Bloom(_) => KeyType::Bloom,
            Params::Cuckoo(_) => KeyType::Cuckoo,
            Params::TDigest(_) => KeyType::TDigest,
            Params::TopK(_) => KeyType::TopK,
            Params::Ribbon(_) => KeyType::Ribbon,
            Params::Hll => KeyType::Hll,
        }
    }
}

/// A decoded metadata record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Meta {
    /// Distinguishes this incarnation of the key from earlier ones: its pages live under
    /// this version, so a deleted and recreated key never sees old pages.
    pub version: u64,
    /// Unix time in milliseconds at which the key expires; 0 for never.
    pub expire_at_ms: u64,
    pub params: Params,
    /// The sliding window of a windowed filter or sketch.
    pub window: Option<Window>,
}

impl Meta {
    /// The type of the key.
    pub fn key_type(&self) -> KeyType {
        self.params.key_type()
    }

    /// Whether the key has expired at `now_ms`: once that is past its deadline, as in
    /// Redis (a key lives through its deadline's millisecond; `PTTL` answers 0 then).
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expire_at_ms != 0 && self.expire_at_ms < now_ms
    }

    /// Encodes the record.
    pub fn encode(&self) -> Vec<u8> {
        let mut params = Vec::with_capacity(CMS_PARAMS_LEN);
        match self.params {
            Params::Cms(p) => {
                params.extend_from_slice(&p.width.to_le_bytes());
                params.extend_from_slice(&p.depth.to_le_bytes());
                params.extend_from_slice(&p.page_cells.to_le_bytes());
            }
            Params::Bloom(p) => p.encode_into(&mut params),
            Params::Cuckoo(p) => p.encode_into(&mut params),
            Params::TDigest(p) => params.extend_from_slice(&p.compression.to_le_bytes()),
            Params::TopK(s) => {
                for field in [s.k, s.width, s.depth] {
                    params.extend_from_slice(&field.to_le_bytes());
                }
                params.extend_from_slice(&s.decay.to_le_bytes());
            }
            Params::Ribbon(p) => p.encode_into(&mut params),
            Params::Hll => {}
        }
        if let Some(window) = &self.window {
            window.encode_into(&mut params);
        }
        let mut out = Vec::with_capacity(PARAMS_OFFSET + params.len() + CRC_LEN);
        out.push(self.key_type().tag());
        out.push(match self.window {
            None => FORMAT_1,
            Some(_) => FORMAT_WINDOWED,
        });
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(&(params.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&self.expire_at_ms.to_le_bytes());
        out.extend_from_slice(&params);
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes a record, checking its length, checksum, format and fields.
    pub fn decode(bytes: &[u8]) -> Result<Meta, CodecError> {
        let fixed = bytes.get(..PARAMS_OFFSET).ok_or(CodecError::Truncated {
            need: PARAMS_OFFSET + CRC_LEN,
            have: bytes.len(),
        })?;
        let params_len = le_u32(fixed, PARAMS_LEN_OFFSET)? as usize;
        let need = PARAMS_OFFSET + params_len + CRC_LEN;
        if bytes.len() != need {
            return Err(if bytes.len() < need {
                CodecError::Truncated {
                    need,
                    have: bytes.len(),
                }
            } else {
                CodecError::TrailingBytes {
                    expected: need,
                    got: bytes.len(),
                }
            });
        }
        let (body, crc) = bytes.split_at(need - CRC_LEN);
        let expected = le_u32(crc, 0)?;
        let got = crc32fast::hash(body);
        if expected != got {
            return Err(CodecError::ChecksumMismatch { expected, got });
        }
        let params = &body[PARAMS_OFFSET..];
        let (params, window) = match fixed[FORMAT_OFFSET] {
            FORMAT_1 => (params, None),
            FORMAT_WINDOWED if params.len() >= Window::ENCODED_LEN => {
                let (params, window) = params.split_at(params.len() - Window::ENCODED_LEN);
                (params, Some(Window::decode(window)?))
            }
            FORMAT_WINDOWED => return Err(CodecError::Invalid("window missing")),
            other => return Err(CodecError::UnsupportedVersion(other)),
        };
        let params = match fixed[TYPE_OFFSET] {
            1 if params.len() == CMS_PARAMS_LEN => {
                let p = CmsParams {
                    width: le_u32(params, 0)?,
                    depth: le_u32(params, 4)?,
                    page_cells: le_u32(params, 8)?,
                };
                if p.width == 0 || p.depth == 0 || p.page_cells == 0 {
                    return Err(CodecError::Invalid("zero count-min dimension"));
                }
                Params::Cms(p)
            }
            1 => {
                return Err(CodecError::Invalid(
                    "count-min parameters of the wrong size",
                ))
            }
            2 => Params::Cuckoo(CuckooParams::decode(params)?),
            3 => Params::Bloom(BloomParams::decode(params)?),
            4 if params.len() == 4 => {
                let compression = le_u32(params, 0)?;
                let max = rocksketch_merge::tdigest::MAX_COMPRESSION;
                if !(1..=max).contains(&compression) {
                    return Err(CodecError::Invalid("t-digest compression out of range"));
                }
                Params::TDigest(TDigestParams { compression })
            }
            4 => return Err(CodecError::Invalid("t-digest parameters of the wrong size")),
            5 if params.len() == 20 => Params::TopK(
                rocksketch_merge::topk::Shape::new(
                    le_u32(params, 0)?,
                    le_u32(params, 4)?,
                    le_u32(params, 8)?,
                    f64::from_bits(le_u64(params, 12)?),
                )
                .ok_or(CodecError::Invalid("top-k parameters out of range"))?,
            ),
            5 => return Err(CodecError::Invalid("top-k parameters of the wrong size")),
            6 => Params::Ribbon(RibbonParams::decode(params)?),
            7 if params.is_empty() => Params::Hll,
            7 => return Err(CodecError::Invalid("HyperLogLog parameters where none are")),
            other => return Err(CodecError::UnknownKind(other)),
        };
        if window.is_some()
            && !matches!(
                params,
                Params::Cms(_) | Params::Bloom(_) | Params::Cuckoo(_)
            )
        {
            return Err(CodecError::Invalid("a window on a type without windows"));
        }
        Ok(Meta {
            version: le_u64(fixed, VERSION_OFFSET)?,
            expire_at_ms: le_u64(fixed, EXPIRE_OFFSET)?,
            params,
            window,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Meta {
        Meta {
            version: 0x0102_0304_0506_0708,
            expire_at_ms: 99,
            params: Params::Cms(CmsParams {
                width: 2000,
                depth: 7,
                page_cells: 1024,
            }),
            window: None,
        }
    }

    #[test]
    fn a_window_round_trips_and_older_records_read_without_one() {
        let windowed = Meta {
            window: Some(Window::new(60_000, 8).unwrap()),
            ..sample()
        };
        let bytes = windowed.encode();
        assert_eq!(bytes[FORMAT_OFFSET], FORMAT_WINDOWED);
        assert_eq!(Meta::decode(&bytes), Ok(windowed));
        assert_eq!(sample().encode()[FORMAT_OFFSET], FORMAT_1);
        let topk = Meta {
            params: Params::Hll,
            ..windowed
        };
        assert!(Meta::decode(&topk.encode()).is_err());
    }

    #[test]
    fn round_trip() {
        assert_eq!(Meta::decode(&sample().encode()), Ok(sample()));
    }

    #[test]
    fn flipped_byte_is_a_checksum_error() {
        for i in 0..sample().encode().len() {
            let mut bytes = sample().encode();
            bytes[i] ^= 0x10;
            assert!(Meta::decode(&bytes).is_err(), "flip at {i} went unnoticed");
        }
        let mut bytes = sample().encode();
        bytes[PARAMS_OFFSET] ^= 1;
        assert!(matches!(
            Meta::decode(&bytes),
            Err(CodecError::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn truncation_is_an_error() {
        let bytes = sample().encode();
        for cut in 0..bytes.len() {
            assert!(matches!(
                Meta::decode(&bytes[..cut]),
                Err(CodecError::Truncated { .. })
            ));
        }
    }

    #[test]
    fn expiry() {
        let mut m = sample();
        assert!(m.is_expired(100) && !m.is_expired(99) && !m.is_expired(98));
        m.expire_at_ms = 0;
        assert!(!m.is_expired(u64::MAX));
    }
}
