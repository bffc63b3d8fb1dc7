use super::ops::{DigestOps, FOLD_BYTES};
use super::*;
use crate::{full_merge, partial_merge};
use quickcheck::quickcheck;

fn digest_of(values: &[f64], compression: u32) -> Digest {
    let mut d = Digest::new(compression);
    for v in values {
        d.add(*v, 1).unwrap();
    }
    d
}

#[test]
fn compresses_when_the_buffer_fills_as_redisbloom_does() {
    // Capacity 6 x 100 + 10 = 610: the 610th add finds 609 nodes and compresses first.
    let mut d = Digest::new(100);
    for v in 0..609 {
        d.add(f64::from(v), 1).unwrap();
    }
    assert_eq!(
        (d.merged_nodes(), d.unmerged_nodes(), d.total_compressions()),
        (0, 609, 0)
    );
    d.add(609.0, 1).unwrap();
    assert_eq!(d.total_compressions(), 1);
    assert_eq!(d.unmerged_nodes(), 1);
    assert_eq!(d.merged_weight(), 609);
    assert_eq!(d.observations(), 610);
    assert!(d.merged_nodes() < 609);
}

#[test]
fn one_observation_is_sorted_but_never_merged() {
    let mut d = digest_of(&[42.0], 100);
    d.compress();
    assert_eq!(
        (d.merged_nodes(), d.unmerged_nodes(), d.total_compressions()),
        (0, 1, 0)
    );
    assert!(d.quantiles(&[0.5])[0].is_nan());
    assert_eq!(d.quantile(0.5), 42.0);
    assert_eq!((d.min_value(), d.max_value()), (42.0, 42.0));
}

#[test]
fn exact_answers_on_small_sequences() {
    // 0..999 at compression 10, as `td:seq` in the recorded transcript.
    let mut d = digest_of(&(0..1000).map(f64::from).collect::<Vec<_>>(), 10);
    let counts = (
        d.merged_nodes(),
        d.unmerged_nodes(),
        d.merged_weight(),
        d.total_compressions(),
    );
    assert_eq!(counts, (12, 1, 999, 17));
    let cdf: Vec<f64> = [-1.0, 0.0, 0.5, 1.0, 99.5, 500.0, 998.0, 999.0, 1000.0]
        .iter()
        .map(|v| d.cdf(*v))
        .collect();
    let want = [
        0.0,
        0.0005,
        0.0013333333333333333,
        0.0016666666666666666,
        0.1,
        0.5005,
        0.9985,
        0.9995,
        1.0,
    ];
    assert_eq!(cdf, want);
    assert_eq!(
        d.ranks(&[-1.0, 0.0, 0.5, 99.5, 1000.0], false),
        vec![-1, 0, 1, 100, 1000]
    );
    assert_eq!(
        d.ranks(&[-1.0, 0.0, 0.5, 99.5, 1000.0], true),
        vec![1000, 999, 999, 900, -1]
    );
    let by_rank = d.by_ranks(&[0, 1, 2, 10, 100, 499, 500, 998, 999, 1000], false);
    let want = [
        0.0,
        0.0,
        1.5,
        9.5,
        99.5,
        498.5,
        499.5,
        998.0,
        999.0,
        f64::INFINITY,
    ];
    assert_eq!(by_rank, want);
}

#[test]
fn sorting_equal_means_is_bounded_and_ordered() {
    let mut nodes: Vec<Centroid> = (0..60_000)
        .map(|i| Centroid {
            mean: f64::from(i % 3),
            weight: i64::from(i % 5) + 1,
        })
        .collect();
    sort::td_qsort(&mut nodes);
    assert!(nodes.windows(2).all(|w| w[0].mean <= w[1].mean));
    let mut same: Vec<Centroid> = (0..20_000)
        .map(|i| Centroid {
            mean: 1.0,
            weight: i + 1,
        })
        .collect();
    sort::td_qsort(&mut same);
    assert_eq!(
        same.iter().map(|n| n.weight).sum::<i64>(),
        20_000 * 20_001 / 2
    );
}

#[test]
fn page_round_trips_and_rejects_corruption() {
    let d = digest_of(
        &(0..5000).map(|i| f64::from(i).sin()).collect::<Vec<_>>(),
        50,
    );
    let bytes = d.encode();
    assert_eq!(Digest::decode(&bytes).unwrap(), d);
    for cut in 0..bytes.len() {
        assert!(Digest::decode(&bytes[..cut]).is_err());
    }
    let mut flipped = bytes.clone();
    *flipped.last_mut().unwrap() ^= 1;
    assert!(Digest::decode(&flipped).is_err());
}

#[test]
fn weight_overflow_is_refused() {
    let mut d = Digest::new(100);
    d.add(1.0, i64::MAX).unwrap();
    assert_eq!(d.add(2.0, 1), Err(Overflow));
    assert_eq!(d.observations(), i64::MAX);
}

/// Values split into operands: ops with and without partial merges.
fn operands(chunks: &[Vec<i16>]) -> Vec<Vec<u8>> {
    chunks
        .iter()
        .map(|c| {
            let values: Vec<f64> = c.iter().map(|v| f64::from(*v)).collect();
            DigestOps::new(20).values(&values).encode()
        })
        .collect()
}

