//! Pipelined commands run together: consecutive `BF.ADD`, `BF.EXISTS`, `CF.ADD`,
//! `CF.ADDNX`, `CF.EXISTS`, `CMS.INCRBY`, `CMS.QUERY`, `TDIGEST.ADD`, `TOPK.ADD`,
//! `TOPK.INCRBY`, `RIBBON.ADD` and `RIBBON.EXISTS` on one key become one
//! engine call (one lock, one read of the pages, one write batch; for `TDIGEST.ADD`, one
//! operand) whose answers are split back per command. The replies are exactly those
//! of running the commands one by one: the engine calls apply their items in order.

use super::parse::parse_i64;
use super::{execute, Reply};
use crate::error::{CmsError, Error};
use crate::store::Namespace;

/// Commands that may run as one batch with their neighbours on the same key.
const BATCHABLE: [&str; 12] = [
    "bf.add",
    "bf.exists",
    "cf.add",
    "cf.addnx",
    "cf.exists",
    "cms.incrby",
    "cms.query",
    "tdigest.add",
    "topk.add",
    "topk.incrby",
    "ribbon.add",
    "ribbon.exists",
];

/// The batch a request may join: its lower-case command name and its key. `None` for
/// any other command, or one whose arity alone makes it an error.
pub fn batch_key(args: &[Vec<u8>]) -> Option<(&'static str, &[u8])> {
    let name = args.first()?;
    let name = BATCHABLE
        .into_iter()
        .find(|b| name.eq_ignore_ascii_case(b.as_bytes()))?;
    let arity_ok = match name {
        "bf.add" | "bf.exists" | "cf.add" | "cf.addnx" | "cf.exists" | "ribbon.exists" => {
            args.len() == 3
        }
        "cms.incrby" | "topk.incrby" => args.len() >= 4 && args.len().is_multiple_of(2),
        _ => args.len() >= 3,
    };
    arity_ok.then(|| (name, args[1].as_slice()))
}

/// Runs `requests` in order, batching runs of neighbours with the same [`batch_key`].
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
    let Some(key) = batch_key(first) else {
        return 1;
    };
    1 + requests[at + 1..]
        .iter()
        .take_while(|r| batch_key(r) == Some(key))
        .count()
}

/// Runs requests that share one batch key (or a single request of any kind).
pub fn execute_run(ns: &Namespace, run: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let Some((name, key)) = run.first().and_then(|r| batch_key(r)) else {
        return run.iter().map(|r| execute(ns, r)).collect();
    };
    if run.len() == 1 {
        return vec![execute(ns, &run[0])];
    }
    match name {
        "bf.add" => bf_add(ns, key, run),
        "bf.exists" => exists_run(run, |items| ns.bloom(key).mexists(items)),
        "cf.add" => cf_add(ns, key, run),
        "cf.addnx" => cf_add_nx(ns, key, run),
        "cf.exists" => exists_run(run, |items| ns.cuckoo(key).mexists(items)),
        "cms.incrby" => cms_incrby(ns, key, run),
        "tdigest.add" => tdigest_add(ns, key, run),
        "topk.add" | "topk.incrby" => topk_add(ns, key, run),
        "ribbon.add" => ribbon_add(ns, key, run),
        "ribbon.exists" => exists_run(run, |items| ns.ribbon(key).mexists(items)),
        _ => cms_query(ns, key, run),
    }
}

fn bf_add(ns: &Namespace, key: &[u8], run: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let items: Vec<&[u8]> = run.iter().map(|r| r[2].as_slice()).collect();
    answered_adds(ns, run, ns.bloom(key).madd(&items))
}

/// The replies of a run of answered adds from the engine's `(answers, error)`: an
/// answer per add made, the error for the one that stopped the run, and the rest run
/// one by one, as they would have been.
fn answered_adds(
    ns: &Namespace,
    run: &[Vec<Vec<u8>>],
    (added, error): (Vec<bool>, Option<Error>),
) -> Vec<Reply> {
    let done = added.len();
    let mut replies: Vec<Reply> = added.into_iter().map(Reply::Bool).collect();
    if let (Some(err), true) = (error, done < run.len()) {
        replies.push(Reply::from(&err));
        replies.extend(rest_after(run, done).iter().map(|r| execute(ns, r)));
    }
    replies
}

/// The requests after the one that failed, `done` having succeeded before it.
fn rest_after(run: &[Vec<Vec<u8>>], done: usize) -> &[Vec<Vec<u8>>] {
    run.get(done + 1..).unwrap_or_default()
}

/// A run of `*.EXISTS` (`key item` each) answered by one `mexists` of all the items.
fn exists_run(
    run: &[Vec<Vec<u8>>],
    mexists: impl FnOnce(&[&[u8]]) -> crate::Result<Vec<bool>>,
) -> Vec<Reply> {
    let items: Vec<&[u8]> = run.iter().map(|r| r[2].as_slice()).collect();
    match mexists(&items) {
        Ok(found) => found.into_iter().map(Reply::Bool).collect(),
        Err(err) => vec![Reply::from(&err); run.len()],
    }
}

/// A run of `RIBBON.ADD`s: one blind staging of all their items. If it fails, each
/// runs alone, so that one command's error is its own.
fn ribbon_add(ns: &Namespace, key: &[u8], run: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let items: Vec<&[u8]> = run
        .iter()
        .flat_map(|r| &r[2..])
        .map(Vec::as_slice)
        .collect();
    match ns.ribbon(key).add(&items) {
        Ok(_) => run.iter().map(|r| Reply::Int(r.len() as i64 - 2)).collect(),
        Err(_) => run.iter().map(|r| execute(ns, r)).collect(),
    }
}

