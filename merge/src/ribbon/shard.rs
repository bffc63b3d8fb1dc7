//! A solved shard: the page a build stores, and the lookup over it.

use super::{mask, probe, MAX_RESULT_BITS, WIDTH};
use crate::bytes::{le_u32, u64s};
use crate::error::{Error, Result};
use crate::header::{self, Kind};
use crate::MAX_PAGE_BYTES;

const FIXED_LEN: usize = 16;

/// A solved shard (see the module docs for the layout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    r: u8,
    seed: u32,
    slots: u32,
    items: u32,
    /// `slots / 64` blocks of `r` words.
    words: Vec<u64>,
}

impl Shard {
    pub(crate) fn from_parts(r: u8, seed: u32, slots: u64, items: usize, words: Vec<u64>) -> Shard {
        Shard {
            r,
            seed,
            slots: u32::try_from(slots).unwrap_or(u32::MAX),
            items: u32::try_from(items).unwrap_or(u32::MAX),
            words,
        }
    }

    /// Result bits per slot.
    pub fn result_bits(&self) -> u8 {
        self.r
    }

    /// The seed the shard solved with.
    pub fn seed(&self) -> u32 {
        self.seed
    }

    /// Slots (a multiple of 64).
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// Items the shard was built from.
    pub fn items(&self) -> u32 {
        self.items
    }

    /// Bytes of solution (what a lookup's page holds besides its 28 bytes of header).
    pub fn solution_bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// Whether the item hashed to `h` may be in the shard: its window's result equals
    /// its fingerprint. True for every item built into it; true for an absent one with
    /// probability `2^-r`. Stops at the first result bit that differs.
    pub fn contains(&self, h: u64) -> bool {
        let fp_mask = mask(self.r);
        let p = probe(h, self.seed, u64::from(self.slots), fp_mask);
        let columns = usize::from(self.r);
        let block = (p.start / WIDTH) as usize;
        let offset = (p.start % WIDTH) as u32;
        let here = self.words.get(block * columns..(block + 1) * columns);
        let next = self.words.get((block + 1) * columns..(block + 2) * columns);
        let Some(here) = here else {
            return false;
        };
        for (b, word) in here.iter().enumerate() {
            let mut window = word >> offset;
            if offset > 0 {
                let Some(high) = next.and_then(|n| n.get(b)) else {
                    return false;
                };
                window |= high << (WIDTH as u32 - offset);
            }
            let bit = (window & p.coeff).count_ones() & 1;
            if bit != (p.fp >> b) & 1 {
                return false;
            }
        }
        true
    }

    /// Encodes the page.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = header::begin(Kind::RibbonPage, FIXED_LEN + self.words.len() * 8);
        out.push(self.r);
        out.extend_from_slice(&[0; 3]);
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.slots.to_le_bytes());
        out.extend_from_slice(&self.items.to_le_bytes());
        for word in &self.words {
            out.extend_from_slice(&word.to_le_bytes());
        }
        header::finish(out)
    }

    /// Decodes a stored page, checking its shape.
    pub fn decode(bytes: &[u8]) -> Result<Shard> {
        let framed = header::decode_as(bytes, Kind::RibbonPage)?;
        let p = framed.payload;
        let fixed = p.get(..FIXED_LEN).ok_or(Error::Truncated {
            need: FIXED_LEN,
            have: p.len(),
        })?;
        let r = fixed.first().copied().unwrap_or(0);
        if !(1..=MAX_RESULT_BITS).contains(&r) {
            return Err(Error::Invalid("ribbon result bits out of range"));
        }
        if fixed.get(1..4) != Some(&[0, 0, 0][..]) {
            return Err(Error::Invalid("ribbon page reserved bytes are set"));
        }
        let seed = le_u32(fixed, 4)?;
        let slots = le_u32(fixed, 8)?;
        let items = le_u32(fixed, 12)?;
        if slots == 0 || u64::from(slots) % WIDTH != 0 || slots as usize > MAX_PAGE_BYTES * 8 {
            return Err(Error::Invalid("ribbon slots out of range"));
        }
        let words = (slots as usize / WIDTH as usize) * usize::from(r);
        // A page holds at most a page's bytes: 2^23 slots of 32 result bits would be a
        // 32 MiB solution (a build's shards are some 8 192 items, well under).
        if words.saturating_mul(8) > MAX_PAGE_BYTES {
            return Err(Error::Invalid("ribbon solution larger than a page"));
        }
        let body = p.get(FIXED_LEN..).unwrap_or_default();
        if body.len() != words * 8 {
            return Err(Error::Invalid("ribbon solution of the wrong size"));
        }
        Ok(Shard {
            r,
            seed,
            slots,
            items,
            words: u64s(body).collect(),
        })
    }
}
