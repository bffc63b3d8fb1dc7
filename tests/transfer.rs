//! A namespace moved to another store (a cluster slot's migration): the target, given
//! the source's export and then the namespace's writes from the source's log
//! (`Store::export_ns`, `Store::ns_changes`, `Store::import_ns`), answers every read of
//! the namespace as the source does, whatever it had cached, flushed, compacted or
//! reopened in between; nothing of other namespaces travels; the source drops the
//! namespace with `Store::drop_ns`, and its other namespaces are untouched. The same
//! holds when writers (deletes, re-creations and expiries among their writes) run
//! while the export and the shipments do: the snapshot's sequence number splits the
//! writes exactly. A chunk that writes outside the namespace is refused whole.

mod common;

use common::args;
use rand::{rngs::StdRng, Rng, SeedableRng};
use rocksketch::command::{execute, Reply};
use rocksketch::{Store, StoreOptions};

/// The namespace moved, and one beside it that stays.
const MOVED: u16 = 0x8000 + 5;
const STAYS: u16 = 0x8000 + 6;

const KEYS: &[&str] = &["bf", "cf", "cms", "tk", "td"];

fn run(store: &Store, ns: u16, words: &[&str]) -> Reply {
    execute(&store.ns(ns), &args(words))
}

fn create(store: &Store, ns: u16) {
    run(store, ns, &["BF.RESERVE", "bf", "0.01", "100"]);
    run(store, ns, &["CF.RESERVE", "cf", "64"]);
    run(store, ns, &["CMS.INITBYDIM", "cms", "300", "4"]);
    run(store, ns, &["TOPK.RESERVE", "tk", "5", "50", "4", "0.9"]);
    run(store, ns, &["TDIGEST.CREATE", "td"]);
}

fn write(store: &Store, ns: u16, rng: &mut StdRng) {
    let item = rng.gen_range(0..400).to_string();
    let _ = match rng.gen_range(0..100) {
        0..=24 => run(store, ns, &["BF.ADD", "bf", &item]),
        25..=39 => run(store, ns, &["CF.ADD", "cf", &item]),
        40..=44 => run(store, ns, &["CF.DEL", "cf", &item]),
        45..=64 => run(store, ns, &["CMS.INCRBY", "cms", &item, "2"]),
        65..=74 => run(store, ns, &["TOPK.ADD", "tk", &item]),
        75..=89 => run(store, ns, &["TDIGEST.ADD", "td", &item]),
        90..=94 => run(store, ns, &["DEL", KEYS[rng.gen_range(0..KEYS.len())]]),
        _ => {
            create(store, ns);
            Reply::Nil
        }
    };
}

/// What a reader of namespace `ns` may ask.
fn answers(store: &Store, ns: u16) -> Vec<Reply> {
    let mut out = vec![run(
        store,
        ns,
        &["TDIGEST.QUANTILE", "td", "0", "0.5", "0.9", "1"],
    )];
    for info in [
        "BF.CARD bf",
        "CF.INFO cf",
        "CMS.INFO cms",
        "TOPK.LIST tk WITHCOUNT",
    ] {
        out.push(run(store, ns, &info.split(' ').collect::<Vec<_>>()));
    }
    for item in (0..400).step_by(9).map(|i| i.to_string()) {
        out.push(run(store, ns, &["BF.EXISTS", "bf", &item]));
        out.push(run(store, ns, &["CF.COUNT", "cf", &item]));
        out.push(run(store, ns, &["CMS.QUERY", "cms", &item]));
    }
    out.push(Reply::Int(store.ns(ns).counts().unwrap().0 as i64));
    out
}

/// Sends the namespace's writes after `after` to the target; the new position.
fn ship(source: &Store, target: &Store, after: u64) -> u64 {
    let upto = source.latest_sequence().unwrap();
    let mut at = after;
    while at < upto {
        let batches = source.updates_since(at, 4096).unwrap();
        let Some((first, data)) = batches.last() else {
            break;
        };
        let count = u32::from_le_bytes(data[8..12].try_into().unwrap());
        for chunk in source.ns_changes(MOVED, &batches, upto, 4096).unwrap() {
            target.import_ns(MOVED, &chunk).unwrap();
        }
        at = first + u64::from(count) - 1;
    }
    upto
}

