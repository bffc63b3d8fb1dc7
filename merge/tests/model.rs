//! Model tests: random operand sequences applied one by one, through random groupings
//! of partial merges, and in one full merge must agree with a plain model.

use quickcheck::{quickcheck, Arbitrary, Gen, TestResult};
use rocksketch_merge::counter::{CounterDelta, CounterPage};
use rocksketch_merge::tally::Tally;
use rocksketch_merge::{full_merge, partial_merge};

/// A page length and a sequence of deltas for it.
#[derive(Debug, Clone)]
struct CounterCase {
    page_len: u32,
    deltas: Vec<Vec<(u32, u32)>>,
    /// Where to cut the sequence into runs for partial merges.
    cuts: Vec<usize>,
}

fn arbitrary_add(g: &mut Gen) -> u32 {
    // Mostly small, sometimes near the top so that saturation is exercised.
    match u8::arbitrary(g) % 8 {
        0 => u32::MAX - u32::arbitrary(g) % 4,
        1 => u32::MAX / 2 + u32::arbitrary(g) % 3,
        _ => u32::arbitrary(g) % 100,
    }
}

impl Arbitrary for CounterCase {
    fn arbitrary(g: &mut Gen) -> CounterCase {
        let page_len = 1 + u32::arbitrary(g) % 24;
        let n = usize::arbitrary(g) % 20;
        let deltas = (0..n)
            .map(|_| {
                let k = usize::arbitrary(g) % (2 * page_len as usize + 1);
                (0..k)
                    .map(|_| (u32::arbitrary(g) % page_len, arbitrary_add(g)))
                    .collect()
            })
            .collect();
        let cuts = (0..usize::arbitrary(g) % 6)
            .map(|_| usize::arbitrary(g) % (n + 1))
            .collect();
        CounterCase {
            page_len,
            deltas,
            cuts,
        }
    }
}

fn model(case: &CounterCase) -> Vec<u32> {
    let mut cells = vec![0u32; case.page_len as usize];
    for delta in &case.deltas {
        for (i, add) in delta {
            cells[*i as usize] = cells[*i as usize].saturating_add(*add);
        }
    }
    cells
}

fn encoded(case: &CounterCase) -> Vec<Vec<u8>> {
    case.deltas
        .iter()
        .map(|d| {
            CounterDelta::sparse(case.page_len, d.clone())
                .unwrap()
                .encode()
        })
        .collect()
}

/// Splits `ops` at `cuts` and partial-merges each run (keeping it as is where the
/// partial merge declines); then, as RocksDB may, partial-merges the results again.
fn grouped(ops: &[Vec<u8>], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = cuts.to_vec();
    cuts.push(0);
    cuts.push(ops.len());
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    for w in cuts.windows(2) {
        let run = &ops[w[0]..w[1]];
        match partial_merge(run.iter().map(Vec::as_slice)) {
            Some(one) => out.push(one),
            None => out.extend(run.iter().cloned()),
        }
    }
    if out.len() > 2 {
        let tail = out.split_off(out.len() / 2);
        if let Some(one) = partial_merge(tail.iter().map(Vec::as_slice)) {
            out.push(one);
        } else {
            out.extend(tail);
        }
    }
    out
}

fn cells(value: &[u8]) -> Vec<u32> {
    CounterPage::decode(value)
        .expect("merged page decodes")
        .into_cells()
}

