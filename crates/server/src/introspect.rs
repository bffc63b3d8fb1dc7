//! What the server knows of itself for `CONFIG`, `SLOWLOG` and `INFO`: the settings a
//! client may change while it runs, the slow-command log, per-command statistics and
//! the operations-per-second meter.

use super::ServerConfig;
use parking_lot::{Mutex, RwLock};
use rocksketch::resp::Limits;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Redis's defaults: commands of 10 ms and more are logged, the last 128 kept.
pub(crate) const DEFAULT_SLOWER_THAN_US: i64 = 10_000;
pub(crate) const DEFAULT_SLOWLOG_LEN: usize = 128;
/// Redis keeps 32 arguments of an entry (the last says how many more there were), each
/// cut to 128 bytes.
const ENTRY_MAX_ARGS: usize = 32;
const ENTRY_MAX_ARG_BYTES: usize = 128;

/// Redis's log levels, in order; `CONFIG SET loglevel` sets the `log` facade's level.
pub(crate) const LOG_LEVELS: [&str; 4] = ["debug", "verbose", "notice", "warning"];

/// Settings `CONFIG SET` changes while the server runs.
pub(crate) struct Live {
    requirepass: RwLock<Option<String>>,
    max_clients: AtomicUsize,
    max_bulk: AtomicUsize,
    max_args: AtomicUsize,
    max_query_buffer: AtomicUsize,
    slower_than_us: AtomicI64,
    slowlog_max_len: AtomicUsize,
    log_level: AtomicU8,
}

impl Live {
    pub(crate) fn new(config: &ServerConfig, max_clients: usize) -> Live {
        Live {
            requirepass: RwLock::new(config.requirepass.clone()),
            max_clients: AtomicUsize::new(max_clients),
            max_bulk: AtomicUsize::new(config.limits.max_bulk),
            max_args: AtomicUsize::new(config.limits.max_args),
            max_query_buffer: AtomicUsize::new(config.max_query_buffer),
            slower_than_us: AtomicI64::new(DEFAULT_SLOWER_THAN_US),
            slowlog_max_len: AtomicUsize::new(DEFAULT_SLOWLOG_LEN),
            log_level: AtomicU8::new(match log::max_level() {
                log::LevelFilter::Trace => 0,
                log::LevelFilter::Debug => 1,
                log::LevelFilter::Info => 2,
                _ => 3,
            }),
        }
    }

    pub(crate) fn requirepass(&self) -> Option<String> {
        self.requirepass.read().clone()
    }

    pub(crate) fn has_password(&self) -> bool {
        self.requirepass.read().is_some()
    }

    /// An empty password removes it, as in Redis.
    pub(crate) fn set_requirepass(&self, pass: &str) {
        *self.requirepass.write() = (!pass.is_empty()).then(|| pass.to_owned());
    }

    /// An authenticated client's limits on one request (`max_inline` as configured).
    pub(crate) fn limits(&self, configured: Limits) -> Limits {
        Limits {
            max_bulk: self.max_bulk.load(Ordering::Relaxed),
            max_args: self.max_args.load(Ordering::Relaxed),
            ..configured
        }
    }

    pub(crate) fn set_max_bulk(&self, n: usize) {
        self.max_bulk.store(n, Ordering::Relaxed);
    }

    pub(crate) fn set_max_args(&self, n: usize) {
        self.max_args.store(n, Ordering::Relaxed);
    }

    pub(crate) fn max_query_buffer(&self) -> usize {
        self.max_query_buffer.load(Ordering::Relaxed)
    }

    pub(crate) fn set_max_query_buffer(&self, n: usize) {
        self.max_query_buffer.store(n, Ordering::Relaxed);
    }

    pub(crate) fn max_clients(&self) -> usize {
        self.max_clients.load(Ordering::Relaxed)
    }

    pub(crate) fn set_max_clients(&self, n: usize) {
        self.max_clients.store(n, Ordering::Relaxed);
    }

    pub(crate) fn slower_than_us(&self) -> i64 {
        self.slower_than_us.load(Ordering::Relaxed)
    }

    pub(crate) fn set_slower_than_us(&self, us: i64) {
        self.slower_than_us.store(us, Ordering::Relaxed);
    }

    pub(crate) fn slowlog_max_len(&self) -> usize {
        self.slowlog_max_len.load(Ordering::Relaxed)
    }

    pub(crate) fn set_slowlog_max_len(&self, n: usize) {
        self.slowlog_max_len.store(n, Ordering::Relaxed);
    }

