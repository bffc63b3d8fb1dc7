//! `--page-bytes` reaches the store: the page size a Bloom filter is made with shows in
//! its dump (the header's page size, a page chunk's bitmap), by default 64 KiB with a
//! hot-page cache of 256 MiB or more and 16 KiB with a smaller one, else what the flag
//! says; filters made before a restart with another size keep theirs; and a size out
//! of range stops the server with a clear error.

#[path = "../../server/tests/common/resp_client.rs"]
mod resp_client;

#[path = "common/process.rs"]
mod process;

use process::{start_with as start, BIN};
use resp_client::{Client, Value};
use std::process::Command;

/// The header chunk's page size in bytes, checked against the bitmap of the first page
/// chunk (a sub-filter is cut into pages of about equal size, at most that).
fn dumped_page_bytes(c: &mut Client, key: &str) -> u32 {
    let chunk = |v: Value| match v {
        Value::Array(parts) => match &parts[..] {
            [Value::Int(cursor), Value::Bulk(chunk)] => (*cursor, chunk.clone()),
            other => panic!("a dump step answers a cursor and a chunk: {other:?}"),
        },
        other => panic!("a dump step answers an array: {other:?}"),
    };
    let (cursor, header) = chunk(c.cmd(&["BF.SCANDUMP", key, "0"]));
    // Frame of 12 bytes, then error f64, capacity u64, expansion u32, filters u32,
    // page bits u32.
    let page_bits = u32::from_le_bytes(header[12 + 24..12 + 28].try_into().unwrap());
    let (_, page) = chunk(c.cmd(&["BF.SCANDUMP", key, &cursor.to_string()]));
    // Frame of 12 bytes, then sub-filter u32 and page u32, then the bitmap.
    let (page_bytes, bitmap) = (page_bits / 8, page.len() - 12 - 8);
    assert!(
        bitmap <= page_bytes as usize && bitmap > page_bytes as usize / 2,
        "a page of {bitmap} bytes in pages of {page_bytes}"
    );
    page_bytes
}

#[test]
fn page_bytes_sets_the_pages_of_new_filters_and_bad_sizes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let make = |c: &mut Client, key: &str| {
        assert_eq!(
            c.cmd(&["BF.RESERVE", key, "0.01", "1000000"]),
            Value::Simple("OK".into())
        );
        assert_eq!(c.cmd(&["BF.ADD", key, "item"]), Value::Int(1));
    };
    for (flags, key, bytes) in [
        (&["--cache-mb", "256"][..], "big", 65536),
        (&["--cache-mb", "255"][..], "small", 16384),
        (
            &["--cache-mb", "16", "--page-bytes", "32768"][..],
            "set",
            32768,
        ),
    ] {
        let server = start(dir.path(), flags);
        let mut c = Client::connect(server.addr);
        make(&mut c, key);
        assert_eq!(dumped_page_bytes(&mut c, key), bytes, "{flags:?}");
        // Made before the restart, with the page size of then.
        if key != "big" {
            assert_eq!(dumped_page_bytes(&mut c, "big"), 65536, "{flags:?}");
            assert_eq!(c.cmd(&["BF.EXISTS", "big", "item"]), Value::Int(1));
        }
    }

    for bad in ["3", "1048577", "lots"] {
        let out = Command::new(BIN)
            .args(["serve", "--port", "0", "--page-bytes", bad, "--dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "--page-bytes {bad} was taken");
        assert!(
            stderr.contains("page") && stderr.contains(bad),
            "--page-bytes {bad}: {stderr}"
        );
    }
}
