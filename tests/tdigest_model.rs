//! Engine model test: random sequences of t-digest operations, with restarts, flushes
//! and compactions in between, must agree exactly with a digest driven in memory the way
//! RedisBloom drives its own (adds, compressing reads, reset, merge), with the hot-page
//! cache and without it. Large adds (tens of thousands of values) put more operands on
//! a page than a partial merge combines, so flushes and compactions combine them in
//! whatever groups RocksDB picks: the answers must not change (they did when a partial
//! merge folded values into centroids).

mod common;

use quickcheck::{Arbitrary, Gen, QuickCheck};
use rocksketch::{TDigest, TDigestInfo};
use rocksketch_merge::tdigest::Digest;

#[derive(Debug, Clone)]
enum Op {
    Add {
        key: u8,
        values: Vec<i16>,
    },
    /// `n` thousand values at once, from a seed.
    AddMany {
        key: u8,
        n: u8,
        seed: u32,
    },
    Quantile(u8, Vec<u8>),
    Cdf(u8, i16),
    Rank(u8, i16, bool),
    ByRank(u8, u16, bool),
    Trimmed(u8),
    Reset(u8),
    /// `MERGE dest 1 src` (with `OVERRIDE` when the flag is set).
    Merge(u8, u8, bool),
    Reopen,
    Flush,
    Compact,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        let key = u8::arbitrary(g) % 2;
        match u8::arbitrary(g) % 20 {
            0..=7 => Op::Add {
                key,
                values: (0..1 + usize::arbitrary(g) % 40)
                    .map(|_| i16::arbitrary(g) % 500)
                    .collect(),
            },
            8 | 9 => Op::Quantile(key, Vec::arbitrary(g)),
            10 => Op::Cdf(key, i16::arbitrary(g) % 500),
            11 => Op::Rank(key, i16::arbitrary(g) % 500, bool::arbitrary(g)),
            12 => Op::ByRank(key, u16::arbitrary(g) % 300, bool::arbitrary(g)),
            13 => Op::Trimmed(key),
            14 => Op::Reset(key),
            15 => Op::Merge(key, u8::arbitrary(g) % 2, bool::arbitrary(g)),
            16 if bool::arbitrary(g) => Op::AddMany {
                key,
                n: 1 + u8::arbitrary(g) % 50,
                seed: u32::arbitrary(g),
            },
            16 => Op::Reopen,
            17 => Op::Flush,
            _ => Op::Compact,
        }
    }
}

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// `n` values from `seed`, spread over a wide range with repeats.
fn many(n: usize, seed: u32) -> Vec<f64> {
    let mut state = u64::from(seed) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) % 4000) as f64 / 8.0 - 250.0
        })
        .collect()
}

