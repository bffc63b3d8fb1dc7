//! `CMS.*` commands, in RedisBloom's order of checks so that each error matches its own.

use super::parse::{arg_index, parse_f64, parse_i64};
use super::Reply;
use crate::error::{CmsError, Result};
use crate::store::Namespace;

type Handler = fn(&Namespace, &[Vec<u8>]) -> Result<Reply>;

pub(super) fn handler(name: &str) -> Option<Handler> {
    Some(match name {
        "cms.initbydim" => init_by_dim,
        "cms.initbyprob" => init_by_prob,
        "cms.incrby" => incr_by,
        "cms.query" => query,
        "cms.merge" => merge,
        "cms.info" => info,
        _ => return None,
    })
}

fn init_by_dim(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, width, depth] = args else {
        return Ok(Reply::wrong_arity("cms.initbydim"));
    };
    if ns.exists(key)? {
        return Err(CmsError::KeyAlreadyExists.into());
    }
    let width = parse_i64(width)
        .filter(|w| *w >= 1)
        .ok_or(CmsError::InvalidWidth)?;
    let depth = parse_i64(depth)
        .filter(|d| *d >= 1)
        .ok_or(CmsError::InvalidDepth)?;
    ns.cms(key).init_by_dim(width as u64, depth as u64)?;
    Ok(Reply::ok())
}

fn init_by_prob(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, error, prob] = args else {
        return Ok(Reply::wrong_arity("cms.initbyprob"));
    };
    if ns.exists(key)? {
        return Err(CmsError::KeyAlreadyExists.into());
    }
    let in_range = |v: &f64| *v > 0.0 && *v < 1.0;
    let error = parse_f64(error)
        .filter(in_range)
        .ok_or(CmsError::InvalidOverestimation)?;
    let prob = parse_f64(prob)
        .filter(in_range)
        .ok_or(CmsError::InvalidProb)?;
    ns.cms(key).init_by_prob(error, prob)?;
    Ok(Reply::ok())
}

fn incr_by(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 4 || args.len() % 2 == 1 {
        return Ok(Reply::wrong_arity("cms.incrby"));
    }
    let cms = ns.cms(&args[1]);
    cms.dims()?;
    let mut pairs = Vec::with_capacity(args.len() / 2 - 1);
    for pair in args[2..].chunks_exact(2) {
        let incr = parse_i64(&pair[1]).ok_or(CmsError::CannotParseNumber)?;
        let incr = u64::try_from(incr).map_err(|_| CmsError::NumberNegative)?;
        pairs.push((pair[0].as_slice(), incr));
    }
    let estimates = cms.incr_by_with_estimates(&pairs)?;
    Ok(Reply::Array(
        estimates
            .into_iter()
            .map(|e| match e {
                u32::MAX => Reply::Error(CmsError::IncrbyOverflow.text().to_owned()),
                e => Reply::Int(i64::from(e)),
            })
            .collect(),
    ))
}

fn query(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("cms.query"));
    }
    let estimates = ns.cms(&args[1]).query(&args[2..])?;
    Ok(Reply::Array(
        estimates
            .into_iter()
            .map(|e| Reply::Int(i64::from(e)))
            .collect(),
    ))
}

fn merge(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 4 {
        return Ok(Reply::wrong_arity("cms.merge"));
    }
    let dest = ns.cms(&args[1]);
    let dims = dest.dims()?;
    let num_keys = parse_i64(&args[2]).ok_or(CmsError::InvalidNumkeys)?;
    if num_keys <= 0 {
        return Err(CmsError::NumkeysNotPositive.into());
    }
    let rest = &args[3..];
    let n = usize::try_from(num_keys).unwrap_or(usize::MAX);
    match arg_index("WEIGHTS", rest) {
        None if n != rest.len() => return Err(CmsError::WrongNumberOfKeys.into()),
        Some(pos) if pos != n || Some(rest.len()) != n.checked_mul(2).map(|m| m + 1) => {
            return Err(CmsError::WrongNumberOfKeysWeights.into())
        }
        _ => {}
    }
    let has_weights = rest.len() > n;
    let mut sources = Vec::with_capacity(n);
    for (i, key) in rest[..n].iter().enumerate() {
        let weight = if has_weights {
            parse_i64(&rest[n + 1 + i]).ok_or(CmsError::InvalidWeight)?
        } else {
            1
        };
        if ns.cms(key).dims()? != dims {
            return Err(CmsError::DimensionsDiffer.into());
        }
        sources.push((key.as_slice(), weight));
    }
    dest.merge(&sources)?;
    Ok(Reply::ok())
}

fn info(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity("cms.info"));
    };
    let info = ns.cms(key).info()?;
    let field = |name: &str| Reply::Simple(name.to_owned());
    Ok(Reply::Map(vec![
        (field("width"), Reply::Int(i64::from(info.width))),
        (field("depth"), Reply::Int(i64::from(info.depth))),
        // RedisBloom replies with its size_t count as a long long.
        (field("count"), Reply::Int(info.count as i64)),
    ]))
}