    pub(crate) fn log_level(&self) -> &'static str {
        LOG_LEVELS[usize::from(self.log_level.load(Ordering::Relaxed)).min(3)]
    }

    /// Sets the level by Redis's name; false for a name it does not have.
    pub(crate) fn set_log_level(&self, name: &str) -> bool {
        let Some(index) = LOG_LEVELS.iter().position(|l| *l == name) else {
            return false;
        };
        self.log_level.store(index as u8, Ordering::Relaxed);
        // Redis's four levels on `log`'s: debug is trace, verbose debug, notice info.
        log::set_max_level(match index {
            0 => log::LevelFilter::Trace,
            1 => log::LevelFilter::Debug,
            2 => log::LevelFilter::Info,
            _ => log::LevelFilter::Warn,
        });
        true
    }
}

/// One `SLOWLOG GET` entry.
#[derive(Debug, Clone)]
pub(crate) struct SlowEntry {
    pub(crate) id: u64,
    pub(crate) unix_secs: u64,
    pub(crate) micros: u64,
    pub(crate) args: Vec<Vec<u8>>,
    pub(crate) client_addr: String,
    pub(crate) client_name: String,
}

/// The slow-command log: the newest first, at most `slowlog-max-len` entries.
#[derive(Default)]
pub(crate) struct SlowLog {
    entries: Mutex<VecDeque<SlowEntry>>,
    next_id: AtomicU64,
}

impl SlowLog {
    /// Whether a command that took `elapsed` is logged.
    pub(crate) fn is_slow(live: &Live, elapsed: Duration) -> bool {
        let threshold = live.slower_than_us();
        threshold >= 0 && elapsed.as_micros() >= threshold as u128
    }

    /// Logs a command that took `elapsed`, if the threshold says so.
    pub(crate) fn record(
        &self,
        live: &Live,
        elapsed: Duration,
        args: &[Vec<u8>],
        client: impl FnOnce() -> (String, String),
    ) {
        let threshold = live.slower_than_us();
        let micros = elapsed.as_micros().min(u128::from(u64::MAX)) as u64;
        if threshold < 0 || micros < threshold as u64 {
            return;
        }
        let max_len = live.slowlog_max_len();
        if max_len == 0 {
            return;
        }
        let (client_addr, client_name) = client();
        let entry = SlowEntry {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            unix_secs: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            micros,
            args: entry_args(args),
            client_addr,
            client_name,
        };
        let mut entries = self.entries.lock();
        entries.push_front(entry);
        entries.truncate(max_len);
    }

    /// The newest `count` entries (all of them for `None`).
    pub(crate) fn newest(&self, count: Option<usize>) -> Vec<SlowEntry> {
        let entries = self.entries.lock();
        let n = count.unwrap_or(entries.len()).min(entries.len());
        entries.iter().take(n).cloned().collect()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.lock().len()
    }

    pub(crate) fn reset(&self) {
        self.entries.lock().clear();
    }

    /// Applies a lowered `slowlog-max-len` at once, as Redis does.
    pub(crate) fn trim(&self, max_len: usize) {
        self.entries.lock().truncate(max_len);
    }
}

/// A command's arguments as a slow-log entry keeps them.
fn entry_args(args: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let kept = if args.len() > ENTRY_MAX_ARGS {
        ENTRY_MAX_ARGS - 1
    } else {
        args.len()
    };
    let mut out: Vec<Vec<u8>> = args[..kept]
        .iter()
        .map(|arg| match arg.len() > ENTRY_MAX_ARG_BYTES {
            false => arg.clone(),
            true => {
                let mut cut = arg[..ENTRY_MAX_ARG_BYTES].to_vec();
                let more = arg.len() - ENTRY_MAX_ARG_BYTES;
                cut.extend_from_slice(format!("... ({more} more bytes)").as_bytes());
                cut
            }
        })
        .collect();
    if args.len() > kept {
        let more = args.len() - kept;
        out.push(format!("... ({more} more arguments)").into_bytes());
    }
    out
}

/// One command's counters for `INFO commandstats`.
#[derive(Default)]
struct CommandCounters {
    calls: AtomicU64,
    micros: AtomicU64,
    failed: AtomicU64,
    rejected: AtomicU64,
}

/// Copies of the counters connections update by their id, so that many clients running
/// one command do not all write one cache line; `INFO` adds them up.
const STAT_SHARDS: usize = 8;

