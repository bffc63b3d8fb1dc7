//! A replica that starts from a checkpoint of the primary and applies the primary's
//! write batches (`Store::updates_since`, `Store::apply_replicated`) answers every read
//! as the primary does, after every shipment, whatever its caches held: random writes
//! of every family, deletes, re-creations and `CMS.MERGE`, with the replica read between
//! shipments (so its hot pages and metadata are cached when the batches land), reopened,
//! flushed and compacted on the way. Its sequence number is the primary's offset.

mod common;

use common::args;
use rand::{rngs::StdRng, Rng, SeedableRng};
use rocksketch::command::{execute, Reply};
use rocksketch::{Store, StoreOptions};

const BLOOMS: &[&str] = &["bf0", "bf1"];
const CUCKOOS: &[&str] = &["cf0", "cf1"];
const SKETCHES: &[&str] = &["cms0", "cms1", "cms2"];

fn run(store: &Store, words: &[&str]) -> Reply {
    execute(&store.ns(0), &args(words))
}

/// Opens the replica's directory as a replica.
fn open_replica(dir: &std::path::Path) -> Store {
    let replica = Store::open(dir, StoreOptions::default()).unwrap();
    replica.set_replica(true).unwrap();
    replica
}

fn create_all(store: &Store) {
    for key in SKETCHES {
        run(store, &["CMS.INITBYDIM", key, "200", "3"]);
    }
    run(store, &["TOPK.RESERVE", "tk", "5", "50", "4", "0.9"]);
    run(store, &["TDIGEST.CREATE", "td", "COMPRESSION", "50"]);
}

/// One random write to the primary.
fn write(store: &Store, rng: &mut StdRng) {
    let item = rng.gen_range(0..300).to_string();
    let pick = |rng: &mut StdRng, keys: &[&'static str]| keys[rng.gen_range(0..keys.len())];
    match rng.gen_range(0..100) {
        0..=24 => run(store, &["BF.ADD", pick(rng, BLOOMS), &item]),
        25..=39 => run(store, &["CF.ADD", pick(rng, CUCKOOS), &item]),
        40..=44 => run(store, &["CF.DEL", pick(rng, CUCKOOS), &item]),
        45..=64 => run(store, &["CMS.INCRBY", pick(rng, SKETCHES), &item, "3"]),
        65..=74 => run(store, &["TOPK.ADD", "tk", &item]),
        75..=84 => run(store, &["TDIGEST.ADD", "td", &item]),
        85..=88 => run(store, &["CMS.MERGE", "cms0", "2", "cms1", "cms2"]),
        89..=93 => {
            let keys = [BLOOMS, CUCKOOS, SKETCHES, &["tk", "td"]].concat();
            run(store, &["DEL", pick(rng, &keys)])
        }
        _ => {
            create_all(store);
            Reply::Nil
        }
    };
}

fn info_family(key: &str) -> &'static str {
    match key.trim_end_matches(char::is_numeric) {
        "bf" => "BF",
        "cf" => "CF",
        "cms" => "CMS",
        "tk" => "TOPK",
        _ => "TDIGEST",
    }
}

/// Everything a reader may ask, in one list.
fn answers(store: &Store) -> Vec<Reply> {
    // First the read that may compress (and so change) the primary's t-digest.
    let mut out = vec![run(
        store,
        &["TDIGEST.QUANTILE", "td", "0", "0.25", "0.5", "0.99", "1"],
    )];
    let all = [BLOOMS, CUCKOOS, SKETCHES, &["tk", "td"]].concat();
    for key in &all {
        out.push(run(store, &[&format!("{}.INFO", info_family(key)), key]));
    }
    for item in (0..300).step_by(7).map(|i| i.to_string()) {
        for key in BLOOMS {
            out.push(run(store, &["BF.EXISTS", key, &item]));
        }
        for key in CUCKOOS {
            out.push(run(store, &["CF.COUNT", key, &item]));
        }
        for key in SKETCHES {
            out.push(run(store, &["CMS.QUERY", key, &item]));
        }
    }
    for key in BLOOMS {
        out.push(run(store, &["BF.CARD", key]));
    }
    for key in CUCKOOS {
        out.push(run(store, &["CF.INFO", key]));
    }
    out.push(run(store, &["TOPK.LIST", "tk", "WITHCOUNT"]));
    out
}

