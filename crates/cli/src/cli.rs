//! The command line, declared once: `--help`, `--version` and the errors that name a bad
//! flag (with the nearest known one) are generated from these declarations by `clap`.
//! Values stay strings here; each command parses its own and names the flag it could
//! not parse (see [`crate::args::Args`]).

use clap::{Arg, ArgAction, Command};

/// A flag that takes a value.
fn valued(name: &'static str, value: &'static str, help: &'static str) -> Arg {
    Arg::new(name).long(name).value_name(value).help(help)
}

/// A flag that takes none.
fn switch(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .action(ArgAction::SetTrue)
        .help(help)
}

fn dir(default: &'static str) -> Arg {
    valued("dir", "DIR", default)
}

fn json() -> Arg {
    switch("json", "print the results as JSON (no progress display)")
}

/// `rocksketch serve`'s flags; a config file's directives are these names.
pub fn serve_args() -> Vec<Arg> {
    vec![
        dir("the data directory, created on the first start [default: ./rocksketch-data]"),
        valued(
            "bind",
            "ADDR",
            "the address to listen on [default: 127.0.0.1]",
        ),
        valued(
            "port",
            "N",
            "the port; 0 picks a free one and prints it [default: 6379]",
        ),
        valued(
            "requirepass",
            "SECRET",
            "every command but AUTH, HELLO and QUIT needs it",
        ),
        valued("maxclients", "N", "most clients at once [default: 10000]"),
        valued(
            "proto-max-bulk-len",
            "BYTES",
            "largest bulk string [default: 512 MiB]",
        ),
        valued(
            "max-args",
            "N",
            "most arguments in a command [default: 1048576]",
        ),
        valued(
            "client-query-buffer-limit",
            "BYTES",
            "most unprocessed input per client [default: 1 GiB]",
        ),
        valued(
            "databases",
            "N",
            "numbered databases for SELECT [default: 16]",
        ),
        valued(
            "cache-mb",
            "MB",
            "the hot-page cache; 0 turns it off [default: an eighth of memory, 64 to 4096]",
        ),
        valued(
            "page-bytes",
            "BYTES",
            "page size of new filters and sketches, 4 to 1048576 [default: a 2048th of the cache as a power of two, 16384 to 1048576]",
        ),
        valued(
            "max-successive-merges",
            "K",
            "merge operands RocksDB folds in the memtable",
        ),
        valued(
            "backup-dir",
            "DIR",
            "where SAVE and BGSAVE put checkpoints [default: DIR/backups]",
        ),
        valued(
            "replicaof",
            "HOST:PORT",
            "start as a replica of that primary (also \"HOST PORT\")",
        ),
        valued("masterauth", "SECRET", "the password sent to the primary"),
        valued(
            "repl-backlog-size",
            "MB",
            "flushed write-ahead logs kept for replicas to resume from [default: 0, the live logs only]",
        ),
        valued(
            "repl-backlog-ttl",
            "SECONDS",
            "how long flushed write-ahead logs are kept for replicas [default: 0]",
        ),
        valued(
            "threads",
            "N",
            "I/O threads; 0 is one per core [default: 0]",
        ),
        valued(
            "thread-fill",
            "N",
            "connections an I/O thread takes before the next one gets any; 0 is round robin [default: 32]",
        ),
        valued(
            "loglevel",
            "LEVEL",
            "debug, verbose, notice or warning [default: notice]",
        ),
        valued(
            "logfile",
            "FILE",
            "append the log to FILE instead of standard error",
        ),
        switch(
            "sync",
            "sync the write-ahead log before acknowledging a write",
        ),
        switch("enable-debug-command", "answer DEBUG PANIC | SLEEP"),
        switch(
            "cluster-enabled",
            "be a Redis Cluster node; a controller sets the topology with CLUSTERX",
        ),
    ]
}

