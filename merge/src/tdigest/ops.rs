//! Digest operands: what `TDIGEST.ADD` (and a read that compresses) writes blind.
//!
//! ```text
//! Digest ops payload (version 1): compression u32 LE | op...
//! op 1, values:    count u32 | value f64 x count
//! op 2, centroids: count u32 | min f64 | max f64 | (mean f64 | weight i64) x count
//! op 3, compress:  (nothing)
//! ```
//!
//! The full merge applies ops in order: each value is `td_add(value, 1)`, each centroid
//! `td_add(mean, weight)` (then min and max widen to the op's), a compress op compresses
//! (what RedisBloom's reads do to the digest they read). `compression` is the digest's
//! when the op was written; it sizes a digest that has no page yet and a partial merge's
//! fold.
//!
//! A partial merge concatenates ops while the result stays under [`FOLD_BYTES`]; past
//! that it declines (RocksDB keeps the operands as they are). It never folds values
//! into centroids: when RedisBloom's digest compresses depends on the centroids the
//! page already holds, which a partial merge does not see, so any fold would give a
//! digest that no sequence of RedisBloom's adds gives, and a key's answers would depend
//! on when RocksDB flushed. Every page is therefore exactly the sequential digest of
//! its operands, whatever RocksDB combined (format 1 still decodes centroids ops that
//! earlier versions' folds wrote). A value whose add would overflow the digest's `i64`
//! weight is dropped.

use super::{Digest, MAX_COMPRESSION};
use crate::bytes::{le_u32, le_u64};
use crate::error::{Error, Result};
use crate::header::{self, Kind};

/// A partial merge declines once the concatenated payload would pass this size: more
/// than a memtable's worth of one digest's adds at RocksDB's sizes, far below the 4 GiB
/// RocksDB allows a merge result. (256 KiB, the bound until 2026-12, made every flush
/// of a busy digest keep its operands one by one.)
pub const FOLD_BYTES: usize = 64 << 20;
const VALUES: u8 = 1;
const CENTROIDS: u8 = 2;
const COMPRESS: u8 = 3;

/// An operand under construction.
#[derive(Debug, Clone)]
pub struct DigestOps {
    payload: Vec<u8>,
}

impl DigestOps {
    /// An empty operand for a digest of `compression`.
    pub fn new(compression: u32) -> DigestOps {
        DigestOps {
            payload: compression.to_le_bytes().to_vec(),
        }
    }

    /// Appends a values op.
    pub fn values(mut self, values: &[f64]) -> DigestOps {
        self.payload.push(VALUES);
        self.payload
            .extend_from_slice(&(values.len() as u32).to_le_bytes());
        for v in values {
            self.payload.extend_from_slice(&v.to_le_bytes());
        }
        self
    }

    /// Appends a centroids op: `digest`'s centroids, min and max.
    pub fn centroids(mut self, digest: &Digest) -> DigestOps {
        self.payload.push(CENTROIDS);
        self.payload
            .extend_from_slice(&(digest.nodes.len() as u32).to_le_bytes());
        self.payload.extend_from_slice(&digest.min.to_le_bytes());
        self.payload.extend_from_slice(&digest.max.to_le_bytes());
        for node in &digest.nodes {
            self.payload.extend_from_slice(&node.mean.to_le_bytes());
            self.payload.extend_from_slice(&node.weight.to_le_bytes());
        }
        self
    }

    /// Appends a compress op.
    pub fn compress(mut self) -> DigestOps {
        self.payload.push(COMPRESS);
        self
    }

    /// The operand's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = header::begin(Kind::DigestOps, self.payload.len());
        out.extend_from_slice(&self.payload);
        header::finish(out)
    }
}

