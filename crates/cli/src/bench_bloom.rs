//! `rocksketch bench bf-add` and `bf-exists`.

use crate::args::Args;
use crate::bench::{interleave, percentiles, print_comparison, store_options, Mode, Scratch};
use rocksketch::{BloomFilter, Store, StoreOptions, PAGES_CF};
use serde_json::json;
use std::f64::consts::LN_2;
use std::path::Path;

fn open_filter(
    root: &Path,
    name: &str,
    options: &StoreOptions,
    error: f64,
    capacity: u64,
    expansion: u32,
) -> Result<(Store, BloomFilter), String> {
    let store = Store::open(root.join(name), options.clone()).map_err(|e| e.to_string())?;
    let filter = store.bloom("bench");
    filter
        .reserve(error, capacity, expansion)
        .map_err(|e| e.to_string())?;
    Ok((store, filter))
}

/// Bytes of SST files in the pages column family (after a compaction: the filter's size
/// on disk).
pub fn pages_bytes_on_disk(store: &Store) -> Result<u64, String> {
    let db = store.db().map_err(|e| e.to_string())?;
    let cf = db.cf_handle(PAGES_CF).ok_or("no pages column family")?;
    db.property_int_value_cf(cf, "rocksdb.total-sst-files-size")
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "no SST size property".to_owned())
}

/// RedisBloom's bits per item for a first sub-filter at `error` (half the asked error).
fn redisbloom_bits_per_item(error: f64) -> f64 {
    -(error / 2.0).ln() / (LN_2 * LN_2)
}

fn false_positive_rate(filter: &BloomFilter, absent: usize) -> Result<f64, String> {
    let mut positives = 0usize;
    for start in (0..absent).step_by(1000) {
        let probe: Vec<String> = (start..(start + 1000).min(absent))
            .map(|i| format!("absent:{i}"))
            .collect();
        positives += filter
            .mexists(&probe)
            .map_err(|e| e.to_string())?
            .iter()
            .filter(|e| **e)
            .count();
    }
    Ok(positives as f64 / absent as f64)
}

fn fill(filter: &BloomFilter, prefix: &str, n: usize) -> Result<(), String> {
    for start in (0..n).step_by(1000) {
        let batch: Vec<String> = (start..(start + 1000).min(n))
            .map(|i| format!("{prefix}:{i}"))
            .collect();
        filter.add_blind(&batch).map_err(|e| e.to_string())?;
    }
    Ok(())
}

