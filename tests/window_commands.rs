//! The `WINDOW ms [SLICES g]` option through the command layer, as a Redis client sees
//! it: creation, errors for bad windows (nothing created), `*.INFO`'s window fields,
//! answers that follow the store's clock, `CMS.MERGE` of windowed sketches, dumps
//! restored, and a windowed key deleted and made again without its old generations.

mod common;

use common::TempStore;
use rocksketch::command::{execute, Reply};
use rocksketch::{Clock, Namespace, StoreOptions};

const START: u64 = 1_700_000_000_000;

fn run(ns: &Namespace, words: &[&str]) -> Reply {
    execute(ns, &common::args(words))
}

fn ok() -> Reply {
    Reply::Simple("OK".into())
}

fn err(text: &str) -> Reply {
    Reply::Error(text.into())
}

fn store(clock: &Clock) -> TempStore {
    TempStore::with_options(StoreOptions {
        clock: clock.clone(),
        ..StoreOptions::default()
    })
}

/// The value of field `name` in a map reply.
fn field(reply: &Reply, name: &str) -> Reply {
    let Reply::Map(fields) = reply else {
        panic!("not a map: {reply:?}")
    };
    fields
        .iter()
        .find(|(k, _)| *k == Reply::Simple(name.into()))
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no field {name} in {reply:?}"))
}

#[test]
fn bad_windows_are_refused_and_create_nothing() {
    let clock = Clock::manual(START);
    let t = store(&clock);
    let ns = t.store().ns(0);
    let positive = err("ERR WINDOW must be a positive number of milliseconds");
    let slices = err("ERR SLICES must be an integer from 1 to 64");
    let cases: Vec<(Vec<&str>, Reply)> = vec![
        (vec!["WINDOW", "0"], positive.clone()),
        (vec!["WINDOW", "-5"], positive.clone()),
        (vec!["WINDOW", "soon"], positive.clone()),
        (vec!["WINDOW"], positive.clone()),
        (vec!["WINDOW", "1000", "SLICES", "0"], slices.clone()),
        (vec!["WINDOW", "1000", "SLICES", "65"], slices.clone()),
        (vec!["WINDOW", "1000", "SLICES"], slices.clone()),
        (
            vec!["WINDOW", "5", "SLICES", "8"],
            err("ERR WINDOW must be at least one millisecond per slice"),
        ),
    ];
    for (window, expected) in &cases {
        let mut bf = vec!["BF.RESERVE", "k", "0.01", "100"];
        bf.extend(window);
        assert_eq!(run(&ns, &bf), *expected, "{bf:?}");
        let mut cf = vec!["CF.RESERVE", "k", "100"];
        cf.extend(window);
        assert_eq!(run(&ns, &cf), *expected, "{cf:?}");
        let mut cms = vec!["CMS.INITBYDIM", "k", "100", "5"];
        cms.extend(window);
        assert_eq!(run(&ns, &cms), *expected, "{cms:?}");
    }
    // Anything after the window is the command's arity error.
    for words in [
        vec![
            "BF.RESERVE",
            "k",
            "0.01",
            "100",
            "WINDOW",
            "1000",
            "SLICES",
            "4",
            "x",
        ],
        vec!["CMS.INITBYPROB", "k", "0.01", "0.01", "WINDOW", "1000", "x"],
    ] {
        let Reply::Error(text) = run(&ns, &words) else {
            panic!("{words:?} accepted")
        };
        assert!(text.contains("wrong number of arguments"), "{text}");
    }
    assert!(!ns.exists(b"k").unwrap());
}

