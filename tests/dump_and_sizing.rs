//! Filters whose parameters cannot be sized, cuckoo dumps restored whole, and dumps
//! taken while the chain changes.

mod common;

use common::args;
use rocksketch::command::{execute, Reply};
use rocksketch::{BloomError, CuckooError, CuckooOptions, Error};

// Post-mortem: `BF.RESERVE k 1e-323 1` was accepted; the second sub-filter's error
// (halved) underflowed to 0, its page size became 0 and the next add divided by it,
// panicking the connection's thread.
#[test]
fn an_error_rate_that_underflows_in_the_chain_is_refused_at_reserve() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    assert_eq!(
        execute(&ns, &args(&["BF.RESERVE", "k", "1e-323", "1"])),
        Reply::Error(BloomError::ErrorRateTooSmall.text().to_owned())
    );
    assert!(!ns.exists(b"k").unwrap());
    // BF.INSERT creates with the same checks.
    assert!(matches!(
        execute(
            &ns,
            &args(&["BF.INSERT", "k", "ERROR", "1e-320", "ITEMS", "a"])
        ),
        Reply::Error(_)
    ));
    // Tiny but sizable rates work, and every add answers.
    let f = t.store().bloom("small");
    f.reserve(1e-300, 1, 2).unwrap();
    for item in ["a", "b", "c", "d"] {
        assert!(f.add(item).unwrap());
    }
    assert!(f.info().unwrap().filters >= 2);
    // A non-scaling filter never halves its rate: 1e-323 sizes it.
    let fixed = t.store().bloom("fixed");
    fixed.reserve(1e-323, 1, 0).unwrap();
    assert!(fixed.add("a").unwrap());
    assert!(matches!(
        fixed.add("b"),
        Err(Error::Bloom(BloomError::NonScalingFull))
    ));
}

/// A dump's header chunk with its error rate replaced (and its checksum redone).
fn with_error_rate(header: &[u8], error: f64) -> Vec<u8> {
    let mut chunk = header.to_vec();
    chunk[12..20].copy_from_slice(&error.to_le_bytes());
    let crc = crc32fast::hash(&chunk[12..]);
    chunk[8..12].copy_from_slice(&crc.to_le_bytes());
    chunk
}

#[test]
fn loadchunk_refuses_headers_that_reserve_would_refuse() {
    let t = common::TempStore::new();
    let src = t.store().bloom("src");
    src.reserve(0.01, 100, 2).unwrap();
    src.add("x").unwrap();
    let (cursor, header) = src.scandump(0).unwrap();
    // Unchanged, the header loads.
    t.store().bloom("copy").loadchunk(cursor, &header).unwrap();
    for error in [1e-323, 0.0, -1.0, f64::NAN, 0.5] {
        let dst = t.store().bloom(format!("bad{error}"));
        assert!(
            matches!(
                dst.loadchunk(cursor, &with_error_rate(&header, error)),
                Err(Error::Bloom(BloomError::BadChunk))
            ),
            "error rate {error}"
        );
    }
}

// Post-mortem: SCANDUMP's header described the chain at cursor 0, and later calls
// walked the chain as it was then: once it grew, they sent pages of sub-filters the
// header lacked, and LOADCHUNK refused them with "received bad data".
#[test]
fn a_bloom_dump_refuses_to_go_on_once_the_chain_grew_or_the_key_was_recreated() {
    let t = common::TempStore::new();
    let f = t.store().bloom("f");
    f.reserve(0.01, 10, 2).unwrap();
    f.add("first").unwrap();
    let (cursor, _header) = f.scandump(0).unwrap();
    let (next, _page) = f.scandump(cursor).unwrap();
    assert_ne!(next, 0);
    for i in 0..50 {
        f.add(format!("item{i}")).unwrap();
    }
    assert!(f.info().unwrap().filters > 1);
    assert!(matches!(
        f.scandump(next),
        Err(Error::Bloom(BloomError::DumpChanged))
    ));
    assert_eq!(
        Reply::from(&Error::Bloom(BloomError::DumpChanged)),
        Reply::Error("ERR the filter changed during the dump; restart it from cursor 0".into())
    );

    // Recreated with the same parameters: a new version, and the old cursor is refused.
    let (cursor, _) = f.scandump(0).unwrap();
    t.store().ns(0).delete(b"f").unwrap();
    f.reserve(0.01, 10, 2).unwrap();
    f.add("first").unwrap();
    assert!(matches!(
        f.scandump(cursor),
        Err(Error::Bloom(BloomError::DumpChanged))
    ));

    // A dump restarted from 0 completes, and loads.
    let chunks = common::dump_chunks(|cursor| f.scandump(cursor));
    let copy = t.store().bloom("copy");
    for (cursor, chunk) in &chunks {
        copy.loadchunk(*cursor, chunk).unwrap();
    }
    assert!(copy.exists("first").unwrap());
}

