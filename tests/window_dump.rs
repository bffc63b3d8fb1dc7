//! `SCANDUMP`/`LOADCHUNK` of windowed filters: the dump carries the window and each
//! live generation with its time, so the copy answers as the original at every time
//! after (the same items found, counted, and forgotten when the original forgets them);
//! a dump that a slice boundary overtakes is refused and starts again; chunks of one
//! kind of filter do not load into the other; damaged headers are refused whole.

mod common;

use common::{dump_chunks, TempStore};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rocksketch::{Clock, CuckooOptions, Store, StoreOptions, Window};

const START: u64 = 1_700_000_000_000;
const WINDOW: Window = Window {
    ms: 8_000,
    slices: 4,
};

fn store(clock: &Clock) -> TempStore {
    TempStore::with_options(StoreOptions {
        clock: clock.clone(),
        // Small pages: a filter of many pages, some never written.
        page_bytes: 512,
        ..StoreOptions::default()
    })
}

fn items(range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|i| format!("item-{i}")).collect()
}

/// A store whose windowed Bloom filter "bf" and cuckoo filter "cf" (8 s windows of 4
/// slices) took 100 and 20 items a second for 10 seconds, and its clock.
fn filled() -> (Clock, TempStore) {
    let clock = Clock::manual(START);
    let t = store(&clock);
    let s = t.store();
    s.bloom("bf")
        .reserve_windowed(0.001, 5_000, 2, WINDOW)
        .unwrap();
    let fp16 = CuckooOptions {
        capacity: 2_000,
        fp_bits: 16,
        ..CuckooOptions::default()
    };
    s.cuckoo("cf").reserve_windowed(fp16, WINDOW).unwrap();
    fill(s, &clock);
    (clock, t)
}

fn fill(store: &Store, clock: &Clock) {
    for second in 0..10u32 {
        let batch = items(second * 100..second * 100 + 100);
        store.bloom("bf").add_blind(&batch).unwrap();
        for item in &batch[..20] {
            store.cuckoo("cf").add(item).unwrap();
        }
        clock.advance(1000);
    }
}

#[test]
fn a_restored_window_answers_as_the_original_at_every_time_after() {
    let (clock, t) = filled();
    let s = t.store();
    let bf_chunks = dump_chunks(|c| s.bloom("bf").scandump(c));
    let cf_chunks = dump_chunks(|c| s.cuckoo("cf").scandump(c));
    assert!(bf_chunks.len() > 2 && cf_chunks.len() > 2);
    for (cursor, chunk) in &bf_chunks {
        s.bloom("bf copy").loadchunk(*cursor, chunk).unwrap();
    }
    for (cursor, chunk) in &cf_chunks {
        s.cuckoo("cf copy").loadchunk(*cursor, chunk).unwrap();
    }
    let all = items(0..1000);
    for step in 0..12 {
        let (bf, copy) = (s.bloom("bf"), s.bloom("bf copy"));
        assert_eq!(
            bf.mexists(&all).unwrap(),
            copy.mexists(&all).unwrap(),
            "step {step}"
        );
        assert_eq!(bf.card().unwrap(), copy.card().unwrap(), "step {step}");
        assert_eq!(bf.window_info().unwrap(), copy.window_info().unwrap());
        let (cf, cf_copy) = (s.cuckoo("cf"), s.cuckoo("cf copy"));
        for item in all.iter().step_by(10) {
            assert_eq!(cf.count(item).unwrap(), cf_copy.count(item).unwrap());
        }
        assert_eq!(cf.info().unwrap(), cf_copy.info().unwrap());
        clock.advance(1000);
    }
    // By now every generation dumped has aged out of both.
    assert!(!s.bloom("bf copy").mexists(&all).unwrap().iter().any(|f| *f));
}

#[test]
fn a_dump_overtaken_by_a_slice_boundary_starts_again() {
    let (clock, t) = filled();
    let s = t.store();
    let (cursor, _) = s.bloom("bf").scandump(0).unwrap();
    let (cursor, _) = s.bloom("bf").scandump(cursor).unwrap();
    clock.advance(WINDOW.slice_ms());
    let changed = s.bloom("bf").scandump(cursor).unwrap_err();
    assert!(changed.to_string().contains("restart"), "{changed}");
    // From the start again, it completes and loads.
    for (cursor, chunk) in dump_chunks(|c| s.bloom("bf").scandump(c)) {
        s.bloom("again").loadchunk(cursor, &chunk).unwrap();
    }
    let all = items(0..1000);
    assert_eq!(
        s.bloom("bf").mexists(&all).unwrap(),
        s.bloom("again").mexists(&all).unwrap()
    );
}

#[test]
fn windowed_and_plain_chunks_do_not_mix_and_damage_is_refused() {
    let (_clock, t) = filled();
    let s = t.store();
    s.bloom("plain").reserve(0.001, 5_000, 2).unwrap();
    s.bloom("plain").add_blind(&items(0..500)).unwrap();
    let windowed = dump_chunks(|c| s.bloom("bf").scandump(c));
    let plain = dump_chunks(|c| s.bloom("plain").scandump(c));
    // A plain header, then windowed pages: refused, nothing loaded.
    s.bloom("mixed").loadchunk(plain[0].0, &plain[0].1).unwrap();
    assert!(s
        .bloom("mixed")
        .loadchunk(windowed[1].0, &windowed[1].1)
        .is_err());
    s.bloom("mixed2")
        .loadchunk(windowed[0].0, &windowed[0].1)
        .unwrap();
    assert!(s
        .bloom("mixed2")
        .loadchunk(plain[1].0, &plain[1].1)
        .is_err());
    // Every truncation and every flipped byte of the header's payload is refused
    // (the frame's checksum is recomputed, so the payload's own checks are reached).
    let (cursor, header) = &windowed[0];
    let payload = &header[12..];
    let reframe = |p: &[u8]| {
        let mut chunk = header[..12].to_vec();
        chunk[8..12].copy_from_slice(&crc32fast::hash(p).to_le_bytes());
        chunk.extend_from_slice(p);
        chunk
    };
    let ns = s.ns(0);
    for cut in 0..payload.len() {
        assert!(s
            .bloom("cut")
            .loadchunk(*cursor, &reframe(&payload[..cut]))
            .is_err());
        assert!(
            !ns.exists(b"cut").unwrap(),
            "a cut header at {cut} created the key"
        );
    }
    // Random damage past the checksum (seeded): refused, or a filter that answers and
    // dumps again; never a panic.
    let mut rng = StdRng::seed_from_u64(9);
    for round in 0..3000 {
        let mut bad = payload.to_vec();
        for _ in 0..rng.gen_range(1..4) {
            let at = rng.gen_range(0..bad.len());
            match rng.gen_range(0..3) {
                0 => bad[at] ^= 1 << rng.gen_range(0..8),
                1 => bad[at] = rng.gen(),
                _ => bad.truncate(at),
            }
            if bad.is_empty() {
                break;
            }
        }
        if s.bloom("fuzzed").loadchunk(*cursor, &reframe(&bad)).is_ok() {
            let filter = s.bloom("fuzzed");
            filter.mexists(&items(0..50)).unwrap();
            let again = dump_chunks(|c| filter.scandump(c));
            assert!(!again.is_empty(), "round {round}");
            assert!(ns.delete(b"fuzzed").unwrap());
        }
    }
}
