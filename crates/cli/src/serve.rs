//! `rocksketch serve`: the RESP host over a store in a local directory.

use crate::args::Args;
use crate::config_file;
use crate::logger;
use rocksketch::resp::Limits;
use rocksketch::{Store, StoreOptions};
use rocksketch_server::{Server, ServerConfig};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::Write;

/// Page size of the filters and sketches a server creates (`--page-bytes`): the power
/// of two nearest below a [`PAGES_PER_CACHE`]th of its hot-page cache, from the
/// library's 16 KiB up to the largest page, 1 MiB (a cache of 2 GiB or more; 64 KiB
/// with 128 MiB). A write costs a memtable entry per page it touches, and a server
/// combines the writes of many clients to one key: on a filter of a few MiB, a batch of
/// 16 items touches 11 pages of 64 KiB and 3 of 1 MiB, and a hot key's batch of
/// hundreds a few dozen against a handful. 64 filters written 16 items a batch spent
/// half the CPU a `BF.ADD` with pages of 1 MiB, one hot filter a quarter less (README).
/// The price is paid where pages miss the cache: each miss reads and merges a whole
/// page. Tying the page to the cache keeps every cache shard (a 64th) at 32 pages or
/// more; a store whose structures far outgrow its cache and are read at random wants
/// `--page-bytes 16384`.
fn default_page_bytes(cache_bytes: usize) -> u32 {
    let smallest = StoreOptions::default().page_bytes as usize;
    let share = cache_bytes / PAGES_PER_CACHE;
    let page = share.checked_ilog2().map_or(0, |log| 1usize << log);
    page.clamp(smallest, rocksketch_merge::MAX_PAGE_BYTES) as u32
}

/// A default page is at most this fraction of the hot-page cache.
const PAGES_PER_CACHE: usize = 2048;

pub fn run(cli: Args) -> Result<(), String> {
    // A config file's directives first, so the command line's flags override them.
    let args = match cli.positional.first() {
        None => cli,
        Some(path) => {
            let flags = crate::cli::serve_args();
            let names = |switches: bool| -> Vec<&str> {
                flags
                    .iter()
                    .filter(|a| matches!(a.get_action(), clap::ArgAction::SetTrue) == switches)
                    .map(|a| a.get_id().as_str())
                    .collect()
            };
            let (switches, valued) = (names(true), names(false));
            let file = config_file::flags(path, &switches, &valued)?;
            Args::parse(&file, &switches, &valued)?.overlaid(cli)
        }
    };
    logger::configure(
        args.string("loglevel").unwrap_or("notice"),
        args.string("logfile"),
    )?;
    let defaults = ServerConfig::default();
    let limits = Limits {
        max_bulk: args.get("proto-max-bulk-len", defaults.limits.max_bulk)?,
        max_args: args.get("max-args", defaults.limits.max_args)?,
        max_inline: defaults.limits.max_inline,
    };
    let config = ServerConfig {
        bind: args.get("bind", defaults.bind.clone())?,
        port: args.get("port", defaults.port)?,
        requirepass: args.string("requirepass").map(str::to_owned),
        max_clients: args.get("maxclients", defaults.max_clients)?,
        limits,
        max_query_buffer: args.get("client-query-buffer-limit", defaults.max_query_buffer)?,
        databases: args.get("databases", defaults.databases)?,
        enable_debug_command: args.switch("enable-debug-command"),
        threads: args.get("threads", defaults.threads)?,
        thread_fill: args.get("thread-fill", defaults.thread_fill)?,
        backup_dir: args.string("backup-dir").map(std::path::PathBuf::from),
        replicaof: args.string("replicaof").map(parse_primary).transpose()?,
        masterauth: args.string("masterauth").map(str::to_owned),
        cluster_enabled: args.switch("cluster-enabled"),
        repl_backlog: (
            args.get("repl-backlog-size", 0)?,
            args.get("repl-backlog-ttl", 0)?,
        ),
    };
    let dir = args.get("dir", "./rocksketch-data".to_owned())?;
    check_data_dir(std::path::Path::new(&dir))?;
    let cache_mb: usize = args.get("cache-mb", crate::memory::default_cache_mb())?;
    let cache_bytes = cache_mb
        .checked_mul(1 << 20)
        .ok_or_else(|| format!("--cache-mb {cache_mb} is too large"))?;
    let options = StoreOptions {
        sync_writes: args.switch("sync"),
        max_successive_merges: args.get(
            "max-successive-merges",
            StoreOptions::default().max_successive_merges,
        )?,
        page_bytes: args.get("page-bytes", default_page_bytes(cache_bytes))?,
        page_cache_bytes: cache_bytes,
        replica: rocksketch_server::starts_as_replica(std::path::Path::new(&dir), &config),
        wal_keep_mb: config.repl_backlog.0,
        wal_keep_seconds: config.repl_backlog.1,
        ..StoreOptions::default()
    };
    let store = Store::open(&dir, options).map_err(|e| format!("opening {dir}: {e}"))?;
    let wanted_clients = config.max_clients;
    let server = Server::bind(store, config).map_err(|e| format!("cannot listen: {e}"))?;
    if server.max_clients() < wanted_clients {
        log::warn!(
            "the open-file limit allows {} clients, not {wanted_clients}: maxclients \
             lowered (raise `ulimit -n` to serve more)",
            server.max_clients()
        );
    }
    log::info!(
        "rocksketch {} started: pid {}, data in {dir}, listening on {}, page cache {cache_mb} MiB",
        env!("CARGO_PKG_VERSION"),
        std::process::id(),
        server.local_addr()
    );
    let handle = server.handle();
    let mut signals = Signals::new([SIGINT, SIGTERM]).map_err(|e| e.to_string())?;
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            handle.shutdown();
        }
    });
    // Tests and scripts read this line to learn the port when they asked for port 0.
    println!(
        "rocksketch: listening on {} (data in {dir})",
        server.local_addr()
    );
    let _ = std::io::stdout().flush();
    match server.run() {
        // Whoever started the server may have closed its end of standard output since
        // reading the line above: a failed write here must not turn a clean stop into a
        // panic.
        Ok(()) => {
            let _ = writeln!(
                std::io::stdout(),
                "rocksketch: stopped; every acknowledged write is on disk"
            );
        }
        // A store in an error state (a full disk) cannot flush its memtables; what was
        // acknowledged is in the write-ahead log, which the next start replays.
        Err(e) => eprintln!(
            "rocksketch: stopped without flushing the memtables ({e}); acknowledged \
             writes are in the write-ahead log and are replayed at the next start"
        ),
    }
    Ok(())
}

