//! The table of the engine's commands: name, arity, flags and key positions (what
//! `COMMAND` reports), the handler, and for the commands whose pipelined neighbours on
//! one key run as one engine call, the batch that runs them. [`execute`](super::execute)
//! and batching read it; a host adds its own commands to these rows in a [`Table`] of
//! its own handlers (the RESP host's connection, keyspace and server commands), and its
//! dispatch, `COMMAND`, `MULTI`'s checks and statistics read that one combined view.
//! Nothing else knows a command's arity.

use super::args::Args;
use super::batch::Run;
use super::{bloom, cms, cuckoo, hll, ribbon, tdigest, topk, Reply};
use crate::error::Result;
use crate::fast::FastMap;
use crate::store::Namespace;
use std::sync::LazyLock;

/// A RedisBloom command over a namespace.
pub type SketchFn = fn(&Namespace, &mut Args) -> Result<Reply>;

/// Runs a run of requests of one batchable command on one key (see [`super::batch`]).
pub type BatchFn = fn(&Namespace, Run) -> Vec<Reply>;

/// A command's row, with Redis's arity convention: `n` exactly n arguments (the name
/// included), `-n` at least n. `H` is what runs it: a [`SketchFn`] in the engine's
/// rows, a host's own handler type in a host's table.
#[derive(Clone, Copy)]
pub struct Spec<H> {
    /// The lower-case name.
    pub name: &'static str,
    /// The arity, as above.
    pub arity: i64,
    /// Redis's command flags (`write`, `readonly`, `fast`, ...).
    pub flags: &'static [&'static str],
    /// First key, last key (-1: the last argument) and step; 0s for none.
    pub keys: (i64, i64, i64),
    /// What runs the command.
    pub handler: H,
    /// Runs pipelined neighbours on one key as one call, for the commands that batch.
    pub batch: Option<BatchFn>,
    /// For the merges (`CMS.MERGE`, `TDIGEST.MERGE`): their sources, as many keys as
    /// the argument after the destination says (Redis's "movable keys"; `COMMAND`
    /// reports the destination alone, as RedisBloom does).
    pub counted_sources: bool,
}

impl<H> Spec<H> {
    /// A row without a batch.
    pub const fn new(
        name: &'static str,
        arity: i64,
        flags: &'static [&'static str],
        keys: (i64, i64, i64),
        handler: H,
    ) -> Spec<H> {
        Spec {
            name,
            arity,
            flags,
            keys,
            handler,
            batch: None,
            counted_sources: false,
        }
    }

    /// The same row run by `handler` (a host's handler wrapping the engine's).
    pub fn with_handler<G>(&self, handler: G) -> Spec<G> {
        Spec {
            name: self.name,
            arity: self.arity,
            flags: self.flags,
            keys: self.keys,
            handler,
            batch: self.batch,
            counted_sources: self.counted_sources,
        }
    }

    /// Whether `argc` arguments (the name included) fit this command's arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i64;
        match self.arity >= 0 {
            true => argc == self.arity,
            false => argc >= -self.arity,
        }
    }

    /// Whether the command reads a key without writing it (Redis counts its lookups as
    /// keyspace hits and misses).
    pub fn is_key_read(&self) -> bool {
        self.keys.0 > 0 && self.flags.contains(&"readonly")
    }

    /// The keys `request` names, by the row's key positions.
    pub fn keys_of<'r>(&self, request: &'r [Vec<u8>]) -> impl Iterator<Item = &'r [u8]> {
        let (first, last, step) = self.keys;
        let len = request.len() as i64;
        let last = if last < 0 {
            len + last
        } else {
            last.min(len - 1)
        };
        // No keys (first 0), or none in this request: an empty range.
        let (from, to) = if first > 0 && step > 0 {
            (first, last)
        } else {
            (1, 0)
        };
        (from.max(1)..=to)
            .step_by(step.max(1) as usize)
            .map(move |at| request[at as usize].as_slice())
    }
}

