//! `rocksketch demo`: the main job on an embedded default data directory. Ingests a
//! generated Zipf stream into a count-min sketch with blind merges and prints the
//! estimates of the heaviest items next to their exact counts and the error bound.

use crate::args::Args;
use rand::{rngs::StdRng, Rng, SeedableRng};
use rand_distr::Zipf;
use rocksketch::{Store, StoreOptions};
use std::collections::HashMap;
use std::time::Instant;

const ERROR: f64 = 0.001;
const PROBABILITY: f64 = 0.01;

pub fn run(args: Args) -> Result<(), String> {
    let dir = args.string("dir").unwrap_or("./rocksketch-data").to_owned();
    let n: u64 = args.get("n", 1_000_000)?;
    let store = Store::open(&dir, StoreOptions::default()).map_err(|e| e.to_string())?;
    let key = format!("demo:{}", std::process::id());
    let cms = store.cms(&key);
    cms.init_by_prob(ERROR, PROBABILITY)
        .map_err(|e| e.to_string())?;

    let zipf = Zipf::new(100_000, 1.1).map_err(|e| e.to_string())?;
    let mut rng = StdRng::seed_from_u64(7);
    let mut exact: HashMap<u64, u64> = HashMap::new();
    let started = Instant::now();
    let mut batch = Vec::with_capacity(100);
    for _ in 0..n {
        let item = rng.sample(zipf) as u64;
        *exact.entry(item).or_default() += 1;
        batch.push((format!("item:{item}"), 1));
        if batch.len() == batch.capacity() {
            cms.incr_by(&batch).map_err(|e| e.to_string())?;
            batch.clear();
        }
    }
    if !batch.is_empty() {
        cms.incr_by(&batch).map_err(|e| e.to_string())?;
    }
    let elapsed = started.elapsed();
    let info = cms.info().map_err(|e| e.to_string())?;
    let bound = ERROR * info.count as f64;
    println!(
        "ingested {n} items ({} distinct) into '{key}' in {dir} ({}x{}) in {:.2?}, {:.0} items/s",
        exact.len(),
        info.width,
        info.depth,
        elapsed,
        n as f64 / elapsed.as_secs_f64()
    );
    println!(
        "error bound: estimate - exact <= {ERROR} x {} = {bound:.0} with probability {}",
        info.count,
        1.0 - PROBABILITY
    );
    let mut heavy: Vec<(u64, u64)> = exact.iter().map(|(k, v)| (*k, *v)).collect();
    heavy.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!(
        "{:<14} {:>10} {:>10} {:>6}",
        "item", "exact", "estimate", "over"
    );
    for (item, count) in heavy.iter().take(10) {
        let est = cms
            .query(&[format!("item:{item}")])
            .map_err(|e| e.to_string())?[0];
        println!(
            "{:<14} {:>10} {:>10} {:>6}",
            format!("item:{item}"),
            count,
            est,
            u64::from(est) - count
        );
    }
    let names: Vec<String> = heavy.iter().map(|(k, _)| format!("item:{k}")).collect();
    let estimates = cms.query(&names).map_err(|e| e.to_string())?;
    let over = heavy
        .iter()
        .zip(&estimates)
        .filter(|((_, count), est)| (u64::from(**est) - count) as f64 > bound)
        .count();
    println!(
        "{over} of {} distinct items exceed the bound ({:.4} %, allowed {} %)",
        heavy.len(),
        100.0 * over as f64 / heavy.len() as f64,
        100.0 * PROBABILITY
    );
    Ok(())
}
