//! Decoding errors of the merge crate.

use std::fmt;

/// Why bytes could not be decoded as a page or an operand.
///
/// Merge functions never return these: they skip what they cannot decode (see the
/// crate docs). Readers get them when they decode a materialized page.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Fewer bytes than the layout needs.
    Truncated {
        /// Bytes needed.
        need: usize,
        /// Bytes there.
        have: usize,
    },
    /// More bytes than the header's payload length accounts for.
    TrailingBytes {
        /// Bytes the header accounts for.
        expected: usize,
        /// Bytes there.
        got: usize,
    },
    /// The payload's crc32 does not match the header.
    ChecksumMismatch {
        /// The checksum the header records.
        expected: u32,
        /// The checksum of the payload.
        got: u32,
    },
    /// A format version this build cannot read.
    UnsupportedVersion(u8),
    /// A kind tag this build does not know.
    UnknownKind(u8),
    /// A known kind where another was expected.
    WrongKind {
        /// The kind expected.
        expected: u8,
        /// The kind found.
        got: u8,
    },
    /// The layout is well-formed but a field is out of range.
    Invalid(&'static str),
    /// A merge dropped operands of this page that did not decode: it lacks their writes.
    LostOperands,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated { need, have } => {
                write!(f, "truncated: need {need} bytes, have {have}")
            }
            Error::TrailingBytes { expected, got } => {
                write!(f, "trailing bytes: expected {expected} bytes, got {got}")
            }
            Error::ChecksumMismatch { expected, got } => {
                write!(
                    f,
                    "checksum mismatch: expected {expected:#010x}, got {got:#010x}"
                )
            }
            Error::UnsupportedVersion(v) => write!(f, "unsupported format version {v}"),
            Error::UnknownKind(k) => write!(f, "unknown kind tag {k:#04x}"),
            Error::WrongKind { expected, got } => {
                write!(f, "wrong kind: expected {expected:#04x}, got {got:#04x}")
            }
            Error::Invalid(what) => write!(f, "invalid field: {what}"),
            Error::LostOperands => {
                f.write_str("a merge dropped operands that did not decode; writes are missing")
            }
        }
    }
}

impl std::error::Error for Error {}

/// `Result` with the merge crate's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
