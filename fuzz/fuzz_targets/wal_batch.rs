//! A replicated write batch (`rocksketch_merge::batch`) from a hostile primary: whatever
//! the bytes, reading its records ends in records or an error, never a panic, and the
//! records read are as many as its header counts. Appending the bytes' second half to
//! their first (as a replica joins batches) never panics either, leaves the run as it
//! was when refused, and, when both halves read, the joined run reads as both's records.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_merge::batch::{append, header, records};

fuzz_target!(|data: &[u8]| {
    if let Ok(found) = records(data) {
        let (_, count) = header(data).unwrap();
        assert_eq!(found.len(), count as usize);
    }
    let (first, second) = data.split_at(data.len() / 2);
    let mut run = first.to_vec();
    match append(&mut run, second) {
        Err(_) => assert_eq!(run, first),
        Ok(()) => {
            if let (Ok(a), Ok(b)) = (records(first), records(second)) {
                let joined = records(&run).expect("two batches joined read");
                assert_eq!(joined, [a, b].concat());
            }
        }
    }
});
