//! Engine model test: random sequences of HyperLogLog operations (answered and blind
//! adds, counts and union counts, merges, copies through Redis's string, deletes,
//! other types on the same keys), with flushes, compactions and restarts in between, on
//! a store with the page cache, with one too small for every key, and with none, must agree
//! with a plain model of registers: the answers never depend on what RocksDB flushed,
//! compacted or the cache evicted.

mod common;

use quickcheck::{Arbitrary, Gen, QuickCheck};
use rocksketch::{Error, StoreOptions};
use rocksketch_merge::hll::{position, Registers};
use std::collections::HashMap;

const KEYS: u8 = 3;

#[derive(Debug, Clone)]
enum Op {
    Add {
        key: u8,
        items: Vec<u32>,
        blind: bool,
    },
    Count {
        keys: Vec<u8>,
    },
    Merge {
        dest: u8,
        sources: Vec<u8>,
    },
    Copy {
        from: u8,
        to: u8,
    },
    Delete {
        key: u8,
    },
    Bloom {
        key: u8,
    },
    Flush,
    Compact,
    Reopen,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        let key = u8::arbitrary(g) % KEYS;
        match u8::arbitrary(g) % 20 {
            0..=7 => Op::Add {
                key,
                // Mostly few items over a small range (repeats), now and then thousands
                // (a page past the sparse form) or none (PFADD key: creates it).
                items: match u8::arbitrary(g) % 8 {
                    0 => (0..3000).map(|_| u32::arbitrary(g)).collect(),
                    1 => Vec::new(),
                    n => (0..usize::from(n))
                        .map(|_| u32::arbitrary(g) % 50)
                        .collect(),
                },
                blind: bool::arbitrary(g),
            },
            8..=10 => Op::Count {
                keys: (0..1 + usize::arbitrary(g) % 3)
                    .map(|_| u8::arbitrary(g) % KEYS)
                    .collect(),
            },
            11 | 12 => Op::Merge {
                dest: key,
                sources: (0..usize::arbitrary(g) % 3)
                    .map(|_| u8::arbitrary(g) % KEYS)
                    .collect(),
            },
            13 => Op::Copy {
                from: key,
                to: u8::arbitrary(g) % KEYS,
            },
            14 => Op::Delete { key },
            15 => Op::Bloom { key },
            16 => Op::Flush,
            17 => Op::Compact,
            _ => Op::Reopen,
        }
    }
}

/// What a key holds in the model.
#[derive(Debug, Clone)]
enum Held {
    Hll(Registers),
    Bloom,
}

fn key(k: u8) -> String {
    format!("hll{k}")
}

fn item(i: u32) -> Vec<u8> {
    format!("item:{i}").into_bytes()
}

/// The model's registers of `k`: empty when missing, `Err` when another type.
fn model_regs(model: &HashMap<u8, Held>, k: u8) -> Result<Registers, ()> {
    match model.get(&k) {
        None => Ok(Registers::new()),
        Some(Held::Hll(regs)) => Ok(regs.clone()),
        Some(Held::Bloom) => Err(()),
    }
}

