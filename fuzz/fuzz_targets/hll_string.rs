//! `SET key value`'s parser: any bytes into the import of a Redis HyperLogLog string
//! (with Redis's header in front, half the time, so the decoders past the magic see
//! arbitrary registers). No panic; whatever imports exports to a string that imports
//! to the same registers, and is never longer than Redis's dense string.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_merge::hll::{redis, DENSE_BYTES};

fuzz_target!(|data: &[u8]| {
    let mut framed = b"HYLL".to_vec();
    framed.push(data.first().map_or(1, |b| b & 1));
    framed.extend_from_slice(&[0; 11]);
    framed.extend_from_slice(data.get(1..).unwrap_or_default());
    for string in [data, framed.as_slice()] {
        if let Ok(regs) = redis::import(string) {
            let exported = redis::export(&regs);
            assert!(exported.len() <= redis::HEADER_LEN + DENSE_BYTES);
            assert_eq!(redis::import(&exported), Ok(regs));
        }
    }
});
