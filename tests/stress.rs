//! Eight threads mixing every operation on shared keys: answered and blind adds that
//! grow Bloom and cuckoo chains, cuckoo deletes, answered and blind count-min increments,
//! queries, and concurrent delete/recreate/expire of other keys. Invariants checked while they run and after:
//! - no false negative for an item whose add returned (on keys never deleted);
//! - a count-min estimate never falls below the true count, and totals are exact where
//!   the sketch is wide enough;
//! - churned keys only ever answer "does not exist" or a valid answer, never a
//!   corruption or storage error.

mod common;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rocksketch::{CmsError, Error, Store};
use std::collections::HashMap;
use std::thread;

const THREADS: usize = 8;
const OPS: usize = 4000;
/// Items per thread in the shared sketch; 8 x 16 items in 100 000 x 4 counters share no
/// cell in every row, so estimates are exact.
const ITEMS: u32 = 16;

/// What one thread knows it did to the keys that are never deleted.
#[derive(Default)]
struct Done {
    added: Vec<String>,
    counts: HashMap<String, u32>,
    /// Items in the growing cuckoo chain (adds only).
    in_chain: Vec<String>,
    /// Items in the one-table cuckoo filter that also sees deletes.
    in_table: Vec<String>,
}

fn worker(store: &Store, me: usize) -> Done {
    let mut rng = StdRng::seed_from_u64(0x5eed + me as u64);
    let mut done = Done::default();
    let chain = store.bloom("chain");
    let sketch = store.cms("sketch");
    let cuckoo_chain = store.cuckoo("cuckoo-chain");
    let table = store.cuckoo("cuckoo-table");
    for op in 0..OPS {
        match rng.gen_range(0..100) {
            // Answered adds, one or a batch, that grow the shared chain.
            0..=19 => {
                let item = format!("t{me}-{op}");
                chain.add(&item).unwrap();
                done.added.push(item);
            }
            20..=29 => {
                let items: Vec<String> = (0..5).map(|i| format!("t{me}-{op}-m{i}")).collect();
                let (answers, error) = chain.madd(&items);
                assert!(error.is_none() && answers.len() == items.len(), "{error:?}");
                done.added.extend(items);
            }
            30..=34 => {
                let items: Vec<String> = (0..5).map(|i| format!("t{me}-{op}-b{i}")).collect();
                chain.add_blind(&items).unwrap();
                done.added.extend(items);
            }
            // Every item this thread added so far reads present (a sample of them).
            35..=44 if !done.added.is_empty() => {
                let sample: Vec<&String> = (0..8)
                    .map(|_| &done.added[rng.gen_range(0..done.added.len())])
                    .collect();
                let found = chain.mexists(&sample).unwrap();
                assert!(found.iter().all(|f| *f), "false negative among {sample:?}");
            }
            // Increments of this thread's items, answered or blind.
            45..=64 => {
                let item = format!("t{me}-i{}", rng.gen_range(0..ITEMS));
                let incr = rng.gen_range(1..4u32);
                let count = done.counts.entry(item.clone()).or_default();
                *count += incr;
                if rng.gen_bool(0.5) {
                    let est = sketch
                        .incr_by_with_estimates(&[(&item, u64::from(incr))])
                        .unwrap();
                    assert!(est[0] >= *count, "{item}: estimate {} < {count}", est[0]);
                } else {
                    sketch.incr_by(&[(&item, u64::from(incr))]).unwrap();
                }
            }
            65..=69 => {
                let items: Vec<&String> = done.counts.keys().collect();
                if !items.is_empty() {
                    let est = sketch.query(&items).unwrap();
                    for (item, e) in items.iter().zip(est) {
                        assert!(e >= done.counts[*item], "{item}: {e} undercounts");
                    }
                }
            }
            // Cuckoo adds, blind, batched and NX, into a chain that grows as they go.
            70..=75 => {
                let items: Vec<String> = (0..rng.gen_range(1..4))
                    .map(|i| format!("t{me}-{op}-c{i}"))
                    .collect();
                match rng.gen_range(0..3) {
                    0 => items.iter().for_each(|i| cuckoo_chain.add(i).unwrap()),
                    1 => assert!(cuckoo_chain.add_many(&items).1.is_none()),
                    _ => items.iter().for_each(|i| {
                        // Fresh items; "present" would be a false positive, kept out.
                        if !cuckoo_chain.add_nx(i).unwrap() {
                            cuckoo_chain.add(i).unwrap();
                        }
                    }),
                }
                done.in_chain.extend(items);
            }
            76 | 77 => {
                let item = format!("t{me}-{op}-t");
                table.add(&item).unwrap();
                done.in_table.push(item);
            }
            // Deletes of this thread's own items from the one-table filter (a chain can
            // lose a colliding item to a delete; see the README).
            78 | 79 if !done.in_table.is_empty() => {
                let at = rng.gen_range(0..done.in_table.len());
                let item = done.in_table.swap_remove(at);
                assert!(table.delete(&item).unwrap(), "delete {item}");
            }
            80..=84 => {
                for (filter, held) in [(&cuckoo_chain, &done.in_chain), (&table, &done.in_table)] {
                    if held.is_empty() {
                        continue;
                    }
                    let sample: Vec<&String> = (0..8)
                        .map(|_| &held[rng.gen_range(0..held.len())])
                        .collect();
                    let found = filter.mexists(&sample).unwrap();
                    assert!(
                        found.iter().all(|f| *f),
                        "cuckoo false negative in {sample:?}"
                    );
                }
            }
            // Churn: delete, recreate, expire, write and read keys others churn too.
            _ => churn(store, &mut rng),
        }
    }
    done
}

