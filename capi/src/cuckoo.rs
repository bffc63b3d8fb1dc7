//! Cuckoo filters: RedisBloom's sizing of a chain, an item's hash, fingerprint, page
//! and bucket, the insert and delete operands (kick-outs happen inside the merge), and
//! the count of a fingerprint in a page.
//!
//! A host keeps the chain's state (sub-filters, items per sub-filter) itself:
//! rocksketch's `CF.ADD` inserts into the newest sub-filter, growing the chain when it
//! holds `target` items; `CF.DEL` deletes from the newest sub-filter whose page holds
//! the fingerprint; `CF.COUNT` sums over all sub-filters.

use crate::rks_status::*;
use crate::{check, fill_buf, guard, out, page_error, rks_buf, rks_status, slice};
use rocksketch_merge::cuckoo::{FpOp, FpOps, FpPage, Shape};
use rocksketch_merge::layout::cuckoo::{
    hash, CuckooChain, CuckooSub, MAX_CAPACITY, MAX_EXPANSION, MAX_FILTERS,
};
use rocksketch_merge::MAX_PAGE_BYTES;

/// What shapes a chain's sub-filters (what `CF.RESERVE` decided).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rks_cuckoo_chain {
    /// Buckets of the first sub-filter (a power of two).
    pub buckets: u32,
    /// Buckets per page (a power of two).
    pub page_buckets: u32,
    /// Growth factor of each next sub-filter (a power of two); 0 never grows.
    pub expansion: u16,
    /// Fingerprints per bucket.
    pub bucket_size: u8,
    /// 8 (RedisBloom's), 12 or 16.
    pub fp_bits: u8,
}

/// One sub-filter: `pages` pages of `page_buckets` buckets; the chain grows once it
/// holds `target` items.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rks_cuckoo_sub {
    /// Buckets in this sub-filter.
    pub buckets: u64,
    /// Items it takes before the chain grows.
    pub target: u64,
    /// Buckets per page.
    pub page_buckets: u32,
    /// Pages it is split into.
    pub pages: u32,
    /// Fingerprints per bucket.
    pub bucket_size: u8,
    /// Fingerprint width in bits.
    pub fp_bits: u8,
}

/// What an operand does to a fingerprint.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum rks_fp_op_kind {
    /// Insert the fingerprint (kicking others out if its buckets are full).
    RKS_FP_INSERT = 1,
    /// Delete one copy of the fingerprint.
    RKS_FP_DELETE = 2,
}

/// One insert or delete of fingerprint `fp` at `bucket` of a page.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rks_fp_op {
    /// The bucket within the page.
    pub bucket: u32,
    /// The fingerprint (nonzero, at most `fp_bits` wide).
    pub fp: u16,
    /// An `rks_fp_op_kind`.
    pub kind: u8,
}

impl rks_cuckoo_chain {
    fn chain(self) -> CuckooChain {
        CuckooChain {
            buckets: self.buckets,
            bucket_size: self.bucket_size,
            fp_bits: self.fp_bits,
            expansion: self.expansion,
            page_buckets: self.page_buckets,
        }
    }
}

impl rks_cuckoo_sub {
    fn checked(self) -> Result<CuckooSub, rks_status> {
        let shape = Shape::new(self.fp_bits, self.bucket_size, self.page_buckets)
            .map_err(|_| RKS_INVALID_ARGUMENT)?;
        let ok = self.buckets.is_power_of_two()
            && u64::from(self.page_buckets) <= self.buckets
            && u64::from(self.pages) * u64::from(self.page_buckets) == self.buckets;
        check(ok, RKS_INVALID_ARGUMENT)?;
        Ok(CuckooSub {
            buckets: self.buckets,
            page_buckets: self.page_buckets,
            pages: self.pages,
            target: self.target,
            shape,
        })
    }
}

/// The chain `CF.RESERVE capacity [BUCKETSIZE b] [EXPANSION e]` makes with `fp_bits`-bit
/// fingerprints in a store whose pages are `page_bytes` long. Checks what RedisBloom
/// checks: bucket size at least 1, expansion at most 32768, capacity in
/// [2 × bucket size, 2^30]; and fingerprints of 8, 12 or 16 bits.
///
/// # Safety
/// `chain` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_cuckoo_chain_make(
    capacity: u64,
    bucket_size: u8,
    expansion: u32,
    fp_bits: u8,
    page_bytes: u32,
    chain: *mut rks_cuckoo_chain,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let chain = unsafe { out(chain)? };
        let ok = bucket_size > 0
            && expansion <= MAX_EXPANSION
            && matches!(fp_bits, 8 | 12 | 16)
            && (2 * u64::from(bucket_size)..=MAX_CAPACITY).contains(&capacity)
            && (4..=MAX_PAGE_BYTES as u32).contains(&page_bytes);
        check(ok, RKS_INVALID_ARGUMENT)?;
        let made = CuckooChain::sized(capacity, bucket_size, expansion, fp_bits, page_bytes);
        *chain = rks_cuckoo_chain {
            buckets: made.buckets,
            page_buckets: made.page_buckets,
            expansion: made.expansion,
            bucket_size: made.bucket_size,
            fp_bits: made.fp_bits,
        };
        Ok(())
    })
}

