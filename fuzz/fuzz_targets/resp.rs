//! The RESP request parser on arbitrary bytes, fed whole and in pieces: it never panics,
//! never claims bytes it was not given, and the pieces give the same requests (or the
//! same error) as the whole.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_resp::{Limits, RequestParser};

const LIMITS: Limits = Limits {
    max_bulk: 1 << 10,
    max_args: 64,
    max_inline: 1 << 10,
};

/// Every request in `wire`, fed `step` bytes at a time, and how parsing ended.
fn requests(wire: &[u8], step: usize) -> (Vec<Vec<Vec<u8>>>, bool) {
    let mut parser = RequestParser::new(LIMITS);
    let (mut buf, mut got) = (Vec::new(), Vec::new());
    for piece in wire.chunks(step.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match parser.next(&buf) {
                Ok(Some((args, used))) => {
                    assert!(used > 0 && used <= buf.len());
                    got.push(args);
                    buf.drain(..used);
                }
                Ok(None) => break,
                Err(_) => return (got, true),
            }
        }
    }
    (got, false)
}

fuzz_target!(|data: &[u8]| {
    let Some((&step, wire)) = data.split_first() else {
        return;
    };
    let whole = requests(wire, wire.len());
    let pieces = requests(wire, usize::from(step % 16) + 1);
    assert_eq!(whole, pieces);
});
