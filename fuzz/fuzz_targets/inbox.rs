//! The connection inbox as the host drives it: bytes arrive in pieces the fuzzer cuts,
//! and between pieces the two consumers take requests in an order the fuzzer picks: the
//! cross-client batching pass (`take_whole_if`, with a batch rule like the host's: one
//! command on one key) and the normal path (`parse` then `take`). Whatever the cuts and
//! the interleaving, the requests taken, in order, are exactly those the whole input
//! parses to in one go, and a protocol error ends them at the same request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_resp::{Inbox, Limits, Request, RequestParser};

const LIMITS: Limits = Limits {
    max_bulk: 1 << 10,
    max_args: 64,
    max_inline: 1 << 10,
};

/// Every request of `wire` parsed in one go, and whether a protocol error ended them.
fn whole(wire: &[u8]) -> (Vec<Request>, bool) {
    let mut parser = RequestParser::new(LIMITS);
    let (mut at, mut got) = (0, Vec::new());
    loop {
        match parser.next(&wire[at..]) {
            Ok(Some((args, used))) => {
                at += used;
                if !args.is_empty() {
                    got.push(args);
                }
            }
            Ok(None) => return (got, false),
            Err(_) => return (got, true),
        }
    }
}

/// The host's batch rule: every request names the first one's command and key.
fn one_batch(queue: &[Request]) -> bool {
    let key = |r: &Request| (r[0].to_ascii_lowercase(), r.get(1).cloned());
    let first = key(&queue[0]);
    first.1.is_some() && queue.iter().all(|r| key(r) == first)
}

/// One consumer's step, by `action`.
fn drain(inbox: &mut Inbox, got: &mut Vec<Request>, action: u8) {
    match action % 4 {
        0 => {
            if let Some(taken) = inbox.take_whole_if(one_batch) {
                got.extend(taken);
            }
        }
        1 => {
            inbox.parse(1 + usize::from(action >> 4));
            got.extend(inbox.take(1 + usize::from(action >> 2) % 8));
        }
        2 => inbox.parse(512),
        _ => got.extend(inbox.take(512)),
    }
}

fuzz_target!(|data: &[u8]| {
    // The first bytes steer: a piece size and an action each; the rest is the wire.
    if data.len() < 16 {
        return;
    }
    let (steer, wire) = data.split_at(16);
    let (expected, broken) = whole(wire);

    let mut inbox = Inbox::new(LIMITS);
    let mut got: Vec<Request> = Vec::new();
    let (mut fed, mut step) = (0, 0);
    while fed < wire.len() {
        let control = steer[step % steer.len()];
        step += 1;
        let size = 1 + usize::from(control % 32) * usize::from(control % 3 + 1);
        let end = (fed + size).min(wire.len());
        inbox.extend(&wire[fed..end]);
        fed = end;
        drain(&mut inbox, &mut got, control.rotate_left(3));
        drain(&mut inbox, &mut got, control.rotate_left(5));
        assert!(got.len() <= expected.len());
        assert_eq!(
            got[..],
            expected[..got.len()],
            "taken out of order or changed"
        );
    }
    // What the normal path then takes, to the end.
    loop {
        inbox.parse(512);
        let run = inbox.take(512);
        if run.is_empty() {
            break;
        }
        got.extend(run);
    }
    assert_eq!(got, expected);
    assert_eq!(inbox.error().is_some(), broken);
    if !broken {
        // Only a request still arriving may be left.
        assert_eq!(inbox.queued(), 0);
    }
});
