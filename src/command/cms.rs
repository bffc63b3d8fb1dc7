//! `CMS.*` commands, in RedisBloom's order of checks so that each error matches its own.

use super::args::Args;
use super::batch::Run;
use super::parse::{arg_index, parse_f64, parse_i64};
use super::{window, KeyAndList, Reply};
use crate::error::{CmsError, Result};
use crate::store::Namespace;

/// A dimension: a positive integer, or `bad`.
fn dimension(arg: &[u8], bad: CmsError) -> Result<u64> {
    let n = parse_i64(arg).filter(|n| *n >= 1).ok_or(bad)?;
    Ok(n as u64)
}

/// A probability strictly between 0 and 1, or `bad`.
fn probability(arg: &[u8], bad: CmsError) -> Result<f64> {
    Ok(parse_f64(arg).filter(|v| *v > 0.0 && *v < 1.0).ok_or(bad)?)
}

/// `CMS.INITBYDIM key width depth [WINDOW ms [SLICES g]]`: the key is checked before
/// the numbers are.
pub(super) fn init_by_dim(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, width, depth) = (args.next_key()?, args.next_arg()?, args.next_arg()?);
    let window = window::trailing(args)?;
    if ns.exists(key)? {
        return Err(CmsError::KeyAlreadyExists.into());
    }
    let width = dimension(width, CmsError::InvalidWidth)?;
    let depth = dimension(depth, CmsError::InvalidDepth)?;
    match window {
        None => ns.cms(key).init_by_dim(width, depth)?,
        Some(window) => ns.cms(key).init_by_dim_windowed(width, depth, window)?,
    }
    Ok(Reply::ok())
}

/// `CMS.INITBYPROB key error probability [WINDOW ms [SLICES g]]`: the key is checked
/// before the numbers are.
pub(super) fn init_by_prob(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, error, prob) = (args.next_key()?, args.next_arg()?, args.next_arg()?);
    let window = window::trailing(args)?;
    if ns.exists(key)? {
        return Err(CmsError::KeyAlreadyExists.into());
    }
    let error = probability(error, CmsError::InvalidOverestimation)?;
    let prob = probability(prob, CmsError::InvalidProb)?;
    match window {
        None => ns.cms(key).init_by_prob(error, prob)?,
        Some(window) => ns.cms(key).init_by_prob_windowed(error, prob, window)?,
    }
    Ok(Reply::ok())
}

/// `CMS.INCRBY`'s (item, increment) pairs (read by [`KeyAndList::pairs`], after the key
/// is checked, as RedisBloom does), appended to `out`; how many, or the error that
/// rejects the command as a whole (then `out` is left as it was).
fn increments<'a>(list: &'a [Vec<u8>], out: &mut Vec<(&'a [u8], u64)>) -> Result<usize> {
    let start = out.len();
    let mut pairs = Args::of("cms.incrby", list);
    let mut read = || {
        while let Some(item) = pairs.next_opt() {
            let incr = pairs.next_i64(CmsError::CannotParseNumber)?;
            let incr = u64::try_from(incr).map_err(|_| CmsError::NumberNegative)?;
            out.push((item, incr));
        }
        Ok(out.len() - start)
    };
    let read = read();
    if read.is_err() {
        out.truncate(start);
    }
    read
}

/// `CMS.INCRBY`'s reply: the estimates, an error in place of any that overflowed.
fn estimates_reply(estimates: impl Iterator<Item = u32>) -> Reply {
    Reply::Array(
        estimates
            .map(|e| match e {
                u32::MAX => Reply::Error(CmsError::IncrbyOverflow.text().to_owned()),
                e => Reply::Int(i64::from(e)),
            })
            .collect(),
    )
}

pub(super) fn incr_by(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let KeyAndList { key, list } = KeyAndList::pairs(args)?;
    let cms = ns.cms(key);
    cms.dims()?;
    let mut pairs = Vec::with_capacity(list.len() / 2);
    increments(list, &mut pairs)?;
    let estimates = cms.incr_by_with_estimates(&pairs)?;
    Ok(estimates_reply(estimates.into_iter()))
}

