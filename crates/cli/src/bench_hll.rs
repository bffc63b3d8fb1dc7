//! `rocksketch bench pfadd`: HyperLogLog adds blind, with replies (`PFADD`), as a
//! read-modify-write of the page, and as raw puts of the same bytes, side by side; then
//! the bytes on disk per HyperLogLog against Redis's encoding of the same registers.

use crate::args::Args;
use crate::bench::{alternating, store_options, Scratch};
use crate::bench_bloom::pages_bytes_on_disk;
use rocksketch::{Hll, Store, META_CF};
use rocksketch_merge::hll::redis;
use serde_json::json;

const MODES: [&str; 4] = [
    "blind merge",
    "with replies",
    "read-modify-write",
    "raw puts",
];
/// The sizes of the HyperLogLogs whose bytes on disk are measured (`--keys` of each).
const DISK_SIZES: [u32; 6] = [10, 20, 100, 1000, 3000, 100_000];

fn err(e: rocksketch::Error) -> String {
    e.to_string()
}

pub(crate) fn pfadd(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 1_000_000)?;
    let batch: usize = args.get("batch", 10)?;
    let keys: usize = args.get("keys", 10_000)?;
    let scratch = Scratch::new(args)?;
    let options = store_options(args)?;
    let mut hlls: Vec<(Store, Hll)> = Vec::new();
    for mode in MODES {
        let path = scratch.path.join(mode.replace(' ', "-"));
        let store = Store::open(path, options.clone()).map_err(err)?;
        let hll = store.hll("bench");
        hll.add(&["first"]).map_err(err)?;
        hlls.push((store, hll));
    }
    let items: Vec<Vec<u8>> = (0..n).map(|i| format!("user:{i}").into_bytes()).collect();
    let batches: Vec<&[Vec<u8>]> = items.chunks(batch.max(1)).collect();
    let elapsed = alternating(&batches, MODES.len(), |mode, seq, add| {
        let hll = &hlls[mode].1;
        match mode {
            0 => hll.add_blind(add),
            1 => hll.add(add).map(|_| ()),
            2 => hll.add_rewriting_page(add),
            _ => hll.put_add_operand(add, seq),
        }
        .map_err(err)
    })?;
    let rates: Vec<f64> = elapsed.iter().map(|t| n as f64 / t.as_secs_f64()).collect();
    // The stored registers must agree before the speeds mean anything.
    let regs: Vec<_> = hlls[..3]
        .iter()
        .map(|(_, h)| h.registers())
        .collect::<Result<_, _>>()
        .map_err(err)?;
    if regs.windows(2).any(|w| w[0] != w[1]) {
        return Err("blind, replied and rewritten HyperLogLogs disagree".to_owned());
    }
    let count = hlls[0].1.count().map_err(err)?;
    drop(hlls);
    let disk = DISK_SIZES
        .iter()
        .map(|size| bytes_on_disk(&scratch, &options, *size, keys))
        .collect::<Result<Vec<_>, _>>()?;
    let report = json!({
        "benchmark": "pfadd",
        "items": n,
        "items_per_add": batch,
        "count": count,
        "items_per_sec": {
            "blind_merge": rates[0], "with_replies": rates[1],
            "read_modify_write": rates[2], "raw_put": rates[3],
        },
        "blind_vs_read_modify_write": rates[0] / rates[2],
        "replies_vs_read_modify_write": rates[1] / rates[2],
        "blind_vs_raw_put": rates[0] / rates[3],
        "bytes_on_disk": disk.iter().map(|(size, ours, theirs)| json!({
            "distinct": size, "ours_per_key": ours, "redis_encoding": theirs,
            "ratio": ours / theirs,
        })).collect::<Vec<_>>(),
    });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!("pfadd: {n} distinct items, {batch} per add (PFCOUNT {count})");
    println!("{:<20} {:>12} {:>10}", "mode", "items/s", "vs blind");
    for (mode, rate) in MODES.iter().zip(&rates) {
        println!("{mode:<20} {rate:>12.0} {:>9.2}x", rate / rates[0]);
    }
    for (label, ratio) in [
        ("blind / read-modify-write", rates[0] / rates[2]),
        ("with replies / read-modify-write", rates[1] / rates[2]),
        ("blind / raw puts", rates[0] / rates[3]),
    ] {
        println!("{label:<32} = {ratio:.2}");
    }
    println!("bytes on disk per HyperLogLog ({keys} keys each, compacted) vs Redis's string:");
    for (size, ours, theirs) in &disk {
        println!(
            "  {size:>7} distinct: {ours:>8.0} vs {theirs:>8.0}  = {:.2}x",
            ours / theirs
        );
    }
    Ok(())
}

/// `keys` HyperLogLogs of `size` distinct items each in a fresh store: the bytes
/// of its SST files (pages and metadata) per key after a full compaction, and the mean
/// length of Redis's string of the same registers (what `GET` returns).
fn bytes_on_disk(
    scratch: &Scratch,
    options: &rocksketch::StoreOptions,
    size: u32,
    keys: usize,
) -> Result<(u32, f64, f64), String> {
    let store =
        Store::open(scratch.path.join(format!("disk-{size}")), options.clone()).map_err(err)?;
    let mut redis_bytes = 0usize;
    for k in 0..keys {
        let hll = store.hll(format!("visitors:{k}"));
        let items: Vec<String> = (0..size).map(|i| format!("{k}:{i}")).collect();
        for chunk in items.chunks(10_000) {
            hll.add_blind(chunk).map_err(err)?;
        }
        let regs = hll.registers().map_err(err)?.ok_or("a key")?;
        redis_bytes += redis::export(&regs).len();
    }
    store.compact().map_err(err)?;
    let db = store.db().map_err(err)?;
    let meta = db.cf_handle(META_CF).ok_or("no meta column family")?;
    let meta_bytes = db
        .property_int_value_cf(meta, "rocksdb.total-sst-files-size")
        .map_err(|e| e.to_string())?
        .unwrap_or(0);
    let ours = pages_bytes_on_disk(&store)? + meta_bytes;
    let keys = keys as f64;
    Ok((size, ours as f64 / keys, redis_bytes as f64 / keys))
}
