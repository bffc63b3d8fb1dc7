//! Bloom filters: RedisBloom's replies and errors, growth without false negatives, and
//! the false-positive rate measured against the configured one.

mod common;

use common::args;
use rocksketch::command::{execute, Reply};
use rocksketch::{BloomError, Error};

#[test]
fn no_false_negatives_across_growth_and_reopen() {
    let mut t = common::TempStore::new();
    let f = t.store().bloom("grow");
    f.reserve(0.01, 100, 2).unwrap();
    let n = 5_000;
    let mut new = 0;
    for i in 0..n {
        new += u64::from(f.add(format!("item:{i}")).unwrap());
    }
    let info = f.info().unwrap();
    assert!(info.filters >= 5, "{info:?}");
    assert_eq!(info.items, new);
    assert_eq!(f.card().unwrap(), new);
    drop(f);
    t.reopen();
    let f = t.store().bloom("grow");
    let items: Vec<String> = (0..n).map(|i| format!("item:{i}")).collect();
    assert!(f.mexists(&items).unwrap().iter().all(|e| *e));
    t.store().compact().unwrap();
    assert!(f.mexists(&items).unwrap().iter().all(|e| *e));
}

#[test]
fn false_positive_rate_is_within_the_configured_rate() {
    for error in [0.01, 0.001] {
        let t = common::TempStore::new();
        let f = t.store().bloom("fpr");
        f.reserve(error, 20_000, 2).unwrap();
        for i in 0..20_000 {
            f.add(format!("in:{i}")).unwrap();
        }
        let absent: Vec<String> = (0..100_000).map(|i| format!("out:{i}")).collect();
        let fp = f.mexists(&absent).unwrap().iter().filter(|e| **e).count();
        let rate = fp as f64 / absent.len() as f64;
        eprintln!("error {error}: {fp} false positives in 100000 ({rate})");
        // Deterministic hashes and items: the same count every run.
        assert!(rate <= error, "rate {rate} above {error}");
    }
}

#[test]
fn nonscaling_filter_fills_up() {
    let t = common::TempStore::new();
    let f = t.store().bloom("fixed");
    f.reserve(0.01, 10, 0).unwrap();
    let mut added = 0;
    let mut full = None;
    for i in 0..100 {
        match f.add(format!("i{i}")) {
            Ok(new) => added += u64::from(new),
            Err(e) => {
                full = Some(e);
                break;
            }
        }
    }
    assert!(matches!(
        full,
        Some(Error::Bloom(BloomError::NonScalingFull))
    ));
    assert_eq!(added, 10);
    assert_eq!(f.info().unwrap().expansion, None);
}

