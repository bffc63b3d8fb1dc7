//! The parameters of a Ribbon filter: its error rate, its generations and where its
//! staging stands.
//!
//! ```text
//! Ribbon params, 41 + 2 × generations bytes: error f64 LE | staging u32 LE |
//!   sealed u32 LE | adds_sealed u64 LE | built u64 LE | bytes u64 LE | generations u8 |
//!   shards u16 LE × generations
//! ```

use rocksketch_merge::bytes::{le_u16, le_u32, le_u64};
use rocksketch_merge::ribbon::result_bits;
use rocksketch_merge::Error as CodecError;

/// Generations a Ribbon filter may have: each costs a lookup one more page and adds up
/// to `2^-r` to the false-positive rate.
pub const MAX_GENERATIONS: usize = 32;
/// Staging epochs a key may go through (builds, finished or not): the epoch is the top
/// 22 bits of a staging page's number.
pub const MAX_EPOCHS: u32 = (1 << 22) - 1;

const FIXED_LEN: usize = 41;

/// Parameters of a Ribbon filter. Items are staged into epoch `staging`; epochs
/// `sealed..=staging` hold staged items no generation holds yet (more than one only
/// while a build runs, or after one was cut short).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RibbonParams {
    /// The error rate asked for; each generation's results have `r` bits, with
    /// `r = ceil(log2(1 / error))`.
    pub error: f64,
    /// The staging epoch new items go to.
    pub staging: u32,
    /// The first epoch not yet sealed into a generation.
    pub sealed: u32,
    /// The key's count of staged adds (its tally) when the last build began: adds past
    /// it are staged.
    pub adds_sealed: u64,
    /// Items in all generations.
    pub built: u64,
    /// Bytes of all generations' shard pages.
    pub bytes: u64,
    /// Generations built.
    pub generations: u8,
    /// Per generation, its number of shards (at least 1).
    pub shards: [u16; MAX_GENERATIONS],
}

impl RibbonParams {
    /// A new filter's parameters; `None` for an error rate outside `(0, 1)` or below
    /// `2^-32`.
    pub fn new(error: f64) -> Option<RibbonParams> {
        result_bits(error)?;
        Some(RibbonParams {
            error,
            staging: 0,
            sealed: 0,
            adds_sealed: 0,
            built: 0,
            bytes: 0,
            generations: 0,
            shards: [0; MAX_GENERATIONS],
        })
    }

    /// Result bits per slot.
    pub fn result_bits(&self) -> u8 {
        result_bits(self.error).unwrap_or(1)
    }

    /// The number of shards of each generation built.
    pub fn generation_shards(&self) -> &[u16] {
        self.shards
            .get(..usize::from(self.generations))
            .unwrap_or_default()
    }

    /// Appends the encoding.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.error.to_le_bytes());
        out.extend_from_slice(&self.staging.to_le_bytes());
        out.extend_from_slice(&self.sealed.to_le_bytes());
        out.extend_from_slice(&self.adds_sealed.to_le_bytes());
        out.extend_from_slice(&self.built.to_le_bytes());
        out.extend_from_slice(&self.bytes.to_le_bytes());
        out.push(self.generations);
        for shards in self.generation_shards() {
            out.extend_from_slice(&shards.to_le_bytes());
        }
    }

    /// Decodes and checks the encoding (all of `bytes`).
    pub(crate) fn decode(bytes: &[u8]) -> Result<RibbonParams, CodecError> {
        let generations = *bytes.get(FIXED_LEN - 1).ok_or(CodecError::Truncated {
            need: FIXED_LEN,
            have: bytes.len(),
        })?;
        if usize::from(generations) > MAX_GENERATIONS
            || bytes.len() != FIXED_LEN + 2 * usize::from(generations)
        {
            return Err(CodecError::Invalid("ribbon parameters of the wrong size"));
        }
        let mut shards = [0; MAX_GENERATIONS];
        for (g, count) in shards.iter_mut().take(usize::from(generations)).enumerate() {
            *count = le_u16(bytes, FIXED_LEN + 2 * g)?;
        }
        let p = RibbonParams {
            error: f64::from_bits(le_u64(bytes, 0)?),
            staging: le_u32(bytes, 8)?,
            sealed: le_u32(bytes, 12)?,
            adds_sealed: le_u64(bytes, 16)?,
            built: le_u64(bytes, 24)?,
            bytes: le_u64(bytes, 32)?,
            generations,
            shards,
        };
        let valid = result_bits(p.error).is_some()
            && p.sealed <= p.staging
            && p.staging <= MAX_EPOCHS
            && p.generation_shards().iter().all(|n| *n > 0);
        if !valid {
            return Err(CodecError::Invalid("ribbon parameters out of range"));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_checks() {
        let mut p = RibbonParams::new(0.01).unwrap();
        p.generations = 2;
        p.shards[..2].copy_from_slice(&[3, 1]);
        p.staging = 5;
        p.sealed = 4;
        p.built = 123;
        p.adds_sealed = 130;
        let mut bytes = Vec::new();
        p.encode_into(&mut bytes);
        assert_eq!(bytes.len(), FIXED_LEN + 4);
        assert_eq!(RibbonParams::decode(&bytes), Ok(p));
        assert!(RibbonParams::decode(&bytes[..bytes.len() - 1]).is_err());
        let mut bad = p;
        bad.sealed = 6;
        let mut bytes = Vec::new();
        bad.encode_into(&mut bytes);
        assert!(RibbonParams::decode(&bytes).is_err());
        assert!(RibbonParams::new(1.0).is_none());
        assert_eq!(RibbonParams::new(1.0 / 128.0).unwrap().result_bits(), 7);
    }
}
