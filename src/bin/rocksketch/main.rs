//! `rocksketch`: the command-line front end.
//!
//! ```text
//! rocksketch serve [--dir DIR] [--bind ADDR] [--port N] [--requirepass SECRET]
//! rocksketch demo  [--dir DIR] [--n N]                 ingest a stream, print estimates
//! rocksketch bench cms-incrby [--n N] [--queries Q] [--dir DIR] [--json]
//! ```

mod args;
mod bench;
mod bench_bloom;
mod bench_cuckoo;
mod bench_ribbon;
mod bench_tdigest;
mod bench_topk;
mod config_file;
mod demo;
mod logger;
mod serve;

use std::process::ExitCode;

const USAGE: &str = "usage:
  rocksketch serve [CONFIG-FILE] [--dir DIR] [--bind ADDR] [--port N] [--requirepass SECRET]
                   [--maxclients N] [--proto-max-bulk-len B] [--max-args N]
                   [--client-query-buffer-limit B] [--databases N] [--sync]
                   [--cache-mb MB] [--max-successive-merges K] [--threads N]
                   [--loglevel debug|verbose|notice|warning] [--logfile FILE]
      serve the CMS.*, BF.*, CF.*, TDIGEST.*, TOPK.* and RIBBON.* commands
      over RESP2/RESP3 from DIR
      (default ./rocksketch-data) on 127.0.0.1:6379; --port 0 picks a free port;
      --sync makes every write durable before it is acknowledged;
      --cache-mb sizes the hot-page cache (default 64, 0 turns it off);
      --threads sets the I/O threads (default: one per core);
      CONFIG-FILE holds the same settings in redis.conf's syntax, a directive per line
      (`port 7000`, `sync yes`; see rocksketch.conf), and flags override it
  rocksketch demo [--dir DIR] [--n N]
      ingest a Zipf stream into a count-min sketch in DIR (default ./rocksketch-data)
      and print estimates next to exact counts and the error bound
  rocksketch bench cms-incrby [--n N] [--queries Q] [--dir DIR] [--json]
                   [--page-bytes B] [--max-successive-merges K]
      blind merge vs read-modify-write vs raw puts, then query latency
      before and after a full compaction
  rocksketch bench bf-add [--n N] [--queries Q] [--settle SECS] [--dir DIR] [--json]
      the same comparison for Bloom filter adds, bits per item on disk,
      exists latency before and after compaction
  rocksketch bench bf-exists [--n N] [--absent M] [--dir DIR] [--json]
      false-positive rate at capacity and after growth to 5 sub-filters,
      for error rates 0.01 and 0.001
  rocksketch bench cf-add [--n N] [--queries Q] [--dir DIR] [--json]
      the same comparison for cuckoo filter adds (bucket size 4, 8-bit fingerprints),
      slot load, stash, bits per item on disk, exists latency before and after compaction
  rocksketch bench cf-exists [--n N] [--absent M] [--dir DIR] [--json]
      slot load and stash when the chain first grows, and the false-positive rate,
      for 8- and 16-bit fingerprints
  rocksketch bench tdigest-add [--n N] [--batch B] [--queries Q] [--accuracy-n M] [--seeds K]
                   [--dir DIR] [--json]
      the same comparison for TDIGEST.ADD (B values per add), add + quantile latency
      before and after compaction, and rank error at q = 0.5 .. 0.999
  rocksketch bench topk-add [--n N] [--batch B] [--accuracy-n M] [--dir DIR] [--json]
      TOPK adds blind, with replies, as read-modify-write and as raw puts (B items per
      add), and recall of the true top 100 on M-item Zipf(1.1) and Zipf(0.8) streams
  rocksketch bench ribbon [--n N] [--absent M] [--queries Q] [--dir DIR] [--json]
      a Ribbon filter of N items at error 1/128 against a Bloom filter at the FPR it
      measured: bits per item on disk, FPR over M absent items, build and solve
      throughput, exists latency";

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    logger::install();
    let result = match argv.first().map(String::as_str) {
        Some("serve") => serve::run(&argv[1..]),
        Some("demo") => demo::run(&argv[1..]),
        Some("bench") => bench::run(&argv[1..]),
        Some("help") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => Err(format!("unknown or missing subcommand\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("rocksketch: {msg}");
            ExitCode::FAILURE
        }
    }
}
