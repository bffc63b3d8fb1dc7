//! Engine model test: random sequences of count-min operations, with restarts and
//! compactions in between, must agree with a plain model of counters.

mod common;

use quickcheck::{Arbitrary, Gen, QuickCheck};
use rocksketch::{CmsError, Error, StoreOptions};
use rocksketch_merge::hash::murmur2;
use std::collections::hash_map::Entry;
use std::collections::HashMap;

const KEYS: u8 = 3;
const ITEMS: u8 = 16;

#[derive(Debug, Clone)]
enum Op {
    Create {
        key: u8,
        width: u32,
        depth: u32,
    },
    Incr {
        key: u8,
        items: Vec<(u8, u64)>,
        estimates: bool,
    },
    Query {
        key: u8,
        items: Vec<u8>,
    },
    Merge {
        dest: u8,
        sources: Vec<(u8, i64)>,
    },
    Delete {
        key: u8,
    },
    Reopen,
    Compact,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        let key = u8::arbitrary(g) % KEYS;
        match u8::arbitrary(g) % 16 {
            0 | 1 => Op::Create {
                key,
                // Fixed widths per key keep most merges dimension-compatible.
                width: [3, 5, 11][usize::from(key % 3)] + u32::from(bool::arbitrary(g)) * 2,
                depth: 1 + u32::arbitrary(g) % 3,
            },
            2..=6 => Op::Incr {
                key,
                items: (0..1 + usize::arbitrary(g) % 4)
                    .map(|_| {
                        let incr = match u8::arbitrary(g) % 10 {
                            0 => u64::from(u32::MAX) - u64::arbitrary(g) % 3,
                            _ => u64::arbitrary(g) % 20,
                        };
                        (u8::arbitrary(g) % ITEMS, incr)
                    })
                    .collect(),
                estimates: bool::arbitrary(g),
            },
            7..=9 => Op::Query {
                key,
                items: (0..1 + usize::arbitrary(g) % 4)
                    .map(|_| u8::arbitrary(g) % ITEMS)
                    .collect(),
            },
            10 | 11 => Op::Merge {
                dest: key,
                sources: (0..1 + usize::arbitrary(g) % 3)
                    .map(|_| (u8::arbitrary(g) % KEYS, i64::arbitrary(g) % 3))
                    .collect(),
            },
            12 => Op::Delete { key },
            13 => Op::Compact,
            _ => Op::Reopen,
        }
    }
}

#[derive(Debug, Clone)]
struct Model {
    width: u32,
    depth: u32,
    cells: Vec<u32>,
    count: u64,
}

impl Model {
    fn slots(&self, item: &[u8]) -> Vec<usize> {
        (0..self.depth)
            .map(|row| (row * self.width + murmur2(item, row) % self.width) as usize)
            .collect()
    }

    fn estimate(&self, item: &[u8]) -> u32 {
        self.slots(item)
            .iter()
            .map(|s| self.cells[*s])
            .min()
            .unwrap()
    }
}

fn item(i: u8) -> Vec<u8> {
    format!("item:{i}").into_bytes()
}

fn key(k: u8) -> String {
    format!("key{k}")
}