impl<H> Spec<H> {
    /// Every key `request` names: [`Spec::keys_of`] and, for the merges, their counted
    /// sources (what a cluster routes by).
    pub fn all_keys<'r>(&self, request: &'r [Vec<u8>]) -> impl Iterator<Item = &'r [u8]> {
        let sources: &[Vec<u8>] = match self.counted_sources {
            true => {
                let count = request.get(2).and_then(|n| std::str::from_utf8(n).ok());
                let count = count.and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
                request.get(3..).map_or(&[], |s| &s[..count.min(s.len())])
            }
            false => &[],
        };
        self.keys_of(request)
            .chain(sources.iter().map(Vec::as_slice))
    }
}

impl Spec<SketchFn> {
    /// The sources of a merge follow their count ([`Spec::all_keys`]).
    const fn with_counted_sources(self) -> Spec<SketchFn> {
        Spec {
            counted_sources: true,
            ..self
        }
    }

    /// Pipelined neighbours of this command on one key run as one batch.
    const fn batched(self, batch: BatchFn) -> Spec<SketchFn> {
        Spec {
            batch: Some(batch),
            ..self
        }
    }
}

/// Rows found by name in any case, without allocating.
pub struct Table<H> {
    rows: Vec<Spec<H>>,
    index: FastMap<&'static [u8], usize>,
}

impl<H> Table<H> {
    /// A table of `rows`, in this order (`COMMAND`'s and `INFO commandstats`' order).
    /// Names must be lower case and unique.
    pub fn new(rows: impl IntoIterator<Item = Spec<H>>) -> Table<H> {
        let rows: Vec<Spec<H>> = rows.into_iter().collect();
        let index = rows
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_bytes(), i))
            .collect();
        Table { rows, index }
    }

    /// Every row, in order.
    pub fn rows(&self) -> &[Spec<H>] {
        &self.rows
    }

    /// The position of the command a request names, in any case, without allocating.
    pub fn request_index(&self, name: &[u8]) -> Option<usize> {
        let mut lower = [0u8; 32];
        let lower = lower.get_mut(..name.len())?;
        for (l, c) in lower.iter_mut().zip(name) {
            *l = c.to_ascii_lowercase();
        }
        self.index.get(&*lower).copied()
    }

    /// The row of the command a request names, in any case.
    pub fn lookup(&self, name: &[u8]) -> Option<&Spec<H>> {
        self.request_index(name).map(|i| &self.rows[i])
    }
}

/// An engine command: its key is its first argument.
const fn sketch(name: &'static str, arity: i64, flags: Flags, run: SketchFn) -> Spec<SketchFn> {
    Spec::new(name, arity, flags, (1, 1, 1), run)
}

/// An engine command whose keys are at other positions (first, last, step).
const fn keyed(
    name: &'static str,
    arity: i64,
    flags: Flags,
    keys: (i64, i64, i64),
    run: SketchFn,
) -> Spec<SketchFn> {
    Spec::new(name, arity, flags, keys, run)
}

type Flags = &'static [&'static str];

const READ: Flags = &["readonly", "fast"];
const WRITE: Flags = &["write", "denyoom"];
const WRITE_FAST: Flags = &["write", "denyoom", "fast"];

/// Every RedisBloom (and Ribbon) command the engine answers.
pub static SKETCHES: LazyLock<Table<SketchFn>> =
    LazyLock::new(|| Table::new(SKETCH_ROWS.iter().copied()));

