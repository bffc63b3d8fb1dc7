//! The header every page and every operand starts with.
//!
//! ```text
//! Header, 12 bytes, then the payload:
//! kind u8 | version u8 | flags u16 LE | payload_len u32 LE | crc32 u32 LE (of the payload)
//! ```
//!
//! Flags: bit 0 ([`FLAG_LOST_OPERANDS`]) marks a page that a full merge produced while
//! dropping operands it could not decode: the page lacks those writes, so decoding it
//! reports [`Error::LostOperands`] instead of answering wrongly. Other bits are zero.
//!
//! One merge operator serves every structure, so the kind tag tells it what it holds;
//! the version byte lets a later format be added while the old one stays readable.

use crate::bytes::{le_u16, le_u32};
use crate::error::{Error, Result};

const KIND_OFFSET: usize = 0;
const VERSION_OFFSET: usize = KIND_OFFSET + 1;
const RESERVED_OFFSET: usize = VERSION_OFFSET + 1;
const LEN_OFFSET: usize = RESERVED_OFFSET + 2;
const CRC_OFFSET: usize = LEN_OFFSET + 4;
/// Size of the header in bytes.
pub const HEADER_LEN: usize = CRC_OFFSET + 4;
/// The flag of a page that lacks writes a merge could not decode.
pub const FLAG_LOST_OPERANDS: u16 = 1;

/// The kinds of value stored under a page key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Count-min counters: `u32` cells (see [`crate::counter`]).
    CounterPage = 0x01,
    /// Saturating additions to a counter page.
    CounterDelta = 0x02,
    /// Per-key totals: `u64` slots (see [`crate::tally`]).
    TallyPage = 0x03,
    /// Wrapping additions to a tally page.
    TallyDelta = 0x04,
    /// Bloom filter bits (see [`crate::bits`]).
    BitPage = 0x05,
    /// Bits to set in a bit page.
    BitDelta = 0x06,
    /// Cuckoo filter buckets and stash (see [`crate::cuckoo`]).
    FpPage = 0x07,
    /// Fingerprint inserts and deletes for a cuckoo page.
    FpOps = 0x08,
    /// A t-digest (see [`crate::tdigest`]).
    DigestPage = 0x09,
    /// Values, centroids and compressions for a t-digest page.
    DigestOps = 0x0a,
    /// A Top-K: HeavyKeeper counters and heap (see [`crate::topk`]).
    TopKPage = 0x0b,
    /// `(item, increment)` pairs for a Top-K page.
    TopKOps = 0x0c,
    /// A Ribbon filter's staged hashes (see [`crate::ribbon`]).
    StagePage = 0x0d,
    /// Hashes to stage.
    StageOps = 0x0e,
    /// A solved Ribbon shard; written whole by a build, never merged into.
    RibbonPage = 0x0f,
    /// A HyperLogLog's registers (see [`crate::hll`]).
    HllPage = 0x10,
    /// Registers to raise in a HyperLogLog page.
    HllOps = 0x11,
}

impl Kind {
    /// The kind for a tag byte.
    pub fn from_tag(tag: u8) -> Result<Kind> {
        match tag {
            0x01 => Ok(Kind::CounterPage),
            0x02 => Ok(Kind::CounterDelta),
            0x03 => Ok(Kind::TallyPage),
            0x04 => Ok(Kind::TallyDelta),
            0x05 => Ok(Kind::BitPage),
            0x06 => Ok(Kind::BitDelta),
            0x07 => Ok(Kind::FpPage),
            0x08 => Ok(Kind::FpOps),
            0x09 => Ok(Kind::DigestPage),
            0x0a => Ok(Kind::DigestOps),
            0x0b => Ok(Kind::TopKPage),
            0x0c => Ok(Kind::TopKOps),
            0x0d => Ok(Kind::StagePage),
            0x0e => Ok(Kind::StageOps),
            0x0f => Ok(Kind::RibbonPage),
            0x10 => Ok(Kind::HllPage),
            0x11 => Ok(Kind::HllOps),
            other => Err(Error::UnknownKind(other)),
        }
    }

    /// The tag byte of this kind.
    pub fn tag(self) -> u8 {
        self as u8
    }
}

/// The first format version, of every kind.
pub const VERSION_1: u8 = 1;
/// Version 2: cuckoo pages and operands of 12-bit fingerprints (packed two in three
/// bytes). Other kinds have version 1 only.
pub const VERSION_2: u8 = 2;

/// Whether `kind` has a format `version`.
fn knows(kind: Kind, version: u8) -> bool {
    version == VERSION_1 || (version == VERSION_2 && matches!(kind, Kind::FpPage | Kind::FpOps))
}

/// A decoded header together with the payload it guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framed<'a> {
    /// What the bytes hold.
    pub kind: Kind,
    /// The kind's format version.
    pub version: u8,
    /// The bytes after the header, their checksum verified.
    pub payload: &'a [u8],
}

/// Reads the kind tag without checking anything else; `None` for an empty input.
pub fn peek_kind(bytes: &[u8]) -> Option<Result<Kind>> {
    bytes.first().map(|tag| Kind::from_tag(*tag))
}

