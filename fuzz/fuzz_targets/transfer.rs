//! A migrated slot's chunk (`rocksketch_merge::transfer`) from a hostile node: whatever
//! the bytes, reading it ends in ops or an error, never a panic, and ops read encode
//! back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_merge::transfer::{begin, decode};

fuzz_target!(|data: &[u8]| {
    if let Ok(ops) = decode(data) {
        let mut again = begin();
        for op in &ops {
            op.encode_into(&mut again);
        }
        assert_eq!(again, data);
    }
});