fn merged(page: &[u8], ops: &[Vec<u8>]) -> Digest {
    let m = full_merge(Some(page), ops.iter().map(Vec::as_slice));
    assert_eq!(m.skipped, 0);
    Digest::decode(&m.value).unwrap()
}

quickcheck! {
    /// Below the fold size, a partial merge is concatenation: any split gives the bytes
    /// of one full merge of every operand.
    fn partial_merges_below_the_fold_change_nothing(chunks: Vec<Vec<i16>>, split: usize) -> bool {
        let page = Digest::new(20).encode();
        let ops = operands(&chunks);
        let whole = merged(&page, &ops);
        let at = if ops.is_empty() { 0 } else { split % ops.len() };
        let (a, b) = ops.split_at(at);
        let mut parts: Vec<Vec<u8>> = Vec::new();
        for half in [a, b] {
            if !half.is_empty() {
                parts.push(partial_merge(half.iter().map(Vec::as_slice)).unwrap());
            }
        }
        merged(&page, &parts) == whole
    }

    /// Applying operands to a decoded page gives what the full merge stores.
    fn apply_equals_full_merge(chunks: Vec<Vec<i16>>, compress_at: usize) -> bool {
        let mut ops = operands(&chunks);
        if !ops.is_empty() {
            let at = compress_at % ops.len();
            ops.insert(at, DigestOps::new(20).compress().encode());
        }
        let page = digest_of(&[1.0, 2.0], 20).encode();
        let mut d = Digest::decode(&page).unwrap();
        ops.iter().all(|op| d.apply_operand(op)) && d == merged(&page, &ops)
    }
}

/// Values in operands, partial-merged in random groups as flushes and compactions
/// would (declining past a tiny size), then fully merged: bit for bit the digest of one
/// full merge of every operand, that is RedisBloom's digest of the values in order.
fn combined_in_groups(chunks: Vec<Vec<u16>>, groups: Vec<u8>, compress_at: Vec<u8>) -> bool {
    let mut ops: Vec<Vec<u8>> = chunks
        .iter()
        .filter(|c| !c.is_empty())
        .map(|c| {
            let c: Vec<f64> = c.iter().map(|v| f64::from(*v)).collect();
            DigestOps::new(10).values(&c).encode()
        })
        .collect();
    // Reads' compress operands among the values.
    for at in compress_at {
        let at = usize::from(at) % (ops.len() + 1);
        ops.insert(at, DigestOps::new(10).compress().encode());
    }
    let page = digest_of(&[3.0, 1.0, 2.0], 10).encode();
    let whole = merged(&page, &ops);
    for pick in groups {
        if ops.len() < 2 {
            break;
        }
        let size = 2 + usize::from(pick) % 4;
        let at = usize::from(pick / 4) % (ops.len() - 1);
        let end = (at + size).min(ops.len());
        let group: Vec<&[u8]> = ops[at..end].iter().map(Vec::as_slice).collect();
        // Declined past the size: RocksDB keeps the operands.
        if let Some(combined) = super::ops::partial_merge_up_to(&group, 64) {
            ops.splice(at..end, [combined]);
        }
    }
    merged(&page, &ops) == whole
}

#[test]
fn partial_merges_in_any_grouping_give_the_sequential_digest() {
    quickcheck::QuickCheck::new()
        .tests(300)
        .quickcheck(combined_in_groups as fn(Vec<Vec<u16>>, Vec<u8>, Vec<u8>) -> bool);
}

#[test]
fn a_partial_merge_past_the_size_declines_and_the_full_merge_stays_sequential() {
    // 200 000 values in 100 operands: well past the size a partial merge combines.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let values: Vec<f64> = (0..200_000).map(|_| (next() * 6.0 - 3.0).exp()).collect();
    let ops: Vec<Vec<u8>> = values
        .chunks(2000)
        .map(|c| DigestOps::new(100).values(c).encode())
        .collect();
    // Declined past the bound (half the operands' bytes here: FOLD_BYTES itself takes
    // tens of megabytes), combined under it.
    let refs: Vec<&[u8]> = ops.iter().map(Vec::as_slice).collect();
    let bound = refs.iter().map(|op| op.len()).sum::<usize>() / 2;
    assert!(bound < FOLD_BYTES);
    assert!(super::ops::partial_merge_up_to(&refs, bound).is_none());
    assert!(partial_merge(ops.iter().map(Vec::as_slice)).is_some());
    // Combined in runs under the size, the result is the one full merge's, bit for bit,
    // and that is RedisBloom's sequential digest of the values.
    let page = Digest::new(100).encode();
    let whole = merged(&page, &ops);
    let runs: Vec<Vec<u8>> = ops
        .chunks(10)
        .map(|run| partial_merge(run.iter().map(Vec::as_slice)).unwrap())
        .collect();
    assert_eq!(merged(&page, &runs), whole);
    let mut sequential = Digest::new(100);
    for v in &values {
        sequential.add(*v, 1).unwrap();
    }
    assert_eq!(whole, sequential);
}
