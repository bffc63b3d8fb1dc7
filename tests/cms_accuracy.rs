//! The count-min guarantee, measured: no estimate is below the true count, and the share
//! of items overestimated by more than `error × total` stays within `probability`.
//! The stream is seeded, so the run is the same every time; it cannot flake.

mod common;

use rand::{rngs::StdRng, Rng, SeedableRng};
use rand_distr::Zipf;
use std::collections::HashMap;

#[test]
fn estimates_stay_within_the_bound() {
    const ERROR: f64 = 0.001;
    const PROBABILITY: f64 = 0.01;
    let t = common::TempStore::new();
    let cms = t.store().cms("acc");
    cms.init_by_prob(ERROR, PROBABILITY).unwrap();

    let zipf = Zipf::new(100_000, 1.1).unwrap();
    let mut rng = StdRng::seed_from_u64(42);
    let mut exact: HashMap<String, u64> = HashMap::new();
    for _ in 0..200 {
        let batch: Vec<(String, u64)> = (0..1000)
            .map(|_| {
                (
                    format!("item:{}", rng.sample(zipf) as u64),
                    1 + rng.gen_range(0..3),
                )
            })
            .collect();
        for (item, n) in &batch {
            *exact.entry(item.clone()).or_default() += n;
        }
        cms.incr_by(&batch).unwrap();
    }
    let total = cms.info().unwrap().count;
    assert_eq!(total, exact.values().sum::<u64>());
    let items: Vec<&String> = exact.keys().collect();
    let estimates = cms.query(&items).unwrap();
    let bound = ERROR * total as f64;
    let mut over_bound = 0;
    for (item, est) in items.iter().zip(&estimates) {
        let truth = exact[*item];
        assert!(
            u64::from(*est) >= truth,
            "{item}: estimate {est} below {truth}"
        );
        if (u64::from(*est) - truth) as f64 > bound {
            over_bound += 1;
        }
    }
    let share = f64::from(over_bound) / items.len() as f64;
    eprintln!(
        "{} distinct items, total {total}, bound {bound:.0}: {over_bound} over ({share:.5})",
        items.len()
    );
    assert!(share <= PROBABILITY, "{share} of items exceed the bound");
}
