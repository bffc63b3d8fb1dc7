//! Engine model test: random Top-K operations, with restarts, flushes and compactions in
//! between, must agree exactly with a page driven in memory (replies, lists, counts),
//! whether adds come with replies or blind.

mod common;

use quickcheck::{Arbitrary, Gen, QuickCheck};
use rocksketch_merge::topk::{Shape, TopKPage};

#[derive(Debug, Clone)]
enum Op {
    Add(Vec<u8>),
    IncrBy(Vec<(u8, u8)>),
    Blind(Vec<(u8, u8)>),
    Read(Vec<u8>),
    Reopen,
    Flush,
    Compact,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        let items = |g: &mut Gen| {
            (0..1 + u8::arbitrary(g) % 6)
                .map(|_| u8::arbitrary(g) % 40)
                .collect()
        };
        let pairs = |g: &mut Gen| {
            (0..1 + u8::arbitrary(g) % 4)
                .map(|_| (u8::arbitrary(g) % 40, u8::arbitrary(g) % 9))
                .collect()
        };
        match u8::arbitrary(g) % 12 {
            0..=3 => Op::Add(items(g)),
            4 | 5 => Op::IncrBy(pairs(g)),
            6 | 7 => Op::Blind(pairs(g)),
            8 => Op::Read(items(g)),
            9 => Op::Reopen,
            10 => Op::Flush,
            _ => Op::Compact,
        }
    }
}

fn item(i: u8) -> Vec<u8> {
    format!("item:{}", u32::from(i) * u32::from(i) % 97).into_bytes()
}

fn run(ops: Vec<Op>, decay: u8) -> bool {
    let shape = Shape::new(4, 10, 3, [0.9, 1.0, 0.5][usize::from(decay % 3)]).unwrap();
    let mut t = common::TempStore::new();
    let top = |t: &common::TempStore| t.store().topk("top");
    top(&t).reserve(4, 10, 3, shape.decay).unwrap();
    let mut model = TopKPage::new(shape);
    for op in &ops {
        match op {
            Op::Add(items) => {
                let items: Vec<Vec<u8>> = items.iter().map(|i| item(*i)).collect();
                let mut sketch = model.overlay(1);
                let want: Vec<_> = items.iter().map(|i| sketch.add(i, 1)).collect();
                assert_eq!(top(&t).add(&items).unwrap(), want);
                model.add_all(items.iter().map(|i| (i.as_slice(), 1)));
            }
            Op::IncrBy(pairs) | Op::Blind(pairs) => {
                let pairs: Vec<(Vec<u8>, u32)> = pairs
                    .iter()
                    .map(|(i, n)| (item(*i), u32::from(*n)))
                    .collect();
                let refs: Vec<(&[u8], u32)> =
                    pairs.iter().map(|(i, n)| (i.as_slice(), *n)).collect();
                if matches!(op, Op::Blind(_)) {
                    top(&t).add_blind(&refs).unwrap();
                } else {
                    let mut sketch = model.overlay(1);
                    let want: Vec<_> = refs.iter().map(|(i, n)| sketch.add(i, *n)).collect();
                    assert_eq!(top(&t).incr_by(&refs).unwrap(), want);
                }
                model.add_all(refs);
            }
            Op::Read(items) => {
                let items: Vec<Vec<u8>> = items.iter().map(|i| item(*i)).collect();
                let counts: Vec<u32> = items.iter().map(|i| model.count(i)).collect();
                let found: Vec<bool> = items.iter().map(|i| model.query(i)).collect();
                assert_eq!(top(&t).count(&items).unwrap(), counts);
                assert_eq!(top(&t).query(&items).unwrap(), found);
            }
            Op::Reopen => t.reopen(),
            Op::Flush => t.store().flush().unwrap(),
            Op::Compact => t.store().compact().unwrap(),
        }
        let want: Vec<(Vec<u8>, u32)> = model
            .list()
            .into_iter()
            .map(|(i, c)| (i.to_vec(), c))
            .collect();
        assert_eq!(top(&t).list().unwrap(), want, "after {op:?}");
    }
    true
}

#[test]
fn the_engine_agrees_with_the_model() {
    QuickCheck::new()
        .tests(40)
        .quickcheck(run as fn(Vec<Op>, u8) -> bool);
}