#[test]
fn commands_follow_redisbloom() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let run = |words: &[&str]| execute(&ns, &args(words));
    let err = |text: &str| Reply::Error(text.to_owned());
    assert_eq!(
        run(&["BF.RESERVE", "b", "x", "100"]),
        err("ERR bad error rate")
    );
    assert_eq!(
        run(&["BF.RESERVE", "b", "0.01", "x"]),
        err("ERR bad capacity")
    );
    assert_eq!(
        run(&["BF.RESERVE", "b", "1.5", "100"]),
        err("ERR error rate must be in the range (0.000000, 1.000000)")
    );
    assert_eq!(
        run(&["BF.RESERVE", "b", "0.01", "0"]),
        err("ERR capacity must be in the range [1, 1073741824]")
    );
    assert_eq!(
        run(&["BF.RESERVE", "b", "0.01", "100", "EXPANSION", "x"]),
        err("ERR bad expansion")
    );
    assert_eq!(
        run(&[
            "BF.RESERVE",
            "b",
            "0.01",
            "100",
            "EXPANSION",
            "2",
            "NONSCALING"
        ]),
        err("Nonscaling filters cannot expand")
    );
    assert_eq!(run(&["BF.RESERVE", "b", "0.01", "100"]), Reply::ok());
    assert_eq!(
        run(&["BF.RESERVE", "b", "0.01", "100"]),
        err("ERR item exists")
    );
    assert_eq!(run(&["BF.ADD", "b", "a"]), Reply::Bool(true));
    assert_eq!(run(&["BF.ADD", "b", "a"]), Reply::Bool(false));
    assert_eq!(
        run(&["BF.MADD", "b", "a", "c"]),
        Reply::Array(vec![Reply::Bool(false), Reply::Bool(true)])
    );
    assert_eq!(
        run(&["BF.MEXISTS", "b", "a", "c", "zz"]),
        Reply::Array(vec![
            Reply::Bool(true),
            Reply::Bool(true),
            Reply::Bool(false)
        ])
    );
    assert_eq!(run(&["BF.EXISTS", "missing", "a"]), Reply::Bool(false));
    assert_eq!(run(&["BF.CARD", "missing"]), Reply::Int(0));
    assert_eq!(run(&["BF.CARD", "b"]), Reply::Int(2));
    assert_eq!(run(&["BF.INFO", "missing"]), err("ERR not found"));
    assert_eq!(
        run(&["BF.INFO", "b", "ITEMS"]),
        field("Number of items inserted", Reply::Int(2))
    );
    assert_eq!(
        run(&["BF.INFO", "b", "expansion"]),
        field("Expansion rate", Reply::Int(2))
    );
    let Reply::Map(fields) = run(&["BF.INFO", "b"]) else {
        panic!("BF.INFO is a map")
    };
    let names: Vec<Reply> = fields.iter().map(|(k, _)| k.clone()).collect();
    let want: Vec<Reply> = [
        "Capacity",
        "Size",
        "Number of filters",
        "Number of items inserted",
        "Expansion rate",
    ]
    .iter()
    .map(|n| Reply::Simple((*n).to_owned()))
    .collect();
    assert_eq!(names, want);
    assert_eq!(fields[0].1, Reply::Int(100));
    assert_eq!(
        run(&["BF.ADD", "b"]),
        err("ERR wrong number of arguments for 'bf.add' command")
    );
    assert_eq!(
        run(&["BF.RESERVE", "n", "0.01", "2", "NONSCALING"]),
        Reply::ok()
    );
    assert_eq!(
        run(&["BF.INFO", "n", "EXPANSION"]),
        field("Expansion rate", Reply::Nil)
    );
    let Reply::Array(replies) = run(&["BF.MADD", "n", "p", "q", "r", "s"]) else {
        panic!("array")
    };
    assert_eq!(replies.last(), Some(&err("ERR non scaling filter is full")));
    assert_eq!(replies.len(), 3);
}

#[test]
fn blind_adds_have_no_false_negatives_and_grow_the_chain() {
    let mut t = common::TempStore::new();
    let f = t.store().bloom("blind");
    f.reserve(0.01, 500, 2).unwrap();
    let items: Vec<String> = (0..6_000).map(|i| format!("b:{i}")).collect();
    for chunk in items.chunks(64) {
        f.add_blind(chunk).unwrap();
    }
    let info = f.info().unwrap();
    assert!(info.filters >= 4, "{info:?}");
    // Blind batches count every item; batches that meet a full sub-filter go through
    // the locked add, which (as RedisBloom) does not count an item that reads as present,
    // so a false positive there is not counted.
    assert!((5_950..=6_000).contains(&info.items), "{info:?}");
    drop(f);
    t.reopen();
    let f = t.store().bloom("blind");
    assert!(f.mexists(&items).unwrap().iter().all(|e| *e));
    // A missing key is created with RedisBloom's defaults.
    t.store().bloom("fresh").add_blind(&["x"]).unwrap();
    assert_eq!(t.store().bloom("fresh").info().unwrap().capacity, 100);
}

