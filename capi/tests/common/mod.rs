//! Buffers as a C caller holds them, for the boundary's tests.
#![allow(dead_code)]

use rocksketch_capi::{rks_buf, rks_buf_free};
use std::ptr::null_mut;

/// An empty buffer for the library to fill.
pub fn buf() -> rks_buf {
    rks_buf {
        data: null_mut(),
        len: 0,
    }
}

/// The bytes of a buffer, released.
pub fn take(mut b: rks_buf) -> Vec<u8> {
    // SAFETY: the library filled `b` with `len` bytes at `data`.
    let bytes = unsafe { std::slice::from_raw_parts(b.data, b.len) }.to_vec();
    // SAFETY: `b` is the library's, released once.
    unsafe { rks_buf_free(&mut b) };
    assert!(b.data.is_null() && b.len == 0);
    bytes
}
