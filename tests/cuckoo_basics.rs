//! Cuckoo filters through the command layer and the library: every `CF.*` command and
//! error with RedisBloom's replies, growth, the limits of a chain, overfilling without
//! loss, 16-bit fingerprints (dump and restore: `dump_and_sizing.rs`).

mod common;

use rocksketch::command::{execute, Reply};
use rocksketch::{CuckooError, CuckooOptions, Error};

fn run(ns: &rocksketch::Namespace, words: &[&str]) -> Reply {
    execute(ns, &common::args(words))
}

fn err(text: &str) -> Reply {
    Reply::Error(text.to_owned())
}

#[test]
fn every_command_and_its_errors() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let ok = Reply::ok();
    assert_eq!(
        run(&ns, &["CF.RESERVE", "cf", "1000", "BUCKETSIZE", "4"]),
        ok
    );
    assert_eq!(run(&ns, &["CF.ADD", "cf", "a"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.ADD", "cf", "a"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.COUNT", "cf", "a"]), Reply::Int(2));
    assert_eq!(run(&ns, &["CF.ADDNX", "cf", "a"]), Reply::Bool(false));
    assert_eq!(run(&ns, &["CF.ADDNX", "cf", "b"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.EXISTS", "cf", "b"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.EXISTS", "cf", "never"]), Reply::Bool(false));
    assert_eq!(
        run(&ns, &["CF.MEXISTS", "cf", "a", "never", "b"]),
        Reply::Array(vec![
            Reply::Bool(true),
            Reply::Bool(false),
            Reply::Bool(true)
        ])
    );
    assert_eq!(run(&ns, &["CF.DEL", "cf", "a"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.COUNT", "cf", "a"]), Reply::Int(1));
    assert_eq!(run(&ns, &["CF.DEL", "cf", "never"]), Reply::Bool(false));
    let info = |n: &str, v: i64| (Reply::Simple(n.to_owned()), Reply::Int(v));
    assert_eq!(
        run(&ns, &["CF.INFO", "cf"]),
        Reply::Map(vec![
            // RedisBloom 2.8.2's figure for CF.RESERVE cf 1000 BUCKETSIZE 4 (asked live).
            info("Size", 1080),
            info("Number of buckets", 256),
            info("Number of filters", 1),
            info("Number of items inserted", 2),
            info("Number of items deleted", 1),
            info("Bucket size", 4),
            info("Expansion rate", 1),
            info("Max iterations", 20),
        ])
    );
    // Missing keys: reads answer 0, DEL and INFO are errors, ADD creates.
    assert_eq!(run(&ns, &["CF.EXISTS", "none", "a"]), Reply::Bool(false));
    assert_eq!(run(&ns, &["CF.COUNT", "none", "a"]), Reply::Int(0));
    assert_eq!(
        run(&ns, &["CF.MEXISTS", "none", "a"]),
        Reply::Array(vec![Reply::Bool(false)])
    );
    assert_eq!(run(&ns, &["CF.DEL", "none", "a"]), err("Not found"));
    assert_eq!(run(&ns, &["CF.INFO", "none"]), err("ERR not found"));
    assert_eq!(run(&ns, &["CF.ADD", "auto", "x"]), Reply::Bool(true));
    let Reply::Map(auto) = run(&ns, &["CF.INFO", "auto"]) else {
        panic!()
    };
    assert_eq!(auto[0], info("Size", 1080));
    assert_eq!(auto[1], info("Number of buckets", 512));
    assert_eq!(auto[5], info("Bucket size", 2));
    // INSERT and INSERTNX.
    assert_eq!(
        run(
            &ns,
            &[
                "CF.INSERT",
                "ins",
                "CAPACITY",
                "100",
                "ITEMS",
                "x",
                "y",
                "x"
            ]
        ),
        Reply::Array(vec![Reply::Bool(true); 3])
    );
    assert_eq!(
        run(&ns, &["CF.INSERTNX", "ins", "ITEMS", "x", "z"]),
        Reply::Array(vec![Reply::Int(0), Reply::Int(1)])
    );
    assert_eq!(
        run(&ns, &["CF.INSERT", "nokey", "NOCREATE", "ITEMS", "x"]),
        err("ERR not found")
    );
    assert_eq!(
        run(&ns, &["CF.INSERT", "ins", "BOGUS", "red", "ITEMS", "x"]),
        err("Unknown argument received")
    );
    // RedisBloom tells CF.INSERT's option words by their first letters.
    assert_eq!(
        run(&ns, &["CF.INSERT", "ins", "COLOUR", "red", "ITEMS", "x"]),
        err("Bad capacity")
    );
    assert_eq!(
        run(&ns, &["CF.INSERT", "ins", "cap", "1", "ITEMS", "x"]),
        err("Capacity must be in the range [cf-bucket-size * 2, 1073741824]")
    );
    assert_eq!(
        run(&ns, &["CF.INSERT", "nokey", "N", "i", "x"]),
        err("ERR not found")
    );
    assert_eq!(
        run(&ns, &["CF.INSERT", "ins", "CAPACITY", "many", "ITEMS", "x"]),
        err("Bad capacity")
    );
    assert_eq!(
        run(&ns, &["CF.INSERT", "ins", "ITEMS"]),
        err("ERR wrong number of arguments for 'cf.insert' command")
    );
    // The cuckoo-module design's short form: one item, answered as CF.ADD, the filter
    // created with defaults when missing.
    assert_eq!(run(&ns, &["CF.INSERT", "short", "x"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.EXISTS", "short", "x"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.DELETE", "short", "x"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.DELETE", "short", "x"]), Reply::Bool(false));
    assert_eq!(
        run(&ns, &["CF.STATS", "short"]),
        run(&ns, &["CF.INFO", "short"])
    );
    assert_eq!(
        run(&ns, &["CF.DELETE", "short"]),
        err("ERR wrong number of arguments for 'cf.delete' command")
    );
    // RESERVE's checks, in RedisBloom's order.
    for (words, reply) in [
        (&["CF.RESERVE", "cf", "1000"][..], "ERR item exists"),
        (&["CF.RESERVE", "r", "lots"], "Bad capacity"),
        (
            &["CF.RESERVE", "r", "3"],
            "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]",
        ),
        (
            &["CF.RESERVE", "r", "2000000000"],
            "Capacity must be in the range [2 * BUCKETSIZE, 1073741824]",
        ),
        (
            &["CF.RESERVE", "r", "100", "BUCKETSIZE", "x"],
            "Couldn't parse BUCKETSIZE",
        ),
        (
            &["CF.RESERVE", "r", "100", "BUCKETSIZE", "256"],
            "BUCKETSIZE: value must be in the range [1, 255]",
        ),
        (
            &["CF.RESERVE", "r", "100", "MAXITERATIONS", "x"],
            "Couldn't parse MAXITERATIONS",
        ),
        (
            &["CF.RESERVE", "r", "100", "MAXITERATIONS", "0"],
            "MAXITERATIONS: value must be in the range [1, 65535]",
        ),
        (
            &["CF.RESERVE", "r", "100", "EXPANSION", "x"],
            "Couldn't parse EXPANSION",
        ),
        (
            &["CF.RESERVE", "r", "100", "EXPANSION", "32769"],
            "EXPANSION: value must be in the range [0, 32768]",
        ),
        (
            &["CF.RESERVE", "r", "100", "FINGERPRINT", "10"],
            "FINGERPRINT: value must be 8, 12 or 16",
        ),
        (
            &["CF.RESERVE", "r", "100", "BUCKETSIZE"],
            "ERR wrong number of arguments for 'cf.reserve' command",
        ),
    ] {
        assert_eq!(run(&ns, words), err(reply), "{words:?}");
    }
    // Expansion is rounded up to a power of two.
    assert_eq!(run(&ns, &["CF.RESERVE", "e", "100", "EXPANSION", "3"]), ok);
    let Reply::Map(e) = run(&ns, &["CF.INFO", "e"]) else {
        panic!()
    };
    assert_eq!(e[6], info("Expansion rate", 4));
    // Wrong types both ways.
    assert_eq!(run(&ns, &["BF.ADD", "bf", "x"]), Reply::Bool(true));
    let wrong = err("WRONGTYPE Operation against a key holding the wrong kind of value");
    assert_eq!(run(&ns, &["CF.ADD", "bf", "x"]), wrong);
    // Membership reads take another type's key for an empty filter, as RedisBloom does.
    assert_eq!(run(&ns, &["CF.EXISTS", "bf", "x"]), Reply::Bool(false));
    assert_eq!(run(&ns, &["BF.ADD", "cf", "x"]), wrong);
    assert_eq!(run(&ns, &["CMS.QUERY", "cf", "x"]), wrong);
    assert_eq!(
        t.store()
            .ns(0)
            .key_type(b"cf")
            .unwrap()
            .map(|k| k.redis_name()),
        Some("MBbloomCF")
    );
}

#[test]
fn a_chain_grows_and_every_item_stays_present() {
    let t = common::TempStore::new();
    let cf = t.store().cuckoo("grow");
    cf.reserve(CuckooOptions {
        capacity: 1000,
        bucket_size: 4,
        expansion: 2,
        ..CuckooOptions::default()
    })
    .unwrap();
    let items: Vec<String> = (0..50_000).map(|i| format!("item-{i}")).collect();
    for item in &items {
        cf.add(item).unwrap();
    }
    let info = cf.info().unwrap();
    assert!(info.filters > 5, "{info:?}");
    assert_eq!(info.inserted, 50_000);
    assert!(cf.mexists(&items).unwrap().iter().all(|f| *f));
    t.store().compact().unwrap();
    assert!(cf.mexists(&items).unwrap().iter().all(|f| *f));
    let subs = cf.occupancy().unwrap();
    assert_eq!(subs.len() as u32, info.filters);
    let held: u64 = subs
        .iter()
        .map(|(_, filled, stashed)| filled + stashed)
        .sum();
    assert_eq!(held, 50_000);
    // Every full sub-filter reached its load target, with next to nothing stashed.
    for (slots, filled, stashed) in &subs[..subs.len() - 1] {
        assert!(
            *filled as f64 >= 0.92 * *slots as f64,
            "{filled} of {slots}"
        );
        assert!(*stashed * 1000 <= *filled, "{stashed} stashed");
    }
}

#[test]
fn limits_of_a_chain() {
    let t = common::TempStore::new();
    // EXPANSION 0: the filter is full at its load target.
    let fixed = t.store().cuckoo("fixed");
    fixed
        .reserve(CuckooOptions {
            capacity: 100,
            expansion: 0,
            ..CuckooOptions::default()
        })
        .unwrap();
    let mut added = 0;
    let full = loop {
        match fixed.add(format!("i{added}")) {
            Ok(()) => added += 1,
            Err(e) => break e,
        }
    };
    assert!(
        matches!(full, Error::Cuckoo(CuckooError::FilterFull)),
        "{full}"
    );
    assert_eq!(full.to_string(), "Filter is full");
    // 64 buckets of 2 slots, filled to 84 %.
    assert_eq!(added, 107);
    assert_eq!(
        fixed
            .insert(&["late", "later"], None, false, false)
            .unwrap(),
        vec![-1, -1]
    );
    for i in 0..added {
        assert!(fixed.exists(format!("i{i}")).unwrap());
    }
    // Growth stops at 32 sub-filters.
    let small = t.store().cuckoo("small");
    small
        .reserve(CuckooOptions {
            capacity: 4,
            expansion: 1,
            ..CuckooOptions::default()
        })
        .unwrap();
    let mut n = 0;
    let last = loop {
        match small.add(format!("s{n}")) {
            Ok(()) => n += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(last.to_string(), "Maximum expansions reached");
    assert_eq!(small.info().unwrap().filters, 32);
    assert!(small
        .mexists(&(0..n).map(|i| format!("s{i}")).collect::<Vec<_>>())
        .unwrap()
        .iter()
        .all(|f| *f));
}

#[test]
fn wider_fingerprints_cut_false_positives() {
    let t = common::TempStore::new();
    let rate = |fp_bits: u8| {
        let cf = t.store().cuckoo(format!("fp{fp_bits}"));
        cf.reserve(CuckooOptions {
            capacity: 20_000,
            bucket_size: 4,
            fp_bits,
            ..CuckooOptions::default()
        })
        .unwrap();
        let items: Vec<String> = (0..15_000).map(|i| format!("in-{i}")).collect();
        for item in &items {
            cf.add(item).unwrap();
        }
        assert!(cf.mexists(&items).unwrap().iter().all(|f| *f));
        let absent: Vec<String> = (0..50_000).map(|i| format!("out-{i}")).collect();
        let hits = cf.mexists(&absent).unwrap().iter().filter(|f| **f).count();
        hits as f64 / absent.len() as f64
    };
    let (eight, twelve, sixteen) = (rate(8), rate(12), rate(16));
    // Bound 2b / 2^f at this load: 8 / 255, 8 / 4095 and 8 / 65535.
    assert!(eight < 8.0 / 255.0 * 1.1, "{eight}");
    assert!(twelve < 8.0 / 4095.0 * 1.1, "{twelve}");
    assert!(sixteen < 0.001, "{sixteen}");
    assert!(twelve * 5.0 < eight, "{twelve} vs {eight}");
    assert!(sixteen < twelve, "{sixteen} vs {twelve}");
}

/// The batch that combined `CF.ADDNX`s run as answers as if the items went one by one:
/// a repeat within the batch is present, across a chain that grows mid-batch too.
#[test]
fn add_nx_many_answers_repeats_within_the_batch_as_present() {
    let t = common::TempStore::new();
    let cf = t.store().cuckoo("nx");
    cf.reserve(CuckooOptions {
        capacity: 64,
        bucket_size: 2,
        fp_bits: 16,
        ..CuckooOptions::default()
    })
    .unwrap();
    let (added, error) = cf.add_nx_many(&["a", "b", "a", "c", "b"]);
    assert!(error.is_none());
    assert_eq!(added, vec![true, true, false, true, false]);
    // Past the target: the rest go one by one and the chain grows.
    let items: Vec<String> = (0..300).map(|i| format!("i{}", i % 150)).collect();
    let (added, error) = cf.add_nx_many(&items);
    assert!(error.is_none());
    assert_eq!(added.iter().filter(|a| **a).count(), 150);
    assert!(added[150..].iter().all(|a| !a));
    assert!(cf.info().unwrap().filters > 1);
    for i in 0..150 {
        assert_eq!(cf.count(format!("i{i}")).unwrap(), 1);
    }
}

/// A 12-bit filter through every item command, and the design's command names.
#[test]
fn twelve_bit_filters_answer_every_command() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let ok = Reply::ok();
    assert_eq!(
        run(
            &ns,
            &[
                "CF.RESERVE",
                "c",
                "64",
                "BUCKETSIZE",
                "2",
                "FINGERPRINT",
                "12",
                "EXPANSION",
                "2"
            ]
        ),
        ok
    );
    assert_eq!(
        run(&ns, &["CF.INSERT", "c", "ITEMS", "a", "b", "a"]),
        Reply::Array(vec![Reply::Bool(true); 3])
    );
    assert_eq!(
        run(&ns, &["CF.INSERTNX", "c", "ITEMS", "a", "z"]),
        Reply::Array(vec![Reply::Int(0), Reply::Int(1)])
    );
    assert_eq!(run(&ns, &["CF.ADDNX", "c", "b"]), Reply::Bool(false));
    assert_eq!(run(&ns, &["CF.COUNT", "c", "a"]), Reply::Int(2));
    assert_eq!(run(&ns, &["CF.INSERT", "c", "y"]), Reply::Bool(true));
    assert_eq!(
        run(&ns, &["CF.MEXISTS", "c", "a", "b", "z", "y", "never"]),
        Reply::Array(vec![
            Reply::Bool(true),
            Reply::Bool(true),
            Reply::Bool(true),
            Reply::Bool(true),
            Reply::Bool(false)
        ])
    );
    assert_eq!(run(&ns, &["CF.DELETE", "c", "a"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.DEL", "c", "a"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.EXISTS", "c", "a"]), Reply::Bool(false));
    // Past its capacity the chain grows and keeps every item.
    for i in 0..500 {
        assert_eq!(
            run(&ns, &["CF.ADD", "c", &format!("i{i}")]),
            Reply::Bool(true)
        );
    }
    for i in 0..500 {
        assert_eq!(
            run(&ns, &["CF.EXISTS", "c", &format!("i{i}")]),
            Reply::Bool(true),
            "i{i}"
        );
    }
    let Reply::Map(info) = run(&ns, &["CF.STATS", "c"]) else {
        panic!()
    };
    assert_eq!(Reply::Map(info.clone()), run(&ns, &["CF.INFO", "c"]));
    assert!(matches!(info[2].1, Reply::Int(n) if n > 1), "{info:?}");
}

/// `CF.INFO`'s `Size` is RedisBloom's accounting for every chain length: 2.8.2 answered
/// 62 for `CF.RESERVE c 7 BUCKETSIZE 3 EXPANSION 3` and 214 once 41 adds had grown it to
/// three sub-filters (2, 8 and 32 buckets of 3 slots: 40 + 3 x 16 + 126).
#[test]
fn cf_info_size_is_redisblooms_for_grown_chains() {
    use rocksketch_merge::layout::cuckoo::CuckooChain;
    let chain = CuckooChain::sized(7, 3, 3, 8, 4096);
    assert_eq!(chain.redisbloom_size(1), 62);
    assert_eq!(chain.redisbloom_size(3), 214);
    assert_eq!(
        CuckooChain::sized(100, 2, 1, 8, 4096).redisbloom_size(1),
        184
    );
}
