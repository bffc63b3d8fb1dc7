//! What a connection ran last and when, for `CLIENT LIST`'s `cmd` and `idle`. The
//! connection's I/O thread writes it after each run of requests (two relaxed stores; a
//! lock only for the commands that have subcommands, which are rare), and `CLIENT LIST`
//! reads it from whichever thread serves that command. It also holds the connection's
//! flags as `CLIENT LIST` shows them, and the `CLIENT UNBLOCK` hand-shake with a
//! parked `WAIT`.

use crate::table::COMMANDS;
use parking_lot::Mutex;
use rocksketch::now_ms;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::LazyLock;

/// `CLIENT LIST`'s flags, in the order Redis prints them (`N` when none is set).
pub(crate) const IN_MULTI: u8 = 1;
pub(crate) const BLOCKED: u8 = 2;
pub(crate) const NO_EVICT: u8 = 4;
pub(crate) const NO_TOUCH: u8 = 8;
const LETTERS: [(u8, char); 4] = [
    (IN_MULTI, 'x'),
    (BLOCKED, 'b'),
    (NO_EVICT, 'e'),
    (NO_TOUCH, 'T'),
];

/// A `WAIT`'s state for `CLIENT UNBLOCK`: not waiting, waiting, or asked to end with
/// its count so far (`TIMEOUT`) or with an error (`ERROR`).
const NOT_WAITING: u8 = 0;
const WAITING: u8 = 1;
const UNBLOCK_TIMEOUT: u8 = 2;
const UNBLOCK_ERROR: u8 = 3;

/// How `CLIENT UNBLOCK` ended a `WAIT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unblocked {
    /// Answer the replicas counted so far, as if the timeout had passed.
    Timeout,
    /// Answer `-UNBLOCKED client unblocked via CLIENT UNBLOCK`.
    Error,
}

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
    /// `IN_MULTI | BLOCKED | NO_EVICT | NO_TOUCH`.
    flags: AtomicU8,
    /// Commands queued since `MULTI`, or -1 outside one (`CLIENT LIST`'s `multi`).
    queued: AtomicI64,
    /// The `WAIT` hand-shake (`NOT_WAITING` ...).
    wait: AtomicU8,
}

impl Activity {
    pub(crate) fn new() -> Activity {
        Activity {
            command: AtomicUsize::new(0),
            sub: Mutex::new(String::new()),
            at_ms: AtomicU64::new(now_ms()),
            flags: AtomicU8::new(0),
            queued: AtomicI64::new(-1),
            wait: AtomicU8::new(NOT_WAITING),
        }
    }

    /// Sets or clears flag `flag`.
    pub(crate) fn set_flag(&self, flag: u8, on: bool) {
        match on {
            true => self.flags.fetch_or(flag, Ordering::Relaxed),
            false => self.flags.fetch_and(!flag, Ordering::Relaxed),
        };
    }

    /// Whether a `WAIT` or a pause holds the connection.
    pub(crate) fn is_blocked(&self) -> bool {
        self.flags.load(Ordering::Relaxed) & BLOCKED != 0
    }

    /// The flags as `CLIENT LIST` prints them (`xb`, `e`, or `N`).
    pub(crate) fn flag_letters(&self) -> String {
        let flags = self.flags.load(Ordering::Relaxed);
        let letters: String = LETTERS
            .iter()
            .filter(|(bit, _)| flags & bit != 0)
            .map(|(_, letter)| *letter)
            .collect();
        match letters.is_empty() {
            true => "N".to_owned(),
            false => letters,
        }
    }

    /// Records the open transaction's queue length (`None`: no transaction).
    pub(crate) fn set_queued(&self, queued: Option<usize>) {
        let value = queued.map_or(-1, |n| n as i64);
        if self.queued.swap(value, Ordering::Relaxed) != value {
            self.set_flag(IN_MULTI, queued.is_some());
        }
    }

    /// `CLIENT LIST`'s `multi`: the queue's length, or -1.
    pub(crate) fn queued(&self) -> i64 {
        self.queued.load(Ordering::Relaxed)
    }

    /// The connection parks in a `WAIT` (any earlier `CLIENT UNBLOCK` is forgotten).
    pub(crate) fn begin_wait(&self) {
        self.wait.store(WAITING, Ordering::SeqCst);
    }

    /// The `WAIT` is over, by itself or by `CLIENT UNBLOCK` (returned).
    pub(crate) fn end_wait(&self) -> Option<Unblocked> {
        match self.wait.swap(NOT_WAITING, Ordering::SeqCst) {
            UNBLOCK_TIMEOUT => Some(Unblocked::Timeout),
            UNBLOCK_ERROR => Some(Unblocked::Error),
            _ => None,
        }
    }

    /// Whether `CLIENT UNBLOCK` asked the parked `WAIT` to end (without ending it).
    pub(crate) fn unblock_asked(&self) -> bool {
        self.wait.load(Ordering::SeqCst) > WAITING
    }

    /// `CLIENT UNBLOCK`: asks a parked `WAIT` to end; whether one was parked.
    pub(crate) fn unblock(&self, how: Unblocked) -> bool {
        let to = match how {
            Unblocked::Timeout => UNBLOCK_TIMEOUT,
            Unblocked::Error => UNBLOCK_ERROR,
        };
        self.wait
            .compare_exchange(WAITING, to, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
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
