//! rocksketch's C ABI: the merge operator, operand builders and page readers, for hosts
//! of RocksDB written in C or C++ (`include/rocksketch.h`, `include/rocksketch.hpp`).
//!
//! It does not link RocksDB: a host passes our callbacks to its own RocksDB (a process
//! must not hold two). It lays out its keys its own way, builds operands with these
//! functions, writes them with `Merge`, and answers queries from the pages it reads,
//! with the same hashing as rocksketch, so its answers are rocksketch's and RedisBloom's.
//!
//! Conventions of every entry point:
//! - It returns an [`rks_status`]; [`rks_status::RKS_OK`] is 0. A panic never crosses
//!   the boundary: it is caught and returned as [`rks_status::RKS_PANIC`].
//! - Byte strings are `(pointer, length)`; a null pointer is allowed only with length 0.
//!   Arrays likewise. Pointers are only borrowed for the call.
//! - Output goes to caller-owned places, except operands, which come in an [`rks_buf`]
//!   that the caller releases with [`rks_buf_free`]. Nothing else needs freeing.
//! - A page the host never wrote is passed as `(NULL, 0)` and reads as empty.

// Every C entry point takes raw pointers; `unsafe` is confined to turning them into
// borrows (the helpers below) and to the merge callbacks' buffers.
#![allow(non_camel_case_types)]
#![warn(missing_docs)]

mod bloom;
mod cms;
mod cuckoo;
mod hll;
mod merge;
mod staging;

use std::os::raw::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use bloom::*;
pub use cms::*;
pub use cuckoo::*;
pub use hll::*;
pub use merge::*;
pub use staging::*;

/// rocksketch's page size unless a store is opened with another: a host that wants the
/// same layout as a default store passes it wherever a page size is asked for.
pub const RKS_DEFAULT_PAGE_BYTES: u32 = 16384;

/// What a call did.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum rks_status {
    /// It did what it says.
    RKS_OK = 0,
    /// A required pointer was null (or an array with a nonzero length had none).
    RKS_NULL_ARGUMENT = 1,
    /// A number was out of its range (a bad sketch shape, an offset past a page).
    RKS_INVALID_ARGUMENT = 2,
    /// An output array was too small; the needed length was written where the call says.
    RKS_BUFFER_TOO_SMALL = 3,
    /// A page did not decode (a bad checksum, a truncated or unknown format), or does not
    /// have the shape the caller gave.
    RKS_CORRUPT = 4,
    /// A page a merge made without some operands it could not decode: it lacks writes.
    RKS_LOST_OPERANDS = 5,
    /// A page of another kind than the call reads.
    RKS_WRONG_KIND = 6,
    /// A bug: the call panicked, and the panic was caught at the boundary.
    RKS_PANIC = 7,
}

use rks_status::*;

/// A byte buffer made by this library: an operand or a merged value. Release it with
/// [`rks_buf_free`]; `data` is null and `len` 0 once released or before any use.
#[repr(C)]
#[derive(Debug)]
pub struct rks_buf {
    /// The bytes, or null.
    pub data: *mut u8,
    /// How many bytes `data` holds.
    pub len: usize,
}

/// A static, NUL-terminated description of a status code (of any int: unknown codes get
/// "unknown status"). Never null; never freed.
#[no_mangle]
pub extern "C" fn rks_status_message(status: i32) -> *const c_char {
    let text: &'static [u8] = match status {
        0 => b"ok\0",
        1 => b"a required pointer was null\0",
        2 => b"an argument is out of range\0",
        3 => b"an output array is too small\0",
        4 => b"the page is corrupt or does not have the shape given\0",
        5 => b"the page lacks writes a merge could not decode\0",
        6 => b"the page is of another kind\0",
        7 => b"internal error: a panic was caught at the C boundary\0",
        _ => b"unknown status\0",
    };
    text.as_ptr().cast()
}

