//! HyperLogLog: Redis's algorithm exactly, on one blind-merge page per key.
//!
//! 16384 six-bit registers (p = 14). An item is hashed with MurmurHash64A and Redis's
//! seed; the low 14 bits pick the register, and the rank is one more than the number of
//! zero bits above them (at most 51). A register only ever takes the larger value, so
//! an add is an operand of `(register, rank)` pairs ([`HllOps`]) and every merge, full
//! or partial, is a register-wise max: commutative and idempotent.
//!
//! ```text
//! HllPage payload: encoding u8 | body, the shortest of:
//!   encoding 0 (dense):  12288 bytes, Redis's dense layout (6-bit registers, LSB first)
//!   encoding 1 (sparse): Redis's sparse opcodes (ZERO, XZERO, VAL), canonical form
//!   encoding 2 (packed): Rice-coded gaps and unary values (see `packed.rs`)
//! HllOps payload: form u8 | body
//!   form 0 (pairs): (register u16 LE, rank u8) repeated
//!   form 1 (dense): 12288 bytes, the dense layout
//! ```
//!
//! A page keeps Redis's own register encodings ([`redis`]), so the bytes stored are
//! those of Redis's `GET` of the same registers without its 16-byte header, sparse while
//! Redis would keep them sparse. Decoded, a page is 16384 bytes, one per register.

mod ops;
mod packed;
pub mod redis;
#[cfg(test)]
mod tests;

pub use ops::{partial_merge, HllOps};

use crate::error::{Error, Result};
use crate::hash::murmur64a;
use crate::header::{self, Kind};
use std::sync::OnceLock;

/// Register index bits.
pub const P: u32 = 14;
/// Registers in a HyperLogLog.
pub const REGISTERS: usize = 1 << P;
/// Hash bits above the register index.
pub const Q: u32 = 64 - P;
/// The largest value a six-bit register holds.
pub const MAX_RANK: u8 = 63;
/// Bytes of the dense layout.
pub const DENSE_BYTES: usize = REGISTERS * 6 / 8;
/// Redis's seed for MurmurHash64A in `hllPatLen`.
pub const SEED: u64 = 0xadc8_3b19;
/// A page's encoding byte for the packed form (Redis's are 0, dense, and 1, sparse).
const PACKED: u8 = 2;

/// The register and rank of `item`, as Redis's `hllPatLen` derives them.
pub fn position(item: &[u8]) -> (u16, u8) {
    let hash = murmur64a(item, SEED);
    let index = (hash & (REGISTERS as u64 - 1)) as u16;
    // The bit above the last one used ends the run, so the rank is at most Q + 1.
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// The 16384 registers, one byte each: a decoded page. Its count is computed once and
/// kept until a register changes (Redis caches it in its header likewise), so repeated
/// `PFCOUNT`s of a cached page cost a load.
#[derive(Clone)]
pub struct Registers {
    regs: Box<[u8]>,
    count: OnceLock<u64>,
}

impl PartialEq for Registers {
    fn eq(&self, other: &Registers) -> bool {
        self.regs == other.regs
    }
}

impl Eq for Registers {}

impl std::fmt::Debug for Registers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = self.regs.iter().filter(|r| **r != 0).count();
        write!(f, "Registers({set} set)")
    }
}

impl Default for Registers {
    fn default() -> Self {
        Registers::new()
    }
}

impl Registers {
    /// All registers zero: an empty HyperLogLog (what a missing page reads as).
    pub fn new() -> Registers {
        Registers::of(vec![0; REGISTERS].into_boxed_slice())
    }

    pub(super) fn of(regs: Box<[u8]>) -> Registers {
        Registers {
            regs,
            count: OnceLock::new(),
        }
    }

    /// Registers from one byte per register; `Invalid` unless 16384 values of at most 63.
    pub fn from_bytes(regs: &[u8]) -> Result<Registers> {
        if regs.len() != REGISTERS {
            return Err(Error::Invalid("a HyperLogLog has 16384 registers"));
        }
        if regs.iter().any(|r| *r > MAX_RANK) {
            return Err(Error::Invalid("a register above 63"));
        }
        Ok(Registers::of(regs.into()))
    }

