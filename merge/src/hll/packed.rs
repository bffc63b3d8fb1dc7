//! The packed register form: a HyperLogLog page's registers in fewer bytes than Redis's
//! sparse opcodes while few registers are set.
//!
//! ```text
//! packed: n u16 LE (registers set, 1 to 16384) | k u8 (0 to 13) | bits, least significant first:
//!   per register set, ascending: the gap from the last one (its index for the first),
//!   Rice-coded with parameter k (gap >> k in unary as ones and a zero, then its k low
//!   bits), then its value v: v - 1 ones and a zero for v <= 8, else eight ones and v in
//!   six bits. Bits past the last register are zero, and no byte follows them.
//! ```
//!
//! Register values are geometric (half the registers set hold 1), so a value costs two
//! bits on average; a gap costs about k + 2. 100 registers set take about 140 bytes
//! where Redis's sparse opcodes take about 270.

use super::{Registers, MAX_RANK, REGISTERS};
use crate::error::{Error, Result};

/// Largest Rice parameter: a gap is at most 16383.
const MAX_K: u8 = 13;
/// Values up to this are coded in unary.
const UNARY_MAX: u8 = 8;

/// The registers set, ascending, with the packed form's Rice parameter and length in
/// bytes; `None` when no register is set. Only the parameters near the best for the
/// mean gap are tried: the length is a sum over the registers set, and a page is
/// encoded on every full merge.
pub(super) fn plan(regs: &Registers) -> Option<Plan> {
    let set: Vec<(usize, u8)> = regs
        .as_bytes()
        .iter()
        .enumerate()
        .filter(|(_, r)| **r != 0)
        .map(|(i, r)| (i, *r))
        .collect();
    let n = u16::try_from(set.len()).ok().filter(|n| *n > 0)?;
    let values: usize = set.iter().map(|(_, v)| value_bits(*v)).sum();
    let bits = |k: u8| -> usize {
        let quotients: usize = gaps(&set).map(|(gap, _)| gap >> k).sum();
        quotients + set.len() * (1 + usize::from(k)) + values
    };
    // A gap is geometric with mean about 16384 / n: the best k is near log2 of it.
    let guess = (REGISTERS / set.len()).max(1).ilog2() as u8;
    let k = (guess.saturating_sub(1)..=guess.saturating_add(1).min(MAX_K))
        .min_by_key(|k| (bits(*k), *k))
        .unwrap_or(0);
    let len = 3 + bits(k).div_ceil(8);
    Some(Plan { set, n, k, len })
}

/// What [`plan`] found: the registers set, their count, the Rice parameter, the length.
pub(super) struct Plan {
    set: Vec<(usize, u8)>,
    n: u16,
    k: u8,
    pub(super) len: usize,
}

impl Plan {
    /// The packed form.
    pub(super) fn pack(&self) -> Vec<u8> {
        let k = self.k;
        let mut out = BitWriter::default();
        out.bytes.reserve(self.len);
        out.bytes.extend_from_slice(&self.n.to_le_bytes());
        out.bytes.push(k);
        for (gap, value) in gaps(&self.set) {
            out.ones(gap >> k);
            out.push_bits(0, 1);
            out.push_bits(gap as u64, k);
            if value <= UNARY_MAX {
                out.ones(usize::from(value) - 1);
                out.push_bits(0, 1);
            } else {
                out.ones(usize::from(UNARY_MAX));
                out.push_bits(u64::from(value), 6);
            }
        }
        out.finish()
    }
}

/// Each set register's gap from the previous one and its value.
fn gaps(set: &[(usize, u8)]) -> impl Iterator<Item = (usize, u8)> + '_ {
    let mut next = 0;
    set.iter().map(move |(index, value)| {
        let gap = index - next;
        next = index + 1;
        (gap, *value)
    })
}

fn value_bits(value: u8) -> usize {
    match value <= UNARY_MAX {
        true => usize::from(value),
        false => usize::from(UNARY_MAX) + 6,
    }
}

/// Decodes the packed form, checked: every register inside the page, every value 1 to
/// 63, exactly `n` registers, and nothing but zero bits after the last.
pub(super) fn unpack(body: &[u8]) -> Result<Registers> {
    let bad = |what: &'static str| Error::Invalid(what);
    let (&[n0, n1, k], bits) = body
        .split_first_chunk::<3>()
        .ok_or(bad("a packed HyperLogLog cut short"))?;
    let n = usize::from(u16::from_le_bytes([n0, n1]));
    if n == 0 || n > REGISTERS || k > MAX_K {
        return Err(bad("packed HyperLogLog fields out of range"));
    }
    let mut input = BitReader { bytes: bits, at: 0 };
    let mut regs = vec![0u8; REGISTERS];
    let mut next = 0usize;
    for _ in 0..n {
        let mut quotient = 0usize;
        while input.bit()? {
            quotient += 1;
            if quotient > REGISTERS >> k {
                return Err(bad("a packed gap past the registers"));
            }
        }
        let gap = (quotient << k) | input.bits(k)? as usize;
        let index = next + gap;
        let mut value = 1u8;
        while value <= UNARY_MAX && input.bit()? {
            value += 1;
        }
        if value > UNARY_MAX {
            value = input.bits(6)? as u8;
            if value <= UNARY_MAX || value > MAX_RANK {
                return Err(bad("a packed register value out of range"));
            }
        }
        *regs
            .get_mut(index)
            .ok_or(bad("a packed register past the last"))? = value;
        next = index + 1;
    }
    input.finish()?;
    // Every value was checked to be 1 to 63 as it was read.
    Ok(Registers::of(regs.into_boxed_slice()))
}

/// Bits, least significant first, gathered a word at a time.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    word: u64,
    used: u32,
}

impl BitWriter {
    /// Appends the `count` (at most 32) low bits of `value`.
    fn push_bits(&mut self, value: u64, count: u8) {
        let count = u32::from(count);
        self.word |= (value & ((1u64 << count) - 1)) << self.used;
        self.used += count;
        if self.used >= 32 {
            self.bytes
                .extend_from_slice(&(self.word as u32).to_le_bytes());
            self.word >>= 32;
            self.used -= 32;
        }
    }

    fn ones(&mut self, mut count: usize) {
        while count > 0 {
            let now = count.min(32);
            self.push_bits(u64::MAX, now as u8);
            count -= now;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        let tail = self.used.div_ceil(8) as usize;
        let word = self.word.to_le_bytes();
        self.bytes
            .extend_from_slice(word.get(..tail).unwrap_or_default());
        self.bytes
    }
}

struct BitReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl BitReader<'_> {
    fn bit(&mut self) -> Result<bool> {
        let byte = self
            .bytes
            .get(self.at / 8)
            .ok_or(Error::Invalid("packed HyperLogLog bits cut short"))?;
        let bit = byte >> (self.at % 8) & 1 == 1;
        self.at += 1;
        Ok(bit)
    }

    fn bits(&mut self, count: u8) -> Result<u64> {
        let mut value = 0;
        for i in 0..count {
            value |= u64::from(self.bit()?) << i;
        }
        Ok(value)
    }

    /// Checks that only zero bits follow, to the end of the last byte, and no byte.
    fn finish(mut self) -> Result<()> {
        if self.bytes.len() != self.at.div_ceil(8) {
            return Err(Error::Invalid("bytes after a packed HyperLogLog"));
        }
        while !self.at.is_multiple_of(8) {
            if self.bit()? {
                return Err(Error::Invalid("bits after a packed HyperLogLog"));
            }
        }
        Ok(())
    }
}