const SKETCH_ROWS: &[Spec<SketchFn>] = &[
    sketch("cms.initbydim", -4, WRITE, cms::init_by_dim),
    sketch("cms.initbyprob", -4, WRITE, cms::init_by_prob),
    sketch("cms.incrby", -4, WRITE, cms::incr_by).batched(cms::incr_by_run),
    sketch("cms.query", -3, READ, cms::query).batched(cms::query_run),
    sketch("cms.merge", -4, WRITE, cms::merge).with_counted_sources(),
    sketch("cms.info", 2, READ, cms::info),
    sketch("cf.reserve", -3, WRITE, cuckoo::reserve),
    sketch("cf.add", 3, WRITE, cuckoo::add).batched(cuckoo::add_run),
    sketch("cf.addnx", 3, WRITE, cuckoo::add_nx).batched(cuckoo::add_nx_run),
    sketch("cf.insert", -3, WRITE, cuckoo::insert),
    sketch("cf.insertnx", -4, WRITE, cuckoo::insert_nx),
    sketch("cf.exists", 3, READ, cuckoo::exists).batched(cuckoo::exists_run),
    sketch("cf.mexists", -3, READ, cuckoo::mexists),
    sketch("cf.count", 3, READ, cuckoo::count),
    sketch("cf.del", 3, WRITE, cuckoo::del),
    sketch("cf.delete", 3, WRITE, cuckoo::del),
    sketch("cf.info", 2, READ, cuckoo::info),
    sketch("cf.stats", 2, READ, cuckoo::info),
    sketch("cf.scandump", 3, READ, cuckoo::scandump),
    sketch("cf.loadchunk", 4, WRITE, cuckoo::loadchunk),
    sketch("bf.reserve", -4, WRITE, bloom::reserve),
    sketch("bf.add", 3, WRITE, bloom::add).batched(bloom::add_run),
    sketch("bf.madd", -3, WRITE, bloom::madd),
    sketch("bf.insert", -4, WRITE, bloom::insert),
    sketch("bf.exists", 3, READ, bloom::exists).batched(bloom::exists_run),
    sketch("bf.mexists", -3, READ, bloom::mexists),
    sketch("bf.info", -2, READ, bloom::info),
    sketch("bf.card", 2, READ, bloom::card),
    sketch("bf.scandump", 3, READ, bloom::scandump),
    sketch("bf.loadchunk", 4, WRITE, bloom::loadchunk),
    sketch("bf.debug", 2, READ, bloom::debug),
    sketch("cf.debug", 2, READ, cuckoo::debug),
    sketch("tdigest.create", -2, WRITE, tdigest::create),
    sketch("tdigest.add", -3, WRITE, tdigest::add).batched(tdigest::add_run),
    sketch("tdigest.reset", 2, WRITE, tdigest::reset),
    sketch("tdigest.merge", -4, WRITE, tdigest::merge).with_counted_sources(),
    sketch("tdigest.min", 2, READ, tdigest::min),
    sketch("tdigest.max", 2, READ, tdigest::max),
    sketch("tdigest.quantile", -3, READ, tdigest::quantile),
    sketch("tdigest.cdf", -3, READ, tdigest::cdf),
    sketch("tdigest.rank", -3, READ, tdigest::rank),
    sketch("tdigest.revrank", -3, READ, tdigest::rank),
    sketch("tdigest.byrank", -3, READ, tdigest::by_rank),
    sketch("tdigest.byrevrank", -3, READ, tdigest::by_rank),
    sketch("tdigest.trimmed_mean", 4, READ, tdigest::trimmed_mean),
    sketch("tdigest.info", 2, READ, tdigest::info),
    sketch("topk.reserve", -3, WRITE, topk::reserve),
    sketch("topk.add", -3, WRITE, topk::add).batched(topk::add_run),
    sketch("topk.incrby", -4, WRITE, topk::add).batched(topk::add_run),
    sketch("topk.query", -3, READ, topk::query),
    sketch("topk.count", -3, READ, topk::count),
    sketch("topk.list", -2, READ, topk::list),
    sketch("topk.info", 2, READ, topk::info),
    sketch("ribbon.reserve", 3, WRITE, ribbon::reserve),
    sketch("ribbon.add", -3, WRITE, ribbon::add).batched(ribbon::add_run),
    sketch("ribbon.build", 2, WRITE, ribbon::build),
    sketch("ribbon.exists", 3, READ, ribbon::exists).batched(ribbon::exists_run),
    sketch("ribbon.mexists", -3, READ, ribbon::mexists),
    sketch("ribbon.info", -2, READ, ribbon::info),
    sketch("ribbon.scandump", 3, READ, ribbon::scandump),
    sketch("ribbon.loadchunk", 4, WRITE, ribbon::loadchunk),
    sketch("pfadd", -2, WRITE_FAST, hll::pfadd).batched(hll::pfadd_run),
    keyed("pfcount", -2, &["readonly"], EVERY_KEY, hll::pfcount).batched(hll::pfcount_run),
    keyed("pfmerge", -2, WRITE, EVERY_KEY, hll::pfmerge),
    keyed(
        "pfdebug",
        3,
        &["write", "denyoom", "admin"],
        (2, 2, 1),
        hll::pfdebug,
    ),
    sketch("get", 2, READ, hll::get),
    sketch("set", -3, WRITE, hll::set),
];

