//! Redis's HyperLogLog encodings and estimator, bit-exact.
//!
//! ```text
//! A Redis HyperLogLog string: "HYLL" | encoding u8 (0 dense, 1 sparse) | 3 unused bytes |
//!   cached cardinality u64 LE (top bit set: stale) | registers
//! Dense: 12288 bytes, register i at bit 6i, least significant bit first.
//! Sparse opcodes: ZERO 00xxxxxx (1-64 zero registers), XZERO 01xxxxxx yyyyyyyy (1-16384
//!   zero registers), VAL 1vvvvvxx (1-4 registers of value 1-32).
//! ```
//!
//! Redis starts every HyperLogLog sparse and turns it dense for good when a register
//! passes 32 or the string would pass `hll-sparse-max-bytes` (3000). The sparse form
//! written here is canonical for the registers: each run of zeros one ZERO (64 or
//! fewer) or XZERO, each run of equal values VALs of four from the left. Redis's own
//! sparse strings can group a run of equal values differently (that depends on the
//! order registers were set in) and stay dense once dense; Redis reads both the same.

use super::{Registers, DENSE_BYTES, MAX_RANK, Q, REGISTERS};
use crate::error::{Error, Result};

/// The header of a Redis HyperLogLog string.
pub const HEADER_LEN: usize = 16;
/// Redis's `hll-sparse-max-bytes` default: a longer sparse string is made dense.
pub const SPARSE_MAX_BYTES: usize = 3000;
/// Encoding byte of the dense form.
pub const DENSE: u8 = 0;
/// Encoding byte of the sparse form.
pub const SPARSE: u8 = 1;
const MAGIC: &[u8; 4] = b"HYLL";
const SPARSE_VAL_MAX_VALUE: u8 = 32;
const SPARSE_VAL_MAX_LEN: usize = 4;
const SPARSE_ZERO_MAX_LEN: usize = 64;
const SPARSE_XZERO_MAX_LEN: usize = 16384;
/// 0.5 / ln 2, Redis's `HLL_ALPHA_INF`.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Register `index` of a dense layout (0 past its end).
pub fn dense_get(dense: &[u8], index: usize) -> u8 {
    let bit = index * 6;
    let b0 = u16::from(dense.get(bit / 8).copied().unwrap_or(0));
    let b1 = u16::from(dense.get(bit / 8 + 1).copied().unwrap_or(0));
    (((b0 | (b1 << 8)) >> (bit % 8)) & 63) as u8
}

/// The dense layout of `regs` (each at most 63).
pub fn dense_of(regs: &Registers) -> Vec<u8> {
    let mut dense = vec![0u8; DENSE_BYTES];
    for (index, reg) in regs.as_bytes().iter().enumerate() {
        let bit = index * 6;
        let v = u16::from(*reg & MAX_RANK) << (bit % 8);
        if let Some(b) = dense.get_mut(bit / 8) {
            *b |= v as u8;
        }
        if let Some(b) = dense.get_mut(bit / 8 + 1) {
            *b |= (v >> 8) as u8;
        }
    }
    dense
}

/// Redis's canonical sparse opcodes for `regs`, or `None` where Redis could not keep
/// them sparse (a register above 32, or longer than [`SPARSE_MAX_BYTES`] with its header).
pub fn sparse_of(regs: &Registers) -> Option<Vec<u8>> {
    let regs = regs.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(rest @ [value, ..]) = regs.get(at..) {
        let value = *value;
        let run = rest.iter().take_while(|r| **r == value).count();
        let mut left = run;
        while left > 0 {
            if value == 0 {
                let len = left.min(SPARSE_XZERO_MAX_LEN);
                let code = len - 1;
                if len > SPARSE_ZERO_MAX_LEN {
                    out.push(0x40 | (code >> 8) as u8);
                    out.push((code & 0xff) as u8);
                } else {
                    out.push(code as u8);
                }
                left -= len;
            } else {
                if value > SPARSE_VAL_MAX_VALUE {
                    return None;
                }
                let len = left.min(SPARSE_VAL_MAX_LEN);
                out.push(0x80 | ((value - 1) << 2) | (len - 1) as u8);
                left -= len;
            }
            if HEADER_LEN + out.len() > SPARSE_MAX_BYTES {
                return None;
            }
        }
        at += run;
    }
    Some(out)
}

/// One sparse opcode: a run of `len` registers holding `value` (0 for ZERO and XZERO,
/// `long` for XZERO).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opcode {
    /// The registers' value.
    pub value: u8,
    /// How many registers.
    pub len: usize,
    /// Whether it is the two-byte XZERO.
    pub long: bool,
}

