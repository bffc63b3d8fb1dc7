//! A static Ribbon filter, built shard by shard from staged item hashes.
//!
//! An item is its 64-bit hash ([`item_hash`]). Before a build it is *staged*: the hash
//! is a blind operand on a staging page ([`StageOps`] into a [`StagePage`], a sorted set
//! of hashes), where it is found exactly. A build sorts a shard's staged hashes and
//! [`solve`]s them into a [`Shard`]: `r`-bit results over slots such that for every
//! built item, the XOR of the results in its window of 64 slots (masked by its
//! coefficients) equals its `r`-bit fingerprint. A lookup recomputes one window; an
//! absent item matches with probability `2^-r`.
//!
//! ```text
//! StagePage (kind 0x0d, v1) payload: hash u64 LE × n   (strictly ascending)
//! StageOps  (kind 0x0e, v1) payload: hash u64 LE × n   (any order, repeats allowed)
//! RibbonPage (kind 0x0f, v1) payload:
//!   r u8 | reserved u8 × 3 (0) | seed u32 LE | slots u32 LE | items u32 LE |
//!   word u64 LE × (slots / 64 × r)
//! ```
//!
//! The words are interleaved by blocks of 64 slots: block `k` holds `r` words, and bit
//! `j` of its word `b` is bit `b` of slot `64k + j`'s result (RocksDB's interleaved
//! solution layout), so a window is two words per result bit.

mod shard;
mod solve;
mod stage;
#[cfg(test)]
mod tests;

pub use shard::Shard;
pub use solve::solve;
pub use stage::{partial_merge, StageOps, StagePage, MAX_STAGED_PER_PAGE};

use crate::hash::murmur64a;

/// The ribbon width: coefficients per equation, and slots per block.
pub const WIDTH: u64 = 64;
/// The widest result (fingerprint) in bits.
pub const MAX_RESULT_BITS: u8 = 32;
/// The seed of [`item_hash`] ("RIBBON" in ASCII).
const ITEM_SEED: u64 = 0x5249_4242_4f4e;

/// The 64-bit hash that stands for an item everywhere in a Ribbon filter.
pub fn item_hash(item: &[u8]) -> u64 {
    murmur64a(item, ITEM_SEED)
}

/// Result bits for an error rate: `ceil(log2(1 / error))`, 1 to [`MAX_RESULT_BITS`];
/// `None` for a rate outside `(0, 1)` or one needing more bits.
pub fn result_bits(error: f64) -> Option<u8> {
    if !(error > 0.0 && error < 1.0) {
        return None;
    }
    let bits = (1.0 / error).log2().ceil().max(1.0);
    (bits <= f64::from(MAX_RESULT_BITS)).then_some(bits as u8)
}

/// The low `r` bits set.
pub(crate) fn mask(r: u8) -> u32 {
    if r >= 32 {
        u32::MAX
    } else {
        (1u32 << r) - 1
    }
}

/// An item's equation in a shard of `slots` slots solved with `seed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probe {
    /// The first slot of the window, `0..=slots - 64`.
    pub start: u64,
    /// The window's coefficients; bit 0 (the window's first slot) is always set.
    pub coeff: u64,
    pub fp: u32,
}

/// The equation of the item hashed to `h`. Two rounds of a 64-bit finalizer give the
/// start and fingerprint (from the first) and the coefficients (from the second).
pub(crate) fn probe(h: u64, seed: u32, slots: u64, fp_mask: u32) -> Probe {
    let a = fmix64(h ^ u64::from(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let b = fmix64(a.wrapping_add(0xd6e8_feb8_6659_fd93));
    let starts = slots.saturating_sub(WIDTH - 1);
    Probe {
        start: ((a >> 32) * starts) >> 32,
        coeff: b | 1,
        fp: (a as u32) & fp_mask,
    }
}

/// MurmurHash3's 64-bit finalizer: a bijection in which every input bit affects every
/// output bit.
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}