/// The shape of sub-filter `index` (below 32; 0 for a chain that never grows).
///
/// # Safety
/// `sub` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_cuckoo_sub_make(
    chain: rks_cuckoo_chain,
    index: u32,
    sub: *mut rks_cuckoo_sub,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let sub = unsafe { out(sub)? };
        let reach = if chain.expansion == 0 { 1 } else { MAX_FILTERS };
        check(index < reach, RKS_INVALID_ARGUMENT)?;
        let made = chain.chain().sub(index).map_err(|_| RKS_INVALID_ARGUMENT)?;
        *sub = rks_cuckoo_sub {
            buckets: made.buckets,
            target: made.target,
            page_buckets: made.page_buckets,
            pages: made.pages,
            bucket_size: made.shape.bucket_size,
            fp_bits: made.shape.fp_bits,
        };
        Ok(())
    })
}

/// Where `item` falls in a sub-filter: its page, its first bucket in the page, and its
/// fingerprint (never 0).
///
/// # Safety
/// `item` addresses `item_len` bytes; `page`, `bucket` and `fp` are writable.
#[no_mangle]
pub unsafe extern "C" fn rks_cuckoo_locate(
    sub: rks_cuckoo_sub,
    item: *const u8,
    item_len: usize,
    page: *mut u32,
    bucket: *mut u32,
    fp: *mut u16,
) -> rks_status {
    guard(|| {
        let sub = sub.checked()?;
        // SAFETY: the caller's contract.
        let (item, page, bucket, fp) =
            unsafe { (slice(item, item_len)?, out(page)?, out(bucket)?, out(fp)?) };
        let (h, fingerprint) = hash(item, sub.shape.fp_bits);
        (*page, *bucket) = sub.locate(h);
        *fp = fingerprint;
        Ok(())
    })
}

/// Builds one operand for a page of the sub-filter: the inserts and deletes in `ops`,
/// applied in order by the merge (a delete of a fingerprint the page lacks does nothing).
///
/// # Safety
/// `ops` holds `n` items; `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_fp_ops(
    sub: rks_cuckoo_sub,
    ops: *const rks_fp_op,
    n: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        let sub = sub.checked()?;
        // SAFETY: the caller's contract.
        let (ops, buf) = unsafe { (slice(ops, n)?, out(buf)?) };
        let ops = ops
            .iter()
            .map(|op| match op.kind {
                1 => Ok(FpOp::Insert {
                    bucket: op.bucket,
                    fp: op.fp,
                }),
                2 => Ok(FpOp::Delete {
                    bucket: op.bucket,
                    fp: op.fp,
                }),
                _ => Err(RKS_INVALID_ARGUMENT),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let ops = FpOps::new(sub.shape, ops).map_err(|_| RKS_INVALID_ARGUMENT)?;
        fill_buf(buf, ops.encode());
        Ok(())
    })
}

/// Copies of fingerprint `fp` in its pair of buckets (`bucket` and its alternate) and
/// the page's stash, in a page of the sub-filter (0 for a page never written):
/// `CF.COUNT` in one sub-filter; `CF.EXISTS` is a count above 0.
///
/// # Safety
/// `page` addresses `len` bytes; `count` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_fp_count(
    sub: rks_cuckoo_sub,
    page: *const u8,
    len: usize,
    bucket: u32,
    fp: u16,
    count: *mut u32,
) -> rks_status {
    guard(|| {
        let sub = sub.checked()?;
        // SAFETY: the caller's contract.
        let (page, count) = unsafe { (slice(page, len)?, out(count)?) };
        check(bucket < sub.page_buckets && fp != 0, RKS_INVALID_ARGUMENT)?;
        *count = match page.is_empty() {
            true => 0,
            false => {
                let page = FpPage::decode(page).map_err(page_error)?;
                check(page.shape() == sub.shape, RKS_CORRUPT)?;
                page.count(bucket, fp)
            }
        };
        Ok(())
    })
}
