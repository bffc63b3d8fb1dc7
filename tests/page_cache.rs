//! The hot-page cache answers exactly as RocksDB would: the same replies with and
//! without it, for every command, across deletes, recreation, expiry, `CMS.MERGE`,
//! `LOADCHUNK` and `FLUSHDB`; no operand lost or applied twice when readers fill the
//! cache while writers write (the fill race); and it stays within its budget.

mod common;

use common::args;
use quickcheck::{Arbitrary, Gen, QuickCheck};
use rocksketch::command::{execute, Reply};
use rocksketch::{Store, StoreOptions};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

/// Small pages, and a cache that holds only some of them: pages are evicted and filled
/// again all the time.
fn options(cache_bytes: usize) -> StoreOptions {
    StoreOptions {
        page_bytes: 512,
        page_cache_bytes: cache_bytes,
        ..StoreOptions::default()
    }
}

#[derive(Debug, Clone)]
struct Script(Vec<Vec<String>>);

impl Arbitrary for Script {
    fn arbitrary(g: &mut Gen) -> Script {
        let n = 1 + usize::arbitrary(g) % 120;
        Script((0..n).map(|_| command(g)).collect())
    }
}

/// One random command over three keys of each type (and `d*`, targets of copies).
fn command(g: &mut Gen) -> Vec<String> {
    let k = u8::arbitrary(g) % 3;
    let item = format!("i{}", u16::arbitrary(g) % 300);
    let n = 1 + u8::arbitrary(g) % 50;
    let words: Vec<String> = match u8::arbitrary(g) % 27 {
        0 => vec![
            "CMS.INITBYDIM".into(),
            format!("c{k}"),
            "3000".into(),
            "3".into(),
        ],
        1..=3 => vec!["CMS.INCRBY".into(), format!("c{k}"), item, n.to_string()],
        4 => vec!["CMS.QUERY".into(), format!("c{k}"), item],
        5 => vec![
            "CMS.MERGE".into(),
            format!("c{k}"),
            "2".into(),
            format!("c{}", (k + 1) % 3),
            format!("c{}", (k + 2) % 3),
        ],
        6 => vec![
            "BF.RESERVE".into(),
            format!("b{k}"),
            "0.01".into(),
            "20".into(),
        ],
        7..=9 => vec!["BF.ADD".into(), format!("b{k}"), item],
        10 => vec!["BF.MADD".into(), format!("b{k}"), item, format!("i{n}")],
        11 => vec!["BF.EXISTS".into(), format!("b{k}"), item],
        12 => vec!["BF.CARD".into(), format!("b{k}")],
        13..=14 => vec!["CF.ADD".into(), format!("f{k}"), item],
        15 => vec!["CF.ADDNX".into(), format!("f{k}"), item],
        16 => vec!["CF.DEL".into(), format!("f{k}"), item],
        17 => vec!["CF.COUNT".into(), format!("f{k}"), item],
        18 => vec!["CF.EXISTS".into(), format!("f{k}"), item],
        19 => vec!["CF.INFO".into(), format!("f{k}")],
        20 => vec!["CMS.INFO".into(), format!("c{k}")],
        21 => vec![
            "DEL".into(),
            ["c", "b", "f"][n as usize % 3].to_string() + &k.to_string(),
        ],
        22 => vec!["COPY".into(), format!("b{k}")],
        23 => vec!["COPY".into(), format!("f{k}")],
        24 => vec![
            "EXPIRED".into(),
            ["c", "b", "f"][n as usize % 3].to_string() + &k.to_string(),
        ],
        25 => vec!["FLUSHDB".into()],
        _ => vec![
            "BF.INSERT".into(),
            format!("b{k}"),
            "ITEMS".into(),
            item,
            format!("j{n}"),
        ],
    };
    words
}

