//! `rocksketch bench tdigest-add`: values added blind, as a read-modify-write of the
//! digest, and as raw puts of the same bytes, side by side; read latency before and
//! after compaction; and quantile accuracy against exact ranks.

use crate::args::Args;
use crate::bench::{print_comparison, store_options, Mode, Scratch};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use rocksketch::{Store, TDigest};
use serde_json::json;
use std::time::{Duration, Instant};

const ROUNDS: usize = 4;
const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 0.999];

fn err(e: rocksketch::Error) -> String {
    e.to_string()
}

fn open_digest(scratch: &Scratch, name: &str, args: &Args) -> Result<(Store, TDigest), String> {
    let store = Store::open(scratch.path.join(name), store_options(args)?).map_err(err)?;
    let digest = store.tdigest("bench");
    digest.create(100).map_err(err)?;
    Ok((store, digest))
}

/// `n` values from the named distribution, seeded.
pub(crate) fn values(distribution: &str, n: usize, seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    match distribution {
        "uniform" => (0..n).map(|_| rng.gen::<f64>()).collect(),
        _ => {
            let lognormal = LogNormal::new(0.0, 1.5).unwrap_or_else(|_| unreachable!());
            (0..n).map(|_| lognormal.sample(&mut rng)).collect()
        }
    }
}

/// `|rank(estimate) / n - q|` at each of [`QUANTILES`] for `n` values (drawn with
/// `seed`) added to a fresh digest of compression 100 in batches of 2000.
pub(crate) fn rank_errors(
    store: &Store,
    distribution: &str,
    n: usize,
    seed: u64,
) -> Result<Vec<f64>, String> {
    let digest = store.tdigest(format!("{distribution}-{seed}"));
    digest.create(100).map_err(err)?;
    let mut data = values(distribution, n, seed);
    for batch in data.chunks(2000) {
        digest.add(batch).map_err(err)?;
    }
    let estimates = digest.quantiles(&QUANTILES).map_err(err)?;
    data.sort_by(f64::total_cmp);
    Ok(QUANTILES
        .iter()
        .zip(estimates)
        .map(|(q, x)| {
            let below = data.partition_point(|v| *v < x);
            let at_most = data.partition_point(|v| *v <= x);
            let rank = (below + at_most) as f64 / 2.0 / n as f64;
            (rank - q).abs()
        })
        .collect())
}

pub(crate) fn tdigest_add(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 2_000_000)?;
    let batch: usize = args.get("batch", 100)?;
    let queries: usize = args.get("queries", 2_000)?;
    let accuracy_n: usize = args.get("accuracy-n", 1_000_000)?;
    let seeds: u64 = args.get("seeds", 9)?;
    let scratch = Scratch::new(args)?;
    let modes = [Mode::Blind, Mode::Rewrite, Mode::RawPut];
    let mut digests = Vec::new();
    for mode in modes {
        digests.push(open_digest(&scratch, &mode.name().replace(' ', "-"), args)?);
    }
    let data = values("lognormal", n, 1);
    let batches: Vec<&[f64]> = data.chunks(batch.max(1)).collect();
    let mut elapsed = vec![Duration::ZERO; modes.len()];
    let per_round = batches.len().div_ceil(ROUNDS).max(1);
    for (round, chunk) in batches.chunks(per_round).enumerate() {
        for (m, mode) in modes.iter().enumerate() {
            let digest = &digests[m].1;
            let started = Instant::now();
            for (i, values) in chunk.iter().enumerate() {
                match mode {
                    Mode::Blind => digest.add(values),
                    Mode::Rewrite => digest.add_rewriting_page(values),
                    Mode::RawPut => digest.put_add_operands(values, (round * per_round + i) as u64),
                }
                .map_err(err)?;
            }
            elapsed[m] += started.elapsed();
        }
    }
    let rates: Vec<f64> = elapsed.iter().map(|t| n as f64 / t.as_secs_f64()).collect();

    // Both stored digests must give the same answers before their speeds mean anything.
    let (blind_store, blind) = &digests[0];
    let probe = [0.1, 0.5, 0.99];
    if blind.quantiles(&probe).map_err(err)? != digests[1].1.quantiles(&probe).map_err(err)? {
        return Err("blind and read-modify-write digests disagree".to_owned());
    }
    // Reads before compaction see the value operands since the last full merge.
    let read = |digest: &TDigest| {
        let items: Vec<String> = (0..queries).map(|i| i.to_string()).collect();
        crate::bench::percentiles(&items, |_| {
            digest.add(&[1.0]).map_err(err)?;
            digest.quantiles(&[0.99]).map(|_| ()).map_err(err)
        })
    };
    let before = read(blind)?;
    blind_store.compact().map_err(err)?;
    let after = read(blind)?;

    // Each seed's errors, then per q the median and the worst over the seeds: a
    // t-digest's error at one q varies a lot from one sample to the next.
    let accuracy = Store::open(scratch.path.join("accuracy"), Default::default()).map_err(err)?;
    let mut spread = Vec::new();
    for distribution in ["lognormal", "uniform"] {
        let mut runs = Vec::new();
        for seed in 1..=seeds.max(1) {
            runs.push(rank_errors(&accuracy, distribution, accuracy_n, seed)?);
        }
        let per_q: Vec<(f64, f64)> = (0..QUANTILES.len())
            .map(|i| {
                let mut e: Vec<f64> = runs.iter().map(|r| r[i]).collect();
                e.sort_by(f64::total_cmp);
                (e[e.len() / 2], e[e.len() - 1])
            })
            .collect();
        spread.push(per_q);
    }
    let medians = |d: usize| spread[d].iter().map(|m| m.0).collect::<Vec<f64>>();
    let worst = |d: usize| spread[d].iter().map(|m| m.1).collect::<Vec<f64>>();
    let report = json!({
        "benchmark": "tdigest-add",
        "values": n,
        "values_per_add": batch,
        "values_per_sec": { "blind_merge": rates[0], "read_modify_write": rates[1], "raw_put": rates[2] },
        "blind_vs_read_modify_write": rates[0] / rates[1],
        "blind_vs_raw_put": rates[0] / rates[2],
        "add_then_quantile_us": {
            "before_compaction": { "p50": before.0, "p99": before.1 },
            "after_compaction": { "p50": after.0, "p99": after.1 },
        },
        "rank_error": {
            "q": QUANTILES,
            "seeds": seeds,
            "lognormal_0_1_5": { "median": medians(0), "worst": worst(0) },
            "uniform_0_1": { "median": medians(1), "worst": worst(1) },
        },
    });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!("tdigest-add: {n} lognormal(0, 1.5) values, {batch} per add, compression 100");
    let reads = format!("add 1 value + QUANTILE 0.99, {queries} times (us)");
    print_comparison("values/s", &modes, &rates, &reads, before, after);
    println!(
        "rank error |rank(estimate)/n - q|, {accuracy_n} values in adds of 2000, {seeds} samples:"
    );
    println!(
        "  q                   {:>10} {:>10} {:>10} {:>10}",
        0.5, 0.9, 0.99, 0.999
    );
    for (d, name) in ["lognormal", "uniform"].iter().enumerate() {
        for (what, errors) in [("median", medians(d)), ("worst", worst(d))] {
            let cells: Vec<String> = errors.iter().map(|e| format!("{e:>10.1e}")).collect();
            println!("  {name:<10} {what:<7} {}", cells.join(" "));
        }
    }
    Ok(())
}
