//! `rocksketch bench`: measurements compared side by side in one run, as ratios.

use crate::args::Args;
use rand::{rngs::StdRng, Rng, SeedableRng};
use rand_distr::Zipf;
use rocksketch::{Cms, Store, StoreOptions};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const DISTINCT: u64 = 1_000_000;
const ZIPF_S: f64 = 1.1;
const ROUNDS: usize = 4;
/// Operations between two moves of a progress bar.
const PROGRESS_STEP: usize = 1024;

pub fn run(name: &str, args: Args) -> Result<(), String> {
    let args = &args;
    if args.switch("json") {
        crate::progress::quiet();
    }
    match name {
        "cms-incrby" => cms_incrby(args),
        "bf-add" => crate::bench_bloom::bf_add(args),
        "bf-exists" => crate::bench_bloom::bf_exists(args),
        "cf-add" => crate::bench_cuckoo::cf_add(args),
        "cf-exists" => crate::bench_cuckoo::cf_exists(args),
        "tdigest-add" => crate::bench_tdigest::tdigest_add(args),
        "topk-add" => crate::bench_topk::topk_add(args),
        "ribbon" => crate::bench_ribbon::ribbon(args),
        "pfadd" => crate::bench_hll::pfadd(args),
        "window" => crate::bench_window::window(args),
        other => Err(format!("unknown benchmark {other}")),
    }
}

/// Times `modes` ways of writing the same `batches`, side by side: the batches in
/// [`ROUNDS`] rounds, each round run by every mode in turn (so drift in the machine
/// falls on all alike). `write(mode, seq, batch)` writes batch number `seq` one way.
pub(crate) fn alternating<T>(
    batches: &[T],
    modes: usize,
    mut write: impl FnMut(usize, u64, &T) -> Result<(), String>,
) -> Result<Vec<Duration>, String> {
    let mut elapsed = vec![Duration::ZERO; modes];
    let per_round = batches.len().div_ceil(ROUNDS).max(1);
    for (round, chunk) in batches.chunks(per_round).enumerate() {
        for (mode, spent) in elapsed.iter_mut().enumerate() {
            let started = Instant::now();
            for (i, batch) in chunk.iter().enumerate() {
                write(mode, (round * per_round + i) as u64, batch)?;
            }
            *spent += started.elapsed();
        }
    }
    Ok(elapsed)
}

/// A scratch directory, removed at the end unless the user named it.
pub(crate) struct Scratch {
    pub(crate) path: PathBuf,
    remove: bool,
}

impl Scratch {
    pub(crate) fn new(args: &Args) -> Result<Scratch, String> {
        let (path, remove) = match args.string("dir") {
            Some(dir) => (PathBuf::from(dir), false),
            None => (
                std::env::temp_dir().join(format!("rocksketch-bench-{}", std::process::id())),
                true,
            ),
        };
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Scratch { path, remove })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Blind = 0,
    Rewrite = 1,
    RawPut = 2,
}

impl Mode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Blind => "blind merge",
            Mode::Rewrite => "read-modify-write",
            Mode::RawPut => "raw puts",
        }
    }
}

pub(crate) fn store_options(args: &Args) -> Result<StoreOptions, String> {
    let defaults = StoreOptions::default();
    Ok(StoreOptions {
        page_bytes: args.get("page-bytes", defaults.page_bytes)?,
        max_successive_merges: args.get("max-successive-merges", defaults.max_successive_merges)?,
        write_buffer_bytes: args.get("write-buffer-mb", defaults.write_buffer_bytes >> 20)? << 20,
        ..defaults
    })
}

fn open_sketch(root: &Path, name: &str, options: &StoreOptions) -> Result<(Store, Cms), String> {
    let store = Store::open(root.join(name), options.clone()).map_err(|e| e.to_string())?;
    let cms = store.cms("bench");
    cms.init_by_dim(2000, 7).map_err(|e| e.to_string())?;
    Ok((store, cms))
}

fn zipf_items(n: usize, seed: u64) -> Result<Vec<String>, String> {
    let zipf = Zipf::new(DISTINCT, ZIPF_S).map_err(|e| e.to_string())?;
    let mut rng = StdRng::seed_from_u64(seed);
    Ok((0..n)
        .map(|_| format!("item:{}", rng.sample(zipf) as u64))
        .collect())
}