/// Runs a command on a store: the RedisBloom commands through the engine's command
/// table; `DEL`, `EXPIRED` (an expiry time already past), `FLUSHDB`, and `COPY` (a whole
/// `SCANDUMP` replayed by `LOADCHUNK` into `d*`).
fn run(store: &Store, words: &[String]) -> Vec<Reply> {
    let ns = store.ns(0);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    match words[0] {
        "DEL" => vec![Reply::Bool(ns.delete(words[1].as_bytes()).unwrap())],
        "EXPIRED" => vec![Reply::Bool(ns.expire_at(words[1].as_bytes(), 1).unwrap())],
        "FLUSHDB" => vec![Reply::Int(ns.flush().unwrap() as i64)],
        "COPY" => {
            let (kind, target) = (&words[1][..1], format!("d{}", words[1]));
            ns.delete(target.as_bytes()).unwrap();
            let (dump, load) = if kind == "b" {
                ("BF.SCANDUMP", "BF.LOADCHUNK")
            } else {
                ("CF.SCANDUMP", "CF.LOADCHUNK")
            };
            let mut replies = Vec::new();
            let mut cursor = "0".to_owned();
            for _ in 0..10_000 {
                let reply = execute(&ns, &args(&[dump, words[1], &cursor]));
                let Reply::Array(parts) = &reply else {
                    replies.push(reply);
                    break;
                };
                let (Reply::Int(next), Reply::Bulk(chunk)) = (&parts[0], &parts[1]) else {
                    replies.push(reply);
                    break;
                };
                if *next == 0 {
                    break;
                }
                let mut load_args = args(&[load, &target, &next.to_string()]);
                load_args.push(chunk.clone());
                replies.push(execute(&ns, &load_args));
                cursor = next.to_string();
            }
            replies
        }
        _ => vec![execute(&ns, &args(&words))],
    }
}

fn same_replies(script: Script) -> bool {
    let cached = common::TempStore::with_options(options(64 << 10));
    let uncached = common::TempStore::with_options(options(0));
    for words in &script.0 {
        let a = run(cached.store(), words);
        let b = run(uncached.store(), words);
        if a != b {
            eprintln!("{words:?}: cached {a:?}, uncached {b:?}");
            return false;
        }
    }
    true
}

#[test]
fn every_reply_is_the_same_with_and_without_the_cache() {
    QuickCheck::new()
        .tests(60)
        .quickcheck(same_replies as fn(Script) -> bool);
}

