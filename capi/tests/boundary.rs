//! The C boundary's contract, called as C would call it: null and out-of-range
//! arguments get a status (never a crash), short output arrays say so, corrupt, foreign
//! and flagged pages are told apart, and the RocksDB callbacks hand back values RocksDB
//! can copy and free whatever the operands hold.

use rocksketch_capi::rks_status::*;
use rocksketch_capi::*;

mod common;
use common::{buf, take};
use std::ptr::{null, null_mut};

/// Full merge through the RocksDB callback: (value, success).
fn rocksdb_full_merge(existing: Option<&[u8]>, operands: &[&[u8]]) -> (Vec<u8>, bool) {
    let ptrs: Vec<*const std::os::raw::c_char> =
        operands.iter().map(|o| o.as_ptr().cast()).collect();
    let lens: Vec<usize> = operands.iter().map(|o| o.len()).collect();
    let (mut success, mut len) = (9u8, 0usize);
    // SAFETY: arguments as RocksDB passes them.
    unsafe {
        let value = rks_rocksdb_full_merge(
            null_mut(),
            null(),
            0,
            existing.map_or(null(), |e| e.as_ptr().cast()),
            existing.map_or(0, <[u8]>::len),
            ptrs.as_ptr(),
            lens.as_ptr(),
            operands.len() as i32,
            &mut success,
            &mut len,
        );
        assert!(!value.is_null());
        let bytes = std::slice::from_raw_parts(value.cast::<u8>(), len).to_vec();
        rks_rocksdb_delete_value(null_mut(), value, len);
        (bytes, success == 1)
    }
}

fn layout() -> rks_cms_layout {
    let mut layout = rks_cms_layout::default();
    // SAFETY: a valid output place.
    let status = unsafe { rks_cms_layout_make(100, 3, 64, &mut layout) };
    assert_eq!(status, RKS_OK);
    layout
}

fn counter_delta(page_len: u32, offset: u32, add: u32) -> Vec<u8> {
    let mut b = buf();
    // SAFETY: one offset and one add, a valid buffer.
    let status = unsafe { rks_counter_delta(page_len, &offset, &add, 1, &mut b) };
    assert_eq!(status, RKS_OK);
    take(b)
}

#[test]
fn null_and_out_of_range_arguments_get_a_status() {
    let mut layout_out = rks_cms_layout::default();
    // SAFETY: every pointer is null or valid; the calls must refuse the nulls.
    unsafe {
        assert_eq!(
            rks_cms_layout_make(100, 3, 64, null_mut()),
            RKS_NULL_ARGUMENT
        );
        assert_eq!(
            rks_cms_layout_make(0, 3, 64, &mut layout_out),
            RKS_INVALID_ARGUMENT
        );
        assert_eq!(
            rks_cms_layout_make(1 << 20, 1 << 10, 64, &mut layout_out),
            RKS_INVALID_ARGUMENT
        );
        assert_eq!(
            rks_cms_layout_make(100, 129, 64, &mut layout_out),
            RKS_INVALID_ARGUMENT
        );
        assert_eq!(
            rks_counter_delta(64, null(), null(), 3, &mut buf()),
            RKS_NULL_ARGUMENT
        );
        assert_eq!(
            rks_counter_delta(64, &64, &1, 1, &mut buf()),
            RKS_INVALID_ARGUMENT
        );
        assert_eq!(
            rks_counter_delta(64, &1, &1, 1, null_mut()),
            RKS_NULL_ARGUMENT
        );
        let mut v = 0u32;
        assert_eq!(rks_counter_get(null(), 5, 64, 0, &mut v), RKS_NULL_ARGUMENT);
        assert_eq!(
            rks_counter_get(null(), 0, 64, 64, &mut v),
            RKS_INVALID_ARGUMENT
        );
        let mut sub = rks_bloom_sub::default();
        assert_eq!(
            rks_bloom_sub_make(0.0, 100, 2, 16384, 0, &mut sub),
            RKS_INVALID_ARGUMENT
        );
        assert_eq!(
            rks_bloom_sub_make(0.01, 100, 0, 16384, 1, &mut sub),
            RKS_INVALID_ARGUMENT
        );
        assert_eq!(
            rks_bloom_sub_make(1e-320, 100, 2, 16384, 0, &mut sub),
            RKS_INVALID_ARGUMENT
        );
        let mut chain = rks_cuckoo_chain::default();
        assert_eq!(
            rks_cuckoo_chain_make(1, 2, 1, 8, 16384, &mut chain),
            RKS_INVALID_ARGUMENT
        );
        assert_eq!(
            rks_cuckoo_chain_make(100, 2, 1, 10, 16384, &mut chain),
            RKS_INVALID_ARGUMENT
        );
        let mut merged = false;
        assert_eq!(
            rks_partial_merge(null(), null(), 0, None, null_mut(), &mut merged),
            RKS_NULL_ARGUMENT
        );
        let unknown = std::ffi::CStr::from_ptr(rks_status_message(-5));
        assert_eq!(unknown.to_str().unwrap(), "unknown status");
    }
}