fn cf_add(ns: &Namespace, key: &[u8], run: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let items: Vec<&[u8]> = run.iter().map(|r| r[2].as_slice()).collect();
    let (added, error) = ns.cuckoo(key).add_many(&items);
    let mut replies = vec![Reply::Bool(true); added];
    if let (Some(err), true) = (error, added < run.len()) {
        replies.push(Reply::from(&err));
        // Whatever stopped the run answers the rest one by one, as it would have.
        replies.extend(rest_after(run, added).iter().map(|r| execute(ns, r)));
    }
    replies
}

fn cf_add_nx(ns: &Namespace, key: &[u8], run: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let items: Vec<&[u8]> = run.iter().map(|r| r[2].as_slice()).collect();
    answered_adds(ns, run, ns.cuckoo(key).add_nx_many(&items))
}

fn cms_query(ns: &Namespace, key: &[u8], run: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let items: Vec<&[u8]> = run
        .iter()
        .flat_map(|r| r[2..].iter().map(Vec::as_slice))
        .collect();
    match ns.cms(key).query(&items) {
        Ok(estimates) => {
            let mut estimates = estimates.into_iter();
            run.iter()
                .map(|r| {
                    Reply::Array(
                        estimates
                            .by_ref()
                            .take(r.len() - 2)
                            .map(|e| Reply::Int(i64::from(e)))
                            .collect(),
                    )
                })
                .collect()
        }
        Err(err) => vec![Reply::from(&err); run.len()],
    }
}

/// One `CMS.INCRBY`'s (item, increment) pairs.
type Pairs<'a> = Vec<(&'a [u8], u64)>;

fn cms_incrby(ns: &Namespace, key: &[u8], run: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let cms = ns.cms(key);
    // A missing key or another type answers before any number is parsed.
    if let Err(err) = cms.dims() {
        return vec![Reply::from(&err); run.len()];
    }
    // Each command's pairs, or the error that rejects the command as a whole.
    let parsed: Vec<Result<Pairs, Error>> = run
        .iter()
        .map(|r| {
            r[2..]
                .chunks_exact(2)
                .map(|pair| {
                    let incr = parse_i64(&pair[1]).ok_or(CmsError::CannotParseNumber)?;
                    let incr = u64::try_from(incr).map_err(|_| CmsError::NumberNegative)?;
                    Ok((pair[0].as_slice(), incr))
                })
                .collect()
        })
        .collect();
    let pairs: Vec<(&[u8], u64)> = parsed
        .iter()
        .filter_map(|p| p.as_ref().ok())
        .flatten()
        .copied()
        .collect();
    let estimates = match cms.incr_by_with_estimates(&pairs) {
        Ok(estimates) => estimates,
        Err(err) => return vec![Reply::from(&err); run.len()],
    };
    let mut estimates = estimates.into_iter();
    parsed
        .iter()
        .map(|p| match p {
            Err(err) => Reply::from(err),
            Ok(pairs) => Reply::Array(
                estimates
                    .by_ref()
                    .take(pairs.len())
                    .map(|e| match e {
                        u32::MAX => Reply::Error(CmsError::IncrbyOverflow.text().to_owned()),
                        e => Reply::Int(i64::from(e)),
                    })
                    .collect(),
            ),
        })
        .collect()
}

fn tdigest_add(ns: &Namespace, key: &[u8], run: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let digest = ns.tdigest(key);
    // A missing key or another type answers before any value is parsed.
    if let Err(err) = digest.compression() {
        return vec![Reply::from(&err); run.len()];
    }
    let parsed: Vec<Result<Vec<f64>, Error>> = run
        .iter()
        .map(|r| super::tdigest::values(&r[2..]))
        .collect();
    let values: Vec<f64> = parsed.iter().flatten().flatten().copied().collect();
    if let Err(err) = digest.add(&values) {
        return vec![Reply::from(&err); run.len()];
    }
    parsed
        .iter()
        .map(|p| p.as_ref().map_or_else(Reply::from, |_| Reply::ok()))
        .collect()
}

/// A run of `TOPK.ADD`s or `TOPK.INCRBY`s: every command's pairs (an INCRBY's up to its
/// first bad increment) in one engine call, the replies split back per command.
fn topk_add(ns: &Namespace, key: &[u8], run: &[Vec<Vec<u8>>]) -> Vec<Reply> {
    let top = ns.topk(key);
    // A missing key or another type answers before any argument is read.
    if let Err(err) = top.info() {
        return vec![Reply::from(&err); run.len()];
    }
    let adds = run[0][0].eq_ignore_ascii_case(b"topk.add");
    let per_command: Vec<super::topk::Pairs> = run
        .iter()
        .map(|r| match adds {
            true => (r[2..].iter().map(|i| (i.as_slice(), 1)).collect(), None),
            false => super::topk::pairs(&r[2..]),
        })
        .collect();
    let pairs: Vec<(&[u8], u32)> = per_command
        .iter()
        .flat_map(|(p, _)| p.iter().copied())
        .collect();
    let Ok(expelled) = top.incr_by(&pairs) else {
        // Nothing was written: the commands answer one by one, as they would have.
        return run.iter().map(|r| execute(ns, r)).collect();
    };
    let mut expelled = expelled.into_iter();
    per_command
        .iter()
        .map(|(pairs, bad)| {
            let mut replies: Vec<Reply> = expelled
                .by_ref()
                .take(pairs.len())
                .map(super::topk::expelled)
                .collect();
            if let Some(err) = bad {
                replies.push(Reply::Error(err.text().to_owned()));
            }
            Reply::Array(replies)
        })
        .collect()
}