quickcheck! {
    fn counter_paths_agree_with_the_model(case: CounterCase) -> TestResult {
        if case.deltas.is_empty() {
            return TestResult::discard();
        }
        let want = model(&case);
        let ops = encoded(&case);

        let mut one_by_one: Option<Vec<u8>> = None;
        for op in &ops {
            let merged = full_merge(one_by_one.as_deref(), [op.as_slice()]);
            assert_eq!(merged.skipped, 0);
            one_by_one = Some(merged.value);
        }
        let all_at_once = full_merge(None, ops.iter().map(Vec::as_slice));
        let groups = grouped(&ops, &case.cuts);
        let through_partials = full_merge(None, groups.iter().map(Vec::as_slice));

        assert_eq!(all_at_once.skipped, 0);
        assert_eq!(through_partials.skipped, 0);
        assert_eq!(cells(&one_by_one.unwrap()), want);
        assert_eq!(cells(&all_at_once.value), want);
        // Deterministic: the same page, to the byte.
        assert_eq!(through_partials.value, all_at_once.value);
        TestResult::passed()
    }

    fn partial_merges_stay_bounded(case: CounterCase) -> bool {
        let ops = encoded(&case);
        let dense_len = CounterDelta::dense(vec![0; case.page_len as usize]).unwrap().encode().len();
        match partial_merge(ops.iter().map(Vec::as_slice)) {
            Some(one) => one.len() <= dense_len,
            None => ops.is_empty(),
        }
    }

    fn corrupt_operands_are_skipped_not_fatal(case: CounterCase, flips: Vec<(usize, u8)>) -> TestResult {
        let mut ops = encoded(&case);
        if ops.is_empty() || flips.is_empty() {
            return TestResult::discard();
        }
        let n = ops.len();
        for (at, bits) in &flips {
            let op = &mut ops[at % n];
            let i = at / n % op.len();
            op[i] ^= bits | 1;
        }
        // Must not panic; every operand is either applied or counted as skipped.
        let merged = full_merge(None, ops.iter().map(Vec::as_slice));
        let applied = ops.iter().filter(|op| CounterDelta::decode(op).is_ok()).count();
        TestResult::from_bool(merged.skipped + applied >= ops.len() && merged.skipped <= ops.len())
    }

    fn arbitrary_bytes_never_panic(existing: Option<Vec<u8>>, ops: Vec<Vec<u8>>) -> bool {
        let merged = full_merge(existing.as_deref(), ops.iter().map(Vec::as_slice));
        let _ = partial_merge(ops.iter().map(Vec::as_slice));
        merged.skipped <= ops.len()
    }

    fn tally_paths_agree(deltas: Vec<Vec<u64>>, cut: usize) -> TestResult {
        // RocksDB never merges nothing into nothing.
        if deltas.is_empty() {
            return TestResult::discard();
        }
        let mut want: Vec<u64> = Vec::new();
        for d in &deltas {
            if want.len() < d.len() { want.resize(d.len(), 0); }
            for (w, a) in want.iter_mut().zip(d) { *w = w.wrapping_add(*a); }
        }
        let ops: Vec<Vec<u8>> = deltas.iter().map(|d| Tally::new(d.clone()).encode_delta()).collect();
        let cut = if ops.is_empty() { 0 } else { cut % ops.len() };
        let mut grouped: Vec<Vec<u8>> = ops[..cut].to_vec();
        if let Some(one) = partial_merge(ops[cut..].iter().map(Vec::as_slice)) {
            grouped.push(one);
        }
        let merged = full_merge(None, grouped.iter().map(Vec::as_slice));
        let page = Tally::decode_page(&merged.value).unwrap();
        TestResult::from_bool(page.slots() == want.as_slice())
    }
}

/// A corrupt stored page comes back unchanged, so that its reader sees the corruption.
#[test]
fn corrupt_existing_page_is_returned_unchanged() {
    let mut page = CounterPage::zeroed(8).encode();
    page[14] ^= 0xff;
    let op = CounterDelta::sparse(8, vec![(0, 1)]).unwrap().encode();
    let merged = full_merge(Some(&page), [op.as_slice()]);
    assert_eq!(merged.value, page);
    assert_eq!(merged.skipped, 1);
    assert!(CounterPage::decode(&merged.value).is_err());
}

/// A delta written for a page of another length is skipped, not applied out of shape,
/// and the page says it lacks a write.
#[test]
fn delta_of_another_page_length_is_skipped() {
    let page = CounterPage::zeroed(8).encode();
    let op = CounterDelta::sparse(4, vec![(0, 1)]).unwrap().encode();
    let merged = full_merge(Some(&page), [op.as_slice()]);
    assert_eq!(merged.skipped, 1);
    assert_eq!(
        CounterPage::decode(&merged.value),
        Err(rocksketch_merge::Error::LostOperands)
    );
    assert_eq!(partial_merge([op.as_slice(), page.as_slice()]), None);
}

