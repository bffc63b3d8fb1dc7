//! Engine model test for cuckoo filters: random adds (blind and NX), deletes of present
//! items, key deletes, restarts and compactions against a multiset of what is in each
//! filter. A cuckoo filter may say "present" wrongly, never "absent" for an item it
//! holds, and its count of an item is never below the true count.

mod common;

use quickcheck::{Arbitrary, Gen, QuickCheck};
use rocksketch::CuckooOptions;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone)]
enum Op {
    Reserve {
        key: u8,
        capacity: u8,
        expansion: u8,
        /// Fingerprint bits: 8, 12 or 16.
        fp_bits: u8,
    },
    Add {
        key: u8,
        item: u16,
    },
    AddNx {
        key: u8,
        item: u16,
    },
    /// Deletes the `nth` item the model holds for the key (if any).
    Del {
        key: u8,
        nth: usize,
    },
    Check {
        key: u8,
        items: Vec<u16>,
    },
    DeleteKey {
        key: u8,
    },
    Reopen,
    Compact,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        let key = u8::arbitrary(g) % 3;
        let item = |g: &mut Gen| u16::arbitrary(g) % 300;
        match u8::arbitrary(g) % 16 {
            0 => Op::Reserve {
                key,
                capacity: 4 + u8::arbitrary(g) % 60,
                expansion: u8::arbitrary(g) % 3,
                fp_bits: [8, 12, 16][usize::arbitrary(g) % 3],
            },
            1..=5 => Op::Add { key, item: item(g) },
            6 | 7 => Op::AddNx { key, item: item(g) },
            8..=10 => Op::Del {
                key,
                nth: usize::arbitrary(g),
            },
            11 | 12 => Op::Check {
                key,
                items: (0..1 + usize::arbitrary(g) % 10).map(|_| item(g)).collect(),
            },
            13 => Op::DeleteKey { key },
            14 => Op::Compact,
            _ => Op::Reopen,
        }
    }
}

fn name(key: u8) -> String {
    format!("cf{key}")
}

fn item(i: u16) -> String {
    format!("item-{i}")
}

fn run(ops: Vec<Op>) -> bool {
    let mut t = common::TempStore::new();
    // Copies of each item per key; a key is in the map once it exists.
    let mut model: HashMap<u8, BTreeMap<u16, u64>> = HashMap::new();
    for op in ops {
        if let Op::Reopen = op {
            t.reopen();
            continue;
        }
        let store = t.store().clone();
        match op {
            Op::Reserve {
                key,
                capacity,
                expansion,
                fp_bits,
            } => {
                let got = store.cuckoo(name(key)).reserve(CuckooOptions {
                    capacity: u64::from(capacity),
                    expansion: u32::from(expansion),
                    fp_bits,
                    ..CuckooOptions::default()
                });
                assert_eq!(got.is_ok(), !model.contains_key(&key), "{got:?}");
                model.entry(key).or_default();
            }
            Op::Add { key, item: i } => match store.cuckoo(name(key)).add(item(i)) {
                Ok(()) => *model.entry(key).or_default().entry(i).or_default() += 1,
                Err(rocksketch::Error::Cuckoo(
                    rocksketch::CuckooError::FilterFull
                    | rocksketch::CuckooError::MaximumExpansions,
                )) => {
                    assert!(model.contains_key(&key));
                }
                Err(e) => panic!("{e}"),
            },
            Op::AddNx { key, item: i } => match store.cuckoo(name(key)).add_nx(item(i)) {
                Ok(added) => {
                    let copies = model.entry(key).or_default().entry(i).or_default();
                    // "Present" may be a false positive; "absent" never is.
                    assert!(!(added && *copies > 0), "added {i} though present");
                    *copies += u64::from(added);
                }
                Err(rocksketch::Error::Cuckoo(
                    rocksketch::CuckooError::FilterFull
                    | rocksketch::CuckooError::MaximumExpansions,
                )) => {}
                Err(e) => panic!("{e}"),
            },
            Op::Del { key, nth } => {
                let Some(items) = model.get_mut(&key) else {
                    continue;
                };
                let present: Vec<u16> = items
                    .iter()
                    .filter(|(_, n)| **n > 0)
                    .map(|(i, _)| *i)
                    .collect();
                if present.is_empty() {
                    continue;
                }
                let i = present[nth % present.len()];
                assert!(
                    store.cuckoo(name(key)).delete(item(i)).unwrap(),
                    "delete {i}"
                );
                *items.get_mut(&i).unwrap() -= 1;
            }
            Op::Check { key, items } => {
                let cf = store.cuckoo(name(key));
                let names: Vec<String> = items.iter().map(|i| item(*i)).collect();
                let found = cf.mexists(&names).unwrap();
                let empty = BTreeMap::new();
                let held = model.get(&key).unwrap_or(&empty);
                for (i, f) in items.iter().zip(found) {
                    let copies = held.get(i).copied().unwrap_or(0);
                    assert!(f || copies == 0, "false negative for {i}");
                    assert!(cf.count(item(*i)).unwrap() >= copies, "count of {i}");
                }
                if model.contains_key(&key) {
                    let info = cf.info().unwrap();
                    assert_eq!(info.inserted, held.values().sum::<u64>());
                }
            }
            Op::DeleteKey { key } => {
                assert_eq!(
                    store.ns(0).delete(name(key).as_bytes()).unwrap(),
                    model.remove(&key).is_some()
                );
            }
            Op::Compact => store.compact().unwrap(),
            Op::Reopen => unreachable!("handled above"),
        }
    }
    true
}

#[test]
fn cuckoo_engine_agrees_with_model() {
    QuickCheck::new()
        .tests(40)
        .quickcheck(run as fn(Vec<Op>) -> bool);
}
