//! `TDIGEST.*` commands, in RedisBloom's order of checks so that each error matches
//! its own: the key first (missing, wrong type), then the arguments, in order.

use super::parse::{parse_f64, parse_i64};
use super::Reply;
use crate::error::{Result, TDigestError};
use crate::store::Namespace;
use crate::tdigest::TDigest;

type Handler = fn(&Namespace, &[Vec<u8>]) -> Result<Reply>;

pub(super) fn handler(name: &str) -> Option<Handler> {
    Some(match name {
        "tdigest.create" => create,
        "tdigest.add" => add,
        "tdigest.reset" => reset,
        "tdigest.merge" => merge,
        "tdigest.min" => |ns, args| one(ns, args, "tdigest.min", |t| t.min()),
        "tdigest.max" => |ns, args| one(ns, args, "tdigest.max", |t| t.max()),
        "tdigest.quantile" => quantile,
        "tdigest.cdf" => cdf,
        "tdigest.rank" => |ns, args| rank(ns, args, "tdigest.rank", false),
        "tdigest.revrank" => |ns, args| rank(ns, args, "tdigest.revrank", true),
        "tdigest.byrank" => |ns, args| by_rank(ns, args, "tdigest.byrank", false),
        "tdigest.byrevrank" => |ns, args| by_rank(ns, args, "tdigest.byrevrank", true),
        "tdigest.trimmed_mean" => trimmed_mean,
        "tdigest.info" => info,
        _ => return None,
    })
}

fn doubles(values: Vec<f64>) -> Reply {
    Reply::Array(values.into_iter().map(Reply::double).collect())
}

/// The digest at `key`, checked to exist and be a t-digest (before any argument), from
/// its metadata alone.
fn existing(ns: &Namespace, key: &[u8]) -> Result<TDigest> {
    let digest = ns.tdigest(key);
    digest.compression()?;
    Ok(digest)
}

/// A `COMPRESSION` value: an integer, then positive.
fn compression(arg: &[u8]) -> Result<u64> {
    let c = parse_i64(arg).ok_or(TDigestError::CompressionParse)?;
    u64::try_from(c)
        .ok()
        .filter(|c| *c > 0)
        .ok_or_else(|| TDigestError::CompressionNotPositive.into())
}

fn create(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let (key, rest) = match args {
        [_, key] => (key, None),
        [_, key, a, b] => (key, Some((a, b))),
        _ => return Ok(Reply::wrong_arity("tdigest.create")),
    };
    let digest = ns.tdigest(key);
    match ns.key_type(key)? {
        Some(crate::KeyType::TDigest) => return Err(TDigestError::KeyAlreadyExists.into()),
        Some(_) => return Err(crate::Error::WrongType),
        None => {}
    }
    let c = match rest {
        None => u64::from(rocksketch_merge::tdigest::DEFAULT_COMPRESSION),
        Some((a, b)) => {
            let keyword = |w: &[u8]| w.eq_ignore_ascii_case(b"compression");
            if !keyword(a) && !keyword(b) {
                return Err(TDigestError::WrongKeyword.into());
            }
            compression(b)?
        }
    };
    digest.create(c)?;
    Ok(Reply::ok())
}

fn add(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("tdigest.add"));
    }
    let digest = existing(ns, &args[1])?;
    digest.add(&values(&args[2..])?)?;
    Ok(Reply::ok())
}

/// `TDIGEST.ADD`'s values: the first bad one decides the error.
pub(crate) fn values(args: &[Vec<u8>]) -> Result<Vec<f64>> {
    args.iter()
        .map(|arg| match parse_f64(arg) {
            None => Err(TDigestError::ValParse.into()),
            Some(v) if v.is_infinite() => Err(TDigestError::ValNotFinite.into()),
            Some(v) => Ok(v),
        })
        .collect()
}

fn reset(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity("tdigest.reset"));
    };
    ns.tdigest(key).reset()?;
    Ok(Reply::ok())
}

fn one(
    ns: &Namespace,
    args: &[Vec<u8>],
    name: &str,
    read: fn(&TDigest) -> Result<f64>,
) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity(name));
    };
    Ok(Reply::double(read(&ns.tdigest(key))?))
}

/// Each argument parsed as a double, or `error` at the first that does not parse.
fn parse_all(args: &[Vec<u8>], error: TDigestError) -> Result<Vec<f64>> {
    args.iter()
        .map(|a| parse_f64(a).ok_or_else(|| error.into()))
        .collect()
}

