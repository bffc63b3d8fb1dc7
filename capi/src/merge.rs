//! The merge operator: callbacks in the shapes RocksDB's C API takes, and the same
//! merges into a caller's sink for the C++ adapter.
//!
//! A C host makes its operator with
//! `rocksdb_mergeoperator_create(NULL, rks_rocksdb_destructor, rks_rocksdb_full_merge,
//! rks_rocksdb_partial_merge, rks_rocksdb_delete_value, rks_rocksdb_name)`.

use crate::{free_bytes, guard, leak_bytes, out, rks_status, slice};
use rocksketch_merge::MERGE_OPERATOR_NAME;
use std::ffi::c_void;
use std::os::raw::{c_char, c_int, c_uchar};
use std::sync::atomic::{AtomicU64, Ordering};

static SKIPPED_OPERANDS: AtomicU64 = AtomicU64::new(0);

/// The operator's name, NUL-terminated (`MERGE_OPERATOR_NAME`).
static NAME: &[u8] = b"rocksketch.v1\0";

/// Receives a merged value: `ctx` is the caller's, `data`/`len` are valid only during
/// the call (copy them).
pub type rks_sink = Option<unsafe extern "C" fn(ctx: *mut c_void, data: *const u8, len: usize)>;

/// How many operands merges in this process have skipped because they did not decode
/// (each such page is flagged, and its readers get `RKS_LOST_OPERANDS`).
#[no_mangle]
pub extern "C" fn rks_skipped_operands() -> u64 {
    SKIPPED_OPERANDS.load(Ordering::Relaxed)
}

/// Operands given as parallel pointer and length arrays, checked (no null pointer with a
/// nonzero length) and read in place.
#[derive(Clone, Copy)]
struct Operands<'a> {
    ptrs: &'a [*const u8],
    lens: &'a [usize],
}

impl<'a> Operands<'a> {
    /// # Safety
    /// `ptrs` and `lens` hold `n` items each (or are null with `n` 0), and each pointer
    /// addresses its length of bytes, all valid for `'a`.
    unsafe fn new(
        ptrs: *const *const u8,
        lens: *const usize,
        n: usize,
    ) -> Result<Self, rks_status> {
        // SAFETY: the caller's contract covers both arrays.
        let (ptrs, lens) = unsafe { (slice(ptrs, n)?, slice(lens, n)?) };
        let valid = |(p, len): (&*const u8, &usize)| !p.is_null() || *len == 0;
        match ptrs.iter().zip(lens).all(valid) {
            true => Ok(Operands { ptrs, lens }),
            false => Err(rks_status::RKS_NULL_ARGUMENT),
        }
    }

    fn iter(self) -> impl Iterator<Item = &'a [u8]> {
        self.ptrs.iter().zip(self.lens).map(|(p, len)| match len {
            0 => &[][..],
            // SAFETY: checked non-null in `new`; the pointer addresses `len` bytes for
            // `'a` (the contract of `new`).
            _ => unsafe { std::slice::from_raw_parts(*p, *len) },
        })
    }
}

fn full_merge<'a>(existing: Option<&[u8]>, operands: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
    let merged = rocksketch_merge::full_merge(existing, operands);
    if merged.skipped > 0 {
        SKIPPED_OPERANDS.fetch_add(merged.skipped as u64, Ordering::Relaxed);
    }
    merged.value
}

/// Materializes a page from its stored value (`has_existing`: whether there is one)
/// and the operands after it, and passes the result to `sink`. Never fails on bytes: an
/// operand that does not decode is skipped and the page flagged (see
/// [`rks_skipped_operands`]); so a host must store what the sink gets and report
/// success to RocksDB.
///
/// # Safety
/// `existing` addresses `existing_len` bytes (or is null with 0); `operands` and
/// `operand_lens` hold `n` items each and every operand its length of bytes.
#[no_mangle]
pub unsafe extern "C" fn rks_full_merge(
    existing: *const u8,
    existing_len: usize,
    has_existing: bool,
    operands: *const *const u8,
    operand_lens: *const usize,
    n: usize,
    sink: rks_sink,
    ctx: *mut c_void,
) -> rks_status {
    guard(|| {
        let sink = sink.ok_or(rks_status::RKS_NULL_ARGUMENT)?;
        // SAFETY: the caller's contract covers the value and the operand arrays.
        let (existing, operands) = unsafe {
            let existing = has_existing
                .then(|| slice(existing, existing_len))
                .transpose()?;
            (existing, Operands::new(operands, operand_lens, n)?)
        };
        let value = full_merge(existing, operands.iter());
        // SAFETY: `sink` is the caller's function; `value` lives through the call.
        unsafe { sink(ctx, value.as_ptr(), value.len()) };
        Ok(())
    })
}

