//! HyperLogLogs: the operand a blind add writes, and the reads of a page (`PFCOUNT`,
//! the registers, Redis's `HYLL` string). A host keeps one page per HyperLogLog under a
//! key of its choosing and merges operands into it; a page never written reads empty.

use crate::rks_status::*;
use crate::{check, fill_buf, guard, out, page_error, rks_buf, rks_status, slice, slice_mut};
use rocksketch_merge::hll::{redis, HllOps, Registers, REGISTERS};

/// Registers in a HyperLogLog (`RKS_HLL_REGISTERS` bytes for [`rks_hll_registers`]).
pub const RKS_HLL_REGISTERS: usize = REGISTERS;

/// Builds the operand that adds items to a HyperLogLog page (`PFADD` without its
/// answer): item `i` is `items[i]`, `item_lens[i]` bytes.
///
/// # Safety
/// `items` and `item_lens` hold `n` items each, every item its length of bytes; `buf`
/// is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_hll_add_operand(
    items: *const *const u8,
    item_lens: *const usize,
    n: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (ptrs, lens, buf) = unsafe { (slice(items, n)?, slice(item_lens, n)?, out(buf)?) };
        let items = ptrs
            .iter()
            .zip(lens)
            // SAFETY: each item addresses its length of bytes (the caller's contract).
            .map(|(p, len)| unsafe { slice(*p, *len) })
            .collect::<Result<Vec<_>, _>>()?;
        fill_buf(buf, HllOps::add(&items).encode());
        Ok(())
    })
}

/// The registers of a stored page (`len` 0: a page never written, all zero).
fn registers(page: &[u8]) -> Result<Registers, rks_status> {
    match page.is_empty() {
        true => Ok(Registers::new()),
        false => Registers::decode(page).map_err(page_error),
    }
}

/// `PFCOUNT` of a stored page: Redis's estimate of the distinct items added.
///
/// # Safety
/// `page` addresses `len` bytes; `count` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_hll_count(page: *const u8, len: usize, count: *mut u64) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (page, count) = unsafe { (slice(page, len)?, out(count)?) };
        *count = registers(page)?.count();
        Ok(())
    })
}

/// Copies a stored page's registers, one byte each, into `regs` (`cap` at least
/// `RKS_HLL_REGISTERS`, else `RKS_BUFFER_TOO_SMALL`).
///
/// # Safety
/// `page` addresses `len` bytes; `regs` addresses `cap` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn rks_hll_registers(
    page: *const u8,
    len: usize,
    regs: *mut u8,
    cap: usize,
) -> rks_status {
    guard(|| {
        check(cap >= REGISTERS, RKS_BUFFER_TOO_SMALL)?;
        // SAFETY: the caller's contract.
        let (page, regs) = unsafe { (slice(page, len)?, slice_mut(regs, REGISTERS)?) };
        regs.copy_from_slice(registers(page)?.as_bytes());
        Ok(())
    })
}

/// The string Redis's `GET` gives for a stored page's registers (`HYLL` header, sparse
/// or dense as Redis keeps them), to hand a HyperLogLog to Redis.
///
/// # Safety
/// `page` addresses `len` bytes; `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_hll_export(
    page: *const u8,
    len: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (page, buf) = unsafe { (slice(page, len)?, out(buf)?) };
        fill_buf(buf, redis::export(&registers(page)?));
        Ok(())
    })
}

/// The page holding the registers of a Redis HyperLogLog string (what `SET` of it
/// stores), checked: `RKS_INVALID_ARGUMENT` for a string that is not a valid one.
///
/// # Safety
/// `string` addresses `len` bytes; `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_hll_import(
    string: *const u8,
    len: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (string, buf) = unsafe { (slice(string, len)?, out(buf)?) };
        let regs = redis::import(string).map_err(|_| RKS_INVALID_ARGUMENT)?;
        fill_buf(buf, regs.encode());
        Ok(())
    })
}
