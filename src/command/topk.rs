//! `TOPK.*` commands, in RedisBloom's order of checks so that each error matches its
//! own (see `vectors/topk_tdigest_notes.md`).

use super::parse::{parse_f64, parse_i64};
use super::Reply;
use crate::error::{Error, Result, TopKError};
use crate::store::Namespace;
use crate::topk::TopK;
use rocksketch_merge::topk::ops::MAX_INCREMENT;

type Handler = fn(&Namespace, &[Vec<u8>]) -> Result<Reply>;

pub(super) fn handler(name: &str) -> Option<Handler> {
    Some(match name {
        "topk.reserve" => reserve,
        "topk.add" => add,
        "topk.incrby" => incr_by,
        "topk.query" => query,
        "topk.count" => count,
        "topk.list" => list,
        "topk.info" => info,
        _ => return None,
    })
}

/// The Top-K at `key`, checked to exist and be a Top-K (before any argument).
fn existing(ns: &Namespace, key: &[u8]) -> Result<TopK> {
    let top = ns.topk(key);
    top.info()?;
    Ok(top)
}

fn reserve(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() != 3 && args.len() != 6 {
        return Ok(Reply::wrong_arity("topk.reserve"));
    }
    if ns.exists(&args[1])? {
        return Err(TopKError::KeyAlreadyExists.into());
    }
    let number = |arg: &[u8], err: TopKError| {
        parse_i64(arg)
            .filter(|v| (1..=i64::from(u32::MAX)).contains(v))
            .map(|v| v as u64)
            .ok_or(Error::TopK(err))
    };
    let k = number(&args[2], TopKError::InvalidK)?;
    let (width, depth, decay) = match args.get(3..6) {
        Some([width, depth, decay]) => (
            number(width, TopKError::InvalidWidth)?,
            number(depth, TopKError::InvalidDepth)?,
            parse_f64(decay)
                .filter(|d| *d > 0.0 && *d <= 1.0)
                .ok_or(TopKError::InvalidDecay)?,
        ),
        _ => (8, 7, 0.9),
    };
    ns.topk(&args[1]).reserve(k, width, depth, decay)?;
    Ok(Reply::ok())
}

/// An expelled item as RedisBloom replies with it: nil, or the item cut at a NUL byte.
pub(crate) fn expelled(item: Option<Vec<u8>>) -> Reply {
    match item {
        None => Reply::Nil,
        Some(item) => Reply::Bulk(rocksketch_merge::topk::add::c_string(&item).to_vec()),
    }
}

fn add(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("topk.add"));
    }
    let top = existing(ns, &args[1])?;
    let items: Vec<&[u8]> = args[2..].iter().map(Vec::as_slice).collect();
    let replies = top.add(&items)?;
    Ok(Reply::Array(replies.into_iter().map(expelled).collect()))
}

/// `TOPK.INCRBY`'s pairs up to the first bad increment, and that error if any.
pub(crate) type Pairs<'a> = (Vec<(&'a [u8], u32)>, Option<TopKError>);

/// Parses `TOPK.INCRBY`'s `item increment` arguments (see [`Pairs`]).
pub(crate) fn pairs(args: &[Vec<u8>]) -> Pairs<'_> {
    let mut pairs = Vec::with_capacity(args.len() / 2);
    for pair in args.chunks_exact(2) {
        match parse_i64(&pair[1]).and_then(|n| u32::try_from(n).ok()) {
            Some(n) if n <= MAX_INCREMENT => pairs.push((pair[0].as_slice(), n)),
            _ => return (pairs, Some(TopKError::BadIncrement)),
        }
    }
    (pairs, None)
}

fn incr_by(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 4 || args.len() % 2 == 1 {
        return Ok(Reply::wrong_arity("topk.incrby"));
    }
    let top = existing(ns, &args[1])?;
    // Pairs before a bad increment stay applied, and the reply ends with its error
    // (RedisBloom announces every pair's element first and leaves the reply short).
    let (pairs, bad) = pairs(&args[2..]);
    let mut replies: Vec<Reply> = top.incr_by(&pairs)?.into_iter().map(expelled).collect();
    if let Some(err) = bad {
        replies.push(Reply::Error(err.text().to_owned()));
    }
    Ok(Reply::Array(replies))
}

fn query(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("topk.query"));
    }
    let found = existing(ns, &args[1])?.query(&args[2..])?;
    Ok(Reply::Array(found.into_iter().map(Reply::Bool).collect()))
}

fn count(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("topk.count"));
    }
    let counts = existing(ns, &args[1])?.count(&args[2..])?;
    Ok(Reply::Array(
        counts
            .into_iter()
            .map(|c| Reply::Int(i64::from(c)))
            .collect(),
    ))
}

/// RedisBloom's `strncasecmp(arg, "WITHCOUNT", len(arg)) == 0`: any case, any prefix
/// (the empty one too), and the word followed by a NUL byte.
fn is_withcount(arg: &[u8]) -> bool {
    const WORD: &[u8] = b"withcount";
    for (i, c) in arg.iter().enumerate() {
        let want = WORD.get(i).copied().unwrap_or(0);
        if c.to_ascii_lowercase() != want {
            return false;
        }
        if *c == 0 {
            return true;
        }
    }
    true
}

fn list(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let with_count = match args {
        [_, _] => false,
        [_, _, option] if is_withcount(option) => true,
        [_, _, _] => return Err(TopKError::WithcountExpected.into()),
        _ => return Ok(Reply::wrong_arity("topk.list")),
    };
    let items = existing(ns, &args[1])?.list()?;
    let mut out = Vec::with_capacity(items.len() * 2);
    for (item, count) in items {
        out.push(Reply::Bulk(item));
        if with_count {
            out.push(Reply::Int(i64::from(count)));
        }
    }
    Ok(Reply::Array(out))
}

fn info(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity("topk.info"));
    };
    let shape = ns.topk(key).info()?;
    let name = |n: &str| Reply::Simple(n.to_owned());
    Ok(Reply::Map(vec![
        (name("k"), Reply::Int(i64::from(shape.k))),
        (name("width"), Reply::Int(i64::from(shape.width))),
        (name("depth"), Reply::Int(i64::from(shape.depth))),
        (name("decay"), Reply::double(shape.decay)),
    ]))
}