    /// One byte per register.
    pub fn as_bytes(&self) -> &[u8] {
        &self.regs
    }

    /// Register `index`'s value (0 past the last).
    pub fn get(&self, index: usize) -> u8 {
        self.regs.get(index).copied().unwrap_or(0)
    }

    /// Raises register `index` to `rank` if that is larger; whether it changed.
    pub fn raise(&mut self, index: u16, rank: u8) -> bool {
        match self.regs.get_mut(usize::from(index)) {
            Some(reg) if rank > *reg && rank <= MAX_RANK => {
                *reg = rank;
                self.count = OnceLock::new();
                true
            }
            _ => false,
        }
    }

    /// Raises every register to `other`'s where that is larger (the union).
    pub fn merge(&mut self, other: &Registers) {
        for (a, b) in self.regs.iter_mut().zip(other.regs.iter()) {
            *a = (*a).max(*b);
        }
        self.count = OnceLock::new();
    }

    /// Raises registers to the values of a dense layout (at most 63 each by width).
    fn merge_dense(&mut self, dense: &[u8]) {
        for (index, reg) in self.regs.iter_mut().enumerate() {
            *reg = (*reg).max(redis::dense_get(dense, index));
        }
        self.count = OnceLock::new();
    }

    /// How many registers hold each value.
    pub fn histogram(&self) -> [u32; 64] {
        let mut histo = [0u32; 64];
        for reg in self.regs.iter() {
            if let Some(slot) = histo.get_mut(usize::from(*reg)) {
                *slot += 1;
            }
        }
        histo
    }

    /// The estimated cardinality, as Redis's `PFCOUNT` answers it.
    pub fn count(&self) -> u64 {
        *self
            .count
            .get_or_init(|| redis::estimate(&self.histogram()))
    }

    /// Decodes a stored page.
    pub fn decode(bytes: &[u8]) -> Result<Registers> {
        let framed = header::decode_as(bytes, Kind::HllPage)?;
        let (encoding, body) = framed
            .payload
            .split_first()
            .ok_or(Error::Invalid("empty HyperLogLog page"))?;
        match *encoding {
            PACKED => packed::unpack(body),
            other => redis::decode_body(other, body),
        }
    }

    /// Encodes the page in the shortest form: packed, Redis's sparse or dense (the
    /// earlier of two of one length).
    pub fn encode(&self) -> Vec<u8> {
        let (mut encoding, mut body) = redis::encode_body(self);
        if let Some(plan) = packed::plan(self).filter(|p| p.len < body.len()) {
            (encoding, body) = (PACKED, plan.pack());
        }
        let mut out = header::begin(Kind::HllPage, 1 + body.len());
        out.push(encoding);
        out.extend_from_slice(&body);
        header::finish(out)
    }

    /// Applies one operand as [`crate::full_merge`] does; `false` (page unchanged) for
    /// one the full merge would skip.
    pub(crate) fn apply_operand(&mut self, operand: &[u8]) -> bool {
        match ops::OpsView::decode(operand) {
            Ok(view) => {
                view.apply(self);
                true
            }
            Err(_) => false,
        }
    }
}

/// Full merge for HyperLogLog pages (register-wise max); see [`crate::full_merge`].
impl crate::fold::PageKind for Registers {
    type Page = Registers;

    fn decode(bytes: &[u8]) -> Result<Registers> {
        Registers::decode(bytes)
    }

    fn start(operands: &[&[u8]]) -> Option<Registers> {
        operands
            .iter()
            .any(|op| ops::OpsView::decode(op).is_ok())
            .then(Registers::new)
    }

    fn apply(page: &mut Registers, operand: &[u8]) -> bool {
        page.apply_operand(operand)
    }

    fn encode(page: Registers) -> Vec<u8> {
        page.encode()
    }
}
