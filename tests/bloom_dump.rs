//! A Bloom filter dumped with SCANDUMP and replayed with LOADCHUNK into an empty key
//! answers every question as the original does.

mod common;

use common::args;
use rocksketch::command::{execute, Reply};

#[test]
fn scandump_loadchunk_round_trip_reproduces_every_answer() {
    let t = common::TempStore::new();
    let s = t.store();
    let src = s.bloom("src");
    src.reserve(0.01, 300, 2).unwrap();
    let items: Vec<String> = (0..3_000).map(|i| format!("in:{i}")).collect();
    for chunk in items.chunks(100) {
        src.add_blind(chunk).unwrap();
    }
    assert!(src.info().unwrap().filters >= 3);

    // The client's loop: SCANDUMP from 0 until the cursor comes back 0.
    let chunks = common::dump_chunks(|cursor| src.scandump(cursor));
    assert!(chunks.len() >= 2, "a header and at least one page");
    let dst = s.bloom("dst");
    for (cursor, chunk) in &chunks {
        dst.loadchunk(*cursor, chunk).unwrap();
    }
    assert_eq!(dst.info().unwrap(), src.info().unwrap());
    assert_eq!(dst.card().unwrap(), src.card().unwrap());
    let probes: Vec<String> = (0..5_000)
        .map(|i| format!("out:{i}"))
        .chain(items)
        .collect();
    assert_eq!(dst.mexists(&probes).unwrap(), src.mexists(&probes).unwrap());

    // Replaying onto an existing key, a bad cursor, and a damaged chunk are refused.
    assert!(dst.loadchunk(chunks[0].0, &chunks[0].1).is_err());
    let other = s.bloom("other");
    assert!(other.loadchunk(2, &chunks[0].1).is_err());
    let mut damaged = chunks[0].1.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    assert!(other.loadchunk(1, &damaged).is_err());
    assert!(!s.ns(0).exists(b"other").unwrap());
}

#[test]
fn commands_round_trip_through_bulk_strings() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let run = |words: &[Vec<u8>]| execute(&ns, words);
    let words = |w: &[&str]| args(w);
    assert_eq!(run(&words(&["BF.ADD", "a", "x"])), Reply::Bool(true));
    let mut cursor = 0i64;
    let mut saved = Vec::new();
    loop {
        let reply = run(&words(&["BF.SCANDUMP", "a", &cursor.to_string()]));
        let Reply::Array(parts) = reply else {
            panic!("{reply:?}")
        };
        let (Reply::Int(next), Reply::Bulk(data)) = (&parts[0], &parts[1]) else {
            panic!("{parts:?}")
        };
        if *next == 0 {
            assert!(data.is_empty());
            break;
        }
        saved.push((*next, data.clone()));
        cursor = *next;
    }
    for (it, data) in saved {
        let cmd = vec![
            b"BF.LOADCHUNK".to_vec(),
            b"b".to_vec(),
            it.to_string().into_bytes(),
            data,
        ];
        assert_eq!(run(&cmd), Reply::ok());
    }
    assert_eq!(run(&words(&["BF.EXISTS", "b", "x"])), Reply::Bool(true));
    assert_eq!(run(&words(&["BF.CARD", "b"])), Reply::Int(1));
    assert_eq!(
        run(&words(&["BF.SCANDUMP", "a", "x"])),
        Reply::Error("Second argument must be numeric".to_owned())
    );
    assert_eq!(
        run(&words(&["BF.SCANDUMP", "missing", "0"])),
        Reply::Error("ERR not found".to_owned())
    );
}
