//! What a connection ran last and when, for `CLIENT LIST`'s `cmd` and `idle`. The
//! connection's I/O thread writes it after each run of requests (two relaxed stores; a
//! lock only for the commands that have subcommands, which are rare), and `CLIENT LIST`
//! reads it from whichever thread serves that command.

use crate::table::COMMANDS;
use parking_lot::Mutex;
use rocksketch::now_ms;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::LazyLock;

/// The commands whose name Redis shows with their subcommand (`client|list`).
const CONTAINERS: &[&str] = &[
    "client", "cluster", "command", "config", "debug", "module", "slowlog",
];

/// A connection's last command, shared with the client table.
pub(crate) struct Activity {
    /// The last command's row in the command table, plus one (0: none yet).
    command: AtomicUsize,
    /// Its subcommand, lowercased, where the command has them.
    sub: Mutex<String>,
    /// When the connection last ran a command, or connected (milliseconds since the
    /// epoch).
    at_ms: AtomicU64,
}

impl Activity {
    pub(crate) fn new() -> Activity {
        Activity {
            command: AtomicUsize::new(0),
            sub: Mutex::new(String::new()),
            at_ms: AtomicU64::new(now_ms()),
        }
    }

    /// Records that `request`, whose row is `index`, ran now.
    pub(crate) fn ran(&self, index: usize, request: &[Vec<u8>]) {
        if is_container(index) {
            let mut sub = self.sub.lock();
            sub.clear();
            if let Some(word) = request.get(1).filter(|w| is_word(w)) {
                sub.extend(word.iter().map(|b| b.to_ascii_lowercase() as char));
            }
        }
        self.command.store(index + 1, Ordering::Relaxed);
        self.at_ms.store(now_ms(), Ordering::Relaxed);
    }

    /// The last command as Redis names it (`bf.add`, `client|list`), or `NULL` before
    /// the first.
    pub(crate) fn command(&self) -> String {
        let Some(index) = self.command.load(Ordering::Relaxed).checked_sub(1) else {
            return "NULL".to_owned();
        };
        let name = COMMANDS.rows()[index].name;
        if !is_container(index) {
            return name.to_owned();
        }
        let sub = self.sub.lock();
        match sub.is_empty() {
            true => name.to_owned(),
            false => format!("{name}|{sub}"),
        }
    }

    /// Whole seconds since the last command (or the connection, before one).
    pub(crate) fn idle_seconds(&self) -> u64 {
        now_ms().saturating_sub(self.at_ms.load(Ordering::Relaxed)) / 1000
    }
}

/// Whether the command of row `index` has subcommands (looked up once per row, not per
/// request).
fn is_container(index: usize) -> bool {
    static ROWS: LazyLock<Vec<bool>> = LazyLock::new(|| {
        let rows = COMMANDS.rows().iter();
        rows.map(|row| CONTAINERS.contains(&row.name)).collect()
    });
    ROWS.get(index).copied().unwrap_or(false)
}

/// A subcommand worth naming: a short word of letters, digits, `-` and `_`.
fn is_word(word: &[u8]) -> bool {
    (1..=32).contains(&word.len())
        && word
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_')
}
