//! Parked connections: a `WAIT` until replicas acknowledge (or `CLIENT UNBLOCK`), and
//! requests held while a slot's hand-over or `CLIENT PAUSE` pauses them.

use super::*;
use crate::activity::{Unblocked, BLOCKED};

/// A client parked by `WAIT` (the requests after it in `rest`), or held (the held
/// requests in `rest`).
pub(super) struct Parked {
    why: Parking,
    rest: Vec<Request>,
}

pub(super) enum Parking {
    /// A `WAIT`, and whether its reply is to be dropped (`CLIENT REPLY`).
    Wait(crate::replication::Wait, bool),
    /// Writes held while a slot's hand-over pauses them.
    HandOver,
    /// Requests held by `CLIENT PAUSE`.
    ClientPause,
}

/// How long a write waits for a hand-over's pause to end before it is answered
/// `TRYAGAIN` (a pause takes milliseconds; one that lasts is the target's trouble).
const HOLD_MAX: Duration = Duration::from_millis(500);

/// What a `WAIT` that `CLIENT UNBLOCK ... ERROR` ended answers.
const UNBLOCKED: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";

impl Connection {
    /// Parks the connection, `rest` to run once it may go on.
    pub(super) fn park(&mut self, why: Parking, rest: Vec<Request>) {
        if let (Parking::ClientPause, Some(request)) = (&why, rest.first()) {
            // `CLIENT LIST` shows the command that waits, as Redis does.
            if let Some(index) = request.first().and_then(|name| table::request_index(name)) {
                self.activity.ran(index, request);
            }
        }
        self.activity.set_flag(BLOCKED, true);
        self.parked = Some(Parked { why, rest });
    }

    /// Whether a `WAIT` holds the connection, or it is held.
    pub(crate) fn is_parked(&self) -> bool {
        self.parked.is_some()
    }

    /// Whether `CLIENT PAUSE` holds the connection.
    pub(crate) fn is_paused(&self) -> bool {
        matches!(
            self.parked,
            Some(Parked {
                why: Parking::ClientPause,
                ..
            })
        )
    }

    /// Answers a parked `WAIT` once it is over and runs the requests that came after
    /// it, or runs held requests again once the hand-over's pause is over (or they
    /// waited [`HOLD_MAX`]): `None` while it still waits, else whether the connection
    /// must close.
    pub(crate) fn resume(&mut self, output: &mut Vec<u8>) -> Option<bool> {
        let parked = self.parked.as_ref()?;
        match &parked.why {
            Parking::Wait(wait, dropped) => {
                let done = match self.activity.unblock_asked() {
                    true => None,
                    false => Some(wait.poll(&self.shared.replication)?),
                };
                // Over, by itself or by `CLIENT UNBLOCK`; if both at once, the
                // unblock (which answered 1) wins.
                let replication = &self.shared.replication;
                let reply = match self.activity.end_wait() {
                    Some(Unblocked::Error) => Reply::Error(UNBLOCKED.to_owned()),
                    Some(Unblocked::Timeout) => Reply::Int(wait.now(replication)),
                    None => Reply::Int(done.unwrap_or_else(|| wait.now(replication))),
                };
                if !dropped {
                    resp::encode(&reply, self.protocol, output);
                }
            }
            Parking::HandOver => {
                let patient = self.held_until.is_some_and(|t| Instant::now() < t);
                if patient && self.shared.writes_paused() {
                    return None;
                }
            }
            Parking::ClientPause => {
                if parked
                    .rest
                    .first()
                    .is_some_and(|r| self.shared.pause.holds(self, r))
                {
                    return None;
                }
            }
        }
        self.activity.set_flag(BLOCKED, false);
        let rest = self.parked.take().map(|p| p.rest).unwrap_or_default();
        Some(self.run_parsed(&rest, output))
    }

    /// Whether a write that a hand-over's pause stops may wait for it (not once it
    /// waited [`HOLD_MAX`]).
    pub(crate) fn may_hold(&mut self) -> bool {
        let now = Instant::now();
        now < *self.held_until.get_or_insert(now + HOLD_MAX)
    }

    /// Parks `requests` (not run yet) until `CLIENT PAUSE` lets them go.
    pub(crate) fn hold_for_pause(&mut self, requests: Vec<Request>) {
        self.park(Parking::ClientPause, requests);
    }

    /// Parks `requests` (not run yet) until the hand-over's pause is over.
    pub(crate) fn hold(&mut self, requests: Vec<Request>) {
        self.park(Parking::HandOver, requests);
    }
}