/// One operation on the churned keys; only "does not exist" may fail it.
fn churn(store: &Store, rng: &mut StdRng) {
    let ns = store.ns(0);
    let key = ["churn-a", "churn-b"][rng.gen_range(0..2)];
    let cms = store.cms(format!("{key}-cms"));
    let bloom = store.bloom(format!("{key}-bloom"));
    let cuckoo = store.cuckoo(format!("{key}-cuckoo"));
    let tolerated = |r: rocksketch::Result<()>| match r {
        Ok(())
        | Err(Error::Cms(CmsError::KeyDoesNotExist | CmsError::KeyAlreadyExists))
        | Err(Error::Bloom(rocksketch::BloomError::ItemExists))
        | Err(Error::Cuckoo(
            rocksketch::CuckooError::ItemExists
            | rocksketch::CuckooError::DelNotFound
            | rocksketch::CuckooError::MaximumExpansions,
        )) => {}
        Err(e) => panic!("churn: {e}"),
    };
    match rng.gen_range(0..8) {
        0 => {
            ns.delete(format!("{key}-cms").as_bytes()).unwrap();
            ns.delete(format!("{key}-bloom").as_bytes()).unwrap();
            ns.delete(format!("{key}-cuckoo").as_bytes()).unwrap();
        }
        1 => {
            tolerated(cms.init_by_dim(1000, 3));
            tolerated(bloom.reserve(0.01, 20, 2));
            tolerated(cuckoo.reserve(rocksketch::CuckooOptions {
                capacity: 16,
                ..Default::default()
            }));
        }
        2 => {
            let at = rocksketch::now_ms() + rng.gen_range(0..20);
            ns.expire_at(format!("{key}-cms").as_bytes(), at).unwrap();
        }
        3 => tolerated(cms.incr_by(&[("x", 1)])),
        4 => tolerated(cms.incr_by_with_estimates(&[("x", 1)]).map(|_| ())),
        5 => tolerated(cms.query(&["x"]).map(|_| ())),
        // Another thread may delete the key between the add and the check, so
        // only errors are wrong here.
        6 => {
            bloom.add("x").unwrap();
            bloom.exists("x").unwrap();
            // Copies of one item pile into one bucket pair (and its stash) and can
            // exhaust the chain: "Maximum expansions reached" is an answer too.
            tolerated(cuckoo.add("x"));
            cuckoo.exists("x").unwrap();
            tolerated(cuckoo.delete("x").map(|_| ()));
        }
        _ => {
            let _ = bloom.card().unwrap();
            ns.keys().unwrap();
        }
    }
}

#[test]
fn eight_threads_mixing_every_operation() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    store.bloom("chain").reserve(0.01, 100, 2).unwrap();
    let small = rocksketch::CuckooOptions {
        capacity: 200,
        bucket_size: 4,
        expansion: 2,
        ..Default::default()
    };
    store.cuckoo("cuckoo-chain").reserve(small).unwrap();
    let one_table = rocksketch::CuckooOptions {
        capacity: 100_000,
        bucket_size: 4,
        expansion: 0,
        ..Default::default()
    };
    store.cuckoo("cuckoo-table").reserve(one_table).unwrap();
    store.cms("sketch").init_by_dim(100_000, 4).unwrap();
    let results: Vec<Done> = thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|me| {
                let store = store.clone();
                scope.spawn(move || worker(&store, me))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let chain = store.bloom("chain");
    let info = chain.info().unwrap();
    assert!(info.filters >= 5, "the chain grew: {info:?}");
    for done in &results {
        let found = chain.mexists(&done.added).unwrap();
        assert!(found.iter().all(|f| *f), "false negative after the run");
        let items: Vec<&String> = done.counts.keys().collect();
        let want: Vec<u32> = items.iter().map(|i| done.counts[*i]).collect();
        assert_eq!(store.cms("sketch").query(&items).unwrap(), want);
    }
    let (cuckoo_chain, table) = (store.cuckoo("cuckoo-chain"), store.cuckoo("cuckoo-table"));
    let chain_info = cuckoo_chain.info().unwrap();
    assert!(
        chain_info.filters >= 3,
        "the cuckoo chain grew: {chain_info:?}"
    );
    let in_chain: Vec<&String> = results.iter().flat_map(|d| &d.in_chain).collect();
    let in_table: Vec<&String> = results.iter().flat_map(|d| &d.in_table).collect();
    assert_eq!(chain_info.inserted, in_chain.len() as u64);
    assert_eq!(table.info().unwrap().inserted, in_table.len() as u64);
    assert!(cuckoo_chain.mexists(&in_chain).unwrap().iter().all(|f| *f));
    assert!(table.mexists(&in_table).unwrap().iter().all(|f| *f));
    let total: u64 = results
        .iter()
        .flat_map(|d| d.counts.values())
        .map(|c| u64::from(*c))
        .sum();
    assert_eq!(store.cms("sketch").info().unwrap().count, total);
    store.compact().unwrap();
    for done in &results {
        assert!(chain.mexists(&done.added).unwrap().iter().all(|f| *f));
    }
}
