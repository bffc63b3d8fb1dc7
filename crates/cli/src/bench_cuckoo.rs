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
    bucket_size: u8,
) -> Result<(Store, CuckooFilter), String> {
    let store = Store::open(root.join(name), options.clone()).map_err(|e| e.to_string())?;
    let filter = store.cuckoo("bench");
    filter
        .reserve(CuckooOptions {
            capacity,
            bucket_size,
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
        filters.push(open_filter(
            &scratch.path,
            &name,
            &options,
            n as u64,
            8,
            BUCKET_SIZE,
        )?);
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

/// For each fingerprint width (8, 12, 16) and bucket size (2, 4, 8): adds items until
/// the chain grows (timing the blind adds), then reports the first sub-filter's load and
/// stash, the false-positive rate over `absent` items against `2b / 2^f`, and bits per
/// item on disk after a full compaction against `1.25 x f / load`.
pub fn cf_exists(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 1_000_000)?;
    let absent: usize = args.get("absent", 1_000_000)?;
    let scratch = Scratch::new(args)?;
    let options = store_options(args)?;
    let mut rows = Vec::new();
    for fp_bits in [8u8, 12, 16] {
        for bucket_size in [2u8, 4, 8] {
            let name = format!("fp{fp_bits}-b{bucket_size}");
            let (store, filter) = open_filter(
                &scratch.path,
                &name,
                &options,
                n as u64,
                fp_bits,
                bucket_size,
            )?;
            rows.push(measure(&store, &filter, fp_bits, bucket_size, absent)?);
        }
    }
    let report = json!({ "benchmark": "cf-exists", "absent_probes": absent, "rows": rows });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!(
        "cf-exists: capacity {n}; items added until the chain grows, then {absent} absent probes"
    );
    println!(
        "{:>4} {:>3} {:>9} {:>10} {:>9} {:>10} {:>10} {:>6} {:>9} {:>9} {:>10}",
        "f",
        "b",
        "items",
        "slot load",
        "stashed",
        "false pos",
        "2b/2^f",
        "ratio",
        "bits/item",
        "target",
        "adds/s"
    );
    for r in &rows {
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        println!(
            "{:>4} {:>3} {:>9} {:>10.4} {:>9.5} {:>10.6} {:>10.6} {:>6.3} {:>9.2} {:>9.2} {:>10.0}",
            f("fp_bits"),
            f("bucket_size"),
            f("items"),
            f("slot_load"),
            f("stashed_share"),
            f("false_positive_rate"),
            f("bound_2b_over_2f"),
            f("fpr_vs_bound"),
            f("bits_per_item"),
            f("bits_target"),
            f("adds_per_sec"),
        );
    }
    println!("targets: stashed <= 0.1 % of items, false positives <= 1.1 x 2b/2^f, bits per item <= 1.25 x f / load");
    Ok(())
}

/// One row of `cf-exists`.
fn measure(
    store: &Store,
    filter: &CuckooFilter,
    fp_bits: u8,
    bucket_size: u8,
    absent: usize,
) -> Result<serde_json::Value, String> {
    let mut added = 0usize;
    let started = std::time::Instant::now();
    while filter.info().map_err(err)?.filters == 1 {
        for i in added..added + 1000 {
            filter.add(format!("item:{i}")).map_err(err)?;
        }
        added += 1000;
    }
    let adds_per_sec = added as f64 / started.elapsed().as_secs_f64();
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
    // probability about 1 / (2^f - 1).
    let bound = 2.0 * f64::from(bucket_size) / (2f64.powi(i32::from(fp_bits)) - 1.0);
    store.compact().map_err(err)?;
    let load = filled as f64 / slots as f64;
    let bits_per_item = pages_bytes_on_disk(store)? as f64 * 8.0 / added as f64;
    Ok(json!({
        "fp_bits": fp_bits,
        "bucket_size": bucket_size,
        "items": added,
        "slot_load": load,
        "stashed": stashed,
        "stashed_share": stashed as f64 / filled as f64,
        "false_positive_rate": fpr,
        "bound_2b_over_2f": bound,
        "fpr_vs_bound": fpr / bound,
        "bits_per_item": bits_per_item,
        "bits_target": 1.25 * f64::from(fp_bits) / load,
        "adds_per_sec": adds_per_sec,
    }))
}
