//! How large a server's hot-page cache is when `--cache-mb` does not say.
//!
//! RedisBloom keeps every filter in memory; a Redis user moving to rocksketch expects
//! the filters in use to answer from memory too, and a fixed 64 MiB default made a
//! working set of 64 one-million-item filters (88 MB) miss a quarter of its page reads
//! (each miss a RocksDB read and merge: a third of the server's CPU in `BF.ADD` on 64
//! keys). So the server takes a share of the memory it may use, as storage servers size
//! their block caches (Kvrocks' default is 4 GiB): an eighth of the machine's memory, or
//! of its cgroup's limit when that is lower, between the library's 64 MiB and 4 GiB.
//! The cache only holds pages that were read or written, so an idle or small store uses
//! little of it.

/// The share of usable memory the cache may take.
const SHARE: u64 = 8;
/// The library's default, the least a server gets.
const MIN_MB: u64 = 64;
/// The most a default gives; more is for the operator to ask.
const MAX_MB: u64 = 4096;

/// The default `--cache-mb` on this machine.
pub fn default_cache_mb() -> usize {
    cache_mb_for(usable_memory())
}

/// The default `--cache-mb` for `memory` usable bytes (unknown: the minimum).
fn cache_mb_for(memory: Option<u64>) -> usize {
    let mb = memory.map_or(MIN_MB, |bytes| (bytes / SHARE) >> 20);
    usize::try_from(mb.clamp(MIN_MB, MAX_MB)).unwrap_or(MIN_MB as usize)
}

/// The memory this process may use: the machine's, or its cgroup's limit when lower.
fn usable_memory() -> Option<u64> {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text));
    let cgroup = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|path| std::fs::read_to_string(path).ok())
    .and_then(|text| text.trim().parse::<u64>().ok());
    match (machine, cgroup) {
        (Some(m), Some(c)) => Some(m.min(c)),
        (m, c) => m.or(c),
    }
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let kib = line.trim().strip_suffix("kB")?.trim().parse::<u64>().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eighth_of_memory_within_bounds() {
        assert_eq!(cache_mb_for(Some(24 << 30)), 3072);
        assert_eq!(
            cache_mb_for(Some(256 << 20)),
            64,
            "never under the library's default"
        );
        assert_eq!(cache_mb_for(Some(1 << 40)), 4096);
        assert_eq!(cache_mb_for(None), 64);
    }

    #[test]
    fn reads_mem_total() {
        let text = "MemTotal:       24683584 kB\nMemFree:         1000 kB\n";
        assert_eq!(mem_total(text), Some(24_683_584 * 1024));
        assert_eq!(mem_total("MemFree: 5 kB\n"), None);
        assert_eq!(mem_total("MemTotal: lots\n"), None);
    }

    #[test]
    fn this_machine_gets_a_bounded_default() {
        let mb = default_cache_mb() as u64;
        assert!((MIN_MB..=MAX_MB).contains(&mb), "{mb} MiB");
    }
}