fn run(ops: Vec<Op>, options: rocksketch::StoreOptions) -> bool {
    let mut t = common::TempStore::with_options(options);
    // Small compressions, so that buffers fill and compress often.
    let compressions = [7u32, 12];
    let mut model: Vec<Digest> = compressions.iter().map(|c| Digest::new(*c)).collect();
    for (key, c) in compressions.iter().enumerate() {
        t.store()
            .tdigest([b'k', key as u8])
            .create(u64::from(*c))
            .unwrap();
    }
    let td = |t: &common::TempStore, key: u8| -> TDigest { t.store().tdigest([b'k', key]) };
    for op in &ops {
        match op.clone() {
            Op::Add { key, values } => {
                let values: Vec<f64> = values.iter().map(|v| f64::from(*v) / 4.0).collect();
                td(&t, key).add(&values).unwrap();
                for v in values {
                    model[usize::from(key)].add(v, 1).unwrap();
                }
            }
            Op::AddMany { key, n, seed } => {
                let values = many(usize::from(n) * 1000, seed);
                td(&t, key).add(&values).unwrap();
                for v in values {
                    model[usize::from(key)].add(v, 1).unwrap();
                }
            }
            Op::Quantile(key, qs) => {
                let qs: Vec<f64> = qs.iter().map(|q| f64::from(*q) / 255.0).collect();
                let got = td(&t, key).quantiles(&qs).unwrap();
                assert_eq!(bits(&got), bits(&model[usize::from(key)].quantiles(&qs)));
            }
            Op::Cdf(key, v) => {
                let v = f64::from(v) / 4.0;
                let got = td(&t, key).cdf(&[v]).unwrap();
                assert_eq!(bits(&got), bits(&[model[usize::from(key)].cdf(v)]));
            }
            Op::Rank(key, v, reverse) => {
                let v = [f64::from(v) / 4.0];
                let got = td(&t, key).ranks(&v, reverse).unwrap();
                assert_eq!(got, model[usize::from(key)].ranks(&v, reverse));
            }
            Op::ByRank(key, r, reverse) => {
                let r = [i64::from(r)];
                let got = td(&t, key).by_ranks(&r, reverse).unwrap();
                assert_eq!(
                    bits(&got),
                    bits(&model[usize::from(key)].by_ranks(&r, reverse))
                );
            }
            Op::Trimmed(key) => {
                let got = td(&t, key).trimmed_mean(0.1, 0.8).unwrap();
                let want = model[usize::from(key)].trimmed_mean(0.1, 0.8);
                assert_eq!(got.to_bits(), want.to_bits());
            }
            Op::Reset(key) => {
                td(&t, key).reset().unwrap();
                let c = model[usize::from(key)].compression();
                model[usize::from(key)] = Digest::new(c);
            }
            Op::Merge(dest, src, replace) => {
                td(&t, dest).merge(&[[b'k', src]], None, replace).unwrap();
                let (d, s) = (usize::from(dest), usize::from(src));
                let c = if replace {
                    model[s].compression()
                } else {
                    model[d].compression()
                };
                let mut result = Digest::new(c);
                if !replace {
                    result.merge_from(&mut model[d].clone()).unwrap();
                }
                let mut source = model[s].clone();
                result.merge_from(&mut source).unwrap();
                if s != d {
                    model[s] = source;
                }
                model[d] = result;
            }
            Op::Reopen => t.reopen(),
            Op::Flush => t.store().flush().unwrap(),
            Op::Compact => t.store().compact().unwrap(),
        }
        for key in 0..2u8 {
            let m = &model[usize::from(key)];
            assert_eq!(
                td(&t, key).info().unwrap(),
                TDigestInfo::from(m),
                "after {op:?}"
            );
            let (min, max) = (td(&t, key).min().unwrap(), td(&t, key).max().unwrap());
            assert_eq!(
                (min.to_bits(), max.to_bits()),
                (m.min_value().to_bits(), m.max_value().to_bits())
            );
        }
    }
    true
}

#[test]
fn the_engine_agrees_with_the_model() {
    QuickCheck::new()
        .tests(40)
        .quickcheck((|ops| run(ops, Default::default())) as fn(Vec<Op>) -> bool);
}

#[test]
fn the_engine_agrees_with_the_model_without_the_page_cache() {
    let uncached = |ops| {
        let options = rocksketch::StoreOptions {
            page_cache_bytes: 0,
            ..Default::default()
        };
        run(ops, options)
    };
    QuickCheck::new()
        .tests(40)
        .quickcheck(uncached as fn(Vec<Op>) -> bool);
}

/// The case: a digest restarted between two saves answers as one never
/// restarted, and as RedisBloom's sequential digest.
#[test]
fn a_digest_answers_the_same_after_flushes_and_a_restart() {
    let ops = vec![
        Op::AddMany {
            key: 0,
            n: 50,
            seed: 7,
        },
        Op::Flush,
        Op::AddMany {
            key: 0,
            n: 200,
            seed: 8,
        },
        Op::Flush,
        Op::Compact,
        Op::Reopen,
        Op::Quantile(0, vec![0, 25, 127, 200, 255]),
        Op::AddMany {
            key: 1,
            n: 120,
            seed: 9,
        },
        Op::Reopen,
        Op::Cdf(1, 3),
    ];
    assert!(run(ops.clone(), Default::default()));
    let uncached = rocksketch::StoreOptions {
        page_cache_bytes: 0,
        ..Default::default()
    };
    assert!(run(ops, uncached));
}
