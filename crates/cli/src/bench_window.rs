//! `rocksketch bench window`: writes to windowed filters and sketches against the same
//! writes to plain ones, side by side in one run (alternating rounds), for every write
//! path (blind and answered); then lookups, with the hot-page cache's reads per lookup.
//!
//! The stores run on a manual clock moved on one millisecond per batch, so a run of a
//! million items crosses many generations of the 10 s window (8 slices) and its sweeps
//! (one per simulated second, as the host's sweeper) drop the ones that age out.

use crate::args::Args;
use crate::bench::{alternating, percentiles, store_options, Scratch};
use rocksketch::{Clock, CuckooOptions, Store, Window};
use serde_json::json;

const WINDOW_MS: u64 = 10_000;
const SLICES: u16 = 8;
const START: u64 = 1_700_000_000_000;
/// Each write path measured: (name, whether it answers).
const PATHS: [&str; 5] = [
    "BF blind add",
    "BF.MADD (answered)",
    "CF.ADD",
    "CMS incr (blind)",
    "CMS.INCRBY (answered)",
];

fn err(e: rocksketch::Error) -> String {
    e.to_string()
}

/// A store with a Bloom filter, a cuckoo filter and a count-min sketch, windowed or not.
fn open(scratch: &Scratch, args: &Args, clock: &Clock, windowed: bool) -> Result<Store, String> {
    let options = rocksketch::StoreOptions {
        clock: clock.clone(),
        ..store_options(args)?
    };
    let name = if windowed { "windowed" } else { "plain" };
    let store = Store::open(scratch.path.join(name), options).map_err(err)?;
    let capacity = args.get("capacity", 100_000u64)?;
    let cuckoo = CuckooOptions {
        capacity,
        ..CuckooOptions::default()
    };
    let window = Window::new(WINDOW_MS, SLICES).map_err(err)?;
    for (path, _) in PATHS.iter().enumerate() {
        let key = format!("k{path}");
        match (path, windowed) {
            (0 | 1, false) => store.bloom(&key).reserve(0.01, capacity, 2),
            (0 | 1, true) => store
                .bloom(&key)
                .reserve_windowed(0.01, capacity, 2, window),
            (2, false) => store.cuckoo(&key).reserve(cuckoo),
            (2, true) => store.cuckoo(&key).reserve_windowed(cuckoo, window),
            (_, false) => store.cms(&key).init_by_dim(2000, 7),
            (_, true) => store.cms(&key).init_by_dim_windowed(2000, 7, window),
        }
        .map_err(err)?;
    }
    Ok(store)
}

fn write(store: &Store, path: usize, batch: &[String]) -> rocksketch::Result<()> {
    let key = format!("k{path}");
    match path {
        0 => store.bloom(&key).add_blind(batch),
        1 => store.bloom(&key).madd(batch).1.map_or(Ok(()), Err),
        2 => store.cuckoo(&key).add_many(batch).1.map_or(Ok(()), Err),
        3 => {
            let pairs: Vec<(&String, u64)> = batch.iter().map(|i| (i, 1)).collect();
            store.cms(&key).incr_by(&pairs)
        }
        _ => {
            let pairs: Vec<(&String, u64)> = batch.iter().map(|i| (i, 1)).collect();
            store.cms(&key).incr_by_with_estimates(&pairs).map(|_| ())
        }
    }
}

pub(crate) fn window(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 200_000)?;
    let batch: usize = args.get("batch", 10)?.max(1);
    let queries: usize = args.get("queries", 20_000)?;
    let scratch = Scratch::new(args)?;
    let clock = Clock::manual(START);
    let stores = [
        open(&scratch, args, &clock, false)?,
        open(&scratch, args, &clock, true)?,
    ];
    let items: Vec<String> = (0..n).map(|i| format!("item:{i}")).collect();
    let batches: Vec<&[String]> = items.chunks(batch).collect();
    let mut rates = Vec::new();
    let mut lookups = Vec::new();
    for path in 0..PATHS.len() {
        let mut last_sweep = clock.now_ms();
        let elapsed = alternating(&batches, 2, |mode, _, batch| {
            if mode == 1 {
                clock.advance(1);
                if clock.now_ms() >= last_sweep + 1000 {
                    last_sweep = clock.now_ms();
                    stores[1].sweep_expired(None, 1000).map_err(err)?;
                }
            }
            write(&stores[mode], path, batch).map_err(err)
        })?;
        let rate = |m: usize| n as f64 / elapsed[m].as_secs_f64();
        rates.push((rate(0), rate(1)));
        if path == 1 {
            // Lookups now, while the filter's last items are in the window: items of
            // the last second, and items never added (which ask every generation).
            let recent = &items[n.saturating_sub(queries.min(1000 * batch))..];
            let absent: Vec<String> = (0..queries).map(|i| format!("absent:{i}")).collect();
            for store in &stores {
                lookups.push(lookups_of(store, recent)?);
                lookups.push(lookups_of(store, &absent)?);
            }
        }
    }
    let kinds = [
        "plain, present",
        "plain, absent",
        "windowed, present",
        "windowed, absent",
    ];
    let exists: Vec<_> = kinds
        .iter()
        .zip(&lookups)
        .map(|(m, l)| {
            json!({
                "filter": m, "p50_us": l.0, "p99_us": l.1, "page_reads_per_lookup": l.2,
                "cache_hit_share": l.3,
            })
        })
        .collect();
    let report = json!({
        "benchmark": "window",
        "items": n,
        "items_per_write": batch,
        "window_ms": WINDOW_MS,
        "slices": SLICES,
        "simulated_ms": clock.now_ms() - START,
        "items_per_sec": PATHS.iter().zip(&rates).map(|(p, (plain, windowed))| json!({
            "path": p, "plain": plain, "windowed": windowed, "windowed_vs_plain": windowed / plain,
        })).collect::<Vec<_>>(),
        "bf_exists": exists,
    });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!(
        "window: {n} items in writes of {batch}, a {WINDOW_MS} ms window of {SLICES} slices, \
         {} simulated ms (1 per write)",
        clock.now_ms() - START
    );
    println!(
        "{:<24} {:>14} {:>14} {:>10}",
        "path", "plain/s", "windowed/s", "ratio"
    );
    for (path, (plain, windowed)) in PATHS.iter().zip(&rates) {
        println!(
            "{path:<24} {plain:>14.0} {windowed:>14.0} {:>9.2}x",
            windowed / plain
        );
    }
    for (name, (p50, p99, reads, hits)) in kinds.iter().zip(&lookups) {
        println!(
            "BF.EXISTS {name:<18} p50 {p50:.1} us, p99 {p99:.1} us, {reads:.2} page reads per \
             lookup, {:.1}% from the page cache",
            hits * 100.0
        );
    }
    Ok(())
}

/// p50 and p99 of `BF.EXISTS` of each item on the filter of the answered path, with the
/// hot-page cache's reads per lookup and the share of them it served.
fn lookups_of(store: &Store, items: &[String]) -> Result<(f64, f64, f64, f64), String> {
    let (hits, misses, _) = store.page_cache_stats();
    let filter = store.bloom("k1");
    let (p50, p99) = percentiles(items, |item| filter.exists(item).map(|_| ()).map_err(err))?;
    let (hits2, misses2, _) = store.page_cache_stats();
    let reads = (hits2 + misses2 - hits - misses) as f64;
    Ok((
        p50,
        p99,
        reads / items.len() as f64,
        (hits2 - hits) as f64 / reads.max(1.0),
    ))
}