/// An operand with flipped bytes is dropped without failing the merge; the page it
/// was meant for is flagged, every later merge keeps the flag, and reads report it.
#[test]
fn a_corrupt_operand_flags_the_page_for_good() {
    let good = CounterDelta::sparse(8, vec![(1, 5)]).unwrap().encode();
    let mut bad = CounterDelta::sparse(8, vec![(2, 7)]).unwrap().encode();
    let last = bad.len() - 1;
    bad[last] ^= 0x40;
    let merged = full_merge(None, [good.as_slice(), bad.as_slice()]);
    assert_eq!(merged.skipped, 1);
    let lost = Err(rocksketch_merge::Error::LostOperands);
    assert_eq!(CounterPage::decode(&merged.value), lost);
    let later = full_merge(Some(&merged.value), [good.as_slice()]);
    assert_eq!(CounterPage::decode(&later.value), lost);
    for (page, op) in [
        (
            rocksketch_merge::bits::BitPage::zeroed(64).encode(),
            rocksketch_merge::bits::BitDelta::sparse(64, vec![3])
                .unwrap()
                .encode(),
        ),
        (
            rocksketch_merge::tally::Tally::new(vec![1]).encode_page(),
            rocksketch_merge::tally::Tally::new(vec![2]).encode_delta(),
        ),
    ] {
        let mut op = op;
        op[12] ^= 0xff;
        let merged = full_merge(Some(&page), [op.as_slice()]);
        assert_eq!(merged.skipped, 1);
        assert!(matches!(
            rocksketch_merge::header::decode(&merged.value),
            Err(rocksketch_merge::Error::LostOperands)
        ));
    }
}

mod bit_pages {
    use quickcheck::{quickcheck, TestResult};
    use rocksketch_merge::bits::{BitDelta, BitPage};
    use rocksketch_merge::{full_merge, partial_merge};
    use std::collections::BTreeSet;

    quickcheck! {
        /// Bit deltas one by one, through a partial-merge split, and all at once agree
        /// with a `BTreeSet` of bits.
        fn bit_paths_agree_with_a_set(bytes: u8, deltas: Vec<Vec<u32>>, cut: usize) -> TestResult {
            if deltas.is_empty() {
                return TestResult::discard();
            }
            let page_bits = 8 * (1 + u32::from(bytes % 16));
            let deltas: Vec<Vec<u32>> = deltas
                .into_iter()
                .map(|d| d.into_iter().map(|b| b % page_bits).collect())
                .collect();
            let want: BTreeSet<u32> = deltas.iter().flatten().copied().collect();
            let ops: Vec<Vec<u8>> = deltas
                .iter()
                .map(|d| BitDelta::sparse(page_bits, d.clone()).unwrap().encode())
                .collect();
            let cut = cut % ops.len();
            let mut grouped = ops[..cut].to_vec();
            grouped.push(partial_merge(ops[cut..].iter().map(Vec::as_slice)).unwrap());
            let all = full_merge(None, ops.iter().map(Vec::as_slice));
            let through = full_merge(None, grouped.iter().map(Vec::as_slice));
            let mut one_by_one: Option<Vec<u8>> = None;
            for op in &ops {
                one_by_one = Some(full_merge(one_by_one.as_deref(), [op.as_slice()]).value);
            }
            let page = BitPage::decode(&all.value).unwrap();
            let got: BTreeSet<u32> = (0..page_bits).filter(|b| page.get(*b)).collect();
            TestResult::from_bool(
                got == want && through.value == all.value && one_by_one == Some(all.value.clone()),
            )
        }
    }
}

mod cuckoo_pages {
    use quickcheck::{Arbitrary, Gen, QuickCheck};
    use rocksketch_merge::cuckoo::{FpOp, FpOps, FpPage, Shape};
    use rocksketch_merge::{full_merge, partial_merge};
    use std::collections::BTreeMap;

    /// A page shape and operands of inserts and of deletes of present fingerprints,
    /// crowded enough that kicks and the stash are exercised.
    #[derive(Debug, Clone)]
    struct Case {
        shape: Shape,
        operands: Vec<Vec<FpOp>>,
        cuts: Vec<usize>,
    }

    fn pair(shape: Shape, bucket: u32, fp: u16) -> (u32, u16) {
        (bucket.min(shape.alt(bucket, fp)), fp)
    }

