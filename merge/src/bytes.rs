//! Little-endian field readers for the codecs here and in the engine. Callers check
//! lengths first; a read past the end yields 0 instead of panicking, as merge paths
//! must never panic.

/// The little-endian `u16` at `at`, or 0 if `bytes` is too short.
pub fn le_u16(bytes: &[u8], at: usize) -> u16 {
    bytes
        .get(at..at.saturating_add(2))
        .and_then(|b| b.try_into().ok())
        .map_or(0, u16::from_le_bytes)
}

/// The little-endian `u32` at `at`, or 0 if `bytes` is too short.
pub fn le_u32(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at.saturating_add(4))
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// The little-endian `u64` at `at`, or 0 if `bytes` is too short.
pub fn le_u64(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at.saturating_add(8))
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_short_input() {
        let b = [1, 0, 0, 0, 2, 0, 0, 0, 9];
        assert_eq!(le_u16(&b, 4), 2);
        assert_eq!(le_u16(&b, 8), 0);
        assert_eq!(le_u32(&b, 0), 1);
        assert_eq!(le_u32(&b, 4), 2);
        assert_eq!(le_u64(&b, 0), (2 << 32) | 1);
        assert_eq!(le_u32(&b, 6), 0);
        assert_eq!(le_u64(&b, 2), 0);
        assert_eq!(le_u32(&b, usize::MAX), 0);
    }
}