/// Ships every batch after `offset` to the replica; returns the new offset.
fn ship(primary: &Store, replica: &Store, mut offset: u64) -> u64 {
    loop {
        let updates = primary.updates_since(offset, 64).unwrap();
        if updates.is_empty() {
            return offset;
        }
        for (sequence, data) in updates {
            assert_eq!(
                sequence,
                offset + 1,
                "batches arrive in order, none missing"
            );
            replica.apply_replicated(&data).unwrap();
            let count = u32::from_le_bytes(data[8..12].try_into().unwrap());
            offset = sequence + u64::from(count) - 1;
            assert_eq!(
                replica.latest_sequence().unwrap(),
                offset,
                "the offset is the sequence"
            );
        }
    }
}

fn replicate(seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let primary = Store::open(dir.path().join("primary"), StoreOptions::default()).unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    create_all(&primary);
    for _ in 0..50 {
        write(&primary, &mut rng);
    }
    let copy = dir.path().join("replica");
    primary.checkpoint(&copy).unwrap();
    let mut replica = open_replica(&copy);
    let mut offset = replica.latest_sequence().unwrap();
    // The primary first: its t-digest reads store compress operands, shipped with the
    // rest (a replica stores none of its own).
    let expected = answers(&primary);
    offset = ship(&primary, &replica, offset);
    assert_eq!(answers(&replica), expected, "the checkpoint");

    for step in 0..40 {
        for _ in 0..rng.gen_range(1..40) {
            write(&primary, &mut rng);
        }
        offset = ship(&primary, &replica, offset);
        // The replica read with its caches full, then the primary's reads shipped too.
        let (read_first, expected) = (answers(&replica), answers(&primary));
        offset = ship(&primary, &replica, offset);
        assert_eq!(answers(&replica), expected, "seed {seed}, step {step}");
        if read_first != expected {
            // Only the t-digest's INFO may differ before the primary's read is shipped
            // (its merged and unmerged nodes: the answers from it are the same).
            let diff = read_first
                .iter()
                .zip(&expected)
                .filter(|(a, b)| a != b)
                .count();
            assert!(diff <= 1, "seed {seed}, step {step}: {diff} answers differ");
        }
        match rng.gen_range(0..10) {
            0 => {
                drop(replica);
                replica = open_replica(&copy);
                assert_eq!(
                    replica.latest_sequence().unwrap(),
                    offset,
                    "kept across a reopen"
                );
            }
            1 => replica.flush().unwrap(),
            2 => replica.compact().unwrap(),
            3 => primary.compact().unwrap(),
            4 => {
                // Its own writes are refused, and write nothing.
                let refused = run(&replica, &["BF.ADD", "bf0", "mine"]);
                assert_eq!(
                    refused,
                    Reply::Error("READONLY You can't write against a read only replica.".into())
                );
                assert_eq!(replica.latest_sequence().unwrap(), offset);
            }
            _ => {}
        }
    }
    assert_eq!(replica.skipped_operands(), 0);
}

#[test]
fn a_replica_answers_as_its_primary() {
    for seed in 1..=4 {
        replicate(seed);
    }
}

#[test]
fn a_batch_that_does_not_decode_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let primary = Store::open(dir.path().join("primary"), StoreOptions::default()).unwrap();
    let copy = dir.path().join("replica");
    primary.checkpoint(&copy).unwrap();
    let replica = open_replica(&copy);
    let offset = replica.latest_sequence().unwrap();
    run(&primary, &["BF.ADD", "bf", "a"]);
    let (_, data) = primary.updates_since(offset, 1).unwrap().remove(0);
    for cut in [0, 5, 12, data.len() - 1] {
        assert!(
            replica.apply_replicated(&data[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    let mut forged = data.clone();
    forged[12] = 0x42;
    assert!(replica.apply_replicated(&forged).is_err());
    assert_eq!(
        replica.latest_sequence().unwrap(),
        offset,
        "nothing written"
    );
    assert_eq!(run(&replica, &["BF.EXISTS", "bf", "a"]), Reply::Bool(false));
    replica.apply_replicated(&data).unwrap();
    assert_eq!(run(&replica, &["BF.EXISTS", "bf", "a"]), Reply::Bool(true));
}
