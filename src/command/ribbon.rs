//! `RIBBON.*` commands: our own family, in the style of `BF.*`.

use super::args::Args;
use super::batch::Run;
use super::key_and_cursor;
use super::{KeyAndList, Reply};
use crate::error::{Result, RibbonError};
use crate::ribbon::RibbonInfo;
use crate::store::Namespace;

pub(super) fn reserve(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let error = args.next_f64(RibbonError::BadErrorRate)?;
    args.finish()?;
    ns.ribbon(key).reserve(error)?;
    Ok(Reply::ok())
}

pub(super) fn add(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let KeyAndList { key, list } = KeyAndList::parse(args)?;
    Ok(Reply::Int(ns.ribbon(key).add(list)? as i64))
}

/// A run of `RIBBON.ADD`s: one blind staging of all their items. If it fails, each
/// runs alone, so that one command's error is its own.
pub(super) fn add_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let Some((lens, items)) = run.lists() else {
        return run.one_by_one(ns);
    };
    match ns.ribbon(run.key()).add(&items) {
        Ok(_) => lens.iter().map(|n| Reply::Int(*n as i64)).collect(),
        Err(_) => run.one_by_one(ns),
    }
}

pub(super) fn build(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
    Ok(Reply::Int(ns.ribbon(key).build()? as i64))
}

pub(super) fn exists(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    super::exists_reply(args, |key, item| ns.ribbon(key).exists(item))
}

/// A run of `RIBBON.EXISTS`: one read of every item.
pub(super) fn exists_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    run.exists(ns, |items| ns.ribbon(run.key()).mexists(items))
}

pub(super) fn mexists(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    super::mexists_reply(args, |key, items| ns.ribbon(key).mexists(items))
}

/// `RIBBON.INFO key [FIELD]`.
pub(super) fn info(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let wanted = args.next_opt();
    args.finish()?;
    let fields = fields(&ns.ribbon(key).info()?);
    let short = [
        "ERROR",
        "BITS",
        "GENERATIONS",
        "BUILT",
        "STAGED",
        "BITSPERITEM",
        "SIZE",
    ];
    super::info_reply(fields, &short, wanted)
}

fn fields(info: &RibbonInfo) -> Vec<(&'static str, Reply)> {
    let bits_per_item = match info.built {
        0 => 0.0,
        n => info.bytes as f64 * 8.0 / n as f64,
    };
    vec![
        ("Error rate", Reply::double(info.error)),
        ("Result bits", Reply::Int(i64::from(info.result_bits))),
        ("Generations", Reply::Int(i64::from(info.generations))),
        ("Items built", Reply::Int(info.built as i64)),
        ("Items staged", Reply::Int(info.staged as i64)),
        ("Bits per built item", Reply::double(bits_per_item)),
        ("Size", Reply::Int(info.bytes as i64)),
    ]
}

pub(super) fn scandump(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, cursor) = key_and_cursor(args, RibbonError::InvalidPosition)?;
    args.finish()?;
    let (next, chunk) = ns.ribbon(key).scandump(cursor)?;
    Ok(Reply::Array(vec![Reply::Int(next), Reply::Bulk(chunk)]))
}

pub(super) fn loadchunk(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, cursor) = key_and_cursor(args, RibbonError::InvalidPosition)?;
    let chunk = args.next_arg()?;
    args.finish()?;
    ns.ribbon(key).loadchunk(cursor, chunk)?;
    Ok(Reply::ok())
}