#[test]
fn readers_filling_the_cache_never_lose_or_double_a_concurrent_write() {
    let mut db = common::TempStore::with_options(options(96 << 10));
    let store = db.store().clone();
    // Wide enough that no two of the items share all their counters.
    store.cms("c").init_by_dim(200_000, 4).unwrap();
    store.bloom("b").reserve(0.001, 200_000, 2).unwrap();
    const WRITERS: usize = 3;
    const ROUNDS: u64 = 1500;
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let done = Arc::new(AtomicBool::new(false));
    let barrier = Arc::new(Barrier::new(WRITERS + 2));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (store, acked, barrier) = (store.clone(), acked.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                for round in 1..=ROUNDS {
                    // A counter of our own, bumped blindly, and a new item in the filter.
                    let item = format!("w{w}");
                    store.cms("c").incr_by(&[(item.as_str(), 1)]).unwrap();
                    store
                        .bloom("b")
                        .add_blind(&[format!("w{w}:{round}")])
                        .unwrap();
                    acked[w].store(round, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (store, acked, done, barrier) =
                (store.clone(), acked.clone(), done.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                let mut checks = 0u64;
                let mut spin = r;
                while !done.load(Ordering::SeqCst) {
                    spin = (spin + 1) % WRITERS;
                    let floor = acked[spin].load(Ordering::SeqCst);
                    let count = store.cms("c").query(&[format!("w{spin}")]).unwrap()[0];
                    let ceiling = acked[spin].load(Ordering::SeqCst) + 1;
                    // Acknowledged before the read: counted. Never more than was written.
                    assert!(
                        u64::from(count) >= floor && u64::from(count) <= ceiling,
                        "writer {spin}: {count} outside [{floor}, {ceiling}]"
                    );
                    if floor > 0 {
                        let item = format!("w{spin}:{floor}");
                        assert!(store.bloom("b").exists(&item).unwrap(), "{item} lost");
                    }
                    // Reads of other pages evict the hot ones, so fills race writes.
                    let spread: Vec<String> =
                        (0..40).map(|i| format!("x{r}:{checks}:{i}")).collect();
                    store.cms("c").query(&spread).unwrap();
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    done.store(true, Ordering::SeqCst);
    for reader in readers {
        assert!(reader.join().unwrap() > 0);
    }
    for w in 0..WRITERS {
        let count = store.cms("c").query(&[format!("w{w}")]).unwrap()[0];
        assert_eq!(u64::from(count), ROUNDS, "writer {w}");
    }
    let (hits, misses, bytes) = store.page_cache_stats();
    assert!(hits > 0 && misses > 0, "hits {hits}, misses {misses}");
    assert!(bytes <= 96 << 10, "{bytes} bytes cached");
    // Every answer of the cached store after the race is RocksDB's own: reopened
    // without the cache, the same data answers the same.
    let items: Vec<String> = (0..WRITERS)
        .map(|w| format!("w{w}"))
        .chain((0..2000).map(|i| format!("x0:{i}:0")))
        .collect();
    let members: Vec<String> = (0..WRITERS)
        .flat_map(|w| (1..=ROUNDS).map(move |r| format!("w{w}:{r}")))
        .chain((0..2000).map(|i| format!("absent:{i}")))
        .collect();
    let cached = (
        store.cms("c").query(&items).unwrap(),
        store.bloom("b").mexists(&members).unwrap(),
    );
    let dir = db.dir.path().to_owned();
    drop(store);
    db.store = None;
    let uncached = Store::open(&dir, options(0)).unwrap();
    assert_eq!(uncached.page_cache_stats().2, 0);
    let fresh = (
        uncached.cms("c").query(&items).unwrap(),
        uncached.bloom("b").mexists(&members).unwrap(),
    );
    assert!(
        cached == fresh,
        "the cache and RocksDB disagree after the race"
    );
}

#[test]
fn the_cache_stays_within_its_budget() {
    let budget = 256 << 10;
    let db = common::TempStore::with_options(options(budget));
    let cms = db.store().cms("big");
    cms.init_by_dim(1_000_000, 4).unwrap(); // 16 MB of counters, 7813 pages
    let items: Vec<String> = (0..20_000).map(|i| format!("item:{i}")).collect();
    let pairs: Vec<(&str, u64)> = items.iter().map(|i| (i.as_str(), 1)).collect();
    cms.incr_by(&pairs).unwrap();
    for chunk in items.chunks(500) {
        cms.query(chunk).unwrap();
    }
    let (_, misses, bytes) = db.store().page_cache_stats();
    assert!(misses > 1000);
    assert!(bytes <= budget, "{bytes} bytes cached of {budget}");
    assert!(bytes >= budget / 4, "only {bytes} bytes cached of {budget}");
}

/// A Top-K of k = 1000 (its page is some 1.6 MiB, over one cache shard's share) is
/// cached like any page: after a restart, its first read fills the cache and later adds
/// and reads are hits, instead of each replaying every operand pending on the page.
#[test]
fn a_large_top_k_page_is_cached() {
    let mut t = common::TempStore::with_options(options(64 << 20));
    let topk = |t: &common::TempStore| t.store().topk("tk");
    topk(&t).reserve(1000, 65536, 1, 0.9).unwrap();
    let items: Vec<String> = (0..2000).map(|n| format!("{n:0>700}")).collect();
    for chunk in items.chunks(100) {
        topk(&t).add(chunk).unwrap();
    }
    t.reopen();
    assert_eq!(topk(&t).list().unwrap().len(), 1000);
    let (hits, misses, bytes) = t.store().page_cache_stats();
    assert!(
        bytes > 1 << 20,
        "the page was not cached ({bytes} bytes held)"
    );
    for chunk in items.chunks(100).take(5) {
        topk(&t).add(chunk).unwrap();
    }
    assert_eq!(topk(&t).list().unwrap().len(), 1000);
    let (hits_after, misses_after, _) = t.store().page_cache_stats();
    assert_eq!(misses_after, misses, "a later read missed");
    assert!(hits_after > hits);
}
