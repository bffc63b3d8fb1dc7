//! HyperLogLog operands: registers to raise, as `(register, rank)` pairs or a whole
//! dense layout (a `PFMERGE`, or pairs combined past the size of one).

use super::redis::dense_of;
use super::{Registers, DENSE_BYTES, MAX_RANK, REGISTERS};
use crate::bytes::le_u16;
use crate::error::{Error, Result};
use crate::header::{self, Kind};

const FORM_PAIRS: u8 = 0;
const FORM_DENSE: u8 = 1;
const PAIR_LEN: usize = 3;

/// Registers to raise in one HyperLogLog page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HllOps {
    /// `(register, rank)` pairs, in the order written.
    Pairs(Vec<(u16, u8)>),
    /// Every register at once: raise each to these values.
    Dense(Registers),
}

impl HllOps {
    /// Pairs to raise; `Invalid` for a register past the last or a rank above 63.
    pub fn pairs(pairs: Vec<(u16, u8)>) -> Result<HllOps> {
        if pairs
            .iter()
            .any(|(i, r)| usize::from(*i) >= REGISTERS || *r > MAX_RANK)
        {
            return Err(Error::Invalid("a HyperLogLog register out of range"));
        }
        Ok(HllOps::Pairs(pairs))
    }

    /// The operand raising a page to `regs`: its set registers as pairs while they are
    /// smaller than the dense layout, else the dense layout.
    pub fn of(regs: Registers) -> HllOps {
        let set = regs.as_bytes().iter().filter(|r| **r != 0).count();
        if set * PAIR_LEN >= DENSE_BYTES {
            return HllOps::Dense(regs);
        }
        let pairs = regs
            .as_bytes()
            .iter()
            .enumerate()
            .filter(|(_, r)| **r != 0)
            .map(|(i, r)| (i as u16, *r))
            .collect();
        HllOps::Pairs(pairs)
    }

    /// The pairs that add `items`, as Redis's `PFADD` would.
    pub fn add<I: AsRef<[u8]>>(items: &[I]) -> HllOps {
        HllOps::Pairs(items.iter().map(|i| super::position(i.as_ref())).collect())
    }

    /// Decodes an operand.
    pub fn decode(bytes: &[u8]) -> Result<HllOps> {
        let view = OpsView::decode(bytes)?;
        Ok(match view.form {
            FORM_PAIRS => HllOps::Pairs(pairs_of(view.body).collect()),
            _ => HllOps::Dense(super::redis::decode_dense(view.body)?),
        })
    }

    /// Encodes the operand.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            HllOps::Pairs(pairs) => {
                let mut out = header::begin(Kind::HllOps, 1 + pairs.len() * PAIR_LEN);
                out.push(FORM_PAIRS);
                for (index, rank) in pairs {
                    out.extend_from_slice(&index.to_le_bytes());
                    out.push(*rank);
                }
                header::finish(out)
            }
            HllOps::Dense(regs) => {
                let mut out = header::begin(Kind::HllOps, 1 + DENSE_BYTES);
                out.push(FORM_DENSE);
                out.extend_from_slice(&dense_of(regs));
                header::finish(out)
            }
        }
    }
}

fn pairs_of(body: &[u8]) -> impl Iterator<Item = (u16, u8)> + '_ {
    body.chunks_exact(PAIR_LEN).map(|pair| {
        let index = le_u16(pair, 0).unwrap_or(u16::MAX);
        (index, pair.get(2).copied().unwrap_or(0))
    })
}

/// A checked view of an encoded operand.
pub(super) struct OpsView<'a> {
    form: u8,
    body: &'a [u8],
}

impl<'a> OpsView<'a> {
    pub(super) fn decode(bytes: &'a [u8]) -> Result<OpsView<'a>> {
        let framed = header::decode_as(bytes, Kind::HllOps)?;
        let (form, body) = framed
            .payload
            .split_first()
            .ok_or(Error::Invalid("empty HyperLogLog operand"))?;
        match *form {
            FORM_PAIRS => {
                if !body.len().is_multiple_of(PAIR_LEN) {
                    return Err(Error::Invalid("HyperLogLog pairs cut short"));
                }
                if pairs_of(body).any(|(i, r)| usize::from(i) >= REGISTERS || r > MAX_RANK) {
                    return Err(Error::Invalid("a HyperLogLog register out of range"));
                }
            }
            FORM_DENSE if body.len() == DENSE_BYTES => {}
            FORM_DENSE => return Err(Error::Invalid("a dense operand of the wrong length")),
            _ => return Err(Error::Invalid("unknown HyperLogLog operand form")),
        }
        Ok(OpsView { form: *form, body })
    }

    /// Raises `regs` by this operand.
    pub(super) fn apply(&self, regs: &mut Registers) {
        match self.form {
            FORM_PAIRS => {
                for (index, rank) in pairs_of(self.body) {
                    regs.raise(index, rank);
                }
            }
            _ => regs.merge_dense(self.body),
        }
    }

    fn pairs(&self) -> usize {
        match self.form {
            FORM_PAIRS => self.body.len() / PAIR_LEN,
            _ => REGISTERS,
        }
    }
}

/// Partial merge: one operand raising each register to the largest rank of all: pairs
/// (one per register, ascending) while smaller than the dense layout, else dense.
pub fn partial_merge(operands: &[&[u8]]) -> Option<Vec<u8>> {
    let views = operands
        .iter()
        .map(|op| OpsView::decode(op).ok())
        .collect::<Option<Vec<_>>>()?;
    let pairs: usize = views.iter().map(OpsView::pairs).sum();
    if views.iter().all(|v| v.form == FORM_PAIRS) && pairs * PAIR_LEN < DENSE_BYTES {
        let mut all: Vec<(u16, u8)> = views.iter().flat_map(|v| pairs_of(v.body)).collect();
        // Per register the largest rank first, then one pair per register.
        all.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        all.dedup_by_key(|pair| pair.0);
        all.retain(|pair| pair.1 > 0);
        return Some(HllOps::Pairs(all).encode());
    }
    let mut regs = Registers::new();
    for view in &views {
        view.apply(&mut regs);
    }
    Some(HllOps::of(regs).encode())
}