/// The data directory may be missing (it is created, as on a first start) but its parent
/// must exist: a mistyped path is an error at start, not a new tree of directories.
fn check_data_dir(dir: &std::path::Path) -> Result<(), String> {
    if dir.is_dir() {
        return Ok(());
    }
    if dir.exists() {
        return Err(format!(
            "the data directory {} is not a directory",
            dir.display()
        ));
    }
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    if !parent.is_dir() {
        return Err(format!(
            "the data directory {} is missing, and so is its parent {}",
            dir.display(),
            parent.display()
        ));
    }
    Ok(())
}

/// `HOST:PORT` or `HOST PORT` (as redis.conf writes `replicaof`).
fn parse_primary(text: &str) -> Result<(String, u16), String> {
    let (host, port) = text
        .trim()
        .rsplit_once([' ', ':'])
        .ok_or_else(|| format!("--replicaof {text}: expected HOST:PORT"))?;
    let port = port
        .parse::<u16>()
        .ok()
        .filter(|p| *p > 0)
        .ok_or_else(|| format!("--replicaof {text}: bad port"))?;
    Ok((host.trim().to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::default_page_bytes;

    const MIB: usize = 1 << 20;

    #[test]
    fn default_pages_grow_with_the_cache_between_the_smallest_and_the_largest() {
        for (cache, page) in [
            (0, 16 << 10),
            (16 * MIB, 16 << 10),
            (64 * MIB - 1, 16 << 10),
            (64 * MIB, 32 << 10),
            (128 * MIB, 64 << 10),
            (256 * MIB - 1, 64 << 10),
            (256 * MIB, 128 << 10),
            (2048 * MIB - 1, 512 << 10),
            (2048 * MIB, 1 << 20),
            (3072 * MIB, 1 << 20),
            (usize::MAX, 1 << 20),
        ] {
            assert_eq!(default_page_bytes(cache), page, "cache of {cache} bytes");
        }
    }
}
