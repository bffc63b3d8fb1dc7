//! Bloom filter bit pages and their bit-position operands.
//!
//! ```text
//! BitPage  (kind 0x05, v1) payload: bitmap, page_bits / 8 bytes (bit i: byte i/8, mask 1 << i%8)
//! BitDelta (kind 0x06, v1) payload: page_bits u32 LE | form u8 | body
//!   form 0, sparse: bit u32 LE × k
//!   form 1, dense:  bitmap, page_bits / 8 bytes
//! ```
//!
//! A full merge is an OR and a partial merge a union, so every grouping of operands
//! gives the same page. `page_bits` is a positive multiple of 8; a delta for a page of
//! another size, or naming a bit outside the page, is skipped by the full merge.

use crate::bytes::{le_u32, u32s};
use crate::error::{Error, Result};
use crate::header::{self, Kind};

const PAGE_BITS_OFFSET: usize = 0;
const FORM_OFFSET: usize = PAGE_BITS_OFFSET + 4;
const BODY_OFFSET: usize = FORM_OFFSET + 1;
const FORM_SPARSE: u8 = 0;
const FORM_DENSE: u8 = 1;

/// A materialized page of bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BitPage {
    bytes: Vec<u8>,
}

impl BitPage {
    /// An empty page of `page_bits` bits (a multiple of 8): what a missing page reads as.
    pub fn zeroed(page_bits: u32) -> BitPage {
        BitPage {
            bytes: vec![0; (page_bits / 8) as usize],
        }
    }

    /// The number of bits.
    pub fn page_bits(&self) -> u32 {
        u32::try_from(self.bytes.len() * 8).unwrap_or(u32::MAX)
    }

    /// Whether bit `bit` is set (false outside the page).
    pub fn get(&self, bit: u32) -> bool {
        self.bytes
            .get((bit / 8) as usize)
            .is_some_and(|b| b & (1 << (bit % 8)) != 0)
    }

    /// Sets bit `bit` (ignored outside the page).
    pub fn set(&mut self, bit: u32) {
        if let Some(b) = self.bytes.get_mut((bit / 8) as usize) {
            *b |= 1 << (bit % 8);
        }
    }

    /// The bitmap bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.bytes.iter().map(|b| u64::from(b.count_ones())).sum()
    }

    /// The positions of the set bits, ascending, read a 64-bit word at a time.
    pub fn set_bits(&self) -> Vec<u32> {
        let mut bits = Vec::new();
        for (w, chunk) in self.bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            for (dst, src) in word.iter_mut().zip(chunk) {
                *dst = *src;
            }
            let mut word = u64::from_le_bytes(word);
            while word != 0 {
                bits.push(w as u32 * 64 + word.trailing_zeros());
                word &= word - 1;
            }
        }
        bits
    }

    /// Decodes a stored page.
    pub fn decode(bytes: &[u8]) -> Result<BitPage> {
        let framed = header::decode_as(bytes, Kind::BitPage)?;
        if framed.payload.is_empty() {
            return Err(Error::Invalid("empty bit page"));
        }
        Ok(BitPage {
            bytes: framed.payload.to_vec(),
        })
    }

    /// A page from raw bitmap bytes (for restoring a dump).
    pub fn from_bytes(bytes: Vec<u8>) -> BitPage {
        BitPage { bytes }
    }

    /// Encodes the page with its header.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = header::begin(Kind::BitPage, self.bytes.len());
        out.extend_from_slice(&self.bytes);
        header::finish(out)
    }

    /// Applies one operand as [`crate::full_merge`] does; `false` (page unchanged) for
    /// one the full merge would skip: it does not decode, or is for another page size.
    pub(crate) fn apply_operand(&mut self, operand: &[u8]) -> bool {
        match BitView::decode(operand) {
            Ok(view) if view.page_bits == self.page_bits() => {
                self.or_view(&view);
                true
            }
            _ => false,
        }
    }

    fn or_view(&mut self, delta: &BitView<'_>) {
        match delta.form {
            BitForm::Sparse => {
                for bit in u32s(delta.body) {
                    self.set(bit);
                }
            }
            BitForm::Dense => {
                for (b, d) in self.bytes.iter_mut().zip(delta.body) {
                    *b |= d;
                }
            }
        }
    }
}

/// A bit-position operand: bits to set in one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BitDelta {
    /// Bit positions, in the order written.
    Sparse {
        /// Bits in the page.
        page_bits: u32,
        /// Positions to set.
        bits: Vec<u32>,
    },
    /// A bitmap to OR in.
    Dense(BitPage),
}

impl BitDelta {
    /// A sparse delta; `Invalid` if a bit is outside the page or the size is not a
    /// positive multiple of 8.
    pub fn sparse(page_bits: u32, bits: Vec<u32>) -> Result<BitDelta> {
        check_page_bits(page_bits)?;
        if bits.iter().any(|b| *b >= page_bits) {
            return Err(Error::Invalid("bit beyond the page"));
        }
        Ok(BitDelta::Sparse { page_bits, bits })
    }

    /// Decodes an operand.
    pub fn decode(bytes: &[u8]) -> Result<BitDelta> {
        let view = BitView::decode(bytes)?;
        Ok(match view.form {
            BitForm::Sparse => BitDelta::Sparse {
                page_bits: view.page_bits,
                bits: u32s(view.body).collect(),
            },
            BitForm::Dense => BitDelta::Dense(BitPage::from_bytes(view.body.to_vec())),
        })
    }