/// Combines operands into one and passes it to `sink`, or declines (`*merged` false,
/// `sink` not called) where it cannot; declining is always safe (RocksDB keeps the
/// operands as they are).
///
/// # Safety
/// `operands` and `operand_lens` hold `n` items each and every operand its length of
/// bytes; `merged` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_partial_merge(
    operands: *const *const u8,
    operand_lens: *const usize,
    n: usize,
    sink: rks_sink,
    ctx: *mut c_void,
    merged: *mut bool,
) -> rks_status {
    guard(|| {
        let sink = sink.ok_or(rks_status::RKS_NULL_ARGUMENT)?;
        // SAFETY: the caller's contract covers `merged` and the operand arrays.
        let (merged, operands) =
            unsafe { (out(merged)?, Operands::new(operands, operand_lens, n)?) };
        *merged = false;
        if let Some(value) = rocksketch_merge::partial_merge(operands.iter()) {
            // SAFETY: `sink` is the caller's function; `value` lives through the call.
            unsafe { sink(ctx, value.as_ptr(), value.len()) };
            *merged = true;
        }
        Ok(())
    })
}

/// RocksDB C API's full-merge callback (`state` is unused). The value it returns is
/// released by [`rks_rocksdb_delete_value`], which RocksDB calls.
///
/// # Safety
/// Called by RocksDB with its arguments as its C API documents them.
#[no_mangle]
pub unsafe extern "C" fn rks_rocksdb_full_merge(
    _state: *mut c_void,
    _key: *const c_char,
    _key_len: usize,
    existing: *const c_char,
    existing_len: usize,
    operands: *const *const c_char,
    operand_lens: *const usize,
    num_operands: c_int,
    success: *mut c_uchar,
    new_value_len: *mut usize,
) -> *mut c_char {
    let mut value = None;
    let status = guard(|| {
        let n = usize::try_from(num_operands).map_err(|_| rks_status::RKS_INVALID_ARGUMENT)?;
        // SAFETY: RocksDB passes a null value when there is none, and `n` operands.
        let (existing, operands) = unsafe {
            let existing = (!existing.is_null())
                .then(|| slice(existing.cast::<u8>(), existing_len))
                .transpose()?;
            (existing, Operands::new(operands.cast(), operand_lens, n)?)
        };
        value = Some(full_merge(existing, operands.iter()));
        Ok(())
    });
    // SAFETY: RocksDB passes writable `success` and `new_value_len`.
    unsafe { hand_to_rocksdb(value, status, success, new_value_len) }
}

/// RocksDB C API's partial-merge callback (`state` is unused).
///
/// # Safety
/// Called by RocksDB with its arguments as its C API documents them.
#[no_mangle]
pub unsafe extern "C" fn rks_rocksdb_partial_merge(
    _state: *mut c_void,
    _key: *const c_char,
    _key_len: usize,
    operands: *const *const c_char,
    operand_lens: *const usize,
    num_operands: c_int,
    success: *mut c_uchar,
    new_value_len: *mut usize,
) -> *mut c_char {
    let mut value = None;
    let status = guard(|| {
        let n = usize::try_from(num_operands).map_err(|_| rks_status::RKS_INVALID_ARGUMENT)?;
        // SAFETY: RocksDB passes `n` operands.
        let operands = unsafe { Operands::new(operands.cast(), operand_lens, n)? };
        value = rocksketch_merge::partial_merge(operands.iter());
        Ok(())
    });
    // SAFETY: RocksDB passes writable `success` and `new_value_len`.
    unsafe { hand_to_rocksdb(value, status, success, new_value_len) }
}

/// Returns a merge's value the way RocksDB's C API takes it. RocksDB copies the value
/// whether or not the merge succeeded, then releases it: a declined or failed merge
/// returns an empty value (never a null pointer) with `*success` 0.
///
/// # Safety
/// `success` and `new_value_len` are writable or null.
unsafe fn hand_to_rocksdb(
    value: Option<Vec<u8>>,
    status: rks_status,
    success: *mut c_uchar,
    new_value_len: *mut usize,
) -> *mut c_char {
    let ok = status == rks_status::RKS_OK && value.is_some();
    let (data, len) = leak_bytes(value.unwrap_or_default());
    // SAFETY: RocksDB passes writable places (checked for null all the same).
    unsafe {
        if let Some(success) = success.as_mut() {
            *success = c_uchar::from(ok);
        }
        if let Some(new_value_len) = new_value_len.as_mut() {
            *new_value_len = len;
        }
    }
    data.cast()
}

/// RocksDB C API's delete-value callback: releases a value a merge callback returned.
///
/// # Safety
/// `value` and `len` are what [`rks_rocksdb_full_merge`] or
/// [`rks_rocksdb_partial_merge`] returned, released once.
#[no_mangle]
pub unsafe extern "C" fn rks_rocksdb_delete_value(
    _state: *mut c_void,
    value: *const c_char,
    len: usize,
) {
    // SAFETY: as the contract says, this is a value the merge callbacks leaked.
    unsafe { free_bytes(value.cast_mut().cast(), len) }
}

/// RocksDB C API's name callback: `"rocksketch.v1"`, static.
#[no_mangle]
pub extern "C" fn rks_rocksdb_name(_state: *mut c_void) -> *const c_char {
    debug_assert_eq!(&NAME[..NAME.len() - 1], MERGE_OPERATOR_NAME.as_bytes());
    NAME.as_ptr().cast()
}

/// RocksDB C API's destructor callback: the operator keeps no state, so nothing to do.
#[no_mangle]
pub extern "C" fn rks_rocksdb_destructor(_state: *mut c_void) {}
