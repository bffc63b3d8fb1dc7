//! Redis's HyperLogLog commands (`PFADD`, `PFCOUNT`, `PFMERGE`, `PFDEBUG`), and `GET` /
//! `SET` of a HyperLogLog as the `HYLL` string Redis stores (this store keeps no other
//! strings).

use super::args::Args;
use super::batch::Run;
use super::{reply, Reply};
use crate::error::{Error, HllError, Result};
use crate::store::Namespace;
use rocksketch_merge::hll::redis;

/// `PFADD key [element ...]`: the key and its elements (none creates the key).
fn key_and_elements<'a>(args: &mut Args<'a>) -> Result<(&'a [u8], &'a [Vec<u8>])> {
    let key = args.next_key()?;
    Ok((key, args.rest()))
}

pub(super) fn pfadd(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, elements) = key_and_elements(args)?;
    Ok(changed(ns.hll(key).add(elements)?))
}

/// A run of `PFADD`s of one key: one engine call, each answered as if run alone.
pub(super) fn pfadd_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let Some(adds) = run.parse_all(key_and_elements) else {
        return run.one_by_one(ns);
    };
    let lists: Vec<&[Vec<u8>]> = adds.iter().map(|(_, elements)| *elements).collect();
    match ns.hll(run.key()).add_each(&lists) {
        Ok(answers) => answers.into_iter().map(changed).collect(),
        Err(err) => run.each(Reply::from(&err)),
    }
}

fn changed(changed: bool) -> Reply {
    Reply::Int(i64::from(changed))
}

/// `PFCOUNT key [key ...]`: one key's estimate, or the union's.
pub(super) fn pfcount(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let keys = args.rest_nonempty()?;
    let count = match keys {
        [key] => ns.hll(key).count()?,
        keys => ns.hll_count(keys)?,
    };
    Ok(Reply::Int(i64::try_from(count).unwrap_or(i64::MAX)))
}

/// A run of `PFCOUNT key`s of one key: one read answers them all (a run where any
/// names more keys runs one by one).
pub(super) fn pfcount_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let one_key = |args: &mut Args| {
        args.next_key()?;
        args.finish()
    };
    if run.parse_all(one_key).is_none() {
        return run.one_by_one(ns);
    }
    let count = ns.hll(run.key()).count();
    run.each(reply(
        count.map(|c| Reply::Int(i64::try_from(c).unwrap_or(i64::MAX))),
    ))
}

/// `PFMERGE destkey [sourcekey ...]`.
pub(super) fn pfmerge(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let dest = args.next_key()?;
    ns.hll(dest).merge_from(args.rest())?;
    Ok(Reply::ok())
}

/// `PFDEBUG GETREG|DECODE|ENCODING key`, checked in Redis's order: the key must exist
/// and be a HyperLogLog before the subcommand is looked at.
pub(super) fn pfdebug(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let sub = args.next_arg()?;
    let key = args.next_key()?;
    args.finish()?;
    let regs = ns.hll(key).registers()?.ok_or(HllError::NoSuchKey)?;
    let lower = sub.to_ascii_lowercase();
    match lower.as_slice() {
        b"getreg" => Ok(Reply::Array(
            regs.as_bytes()
                .iter()
                .map(|r| Reply::Int(i64::from(*r)))
                .collect(),
        )),
        b"encoding" => Ok(Reply::Simple(
            match redis::sparse_of(&regs) {
                Some(_) => "sparse",
                None => "dense",
            }
            .to_owned(),
        )),
        b"decode" => {
            let sparse = redis::sparse_of(&regs).ok_or(HllError::NotSparse)?;
            Ok(Reply::Bulk(decode_text(&sparse).into_bytes()))
        }
        _ => Err(Error::InvalidArgument(format!(
            "Unknown PFDEBUG subcommand '{}'",
            String::from_utf8_lossy(sub)
        ))),
    }
}

/// `PFDEBUG DECODE`'s text of sparse opcodes: `z:len`, `Z:len`, `v:value,len`.
fn decode_text(sparse: &[u8]) -> String {
    let words: Vec<String> = redis::opcodes(sparse)
        .map_while(|op| op.ok())
        .map(|op| match (op.value, op.long) {
            (0, false) => format!("z:{}", op.len),
            (0, true) => format!("Z:{}", op.len),
            (value, _) => format!("v:{value},{}", op.len),
        })
        .collect();
    words.join(" ")
}

/// `GET key`: a HyperLogLog's `HYLL` string; nil for a missing key.
pub(super) fn get(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
    Ok(ns.hll(key).export()?.map_or(Reply::Nil, Reply::Bulk))
}

/// `SET key value`: imports a HyperLogLog from Redis's `HYLL` string, replacing the
/// key whatever it held; any other string is refused (see [`HllError::NotHll`]).
pub(super) fn set(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let value = args.next_arg()?;
    if args.peek().is_some() {
        return Err(Error::InvalidArgument("syntax error".to_owned()));
    }
    ns.hll(key).import(value)?;
    Ok(Reply::ok())
}
