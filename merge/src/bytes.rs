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

/// Appends `value` as an unsigned LEB128 varint (1 to 5 bytes).
pub fn put_varint_u32(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// How many bytes [`put_varint_u32`] writes for `value`.
pub fn varint_u32_len(value: u32) -> usize {
    (32 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

/// The unsigned LEB128 varint at the front of `input`, which is advanced past it;
/// `None` for one cut short, past 32 bits (its fifth byte over 4 bits, or a sixth), or
/// longer than it needs to be (a last byte of 0 after others): each value has one
/// encoding, so a decoded value re-encodes to the same bytes.
#[inline]
pub fn take_varint_u32(input: &mut &[u8]) -> Option<u32> {
    // One and two bytes (a count-min delta's usual addition and index) without the loop.
    match **input {
        [b0, ref rest @ ..] if b0 < 0x80 => {
            *input = rest;
            return Some(u32::from(b0));
        }
        [_, 0, ..] => return None,
        [b0, b1, ref rest @ ..] if b1 < 0x80 => {
            *input = rest;
            return Some(u32::from(b0 & 0x7f) | (u32::from(b1) << 7));
        }
        _ => {}
    }
    let mut value = 0u32;
    for shift in (0..35).step_by(7) {
        let (&byte, rest) = input.split_first()?;
        *input = rest;
        if shift == 28 && byte > 0x0f {
            return None;
        }
        value |= u32::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return (byte != 0 || shift == 0).then_some(value);
        }
    }
    None
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

    #[test]
    fn varints_round_trip_and_refuse_cut_or_oversized_ones() {
        for value in [
            0,
            1,
            127,
            128,
            16_383,
            16_384,
            1 << 21,
            (1 << 28) - 1,
            1 << 28,
            u32::MAX,
        ] {
            let mut out = Vec::new();
            put_varint_u32(&mut out, value);
            assert_eq!(out.len(), varint_u32_len(value), "{value}");
            out.push(0xAA);
            let mut input = out.as_slice();
            assert_eq!(take_varint_u32(&mut input), Some(value));
            assert_eq!(input, [0xAA]);
            let mut cut = &out[..out.len() - 2];
            assert_eq!(take_varint_u32(&mut cut), None, "{value} cut");
        }
        // 2^32: a fifth byte of 5 bits; and six bytes.
        assert_eq!(
            take_varint_u32(&mut [0x80, 0x80, 0x80, 0x80, 0x10].as_slice()),
            None
        );
        assert_eq!(take_varint_u32(&mut [0xff; 6].as_slice()), None);
        assert_eq!(take_varint_u32(&mut [].as_slice()), None);
        // Overlong: 0 in two bytes, 1 in three.
        assert_eq!(take_varint_u32(&mut [0x80, 0x00].as_slice()), None);
        assert_eq!(take_varint_u32(&mut [0x81, 0x80, 0x00].as_slice()), None);
    }
}
