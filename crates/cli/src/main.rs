//! `rocksketch`: the command-line front end (`rocksketch --help`; declared in [`cli`]).

mod args;
mod bench;
mod bench_bloom;
mod bench_cuckoo;
mod bench_hll;
mod bench_ribbon;
mod bench_tdigest;
mod bench_topk;
mod bench_window;
mod cli;
mod config_file;
mod demo;
mod inspect;
mod logger;
mod memory;
mod progress;
mod serve;

use args::Args;
use std::process::ExitCode;

// The server's allocator (see Cargo.toml): mimalloc unless jemalloc is chosen instead.
#[cfg(all(feature = "mimalloc", not(feature = "jemalloc")))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    // Help, --version and usage errors print and exit here (usage errors with status 2).
    let matches = cli::command().get_matches();
    logger::install();
    let result = match matches.subcommand() {
        Some(("serve", m)) => serve::run(Args::from_matches(m)),
        Some(("demo", m)) => demo::run(Args::from_matches(m)),
        Some(("inspect", m)) => inspect::run(Args::from_matches(m)),
        Some(("bench", m)) => match m.subcommand() {
            Some((name, m)) => bench::run(name, Args::from_matches(m)),
            None => Err("which benchmark? (see rocksketch bench --help)".to_owned()),
        },
        _ => Err("unknown or missing subcommand (see --help)".to_owned()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("rocksketch: {msg}");
            ExitCode::FAILURE
        }
    }
}
