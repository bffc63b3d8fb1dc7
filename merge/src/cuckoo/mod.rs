//! Cuckoo filter pages and their insert/delete operands.
//!
//! ```text
//! FpPage (kind 0x07, v1: 8 or 16 bits; v2: 12 bits) payload:
//!     shape | slots | stash_len u32 LE | stash
//!   shape:  fp_bits u8 (8, 12 or 16) | bucket_size u8 (>= 1) | buckets u32 LE (a power of two)
//!   slots:  buckets × bucket_size fingerprints, u8 or u16 LE; 12-bit ones two in three
//!           bytes (a 24-bit LE word: slot 2i in its low 12 bits, 2i+1 in its high 12);
//!           0 is an empty slot
//!   stash:  (bucket u32 LE | fp u16 LE) × stash_len: fingerprints that found no slot,
//!           `bucket` either of the pair's; written in (smaller bucket, fp) order with
//!           the smaller bucket, read in any order
//! FpOps  (kind 0x08, v1; v2 for 12 bits) payload: shape | (op u8 | bucket u32 LE | fp u16 LE) × n
//!   op 1 inserts fp into the bucket pair of `bucket`, op 2 deletes one copy of it
//! ```
//!
//! An item's two candidate buckets lie in one page: `alt(b) = (b ^ fp × 0x5bd1e995) mod
//! buckets` (RedisBloom's alternate index, taken within the page), an involution because
//! `buckets` is a power of two. So the full merge performs the whole insert, kick-outs
//! included, with a deterministic victim choice and a bound of [`MAX_KICKS`]; a
//! fingerprint still homeless after it goes to the stash with its bucket, so nothing
//! inserted is ever lost. A delete removes one copy from either bucket or the stash and
//! lets a stashed fingerprint of that bucket pair move into the freed slot.
//!
//! The observable contents of a page are the multiset of (bucket pair, fingerprint):
//! every grouping of operands gives the same multiset, which is what lookups read.

use crate::bytes::{le_u16, le_u32};
use crate::error::{Error, Result};
use crate::header::{self, Kind};

/// Kicks a full merge tries before an insert goes to the stash. The merge runs off the
/// write path, so the bound is larger than RedisBloom's MAXITERATIONS (20): at a page's
/// load target the stash stays next to empty. Inserts past what their pairs can hold
/// (an item added many times) run the whole bound and are stashed anyway, which is what
/// keeps it from being larger: 500 cost such pages' merges four times as much, for a
/// stash no smaller (`a_page_of_repeated_items` in the tests).
pub const MAX_KICKS: u32 = 128;
/// Most entries a combined operand may hold (56 MiB of them): more than one page's
/// inserts in a memtable at RocksDB's sizes, far below the 4 GiB RocksDB allows a merge
/// result. A longer partial merge is declined. (A bound of 4096 made every flush of a
/// busy filter keep its operands one by one: its pages took more than that in a 32 MiB
/// memtable.)
pub const MAX_OPS: usize = 1 << 23;
/// Most slots in one page (8-bit ones; half as many of 16 bits): a page's slots are at
/// most [`crate::MAX_PAGE_BYTES`], which bounds the memory a decoded shape may claim.
pub const MAX_SLOTS: u64 = crate::MAX_PAGE_BYTES as u64;

const SHAPE_LEN: usize = 6;
const ENTRY_LEN: usize = 7;
const STASH_ENTRY_LEN: usize = 6;
const OP_INSERT: u8 = 1;
const OP_DELETE: u8 = 2;

mod shape;
mod stash;
pub use shape::Shape;
use stash::Stash;

/// A materialized page of buckets and its stash. The slots stay in their stored form
/// (little-endian bytes), so decoding and encoding a page are copies, not conversions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FpPage {
    shape: Shape,
    slots: Vec<u8>,
    stash: Stash,
}

impl FpPage {
    /// An empty page: what a missing page reads as.
    pub fn empty(shape: Shape) -> FpPage {
        FpPage {
            shape,
            slots: vec![0; shape.slot_bytes()],
            stash: Stash::default(),
        }
    }

    /// The page's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Fingerprints held in slots (not counting the stash).
    pub fn occupied(&self) -> usize {
        match self.shape.fp_bits {
            8 => self.slots.iter().filter(|s| **s != 0).count(),
            16 => self.slots.chunks_exact(2).filter(|s| *s != [0, 0]).count(),
            _ => (0..self.shape.slots())
                .filter(|i| self.slot(*i) != 0)
                .count(),
        }
    }

    /// Fingerprints in the stash.
    pub fn stashed(&self) -> usize {
        self.stash.len()
    }

    /// Bytes of slots and stash, as encoded.
    pub fn memory_bytes(&self) -> usize {
        8 + self.slots.len() + self.stash.len() * 6
    }