fn run(ops: &[Op], options: StoreOptions) {
    let mut t = common::TempStore::with_options(options);
    let mut model: HashMap<u8, Held> = HashMap::new();
    for op in ops {
        if let Op::Reopen = op {
            t.reopen();
            continue;
        }
        let store = t.store().clone();
        match op {
            Op::Add {
                key: k,
                items,
                blind,
            } => {
                let items: Vec<Vec<u8>> = items.iter().map(|i| item(*i)).collect();
                let hll = store.hll(key(*k));
                let got = if *blind {
                    hll.add_blind(&items).map(|()| None)
                } else {
                    hll.add(&items).map(Some)
                };
                let Ok(mut regs) = model_regs(&model, *k) else {
                    assert!(matches!(got, Err(Error::WrongType)), "{got:?}");
                    continue;
                };
                let mut changed = !model.contains_key(k);
                for it in &items {
                    let (index, rank) = position(it);
                    changed |= regs.raise(index, rank);
                }
                if let Some(answer) = got.unwrap() {
                    assert_eq!(answer, changed);
                }
                model.insert(*k, Held::Hll(regs));
            }
            Op::Count { keys } => {
                let names: Vec<String> = keys.iter().map(|k| key(*k)).collect();
                let got = match names.as_slice() {
                    [one] => store.hll(one).count(),
                    many => store.hll_count(many),
                };
                let mut union = Registers::new();
                for k in keys {
                    match model_regs(&model, *k) {
                        Ok(regs) => union.merge(&regs),
                        Err(()) => {
                            assert!(matches!(got, Err(Error::WrongType)), "{got:?}");
                            union = Registers::new();
                            break;
                        }
                    }
                }
                if let Ok(count) = got {
                    assert_eq!(count, union.count());
                }
            }
            Op::Merge { dest, sources } => {
                let names: Vec<String> = sources.iter().map(|k| key(*k)).collect();
                let got = store.hll(key(*dest)).merge_from(&names);
                let all = std::iter::once(dest).chain(sources);
                let union = all.map(|k| model_regs(&model, *k)).try_fold(
                    Registers::new(),
                    |mut union, regs| {
                        union.merge(&regs?);
                        Ok::<_, ()>(union)
                    },
                );
                match union {
                    Ok(union) => {
                        got.unwrap();
                        model.insert(*dest, Held::Hll(union));
                    }
                    Err(()) => assert!(matches!(got, Err(Error::WrongType)), "{got:?}"),
                }
            }
            Op::Copy { from, to } => {
                let got = store.hll(key(*from)).export();
                match model.get(from) {
                    None => assert_eq!(got.unwrap(), None),
                    Some(Held::Bloom) => assert!(matches!(got, Err(Error::WrongType))),
                    Some(Held::Hll(regs)) => {
                        let string = got.unwrap().expect("a string");
                        store.hll(key(*to)).import(&string).unwrap();
                        model.insert(*to, Held::Hll(regs.clone()));
                    }
                }
            }
            Op::Delete { key: k } => {
                let deleted = store.ns(0).delete(key(*k).as_bytes()).unwrap();
                assert_eq!(deleted, model.remove(k).is_some());
            }
            Op::Bloom { key: k } => {
                let got = store.bloom(key(*k)).add(b"x");
                match model.get(k) {
                    Some(Held::Hll(_)) => assert!(matches!(got, Err(Error::WrongType))),
                    _ => {
                        got.unwrap();
                        model.insert(*k, Held::Bloom);
                    }
                }
            }
            Op::Flush => store.flush().unwrap(),
            Op::Compact => store.compact().unwrap(),
            Op::Reopen => unreachable!("handled above"),
        }
        // Every key's registers, as stored, after every step.
        for k in 0..KEYS {
            let got = store.hll(key(k)).registers();
            match model.get(&k) {
                None => assert_eq!(got.unwrap(), None),
                Some(Held::Hll(regs)) => assert_eq!(got.unwrap().as_ref(), Some(regs)),
                Some(Held::Bloom) => assert!(matches!(got, Err(Error::WrongType))),
            }
        }
    }
}

fn check(ops: Vec<Op>) -> bool {
    run(&ops, StoreOptions::default());
    // Room for two of the three keys' decoded pages: reads of the third miss.
    run(
        &ops,
        StoreOptions {
            page_cache_bytes: 70_000,
            ..StoreOptions::default()
        },
    );
    run(
        &ops,
        StoreOptions {
            page_cache_bytes: 0,
            ..StoreOptions::default()
        },
    );
    true
}

#[test]
fn engine_agrees_with_model() {
    QuickCheck::new()
        .tests(40)
        .quickcheck(check as fn(Vec<Op>) -> bool);
}