#[test]
fn a_cuckoo_dump_refuses_to_go_on_once_the_chain_grew() {
    let t = common::TempStore::new();
    let f = t.store().cuckoo("f");
    f.reserve(CuckooOptions {
        capacity: 64,
        bucket_size: 4,
        ..CuckooOptions::default()
    })
    .unwrap();
    f.add("first").unwrap();
    let (cursor, _header) = f.scandump(0).unwrap();
    for i in 0..500 {
        f.add(format!("item{i}")).unwrap();
    }
    assert!(f.info().unwrap().filters > 1);
    assert!(matches!(
        f.scandump(cursor),
        Err(Error::Cuckoo(CuckooError::DumpChanged))
    ));
    assert!(matches!(
        f.scandump(-5),
        Err(Error::Cuckoo(CuckooError::InvalidPosition))
    ));
}

#[test]
fn dump_and_restore_reproduce_every_answer() {
    for fp_bits in [8, 12] {
        dump_and_restore_at(fp_bits);
    }
}

fn dump_and_restore_at(fp_bits: u8) {
    let mut t = common::TempStore::new();
    let chunks = dump_and_load(t.store(), fp_bits);
    assert!(chunks.len() > 2);
    t.reopen();
    let ns = t.store().ns(0);
    let (src, copy) = (ns.cuckoo("src"), ns.cuckoo("copy"));
    let probes: Vec<String> = (0..20_000).map(|i| format!("m{i}")).collect();
    assert_eq!(
        copy.mexists(&probes).unwrap(),
        src.mexists(&probes).unwrap()
    );
    assert!(copy
        .mexists(&probes[500..12_000])
        .unwrap()
        .iter()
        .all(|f| *f));
    assert_eq!(copy.info().unwrap(), src.info().unwrap());
    assert_eq!(copy.count("m600").unwrap(), src.count("m600").unwrap());
    assert!(matches!(
        copy.loadchunk(1, &chunks[0].1),
        Err(Error::Cuckoo(CuckooError::ItemExists))
    ));
    // The key's state first, then the chunk, as RedisBloom checks them.
    assert!(matches!(
        ns.cuckoo("x").loadchunk(2, b"garbage"),
        Err(Error::Cuckoo(CuckooError::NotFound))
    ));
    assert!(matches!(
        ns.cuckoo("x").loadchunk(1, b"garbage"),
        Err(Error::Cuckoo(CuckooError::InvalidHeader))
    ));
    assert!(matches!(
        copy.loadchunk(2, b"garbage"),
        Err(Error::Cuckoo(CuckooError::LoadChunkFailed))
    ));
    assert!(matches!(
        src.scandump(-1),
        Err(Error::Cuckoo(CuckooError::InvalidPosition))
    ));
}

/// Fills "src" (deleting some), dumps it, loads the chunks into "copy"; the chunks.
fn dump_and_load(store: &rocksketch::Store, fp_bits: u8) -> Vec<(i64, Vec<u8>)> {
    let ns = store.ns(0);
    let src = ns.cuckoo("src");
    src.reserve(CuckooOptions {
        capacity: 5000,
        bucket_size: 4,
        expansion: 2,
        fp_bits,
        ..CuckooOptions::default()
    })
    .unwrap();
    let items: Vec<String> = (0..12_000).map(|i| format!("m{i}")).collect();
    for item in &items {
        src.add(item).unwrap();
    }
    for item in &items[..500] {
        assert!(src.delete(item).unwrap());
    }
    let chunks = common::dump_chunks(|cursor| src.scandump(cursor));
    let copy = ns.cuckoo("copy");
    for (cursor, chunk) in &chunks {
        copy.loadchunk(*cursor, chunk).unwrap();
    }
    chunks
}
