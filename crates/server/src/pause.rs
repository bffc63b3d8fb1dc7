//! `CLIENT PAUSE timeout [WRITE | ALL]` and `CLIENT UNPAUSE`, as Redis 7 pauses its
//! clients: until the pause ends, a command that would change the data (under `WRITE`:
//! the writes, `PFCOUNT`, which Redis may replicate, and an `EXEC` of a transaction
//! holding a write; under `ALL`: every command) waits, and the connection's later
//! requests wait behind it. Errors Redis answers before it looks at a pause (an unknown
//! command, a wrong number of arguments, `NOAUTH`) are answered at once. The feeds of
//! replicas and a migrating node's import link are not clients here and never wait,
//! as Redis never pauses its replicas. The expiry sweeper deletes nothing during a
//! pause (an expired key still reads as absent), so the data stand still, which is
//! what a failover pauses writes for.
//!
//! With several I/O threads, a command may look for a pause just before another
//! thread starts one. So every path that runs commands looks again under the
//! transaction gate ([`crate::gate`]: shared by commands, exclusive for `EXEC`), and
//! `CLIENT PAUSE` sets the pause, then takes the gate exclusively once before it
//! answers: a command that looked before then has finished, one that looks after sees
//! the pause. Once `+OK` is sent, no held command runs until the pause ends.

use crate::conn::Connection;
use crate::table;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The server's pause: none, or until when and of which commands.
#[derive(Default)]
pub(crate) struct ClientPause {
    /// Set while a pause may be in force: the common case, no pause, is one load.
    active: AtomicBool,
    state: Mutex<Option<Pause>>,
}

#[derive(Clone, Copy)]
struct Pause {
    until: Instant,
    /// `ALL`: every command waits; else only the writes.
    all: bool,
}

impl ClientPause {
    /// Pauses until `until` (or the end of a pause already in force, if later), every
    /// command if `all` (or if the pause in force already pauses every command).
    pub(crate) fn pause(&self, until: Instant, all: bool) {
        let mut state = self.state.lock();
        let merged = match *state {
            Some(p) if Instant::now() < p.until => Pause {
                until: p.until.max(until),
                all: p.all || all,
            },
            _ => Pause { until, all },
        };
        *state = Some(merged);
        self.active.store(true, Ordering::Release);
    }

    /// Ends the pause in force, if any.
    pub(crate) fn unpause(&self) {
        *self.state.lock() = None;
        self.active.store(false, Ordering::Release);
    }

    /// The pause in force now, if any.
    fn current(&self) -> Option<Pause> {
        if !self.active.load(Ordering::Acquire) {
            return None;
        }
        let mut state = self.state.lock();
        match *state {
            Some(p) if Instant::now() < p.until => Some(p),
            _ => {
                *state = None;
                self.active.store(false, Ordering::Release);
                None
            }
        }
    }

    /// Whether a pause is in force, and if so whether it pauses every command.
    fn in_force(&self) -> Option<bool> {
        self.current().map(|p| p.all)
    }

    /// How long the pause in force lasts yet (a held request can go on only once it
    /// is over: a pause never turns from `ALL` to `WRITE`).
    pub(crate) fn left(&self) -> Option<std::time::Duration> {
        self.current()
            .map(|p| p.until.saturating_duration_since(Instant::now()))
    }

    /// Whether any pause may be in force (one load): cross-connection batching stands
    /// aside then, so that each request meets [`ClientPause::holds`].
    pub(crate) fn may_be_active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Whether writes are paused now (the expiry sweeper waits then).
    pub(crate) fn writes_paused(&self) -> bool {
        self.in_force().is_some()
    }

    /// Whether `request`, the next of `conn`'s, waits for the pause to end.
    pub(crate) fn holds(&self, conn: &Connection, request: &[Vec<u8>]) -> bool {
        if !self.may_be_active() || conn.import_link.is_some() {
            return false;
        }
        self.holds_request(request, conn.authenticated, || conn.transaction_writes())
    }

    /// Whether `request` of a client (authenticated or not) waits for the pause to
    /// end; `exec_writes` says whether an `EXEC`'s transaction holds a write.
    pub(crate) fn holds_request(
        &self,
        request: &[Vec<u8>],
        authenticated: bool,
        exec_writes: impl FnOnce() -> bool,
    ) -> bool {
        if !self.may_be_active() {
            return false;
        }
        // Unknown commands and wrong arities (a subcommand's too) are answered at once.
        let Ok(spec) = crate::commands::check_call(request) else {
            return false;
        };
        if !authenticated && !spec.flags.contains(&"no_auth") {
            return false;
        }
        match self.in_force() {
            None => false,
            Some(true) => true,
            Some(false) => is_write(spec) || (spec.name == "exec" && exec_writes()),
        }
    }
}

/// Whether a command changes the data as `CLIENT PAUSE WRITE` counts it: a write, or
/// `PFCOUNT`, which Redis may replicate (it caches the count in the string).
pub(crate) fn is_write(spec: &table::Spec) -> bool {
    spec.flags.contains(&"write") || spec.name == "pfcount"
}

/// Whether `request` is `CLIENT PAUSE ...`: it runs outside the transaction gate, then
/// takes the gate exclusively once, as a barrier, so that no command that looked for a
/// pause before this one began runs on after its `+OK`.
pub(crate) fn is_client_pause(request: &[Vec<u8>]) -> bool {
    request.len() >= 2
        && request[0].eq_ignore_ascii_case(b"client")
        && request[1].eq_ignore_ascii_case(b"pause")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn pauses_merge_to_the_longest_and_strictest_and_end_on_time() {
        let pause = ClientPause::default();
        assert!(!pause.writes_paused());
        let now = Instant::now();
        pause.pause(now + Duration::from_millis(300), false);
        assert_eq!(pause.in_force(), Some(false));
        pause.pause(now + Duration::from_millis(50), true);
        assert_eq!(pause.in_force(), Some(true), "ALL wins over WRITE");
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(pause.in_force(), Some(true), "the longer end is kept");
        std::thread::sleep(Duration::from_millis(250));
        assert_eq!(pause.in_force(), None);
        assert!(
            !pause.may_be_active(),
            "an ended pause costs one load again"
        );
        pause.pause(Instant::now() + Duration::from_secs(60), false);
        pause.unpause();
        assert!(!pause.writes_paused());
    }
}
