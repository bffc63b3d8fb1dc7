//! `RIBBON.*` commands: our own family, in the style of `BF.*`.

use super::parse::{parse_f64, parse_i64};
use super::Reply;
use crate::error::{Result, RibbonError};
use crate::ribbon::RibbonInfo;
use crate::store::Namespace;

type Handler = fn(&Namespace, &[Vec<u8>]) -> Result<Reply>;

pub(super) fn handler(name: &str) -> Option<Handler> {
    Some(match name {
        "ribbon.reserve" => reserve,
        "ribbon.add" => add,
        "ribbon.build" => build,
        "ribbon.exists" => exists,
        "ribbon.mexists" => mexists,
        "ribbon.info" => info,
        "ribbon.scandump" => scandump,
        "ribbon.loadchunk" => loadchunk,
        _ => return None,
    })
}

fn reserve(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, error] = args else {
        return Ok(Reply::wrong_arity("ribbon.reserve"));
    };
    let error = parse_f64(error).ok_or(RibbonError::BadErrorRate)?;
    ns.ribbon(key).reserve(error)?;
    Ok(Reply::ok())
}

fn add(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("ribbon.add"));
    }
    Ok(Reply::Int(ns.ribbon(&args[1]).add(&args[2..])? as i64))
}

fn build(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity("ribbon.build"));
    };
    Ok(Reply::Int(ns.ribbon(key).build()? as i64))
}

fn exists(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    super::exists_reply("ribbon.exists", args, |key, item| {
        ns.ribbon(key).exists(item)
    })
}

fn mexists(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    super::mexists_reply("ribbon.mexists", args, |key, items| {
        ns.ribbon(key).mexists(items)
    })
}

fn info(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if !(2..=3).contains(&args.len()) {
        return Ok(Reply::wrong_arity("ribbon.info"));
    }
    let fields = fields(&ns.ribbon(&args[1]).info()?);
    let short = [
        "ERROR",
        "BITS",
        "GENERATIONS",
        "BUILT",
        "STAGED",
        "BITSPERITEM",
        "SIZE",
    ];
    super::info_reply(fields, &short, args.get(2))
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

fn scandump(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, cursor] = args else {
        return Ok(Reply::wrong_arity("ribbon.scandump"));
    };
    let cursor = parse_i64(cursor).ok_or(RibbonError::InvalidPosition)?;
    let (next, chunk) = ns.ribbon(key).scandump(cursor)?;
    Ok(Reply::Array(vec![Reply::Int(next), Reply::Bulk(chunk)]))
}

fn loadchunk(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, cursor, chunk] = args else {
        return Ok(Reply::wrong_arity("ribbon.loadchunk"));
    };
    let cursor = parse_i64(cursor).ok_or(RibbonError::InvalidPosition)?;
    ns.ribbon(key).loadchunk(cursor, chunk)?;
    Ok(Reply::ok())
}
