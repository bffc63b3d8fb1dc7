//! `rocksketch bench cf-add` and `cf-exists`.

use crate::args::Args;
use crate::bench::{interleave, percentiles, print_comparison, store_options, Mode, Scratch};
use crate::bench_bloom::pages_bytes_on_disk;
use rocksketch::{CuckooFilter, CuckooOptions, Store, StoreOptions};
use serde_json::json;
use std::path::Path;

const BUCKET_SIZE: u8 = 4;

fn open_filter(
    root: &Path,
    name: &str,
    options: &StoreOptions,
    capacity: u64,
    fp_bits: u8,
) -> Result<(Store, CuckooFilter), String> {
    let store = Store::open(root.join(name), options.clone()).map_err(|e| e.to_string())?;
    let filter = store.cuckoo("bench");
    filter
        .reserve(CuckooOptions {
            capacity,
            bucket_size: BUCKET_SIZE,
            expansion: 1,
            fp_bits,
            ..CuckooOptions::default()
        })
        .map_err(|e| e.to_string())?;
    Ok((store, filter))
}

fn err(e: rocksketch::Error) -> String {
    e.to_string()
}

pub fn cf_add(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 1_000_000)?;
    let queries: usize = args.get("queries", 20_000)?;
    let scratch = Scratch::new(args)?;
    let options = store_options(args)?;
    let modes = [Mode::Blind, Mode::Rewrite, Mode::RawPut];
    let mut filters = Vec::new();
    for mode in modes {
        let name = mode.name().replace(' ', "-");
        filters.push(open_filter(&scratch.path, &name, &options, n as u64, 8)?);
    }
    let items: Vec<String> = (0..n).map(|i| format!("item:{i}")).collect();
    let elapsed = interleave(&items, &modes, |mode, seq, item| {
        let f = &filters[mode as usize].1;
        match mode {
            Mode::Blind => f.add(item),
            Mode::Rewrite => f.add_rewriting_pages(item),
            Mode::RawPut => f.put_add_operands(item, seq),
        }
        .map_err(err)
    })?;
    let rate = |m: usize| n as f64 / elapsed[m].as_secs_f64();
    let (store, blind) = &filters[0];
    let sample: Vec<&String> = items.iter().step_by((n / 1000).max(1)).collect();
    for f in [blind, &filters[1].1] {
        if !f.mexists(&sample).map_err(err)?.iter().all(|e| *e) {
            return Err("a filter lost an item".to_owned());
        }
    }
    let probes: Vec<String> = (0..queries)
        .map(|i| match i % 2 {
            0 => format!("item:{}", i * 7 % n.max(1)),
            _ => format!("absent:{i}"),
        })
        .collect();
    let exists = |item: &str| blind.exists(item).map(|_| ()).map_err(err);
    let before = percentiles(&probes, exists)?;
    store.compact().map_err(err)?;
    let after = percentiles(&probes, exists)?;
    let info = blind.info().map_err(err)?;
    // The first sub-filter filled to its target before the chain grew.
    let subs = blind.occupancy().map_err(err)?;
    let (slots, filled, _) = subs[0];
    let stashed: u64 = subs.iter().map(|s| s.2).sum();
    let load = filled as f64 / slots as f64;
    let bits_per_item = pages_bytes_on_disk(store)? as f64 * 8.0 / n as f64;
    let report = json!({
        "benchmark": "cf-add",
        "adds": n,
        "filter": format!("capacity {n}, bucket size {BUCKET_SIZE}, 8-bit fingerprints"),
        "adds_per_sec": { "blind_merge": rate(0), "read_modify_write": rate(1), "raw_put": rate(2) },
        "blind_vs_read_modify_write": rate(0) / rate(1),
        "blind_vs_raw_put": rate(0) / rate(2),
        "exists_us": {
            "before_compaction": { "p50": before.0, "p99": before.1 },
            "after_compaction": { "p50": after.0, "p99": after.1 },
        },
        "filters": info.filters,
        "slot_load": load,
        "stashed": stashed,
        "bits_per_item_on_disk": bits_per_item,
        "bound_bits_per_item": 1.25 * 8.0 / load,
    });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!("cf-add: {n} adds of one distinct item each into a cuckoo filter of capacity {n}, bucket size {BUCKET_SIZE}, 8-bit fingerprints");
    let rates: Vec<f64> = (0..modes.len()).map(rate).collect();
    let reads = format!("exists latency over {queries} probes, half present (us)");
    print_comparison("adds/s", &modes, &rates, &reads, before, after);
    println!(
        "{} sub-filters; first sub-filter's slot load {load:.4}; {stashed} stashed in all; bits per item on disk after compaction {bits_per_item:.2} (target <= 1.25 x 8 / load = {:.2})",
        info.filters,
        1.25 * 8.0 / load
    );
    Ok(())
}