/// Each benchmark: its name, what it measures, and its flags besides `--dir`/`--json`.
const BENCHES: &[(&str, &str, &[&str])] = &[
    ("cms-incrby", "blind merge vs read-modify-write vs raw puts, then query latency before and after a full compaction", &["n", "queries", "page-bytes", "max-successive-merges", "write-buffer-mb"]),
    ("bf-add", "the same for Bloom filter adds: bits per item on disk, exists latency before and after compaction", &["n", "queries", "settle"]),
    ("bf-exists", "false-positive rate at capacity and after growth to 5 sub-filters, for error rates 0.01 and 0.001", &["n", "absent"]),
    ("cf-add", "the same for cuckoo filter adds: slot load, stash, bits per item, exists latency", &["n", "queries"]),
    ("cf-exists", "slot load and stash when the chain first grows, and the false-positive rate, for 8- and 16-bit fingerprints", &["n", "absent"]),
    ("tdigest-add", "TDIGEST.ADD blind and otherwise, add + quantile latency, and rank error at q = 0.5 .. 0.999", &["n", "batch", "queries", "accuracy-n", "seeds"]),
    ("topk-add", "TOPK adds blind, with replies, as read-modify-write and as raw puts, and recall of the true top 100", &["n", "batch", "accuracy-n"]),
    ("pfadd", "PFADD blind, with replies, as read-modify-write and as raw puts, and bytes on disk per HyperLogLog against Redis's string", &["n", "batch", "keys"]),
    ("window", "windowed Bloom, cuckoo and count-min writes (blind and answered) against plain ones, and BF.EXISTS page reads per lookup", &["n", "batch", "queries", "capacity"]),
    ("ribbon", "a Ribbon filter against a Bloom filter at the FPR it measured: bits per item, FPR, build throughput, exists latency", &["n", "absent", "queries"]),
];

fn bench_flag(name: &'static str) -> Arg {
    let help = match name {
        "n" => "items, increments or values written",
        "queries" => "reads timed",
        "absent" => "absent items looked up",
        "settle" => "seconds to wait before reading",
        "page-bytes" => "page size of the store",
        "max-successive-merges" => "merge operands RocksDB folds in the memtable",
        "write-buffer-mb" => "memtable size",
        "batch" => "items or values per command",
        "accuracy-n" => "items of the accuracy run",
        "keys" => "keys of each size whose bytes on disk are measured",
        "capacity" => "items per window (filter capacity)",
        _ => "seeds of the accuracy run",
    };
    valued(name, "N", help)
}

/// The whole command line.
pub fn command() -> Command {
    let benches = BENCHES.iter().map(|(name, about, flags)| {
        Command::new(*name)
            .about(*about)
            .args(flags.iter().map(|f| bench_flag(f)))
            .arg(dir(
                "a scratch directory, kept [default: a temporary one, removed]",
            ))
            .arg(json())
    });
    Command::new("rocksketch")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Probabilistic data structures on RocksDB, written with blind merges")
        .subcommand_required(true)
        .arg_required_else_help(true)
        .subcommand(
            Command::new("serve")
                .about(
                    "Serve RedisBloom's CMS.*, BF.*, CF.*, TDIGEST.*, TOPK.* and RIBBON.* \
                     commands over RESP2/RESP3",
                )
                .arg(Arg::new("config-file").value_name("CONFIG-FILE").help(
                    "the same settings in redis.conf's syntax (`port 7000`, `sync yes`); \
                     flags override it",
                ))
                .args(serve_args()),
        )
        .subcommand(
            Command::new("demo")
                .about("Ingest a Zipf stream into a count-min sketch and print estimates next to exact counts")
                .arg(dir("the data directory [default: ./rocksketch-data]"))
                .arg(valued("n", "N", "increments [default: 1000000]")),
        )
        .subcommand(
            Command::new("inspect")
                .about(
                    "Read a store offline: per key its type, version, parameters, pages, \
                     operands waiting and bytes on disk; per column family its files by level",
                )
                .arg(dir("the data directory [default: ./rocksketch-data]"))
                .arg(Arg::new("key").value_name("KEY").help("only this key (in any database)"))
                .arg(switch("json", "print the report as JSON")),
        )
        .subcommand(
            Command::new("bench")
                .about("Measurements compared side by side in one run, as ratios")
                .subcommand_required(true)
                .subcommands(benches),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declarations_are_consistent() {
        command().debug_assert();
    }

    #[test]
    fn bad_flags_are_named() {
        for (argv, named) in [
            (
                &["rocksketch", "serve", "--requirepas", "x"][..],
                "--requirepas",
            ),
            (&["rocksketch", "serve", "--maxclients"], "--maxclients"),
            (
                &["rocksketch", "bench", "cf-add", "--absent", "3"],
                "--absent",
            ),
            (&["rocksketch", "bench", "nope"], "nope"),
        ] {
            let err = command()
                .try_get_matches_from(argv)
                .unwrap_err()
                .to_string();
            assert!(err.contains(named), "{argv:?}: {err}");
        }
        let err = command()
            .try_get_matches_from(["rocksketch", "serve", "--requirepas", "x"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("--requirepass"), "no suggestion: {err}");
    }
}