/// Every command's counters, by the command's position in the command table, and the
/// keyspace hits and misses of read commands.
pub(crate) struct CommandStats {
    shards: Vec<Box<[CommandCounters]>>,
    keyspace: Vec<Keyspace>,
}

/// Hits and misses of one shard, on a cache line of its own.
#[derive(Default)]
#[repr(align(64))]
struct Keyspace {
    hits: AtomicU64,
    misses: AtomicU64,
}

impl CommandStats {
    pub(crate) fn new(commands: usize) -> CommandStats {
        let shard = || (0..commands).map(|_| CommandCounters::default()).collect();
        CommandStats {
            shards: (0..STAT_SHARDS).map(|_| shard()).collect(),
            keyspace: (0..STAT_SHARDS).map(|_| Keyspace::default()).collect(),
        }
    }

    /// Counts `n` lookups of a key by a read command of connection `client`.
    pub(crate) fn lookup(&self, client: u64, found: bool, n: u64) {
        let shard = &self.keyspace[client as usize % STAT_SHARDS];
        let counter = if found { &shard.hits } else { &shard.misses };
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// (keyspace hits, keyspace misses).
    pub(crate) fn keyspace(&self) -> (u64, u64) {
        self.keyspace.iter().fold((0, 0), |(h, m), k| {
            (
                h + k.hits.load(Ordering::Relaxed),
                m + k.misses.load(Ordering::Relaxed),
            )
        })
    }

    /// Counts `n` requests for command `index` by connection `client` refused before
    /// they ran (a wrong argument count, a transaction's queueing error): Redis's
    /// `rejected_calls`, not calls.
    pub(crate) fn reject(&self, client: u64, index: usize, n: u64) {
        if let Some(c) = self.shards[client as usize % STAT_SHARDS].get(index) {
            c.rejected.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Counts `calls` of command `index` by connection `client`.
    pub(crate) fn add(&self, client: u64, index: usize, calls: u64, micros: u64, failed: u64) {
        let Some(c) = self.shards[client as usize % STAT_SHARDS].get(index) else {
            return;
        };
        c.calls.fetch_add(calls, Ordering::Relaxed);
        c.micros.fetch_add(micros, Ordering::Relaxed);
        if failed > 0 {
            c.failed.fetch_add(failed, Ordering::Relaxed);
        }
    }

    /// (calls, microseconds, failed calls, rejected calls) of command `index`.
    pub(crate) fn get(&self, index: usize) -> (u64, u64, u64, u64) {
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        self.shards
            .iter()
            .filter_map(|shard| shard.get(index))
            .fold((0, 0, 0, 0), |(calls, micros, failed, rejected), c| {
                (
                    calls + load(&c.calls),
                    micros + load(&c.micros),
                    failed + load(&c.failed),
                    rejected + load(&c.rejected),
                )
            })
    }

    pub(crate) fn reset(&self) {
        for c in self.shards.iter().flat_map(|shard| shard.iter()) {
            for counter in [&c.calls, &c.micros, &c.failed, &c.rejected] {
                counter.store(0, Ordering::Relaxed);
            }
        }
        for k in &self.keyspace {
            k.hits.store(0, Ordering::Relaxed);
            k.misses.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_commands_are_cut_as_redis_cuts_them() {
        let args: Vec<Vec<u8>> = (0..40).map(|i| vec![b'a'; 100 + i]).collect();
        let kept = entry_args(&args);
        assert_eq!(kept.len(), 32);
        assert_eq!(kept[0].len(), 100);
        assert_eq!(
            kept[30],
            [vec![b'a'; 128], b"... (2 more bytes)".to_vec()].concat()
        );
        assert_eq!(kept[31], b"... (9 more arguments)");
    }

    #[test]
    fn the_log_keeps_the_newest_entries_within_its_length() {
        let live = Live::new(&ServerConfig::default(), 10);
        live.set_slower_than_us(0);
        live.set_slowlog_max_len(3);
        let log = SlowLog::default();
        for i in 0..5u8 {
            log.record(&live, Duration::from_micros(5), &[vec![i]], || {
                ("127.0.0.1:1".to_owned(), String::new())
            });
        }
        let ids: Vec<u64> = log.newest(None).iter().map(|e| e.id).collect();
        assert_eq!(ids, [4, 3, 2]);
        live.set_slower_than_us(-1);
        log.record(&live, Duration::from_secs(1), &[], || unreachable!());
        assert_eq!(log.len(), 3);
    }
}
