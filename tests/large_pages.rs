//! Structures cut into the largest pages (1 MiB, a server's default with a cache of 2
//! GiB or more) answer the same whatever RocksDB flushed, compacted or the cache
//! evicted in between. One store takes rounds of writes and keeps its pages in memory;
//! another takes the same writes with a compaction, a reopen (the log replayed, or the
//! flushed files read) or a cache too small for one page (every read a full merge in
//! RocksDB) between rounds. Every reply of both is compared after every round, and
//! every added item must be present.

mod common;

use common::args;
use rocksketch::command::{execute, Reply};
use rocksketch::{Store, StoreOptions};

const LARGEST: u32 = rocksketch_merge::MAX_PAGE_BYTES as u32;

fn options(cache_bytes: usize) -> StoreOptions {
    StoreOptions {
        page_bytes: LARGEST,
        page_cache_bytes: cache_bytes,
        ..StoreOptions::default()
    }
}

/// Structures of several 1 MiB pages each: a Bloom filter of 4.8 MB, a cuckoo filter
/// of 4 MiB, a count-min sketch of 4.8 MB (4 rows of 300 000 counters).
const CREATE: [&[&str]; 3] = [
    &["BF.RESERVE", "bf", "0.01", "4000000"],
    &["CF.RESERVE", "cf", "4000000"],
    &["CMS.INITBYDIM", "cms", "300000", "4"],
];

fn item(i: usize) -> String {
    format!("item:{i}")
}

/// Round `round`'s writes: 1 000 new items to each filter (answered `BF.MADD`, blind
/// `BF.INSERT`, `CF.INSERT`, in batches), and increments of items old and new.
fn write(store: &Store, round: usize) -> Vec<Reply> {
    let ns = store.ns(0);
    let mut replies = Vec::new();
    for batch in 0..10 {
        let items: Vec<String> = (0..100)
            .map(|i| item(round * 1000 + batch * 100 + i))
            .collect();
        let words = |head: &[&str]| {
            let mut w: Vec<&str> = head.to_vec();
            w.extend(items.iter().map(String::as_str));
            args(&w)
        };
        let command = match batch % 2 {
            0 => words(&["BF.MADD", "bf"]),
            _ => words(&["BF.INSERT", "bf", "NOCREATE", "ITEMS"]),
        };
        replies.push(execute(&ns, &command));
        replies.push(execute(
            &ns,
            &words(&["CF.INSERT", "cf", "NOCREATE", "ITEMS"]),
        ));
        let mut incr = vec!["CMS.INCRBY", "cms"];
        let counts: Vec<String> = (0..items.len()).map(|i| (i % 5 + 1).to_string()).collect();
        for (it, n) in items.iter().zip(&counts) {
            incr.extend([it.as_str(), n.as_str()]);
        }
        replies.push(execute(&ns, &args(&incr)));
    }
    replies
}

/// What both stores must answer alike: every item added so far and as many never
/// added, through each family's reads.
fn read(store: &Store, rounds: usize) -> Vec<Reply> {
    let ns = store.ns(0);
    let items: Vec<String> = (0..rounds * 1000)
        .chain(900_000..900_000 + rounds * 1000)
        .map(item)
        .collect();
    let mut replies = Vec::new();
    for head in [
        &["BF.MEXISTS", "bf"][..],
        &["CF.MEXISTS", "cf"],
        &["CMS.QUERY", "cms"],
    ] {
        let mut words: Vec<&str> = head.to_vec();
        words.extend(items.iter().map(String::as_str));
        replies.push(execute(&ns, &args(&words)));
    }
    for info in [["BF.CARD", "bf"], ["CF.INFO", "cf"], ["CMS.INFO", "cms"]] {
        replies.push(execute(&ns, &args(&info)));
    }
    // Every added item is present (the first `rounds * 1000` of each read).
    let added = rounds * 1000;
    for reply in &replies[..2] {
        let Reply::Array(found) = reply else {
            panic!("an array of answers: {reply:?}");
        };
        assert!(
            found[..added]
                .iter()
                .all(|f| matches!(f, Reply::Int(1) | Reply::Bool(true))),
            "an added item is missing"
        );
    }
    replies
}

#[test]
fn the_largest_pages_answer_alike_across_flushes_compactions_reopens_and_evictions() {
    let reference = common::TempStore::with_options(options(256 << 20));
    let mut subject = common::TempStore::with_options(options(256 << 20));
    for store in [reference.store(), subject.store()] {
        for words in CREATE {
            assert_eq!(
                execute(&store.ns(0), &args(words)),
                Reply::Simple("OK".into()),
                "{words:?}"
            );
        }
    }
    // Between rounds, on the subject only.
    let steps = ["flush", "compact", "reopen", "starve", "reopen", "compact"];
    for (round, step) in steps.iter().enumerate() {
        let want = write(reference.store(), round);
        assert_eq!(
            write(subject.store(), round),
            want,
            "round {round}'s writes"
        );
        assert_eq!(
            read(subject.store(), round + 1),
            read(reference.store(), round + 1),
            "after round {round}'s writes"
        );
        match *step {
            "flush" => subject.store().flush().unwrap(),
            "compact" => subject.store().compact().unwrap(),
            "reopen" => subject.options = options(256 << 20),
            // A cache too small to hold one page: every read merges in RocksDB.
            "starve" => subject.options = options(64 << 10),
            _ => unreachable!(),
        }
        if matches!(*step, "reopen" | "starve") {
            subject.reopen();
        }
        assert_eq!(
            read(subject.store(), round + 1),
            read(reference.store(), round + 1),
            "after round {round}'s {step}"
        );
    }
    // The pages are the largest: a few dozen records hold all three structures.
    let pages = common::pages_after_compaction(subject.store());
    assert!((10..=40).contains(&pages), "{pages} page records");
}
