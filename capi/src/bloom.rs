//! Bloom filters: RedisBloom's sizing of each sub-filter of a chain, the page and bits
//! an item sets, the operand that sets them, and the membership test of a page.
//!
//! A host keeps the chain's state (how many sub-filters, items per sub-filter) itself:
//! rocksketch's `BF.ADD` tests every sub-filter, and adds to the newest, growing the
//! chain when the newest holds its capacity.

use crate::rks_status::*;
use crate::{check, fill_buf, guard, out, page_error, rks_buf, rks_status, slice, slice_mut};
use rocksketch_merge::bits::{BitDelta, BitPage};
use rocksketch_merge::layout::bloom::{
    hashes, BloomChain, BloomSub, MAX_CAPACITY, MAX_ERROR, MAX_EXPANSION, MAX_FILTERS,
};
use rocksketch_merge::MAX_PAGE_BYTES;

/// One sub-filter: `pages` pages of `page_bits` bits, `hashes` bits per item, full at
/// `capacity` items.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rks_bloom_sub {
    /// Items it holds before the chain grows.
    pub capacity: u64,
    /// Bits set per item.
    pub hashes: u32,
    /// Pages it is split into.
    pub pages: u32,
    /// Bits per page.
    pub page_bits: u32,
}

impl rks_bloom_sub {
    fn checked(self) -> Result<BloomSub, rks_status> {
        let ok = self.pages > 0
            && (1..=4096).contains(&self.hashes)
            && self.page_bits.is_multiple_of(8)
            && (8..=(MAX_PAGE_BYTES * 8) as u32).contains(&self.page_bits);
        check(ok, RKS_INVALID_ARGUMENT)?;
        Ok(BloomSub {
            capacity: self.capacity,
            hashes: self.hashes,
            pages: self.pages,
            page_bits: self.page_bits,
        })
    }
}

/// The shape of sub-filter `index` of the chain `BF.RESERVE error capacity [EXPANSION
/// expansion]` makes (expansion 0: non-scaling) in a store whose pages are `page_bytes`
/// long. Checks what RedisBloom checks (error in (0, 1), lowered to 0.25 above it;
/// capacity in [1, 2^30]; expansion at most 32768; an error rate that can be sized),
/// and `index` below 32 (0 for a non-scaling filter).
///
/// # Safety
/// `sub` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_bloom_sub_make(
    error: f64,
    capacity: u64,
    expansion: u32,
    page_bytes: u32,
    index: u32,
    sub: *mut rks_bloom_sub,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let sub = unsafe { out(sub)? };
        let chain = BloomChain {
            error: error.min(MAX_ERROR),
            capacity,
            expansion,
            page_bits: page_bytes.saturating_mul(8),
        };
        let ok = error > 0.0
            && error < 1.0
            && (1..=MAX_CAPACITY).contains(&capacity)
            && expansion <= MAX_EXPANSION
            && (4..=MAX_PAGE_BYTES as u32).contains(&page_bytes)
            && index < if expansion == 0 { 1 } else { MAX_FILTERS }
            && chain.sizable();
        check(ok, RKS_INVALID_ARGUMENT)?;
        let made = chain.sub(index);
        *sub = rks_bloom_sub {
            capacity: made.capacity,
            hashes: made.hashes,
            pages: made.pages,
            page_bits: made.page_bits,
        };
        Ok(())
    })
}

/// Where `item` falls in a sub-filter: its page, and its `sub.hashes` bit positions in
/// `bits` (of `cap` items; `RKS_BUFFER_TOO_SMALL` below `sub.hashes`).
///
/// # Safety
/// `item` addresses `item_len` bytes; `page` is writable; `bits` holds `cap` writable
/// items.
#[no_mangle]
pub unsafe extern "C" fn rks_bloom_locate(
    sub: rks_bloom_sub,
    item: *const u8,
    item_len: usize,
    page: *mut u32,
    bits: *mut u32,
    cap: usize,
) -> rks_status {
    guard(|| {
        let sub = sub.checked()?;
        check(cap >= sub.hashes as usize, RKS_BUFFER_TOO_SMALL)?;
        // SAFETY: the caller's contract.
        let (item, page, bits) =
            unsafe { (slice(item, item_len)?, out(page)?, slice_mut(bits, cap)?) };
        let (located, positions) = sub.locate(hashes(item));
        *page = located;
        for (slot, bit) in bits.iter_mut().zip(positions) {
            *slot = bit;
        }
        Ok(())
    })
}

/// Builds the operand that sets `bits` (each below `page_bits`) in a bit page.
///
/// # Safety
/// `bits` holds `n` items; `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_bit_delta(
    page_bits: u32,
    bits: *const u32,
    n: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (bits, buf) = unsafe { (slice(bits, n)?, out(buf)?) };
        check(
            page_bits as usize <= MAX_PAGE_BYTES * 8,
            RKS_INVALID_ARGUMENT,
        )?;
        let delta = BitDelta::sparse(page_bits, bits.to_vec()).map_err(|_| RKS_INVALID_ARGUMENT)?;
        fill_buf(buf, delta.encode());
        Ok(())
    })
}

/// Whether every one of `bits` is set in a bit page of `page_bits` bits (false for a
/// page never written, passed as `(NULL, 0)`): `BF.EXISTS` in one sub-filter.
///
/// # Safety
/// `page` addresses `len` bytes; `bits` holds `n` items; `all_set` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_bits_test(
    page: *const u8,
    len: usize,
    page_bits: u32,
    bits: *const u32,
    n: usize,
    all_set: *mut bool,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (page, bits, all_set) = unsafe { (slice(page, len)?, slice(bits, n)?, out(all_set)?) };
        check(bits.iter().all(|b| *b < page_bits), RKS_INVALID_ARGUMENT)?;
        *all_set = match page.is_empty() {
            true => false,
            false => {
                let page = BitPage::decode(page).map_err(page_error)?;
                check(page.page_bits() == page_bits, RKS_CORRUPT)?;
                bits.iter().all(|b| page.get(*b))
            }
        };
        Ok(())
    })
}
