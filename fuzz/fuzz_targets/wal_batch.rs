//! A replicated write batch (`rocksketch_merge::batch`) from a hostile primary: whatever
//! the bytes, reading its records ends in records or an error, never a panic, and the
//! records read are as many as its header counts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_merge::batch::{header, records};

fuzz_target!(|data: &[u8]| {
    if let Ok(found) = records(data) {
        let (_, count) = header(data).unwrap();
        assert_eq!(found.len(), count as usize);
    }
});