/// Releases a buffer this library made; a released or zeroed buffer is left as is.
///
/// # Safety
/// `buf` is null or points at an `rks_buf` that this library filled and that was not
/// changed since.
#[no_mangle]
pub unsafe extern "C" fn rks_buf_free(buf: *mut rks_buf) {
    // SAFETY: the caller passes null or a valid, exclusive `rks_buf`.
    if let Some(buf) = unsafe { buf.as_mut() } {
        // SAFETY: `data`/`len` came from `fill_buf`, which leaked a boxed slice of `len`.
        unsafe { free_bytes(buf.data, buf.len) };
        buf.data = std::ptr::null_mut();
        buf.len = 0;
    }
}

/// Hands `bytes` to C as a pointer from a leaked boxed slice of exactly `len` bytes.
fn leak_bytes(bytes: Vec<u8>) -> (*mut u8, usize) {
    let boxed = bytes.into_boxed_slice();
    let len = boxed.len();
    (Box::into_raw(boxed).cast(), len)
}

/// Frees what [`leak_bytes`] leaked; null is ignored.
///
/// # Safety
/// `(data, len)` is null or exactly what `leak_bytes` returned, not yet freed.
unsafe fn free_bytes(data: *mut u8, len: usize) {
    if !data.is_null() {
        // SAFETY: as the function's contract says, this is a leaked `Box<[u8]>` of `len`.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data, len)) });
    }
}

/// Stores `bytes` in the caller's buffer (whatever it held is not freed: it must be
/// empty or already released).
fn fill_buf(out: &mut rks_buf, bytes: Vec<u8>) {
    let (data, len) = leak_bytes(bytes);
    out.data = data;
    out.len = len;
}

/// Runs an entry point's body: its error as the status, a panic as `RKS_PANIC`.
fn guard(body: impl FnOnce() -> Result<(), rks_status>) -> rks_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => RKS_OK,
        Ok(Err(status)) => status,
        Err(_) => RKS_PANIC,
    }
}

/// Borrows `len` items at `ptr` for the call; null is allowed with `len` 0.
///
/// # Safety
/// Unless null, `ptr` points at `len` initialized, properly aligned `T`s that stay
/// unchanged for `'a`.
unsafe fn slice<'a, T>(ptr: *const T, len: usize) -> Result<&'a [T], rks_status> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(RKS_NULL_ARGUMENT);
    }
    if len.saturating_mul(std::mem::size_of::<T>()) > isize::MAX as usize {
        return Err(RKS_INVALID_ARGUMENT);
    }
    // SAFETY: non-null, and the caller vouches for `len` valid items.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Borrows an output array of `len` items; null is allowed with `len` 0.
///
/// # Safety
/// Unless null, `ptr` points at `len` writable `T`s that nothing else uses during `'a`.
unsafe fn slice_mut<'a, T>(ptr: *mut T, len: usize) -> Result<&'a mut [T], rks_status> {
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(RKS_NULL_ARGUMENT);
    }
    if len.saturating_mul(std::mem::size_of::<T>()) > isize::MAX as usize {
        return Err(RKS_INVALID_ARGUMENT);
    }
    // SAFETY: non-null, and the caller vouches for `len` writable items.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// Borrows an output place.
///
/// # Safety
/// Unless null, `ptr` points at a writable `T` that nothing else uses during `'a`.
unsafe fn out<'a, T>(ptr: *mut T) -> Result<&'a mut T, rks_status> {
    // SAFETY: the caller vouches for a valid pointer or null.
    unsafe { ptr.as_mut() }.ok_or(RKS_NULL_ARGUMENT)
}

/// The status a page reader returns for a decoding error.
fn page_error(err: rocksketch_merge::Error) -> rks_status {
    match err {
        rocksketch_merge::Error::LostOperands => RKS_LOST_OPERANDS,
        rocksketch_merge::Error::WrongKind { .. } => RKS_WRONG_KIND,
        _ => RKS_CORRUPT,
    }
}

/// Fails with `status` unless `ok`.
fn check(ok: bool, status: rks_status) -> Result<(), rks_status> {
    match ok {
        true => Ok(()),
        false => Err(status),
    }
}
