//! Little-endian field readers for the codecs here and in the engine. A read past the
//! end is `Error::Truncated`, never a panic and never a made-up 0: merge paths must not
//! panic, and a decoder must not mistake missing bytes for a field.

use crate::error::{Error, Result};

/// The `N` bytes at `at`, or `Truncated`.
fn field<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N]> {
    bytes
        .get(at..at.saturating_add(N))
        .and_then(|b| b.try_into().ok())
        .ok_or(Error::Truncated {
            need: at.saturating_add(N),
            have: bytes.len(),
        })
}

/// The little-endian `u16` at `at`.
pub fn le_u16(bytes: &[u8], at: usize) -> Result<u16> {
    field(bytes, at).map(u16::from_le_bytes)
}

/// The little-endian `u32` at `at`.
pub fn le_u32(bytes: &[u8], at: usize) -> Result<u32> {
    field(bytes, at).map(u32::from_le_bytes)
}

/// The little-endian `u64` at `at`.
pub fn le_u64(bytes: &[u8], at: usize) -> Result<u64> {
    field(bytes, at).map(u64::from_le_bytes)
}

/// The little-endian `u32`s of `bytes`, 4 bytes each (a trailing partial one is left
/// out: callers check the length is whole first).
pub fn u32s(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .as_chunks::<4>()
        .0
        .iter()
        .map(|c| u32::from_le_bytes(*c))
}

/// The little-endian `u64`s of `bytes`, 8 bytes each (as [`u32s`]).
pub fn u64s(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .as_chunks::<8>()
        .0
        .iter()
        .map(|c| u64::from_le_bytes(*c))
}

/// The pairs of little-endian `u32`s of `bytes`, 8 bytes each (as [`u32s`]).
pub fn u32_pairs(bytes: &[u8]) -> impl Iterator<Item = (u32, u32)> + '_ {
    bytes.as_chunks::<8>().0.iter().map(|c| {
        let [a, b, c, d, e, f, g, h] = *c;
        (
            u32::from_le_bytes([a, b, c, d]),
            u32::from_le_bytes([e, f, g, h]),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_short_input() {
        let b = [1, 0, 0, 0, 2, 0, 0, 0, 9];
        assert_eq!(le_u16(&b, 4), Ok(2));
        assert_eq!(le_u16(&b, 8), Err(Error::Truncated { need: 10, have: 9 }));
        assert_eq!(le_u32(&b, 0), Ok(1));
        assert_eq!(le_u32(&b, 4), Ok(2));
        assert_eq!(le_u64(&b, 0), Ok((2 << 32) | 1));
        assert!(matches!(le_u32(&b, 6), Err(Error::Truncated { .. })));
        assert!(matches!(le_u64(&b, 2), Err(Error::Truncated { .. })));
        assert!(matches!(
            le_u32(&b, usize::MAX),
            Err(Error::Truncated { .. })
        ));
        assert_eq!(u32s(&b).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(u32_pairs(&b).collect::<Vec<_>>(), [(1, 2)]);
        assert_eq!(u64s(&b).collect::<Vec<_>>(), [(2 << 32) | 1]);
    }
}