/// Every argument is a key (`PFCOUNT`, `PFMERGE`).
const EVERY_KEY: (i64, i64, i64) = (1, -1, 1);

/// The batch a request may join: its command and its key. `None` for a command that
/// does not batch, or whose arity alone makes it an error.
pub fn batch_key(request: &[Vec<u8>]) -> Option<(&'static Spec<SketchFn>, &[u8])> {
    let spec = SKETCHES.lookup(request.first()?)?;
    let key = request.get(1)?;
    (spec.batch.is_some() && spec.arity_ok(request.len())).then_some((spec, key.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_lower_case_and_found_in_any_case() {
        let rows = SKETCHES.rows();
        for (i, spec) in rows.iter().enumerate() {
            assert_eq!(spec.name, spec.name.to_ascii_lowercase());
            assert_eq!(
                SKETCHES.request_index(spec.name.to_uppercase().as_bytes()),
                Some(i)
            );
        }
        let names: std::collections::HashSet<_> = rows.iter().map(|s| s.name).collect();
        assert_eq!(names.len(), rows.len());
        assert!(SKETCHES.lookup(b"no.such").is_none());
        assert!(SKETCHES.lookup(&[b'a'; 40]).is_none());
    }

    #[test]
    fn batches_join_only_commands_of_a_valid_arity() {
        let req = |words: &[&str]| -> Vec<Vec<u8>> {
            words.iter().map(|w| w.as_bytes().to_vec()).collect()
        };
        let add = req(&["BF.ADD", "k", "x"]);
        assert_eq!(
            batch_key(&add).map(|(s, k)| (s.name, k)),
            Some(("bf.add", &b"k"[..]))
        );
        assert!(batch_key(&req(&["BF.ADD", "k"])).is_none());
        assert!(batch_key(&req(&["BF.ADD", "k", "x", "y"])).is_none());
        assert!(batch_key(&req(&["BF.MADD", "k", "x"])).is_none());
        assert!(batch_key(&req(&["CMS.INCRBY", "k", "x", "1"])).is_some());
    }

    #[test]
    fn the_merges_name_their_counted_sources() {
        let req = |words: &[&str]| -> Vec<Vec<u8>> {
            words.iter().map(|w| w.as_bytes().to_vec()).collect()
        };
        let keys = |words: &[&str]| -> Vec<Vec<u8>> {
            let request = req(words);
            let spec = SKETCHES.lookup(&request[0]).unwrap();
            spec.all_keys(&request).map(<[u8]>::to_vec).collect()
        };
        let merge = ["CMS.MERGE", "d", "2", "a", "b", "WEIGHTS", "1", "2"];
        assert_eq!(keys(&merge), req(&["d", "a", "b"]));
        let merge = ["TDIGEST.MERGE", "d", "1", "a", "COMPRESSION", "9"];
        assert_eq!(keys(&merge), req(&["d", "a"]));
        // A count past the arguments, or none: what is there.
        assert_eq!(keys(&["CMS.MERGE", "d", "5", "a"]), req(&["d", "a"]));
        assert_eq!(keys(&["CMS.MERGE", "d", "x", "a"]), req(&["d"]));
        assert_eq!(keys(&["PFCOUNT", "a", "b"]), req(&["a", "b"]));
        assert_eq!(keys(&["BF.ADD", "k", "2", "x"]), req(&["k"]));
    }
}