    /// Encodes the operand.
    pub fn encode(&self) -> Vec<u8> {
        let (page_bits, form, body_len) = match self {
            BitDelta::Sparse { page_bits, bits } => (*page_bits, FORM_SPARSE, bits.len() * 4),
            BitDelta::Dense(page) => (page.page_bits(), FORM_DENSE, page.bytes.len()),
        };
        let mut out = header::begin(Kind::BitDelta, BODY_OFFSET + body_len);
        out.extend_from_slice(&page_bits.to_le_bytes());
        out.push(form);
        match self {
            BitDelta::Sparse { bits, .. } => {
                for bit in bits {
                    out.extend_from_slice(&bit.to_le_bytes());
                }
            }
            BitDelta::Dense(page) => out.extend_from_slice(&page.bytes),
        }
        header::finish(out)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BitForm {
    Sparse,
    Dense,
}

/// A checked view of an encoded bit delta.
#[derive(Debug, Clone, Copy)]
struct BitView<'a> {
    page_bits: u32,
    form: BitForm,
    body: &'a [u8],
}

impl<'a> BitView<'a> {
    /// Positions in a sparse delta (0 for a dense one).
    fn sparse_len(&self) -> usize {
        match self.form {
            BitForm::Sparse => self.body.len() / 4,
            BitForm::Dense => 0,
        }
    }

    fn decode(bytes: &'a [u8]) -> Result<BitView<'a>> {
        let framed = header::decode_as(bytes, Kind::BitDelta)?;
        let payload = framed.payload;
        let fixed = payload.get(..BODY_OFFSET).ok_or(Error::Truncated {
            need: header::HEADER_LEN + BODY_OFFSET,
            have: bytes.len(),
        })?;
        let page_bits = le_u32(fixed, PAGE_BITS_OFFSET)?;
        check_page_bits(page_bits)?;
        let body = payload.get(BODY_OFFSET..).unwrap_or_default();
        let form = match fixed.get(FORM_OFFSET) {
            Some(&FORM_SPARSE) => BitForm::Sparse,
            Some(&FORM_DENSE) => BitForm::Dense,
            _ => return Err(Error::Invalid("unknown bit delta form")),
        };
        match form {
            BitForm::Sparse => {
                if !body.len().is_multiple_of(4) {
                    return Err(Error::Invalid("sparse bit delta is not whole positions"));
                }
                if u32s(body).any(|bit| bit >= page_bits) {
                    return Err(Error::Invalid("bit beyond the page"));
                }
            }
            BitForm::Dense => {
                if body.len() != (page_bits / 8) as usize {
                    return Err(Error::Invalid(
                        "dense bit delta length differs from its page",
                    ));
                }
            }
        }
        Ok(BitView {
            page_bits,
            form,
            body,
        })
    }
}

/// Full merge for bit pages (the union of the bits); see [`crate::full_merge`].
impl crate::fold::PageKind for BitPage {
    type Page = BitPage;

    fn decode(bytes: &[u8]) -> Result<BitPage> {
        BitPage::decode(bytes)
    }

    fn start(operands: &[&[u8]]) -> Option<BitPage> {
        let first = operands.iter().find_map(|op| BitView::decode(op).ok())?;
        Some(BitPage::zeroed(first.page_bits))
    }

    fn apply(page: &mut BitPage, operand: &[u8]) -> bool {
        match BitView::decode(operand) {
            Ok(view) if view.page_bits == page.page_bits() => {
                page.or_view(&view);
                true
            }
            _ => false,
        }
    }

    fn encode(page: BitPage) -> Vec<u8> {
        page.encode()
    }
}

/// Partial merge for bit deltas: their union, sparse (ascending, once each) while
/// smaller than the bitmap. Sparse operands whose positions together stay under that
/// bound are sorted as positions; otherwise they are ORed into a bitmap whose set bits
/// are read a word at a time. Both give the same bytes; neither walks a page bit by bit.
pub(crate) fn partial_merge(operands: &[&[u8]]) -> Option<Vec<u8>> {
    let views = operands
        .iter()
        .map(|op| BitView::decode(op).ok())
        .collect::<Option<Vec<_>>>()?;
    let page_bits = views.first()?.page_bits;
    if views.iter().any(|view| view.page_bits != page_bits) {
        return None;
    }
    let page_bytes = (page_bits / 8) as usize;
    let sparse_bound = page_bytes.div_ceil(4);
    let positions: usize = views.iter().map(|view| view.sparse_len()).sum();
    let bits = if views.iter().all(|view| view.form == BitForm::Sparse) && positions < sparse_bound
    {
        let mut bits = Vec::with_capacity(positions);
        for view in &views {
            bits.extend(u32s(view.body));
        }
        bits.sort_unstable();
        bits.dedup();
        bits
    } else {
        let mut union = BitPage::zeroed(page_bits);
        for view in &views {
            union.or_view(view);
        }
        if union.count_ones() as usize >= sparse_bound {
            return Some(BitDelta::Dense(union).encode());
        }
        union.set_bits()
    };
    Some(BitDelta::Sparse { page_bits, bits }.encode())
}

/// A page size read from bytes: a positive multiple of 8, at most the largest page.
fn check_page_bits(page_bits: u32) -> Result<()> {
    if page_bits == 0 || !page_bits.is_multiple_of(8) {
        return Err(Error::Invalid("page bits must be a positive multiple of 8"));
    }
    if page_bits as usize / 8 > crate::MAX_PAGE_BYTES {
        return Err(Error::Invalid("page bits beyond the largest page"));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
