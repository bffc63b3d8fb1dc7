//! HyperLogLogs through the C boundary as a host uses them: operands built by
//! `rks_hll_add_operand` merged by the engine's full merge give the engine's registers
//! and Redis's counts; a page reads back its count, registers and Redis string, and a
//! Redis string imports to a page; bad pages and strings are refused, never trusted.

use rocksketch_capi::rks_status::*;
use rocksketch_capi::*;

mod common;
use common::{buf, take};
use rocksketch_merge::full_merge;
use rocksketch_merge::hll::{position, redis, Registers};

fn add_operand(items: &[Vec<u8>]) -> Vec<u8> {
    let ptrs: Vec<*const u8> = items.iter().map(|i| i.as_ptr()).collect();
    let lens: Vec<usize> = items.iter().map(Vec::len).collect();
    let mut b = buf();
    // SAFETY: `items.len()` items, each its length of bytes.
    let status = unsafe { rks_hll_add_operand(ptrs.as_ptr(), lens.as_ptr(), items.len(), &mut b) };
    assert_eq!(status, RKS_OK);
    take(b)
}

fn count(page: &[u8]) -> Result<u64, rks_status> {
    let mut count = 0;
    // SAFETY: `page` addresses its length.
    match unsafe { rks_hll_count(page.as_ptr(), page.len(), &mut count) } {
        RKS_OK => Ok(count),
        status => Err(status),
    }
}

#[test]
fn operands_merged_by_a_host_count_as_redis() {
    let items = |range: std::ops::Range<u32>| -> Vec<Vec<u8>> {
        range.map(|i| format!("e{i}").into_bytes()).collect()
    };
    let ops = [add_operand(&items(1..400)), add_operand(&items(400..1001))];
    let merged = full_merge(None, ops.iter().map(Vec::as_slice));
    assert_eq!(merged.skipped, 0);
    // Redis 7.0.15: PFADD x e1 .. e1000, PFCOUNT x -> 1008.
    assert_eq!(count(&merged.value), Ok(1008));
    assert_eq!(count(&[]), Ok(0), "a page never written");
    let mut regs = vec![0u8; RKS_HLL_REGISTERS];
    // SAFETY: `regs` holds RKS_HLL_REGISTERS bytes.
    let status = unsafe {
        rks_hll_registers(
            merged.value.as_ptr(),
            merged.value.len(),
            regs.as_mut_ptr(),
            regs.len(),
        )
    };
    assert_eq!(status, RKS_OK);
    let mut want = Registers::new();
    for item in items(1..1001) {
        let (index, rank) = position(&item);
        want.raise(index, rank);
    }
    assert_eq!(regs, want.as_bytes());
    // SAFETY: too small a buffer is refused before anything is written.
    let status = unsafe {
        rks_hll_registers(
            merged.value.as_ptr(),
            merged.value.len(),
            regs.as_mut_ptr(),
            100,
        )
    };
    assert_eq!(status, RKS_BUFFER_TOO_SMALL);

    // Redis's string, and back to a page.
    let mut b = buf();
    // SAFETY: a page and a buffer.
    let status = unsafe { rks_hll_export(merged.value.as_ptr(), merged.value.len(), &mut b) };
    assert_eq!(status, RKS_OK);
    let string = take(b);
    assert_eq!(redis::import(&string), Ok(want.clone()));
    let mut b = buf();
    // SAFETY: a string and a buffer.
    let status = unsafe { rks_hll_import(string.as_ptr(), string.len(), &mut b) };
    assert_eq!(status, RKS_OK);
    assert_eq!(Registers::decode(&take(b)), Ok(want));
}

#[test]
fn bad_pages_and_strings_are_refused() {
    let page = full_merge(None, [add_operand(&[b"x".to_vec()]).as_slice()]).value;
    let mut flipped = page.clone();
    *flipped.last_mut().unwrap() ^= 1;
    assert_eq!(count(&flipped), Err(RKS_CORRUPT));
    assert_eq!(count(&add_operand(&[b"x".to_vec()])), Err(RKS_WRONG_KIND));
    let mut b = buf();
    // SAFETY: a string and a buffer.
    let status = unsafe { rks_hll_import(b"HYLL".as_ptr(), 4, &mut b) };
    assert_eq!(status, RKS_INVALID_ARGUMENT);
    let ptrs = [std::ptr::null::<u8>()];
    // SAFETY: a null item pointer with a nonzero length is refused.
    let status = unsafe { rks_hll_add_operand(ptrs.as_ptr(), [3usize].as_ptr(), 1, &mut b) };
    assert_eq!(status, RKS_NULL_ARGUMENT);
}