fn migrate(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let source = Store::open(dir.path().join("source"), StoreOptions::default()).unwrap();
    let mut target = Store::open(dir.path().join("target"), StoreOptions::default()).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    for ns in [MOVED, STAYS] {
        create(&source, ns);
    }
    // Stale records and caches of the namespace on the target go first.
    create(&target, MOVED);
    answers(&target, MOVED);
    target.drop_ns(MOVED).unwrap();
    assert_eq!(target.ns(MOVED).counts().unwrap().0, 0);
    for _ in 0..200 {
        write(&source, MOVED, &mut rng);
        write(&source, STAYS, &mut rng);
    }
    if seed.is_multiple_of(2) {
        source.compact().unwrap();
    }
    let mut chunks = 0;
    let mut after = source
        .export_ns(MOVED, 4096, |chunk| {
            chunks += 1;
            target.import_ns(MOVED, &chunk).map(|_| ())
        })
        .unwrap();
    assert!(chunks > 1, "chunked at about 4 KiB");
    for step in 0..30 {
        for _ in 0..rng.gen_range(1..30) {
            write(&source, MOVED, &mut rng);
            write(&source, STAYS, &mut rng);
        }
        // The target read first, so that its caches hold what the shipment changes.
        answers(&target, MOVED);
        let expected = answers(&source, MOVED);
        after = ship(&source, &target, after);
        assert_eq!(
            answers(&target, MOVED),
            expected,
            "seed {seed}, step {step}"
        );
        match rng.gen_range(0..8) {
            0 => {
                drop(target);
                target = Store::open(dir.path().join("target"), StoreOptions::default()).unwrap();
            }
            1 => target.flush().unwrap(),
            2 => target.compact().unwrap(),
            3 => source.compact().unwrap(),
            _ => {}
        }
    }
    assert_eq!(
        target.ns(STAYS).counts().unwrap().0,
        0,
        "nothing else travels"
    );
    let stays = answers(&source, STAYS);
    source.drop_ns(MOVED).unwrap();
    assert_eq!(source.ns(MOVED).counts().unwrap().0, 0);
    for key in KEYS {
        assert!(!source.ns(MOVED).exists(key.as_bytes()).unwrap(), "{key}");
    }
    assert_eq!(
        answers(&source, STAYS),
        stays,
        "the other namespace is untouched"
    );
    source.compact().unwrap();
    assert_eq!(answers(&source, STAYS), stays);
}

#[test]
fn a_moved_namespace_answers_as_it_did() {
    for seed in 1..=4 {
        migrate(seed);
    }
}

/// Exports and ships while three writers write; the answers once they are done.
fn migrate_while_written(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let options = || StoreOptions {
        // Small memtables: flushes (which make logs obsolete) while the logs are read.
        write_buffer_bytes: 256 << 10,
        ..StoreOptions::default()
    };
    let source = Store::open(dir.path().join("source"), options()).unwrap();
    let target = Store::open(dir.path().join("target"), options()).unwrap();
    create(&source, MOVED);
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let source = source.clone();
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed * 10 + w);
                for _ in 0..6000 {
                    write(&source, MOVED, &mut rng);
                    write(&source, STAYS, &mut rng);
                    if rng.gen_ratio(1, 50) {
                        // An expiry in the past: the key reads as gone, the sweep drops it.
                        let key = KEYS[rng.gen_range(0..KEYS.len())].as_bytes();
                        source.ns(MOVED).expire_at(key, 1).unwrap();
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let held = source.hold_logs().unwrap();
    let mut after = source
        .export_ns(MOVED, 2048, |chunk| {
            target.import_ns(MOVED, &chunk).map(|_| ())
        })
        .unwrap();
    let mut rounds = 0;
    while !writers.iter().all(|w| w.is_finished()) {
        rounds += 1;
        after = ship(&source, &target, after);
        if seed.is_multiple_of(2) {
            source.sweep_expired(None, 1000).unwrap();
        }
    }
    assert!(rounds > 1, "shipped while written");
    for writer in writers {
        writer.join().unwrap();
    }
    let expected = answers(&source, MOVED);
    ship(&source, &target, after);
    drop(held);
    assert_eq!(answers(&target, MOVED), expected, "seed {seed}");
}

#[test]
fn a_namespace_moved_while_written_answers_as_it_did() {
    for seed in 1..=6 {
        migrate_while_written(seed);
    }
}

#[test]
fn writes_outside_the_namespace_are_refused_whole() {
    use rocksketch_merge::transfer::{begin, Family, Op};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let before = store.latest_sequence().unwrap();
    let inside = [&MOVED.to_be_bytes()[..], b"k"].concat();
    let outside = [&STAYS.to_be_bytes()[..], b"k"].concat();
    let beyond = [&STAYS.to_be_bytes()[..], b"z"].concat();
    for bad in [
        Op::Put(Family::Meta, &outside, b"v"),
        Op::Delete(Family::Pages, &outside),
        Op::DeleteRange(Family::Pages, &inside, &beyond),
        Op::DeleteRange(Family::Meta, b"", &inside),
        Op::Merge(Family::Pages, &MOVED.to_be_bytes()[..1], b"v"),
    ] {
        let mut chunk = begin();
        Op::Put(Family::Meta, &inside, b"v").encode_into(&mut chunk);
        bad.encode_into(&mut chunk);
        assert!(store.import_ns(MOVED, &chunk).is_err(), "{bad:?}");
    }
    assert!(
        store.import_ns(MOVED, &[2, 0, 0]).is_err(),
        "an unknown version"
    );
    assert!(
        store.import_ns(u16::MAX, &begin()).is_err(),
        "the store's own"
    );
    assert_eq!(store.latest_sequence().unwrap(), before, "nothing written");
}