#[test]
fn short_output_arrays_are_refused() {
    let (mut pages, mut offsets) = ([0u32; 2], [0u32; 2]);
    // SAFETY: arrays of two; the layout has three rows.
    let status = unsafe {
        rks_cms_locate(
            layout(),
            b"x".as_ptr(),
            1,
            pages.as_mut_ptr(),
            offsets.as_mut_ptr(),
            2,
        )
    };
    assert_eq!(status, RKS_BUFFER_TOO_SMALL);
    let mut sub = rks_bloom_sub::default();
    // SAFETY: valid places.
    unsafe {
        assert_eq!(
            rks_bloom_sub_make(0.001, 1000, 2, 16384, 0, &mut sub),
            RKS_OK
        );
        let mut page = 0;
        let mut bits = vec![0u32; sub.hashes as usize - 1];
        let status = rks_bloom_locate(
            sub,
            b"x".as_ptr(),
            1,
            &mut page,
            bits.as_mut_ptr(),
            bits.len(),
        );
        assert_eq!(status, RKS_BUFFER_TOO_SMALL);
    }
}

#[test]
fn pages_are_read_or_refused_by_kind() {
    let layout = layout();
    let page_len = 64;
    let (page, ok) = rocksdb_full_merge(None, &[&counter_delta(page_len, 5, 7)]);
    assert!(ok);
    let mut v = 0u32;
    // SAFETY: valid pages and places.
    unsafe {
        assert_eq!(
            rks_counter_get(page.as_ptr(), page.len(), page_len, 5, &mut v),
            RKS_OK
        );
        assert_eq!(v, 7);
        assert_eq!(
            rks_counter_get(page.as_ptr(), page.len(), 32, 5, &mut v),
            RKS_CORRUPT
        );
        let mut broken = page.clone();
        *broken.last_mut().unwrap() ^= 1;
        assert_eq!(
            rks_counter_get(broken.as_ptr(), broken.len(), page_len, 5, &mut v),
            RKS_CORRUPT
        );
        let mut count = 0u64;
        assert_eq!(
            rks_tally_get(page.as_ptr(), page.len(), 0, &mut count),
            RKS_WRONG_KIND
        );
    }
    // An operand that does not decode: the merge succeeds, skips it, flags the page.
    let before = rks_skipped_operands();
    let (flagged, ok) = rocksdb_full_merge(Some(&page), &[b"garbage"]);
    assert!(ok);
    assert_eq!(rks_skipped_operands(), before + 1);
    // SAFETY: a valid page and place.
    let status = unsafe { rks_counter_get(flagged.as_ptr(), flagged.len(), page_len, 5, &mut v) };
    assert_eq!(status, RKS_LOST_OPERANDS);
    let _ = layout;
}

