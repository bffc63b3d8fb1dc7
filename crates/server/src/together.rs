//! Requests from different connections that one I/O thread found ready together, run
//! together: consecutive answered writes and reads of one key (`BF.ADD`, `CF.ADD`,
//! `CMS.INCRBY`, their reads) from many clients become one engine call, so one lock,
//! one read and one write batch (one WAL append) answer them all. Each connection's
//! replies are exactly those of running its requests alone, in order; requests of
//! different connections were concurrent, so any order among them is a valid one.

use super::client::Client;
use super::conn::BatchKey;
use crate::cluster;
use crate::fast::FastMap;
use mio::Token;
use rocksketch::command::{self, Reply};
use rocksketch::resp;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// One key's requests: the clients they came from (with how many each sent), and the
/// requests in that order.
type Group = (
    BatchKey,
    Vec<(Token, usize)>,
    Vec<rocksketch::resp::Request>,
);

/// Takes, from each ready client whose whole input is one batchable run, that run;
/// runs the runs of each key together; encodes each client's replies.
pub(crate) fn run(ready: &[Token], clients: &mut FastMap<Token, Client>) {
    let mut groups: Vec<Group> = Vec::new();
    for token in ready {
        let Some(client) = clients.get_mut(token) else {
            continue;
        };
        let Some((key, requests)) = client.take_whole_batch() else {
            continue;
        };
        let at = match groups.iter().position(|(k, _, _)| *k == key) {
            Some(at) => at,
            None => {
                groups.push((key, Vec::new(), Vec::new()));
                groups.len() - 1
            }
        };
        groups[at].1.push((*token, requests.len()));
        groups[at].2.extend(requests);
    }
    for ((db, _, key), members, requests) in groups {
        let Some(first) = members.first().and_then(|(t, _)| clients.get(t)) else {
            continue;
        };
        let shared = first.connection().shared.clone();
        let gate_id = first.connection().id;
        shared
            .stats
            .commands
            .fetch_add(requests.len() as u64, Ordering::Relaxed);
        let ns = shared.store.ns(shared.key_ns(db, &key));
        rocksketch::take_last_lookup();
        let started = Instant::now();
        let replies = catch_unwind(AssertUnwindSafe(|| {
            let _gate = shared.gate.shared(gate_id);
            // Taken while no `CLIENT PAUSE` was in force; one may have begun since.
            if shared.pause.holds_request(&requests[0], true, || false) {
                return Err(None);
            }
            // Routed when the batch was taken, and again under the gate: a slot's
            // hand-over may have paused or moved it since.
            shared.reroute(&requests[0]).map_err(Some)?;
            let mut replies = Vec::with_capacity(requests.len());
            let mut at = 0;
            while at < requests.len() {
                let run = command::batch::run_length(&requests, at);
                let answered = command::batch::execute_run(&ns, &requests[at..at + run]);
                shared.watches.touch_answered(db, &requests[at], &answered);
                replies.extend(answered);
                at += run;
            }
            Ok(replies)
        }));
        let replies = match replies {
            Ok(Err(None)) => {
                // Nothing ran: each client's requests wait for `CLIENT PAUSE` to end.
                for (token, mine) in split(&members, requests) {
                    if let Some(client) = clients.get_mut(&token) {
                        client.connection_mut().hold_for_pause(mine);
                    }
                }
                continue;
            }
            Ok(Err(Some(reply))) if cluster::is_paused(&reply) => {
                // Nothing ran: each client's requests wait for the pause to end.
                hold(clients, &members, requests, reply);
                continue;
            }
            Ok(Err(Some(reply))) => Ok(vec![reply; requests.len()]),
            Ok(Ok(replies)) => Ok(replies),
            Err(panic) => Err(panic),
        };
        let elapsed = started.elapsed();
        let found = rocksketch::take_last_lookup();
        let mut replies = match replies {
            Ok(replies) => replies.into_iter(),
            Err(_) => Vec::new().into_iter(),
        };
        let mut at = 0;
        for (token, count) in members {
            let mine_requests = &requests[at..at + count];
            at += count;
            let Some(client) = clients.get_mut(&token) else {
                continue;
            };
            let mut mine: Vec<Reply> = replies.by_ref().take(count).collect();
            if mine.len() < count {
                // A panic (printed by the hook): answer, and close this connection.
                mine.resize(count, Reply::Error(super::multi::PANICKED.to_owned()));
                client.close_after_output();
            }
            // Each member is charged its share of the batch's time, as a pipelined run
            // of its own would be.
            let share = elapsed.mul_f64(count as f64 / requests.len() as f64);
            let failed = mine.iter().filter(|r| matches!(r, Reply::Error(_))).count();
            client
                .connection()
                .observe(mine_requests, share, failed as u64, found, false);
            let protocol = client.connection().protocol;
            for reply in &mine {
                resp::encode(reply, protocol, client.output_mut());
            }
        }
    }
}

/// Parks each member's requests (none of which ran) while a slot's hand-over pauses
/// writes, or answers them `reply` if it waited long enough already.
fn hold(
    clients: &mut FastMap<Token, Client>,
    members: &[(Token, usize)],
    requests: Vec<rocksketch::resp::Request>,
    reply: Reply,
) {
    for (token, mine) in split(members, requests) {
        let Some(client) = clients.get_mut(&token) else {
            continue;
        };
        if client.connection_mut().may_hold() {
            client.connection_mut().hold(mine);
        } else {
            let protocol = client.connection().protocol;
            for _ in &mine {
                resp::encode(&reply, protocol, client.output_mut());
            }
        }
    }
}

/// The batch's requests given back to the members they came from.
fn split(
    members: &[(Token, usize)],
    mut requests: Vec<rocksketch::resp::Request>,
) -> Vec<(Token, Vec<rocksketch::resp::Request>)> {
    let mut out = Vec::with_capacity(members.len());
    for &(token, count) in members {
        let rest = requests.split_off(count.min(requests.len()));
        out.push((token, std::mem::replace(&mut requests, rest)));
    }
    out
}
