//! Formats are forever, for windowed keys: `tests/fixtures/format-window-2026-12` holds
//! a windowed count-min sketch, Bloom filter and cuckoo filter (metadata format 2,
//! which carries the window; pages under their generation's prefix), as compacted
//! pages, operands in an L0 file and operands only in the WAL. It must read like a
//! fresh store that ran the same operations. The window (2^41 ms in two slices) keeps
//! the generation written in 2026 live until about 2074.
//!
//! Regenerate it only when adding a format version (keeping the old fixture):
//! `cargo test --test format_fixture_window -- --ignored write_fixture`.

mod common;

use rocksketch::{CuckooOptions, Store, Window};
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format-window-2026-12")
}

fn window() -> Window {
    Window::new(1 << 41, 2).unwrap()
}

fn phase(store: &Store, n: u32) {
    if n == 0 {
        store
            .cms("cms")
            .init_by_dim_windowed(500, 4, window())
            .unwrap();
        store
            .bloom("bf")
            .reserve_windowed(0.01, 1000, 2, window())
            .unwrap();
        let options = CuckooOptions {
            capacity: 1000,
            ..CuckooOptions::default()
        };
        store
            .cuckoo("cf")
            .reserve_windowed(options, window())
            .unwrap();
    }
    let items: Vec<String> = (0..200).map(|i| format!("p{n}-{i}")).collect();
    let pairs: Vec<(&String, u64)> = items.iter().map(|i| (i, u64::from(n) + 1)).collect();
    store.cms("cms").incr_by(&pairs).unwrap();
    store.bloom("bf").add_blind(&items).unwrap();
    for item in &items[..50] {
        store.cuckoo("cf").add(item).unwrap();
    }
}

type Answers = (Vec<u32>, Vec<bool>, Vec<u64>, u64, u64);

fn answers(store: &Store) -> Answers {
    let all: Vec<String> = (0..3)
        .flat_map(|n| (0..200).map(move |i| format!("p{n}-{i}")))
        .collect();
    let cuckoo = store.cuckoo("cf");
    (
        store.cms("cms").query(&all).unwrap(),
        store.bloom("bf").mexists(&all).unwrap(),
        all.iter().map(|i| cuckoo.count(i).unwrap()).collect(),
        store.cms("cms").info().unwrap().count,
        store.bloom("bf").card().unwrap(),
    )
}

#[test]
fn the_fixture_reads_like_a_fresh_store() {
    let fixture = common::Fixture::open(&fixture(), phase);
    let got = fixture.answers(answers);
    assert!(got.0.iter().all(|c| *c >= 1) && got.1.iter().all(|f| *f));
    assert_eq!(got.3, 200 * (1 + 2 + 3));
    assert_eq!(got.4, 600);
    let meta = fixture.old.bloom("bf").window_info().unwrap().unwrap();
    assert_eq!(meta.window, window());
    fixture.compacts_to(&got, answers);
}

#[test]
#[ignore = "writes the fixture; run only when adding a format version"]
fn write_fixture() {
    common::write_fixture(&fixture(), phase);
}
