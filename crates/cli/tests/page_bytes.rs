//! `--page-bytes` reaches the store: the page size a Bloom filter is made with shows in
//! its dump (the header's page size, a page chunk's bitmap), by default a 2048th of the
//! hot-page cache (a power of two, 16 KiB to 1 MiB), else what the flag says; filters
//! made before a restart with another size keep theirs; dumps of Bloom and cuckoo
//! filters of 64 KiB and 1 MiB pages load into a server that makes smaller pages; and a
//! size out of range stops the server with a clear error.

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
    let chunks = dump(c, "BF", key);
    let (header, page) = (&chunks[0].1, &chunks[1].1);
    // Frame of 12 bytes, then error f64, capacity u64, expansion u32, filters u32,
    // page bits u32.
    let page_bits = u32::from_le_bytes(header[12 + 24..12 + 28].try_into().unwrap());
    // Frame of 12 bytes, then sub-filter u32 and page u32, then the bitmap.
    let (page_bytes, bitmap) = (page_bits / 8, page.len() - 12 - 8);
    assert!(
        bitmap <= page_bytes as usize && bitmap > page_bytes as usize / 2,
        "a page of {bitmap} bytes in pages of {page_bytes}"
    );
    page_bytes
}

/// Every chunk of a dump (`prefix` BF or CF) of `key`, in order, with its cursor.
fn dump(c: &mut Client, prefix: &str, key: &str) -> Vec<(i64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut cursor = 0;
    loop {
        let Value::Array(parts) = c.cmd(&[&format!("{prefix}.SCANDUMP"), key, &cursor.to_string()])
        else {
            panic!("a dump step answers an array");
        };
        match &parts[..] {
            [Value::Int(0), _] => return chunks,
            [Value::Int(next), Value::Bulk(chunk)] => {
                chunks.push((*next, chunk.clone()));
                cursor = *next;
            }
            other => panic!("a dump step answers a cursor and a chunk: {other:?}"),
        }
    }
}

/// Loads `chunks` into `key` with `LOADCHUNK`, each answered OK.
fn load(c: &mut Client, prefix: &str, key: &str, chunks: &[(i64, Vec<u8>)]) {
    for (cursor, chunk) in chunks {
        let command = format!("{prefix}.LOADCHUNK");
        let cursor = cursor.to_string();
        let args: [&[u8]; 4] = [command.as_bytes(), key.as_bytes(), cursor.as_bytes(), chunk];
        c.send(&args);
        assert_eq!(c.read(), Value::Simple("OK".into()), "{prefix} {key}");
    }
}

#[test]
fn dumps_of_larger_pages_load_where_pages_are_smaller() {
    // Capacities that make several pages of the larger size.
    for (large_bytes, capacity) in [(65536, "1000000"), (1 << 20, "4000000")] {
        let (from, to) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let large = start(from.path(), &["--page-bytes", &large_bytes.to_string()]);
        let small = start(to.path(), &["--page-bytes", "16384"]);
        let (mut l, mut s) = (Client::connect(large.addr), Client::connect(small.addr));
        let items: Vec<String> = (0..2000).map(|i| format!("item{i}")).collect();
        assert_eq!(
            l.cmd(&["BF.RESERVE", "bf", "0.01", capacity]),
            Value::Simple("OK".into())
        );
        assert_eq!(
            l.cmd(&["CF.RESERVE", "cf", capacity]),
            Value::Simple("OK".into())
        );
        for item in &items {
            assert_eq!(l.cmd(&["BF.ADD", "bf", item]), Value::Int(1));
            assert_eq!(l.cmd(&["CF.ADD", "cf", item]), Value::Int(1));
        }
        for prefix in ["BF", "CF"] {
            let key = prefix.to_lowercase();
            let chunks = dump(&mut l, prefix, &key);
            assert!(chunks.len() > 3, "{prefix}: a header and pages");
            load(&mut s, prefix, &key, &chunks);
            for item in &items {
                let exists = format!("{prefix}.EXISTS");
                assert_eq!(
                    s.cmd(&[&exists, &key, item]),
                    Value::Int(1),
                    "{prefix} {item}"
                );
            }
        }
        assert_eq!(dumped_page_bytes(&mut l, "bf"), large_bytes);
        assert_eq!(dumped_page_bytes(&mut s, "bf"), large_bytes);
    }
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
        (&["--cache-mb", "256"][..], "big", 131072),
        (&["--cache-mb", "255"][..], "smaller", 65536),
        (&["--cache-mb", "2048"][..], "largest", 1 << 20),
        (&["--cache-mb", "63"][..], "small", 16384),
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
            assert_eq!(dumped_page_bytes(&mut c, "big"), 131072, "{flags:?}");
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
