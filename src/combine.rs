//! Combining: concurrent answered writes to one key go together as one batch.
//!
//! An answered write (`BF.ADD`, `CF.ADDNX`, `CMS.INCRBY`) needs the key's state before
//! its own change, so writes to one key are serialized; done one at a time, each pays
//! the lock, the read and the WAL append alone, and a hot key runs at the speed of one
//! writer. Here a write joins its key's queue instead. If no batch of the queue is in
//! flight, the writer becomes the *leader*: it takes every queued request (its own
//! first) and runs them as one engine call (one lock, one read, one write batch), whose
//! answers are those of running the requests one after another, in queue order. Writers
//! that arrived meanwhile wait; when the leader has answered them, it hands the lead to
//! the oldest request still queued, whose thread runs the next batch. So a leader runs
//! one batch only, and every request is answered by the batch that took it.
//!
//! Linearizable: each batch is applied as a sequence, batches one after another, and a
//! request's answer is given after its batch's write succeeded.

use crate::error::{Error, Result};
use parking_lot::{Condvar, Mutex};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Lanes (queues); keys hashing to one lane share it, and are batched per key.
const LANES: usize = 256;

/// Combines requests of type `R` answered with `Result<T>`.
pub(crate) struct Combiner<R, T> {
    lanes: Box<[Mutex<Lane<R, T>>]>,
}

struct Lane<R, T> {
    /// Whether a leader is running a batch of this lane.
    busy: bool,
    queue: Vec<Entry<R, T>>,
}

struct Entry<R, T> {
    ns: u16,
    key: Vec<u8>,
    request: R,
    ticket: Arc<Ticket<T>>,
}

/// Where a waiting request learns its answer, or that it leads the next batch.
struct Ticket<T> {
    state: Mutex<State<T>>,
    changed: Condvar,
}

enum State<T> {
    Waiting,
    Lead,
    Done(Result<T>),
    /// The answer was taken by the request's thread.
    Taken,
}

impl<T> Ticket<T> {
    fn new() -> Ticket<T> {
        Ticket {
            state: Mutex::new(State::Waiting),
            changed: Condvar::new(),
        }
    }

    fn set(&self, state: State<T>) {
        *self.state.lock() = state;
        self.changed.notify_one();
    }

    /// Blocks until answered (`Some`) or handed the lead (`None`).
    fn wait(&self) -> Option<Result<T>> {
        let mut state = self.state.lock();
        loop {
            match std::mem::replace(&mut *state, State::Taken) {
                State::Waiting | State::Taken => {
                    *state = State::Waiting;
                    self.changed.wait(&mut state);
                }
                State::Lead => {
                    // Our request is still queued: it is answered by the batch we run.
                    *state = State::Waiting;
                    return None;
                }
                State::Done(answer) => return Some(answer),
            }
        }
    }
}

impl<R, T> Default for Combiner<R, T> {
    fn default() -> Combiner<R, T> {
        Combiner {
            lanes: (0..LANES)
                .map(|_| {
                    Mutex::new(Lane {
                        busy: false,
                        queue: Vec::new(),
                    })
                })
                .collect(),
        }
    }
}

impl<R, T> Combiner<R, T> {
    /// Runs `request` on `key`, batched with concurrent requests on the same key.
    ///
    /// `batch` runs requests of one key in order and returns their answers in order: an
    /// answer for each, or fewer when one failed in a way that stops the rest (those it
    /// did not answer are run again, each alone, by the same leader). It is called with
    /// none of the combiner's locks held, and may take the key's lock.
    pub(crate) fn run<F>(&self, ns: u16, key: &[u8], request: R, batch: F) -> Result<T>
    where
        F: Fn(u16, &[u8], &[R]) -> Vec<Result<T>>,
    {
        let ticket = Arc::new(Ticket::new());
        let lane = &self.lanes[lane_of(ns, key)];
        {
            let mut state = lane.lock();
            state.queue.push(Entry {
                ns,
                key: key.to_vec(),
                request,
                ticket: ticket.clone(),
            });
            if state.busy {
                drop(state);
                if let Some(answer) = ticket.wait() {
                    return answer;
                }
                // Handed the lead: the lane stays busy, and our request is still queued.
            } else {
                state.busy = true;
            }
        }
        let taken = std::mem::take(&mut lane.lock().queue);
        let outcome = catch_unwind(AssertUnwindSafe(|| run_batch(taken, &batch)));
        // Whatever happened, pass the lead on (or free the lane), so no one waits forever.
        {
            let mut state = lane.lock();
            match state.queue.first() {
                Some(next) => next.ticket.set(State::Lead),
                None => state.busy = false,
            }
        }
        if let Err(panic) = outcome {
            resume_unwind(panic);
        }
        ticket.wait_done().unwrap_or_else(|| Err(unanswered()))
    }
}