fn cms_incrby(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 1_000_000)?;
    let queries: usize = args.get("queries", 20_000)?;
    let scratch = Scratch::new(args)?;
    let items = zipf_items(n, 1)?;
    let options = store_options(args)?;
    let modes = [Mode::Blind, Mode::Rewrite, Mode::RawPut];
    let mut sketches = Vec::new();
    for mode in modes {
        sketches.push(open_sketch(
            &scratch.path,
            mode.name().replace(' ', "-").as_str(),
            &options,
        )?);
    }

    let elapsed = interleave(&items, &modes, |mode, seq, item| {
        let cms = &sketches[mode as usize].1;
        let one = [(item, 1u64)];
        match mode {
            Mode::Blind => cms.incr_by(&one),
            Mode::Rewrite => cms.incr_by_rewriting_pages(&one),
            Mode::RawPut => cms.put_increment_operands(&one, seq),
        }
        .map_err(|e| e.to_string())
    })?;
    let rate = |m: usize| n as f64 / elapsed[m].as_secs_f64();

    // The two read paths must agree before their speeds mean anything.
    let (blind_store, blind) = &sketches[0];
    let probe = zipf_items(1000, 2)?;
    if blind.query(&probe).map_err(|e| e.to_string())?
        != sketches[1].1.query(&probe).map_err(|e| e.to_string())?
    {
        return Err("blind and read-modify-write sketches disagree".to_owned());
    }
    let query_items = zipf_items(queries, 3)?;
    let before = latencies(blind, &query_items)?;
    let compact_started = Instant::now();
    blind_store.compact().map_err(|e| e.to_string())?;
    let compact_time = compact_started.elapsed();
    let after = latencies(blind, &query_items)?;

    let report = json!({
        "benchmark": "cms-incrby",
        "writes": n,
        "sketch": "2000x7",
        "page_bytes": options.page_bytes,
        "max_successive_merges": options.max_successive_merges,
        "write_buffer_mb": options.write_buffer_bytes >> 20,
        "items": format!("Zipf({ZIPF_S}) over {DISTINCT}"),
        "writes_per_sec": {
            "blind_merge": rate(0),
            "read_modify_write": rate(1),
            "raw_put": rate(2),
        },
        "blind_vs_read_modify_write": rate(0) / rate(1),
        "blind_vs_raw_put": rate(0) / rate(2),
        "query_us": {
            "before_compaction": { "p50": before.0, "p99": before.1 },
            "after_compaction": { "p50": after.0, "p99": after.1 },
        },
        "query_p99_before_vs_after": before.1 / after.1,
        "query_p50_before_vs_after": before.0 / after.0,
        "compaction_secs": compact_time.as_secs_f64(),
    });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!("cms-incrby: {n} writes of one item each, Zipf({ZIPF_S}) over {DISTINCT} items, 2000 x 7 sketch");
    println!(
        "page bytes {}, max_successive_merges {}, memtable {} MiB",
        options.page_bytes,
        options.max_successive_merges,
        options.write_buffer_bytes >> 20
    );
    let rates: Vec<f64> = (0..modes.len()).map(rate).collect();
    let reads = format!("query latency over {queries} queries (us)");
    print_comparison("writes/s", &modes, &rates, &reads, before, after);
    Ok(())
}

/// Prints the side-by-side table of a write benchmark: each mode's rate, the two ratios
/// with their targets, and read latency before and after a full compaction.
pub(crate) fn print_comparison(
    unit: &str,
    modes: &[Mode],
    rates: &[f64],
    reads: &str,
    before: (f64, f64),
    after: (f64, f64),
) {
    println!("{:<20} {:>12} {:>10}", "mode", unit, "vs blind");
    for (mode, rate) in modes.iter().zip(rates) {
        println!(
            "{:<20} {:>12.0} {:>9.2}x",
            mode.name(),
            rate,
            rate / rates[0]
        );
    }
    println!(
        "blind / read-modify-write = {:.2} (target >= 5)",
        rates[0] / rates[1]
    );
    println!(
        "blind / raw puts          = {:.2} (target >= 0.7)",
        rates[0] / rates[2]
    );
    println!("{reads}:   p50      p99");
    println!("  before compaction  {:>8.1} {:>8.1}", before.0, before.1);
    println!("  after compaction   {:>8.1} {:>8.1}", after.0, after.1);
    println!(
        "before / after: p50 {:.2}, p99 {:.2} (target <= 3)",
        before.0 / after.0,
        before.1 / after.1
    );
}

/// Runs `write(mode, seq, item)` for every item in every mode and returns each mode's
/// total time. Rounds interleave the modes so that a noisy neighbour slows all alike.
pub(crate) fn interleave<F>(
    items: &[String],
    modes: &[Mode],
    mut write: F,
) -> Result<Vec<Duration>, String>
where
    F: FnMut(Mode, u64, &str) -> Result<(), String>,
{
    let mut elapsed = vec![Duration::ZERO; modes.len()];
    let per_round = items.len().div_ceil(ROUNDS).max(1);
    let bar = crate::progress::bar(items.len() * modes.len(), "writes");
    for (round, chunk) in items.chunks(per_round).enumerate() {
        for (m, mode) in modes.iter().enumerate() {
            let base = (round * per_round) as u64;
            // Timed in slices, so the bar moves between them, outside the clock.
            for (s, slice) in chunk.chunks(PROGRESS_STEP).enumerate() {
                let started = Instant::now();
                for (i, item) in slice.iter().enumerate() {
                    write(*mode, base + (s * PROGRESS_STEP + i) as u64, item)?;
                }
                elapsed[m] += started.elapsed();
                bar.inc(slice.len() as u64);
            }
        }
    }
    bar.finish_and_clear();
    Ok(elapsed)
}

/// p50 and p99 of single-item query latencies, in microseconds.
fn latencies(cms: &Cms, items: &[String]) -> Result<(f64, f64), String> {
    percentiles(items, |item| {
        cms.query(&[item]).map(|_| ()).map_err(|e| e.to_string())
    })
}

/// p50 and p99 of the time `op` takes per item, in microseconds.
pub(crate) fn percentiles<F>(items: &[String], mut op: F) -> Result<(f64, f64), String>
where
    F: FnMut(&str) -> Result<(), String>,
{
    let mut micros: Vec<f64> = Vec::with_capacity(items.len());
    let bar = crate::progress::bar(items.len(), "reads");
    for item in items {
        let started = Instant::now();
        op(item)?;
        micros.push(started.elapsed().as_secs_f64() * 1e6);
        if micros.len().is_multiple_of(PROGRESS_STEP) {
            bar.inc(PROGRESS_STEP as u64);
        }
    }
    bar.finish_and_clear();
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| {
        micros
            .get(((micros.len() as f64 - 1.0) * q) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Ok((at(0.5), at(0.99)))
}