#[test]
fn insert_creates_with_its_options_or_refuses_with_nocreate() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let run = |words: &[&str]| execute(&ns, &args(words));
    let err = |text: &str| Reply::Error(text.to_owned());
    assert_eq!(
        run(&["BF.INSERT", "i", "NOCREATE", "ITEMS", "a"]),
        err("ERR not found")
    );
    assert_eq!(
        run(&[
            "BF.INSERT",
            "i",
            "CAPACITY",
            "1000",
            "ERROR",
            "0.001",
            "EXPANSION",
            "4",
            "ITEMS",
            "a",
            "b",
            "a"
        ]),
        Reply::Array(vec![
            Reply::Bool(true),
            Reply::Bool(true),
            Reply::Bool(false)
        ])
    );
    assert_eq!(
        run(&["BF.INFO", "i", "CAPACITY"]),
        field("Capacity", Reply::Int(1000))
    );
    assert_eq!(
        run(&["BF.INFO", "i", "EXPANSION"]),
        field("Expansion rate", Reply::Int(4))
    );
    assert_eq!(
        run(&["BF.INSERT", "i", "NOCREATE", "ITEMS", "c"]),
        Reply::Array(vec![Reply::Bool(true)])
    );
    assert_eq!(
        run(&["BF.INSERT", "j", "CAPACITY", "x", "ITEMS", "a"]),
        err("Bad capacity")
    );
    assert_eq!(
        run(&["BF.INSERT", "j", "ERROR", "x", "ITEMS", "a"]),
        err("Bad error rate")
    );
    assert_eq!(
        run(&["BF.INSERT", "j", "BOGUS", "ITEMS", "a"]),
        err("Unknown argument received")
    );
    // As RedisBloom (2.8.2 live, and 8's source): option words by their first letters,
    // and NONSCALING wins over an EXPANSION.
    assert_eq!(
        run(&["BF.INSERT", "j", "cap", "0", "ITEMS", "a"]),
        err("Bad capacity")
    );
    assert_eq!(
        run(&["BF.INSERT", "j", "e", "-1", "ITEMS", "a"]),
        err("Bad expansion")
    );
    assert_eq!(
        run(&["BF.INSERT", "j2", "EXPANSION", "2", "NONSCALING", "I", "a"]),
        Reply::Array(vec![Reply::Bool(true)])
    );
    assert_eq!(
        run(&["BF.INFO", "j2", "EXPANSION"]),
        field("Expansion rate", Reply::Nil)
    );
    assert_eq!(
        run(&["BF.INSERT", "j", "CAPACITY", "10"]),
        err("ERR wrong number of arguments for 'bf.insert' command")
    );
    assert!(!t.store().ns(0).exists(b"j").unwrap());
    assert_eq!(
        run(&[
            "BF.INSERT",
            "k",
            "CAPACITY",
            "2",
            "NONSCALING",
            "ITEMS",
            "a",
            "b",
            "c",
            "d"
        ]),
        Reply::Array(vec![
            Reply::Bool(true),
            Reply::Bool(true),
            err("ERR non scaling filter is full")
        ])
    );
}

#[test]
fn error_rates_above_a_quarter_are_capped() {
    let t = common::TempStore::new();
    let s = t.store();
    s.bloom("half").reserve(0.5, 10_000, 2).unwrap();
    s.bloom("quarter").reserve(0.25, 10_000, 2).unwrap();
    s.bloom("tenth").reserve(0.1, 10_000, 2).unwrap();
    let size = |k: &str| s.bloom(k).info().unwrap().size;
    assert_eq!(size("half"), size("quarter"));
    assert!(size("tenth") > size("quarter"));
}

/// `BF.INFO`'s `Size` is RedisBloom's memory accounting: every figure here was answered
/// by RedisBloom 2.8.2 (`../shared/redisbloom/start`) for the same reservation, chains
/// of several sub-filters included.
#[test]
fn info_size_is_redisblooms_memory_accounting() {
    let t = common::TempStore::new();
    let s = t.store();
    for (n, (error, capacity, expansion, size)) in [
        (0.01, 100, 2, 240),
        (0.001, 2000, 2, 4056),
        (0.001, 2000, 0, 3696),
        (0.01, 100, 0, 216),
        (0.1, 1, 2, 104),
        (0.5, 7, 2, 104),
        (0.0001, 100_000, 2, 257_760),
        (0.01, 100, 4, 240),
        (0.01, 1000, 1, 1480),
        (0.2, 50_000, 3, 30_056),
        (0.05, 777, 0, 704),
        (0.001, 1_073_741, 2, 2_123_464),
    ]
    .into_iter()
    .enumerate()
    {
        let key = format!("k{n}");
        s.bloom(&key).reserve(error, capacity, expansion).unwrap();
        let info = s.bloom(&key).info().unwrap();
        assert_eq!(info.size, size, "{error} {capacity} expansion {expansion}");
    }
    // Grown chains: 4 sub-filters (error 0.01, capacity 10, expansion 2, 80 adds) and 5
    // (0.02, 7, expansion 3, 300 adds).
    for (key, error, capacity, expansion, adds, filters, size) in [
        ("g1", 0.01, 10, 2, 80, 4, 568),
        ("g2", 0.02, 7, 3, 300, 5, 1936),
    ] {
        s.bloom(key).reserve(error, capacity, expansion).unwrap();
        let items: Vec<String> = (1..=adds).map(|i| format!("it{i}")).collect();
        let (_, failed) = s.bloom(key).madd(&items);
        assert!(failed.is_none());
        let info = s.bloom(key).info().unwrap();
        assert_eq!((info.filters, info.size), (filters, size), "{key}");
    }
}

/// `BF.INFO key FIELD`'s reply: RedisBloom 8 answers a map of that one field in RESP3 and
/// an array of its value in RESP2.
fn field(name: &str, value: Reply) -> Reply {
    Reply::Field(Box::new((Reply::Simple(name.to_owned()), value)))
}