impl<T> Ticket<T> {
    /// The answer, if one was set (the leader reads its own without waiting).
    fn wait_done(&self) -> Option<Result<T>> {
        match std::mem::replace(&mut *self.state.lock(), State::Taken) {
            State::Done(answer) => Some(answer),
            _ => None,
        }
    }
}

/// Answers every entry in `taken`: grouped by key in order of first appearance, each
/// group run as one batch, and what the batch left unanswered run again one by one.
/// An entry left unanswered (by a panic in `batch`) gets an error when its
/// [`Answering`] guard drops.
fn run_batch<R, T, F>(taken: Vec<Entry<R, T>>, batch: &F)
where
    F: Fn(u16, &[u8], &[R]) -> Vec<Result<T>>,
{
    let mut groups: Vec<Group<R, T>> = Vec::new();
    for entry in taken {
        match groups
            .iter_mut()
            .find(|g| g.ns == entry.ns && g.key == entry.key)
        {
            Some(group) => {
                group.requests.push(entry.request);
                group.answering.0.push(entry.ticket);
            }
            None => groups.push(Group {
                ns: entry.ns,
                key: entry.key,
                requests: vec![entry.request],
                answering: Answering(vec![entry.ticket]),
            }),
        }
    }
    for Group {
        ns,
        key,
        requests,
        answering,
    } in groups
    {
        let answers = batch(ns, &key, &requests);
        let mut done = answers.len().min(requests.len());
        for (at, answer) in answers.into_iter().take(done).enumerate() {
            answering.answer(at, answer);
        }
        if done == 0 {
            // A call answers at least one request: the loop below always moves on.
            answering.answer(0, Err(unanswered()));
            done = 1;
        }
        for at in done..requests.len() {
            let answer = batch(ns, &key, &requests[at..=at]).into_iter().next();
            answering.answer(at, answer.unwrap_or_else(|| Err(unanswered())));
        }
    }
}

fn unanswered() -> Error {
    Error::Storage("a combined write went unanswered".to_owned())
}

/// The requests of one key in a batch, in order, and their tickets.
struct Group<R, T> {
    ns: u16,
    key: Vec<u8>,
    requests: Vec<R>,
    answering: Answering<T>,
}

/// The tickets of one key's group; any not answered when it drops get an error.
struct Answering<T>(Vec<Arc<Ticket<T>>>);

impl<T> Answering<T> {
    fn answer(&self, at: usize, answer: Result<T>) {
        if let Some(ticket) = self.0.get(at) {
            ticket.set(State::Done(answer));
        }
    }
}

impl<T> Drop for Answering<T> {
    fn drop(&mut self) {
        for ticket in &self.0 {
            let mut state = ticket.state.lock();
            if matches!(*state, State::Waiting) {
                *state = State::Done(Err(Error::Storage(
                    "the combined write failed unexpectedly".to_owned(),
                )));
                // (A request whose thread took its answer is Taken, not Waiting.)
                ticket.changed.notify_one();
            }
        }
    }
}

fn lane_of(ns: u16, key: &[u8]) -> usize {
    let h = rocksketch_merge::hash::murmur64a(key, u64::from(ns) ^ 0x9e37_79b9);
    (h % LANES as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::Combiner;
    use crate::error::Error;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};

    #[test]
    fn batches_answer_in_order_and_a_panic_leaves_no_one_waiting() {
        let combiner: Arc<Combiner<u32, u32>> = Arc::default();
        let calls = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8u32)
            .map(|t| {
                let (combiner, calls, barrier) = (combiner.clone(), calls.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    (0..200u32)
                        .map(|i| {
                            let request = t * 1000 + i;
                            let outcome =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    combiner.run(0, b"k", request, |_, _, requests| {
                                        calls.fetch_add(1, Ordering::Relaxed);
                                        if requests.contains(&7005) {
                                            panic!("a batch panicked");
                                        }
                                        // Answers all but the last of a run of more than 2;
                                        // the combiner runs that one again alone.
                                        let n = if requests.len() > 2 {
                                            requests.len() - 1
                                        } else {
                                            requests.len()
                                        };
                                        requests[..n].iter().map(|r| Ok(r * 2)).collect()
                                    })
                                }));
                            (request, outcome)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut failed = 0;
        for thread in threads {
            for (request, outcome) in thread.join().unwrap() {
                match outcome {
                    Ok(Ok(answer)) => assert_eq!(answer, request * 2),
                    // A request batched with 7005 fails, or 7005's own thread panics.
                    Ok(Err(Error::Storage(_))) | Err(_) => failed += 1,
                    Ok(Err(other)) => panic!("unexpected {other}"),
                }
            }
        }
        assert!((1..=8).contains(&failed), "{failed} requests failed");
        assert!(calls.load(Ordering::Relaxed) <= 1600 + 8);
        // The lane is free again.
        assert_eq!(
            combiner
                .run(0, b"k", 1, |_, _, r| vec![Ok(r[0] + 1)])
                .unwrap(),
            2
        );
    }
}
