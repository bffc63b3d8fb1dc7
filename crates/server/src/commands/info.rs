//! `INFO [section ...]`: Redis's sections (server, clients, memory, persistence, stats,
//! replication, cpu, modules, cluster, keyspace, commandstats) and rocksketch's own.

use super::connection::BLOOM_MODULE_VERSION;
use super::*;

/// The sections `INFO` with no argument (or `default`) prints; `all` adds commandstats.
const DEFAULT: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "cluster",
    "keyspace",
    "rocksketch",
];

/// Writes one section.
type Section = fn(&Connection, &mut String);

/// `INFO [section ...]`.
pub(crate) fn info(conn: &mut Connection, args: &mut Args) -> HostResult {
    let asked: Vec<String> = args.rest().iter().map(|a| lower(a)).collect();
    let every = asked
        .iter()
        .any(|w| matches!(w.as_str(), "all" | "everything"));
    let default = asked.is_empty() || asked.iter().any(|w| w == "default");
    let want = |section: &str| {
        every || (default && DEFAULT.contains(&section)) || asked.iter().any(|w| w == section)
    };
    let mut text = String::new();
    let sections: [(&str, Section); 12] = [
        ("server", server),
        ("clients", clients),
        ("memory", memory),
        ("persistence", persistence),
        ("stats", stats),
        ("replication", super::replication::info_section),
        ("cpu", cpu),
        // As Redis Stack prints it: clients find RedisBloom, and its version, here.
        ("modules", |_, t| {
            let _ = write!(
                t,
                "# Modules\r\nmodule:name=bf,ver={BLOOM_MODULE_VERSION},api=1,filters=0,\
                 usedby=[],using=[],options=[]\r\n"
            );
        }),
        ("cluster", |conn, t| {
            let enabled = u8::from(conn.shared.cluster.is_some());
            let _ = write!(t, "# Cluster\r\ncluster_enabled:{enabled}\r\n");
        }),
        ("keyspace", keyspace),
        ("commandstats", commandstats),
        ("rocksketch", rocksketch),
    ];
    for (name, write) in sections {
        if want(name) {
            if !text.is_empty() {
                text.push_str("\r\n");
            }
            write(conn, &mut text);
        }
    }
    Ok(Reply::Verbatim(text.into_bytes()))
}

/// The user and system CPU seconds in a `/proc` stat file's fields 14-17 (utime,
/// stime, cutime, cstime, in the kernel's 100 ticks a second), after the command name
/// (which may hold spaces and parentheses).
fn cpu_times(path: &str) -> [f64; 4] {
    let stat = std::fs::read_to_string(path).unwrap_or_default();
    let fields: Vec<&str> = match stat.rfind(')') {
        Some(end) => stat[end + 1..].split_whitespace().collect(),
        None => Vec::new(),
    };
    let seconds = |i: usize| {
        let ticks: u64 = fields.get(i).and_then(|f| f.parse().ok()).unwrap_or(0);
        ticks as f64 / 100.0
    };
    // Field 3 (the state) is the first after the name.
    [seconds(11), seconds(12), seconds(13), seconds(14)]
}

/// Redis's CPU section: the process, its children (none), and the thread answering,
/// an I/O thread being what Redis's main thread is.
fn cpu(_conn: &Connection, text: &mut String) {
    let [user, sys, user_children, sys_children] = cpu_times("/proc/self/stat");
    let [thread_user, thread_sys, _, _] = cpu_times("/proc/thread-self/stat");
    let _ = write!(
        text,
        "# CPU\r\nused_cpu_sys:{sys:.6}\r\nused_cpu_user:{user:.6}\r\n\
         used_cpu_sys_children:{sys_children:.6}\r\nused_cpu_user_children:{user_children:.6}\r\n\
         used_cpu_sys_main_thread:{thread_sys:.6}\r\nused_cpu_user_main_thread:{thread_user:.6}\r\n"
    );
}

fn server(conn: &Connection, text: &mut String) {
    let shared = &conn.shared;
    let _ = write!(
        text,
        "# Server\r\nredis_version:{REDIS_VERSION}\r\nredis_mode:standalone\r\n\
         rocksketch_version:{}\r\nos:{}\r\narch_bits:{}\r\nprocess_id:{}\r\n\
         tcp_port:{}\r\nuptime_in_seconds:{}\r\nuptime_in_days:{}\r\nio_threads_active:{}\r\n\
         executable:{}\r\nconfig_file:\r\n",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        usize::BITS,
        std::process::id(),
        shared.addr.port(),
        shared.started.elapsed().as_secs(),
        shared.started.elapsed().as_secs() / 86_400,
        shared.config.threads,
        std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    );
}

/// `blocked_clients` counts the connections a `WAIT` or a pause holds, as Redis 7.0
/// counts its blocked and postponed clients.
fn clients(conn: &Connection, text: &mut String) {
    let shared = &conn.shared;
    // Replicas are not counted as connected clients, as in Redis.
    let (connected, blocked) = {
        let clients = shared.clients.lock();
        let blocked = clients.values().filter(|c| c.activity.is_blocked()).count();
        let replicas = clients.values().filter(|c| c.feed.is_some()).count();
        (clients.len() - replicas, blocked)
    };
    let _ = write!(
        text,
        "# Clients\r\nconnected_clients:{connected}\r\nmaxclients:{}\r\n\
         blocked_clients:{blocked}\r\n",
        shared.live.max_clients()
    );
}