/// A run of `CMS.INCRBY`s: every command's pairs in one write, the estimates split
/// back per command; a command whose pairs do not parse gets its own error.
pub(super) fn incr_by_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let cms = ns.cms(run.key());
    let commands = run.parse(KeyAndList::pairs);
    // A missing key or another type answers before any number is parsed (a request of
    // the wrong arity is answered so before the key is looked at).
    if let Err(err) = cms.dims() {
        let err = Reply::from(&err);
        return commands
            .iter()
            .map(|c| c.as_ref().map_or_else(Reply::from, |_| err.clone()))
            .collect();
    }
    // Every command's pairs in one vector; each command keeps its count (or error).
    let mut pairs = Vec::with_capacity(commands.len());
    let parsed: Vec<Result<usize>> = commands
        .into_iter()
        .map(|c| c.and_then(|c| increments(c.list, &mut pairs)))
        .collect();
    let estimates = match cms.incr_by_with_estimates(&pairs) {
        Ok(estimates) => estimates,
        Err(err) => return run.each(Reply::from(&err)),
    };
    let mut estimates = estimates.into_iter();
    parsed
        .iter()
        .map(|p| match p {
            Err(err) => Reply::from(err),
            Ok(count) => estimates_reply(estimates.by_ref().take(*count)),
        })
        .collect()
}

fn ints(estimates: impl Iterator<Item = u32>) -> Reply {
    Reply::Array(estimates.map(|e| Reply::Int(i64::from(e))).collect())
}

pub(super) fn query(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let KeyAndList { key, list } = KeyAndList::parse(args)?;
    Ok(ints(ns.cms(key).query(list)?.into_iter()))
}

/// A run of `CMS.QUERY`s: one read of every command's items.
pub(super) fn query_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let Some((lens, items)) = run.lists() else {
        return run.one_by_one(ns);
    };
    match ns.cms(run.key()).query(&items) {
        Ok(estimates) => {
            let mut estimates = estimates.into_iter();
            lens.iter()
                .map(|n| ints(estimates.by_ref().take(*n)))
                .collect()
        }
        Err(err) => run.each(Reply::from(&err)),
    }
}

/// `CMS.MERGE dest numkeys src [src ...] [WEIGHTS weight [weight ...]]`.
pub(super) fn merge(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let dest = ns.cms(args.next_key()?);
    let num_keys = args.next_arg()?;
    let rest = args.rest_nonempty()?;
    let dims = dest.dims()?;
    let num_keys = parse_i64(num_keys).ok_or(CmsError::InvalidNumkeys)?;
    if num_keys <= 0 {
        return Err(CmsError::NumkeysNotPositive.into());
    }
    let n = usize::try_from(num_keys).unwrap_or(usize::MAX);
    let weights_at = arg_index("WEIGHTS", rest);
    match weights_at {
        None if n != rest.len() => return Err(CmsError::WrongNumberOfKeys.into()),
        Some(pos) if pos != n || Some(rest.len()) != n.checked_mul(2).map(|m| m + 1) => {
            return Err(CmsError::WrongNumberOfKeysWeights.into())
        }
        _ => {}
    }
    let (keys, weights) = rest.split_at(n);
    // `weights` is empty, or `WEIGHTS` and one weight per key.
    let mut weights = Args::of("cms.merge", weights);
    weights.next_if("WEIGHTS");
    let mut sources = Vec::with_capacity(n);
    for key in keys {
        let weight = match weights.is_empty() {
            true => 1,
            false => weights.next_i64(CmsError::InvalidWeight)?,
        };
        if ns.cms(key).dims()? != dims {
            return Err(CmsError::DimensionsDiffer.into());
        }
        sources.push((key.as_slice(), weight));
    }
    dest.merge(&sources)?;
    Ok(Reply::ok())
}

pub(super) fn info(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
    let cms = ns.cms(key);
    let info = cms.info()?;
    let field = |name: &str| Reply::Simple(name.to_lowercase());
    let mut fields = vec![
        (field("width"), Reply::Int(i64::from(info.width))),
        (field("depth"), Reply::Int(i64::from(info.depth))),
        // RedisBloom replies with its size_t count as a long long.
        (field("count"), Reply::Int(info.count as i64)),
    ];
    let windowed = window::info_fields(cms.window_info()?);
    fields.extend(windowed.into_iter().map(|(name, v)| (field(name), v)));
    Ok(Reply::Map(fields))
}
