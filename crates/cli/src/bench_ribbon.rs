//! `rocksketch bench ribbon`: a Ribbon filter against rocksketch's own Bloom filter at
//! the same measured false-positive rate: bits per item on disk, FPR, build throughput,
//! and exists latency, side by side in one run.

use crate::args::Args;
use crate::bench::{percentiles, store_options, Scratch};
use crate::bench_bloom::pages_bytes_on_disk;
use rocksketch::{RibbonFilter, Store};
use rocksketch_merge::ribbon::{item_hash, solve};
use serde_json::json;
use std::time::Instant;

const BATCH: usize = 10_000;

fn names(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}:{i}")).collect()
}

/// The share of `absent` never-added items the filter answers present.
fn fpr(
    absent: usize,
    mexists: impl Fn(&[String]) -> rocksketch::Result<Vec<bool>>,
) -> Result<f64, String> {
    let mut positives = 0;
    for start in (0..absent).step_by(BATCH) {
        let probe = names("absent", start..(start + BATCH).min(absent));
        positives += mexists(&probe)
            .map_err(|e| e.to_string())?
            .iter()
            .filter(|f| **f)
            .count();
    }
    Ok(positives as f64 / absent as f64)
}

/// Items solved per second by the solver alone, on one thread: the shards a build of
/// `n` items makes, from their sorted hashes.
fn solve_rate(n: usize, r: u8) -> Result<f64, String> {
    let mut hashes: Vec<u64> = (0..n)
        .map(|i| item_hash(format!("item:{i}").as_bytes()))
        .collect();
    hashes.sort_unstable();
    let started = Instant::now();
    for shard in hashes.chunks(6000) {
        solve(shard, r).ok_or("a shard did not solve")?;
    }
    Ok(n as f64 / started.elapsed().as_secs_f64())
}

pub fn ribbon(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 1_000_000)?;
    let absent: usize = args.get("absent", 1_000_000)?;
    let queries: usize = args.get("queries", 20_000)?;
    let error = 1.0 / 128.0;
    let r = 7u8;
    let scratch = Scratch::new(args)?;
    let options = store_options(args)?;
    let e = |e: rocksketch::Error| e.to_string();

    let store = Store::open(scratch.path.join("ribbon"), options.clone()).map_err(e)?;
    let ribbon: RibbonFilter = store.ribbon("bench");
    ribbon.reserve(error).map_err(e)?;
    let started = Instant::now();
    for start in (0..n).step_by(BATCH) {
        ribbon
            .add(&names("item", start..(start + BATCH).min(n)))
            .map_err(e)?;
    }
    let staged_per_sec = n as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    let built = ribbon.build().map_err(e)?;
    let build_secs = started.elapsed().as_secs_f64();
    if built != n as u64 {
        return Err(format!("built {built} of {n} items"));
    }
    let solved_per_sec = solve_rate(n, r)?;
    store.compact().map_err(e)?;
    let ribbon_bits = pages_bytes_on_disk(&store)? as f64 * 8.0 / n as f64;
    let ribbon_fpr = fpr(absent, |p| ribbon.mexists(p))?;
    let sample = names("item", 0..n);
    for chunk in sample.chunks(BATCH * 10) {
        if !ribbon.mexists(chunk).map_err(e)?.iter().all(|f| *f) {
            return Err("the ribbon filter lost an item".to_owned());
        }
    }

    // The Bloom filter: non-scaling, sized for the false-positive rate the Ribbon
    // filter measured, holding the same items.
    let bloom_store = Store::open(scratch.path.join("bloom"), options).map_err(e)?;
    let bloom = bloom_store.bloom("bench");
    bloom
        .reserve(ribbon_fpr.max(1e-6), n as u64, 0)
        .map_err(e)?;
    for start in (0..n).step_by(BATCH) {
        bloom
            .add_blind(&names("item", start..(start + BATCH).min(n)))
            .map_err(e)?;
    }
    bloom_store.compact().map_err(e)?;
    let bloom_bits = pages_bytes_on_disk(&bloom_store)? as f64 * 8.0 / n as f64;
    let bloom_fpr = fpr(absent, |p| bloom.mexists(p))?;

    let probes: Vec<String> = (0..queries)
        .map(|i| match i % 2 {
            0 => format!("item:{}", i * 7 % n.max(1)),
            _ => format!("absent:{i}"),
        })
        .collect();
    // Warm both caches, then measure each in turn, twice, keeping the better run.
    let mut latency = [(f64::MAX, f64::MAX); 2];
    for _ in 0..3 {
        let rb = percentiles(&probes, |i| ribbon.exists(i).map(|_| ()).map_err(e))?;
        let bf = percentiles(&probes, |i| bloom.exists(i).map(|_| ()).map_err(e))?;
        for (best, now) in latency.iter_mut().zip([rb, bf]) {
            *best = (best.0.min(now.0), best.1.min(now.1));
        }
    }

    let report = json!({
        "benchmark": "ribbon",
        "items": n,
        "error": error,
        "result_bits": r,
        "ribbon": {
            "bits_per_item_on_disk": ribbon_bits,
            "fpr": ribbon_fpr,
            "staged_per_sec": staged_per_sec,
            "build_items_per_sec": n as f64 / build_secs,
            "solve_items_per_sec": solved_per_sec,
            "exists_us": { "p50": latency[0].0, "p99": latency[0].1 },
        },
        "bloom": {
            "bits_per_item_on_disk": bloom_bits,
            "fpr": bloom_fpr,
            "exists_us": { "p50": latency[1].0, "p99": latency[1].1 },
        },
        "ribbon_bits_vs_r": ribbon_bits / f64::from(r),
        "ribbon_bits_vs_bloom": ribbon_bits / bloom_bits,
        "ribbon_fpr_vs_2^-r": ribbon_fpr * 128.0,
    });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!(
        "ribbon: {n} items at error 1/128 (r = 7), against a Bloom filter at the FPR measured"
    );
    println!("{:<28} {:>10} {:>10}", "", "ribbon", "bloom");
    println!(
        "{:<28} {:>10.3} {:>10.3}",
        "bits per item on disk", ribbon_bits, bloom_bits
    );
    println!(
        "{:<28} {:>10.5} {:>10.5}",
        "false-positive rate", ribbon_fpr, bloom_fpr
    );
    println!(
        "{:<28} {:>10.2} {:>10.2}",
        "exists p50 (us)", latency[0].0, latency[1].0
    );
    println!(
        "{:<28} {:>10.2} {:>10.2}",
        "exists p99 (us)", latency[0].1, latency[1].1
    );
    println!(
        "ribbon bits / r = {:.3} (target <= 1.08)",
        ribbon_bits / f64::from(r)
    );
    println!(
        "ribbon bits / bloom bits = {:.3} (target <= 0.75)",
        ribbon_bits / bloom_bits
    );
    println!(
        "ribbon FPR / 2^-r = {:.3} (target <= 1.1)",
        ribbon_fpr * 128.0
    );
    println!(
        "staging {:.0} items/s; RIBBON.BUILD {:.0} items/s end to end; solver alone {:.0} items/s (target >= 2M)",
        staged_per_sec,
        n as f64 / build_secs,
        solved_per_sec
    );
    Ok(())
}