/// Resident memory of the process, from `/proc/self/status` (0 where there is none).
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.2}G", b as f64 / f64::from(1u32 << 30)),
        b if b >= 1 << 20 => format!("{:.2}M", b as f64 / f64::from(1u32 << 20)),
        b if b >= 1 << 10 => format!("{:.2}K", b as f64 / 1024.0),
        b => format!("{b}B"),
    }
}

/// A RocksDB property of the pages column family, or 0.
fn property(conn: &Connection, name: &str) -> u64 {
    match conn.shared.store.pages_property(name) {
        Ok(Some(value)) => value,
        _ => 0,
    }
}

fn memory(conn: &Connection, text: &mut String) {
    let rss = resident_bytes();
    let (hits, misses, cached) = conn.shared.store.page_cache_stats();
    let hit_rate = match hits + misses {
        0 => 0.0,
        n => hits as f64 / n as f64,
    };
    // The process's resident size stands for Redis's allocator figure: the page cache,
    // RocksDB's memtables and block cache all live in it.
    let _ = write!(
        text,
        "# Memory\r\nused_memory:{rss}\r\nused_memory_human:{}\r\nused_memory_rss:{rss}\r\n\
         used_memory_rss_human:{}\r\nmaxmemory:0\r\nmaxmemory_policy:noeviction\r\n\
         page_cache_bytes:{cached}\r\npage_cache_hit_rate:{hit_rate:.4}\r\n\
         rocksdb_memtable_bytes:{}\r\nrocksdb_block_cache_bytes:{}\r\n",
        human(rss),
        human(rss),
        property(conn, "rocksdb.cur-size-all-mem-tables"),
        property(conn, "rocksdb.block-cache-usage"),
    );
}

fn persistence(conn: &Connection, text: &mut String) {
    // Every acknowledged write is in RocksDB's write-ahead log; a save is a checkpoint
    // (see `crate::persistence`).
    let saves = &conn.shared.saves;
    let newest = saves.newest();
    let _ = write!(
        text,
        "# Persistence\r\nloading:0\r\nrdb_bgsave_in_progress:{}\r\nrdb_last_save_time:{}\r\n\
         rdb_last_bgsave_status:{}\r\nrdb_last_bgsave_time_sec:{}\r\nrdb_saves:{}\r\n\
         checkpoint_dir:{}\r\ncheckpoint_latest:{}\r\ncheckpoint_sequence:{}\r\n\
         aof_enabled:0\r\nrocksdb_wal:1\r\nrocksdb_memtables_unflushed:{}\r\nrocksdb_flush_pending:{}\r\n\
         rocksdb_running_flushes:{}\r\nrocksdb_running_compactions:{}\r\n\
         rocksdb_pending_compaction_bytes:{}\r\nrocksdb_background_errors:{}\r\n",
        u8::from(saves.background_running()),
        saves.last(),
        if saves.last_failed() { "err" } else { "ok" },
        newest.as_ref().map_or(-1, |s| s.took.as_secs() as i64),
        saves.count(),
        saves.dir().display(),
        newest.as_ref().map_or_else(String::new, |s| s.path.display().to_string()),
        newest.as_ref().map_or(0, |s| s.sequence),
        property(conn, "rocksdb.num-immutable-mem-table") + 1,
        property(conn, "rocksdb.mem-table-flush-pending"),
        property(conn, "rocksdb.num-running-flushes"),
        property(conn, "rocksdb.num-running-compactions"),
        property(conn, "rocksdb.estimate-pending-compaction-bytes"),
        property(conn, "rocksdb.background-errors"),
    );
}

fn stats(conn: &Connection, text: &mut String) {
    let shared = &conn.shared;
    let stats = &shared.stats;
    let (hits, misses, cached) = shared.store.page_cache_stats();
    let (key_hits, key_misses) = shared.command_stats.keyspace();
    let _ = write!(
        text,
        "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n\
         instantaneous_ops_per_sec:{}\r\nrejected_connections:{}\r\n\
         keyspace_hits:{key_hits}\r\nkeyspace_misses:{key_misses}\r\n\
         page_cache_hits:{hits}\r\npage_cache_misses:{misses}\r\npage_cache_bytes:{cached}\r\n",
        stats.connections.load(Ordering::Relaxed),
        stats.commands.load(Ordering::Relaxed),
        shared.ops.ops_per_sec(),
        stats.rejected.load(Ordering::Relaxed),
    );
}

fn keyspace(conn: &Connection, text: &mut String) {
    text.push_str("# Keyspace\r\n");
    let shared = &conn.shared;
    let databases = match shared.cluster {
        Some(_) => 1,
        None => shared.config.databases,
    };
    for db in 0..databases {
        if let Ok((keys, expires)) = shared.keyspace(db).counts() {
            if keys > 0 {
                let _ = write!(text, "db{db}:keys={keys},expires={expires},avg_ttl=0\r\n");
            }
        }
    }
}

fn commandstats(conn: &Connection, text: &mut String) {
    text.push_str("# Commandstats\r\n");
    for stat in 0..super::stat_count() {
        let (calls, micros, failed, rejected) = conn.shared.command_stats.get(stat);
        if calls == 0 && failed == 0 && rejected == 0 {
            continue;
        }
        let per_call = match calls {
            0 => 0.0,
            n => micros as f64 / n as f64,
        };
        let _ = write!(
            text,
            "cmdstat_{}:calls={calls},usec={micros},usec_per_call={per_call:.2},\
             rejected_calls={rejected},failed_calls={failed}\r\n",
            super::stat_name(stat),
        );
    }
}

fn rocksketch(conn: &Connection, text: &mut String) {
    text.push_str("# Rocksketch\r\n");
    let store = &conn.shared.store;
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
    let _ = write!(text, "skipped_operands:{}\r\n", store.skipped_operands());
}