pub fn bf_add(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 1_000_000)?;
    let queries: usize = args.get("queries", 20_000)?;
    let error = 0.01;
    let scratch = Scratch::new(args)?;
    let options = store_options(args)?;
    let modes = [Mode::Blind, Mode::Rewrite, Mode::RawPut];
    let mut filters = Vec::new();
    for mode in modes {
        filters.push(open_filter(
            &scratch.path,
            &mode.name().replace(' ', "-"),
            &options,
            error,
            n as u64,
            2,
        )?);
    }
    let items: Vec<String> = (0..n).map(|i| format!("item:{i}")).collect();
    let elapsed = interleave(&items, &modes, |mode, seq, item| {
        let f = &filters[mode as usize].1;
        match mode {
            Mode::Blind => f.add_blind(&[item]),
            Mode::Rewrite => f.add_rewriting_pages(item),
            Mode::RawPut => f.put_add_operands(&[item], seq),
        }
        .map_err(|e| e.to_string())
    })?;
    let rate = |m: usize| n as f64 / elapsed[m].as_secs_f64();

    let (store, blind) = &filters[0];
    let sample: Vec<&String> = items.iter().step_by((n / 1000).max(1)).collect();
    for f in [blind, &filters[1].1] {
        if !f
            .mexists(&sample)
            .map_err(|e| e.to_string())?
            .iter()
            .all(|e| *e)
        {
            return Err("a filter lost an item".to_owned());
        }
    }
    let probes: Vec<String> = (0..queries)
        .map(|i| {
            if i % 2 == 0 {
                format!("item:{}", i * 7 % n.max(1))
            } else {
                format!("absent:{i}")
            }
        })
        .collect();
    let exists = |item: &str| blind.exists(item).map(|_| ()).map_err(|e| e.to_string());
    // Optionally let RocksDB's background flushes and compactions of the write burst
    // finish first, to tell the cost of the layout from the cost of that work.
    let settle: u64 = args.get("settle", 0)?;
    std::thread::sleep(std::time::Duration::from_secs(settle));
    let before = percentiles(&probes, exists)?;
    store.compact().map_err(|e| e.to_string())?;
    let after = percentiles(&probes, exists)?;
    let bits_per_item = pages_bytes_on_disk(store)? as f64 * 8.0 / n as f64;
    let sizing = redisbloom_bits_per_item(error);

    let report = json!({
        "benchmark": "bf-add",
        "adds": n,
        "filter": format!("error {error}, capacity {n}"),
        "adds_per_sec": { "blind_merge": rate(0), "read_modify_write": rate(1), "raw_put": rate(2) },
        "blind_vs_read_modify_write": rate(0) / rate(1),
        "blind_vs_raw_put": rate(0) / rate(2),
        "exists_us": {
            "before_compaction": { "p50": before.0, "p99": before.1 },
            "after_compaction": { "p50": after.0, "p99": after.1 },
        },
        "bits_per_item_on_disk": bits_per_item,
        "redisbloom_bits_per_item": sizing,
        "disk_vs_redisbloom": bits_per_item / sizing,
    });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!(
        "bf-add: {n} adds of one distinct item each into a filter of error {error}, capacity {n}"
    );
    let rates: Vec<f64> = (0..modes.len()).map(rate).collect();
    let reads = format!("exists latency over {queries} probes, half present (us)");
    print_comparison("adds/s", &modes, &rates, &reads, before, after);
    println!("bits per item on disk after compaction: {bits_per_item:.2}; RedisBloom's sizing {sizing:.2}; ratio {:.3} (target <= 1.1)", bits_per_item / sizing);
    Ok(())
}

pub fn bf_exists(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 1_000_000)?;
    let absent: usize = args.get("absent", 1_000_000)?;
    let scratch = Scratch::new(args)?;
    let options = store_options(args)?;
    let mut rows = Vec::new();
    for error in [0.01, 0.001] {
        let (_s1, full) = open_filter(
            &scratch.path,
            &format!("full-{error}"),
            &options,
            error,
            n as u64,
            2,
        )?;
        fill(&full, "item", n)?;
        let at_capacity = false_positive_rate(&full, absent)?;
        let (_s2, grown) = open_filter(
            &scratch.path,
            &format!("grown-{error}"),
            &options,
            error,
            (n / 16).max(1) as u64,
            2,
        )?;
        fill(&grown, "item", n)?;
        let info = grown.info().map_err(|e| e.to_string())?;
        let after_growth = false_positive_rate(&grown, absent)?;
        rows.push(json!({
            "error": error,
            "fpr_at_capacity": at_capacity,
            "fpr_after_growth": after_growth,
            "filters_after_growth": info.filters,
        }));
    }
    let report =
        json!({ "benchmark": "bf-exists", "items": n, "absent_probes": absent, "rows": rows });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!("bf-exists: {n} items added, false positives over {absent} absent items");
    println!(
        "{:<8} {:>16} {:>18} {:>9}",
        "error", "at capacity", "after growth", "filters"
    );
    for row in &rows {
        println!(
            "{:<8} {:>16.6} {:>18.6} {:>9}",
            row["error"],
            row["fpr_at_capacity"].as_f64().unwrap_or(f64::NAN),
            row["fpr_after_growth"].as_f64().unwrap_or(f64::NAN),
            row["filters_after_growth"]
        );
    }
    println!("target: both rates <= the configured error");
    Ok(())
}