/// The opcodes of a sparse body, in order; an `Err` for an XZERO cut short ends it.
pub fn opcodes(sparse: &[u8]) -> impl Iterator<Item = Result<Opcode>> + '_ {
    let mut bytes = sparse.iter();
    std::iter::from_fn(move || {
        let op = *bytes.next()?;
        Some(match op & 0xc0 {
            0x00 => Ok(Opcode {
                value: 0,
                len: usize::from(op & 0x3f) + 1,
                long: false,
            }),
            0x40 => match bytes.next() {
                Some(low) => Ok(Opcode {
                    value: 0,
                    len: ((usize::from(op & 0x3f) << 8) | usize::from(*low)) + 1,
                    long: true,
                }),
                None => Err(Error::Invalid("a sparse XZERO cut short")),
            },
            _ => Ok(Opcode {
                value: ((op >> 2) & 0x1f) + 1,
                len: usize::from(op & 0x3) + 1,
                long: false,
            }),
        })
    })
}

/// Decodes sparse opcodes; `Invalid` unless they cover exactly the 16384 registers.
pub fn decode_sparse(sparse: &[u8]) -> Result<Registers> {
    let mut regs = vec![0u8; REGISTERS];
    let mut at = 0usize;
    for op in opcodes(sparse) {
        let Opcode { value, len, .. } = op?;
        let run = regs
            .get_mut(at..at + len)
            .ok_or(Error::Invalid("sparse opcodes past the last register"))?;
        run.fill(value);
        at += len;
    }
    if at != REGISTERS {
        return Err(Error::Invalid("sparse opcodes short of the registers"));
    }
    // Every value is 1 to 32: nothing to check again.
    Ok(Registers::of(regs.into_boxed_slice()))
}

/// Decodes a dense layout; `Invalid` unless it is exactly [`DENSE_BYTES`] long.
pub fn decode_dense(dense: &[u8]) -> Result<Registers> {
    if dense.len() != DENSE_BYTES {
        return Err(Error::Invalid("a dense HyperLogLog of the wrong length"));
    }
    let mut regs = Registers::new();
    regs.merge_dense(dense);
    Ok(regs)
}

/// Registers from an encoding byte and its body.
pub(super) fn decode_body(encoding: u8, body: &[u8]) -> Result<Registers> {
    match encoding {
        DENSE => decode_dense(body),
        SPARSE => decode_sparse(body),
        _ => Err(Error::Invalid("unknown HyperLogLog encoding")),
    }
}

/// The encoding byte and body Redis would keep for `regs`: sparse while it can.
pub(super) fn encode_body(regs: &Registers) -> (u8, Vec<u8>) {
    match sparse_of(regs) {
        Some(sparse) => (SPARSE, sparse),
        None => (DENSE, dense_of(regs)),
    }
}

/// The string Redis's `GET` gives for `regs`, its cached cardinality valid.
pub fn export(regs: &Registers) -> Vec<u8> {
    let (encoding, body) = encode_body(regs);
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[encoding, 0, 0, 0]);
    out.extend_from_slice(&regs.count().to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Reads a Redis HyperLogLog string, checked as Redis checks one and more: the magic,
/// a known encoding, a dense body of exactly its length, sparse opcodes that cover
/// exactly the registers. The cached cardinality is not trusted (it is recomputed).
pub fn import(bytes: &[u8]) -> Result<Registers> {
    let (header, body) = bytes
        .split_at_checked(HEADER_LEN)
        .ok_or(Error::Invalid("shorter than a HyperLogLog header"))?;
    if !header.starts_with(MAGIC) {
        return Err(Error::Invalid("no HYLL magic"));
    }
    decode_body(header.get(4).copied().unwrap_or(u8::MAX), body)
}

/// Whether `bytes` starts like a Redis HyperLogLog string (its magic).
pub fn looks_like_hll(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Redis's cardinality estimate from a register histogram (Otmar Ertl's improved
/// estimator, `hllCount` since Redis 5), with Redis's floating point steps in order.
pub fn estimate(histo: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let q = Q as usize;
    let at = |j: usize| f64::from(histo.get(j).copied().unwrap_or(0));
    let mut z = m * tau((m - at(q + 1)) / m);
    for j in (1..=q).rev() {
        z += at(j);
        z *= 0.5;
    }
    z += m * sigma(at(0) / m);
    // llroundl: half away from zero, as f64::round; an empty HyperLogLog has z = inf.
    (ALPHA_INF * m * m / z).round() as u64
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let previous = z;
        z += x * y;
        y += y;
        if previous == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let previous = z;
        y *= 0.5;
        // Redis writes pow(1 - x, 2), which compilers fold to this product (exact).
        z -= (1.0 - x) * (1.0 - x) * y;
        if previous == z {
            return z / 3.0;
        }
    }
}