/// Checks the header and the checksum and returns the payload.
pub fn decode(bytes: &[u8]) -> Result<Framed<'_>> {
    let header = bytes.get(..HEADER_LEN).ok_or(Error::Truncated {
        need: HEADER_LEN,
        have: bytes.len(),
    })?;
    let [tag, version, ..] = *header else {
        return Err(Error::Truncated {
            need: HEADER_LEN,
            have: bytes.len(),
        });
    };
    let kind = Kind::from_tag(tag)?;
    if !knows(kind, version) {
        return Err(Error::UnsupportedVersion(version));
    }
    match le_u16(header, RESERVED_OFFSET)? {
        0 => {}
        FLAG_LOST_OPERANDS => return Err(Error::LostOperands),
        _ => return Err(Error::Invalid("reserved header bits are set")),
    }
    let payload_len = le_u32(header, LEN_OFFSET)? as usize;
    let expected_crc = le_u32(header, CRC_OFFSET)?;
    let need = HEADER_LEN.saturating_add(payload_len);
    if bytes.len() < need {
        return Err(Error::Truncated {
            need,
            have: bytes.len(),
        });
    }
    if bytes.len() > need {
        return Err(Error::TrailingBytes {
            expected: need,
            got: bytes.len(),
        });
    }
    let payload = bytes.get(HEADER_LEN..).unwrap_or_default();
    let got = crc32fast::hash(payload);
    if got != expected_crc {
        return Err(Error::ChecksumMismatch {
            expected: expected_crc,
            got,
        });
    }
    Ok(Framed {
        kind,
        version,
        payload,
    })
}

/// [`decode`] of a value that must be of `kind`.
pub fn decode_as(bytes: &[u8], kind: Kind) -> Result<Framed<'_>> {
    let framed = decode(bytes)?;
    if framed.kind != kind {
        return Err(Error::WrongKind {
            expected: kind.tag(),
            got: framed.kind.tag(),
        });
    }
    Ok(framed)
}

/// Flags a merged value as lacking operands that did not decode (see the module docs).
/// A value too short to hold a header is left as it is: it fails to decode anyway.
pub fn mark_lost_operands(value: &mut [u8]) {
    if let Some(flags) = value.get_mut(RESERVED_OFFSET) {
        *flags |= FLAG_LOST_OPERANDS as u8;
    }
}

/// Starts a value of `kind`: writes a header whose length and checksum
/// [`finish`] fills in once the payload has been appended.
pub fn begin(kind: Kind, payload_capacity: usize) -> Vec<u8> {
    begin_version(kind, VERSION_1, payload_capacity)
}

/// [`begin`] with a format version other than the first.
pub fn begin_version(kind: Kind, version: u8, payload_capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload_capacity);
    out.push(kind.tag());
    out.push(version);
    out.extend_from_slice(&[0; HEADER_LEN - RESERVED_OFFSET]);
    out
}

/// Fills in the payload length and checksum of a value started with [`begin`].
pub fn finish(mut out: Vec<u8>) -> Vec<u8> {
    let payload = out.get(HEADER_LEN..).unwrap_or_default();
    let len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
    let crc = crc32fast::hash(payload);
    if let Some(field) = out.get_mut(LEN_OFFSET..CRC_OFFSET) {
        field.copy_from_slice(&len.to_le_bytes());
    }
    if let Some(field) = out.get_mut(CRC_OFFSET..HEADER_LEN) {
        field.copy_from_slice(&crc.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut out = begin(Kind::TallyPage, 8);
        out.extend_from_slice(&42u64.to_le_bytes());
        finish(out)
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        let framed = decode(&bytes).expect("decodes");
        assert_eq!(framed.kind, Kind::TallyPage);
        assert_eq!(framed.version, VERSION_1);
        assert_eq!(framed.payload, 42u64.to_le_bytes());
    }

    #[test]
    fn flipped_byte_is_a_checksum_error() {
        let mut bytes = sample();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x40;
        assert!(matches!(
            decode(&bytes),
            Err(Error::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn truncation_is_reported_with_sizes() {
        let bytes = sample();
        for cut in 0..bytes.len() {
            assert!(matches!(
                decode(&bytes[..cut]),
                Err(Error::Truncated { have, .. }) if have == cut
            ));
        }
    }

    #[test]
    fn unknown_version_is_its_own_error() {
        let mut bytes = sample();
        bytes[VERSION_OFFSET] = 9;
        assert_eq!(decode(&bytes), Err(Error::UnsupportedVersion(9)));
        // Version 2 exists for cuckoo pages and operands only.
        bytes[VERSION_OFFSET] = VERSION_2;
        assert_eq!(decode(&bytes), Err(Error::UnsupportedVersion(2)));
    }

    #[test]
    fn unknown_kind_and_trailing_bytes() {
        let mut bytes = sample();
        bytes[KIND_OFFSET] = 0xee;
        assert_eq!(decode(&bytes), Err(Error::UnknownKind(0xee)));
        let mut longer = sample();
        longer.push(0);
        assert!(matches!(decode(&longer), Err(Error::TrailingBytes { .. })));
    }
}
