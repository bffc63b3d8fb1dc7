//! Per-key totals (items inserted, total count) kept as a page of `u64` slots, so that
//! the counts that change on every write are blind merges too, never metadata rewrites.
//!
//! ```text
//! TallyPage  (kind 0x03, v1) payload: slot u64 LE × n
//! TallyDelta (kind 0x04, v1) payload: add u64 LE × m    (wrapping; m may differ from n)
//! ```
//!
//! Wrapping addition is associative and commutative, so any grouping of deltas gives the
//! same slots. A delta longer than the page extends it with zero slots.

use crate::bytes::u64s;
use crate::error::{Error, Result};
use crate::header::{self, Kind};

/// A page of `u64` totals, or a delta of the same shape.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tally {
    slots: Vec<u64>,
}

impl Tally {
    /// A tally of the given slots.
    pub fn new(slots: Vec<u64>) -> Tally {
        Tally { slots }
    }

    /// The slots.
    pub fn slots(&self) -> &[u64] {
        &self.slots
    }

    /// Slot `i`, zero if the tally is shorter.
    pub fn get(&self, i: usize) -> u64 {
        self.slots.get(i).copied().unwrap_or(0)
    }

    /// Decodes a stored page.
    pub fn decode_page(bytes: &[u8]) -> Result<Tally> {
        decode(bytes, Kind::TallyPage)
    }

    /// Decodes a delta operand.
    pub fn decode_delta(bytes: &[u8]) -> Result<Tally> {
        decode(bytes, Kind::TallyDelta)
    }

    /// Encodes as a page.
    pub fn encode_page(&self) -> Vec<u8> {
        self.encode(Kind::TallyPage)
    }

    /// Encodes as a delta operand.
    pub fn encode_delta(&self) -> Vec<u8> {
        self.encode(Kind::TallyDelta)
    }

    fn encode(&self, kind: Kind) -> Vec<u8> {
        let mut out = header::begin(kind, self.slots.len() * 8);
        for slot in &self.slots {
            out.extend_from_slice(&slot.to_le_bytes());
        }
        header::finish(out)
    }

    /// Applies one delta operand as [`crate::full_merge`] does; `false` (unchanged) for
    /// one the full merge would skip.
    pub(crate) fn apply_operand(&mut self, operand: &[u8]) -> bool {
        match Tally::decode_delta(operand) {
            Ok(delta) => {
                self.add(&delta);
                true
            }
            Err(_) => false,
        }
    }

    /// Adds `other` slot by slot, wrapping.
    pub fn add(&mut self, other: &Tally) {
        if self.slots.len() < other.slots.len() {
            self.slots.resize(other.slots.len(), 0);
        }
        for (slot, add) in self.slots.iter_mut().zip(&other.slots) {
            *slot = slot.wrapping_add(*add);
        }
    }
}

fn decode(bytes: &[u8], kind: Kind) -> Result<Tally> {
    let framed = header::decode_as(bytes, kind)?;
    if !framed.payload.len().is_multiple_of(8) {
        return Err(Error::Invalid(
            "tally length is not a whole number of u64 slots",
        ));
    }
    let slots = u64s(framed.payload).collect();
    Ok(Tally { slots })
}

/// Full merge for tally pages; see [`crate::full_merge`].
impl crate::fold::PageKind for Tally {
    type Page = Tally;

    fn decode(bytes: &[u8]) -> Result<Tally> {
        Tally::decode_page(bytes)
    }

    fn start(_operands: &[&[u8]]) -> Option<Tally> {
        Some(Tally::default())
    }

    fn apply(page: &mut Tally, operand: &[u8]) -> bool {
        Tally::decode_delta(operand)
            .map(|delta| page.add(&delta))
            .is_ok()
    }

    fn encode(page: Tally) -> Vec<u8> {
        page.encode_page()
    }
}

/// Partial merge for tally deltas; see [`crate::partial_merge`].
pub(crate) fn partial_merge(operands: &[&[u8]]) -> Option<Vec<u8>> {
    let mut sum = Tally::default();
    for operand in operands {
        sum.add(&Tally::decode_delta(operand).ok()?);
    }
    Some(sum.encode_delta())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let t = Tally::new(vec![1, u64::MAX, 0]);
        assert_eq!(Tally::decode_page(&t.encode_page()), Ok(t.clone()));
        assert_eq!(Tally::decode_delta(&t.encode_delta()), Ok(t));
    }

    #[test]
    fn flipped_byte_is_a_checksum_error() {
        let mut bytes = Tally::new(vec![5]).encode_page();
        let last = bytes.len() - 1;
        bytes[last] ^= 2;
        assert!(matches!(
            Tally::decode_page(&bytes),
            Err(Error::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn truncation_never_decodes() {
        let bytes = Tally::new(vec![5, 6]).encode_delta();
        for cut in 0..bytes.len() {
            assert!(Tally::decode_delta(&bytes[..cut]).is_err());
        }
    }

    #[test]
    fn page_and_delta_kinds_are_not_confused() {
        let delta = Tally::new(vec![1]).encode_delta();
        assert!(matches!(
            Tally::decode_page(&delta),
            Err(Error::WrongKind { .. })
        ));
    }

    #[test]
    fn wrapping_and_extension() {
        let mut t = Tally::new(vec![u64::MAX]);
        t.add(&Tally::new(vec![2, 3]));
        assert_eq!(t.slots(), &[1, 3]);
    }
}
