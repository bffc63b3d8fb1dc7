//! `rocksketch bench topk-add`: Top-K adds blind, with replies (`TOPK.ADD`), as a
//! read-modify-write of the whole structure, and as raw puts of the same bytes, side by
//! side; then recall of the true top 100 on Zipf streams.

use crate::args::Args;
use crate::bench::{alternating, store_options, Scratch};
use rand::{rngs::StdRng, Rng, SeedableRng};
use rand_distr::Zipf;
use rocksketch::{Store, TopK};
use serde_json::json;
use std::collections::HashMap;

const MODES: [&str; 4] = [
    "blind merge",
    "with replies",
    "read-modify-write",
    "raw puts",
];

fn err(e: rocksketch::Error) -> String {
    e.to_string()
}

fn zipf_items(n: usize, s: f64, seed: u64) -> Result<Vec<u32>, String> {
    let zipf = Zipf::new(1_000_000, s).map_err(|e| e.to_string())?;
    let mut rng = StdRng::seed_from_u64(seed);
    Ok((0..n).map(|_| rng.sample(zipf) as u32).collect())
}

fn name(i: u32) -> Vec<u8> {
    format!("item:{i}").into_bytes()
}

fn reserve(store: &Store, key: &str) -> Result<TopK, String> {
    let top = store.topk(key);
    top.reserve(100, 2000, 5, 0.9).map_err(err)?;
    Ok(top)
}

/// Recall of the true top `k`: the share of reported items whose true count is at least
/// the k-th largest true count (ties at the boundary count as right).
fn recall(store: &Store, s: f64, n: usize, batch: usize) -> Result<f64, String> {
    let top = reserve(store, &format!("recall-{s}"))?;
    let stream = zipf_items(n, s, 9)?;
    let mut exact: HashMap<u32, u64> = HashMap::new();
    for chunk in stream.chunks(batch.max(1)) {
        let items: Vec<Vec<u8>> = chunk.iter().map(|i| name(*i)).collect();
        top.add(&items).map_err(err)?;
        for i in chunk {
            *exact.entry(*i).or_default() += 1;
        }
    }
    let mut counts: Vec<u64> = exact.values().copied().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let kth = counts.get(99).copied().unwrap_or(0);
    let listed = top.list().map_err(err)?;
    let right = listed
        .iter()
        .filter(|(item, _)| {
            let id: Option<u32> = std::str::from_utf8(item)
                .ok()
                .and_then(|s| s.strip_prefix("item:"))
                .and_then(|s| s.parse().ok());
            id.and_then(|id| exact.get(&id)).is_some_and(|c| *c >= kth)
        })
        .count();
    Ok(right as f64 / 100.0)
}

pub(crate) fn topk_add(args: &Args) -> Result<(), String> {
    let n: usize = args.get("n", 1_000_000)?;
    let batch: usize = args.get("batch", 10)?;
    let recall_n: usize = args.get("accuracy-n", 10_000_000)?;
    let scratch = Scratch::new(args)?;
    let options = store_options(args)?;
    let mut tops = Vec::new();
    for mode in MODES {
        let store =
            Store::open(scratch.path.join(mode.replace(' ', "-")), options.clone()).map_err(err)?;
        let top = reserve(&store, "bench")?;
        tops.push((store, top));
    }
    let items: Vec<Vec<u8>> = zipf_items(n, 1.1, 1)?.into_iter().map(name).collect();
    let batches: Vec<Vec<(&[u8], u32)>> = items
        .chunks(batch.max(1))
        .map(|c| c.iter().map(|i| (i.as_slice(), 1)).collect())
        .collect();
    let elapsed = alternating(&batches, MODES.len(), |mode, seq, pairs| {
        let top = &tops[mode].1;
        match mode {
            0 => top.add_blind(pairs),
            1 => top.incr_by(pairs).map(|_| ()),
            2 => top.add_rewriting_page(pairs),
            _ => top.put_add_operand(pairs, seq),
        }
        .map_err(err)
    })?;
    let rates: Vec<f64> = elapsed.iter().map(|t| n as f64 / t.as_secs_f64()).collect();
    // The stored structures must agree before their speeds mean anything.
    let lists: Vec<_> = tops[..3]
        .iter()
        .map(|(_, t)| t.list())
        .collect::<Result<_, _>>()
        .map_err(err)?;
    if lists.windows(2).any(|w| w[0] != w[1]) {
        return Err("blind, replied and rewritten Top-Ks disagree".to_owned());
    }
    let recall_store = Store::open(scratch.path.join("recall"), options).map_err(err)?;
    let recall_11 = recall(&recall_store, 1.1, recall_n, 2000)?;
    let recall_08 = recall(&recall_store, 0.8, recall_n, 2000)?;
    let report = json!({
        "benchmark": "topk-add",
        "items": n,
        "items_per_add": batch,
        "topk": "k 100, width 2000, depth 5, decay 0.9",
        "items_per_sec": {
            "blind_merge": rates[0], "with_replies": rates[1],
            "read_modify_write": rates[2], "raw_put": rates[3],
        },
        "blind_vs_read_modify_write": rates[0] / rates[2],
        "replies_vs_read_modify_write": rates[1] / rates[2],
        "blind_vs_raw_put": rates[0] / rates[3],
        "recall_top100": { "zipf_1_1": recall_11, "zipf_0_8": recall_08, "stream": recall_n },
    });
    if args.switch("json") {
        println!("{report:#}");
        return Ok(());
    }
    println!("topk-add: {n} Zipf(1.1) items over 1M, {batch} per add; k 100, 2000 x 5, decay 0.9");
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
    println!("recall of the true top 100, {recall_n} items in adds of 2000:");
    println!("  Zipf(1.1) {recall_11:.3}   Zipf(0.8) {recall_08:.3}");
    Ok(())
}
