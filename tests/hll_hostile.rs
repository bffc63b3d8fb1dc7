//! HyperLogLogs against hostile and oversized input: `SET` of corrupt, truncated,
//! overlong and hostile strings is refused and changes nothing; unions and merges over
//! thousands of keys hold one union of registers, not a copy per source (the peak of
//! Rust heap bytes, counted by this test binary's allocator); a `PFADD` of a million
//! elements answers and counts.

mod common;

use common::args;
use peak_alloc::PeakAlloc;
use rocksketch::command::{execute, Reply};
use rocksketch::{HllError, StoreOptions};
use rocksketch_merge::hll::redis;

#[global_allocator]
static ALLOCATOR: PeakAlloc = PeakAlloc;

fn set(ns: &rocksketch::Namespace, key: &str, value: &[u8]) -> Reply {
    let mut request = args(&["SET", key]);
    request.push(value.to_vec());
    execute(ns, &request)
}

#[test]
fn hostile_strings_are_refused_and_change_nothing() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let hll = ns.hll("h");
    hll.add(&["a", "b", "c"]).unwrap();
    let before = hll.export().unwrap().unwrap();
    let not_hll = Reply::Error(HllError::NotHll.text().to_owned());
    let corrupt = Reply::Error(HllError::Corrupt.text().to_owned());

    let dense = redis::export(&{
        let mut regs = rocksketch_merge::hll::Registers::new();
        regs.raise(7, 40);
        regs
    });
    let mut cases: Vec<(Vec<u8>, &Reply)> = vec![
        (b"".to_vec(), &not_hll),
        (b"hello".to_vec(), &not_hll),
        (b"HYLL".to_vec(), &corrupt),
        (before[..before.len() - 1].to_vec(), &corrupt),
        ([&before[..], &[0x80]].concat(), &corrupt),
        (dense[..dense.len() - 1].to_vec(), &corrupt),
        ([&dense[..], &[0]].concat(), &corrupt),
        // A run past the last register, and one XZERO cut short.
        (
            [&before[..16], &[0x7f, 0xff, 0x7f, 0xff]].concat(),
            &corrupt,
        ),
        ([&before[..16], &[0x7f]].concat(), &corrupt),
        // An unknown encoding, and 10 MiB of opcodes.
        ([&b"HYLL\x02"[..], &[0; 11]].concat(), &corrupt),
        (
            [&before[..16], &vec![0x00; 10 << 20][..]].concat(),
            &corrupt,
        ),
    ];
    let mut header = before.clone();
    header[4] = 0; // says dense, holds sparse opcodes
    cases.push((header, &corrupt));
    for (value, want) in &cases {
        assert_eq!(
            &set(&ns, "h", value),
            *want,
            "{:?}",
            &value[..value.len().min(24)]
        );
        assert_eq!(&set(&ns, "new", value), *want);
    }
    assert_eq!(hll.export().unwrap().unwrap(), before, "h changed");
    assert!(!ns.exists(b"new").unwrap(), "a refused SET created its key");
    assert_eq!(
        execute(&ns, &args(&["SET", "h", "x", "EX", "10"])),
        Reply::Error("ERR syntax error".to_owned())
    );
}

#[test]
fn unions_and_merges_of_thousands_of_keys_hold_one_union() {
    // No page cache: what is measured is what the commands themselves hold.
    let t = common::TempStore::with_options(StoreOptions {
        page_cache_bytes: 0,
        ..StoreOptions::default()
    });
    let store = t.store();
    let keys: Vec<String> = (0..2000).map(|k| format!("k{k}")).collect();
    for (k, key) in keys.iter().enumerate() {
        // Dense keys: 12 KiB of registers each.
        let items: Vec<String> = (0..3000).map(|i| format!("{k}:{i}")).collect();
        store.hll(key).add_blind(&items).unwrap();
    }
    store.flush().unwrap();
    let before = ALLOCATOR.current_usage();
    ALLOCATOR.reset_peak_usage();
    let count = store.hll_count(&keys).unwrap();
    store.hll("dest").merge_from(&keys).unwrap();
    let grew = ALLOCATOR.peak_usage().saturating_sub(before);
    // 2000 sources of 16 KiB decoded would be 32 MiB; one union and a page at a time
    // is well under 2 MiB.
    assert!(grew < 2 << 20, "the union held {grew} bytes");
    assert!((5_500_000..6_500_000).contains(&count), "{count}");
    assert_eq!(store.hll("dest").count().unwrap(), count);
}

#[test]
fn a_pfadd_of_a_million_elements_answers_and_counts() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let mut request = args(&["PFADD", "big"]);
    request.extend((0..1_000_000).map(|i| format!("e{i}").into_bytes()));
    assert_eq!(execute(&ns, &request), Reply::Int(1));
    assert_eq!(execute(&ns, &request), Reply::Int(0));
    let Reply::Int(count) = execute(&ns, &args(&["PFCOUNT", "big"])) else {
        panic!("a count");
    };
    assert!((990_000..1_010_000).contains(&count), "{count}");
}
