//! Engine model test for Bloom filters: random adds (answered and blind), deletes,
//! restarts and compactions against a set of what was added. A Bloom filter may say
//! "present" wrongly, never "absent" wrongly, and never calls an added item new.

mod common;

use quickcheck::{Arbitrary, Gen, QuickCheck};
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone)]
enum Op {
    Reserve {
        key: u8,
        capacity: u8,
        expansion: u8,
    },
    Add {
        key: u8,
        item: u16,
    },
    AddBlind {
        key: u8,
        items: Vec<u16>,
    },
    /// `BF.MADD`: one batch, items may repeat within it.
    MAdd {
        key: u8,
        items: Vec<u16>,
    },
    Exists {
        key: u8,
        items: Vec<u16>,
    },
    Delete {
        key: u8,
    },
    Reopen,
    Compact,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        let key = u8::arbitrary(g) % 3;
        let item = |g: &mut Gen| u16::arbitrary(g) % 400;
        match u8::arbitrary(g) % 16 {
            0 => Op::Reserve {
                key,
                capacity: 1 + u8::arbitrary(g) % 20,
                expansion: u8::arbitrary(g) % 3,
            },
            1..=4 => Op::Add { key, item: item(g) },
            5..=7 => Op::AddBlind {
                key,
                items: (0..1 + usize::arbitrary(g) % 8).map(|_| item(g)).collect(),
            },
            8..=10 => Op::Exists {
                key,
                items: (0..1 + usize::arbitrary(g) % 8).map(|_| item(g)).collect(),
            },
            14 | 15 => Op::MAdd {
                key,
                items: (0..1 + usize::arbitrary(g) % 40).map(|_| item(g)).collect(),
            },
            11 => Op::Delete { key },
            12 => Op::Compact,
            _ => Op::Reopen,
        }
    }
}

/// A filter that can take no more: non-scaling and full, or grown to 32 sub-filters
/// (expansion 1 and a capacity of 1 get there in 32 adds).
fn full(err: &rocksketch::Error) -> bool {
    matches!(
        err,
        rocksketch::Error::Bloom(
            rocksketch::BloomError::NonScalingFull | rocksketch::BloomError::MaximumExpansions
        )
    )
}

fn name(key: u8) -> String {
    format!("bf{key}")
}

fn run(ops: Vec<Op>) -> bool {
    let mut t = common::TempStore::new();
    // Items added per key; `None` for a key that is full and non-scaling.
    let mut model: HashMap<u8, BTreeSet<u16>> = HashMap::new();
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
            } => {
                let got =
                    store
                        .bloom(name(key))
                        .reserve(0.01, u64::from(capacity), u32::from(expansion));
                assert_eq!(got.is_ok(), !model.contains_key(&key), "{got:?}");
                model.entry(key).or_default();
            }
            Op::Add { key, item } => {
                let got = store.bloom(name(key)).add(format!("i{item}"));
                let set = model.entry(key).or_default();
                match got {
                    Ok(new) => {
                        assert!(
                            !(new && set.contains(&item)),
                            "added item {item} called new"
                        );
                        set.insert(item);
                    }
                    Err(e) if full(&e) => {}
                    Err(e) => panic!("{e}"),
                }
            }
            Op::AddBlind { key, items } => {
                let names: Vec<String> = items.iter().map(|i| format!("i{i}")).collect();
                let set = model.entry(key).or_default();
                match store.bloom(name(key)).add_blind(&names) {
                    Ok(()) => set.extend(items),
                    // A filter that fills up stops the run partway; what was added
                    // before is present, so note those items as possibly added.
                    Err(e) if full(&e) => {
                        let f = store.bloom(name(key));
                        for i in items {
                            if f.exists(format!("i{i}")).unwrap() {
                                set.insert(i);
                            }
                        }
                    }
                    Err(e) => panic!("{e}"),
                }
            }
            Op::MAdd { key, items } => {
                let names: Vec<String> = items.iter().map(|i| format!("i{i}")).collect();
                let (answers, error) = store.bloom(name(key)).madd(&names);
                match error {
                    None => assert_eq!(answers.len(), items.len()),
                    Some(e) if full(&e) => assert!(answers.len() < items.len()),
                    Some(e) => panic!("{e}"),
                }
                let set = model.entry(key).or_default();
                for (item, new) in items.iter().zip(answers) {
                    assert!(!(new && set.contains(item)), "added item {item} called new");
                    set.insert(*item);
                }
            }
            Op::Exists { key, items } => {
                let names: Vec<String> = items.iter().map(|i| format!("i{i}")).collect();
                let got = store.bloom(name(key)).mexists(&names).unwrap();
                let empty = BTreeSet::new();
                let set = model.get(&key).unwrap_or(&empty);
                for (item, found) in items.iter().zip(got) {
                    assert!(found || !set.contains(item), "false negative for {item}");
                }
            }
            Op::Delete { key } => {
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
fn bloom_engine_agrees_with_model() {
    QuickCheck::new()
        .tests(40)
        .quickcheck(run as fn(Vec<Op>) -> bool);
}