/// Adds items until the chain grows, and reports the first sub-filter's load and
/// stash, then the false-positive rate over `absent` items.
pub fn cf_exists(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 1_000_000)?;
    let absent: usize = args.get("absent", 1_000_000)?;
    let scratch = Scratch::new(args)?;
    let options = store_options(args)?;
    let mut rows = Vec::new();
    for fp_bits in [8u8, 16] {
        let (_store, filter) = open_filter(
            &scratch.path,
            &format!("fp{fp_bits}"),
            &options,
            n as u64,
            fp_bits,
        )?;
        let mut added = 0usize;
        while filter.info().map_err(err)?.filters == 1 {
            for i in added..added + 1000 {
                filter.add(format!("item:{i}")).map_err(err)?;
            }
            added += 1000;
        }
        // The first sub-filter, full as the chain grew: its load and stash.
        let (slots, filled, stashed) = filter.occupancy().map_err(err)?[0];
        let items: Vec<String> = (0..added).map(|i| format!("item:{i}")).collect();
        if !filter.mexists(&items).map_err(err)?.iter().all(|e| *e) {
            return Err("an added item reads absent".to_owned());
        }
        let mut positives = 0usize;
        for start in (0..absent).step_by(1000) {
            let probe: Vec<String> = (start..(start + 1000).min(absent))
                .map(|i| format!("absent:{i}"))
                .collect();
            positives += filter
                .mexists(&probe)
                .map_err(err)?
                .iter()
                .filter(|e| **e)
                .count();
        }
        let fpr = positives as f64 / absent as f64;
        // Two buckets of b slots, each matching an absent item's fingerprint with
        // probability about 1 / 2^f.
        let bound = 2.0 * f64::from(BUCKET_SIZE) / 2f64.powi(i32::from(fp_bits));
        rows.push(json!({
            "fp_bits": fp_bits,
            "items": added,
            "slot_load": filled as f64 / slots as f64,
            "stashed": stashed,
            "stashed_share": stashed as f64 / filled as f64,
            "false_positive_rate": fpr,
            "bound_2b_over_2f": bound,
            "fpr_vs_bound": fpr / bound,
        }));
    }
    let report = json!({ "benchmark": "cf-exists", "absent_probes": absent, "rows": rows });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!("cf-exists: capacity {n}, bucket size {BUCKET_SIZE}; items added until the chain grows, then {absent} absent probes");
    println!(
        "{:<8} {:>9} {:>10} {:>8} {:>12} {:>12} {:>9}",
        "fp bits", "items", "slot load", "stashed", "false pos", "2b/2^f", "ratio"
    );
    for r in &rows {
        println!(
            "{:<8} {:>9} {:>10.4} {:>8} {:>12.6} {:>12.6} {:>9.3}",
            r["fp_bits"].as_u64().unwrap_or(0),
            r["items"].as_u64().unwrap_or(0),
            r["slot_load"].as_f64().unwrap_or(f64::NAN),
            r["stashed"].as_u64().unwrap_or(0),
            r["false_positive_rate"].as_f64().unwrap_or(f64::NAN),
            r["bound_2b_over_2f"].as_f64().unwrap_or(f64::NAN),
            r["fpr_vs_bound"].as_f64().unwrap_or(f64::NAN),
        );
    }
    println!("targets: load >= 0.90, stashed <= 0.1 % of items, false positives <= 1.1 x 2b/2^f");
    Ok(())
}