/// One decoded op, borrowing the operand's bytes.
enum Op<'a> {
    Values(&'a [u8]),
    Centroids { min: f64, max: f64, nodes: &'a [u8] },
    Compress,
}

/// The compression and checked ops of an operand's payload.
fn parse(payload: &[u8]) -> Result<(u32, Vec<Op<'_>>)> {
    let compression = le_u32(payload, 0)?;
    if !(1..=MAX_COMPRESSION).contains(&compression) {
        return Err(Error::Invalid("digest op compression out of range"));
    }
    let mut ops = Vec::new();
    let mut at = 4;
    while let Some(&tag) = payload.get(at) {
        at += 1;
        let op = match tag {
            COMPRESS => Op::Compress,
            VALUES => {
                let count = le_u32(payload, at)? as usize;
                let bytes = take(payload, at + 4, count.saturating_mul(8))?;
                at += 4;
                Op::Values(bytes)
            }
            CENTROIDS => {
                let count = le_u32(payload, at)? as usize;
                let min = f64::from_bits(le_u64(payload, at + 4)?);
                let max = f64::from_bits(le_u64(payload, at + 12)?);
                let nodes = take(payload, at + 20, count.saturating_mul(16))?;
                if nodes
                    .as_chunks::<16>()
                    .0
                    .iter()
                    .any(|n| le_u64(n, 8).map_or(true, |w| (w as i64) <= 0))
                {
                    return Err(Error::Invalid("digest op centroid weight out of range"));
                }
                at += 20;
                Op::Centroids { min, max, nodes }
            }
            _ => return Err(Error::Invalid("unknown digest op")),
        };
        at += match &op {
            Op::Values(b) | Op::Centroids { nodes: b, .. } => b.len(),
            Op::Compress => 0,
        };
        ops.push(op);
    }
    Ok((compression, ops))
}

fn take(payload: &[u8], at: usize, len: usize) -> Result<&[u8]> {
    payload
        .get(at..at.saturating_add(len))
        .ok_or(Error::Truncated {
            need: at.saturating_add(len),
            have: payload.len(),
        })
}

/// The compression and payload of a digest operand.
fn decode_operand(bytes: &[u8]) -> Result<(u32, Vec<Op<'_>>)> {
    let framed = header::decode_as(bytes, Kind::DigestOps)?;
    parse(framed.payload)
}

impl Digest {
    fn apply_ops(&mut self, ops: &[Op<'_>]) {
        for op in ops {
            match op {
                Op::Values(bytes) => {
                    for value in crate::bytes::u64s(bytes).map(f64::from_bits) {
                        // An add that would overflow the weights is dropped (see above).
                        let _ = self.add(value, 1);
                    }
                }
                Op::Centroids { min, max, nodes } => {
                    for node in nodes.as_chunks::<16>().0 {
                        let mean = le_u64(node, 0).map_or(f64::NAN, f64::from_bits);
                        let weight = le_u64(node, 8).map_or(1, |w| w as i64);
                        let _ = self.add(mean, weight);
                    }
                    if *min < self.min {
                        self.min = *min;
                    }
                    if *max > self.max {
                        self.max = *max;
                    }
                }
                Op::Compress => self.compress(),
            }
        }
    }

    /// Applies one operand as the full merge does; `false` (digest unchanged) for one
    /// that does not decode.
    pub fn apply_operand(&mut self, operand: &[u8]) -> bool {
        match decode_operand(operand) {
            Ok((_, ops)) => {
                self.apply_ops(&ops);
                true
            }
            Err(_) => false,
        }
    }
}

/// The full merge of a digest page (see the module docs).
impl crate::fold::PageKind for Digest {
    type Page = Digest;

    fn decode(bytes: &[u8]) -> Result<Digest> {
        Digest::decode(bytes)
    }

    /// A digest at the first operand's compression.
    fn start(operands: &[&[u8]]) -> Option<Digest> {
        let first = operands.iter().find_map(|op| decode_operand(op).ok());
        Some(Digest::new(
            first.map_or(super::DEFAULT_COMPRESSION, |(c, _)| c),
        ))
    }

    fn apply(page: &mut Digest, operand: &[u8]) -> bool {
        page.apply_operand(operand)
    }

    fn encode(page: Digest) -> Vec<u8> {
        page.encode()
    }
}

/// The partial merge of digest operands (see the module docs): their ops concatenated;
/// `None` for operands that do not decode, were written at different compressions, or
/// together pass [`FOLD_BYTES`].
pub(crate) fn partial_merge(operands: &[&[u8]]) -> Option<Vec<u8>> {
    partial_merge_up_to(operands, FOLD_BYTES)
}

/// [`partial_merge`] declining past `max_bytes` (tests use small operands).
pub(crate) fn partial_merge_up_to(operands: &[&[u8]], max_bytes: usize) -> Option<Vec<u8>> {
    let mut compression = None;
    let mut payload = Vec::new();
    for operand in operands {
        let framed = header::decode_as(operand, Kind::DigestOps).ok()?;
        let (c, _) = parse(framed.payload).ok()?;
        if *compression.get_or_insert(c) != c {
            return None;
        }
        payload.extend_from_slice(framed.payload.get(4..)?);
        if payload.len() > max_bytes {
            return None;
        }
    }
    let mut combined = DigestOps::new(compression?);
    combined.payload.extend_from_slice(&payload);
    Some(combined.encode())
}
