//! Operands of the structures whose pages take staged writes: Top-K increments,
//! t-digest values and Ribbon hashes. A host merges them into one page per structure
//! (Top-K, t-digest) or per staging shard of its choosing (Ribbon); the merge operator
//! does the rest. Readers for these pages are not in the C ABI yet (see the README).

use crate::rks_status::*;
use crate::{check, fill_buf, guard, out, page_error, rks_buf, rks_status, slice};
use rocksketch_merge::ribbon::{item_hash, StageOps, StagePage};
use rocksketch_merge::tdigest::ops::DigestOps;
use rocksketch_merge::tdigest::MAX_COMPRESSION;
use rocksketch_merge::topk;

/// Builds a Top-K operand: item `i` (`items[i]`, `item_lens[i]` bytes) counted
/// `increments[i]` times (at most 100000, RedisBloom's bound), in order.
///
/// # Safety
/// `items`, `item_lens` and `increments` hold `n` items each, every item its length of
/// bytes; `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_topk_ops(
    items: *const *const u8,
    item_lens: *const usize,
    increments: *const u32,
    n: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (ptrs, lens, increments, buf) = unsafe {
            (
                slice(items, n)?,
                slice(item_lens, n)?,
                slice(increments, n)?,
                out(buf)?,
            )
        };
        let items = ptrs
            .iter()
            .zip(lens)
            // SAFETY: each item addresses its length of bytes (the caller's contract).
            .map(|(p, len)| unsafe { slice(*p, *len) })
            .collect::<Result<Vec<_>, _>>()?;
        let encoded = topk::ops::encode(items.into_iter().zip(increments.iter().copied()))
            .ok_or(RKS_INVALID_ARGUMENT)?;
        fill_buf(buf, encoded);
        Ok(())
    })
}

/// Builds an empty Top-K page keeping `k` items over `width x depth` counters decaying
/// at `decay`, checked as `TOPK.RESERVE` checks them (`k` 1 to 1000, `decay` in
/// (0, 1], the page within its size limit). A host puts it where the Top-K's page lives
/// when it creates the structure: Top-K operands ([`rks_topk_ops`]) apply only to a
/// page, since an operand does not say the structure's shape (one merged where no page
/// is stays unapplied, and is counted by `rks_skipped_operands`).
///
/// # Safety
/// `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_topk_page_new(
    k: u32,
    width: u32,
    depth: u32,
    decay: f64,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let buf = unsafe { out(buf)? };
        check(decay > 0.0 && decay <= 1.0, RKS_INVALID_ARGUMENT)?;
        let shape = topk::Shape::new(k, width, depth, decay).ok_or(RKS_INVALID_ARGUMENT)?;
        fill_buf(buf, topk::TopKPage::new(shape).encode());
        Ok(())
    })
}

/// Builds a t-digest operand adding `values` to a digest of `compression`, checked as
/// `TDIGEST.CREATE` and `TDIGEST.ADD` check them: `compression` 1 to 10 000, every value
/// finite (a NaN or an infinity is refused, never left for the merge to drop).
///
/// # Safety
/// `values` holds `n` items; `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_digest_values(
    compression: u32,
    values: *const f64,
    n: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (values, buf) = unsafe { (slice(values, n)?, out(buf)?) };
        let ok = (1..=MAX_COMPRESSION).contains(&compression)
            && n <= u32::MAX as usize
            && values.iter().all(|v| v.is_finite());
        check(ok, RKS_INVALID_ARGUMENT)?;
        fill_buf(buf, DigestOps::new(compression).values(values).encode());
        Ok(())
    })
}

/// The 64-bit hash that stands for an item in a Ribbon filter.
///
/// # Safety
/// `item` addresses `item_len` bytes; `hash` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_ribbon_hash(
    item: *const u8,
    item_len: usize,
    hash: *mut u64,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (item, hash) = unsafe { (slice(item, item_len)?, out(hash)?) };
        *hash = item_hash(item);
        Ok(())
    })
}

/// Builds a Ribbon staging operand holding `hashes` (from [`rks_ribbon_hash`]).
///
/// # Safety
/// `hashes` holds `n` items; `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_stage_ops(
    hashes: *const u64,
    n: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (hashes, buf) = unsafe { (slice(hashes, n)?, out(buf)?) };
        let ops = StageOps::new(hashes.to_vec()).ok_or(RKS_INVALID_ARGUMENT)?;
        fill_buf(buf, ops.encode());
        Ok(())
    })
}

/// Whether a staging page holds `hash` (false for a page never written).
///
/// # Safety
/// `page` addresses `len` bytes; `staged` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_stage_contains(
    page: *const u8,
    len: usize,
    hash: u64,
    staged: *mut bool,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (page, staged) = unsafe { (slice(page, len)?, out(staged)?) };
        *staged = match page.is_empty() {
            true => false,
            false => StagePage::decode(page).map_err(page_error)?.contains(hash),
        };
        Ok(())
    })
}