    /// The fingerprint in slot `i` (0, empty, outside the page).
    fn slot(&self, i: usize) -> u16 {
        match self.shape.fp_bits {
            8 => self.slots.get(i).map_or(0, |b| u16::from(*b)),
            16 => le_u16(&self.slots, 2 * i).unwrap_or(0),
            _ => {
                let word = self.packed_word(i);
                (if i.is_multiple_of(2) {
                    word
                } else {
                    word >> 12
                } & 0xfff) as u16
            }
        }
    }

    /// The 24-bit word holding 12-bit slots `i & !1` and `i | 1`.
    fn packed_word(&self, i: usize) -> u32 {
        let at = i / 2 * 3;
        match self.slots.get(at..at + 3) {
            Some(&[a, b, c]) => u32::from_le_bytes([a, b, c, 0]),
            _ => 0,
        }
    }

    fn set_slot(&mut self, i: usize, fp: u16) {
        let bytes = fp.to_le_bytes();
        match self.shape.fp_bits {
            8 | 16 => {
                let width = usize::from(self.shape.fp_bits / 8);
                if let Some(dst) = self.slots.get_mut(width * i..width * i + width) {
                    dst.copy_from_slice(bytes.get(..width).unwrap_or_default());
                }
            }
            _ => {
                let word = self.packed_word(i);
                let fp = u32::from(fp) & 0xfff;
                let word = if i.is_multiple_of(2) {
                    (word & 0xfff000) | fp
                } else {
                    (word & 0xfff) | (fp << 12)
                };
                let at = i / 2 * 3;
                if let Some(dst) = self.slots.get_mut(at..at + 3) {
                    dst.copy_from_slice(word.to_le_bytes().get(..3).unwrap_or_default());
                }
            }
        }
    }

    /// The slot indices of `bucket`.
    fn bucket(&self, bucket: u32) -> std::ops::Range<usize> {
        let size = usize::from(self.shape.bucket_size);
        let start = (bucket as usize).saturating_mul(size);
        start..start + size
    }

    /// The two buckets of `fp`'s pair (the same one twice if it is its own alternate).
    fn pair(&self, bucket: u32, fp: u16) -> [u32; 2] {
        [bucket, self.shape.alt(bucket, fp)]
    }

    /// Copies of `fp` in the bucket pair of `bucket`, stash included.
    pub fn count(&self, bucket: u32, fp: u16) -> u32 {
        let [b1, b2] = self.pair(bucket, fp);
        let in_bucket = |b: u32| self.bucket(b).filter(|i| self.slot(*i) == fp).count();
        let buckets = if b1 == b2 {
            in_bucket(b1)
        } else {
            in_bucket(b1) + in_bucket(b2)
        };
        (buckets + self.stash.count(self.shape, bucket, fp)) as u32
    }

    /// Whether `fp` is in the bucket pair of `bucket`.
    pub fn contains(&self, bucket: u32, fp: u16) -> bool {
        self.count(bucket, fp) > 0
    }

    fn free_slot(&self, bucket: u32) -> Option<usize> {
        self.bucket(bucket).find(|i| self.slot(*i) == 0)
    }

    /// Inserts `fp` into the pair of `bucket`, kicking out residents as needed.
    pub fn insert(&mut self, bucket: u32, fp: u16) {
        for b in self.pair(bucket, fp) {
            if let Some(slot) = self.free_slot(b) {
                self.set_slot(slot, fp);
                return;
            }
        }
        let (mut at, mut in_hand) = (bucket, fp);
        for kick in 0..MAX_KICKS {
            // A bucket holding nothing but copies of the fingerprint in hand gives no
            // victim (a copy swapped for a copy moves nothing); its pair's other bucket
            // may. Both so full of copies: only the stash can take it.
            let victim = match self.victim(at, in_hand, kick) {
                Some(victim) => victim,
                None => {
                    at = self.shape.alt(at, in_hand);
                    match self.victim(at, in_hand, kick) {
                        Some(victim) => victim,
                        None => break,
                    }
                }
            };
            let resident = self.slot(victim);
            self.set_slot(victim, in_hand);
            in_hand = resident;
            at = self.shape.alt(at, in_hand);
            if let Some(slot) = self.free_slot(at) {
                self.set_slot(slot, in_hand);
                return;
            }
        }
        self.stash.push(self.shape, at, in_hand);
    }

    /// The slot of `bucket` a kick evicts: deterministic, moving around the bucket as
    /// kicks go on, and never a copy of `in_hand` (`None` if every slot holds one).
    fn victim(&self, bucket: u32, in_hand: u16, kick: u32) -> Option<usize> {
        let slots = self.bucket(bucket);
        let size = slots.len();
        let first = (kick as usize).wrapping_add(usize::from(in_hand)) % size.max(1);
        (0..size)
            .map(|i| slots.start + (first + i) % size)
            .find(|slot| self.slot(*slot) != in_hand)
    }