#[test]
fn partial_merge_combines_or_declines_without_a_null_value() {
    let a = counter_delta(64, 1, 2);
    let b = counter_delta(64, 1, 3);
    for (operands, combines) in [(vec![&a[..], &b[..]], true), (vec![&a[..], b"junk"], false)] {
        let ptrs: Vec<*const std::os::raw::c_char> =
            operands.iter().map(|o| o.as_ptr().cast()).collect();
        let lens: Vec<usize> = operands.iter().map(|o| o.len()).collect();
        let (mut success, mut len) = (9u8, 9usize);
        // SAFETY: arguments as RocksDB passes them; the value is released once.
        unsafe {
            let value = rks_rocksdb_partial_merge(
                null_mut(),
                null(),
                0,
                ptrs.as_ptr(),
                lens.as_ptr(),
                2,
                &mut success,
                &mut len,
            );
            assert!(!value.is_null());
            assert_eq!(success == 1, combines);
            assert_eq!(len > 0, combines);
            let merged = std::slice::from_raw_parts(value.cast::<u8>(), len).to_vec();
            rks_rocksdb_delete_value(null_mut(), value, len);
            if combines {
                let (page, _) = rocksdb_full_merge(None, &[&merged]);
                let mut v = 0;
                assert_eq!(
                    rks_counter_get(page.as_ptr(), page.len(), 64, 1, &mut v),
                    RKS_OK
                );
                assert_eq!(v, 5);
            }
        }
    }
}

#[test]
fn mutated_pages_never_panic_a_reader() {
    let mut bloom = rks_bloom_sub::default();
    let mut chain = rks_cuckoo_chain::default();
    let mut cuckoo = rks_cuckoo_sub::default();
    // SAFETY: valid places.
    unsafe {
        assert_eq!(rks_bloom_sub_make(0.01, 100, 2, 256, 0, &mut bloom), RKS_OK);
        assert_eq!(rks_cuckoo_chain_make(64, 2, 1, 8, 256, &mut chain), RKS_OK);
        assert_eq!(rks_cuckoo_sub_make(chain, 0, &mut cuckoo), RKS_OK);
    }
    let mut ops = buf();
    let op = rks_fp_op {
        bucket: 3,
        fp: 9,
        kind: rks_fp_op_kind::RKS_FP_INSERT as u8,
    };
    // SAFETY: one op, a valid buffer.
    assert_eq!(unsafe { rks_fp_ops(cuckoo, &op, 1, &mut ops) }, RKS_OK);
    let pages = [
        rocksdb_full_merge(None, &[&counter_delta(64, 5, 7)]).0,
        rocksdb_full_merge(None, &[&take(ops)]).0,
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for round in 0..4000 {
        let mut page = pages[round % 2].clone();
        for _ in 0..1 + round % 3 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let i = (state as usize) % page.len();
            page[i] ^= (state >> 32) as u8 | 1;
        }
        // Past the checksum: most mutations fix it up, so the decoders see the payload.
        if round % 4 != 0 && page.len() > 12 {
            let crc = crc32(&page[12..]);
            page[8..12].copy_from_slice(&crc.to_le_bytes());
        }
        let (mut v, mut count, mut set) = (0u32, 0u32, false);
        let bits = [1u32, 2, 3];
        // SAFETY: valid pages and places.
        let statuses = unsafe {
            [
                rks_counter_get(page.as_ptr(), page.len(), 64, 5, &mut v),
                rks_fp_count(cuckoo, page.as_ptr(), page.len(), 3, 9, &mut count),
                rks_bits_test(
                    page.as_ptr(),
                    page.len(),
                    bloom.page_bits,
                    bits.as_ptr(),
                    3,
                    &mut set,
                ),
            ]
        };
        assert!(statuses.iter().all(|s| *s != RKS_PANIC), "{statuses:?}");
    }
}

/// crc32 (IEEE), as the page header has it.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for b in bytes {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xedb8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}
