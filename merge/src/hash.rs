//! The hash functions RedisBloom uses, bit-exact, so that every answer equals its own.
//!
//! - [`murmur2`]: Austin Appleby's 32-bit MurmurHash2 (count-min rows use seed `i`).
//! - [`murmur64a`]: MurmurHash64A (cuckoo filter: seed 0; Bloom filter: two chained seeds).
//!
//! Both read blocks little-endian, as RedisBloom does on the x86-64 and ARM64 machines
//! it runs on.

/// 32-bit MurmurHash2 of `data` with `seed`.
pub fn murmur2(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    // RedisBloom passes the length as an int; inputs are far below 4 GiB.
    let mut h = seed ^ (data.len() as u32);
    let mut blocks = data.chunks_exact(4);
    for block in blocks.by_ref() {
        let mut raw = [0u8; 4];
        raw.copy_from_slice(block);
        let mut k = u32::from_le_bytes(raw);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, byte) in tail.iter().enumerate().rev() {
            h ^= u32::from(*byte) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// MurmurHash64A of `data` with `seed`.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut blocks = data.chunks_exact(8);
    for block in blocks.by_ref() {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(block);
        let mut k = u64::from_le_bytes(raw);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, byte) in tail.iter().enumerate().rev() {
            h ^= u64::from(*byte) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^ (h >> R)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // Spot checks; the full vector file is checked in tests/vectors.rs.
        assert_eq!(murmur2(b"", 0), 0);
        assert_eq!(murmur2(b"a", 0), 0x9268_5f5e);
        assert_eq!(murmur64a(b"a", 0), 0x0717_17d2_d36b_6b11);
    }
}