    /// Deletes one copy of `fp` from the pair of `bucket`; whether there was one.
    pub fn delete(&mut self, bucket: u32, fp: u16) -> bool {
        for b in self.pair(bucket, fp) {
            if let Some(i) = self.bucket(b).find(|i| self.slot(*i) == fp) {
                self.set_slot(i, 0);
                self.unstash_into(b);
                return true;
            }
        }
        self.stash.remove(self.shape, bucket, fp)
    }

    /// Moves the first stashed fingerprint whose pair includes `bucket` into its free slot.
    fn unstash_into(&mut self, bucket: u32) {
        let Some(slot) = self.free_slot(bucket) else {
            return;
        };
        if let Some(fp) = self.stash.take_for(self.shape, bucket) {
            self.set_slot(slot, fp);
        }
    }

    /// Applies one operand as [`crate::full_merge`] does; `false` (page unchanged) for
    /// one the full merge would skip: it does not decode, or is for another shape.
    pub(crate) fn apply_operand(&mut self, operand: &[u8]) -> bool {
        match FpOps::decode(operand) {
            Ok(ops) if ops.shape == self.shape => {
                self.apply(&ops.ops);
                true
            }
            _ => false,
        }
    }

    fn apply(&mut self, ops: &[FpOp]) {
        for op in ops {
            match *op {
                FpOp::Insert { bucket, fp } => self.insert(bucket, fp),
                FpOp::Delete { bucket, fp } => {
                    self.delete(bucket, fp);
                }
            }
        }
    }

    /// The page as stored: header, shape and buckets.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = header::begin_version(
            Kind::FpPage,
            self.shape.version(),
            SHAPE_LEN + self.slots.len() + 4 + self.stash.len() * STASH_ENTRY_LEN,
        );
        self.shape.encode_into(&mut out);
        out.extend_from_slice(&self.slots);
        out.extend_from_slice(&(self.stash.len() as u32).to_le_bytes());
        for (bucket, fp) in self.stash.entries() {
            out.extend_from_slice(&bucket.to_le_bytes());
            out.extend_from_slice(&fp.to_le_bytes());
        }
        header::finish(out)
    }

    /// Reads a page written by [`FpPage::encode`], checking its checksum and shape.
    pub fn decode(bytes: &[u8]) -> Result<FpPage> {
        let framed = header::decode_as(bytes, Kind::FpPage)?;
        let payload = framed.payload;
        let shape = Shape::decode(payload)?;
        if shape.version() != framed.version {
            return Err(Error::Invalid(
                "fingerprint width of another format version",
            ));
        }
        let slots_end = SHAPE_LEN + shape.slot_bytes();
        let slot_bytes = payload.get(SHAPE_LEN..slots_end).ok_or(Error::Truncated {
            need: slots_end + 4,
            have: payload.len(),
        })?;
        let slots = slot_bytes.to_vec();
        let stash_len = le_u32(payload, slots_end)? as usize;
        let stash_bytes = payload.get(slots_end + 4..).unwrap_or_default();
        if stash_bytes.len() != stash_len.saturating_mul(STASH_ENTRY_LEN)
            || payload.len() < slots_end + 4
        {
            return Err(Error::Invalid("stash length differs from its entries"));
        }
        let stash = stash_bytes
            .chunks_exact(STASH_ENTRY_LEN)
            .map(|e| Ok((le_u32(e, 0)?, le_u16(e, 4)?)))
            .collect::<Result<Vec<_>>>()?;
        if stash
            .iter()
            .any(|(b, fp)| *b >= shape.buckets || !shape.holds(*fp))
        {
            return Err(Error::Invalid("stash entry outside the page's shape"));
        }
        Ok(FpPage {
            shape,
            slots,
            stash: Stash::from_entries(shape, stash),
        })
    }
}

/// Full merge for fingerprint pages; see [`crate::full_merge`].
impl crate::fold::PageKind for FpPage {
    type Page = FpPage;

    fn decode(bytes: &[u8]) -> Result<FpPage> {
        FpPage::decode(bytes)
    }

    fn start(operands: &[&[u8]]) -> Option<FpPage> {
        let first = operands.iter().find_map(|op| FpOps::decode(op).ok())?;
        Some(FpPage::empty(first.shape))
    }

    fn apply(page: &mut FpPage, operand: &[u8]) -> bool {
        match FpOps::decode(operand) {
            Ok(ops) if ops.shape == page.shape => {
                page.apply(&ops.ops);
                true
            }
            _ => false,
        }
    }

    fn encode(page: FpPage) -> Vec<u8> {
        page.encode()
    }
}

mod ops;

pub(crate) use ops::partial_merge;
pub use ops::{FpOp, FpOps};

#[cfg(test)]
mod tests;
