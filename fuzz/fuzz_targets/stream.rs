//! The replication stream's frames (`rocksketch_resp::stream`) from a hostile peer:
//! whatever the bytes, reading frames ends in frames or an error, never a panic, and
//! every frame read is written back to the very bytes it was read from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_resp::stream::{read_frame, read_line, write_frame};

fuzz_target!(|data: &[u8]| {
    let mut input = data;
    if data.first() == Some(&b'+') {
        let _ = read_line(&mut input);
    }
    loop {
        let before = input;
        let Ok(frame) = read_frame(&mut input) else {
            break;
        };
        let mut again = Vec::new();
        write_frame(&mut again, &frame).unwrap();
        let used = before.len() - input.len();
        let mut reread = &again[..];
        assert_eq!(read_frame(&mut reread).unwrap(), frame);
        assert!(
            again.len() <= used,
            "a frame is never longer written than read"
        );
    }
});
