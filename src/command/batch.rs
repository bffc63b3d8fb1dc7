//! Pipelined commands run together: consecutive requests of a command the table marks
//! as batched (`BF.ADD`, `BF.EXISTS`, `CF.ADD`, `CF.ADDNX`, `CF.EXISTS`, `CMS.INCRBY`,
//! `CMS.QUERY`, `TDIGEST.ADD`, `TOPK.ADD`, `TOPK.INCRBY`, `RIBBON.ADD`,
//! `RIBBON.EXISTS`) on one key become one engine call (one lock, one read of the pages,
//! one write batch; for `TDIGEST.ADD`, one operand) whose answers are split back per
//! command. Each command's batch (beside its handler) parses every request with the
//! handler's own parser; the replies are exactly those of running the commands one by
//! one: the engine calls apply their items in order, and a request its parser rejects
//! gets its own error.

use super::args::Args;
use super::table;
use super::{execute, KeyAndList, Reply};
use crate::error::{Error, Result};
use crate::store::Namespace;

/// Requests of one batched command on one key, in order.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    command: &'static str,
    key: &'a [u8],
    requests: &'a [Vec<Vec<u8>>],
}

impl<'a> Run<'a> {
    /// The key every request names.
    pub(crate) fn key(&self) -> &'a [u8] {
        self.key
    }

    /// Each request read by `parse` (the handler's parser).
    pub(crate) fn parse<T>(&self, parse: fn(&mut Args<'a>) -> Result<T>) -> Vec<Result<T>> {
        self.requests
            .iter()
            .map(|request| parse(&mut Args::new(self.command, request)))
            .collect()
    }

    /// Every request read by `parse`, or `None` if `parse` rejects any (the caller then
    /// runs them one by one, each answering its own error).
    pub(crate) fn parse_all<T>(&self, parse: fn(&mut Args<'a>) -> Result<T>) -> Option<Vec<T>> {
        self.requests
            .iter()
            .map(|request| parse(&mut Args::new(self.command, request)).ok())
            .collect()
    }

    /// Every request's one item (`cmd key item`), or `None` if a request is not of
    /// that shape.
    pub(crate) fn items(&self) -> Option<Vec<&'a [u8]>> {
        self.requests
            .iter()
            .map(|request| {
                let (_, item) = super::key_and_item(&mut Args::new(self.command, request)).ok()?;
                Some(item)
            })
            .collect()
    }

    /// For requests of the shape `cmd key arg [arg ...]`: how many arguments each has
    /// after its key, and all of them in order; `None` if a request is not of it.
    pub(crate) fn lists(&self) -> Option<(Vec<usize>, Vec<&'a [u8]>)> {
        let lists = self.parse_all(KeyAndList::parse)?;
        let lens = lists.iter().map(|parsed| parsed.list.len()).collect();
        let all = lists
            .iter()
            .flat_map(|parsed| parsed.list.iter().map(Vec::as_slice))
            .collect();
        Some((lens, all))
    }

    /// Runs every request alone, as it would have run without the batch.
    pub(crate) fn one_by_one(&self, ns: &Namespace) -> Vec<Reply> {
        self.after(ns, 0)
    }

    /// Runs the requests from `done` on alone (a batch that stopped after `done`).
    pub(crate) fn after(&self, ns: &Namespace, done: usize) -> Vec<Reply> {
        let rest = self.requests.get(done..).unwrap_or_default();
        rest.iter().map(|r| execute(ns, r)).collect()
    }

    /// The replies of a run of answered adds from the engine's `(answers, error)`: an
    /// answer per add made, the error for the one that stopped the run, and the rest
    /// run one by one, as they would have been.
    pub(crate) fn answered_adds(
        &self,
        ns: &Namespace,
        (added, error): (Vec<bool>, Option<Error>),
    ) -> Vec<Reply> {
        let done = added.len();
        let mut replies: Vec<Reply> = added.into_iter().map(Reply::Bool).collect();
        if let (Some(err), true) = (error, done < self.requests.len()) {
            replies.push(Reply::from(&err));
            replies.extend(self.after(ns, done + 1));
        }
        replies
    }

    /// A run of `*.EXISTS key item` answered by one `mexists` of all the items.
    pub(crate) fn exists(
        &self,
        ns: &Namespace,
        mexists: impl FnOnce(&[&[u8]]) -> Result<Vec<bool>>,
    ) -> Vec<Reply> {
        let Some(items) = self.items() else {
            return self.one_by_one(ns);
        };
        match mexists(&items) {
            Ok(found) => found.into_iter().map(Reply::Bool).collect(),
            Err(err) => vec![Reply::from(&err); self.requests.len()],
        }
    }

    /// The same reply to every request.
    pub(crate) fn each(&self, reply: Reply) -> Vec<Reply> {
        vec![reply; self.requests.len()]
    }
}

/// The batch a request may join: its lower-case command name and its key. `None` for
/// any other command, or one whose arity alone makes it an error.
pub fn batch_key(request: &[Vec<u8>]) -> Option<(&'static str, &[u8])> {
    table::batch_key(request).map(|(spec, key)| (spec.name, key))
}

/// Runs `requests` in order, batching runs of neighbours of one batched command on one key.
pub fn execute_pipeline(ns: &Namespace, requests: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let mut replies = Vec::with_capacity(requests.len());
    let mut at = 0;
    while at < requests.len() {
        let run = run_length(requests, at);
        replies.extend(execute_run(ns, &requests[at..at + run]));
        at += run;
    }
    replies
}

/// How many requests from `at` share the first one's batch key (at least 1).
pub fn run_length(requests: &[Vec<Vec<u8>>], at: usize) -> usize {
    let Some(first) = requests.get(at) else {
        return 0;
    };
    let Some((spec, key)) = table::batch_key(first) else {
        return 1;
    };
    // The same name as the first's (in any case) is the same row: no lookup per request.
    // Clients send one spelling, so the exact comparison (vectorized) usually decides.
    let same_name = |name: &[u8]| name == first[0] || name.eq_ignore_ascii_case(&first[0]);
    let joins = |r: &&Vec<Vec<u8>>| match r.as_slice() {
        [name, k, ..] => same_name(name) && k == key && spec.arity_ok(r.len()),
        _ => false,
    };
    1 + requests[at + 1..].iter().take_while(joins).count()
}

/// Runs requests that share one batch key (or a single request of any kind).
pub fn execute_run(ns: &Namespace, requests: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let batch = match requests {
        [first, _, ..] => table::batch_key(first),
        _ => None,
    };
    let Some((spec, key)) = batch else {
        return requests.iter().map(|r| execute(ns, r)).collect();
    };
    let run = Run {
        command: spec.name,
        key,
        requests,
    };
    // `batch_key` admits only the rows that have a batch.
    spec.batch
        .map_or_else(|| run.one_by_one(ns), |batch| batch(ns, run))
}
