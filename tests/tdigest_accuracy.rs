//! Quantile accuracy, measured: values from two seeded distributions (so the run is the
//! same every time and cannot flake) added in batches of 2000, then compacted, must give
//! quantile estimates whose rank error stays within the t-digest's bound: a centroid
//! around quantile q holds at most 2 pi q (1 - q) n ln(n) / compression observations
//! (the scale function's limit), and an estimate is off by at most half of one.

mod common;

use rand::{rngs::StdRng, Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};

fn check(name: &str, mut data: Vec<f64>) {
    let t = common::TempStore::new();
    let digest = t.store().tdigest(name);
    digest.create(100).unwrap();
    for batch in data.chunks(2000) {
        digest.add(batch).unwrap();
    }
    t.store().compact().unwrap();
    data.sort_by(f64::total_cmp);
    let n = data.len() as f64;
    assert_eq!(digest.info().unwrap().observations, data.len() as i64);
    assert_eq!(digest.min().unwrap(), data[0]);
    assert_eq!(digest.max().unwrap(), *data.last().unwrap());
    let qs = [0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999];
    for (q, estimate) in qs.iter().zip(digest.quantiles(&qs).unwrap()) {
        let rank = data.partition_point(|v| *v < estimate) as f64 / n;
        let bound = std::f64::consts::PI * q * (1.0 - q) * n.ln() / 100.0 + 1.0 / n;
        let error = (rank - q).abs();
        assert!(
            error <= bound,
            "{name} q {q}: rank error {error:e} over the bound {bound:e}"
        );
    }
    // The ranks answer the other way round, within the same bound.
    let probes: Vec<f64> = qs.iter().map(|q| data[(q * n) as usize]).collect();
    for ((q, probe), rank) in qs
        .iter()
        .zip(&probes)
        .zip(digest.ranks(&probes, false).unwrap())
    {
        let bound = std::f64::consts::PI * q * (1.0 - q) * n.ln() / 100.0 + 2.0 / n;
        let error = (rank as f64 / n - q).abs();
        assert!(
            error <= bound,
            "{name} rank of {probe}: error {error:e} over {bound:e}"
        );
    }
}

#[test]
fn quantiles_stay_within_the_bound() {
    let mut rng = StdRng::seed_from_u64(11);
    let lognormal = LogNormal::new(0.0, 1.5).unwrap();
    check(
        "lognormal",
        (0..200_000).map(|_| lognormal.sample(&mut rng)).collect(),
    );
    check("uniform", (0..200_000).map(|_| rng.gen::<f64>()).collect());
}

#[test]
fn the_largest_compression_keeps_its_page_within_the_page_limit() {
    use rocksketch_merge::tdigest::MAX_COMPRESSION;
    let t = common::TempStore::new();
    let too_big = t.store().tdigest("too-big");
    let err = too_big.create(u64::from(MAX_COMPRESSION) + 1).unwrap_err();
    assert_eq!(
        rocksketch::command::Reply::from(&err),
        rocksketch::command::Reply::Error("ERR T-Digest: allocation failed".into())
    );
    assert_eq!(err.to_string(), "T-Digest: allocation failed");
    assert!(!t.store().ns(0).exists(b"too-big").unwrap());
    let digest = t.store().tdigest("max");
    digest.create(u64::from(MAX_COMPRESSION)).unwrap();
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..40 {
        let batch: Vec<f64> = (0..5000).map(|_| rng.gen::<f64>()).collect();
        digest.add(&batch).unwrap();
    }
    // Identical values too: the quicksort's worst case, settled in linear time.
    digest.add(&vec![0.5; 100_000]).unwrap();
    let info = digest.info().unwrap();
    assert_eq!(info.observations, 300_000);
    assert!(info.merged_nodes + info.unmerged_nodes <= info.capacity);
    let page_bytes = 12 + 56 + 16 * info.capacity as usize;
    assert!(page_bytes <= rocksketch_merge::MAX_PAGE_BYTES);
    let median = digest.quantiles(&[0.5]).unwrap()[0];
    assert!((median - 0.5).abs() < 0.01, "{median}");
}