fn quantile(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("tdigest.quantile"));
    }
    let digest = existing(ns, &args[1])?;
    let mut qs = Vec::with_capacity(args.len() - 2);
    for arg in &args[2..] {
        let q = parse_f64(arg).ok_or(TDigestError::QuantileParse)?;
        if !(0.0..=1.0).contains(&q) {
            return Err(TDigestError::QuantileRange.into());
        }
        qs.push(q);
    }
    Ok(doubles(digest.quantiles(&qs)?))
}

fn cdf(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("tdigest.cdf"));
    }
    let digest = existing(ns, &args[1])?;
    let values = parse_all(&args[2..], TDigestError::CdfParse)?;
    Ok(doubles(digest.cdf(&values)?))
}

fn rank(ns: &Namespace, args: &[Vec<u8>], name: &str, reverse: bool) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity(name));
    }
    let digest = existing(ns, &args[1])?;
    let values = parse_all(&args[2..], TDigestError::ValueParse)?;
    let ranks = digest.ranks(&values, reverse)?;
    Ok(Reply::Array(ranks.into_iter().map(Reply::Int).collect()))
}

fn by_rank(ns: &Namespace, args: &[Vec<u8>], name: &str, reverse: bool) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity(name));
    }
    let digest = existing(ns, &args[1])?;
    let mut ranks = Vec::with_capacity(args.len() - 2);
    for arg in &args[2..] {
        let rank = parse_i64(arg).ok_or(TDigestError::RankParse)?;
        if rank < 0 {
            return Err(TDigestError::RankNegative.into());
        }
        ranks.push(rank);
    }
    Ok(doubles(digest.by_ranks(&ranks, reverse)?))
}

fn trimmed_mean(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, low, high] = args else {
        return Ok(Reply::wrong_arity("tdigest.trimmed_mean"));
    };
    let digest = existing(ns, key)?;
    let low = parse_f64(low).ok_or(TDigestError::LowCutParse)?;
    let high = parse_f64(high).ok_or(TDigestError::HighCutParse)?;
    Ok(Reply::double(digest.trimmed_mean(low, high)?))
}

fn info(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity("tdigest.info"));
    };
    let info = ns.tdigest(key).info()?;
    let field = |name: &str, value: i64| (Reply::Simple(name.to_owned()), Reply::Int(value));
    Ok(Reply::Map(vec![
        field("Compression", i64::from(info.compression)),
        field("Capacity", info.capacity as i64),
        field("Merged nodes", info.merged_nodes as i64),
        field("Unmerged nodes", info.unmerged_nodes as i64),
        field("Merged weight", info.merged_weight),
        field("Unmerged weight", info.unmerged_weight),
        field("Observations", info.observations),
        field("Total compressions", info.total_compressions),
        field("Memory usage", info.memory_usage as i64),
    ]))
}

fn merge(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 4 {
        return Ok(Reply::wrong_arity("tdigest.merge"));
    }
    let dest = &args[1];
    if ns
        .key_type(dest)?
        .is_some_and(|t| t != crate::KeyType::TDigest)
    {
        return Err(crate::Error::WrongType);
    }
    let numkeys = parse_i64(&args[2]).ok_or(TDigestError::NumkeysParse)?;
    if numkeys <= 0 {
        return Err(TDigestError::NumkeysNotPositive.into());
    }
    let rest = &args[3..];
    let Some(sources) = usize::try_from(numkeys).ok().and_then(|n| rest.get(..n)) else {
        return Ok(Reply::wrong_arity("tdigest.merge"));
    };
    let options = &rest[sources.len()..];
    let mut compression_arg = None;
    if !options.is_empty() {
        let at = options
            .iter()
            .position(|o| o.eq_ignore_ascii_case(b"compression"));
        let replace = options.iter().any(|o| o.eq_ignore_ascii_case(b"override"));
        if let Some(at) = at {
            let Some(value) = options.get(at + 1) else {
                return Ok(Reply::wrong_arity("tdigest.merge"));
            };
            compression_arg = Some(compression(value)?);
        } else if !replace {
            return Err(TDigestError::WrongKeyword.into());
        }
    }
    let replace = options.iter().any(|o| o.eq_ignore_ascii_case(b"override"));
    ns.tdigest(dest).merge(sources, compression_arg, replace)?;
    Ok(Reply::ok())
}
