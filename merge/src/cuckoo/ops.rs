//! Cuckoo operands: fingerprint inserts and deletes for one page (see the format in the
//! parent module), and their partial merge.

use super::{Shape, ENTRY_LEN, MAX_OPS, OP_DELETE, OP_INSERT, SHAPE_LEN};
use crate::bytes::{le_u16, le_u32};
use crate::error::{Error, Result};
use crate::header::{self, Kind};
use std::collections::HashMap;

/// One insert or delete of a fingerprint in the bucket pair of `bucket`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FpOp {
    /// Inserts `fp` into the pair of `bucket`, kicking others out if both are full.
    Insert {
        /// The fingerprint's first bucket in the page.
        bucket: u32,
        /// The fingerprint (nonzero).
        fp: u16,
    },
    /// Deletes one copy of `fp` from the pair of `bucket`.
    Delete {
        /// The fingerprint's first bucket in the page.
        bucket: u32,
        /// The fingerprint (nonzero).
        fp: u16,
    },
}

impl FpOp {
    fn parts(self) -> (u8, u32, u16) {
        match self {
            FpOp::Insert { bucket, fp } => (OP_INSERT, bucket, fp),
            FpOp::Delete { bucket, fp } => (OP_DELETE, bucket, fp),
        }
    }
}

/// An operand: fingerprint inserts and deletes for one page, applied in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FpOps {
    /// The shape of the page the operations apply to.
    pub shape: Shape,
    /// The operations, in the order written.
    pub ops: Vec<FpOp>,
}

impl FpOps {
    /// Checks every entry against the shape.
    pub fn new(shape: Shape, ops: Vec<FpOp>) -> Result<FpOps> {
        for op in &ops {
            let (_, bucket, fp) = op.parts();
            if bucket >= shape.buckets || !shape.holds(fp) {
                return Err(Error::Invalid("fingerprint entry outside the page's shape"));
            }
        }
        Ok(FpOps { shape, ops })
    }

    /// The operand as stored.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = header::begin_version(
            Kind::FpOps,
            self.shape.version(),
            SHAPE_LEN + ENTRY_LEN * self.ops.len(),
        );
        self.shape.encode_into(&mut out);
        for op in &self.ops {
            let (code, bucket, fp) = op.parts();
            out.push(code);
            out.extend_from_slice(&bucket.to_le_bytes());
            out.extend_from_slice(&fp.to_le_bytes());
        }
        header::finish(out)
    }

    /// Reads an operand written by [`FpOps::encode`].
    pub fn decode(bytes: &[u8]) -> Result<FpOps> {
        let framed = header::decode_as(bytes, Kind::FpOps)?;
        let shape = Shape::decode(framed.payload)?;
        if shape.version() != framed.version {
            return Err(Error::Invalid(
                "fingerprint width of another format version",
            ));
        }
        let body = framed.payload.get(SHAPE_LEN..).unwrap_or_default();
        if !body.len().is_multiple_of(ENTRY_LEN) {
            return Err(Error::Invalid("fingerprint entries are 7 bytes each"));
        }
        let ops = body
            .chunks_exact(ENTRY_LEN)
            .map(|e| {
                let bucket = le_u32(e, 1)?;
                let fp = le_u16(e, 5)?;
                match e.first() {
                    Some(&OP_INSERT) => Ok(FpOp::Insert { bucket, fp }),
                    Some(&OP_DELETE) => Ok(FpOp::Delete { bucket, fp }),
                    _ => Err(Error::Invalid("unknown fingerprint operation")),
                }
            })
            .collect::<Result<Vec<FpOp>>>()?;
        FpOps::new(shape, ops)
    }
}

/// Partial merge for fingerprint operands: their entries in order, where an insert
/// followed by a delete of the same fingerprint in the same bucket pair cancel out (on
/// the multiset a page holds, the pair is the identity whatever comes between).
/// Declines operands of different shapes, undecodable ones, and results longer than
/// [`MAX_OPS`].
pub(crate) fn partial_merge(operands: &[&[u8]]) -> Option<Vec<u8>> {
    let mut shape = None;
    let mut ops: Vec<FpOp> = Vec::new();
    for operand in operands {
        let decoded = FpOps::decode(operand).ok()?;
        if *shape.get_or_insert(decoded.shape) != decoded.shape {
            return None;
        }
        ops.extend(decoded.ops);
    }
    let shape = shape?;
    if ops.iter().any(|op| matches!(op, FpOp::Delete { .. })) {
        ops = cancel_pairs(shape, ops);
    }
    if ops.len() > MAX_OPS {
        return None;
    }
    Some(FpOps { shape, ops }.encode())
}

/// `ops` less each delete that follows an uncancelled insert of its fingerprint in its
/// bucket pair, and that insert.
fn cancel_pairs(shape: Shape, ops: Vec<FpOp>) -> Vec<FpOp> {
    let mut entries: Vec<Option<FpOp>> = Vec::with_capacity(ops.len());
    // Uncancelled inserts by (smaller bucket of the pair, fingerprint), latest last.
    let mut open: HashMap<(u32, u16), Vec<usize>> = HashMap::new();
    for op in ops {
        let (code, bucket, fp) = op.parts();
        let pair = (shape.pair_key(bucket, fp), fp);
        if code == OP_DELETE {
            if let Some(insert) = open.get_mut(&pair).and_then(Vec::pop) {
                if let Some(entry) = entries.get_mut(insert) {
                    *entry = None;
                }
                continue;
            }
        } else {
            open.entry(pair).or_default().push(entries.len());
        }
        entries.push(Some(op));
    }
    entries.into_iter().flatten().collect()
}