fn run(ops: Vec<Op>) -> bool {
    let mut t = common::TempStore::with_options(StoreOptions {
        page_bytes: 8, // two counters a page: many pages, many page boundaries
        ..StoreOptions::default()
    });
    let mut model: HashMap<u8, Model> = HashMap::new();
    for op in ops {
        if let Op::Reopen = op {
            t.reopen();
            continue;
        }
        let store = t.store().clone();
        match op {
            Op::Create {
                key: k,
                width,
                depth,
            } => {
                let got = store
                    .cms(key(k))
                    .init_by_dim(u64::from(width), u64::from(depth));
                match model.entry(k) {
                    Entry::Occupied(_) => {
                        assert!(matches!(got, Err(Error::Cms(CmsError::KeyAlreadyExists))));
                    }
                    Entry::Vacant(slot) => {
                        got.unwrap();
                        let cells = vec![0; (width * depth) as usize];
                        slot.insert(Model {
                            width,
                            depth,
                            cells,
                            count: 0,
                        });
                    }
                }
            }
            Op::Incr {
                key: k,
                items,
                estimates,
            } => {
                let cms = store.cms(key(k));
                let pairs: Vec<(Vec<u8>, u64)> =
                    items.iter().map(|(i, n)| (item(*i), *n)).collect();
                let got = if estimates {
                    cms.incr_by_with_estimates(&pairs).map(Some)
                } else {
                    cms.incr_by(&pairs).map(|()| None)
                };
                let Some(m) = model.get_mut(&k) else {
                    assert!(matches!(got, Err(Error::Cms(CmsError::KeyDoesNotExist))));
                    continue;
                };
                let mut want = Vec::new();
                for (it, n) in &pairs {
                    for s in m.slots(it) {
                        m.cells[s] =
                            m.cells[s].saturating_add(u32::try_from(*n).unwrap_or(u32::MAX));
                    }
                    m.count = m.count.wrapping_add(*n);
                    want.push(m.estimate(it));
                }
                if let Some(est) = got.unwrap() {
                    assert_eq!(est, want);
                }
            }
            Op::Query { key: k, items } => {
                let its: Vec<Vec<u8>> = items.iter().map(|i| item(*i)).collect();
                let got = store.cms(key(k)).query(&its);
                match model.get(&k) {
                    None => assert!(matches!(got, Err(Error::Cms(CmsError::KeyDoesNotExist)))),
                    Some(m) => {
                        let want: Vec<u32> = its.iter().map(|i| m.estimate(i)).collect();
                        assert_eq!(got.unwrap(), want);
                        assert_eq!(store.cms(key(k)).info().unwrap().count, m.count);
                    }
                }
            }
            Op::Merge { dest, sources } => {
                let named: Vec<(String, i64)> =
                    sources.iter().map(|(s, w)| (key(*s), *w)).collect();
                let got = store.cms(key(dest)).merge(&named);
                let Some(d) = model.get(&dest) else {
                    assert!(matches!(got, Err(Error::Cms(CmsError::KeyDoesNotExist))));
                    continue;
                };
                // RedisBloom's rule (cms.c's checkOverflow): every product and every
                // partial sum in 64 signed bits, cells then in [0, u32::MAX] and the
                // count non-negative; None once one left them.
                let term = |sum: Option<i64>, value: i128, w: i64| {
                    let product = i64::try_from(value * i128::from(w)).ok()?;
                    sum?.checked_add(product)
                };
                let mut sums = vec![Some(0i64); d.cells.len()];
                let mut count = Some(0i64);
                let mut want_err = None;
                for (s, w) in &sources {
                    match model.get(s) {
                        None => {
                            want_err = Some(CmsError::KeyDoesNotExist);
                            break;
                        }
                        Some(m) if (m.width, m.depth) != (d.width, d.depth) => {
                            want_err = Some(CmsError::DimensionsDiffer);
                            break;
                        }
                        Some(m) => {
                            for (sum, c) in sums.iter_mut().zip(&m.cells) {
                                *sum = term(*sum, i128::from(*c), *w);
                            }
                            count = term(count, i128::from(m.count), *w);
                        }
                    }
                }
                let overflow = !sums
                    .iter()
                    .all(|s| matches!(s, Some(s) if (0..=i64::from(u32::MAX)).contains(s)))
                    || !matches!(count, Some(c) if c >= 0);
                if want_err.is_none() && overflow {
                    want_err = Some(CmsError::MergeOverflow);
                }
                match want_err {
                    Some(e) => assert!(
                        matches!(got, Err(Error::Cms(g)) if g == e),
                        "{got:?} vs {e:?}"
                    ),
                    None => {
                        got.unwrap();
                        let d = model.get_mut(&dest).unwrap();
                        d.cells = sums.iter().map(|s| s.unwrap_or(0) as u32).collect();
                        d.count = count.unwrap_or(0) as u64;
                    }
                }
            }
            Op::Delete { key: k } => {
                assert_eq!(
                    store.ns(0).delete(key(k).as_bytes()).unwrap(),
                    model.remove(&k).is_some()
                );
            }
            Op::Compact => store.compact().unwrap(),
            Op::Reopen => unreachable!("handled above"),
        }
    }
    true
}

#[test]
fn engine_agrees_with_model() {
    QuickCheck::new()
        .tests(60)
        .quickcheck(run as fn(Vec<Op>) -> bool);
}
