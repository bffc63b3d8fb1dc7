//! `KEYS pattern` holds only the keys that match: over a large keyspace, a pattern that
//! matches nothing must not collect the keyspace first. Measured with a counting
//! allocator (this test binary's own), as the peak of Rust heap bytes during the call
//! over what was allocated before it; RocksDB's own buffers are C++'s and not counted.

#[path = "common/resp_client.rs"]
mod resp_client;

use peak_alloc::PeakAlloc;
use resp_client::{temp_server, Value};

// The workspace forbids unsafe code, so the counting allocator is a crate's.
#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

#[test]
fn keys_with_a_pattern_that_matches_nothing_holds_no_keyspace() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    const KEYS: usize = 100_000;
    // Long names: the keyspace is some 12 MB of names alone.
    let name = |n: usize| format!("key:{n:08}:{}", "p".repeat(100));
    for chunk in (0..KEYS).collect::<Vec<_>>().chunks(1000) {
        for n in chunk {
            let key = name(*n);
            c.send(&[b"CMS.INITBYDIM", key.as_bytes(), b"10", b"1"]);
        }
        for _ in chunk {
            c.read();
        }
    }
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(KEYS as i64));

    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    assert_eq!(c.cmd(&["KEYS", "nomatch*"]), Value::Array(vec![]));
    let grew = ALLOCATOR.peak_usage().saturating_sub(before);
    // Collecting the keyspace first took over 12 MB (names, vectors, types).
    assert!(
        grew < 2 << 20,
        "KEYS nomatch* grew the heap by {grew} bytes"
    );

    // And a pattern that matches holds just its matches.
    let Value::Array(found) = c.cmd(&["KEYS", "key:0000001?:*"]) else {
        panic!("KEYS answers an array");
    };
    assert_eq!(found.len(), 10);
}
