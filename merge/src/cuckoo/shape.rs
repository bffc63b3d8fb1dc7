//! A cuckoo page's geometry: fingerprint width, bucket size, bucket count, and the
//! alternate bucket of a fingerprint.

use super::{MAX_SLOTS, SHAPE_LEN};
use crate::error::{Error, Result};
use crate::header;

/// The geometry of a page: fingerprint width, bucket size and bucket count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Fingerprint width: 8, 12 or 16 bits.
    pub fp_bits: u8,
    /// Fingerprints per bucket.
    pub bucket_size: u8,
    /// Buckets in the page.
    pub buckets: u32,
}

impl Shape {
    /// A checked shape: 8-, 12- or 16-bit fingerprints, buckets of at least one slot, a
    /// power-of-two bucket count, at most [`MAX_SLOTS`] bytes of slots.
    pub fn new(fp_bits: u8, bucket_size: u8, buckets: u32) -> Result<Shape> {
        if !matches!(fp_bits, 8 | 12 | 16) {
            return Err(Error::Invalid("fingerprints are 8, 12 or 16 bits"));
        }
        if bucket_size == 0 {
            return Err(Error::Invalid("a bucket has at least one slot"));
        }
        if !buckets.is_power_of_two() {
            return Err(Error::Invalid("the bucket count is a power of two"));
        }
        let slots = u64::from(buckets) * u64::from(bucket_size);
        let bytes = match fp_bits {
            12 => slots.div_ceil(2) * 3,
            bits => slots * u64::from(bits / 8),
        };
        if bytes > MAX_SLOTS {
            return Err(Error::Invalid("too many slots in a page"));
        }
        Ok(Shape {
            fp_bits,
            bucket_size,
            buckets,
        })
    }

    pub(super) fn slots(&self) -> usize {
        self.buckets as usize * usize::from(self.bucket_size)
    }

    /// Bytes of the slots as stored (12-bit slots in whole 3-byte pairs); at most
    /// [`MAX_SLOTS`], checked by [`Shape::new`].
    pub(super) fn slot_bytes(&self) -> usize {
        match self.fp_bits {
            12 => self.slots().div_ceil(2) * 3,
            bits => self.slots() * usize::from(bits / 8),
        }
    }

    /// The format version of pages and operands of this shape: 2 for 12-bit
    /// fingerprints (packed), 1 for the others.
    pub(super) fn version(&self) -> u8 {
        if self.fp_bits == 12 {
            header::VERSION_2
        } else {
            header::VERSION_1
        }
    }

    /// The other bucket of `fp`'s pair.
    pub fn alt(&self, bucket: u32, fp: u16) -> u32 {
        (bucket ^ u32::from(fp).wrapping_mul(0x5bd1_e995)) & (self.buckets - 1)
    }

    /// The bucket that stands for the pair of `bucket` and its alternate for `fp`: the
    /// smaller of the two.
    pub(super) fn pair_key(&self, bucket: u32, fp: u16) -> u32 {
        bucket.min(self.alt(bucket, fp))
    }

    /// Whether `fp` fits the fingerprint width (and is not the empty marker).
    pub(super) fn holds(&self, fp: u16) -> bool {
        fp != 0 && u32::from(fp) < 1 << self.fp_bits
    }

    pub(super) fn encode_into(&self, out: &mut Vec<u8>) {
        out.push(self.fp_bits);
        out.push(self.bucket_size);
        out.extend_from_slice(&self.buckets.to_le_bytes());
    }

    pub(super) fn decode(payload: &[u8]) -> Result<Shape> {
        match *payload {
            [fp_bits, bucket_size, a, b, c, d, ..] => {
                Shape::new(fp_bits, bucket_size, u32::from_le_bytes([a, b, c, d]))
            }
            _ => Err(Error::Truncated {
                need: SHAPE_LEN,
                have: payload.len(),
            }),
        }
    }
}
