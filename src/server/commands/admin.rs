//! Server commands: `INFO`, `MODULE`, `DEBUG`.

use super::*;

/// `DEBUG PANIC` (a panicking command: the client gets an error and its connection
/// closes, the server carries on) and `DEBUG SLEEP seconds`, when enabled.
pub(super) fn debug(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    if !conn.shared.config.enable_debug_command {
        return err(
            "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", \
             you can run it from a local connection, otherwise you need to set this option in the \
             configuration file, and then restart the server.",
        );
    }
    match (lower(&args[1]).as_str(), args.len()) {
        ("panic", 2) => panic!("DEBUG PANIC"),
        ("sleep", 3) => match std::str::from_utf8(&args[2])
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
        {
            Some(secs) if (0.0..=60.0).contains(&secs) => {
                std::thread::sleep(std::time::Duration::from_secs_f64(secs));
                Reply::ok()
            }
            _ => err("ERR DEBUG SLEEP takes seconds from 0 to 60"),
        },
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try DEBUG HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

pub(super) fn module(args: &[Vec<u8>]) -> Reply {
    match lower(&args[1]).as_str() {
        "list" => Reply::Array(vec![bloom_module()]),
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try MODULE HELP.",
            String::from_utf8_lossy(&args[1])
        )),
    }
}

/// `INFO [section ...]`: server, clients, stats, keyspace and rocksketch's own section.
pub(super) fn info(conn: &Connection, args: &[Vec<u8>]) -> Reply {
    let wanted: Vec<String> = args[1..].iter().map(|a| lower(a)).collect();
    let all = wanted.is_empty()
        || wanted
            .iter()
            .any(|w| matches!(w.as_str(), "all" | "default" | "everything"));
    let want = |section: &str| all || wanted.iter().any(|w| w == section);
    let shared = &conn.shared;
    let mut text = String::new();
    if want("server") {
        let _ = write!(
            text,
            "# Server\r\nredis_version:{REDIS_VERSION}\r\nredis_mode:standalone\r\n\
             rocksketch_version:{}\r\nos:{}\r\narch_bits:{}\r\nprocess_id:{}\r\n\
             tcp_port:{}\r\nuptime_in_seconds:{}\r\n\r\n",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            usize::BITS,
            std::process::id(),
            shared.addr.port(),
            shared.started.elapsed().as_secs(),
        );
    }
    if want("clients") {
        let _ = write!(
            text,
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\n\r\n",
            shared.clients.lock().len(),
            shared.config.max_clients
        );
    }
    if want("stats") {
        let stats = &shared.stats;
        let (hits, misses, cached) = shared.store.page_cache_stats();
        let _ = write!(
            text,
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
             rejected_connections:{}\r\npage_cache_hits:{hits}\r\n\
             page_cache_misses:{misses}\r\npage_cache_bytes:{cached}\r\n\r\n",
            stats.connections.load(Ordering::Relaxed),
            stats.commands.load(Ordering::Relaxed),
            stats.rejected.load(Ordering::Relaxed),
        );
    }
    if want("replication") {
        text.push_str("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n");
    }
    if want("cluster") {
        text.push_str("# Cluster\r\ncluster_enabled:0\r\n\r\n");
    }
    if want("keyspace") {
        text.push_str("# Keyspace\r\n");
        for db in 0..shared.config.databases {
            if let Ok((keys, expires)) = shared.store.ns(db).counts() {
                if keys > 0 {
                    let _ = write!(text, "db{db}:keys={keys},expires={expires},avg_ttl=0\r\n");
                }
            }
        }
        text.push_str("\r\n");
    }
    if want("rocksketch") {
        text.push_str("# Rocksketch\r\n");
        let store = &shared.store;
        for (field, property) in [
            ("pages_estimated_keys", "rocksdb.estimate-num-keys"),
            ("pages_live_data_bytes", "rocksdb.estimate-live-data-size"),
            ("pages_sst_bytes", "rocksdb.total-sst-files-size"),
            ("pages_memtable_bytes", "rocksdb.cur-size-all-mem-tables"),
            ("pages_block_cache_bytes", "rocksdb.block-cache-usage"),
            ("running_compactions", "rocksdb.num-running-compactions"),
            (
                "pending_compaction_bytes",
                "rocksdb.estimate-pending-compaction-bytes",
            ),
        ] {
            if let Ok(Some(value)) = store.pages_property(property) {
                let _ = write!(text, "{field}:{value}\r\n");
            }
        }
        let _ = write!(
            text,
            "skipped_operands:{}\r\n\r\n",
            store.skipped_operands()
        );
    }
    // Redis ends the text without the last blank line.
    let text = text.trim_end_matches("\r\n").to_owned() + "\r\n";
    bulk(text)
}