    impl Arbitrary for Case {
        fn arbitrary(g: &mut Gen) -> Case {
            let fp_bits = [8, 12, 16][usize::arbitrary(g) % 3];
            let bucket_size = 1 + u8::arbitrary(g) % 4;
            let buckets = 1 << (u8::arbitrary(g) % 4);
            let shape = Shape::new(fp_bits, bucket_size, buckets).unwrap();
            // Few distinct fingerprints, so that copies and collisions are common.
            let fps = 1 + u16::arbitrary(g) % 12;
            let fp_max = ((1u32 << fp_bits) - 1) as u16;
            let mut present: Vec<(u32, u16)> = Vec::new();
            let mut operands = Vec::new();
            for _ in 0..usize::arbitrary(g) % 24 {
                let mut ops = Vec::new();
                for _ in 0..usize::arbitrary(g) % 8 {
                    if !present.is_empty() && u8::arbitrary(g) % 3 == 0 {
                        let (b, fp) = present.swap_remove(usize::arbitrary(g) % present.len());
                        // Either bucket of the pair names it.
                        let b = if bool::arbitrary(g) {
                            b
                        } else {
                            shape.alt(b, fp)
                        };
                        ops.push(FpOp::Delete { bucket: b, fp });
                    } else {
                        let b = u32::arbitrary(g) % buckets;
                        let fp = (fp_max - u16::arbitrary(g) % fps).max(1);
                        present.push((b, fp));
                        ops.push(FpOp::Insert { bucket: b, fp });
                    }
                }
                operands.push(ops);
            }
            let n = operands.len();
            let cuts = (0..usize::arbitrary(g) % 5)
                .map(|_| usize::arbitrary(g) % (n + 1))
                .collect();
            Case {
                shape,
                operands,
                cuts,
            }
        }
    }

    fn check(case: Case) -> bool {
        let shape = case.shape;
        let encoded: Vec<Vec<u8>> = case
            .operands
            .iter()
            .map(|ops| FpOps::new(shape, ops.clone()).unwrap().encode())
            .collect();
        // The model: copies per (bucket pair, fingerprint).
        let mut model: BTreeMap<(u32, u16), u32> = BTreeMap::new();
        for op in case.operands.iter().flatten() {
            match *op {
                FpOp::Insert { bucket, fp } => {
                    *model.entry(pair(shape, bucket, fp)).or_default() += 1
                }
                FpOp::Delete { bucket, fp } => {
                    let n = model.entry(pair(shape, bucket, fp)).or_default();
                    *n = n
                        .checked_sub(1)
                        .expect("the case deletes only present items");
                }
            }
        }
        // One by one, each operand merged onto the page before it.
        let mut one_by_one: Option<Vec<u8>> = None;
        for op in &encoded {
            let merged = full_merge(one_by_one.as_deref(), [op.as_slice()]);
            assert_eq!(merged.skipped, 0);
            one_by_one = Some(merged.value);
        }
        // All at once, and through partial merges of the runs between the cuts.
        let all = full_merge(None, encoded.iter().map(Vec::as_slice));
        let mut cuts = case.cuts.clone();
        cuts.extend([0, encoded.len()]);
        cuts.sort_unstable();
        cuts.dedup();
        let runs: Vec<Vec<u8>> = cuts
            .windows(2)
            .filter_map(|w| {
                let run: Vec<&[u8]> = encoded[w[0]..w[1]].iter().map(Vec::as_slice).collect();
                match run.len() {
                    0 => None,
                    _ => Some(partial_merge(run.iter().copied()).unwrap_or_else(|| {
                        // Declined: full-merge the run's operands separately instead.
                        panic!("partial merge of same-shape operands declined")
                    })),
                }
            })
            .collect();
        let partials = full_merge(None, runs.iter().map(Vec::as_slice));
        for value in [one_by_one.unwrap_or_default(), all.value, partials.value] {
            if value.is_empty() {
                assert!(model.values().all(|n| *n == 0));
                continue;
            }
            let page = FpPage::decode(&value).unwrap();
            let held: u32 = (page.occupied() + page.stashed()) as u32;
            assert_eq!(
                held,
                model.values().sum::<u32>(),
                "nothing lost, nothing invented"
            );
            for (&(bucket, fp), &n) in &model {
                assert_eq!(page.count(bucket, fp), n, "fp {fp} at bucket {bucket}");
                assert_eq!(page.count(shape.alt(bucket, fp), fp), n);
            }
        }
        true
    }

    #[test]
    fn cuckoo_pages_agree_with_a_multiset() {
        QuickCheck::new()
            .tests(500)
            .quickcheck(check as fn(Case) -> bool);
    }
}