#[test]
fn windowed_keys_answer_over_the_window_and_say_so_in_info() {
    let clock = Clock::manual(START);
    let t = store(&clock);
    let ns = t.store().ns(0);
    for words in [
        &["BF.RESERVE", "bf", "0.01", "1000", "WINDOW", "8000"][..],
        &[
            "BF.RESERVE",
            "fixed",
            "0.01",
            "1000",
            "NONSCALING",
            "WINDOW",
            "8000",
            "SLICES",
            "2",
        ],
        &[
            "CF.RESERVE",
            "cf",
            "1000",
            "BUCKETSIZE",
            "4",
            "window",
            "8000",
            "slices",
            "4",
        ],
        &[
            "CMS.INITBYPROB",
            "cms",
            "0.01",
            "0.01",
            "WINDOW",
            "8000",
            "SLICES",
            "4",
        ],
    ] {
        assert_eq!(run(&ns, words), ok(), "{words:?}");
    }
    assert_eq!(run(&ns, &["BF.ADD", "bf", "a"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["BF.ADD", "bf", "a"]), Reply::Bool(false));
    assert_eq!(run(&ns, &["CF.ADD", "cf", "a"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.ADDNX", "cf", "a"]), Reply::Bool(false));
    assert_eq!(
        run(&ns, &["CMS.INCRBY", "cms", "a", "3"]),
        Reply::Array(vec![Reply::Int(3)])
    );
    clock.advance(5_000);
    // Still in the window: found, and counted with the new increment.
    assert_eq!(run(&ns, &["BF.EXISTS", "bf", "a"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.COUNT", "cf", "a"]), Reply::Int(1));
    assert_eq!(
        run(&ns, &["CMS.INCRBY", "cms", "a", "2"]),
        Reply::Array(vec![Reply::Int(5)])
    );
    let info = run(&ns, &["BF.INFO", "bf"]);
    assert_eq!(field(&info, "Window"), Reply::Int(8000));
    assert_eq!(field(&info, "Slices"), Reply::Int(8));
    assert_eq!(field(&info, "Number of items inserted"), Reply::Int(1));
    let Reply::Array(generations) = field(&info, "Generations") else {
        panic!("{info:?}")
    };
    assert_eq!(generations.len(), 9, "{generations:?}");
    let fill: i64 = generations
        .iter()
        .map(|g| match g {
            Reply::Array(pair) => match pair[1] {
                Reply::Int(n) => n,
                _ => panic!("{g:?}"),
            },
            _ => panic!("{g:?}"),
        })
        .sum();
    assert_eq!(fill, 1);
    let cms = run(&ns, &["CMS.INFO", "cms"]);
    assert_eq!(field(&cms, "count"), Reply::Int(5));
    assert_eq!(field(&cms, "window"), Reply::Int(8000));
    assert_eq!(
        field(&run(&ns, &["CF.INFO", "cf"]), "Slices"),
        Reply::Int(4)
    );
    // A field of BF.INFO on its own still answers as RedisBloom's.
    assert_eq!(
        run(&ns, &["BF.INFO", "bf", "ITEMS"]),
        Reply::Field(Box::new((
            Reply::Simple("Number of items inserted".into()),
            Reply::Int(1)
        )))
    );
    // A slice past the window of the first adds: only the later increment is left.
    clock.advance(5_000); // t = 10 000
    assert_eq!(run(&ns, &["BF.EXISTS", "bf", "a"]), Reply::Bool(false));
    assert_eq!(run(&ns, &["CF.EXISTS", "cf", "a"]), Reply::Bool(false));
    assert_eq!(
        run(&ns, &["CMS.QUERY", "cms", "a"]),
        Reply::Array(vec![Reply::Int(2)])
    );
    // Gone from the window, an item is new again.
    assert_eq!(run(&ns, &["BF.ADD", "bf", "a"]), Reply::Bool(true));
    assert_eq!(run(&ns, &["CF.ADDNX", "cf", "a"]), Reply::Bool(true));
    // Plain keys show no window fields.
    assert_eq!(run(&ns, &["BF.RESERVE", "plain", "0.01", "100"]), ok());
    let Reply::Map(plain) = run(&ns, &["BF.INFO", "plain"]) else {
        panic!()
    };
    assert_eq!(plain.len(), 5);
}

#[test]
fn merges_need_equal_windows_and_line_up_generation_by_generation() {
    let clock = Clock::manual(START);
    let t = store(&clock);
    let ns = t.store().ns(0);
    for key in ["a", "b", "dest"] {
        let words = [
            "CMS.INITBYDIM",
            key,
            "100",
            "4",
            "WINDOW",
            "4000",
            "SLICES",
            "4",
        ];
        assert_eq!(run(&ns, &words), ok());
    }
    assert_eq!(run(&ns, &["CMS.INITBYDIM", "plain", "100", "4"]), ok());
    let other = [
        "CMS.INITBYDIM",
        "other",
        "100",
        "4",
        "WINDOW",
        "4000",
        "SLICES",
        "2",
    ];
    assert_eq!(run(&ns, &other), ok());
    let differ = err("CMS: window/slices is not equal");
    assert_eq!(run(&ns, &["CMS.MERGE", "dest", "1", "plain"]), differ);
    assert_eq!(run(&ns, &["CMS.MERGE", "dest", "1", "other"]), differ);
    assert_eq!(run(&ns, &["CMS.MERGE", "plain", "1", "a"]), differ);
    run(&ns, &["CMS.INCRBY", "a", "x", "1"]);
    clock.advance(2_000);
    run(&ns, &["CMS.INCRBY", "b", "x", "10"]);
    clock.advance(1_000);
    run(&ns, &["CMS.INCRBY", "a", "x", "100"]);
    let merge = ["CMS.MERGE", "dest", "2", "a", "b", "WEIGHTS", "1", "2"];
    assert_eq!(run(&ns, &merge), ok());
    let query = ["CMS.QUERY", "dest", "x"];
    assert_eq!(run(&ns, &query), Reply::Array(vec![Reply::Int(121)]));
    // Each increment leaves the merged sketch when its generation leaves the window.
    clock.advance(2_000); // t = 5000: the generation of t = 0 is gone
    assert_eq!(run(&ns, &query), Reply::Array(vec![Reply::Int(120)]));
    clock.advance(2_000); // t = 7000: the one of t = 2000 too
    assert_eq!(run(&ns, &query), Reply::Array(vec![Reply::Int(100)]));
    clock.advance(1_000);
    assert_eq!(run(&ns, &query), Reply::Array(vec![Reply::Int(0)]));
    assert_eq!(
        field(&run(&ns, &["CMS.INFO", "dest"]), "count"),
        Reply::Int(0)
    );
}

#[test]
fn dumps_restore_windowed_filters_and_a_recreated_key_starts_empty() {
    let clock = Clock::manual(START);
    let t = store(&clock);
    let ns = t.store().ns(0);
    assert_eq!(
        run(&ns, &["BF.RESERVE", "bf", "0.01", "100", "WINDOW", "1000"]),
        ok()
    );
    run(&ns, &["BF.ADD", "bf", "dumped"]);
    // A client's dump loop through the commands, into a new key.
    let mut cursor = "0".to_owned();
    loop {
        let Reply::Array(step) = run(&ns, &["BF.SCANDUMP", "bf", &cursor]) else {
            panic!("no dump step")
        };
        let (Reply::Int(next), Reply::Bulk(chunk)) = (&step[0], &step[1]) else {
            panic!("{step:?}")
        };
        if *next == 0 {
            break;
        }
        cursor = next.to_string();
        let load = [
            b"BF.LOADCHUNK".as_slice(),
            b"copy",
            cursor.as_bytes(),
            chunk,
        ];
        let load: Vec<Vec<u8>> = load.iter().map(|w| w.to_vec()).collect();
        assert_eq!(execute(&ns, &load), ok());
    }
    assert_eq!(
        run(&ns, &["BF.EXISTS", "copy", "dumped"]),
        Reply::Bool(true)
    );
    let info = run(&ns, &["BF.INFO", "copy"]);
    assert_eq!(field(&info, "Window"), Reply::Int(1000));
    clock.advance(1_125);
    assert_eq!(
        run(&ns, &["BF.EXISTS", "copy", "dumped"]),
        Reply::Bool(false)
    );
    run(&ns, &["BF.ADD", "bf", "a"]);
    assert_eq!(
        ns.key_type(b"bf").unwrap(),
        Some(rocksketch::KeyType::Bloom)
    );
    assert!(ns.delete(b"bf").unwrap());
    assert_eq!(
        run(&ns, &["BF.RESERVE", "bf", "0.01", "100", "WINDOW", "1000"]),
        ok()
    );
    assert_eq!(run(&ns, &["BF.EXISTS", "bf", "a"]), Reply::Bool(false));
    // A plain BF.ADD on a missing key makes a plain filter, as RedisBloom's.
    run(&ns, &["BF.ADD", "new", "a"]);
    let Reply::Map(fields) = run(&ns, &["BF.INFO", "new"]) else {
        panic!()
    };
    assert_eq!(fields.len(), 5);
}

#[test]
fn windows_at_their_limits_work_and_past_them_are_refused() {
    let clock = Clock::manual(START);
    let t = store(&clock);
    let ns = t.store().ns(0);
    let longest = i64::MAX.to_string();
    for (key, slices) in [("a", "64"), ("b", "1")] {
        let words = [
            "BF.RESERVE",
            key,
            "0.01",
            "1000",
            "WINDOW",
            &longest,
            "SLICES",
            slices,
        ];
        assert_eq!(run(&ns, &words), ok());
        assert_eq!(run(&ns, &["BF.ADD", key, "x"]), Reply::Bool(true));
        assert_eq!(run(&ns, &["BF.EXISTS", key, "x"]), Reply::Bool(true));
        clock.advance(1 << 40);
        assert_eq!(run(&ns, &["BF.EXISTS", key, "x"]), Reply::Bool(true));
    }
    let cms = [
        "CMS.INITBYDIM",
        "c",
        "10",
        "2",
        "WINDOW",
        &longest,
        "SLICES",
        "64",
    ];
    assert_eq!(run(&ns, &cms), ok());
    assert_eq!(
        run(&ns, &["CMS.INCRBY", "c", "x", "5"]),
        Reply::Array(vec![Reply::Int(5)])
    );
    let positive = err("ERR WINDOW must be a positive number of milliseconds");
    let too_long = [
        "BF.RESERVE",
        "z",
        "0.01",
        "10",
        "WINDOW",
        "9223372036854775808",
    ];
    assert_eq!(run(&ns, &too_long), positive);
    // The shortest window: a generation a millisecond, swept as it ages.
    let shortest = ["CF.RESERVE", "s", "100", "WINDOW", "1", "SLICES", "1"];
    assert_eq!(run(&ns, &shortest), ok());
    for n in 0..2000 {
        run(&ns, &["CF.ADD", "s", &format!("i{n}")]);
        clock.advance(1);
        if n % 500 == 499 {
            t.store().sweep_expired(None, 1000).unwrap();
        }
    }
    // Two live generations of one add each, at most.
    let Reply::Map(_) = run(&ns, &["CF.INFO", "s"]) else {
        panic!()
    };
    assert!(t.store().cuckoo("s").info().unwrap().inserted <= 2);
    assert!(common::pages_after_compaction(t.store()) < 200);
}
