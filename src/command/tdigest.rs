//! `TDIGEST.*` commands, in RedisBloom's order of checks so that each error matches
//! its own: the key first (missing, wrong type), then the arguments, in order.

use super::args::Args;
use super::batch::Run;
use super::parse::parse_i64;
use super::{KeyAndList, Reply};
use crate::error::{Result, TDigestError};
use crate::store::Namespace;
use crate::tdigest::TDigest;

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

/// `TDIGEST.CREATE key [COMPRESSION c]`.
pub(super) fn create(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let rest = match args.rest() {
        [] => None,
        [a, b] => Some((a, b)),
        _ => return Err(args.wrong_arity()),
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

/// `TDIGEST.ADD`'s values: the first bad one decides the error.
fn values(list: &[Vec<u8>]) -> Result<Vec<f64>> {
    let mut values = Args::of("tdigest.add", list);
    let mut out = Vec::with_capacity(list.len());
    while !values.is_empty() {
        match values.next_f64(TDigestError::ValParse)? {
            v if v.is_infinite() => return Err(TDigestError::ValNotFinite.into()),
            v => out.push(v),
        }
    }
    Ok(out)
}

pub(super) fn add(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let KeyAndList { key, list } = KeyAndList::parse(args)?;
    let digest = existing(ns, key)?;
    digest.add(&values(list)?)?;
    Ok(Reply::ok())
}

/// A run of `TDIGEST.ADD`s: every command's values in one operand; a command whose
/// values do not parse gets its own error and adds nothing.
pub(super) fn add_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let Some(commands) = run.parse_all(KeyAndList::parse) else {
        return run.one_by_one(ns);
    };
    // A missing key or another type answers before any value is parsed.
    let digest = match existing(ns, run.key()) {
        Ok(digest) => digest,
        Err(err) => return run.each(Reply::from(&err)),
    };
    let parsed: Vec<Result<Vec<f64>>> = commands.iter().map(|c| values(c.list)).collect();
    let values: Vec<f64> = parsed.iter().flatten().flatten().copied().collect();
    if let Err(err) = digest.add(&values) {
        return run.each(Reply::from(&err));
    }
    parsed
        .iter()
        .map(|p| p.as_ref().map_or_else(Reply::from, |_| Reply::ok()))
        .collect()
}

pub(super) fn reset(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
    ns.tdigest(key).reset()?;
    Ok(Reply::ok())
}

/// `TDIGEST.MIN key` / `TDIGEST.MAX key`.
fn one(ns: &Namespace, args: &mut Args, read: fn(&TDigest) -> Result<f64>) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
    Ok(Reply::double(read(&ns.tdigest(key))?))
}

pub(super) fn min(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    one(ns, args, TDigest::min)
}

pub(super) fn max(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    one(ns, args, TDigest::max)
}

/// `cmd key value [value ...]`: the digest, checked before the values are read, and
/// each value read by `read` (which names its own errors).
fn digest_and_values<T>(
    ns: &Namespace,
    args: &mut Args,
    read: impl Fn(&mut Args) -> Result<T>,
) -> Result<(TDigest, Vec<T>)> {
    let key = args.next_key()?;
    let mut values = Args::of(args.command(), args.rest_nonempty()?);
    let digest = existing(ns, key)?;
    let mut out = Vec::with_capacity(values.len());
    while !values.is_empty() {
        out.push(read(&mut values)?);
    }
    Ok((digest, out))
}

pub(super) fn quantile(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (digest, qs) = digest_and_values(ns, args, |a| {
        match a.next_f64(TDigestError::QuantileParse)? {
            q if (0.0..=1.0).contains(&q) => Ok(q),
            _ => Err(TDigestError::QuantileRange.into()),
        }
    })?;
    Ok(doubles(digest.quantiles(&qs)?))
}

pub(super) fn cdf(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (digest, values) = digest_and_values(ns, args, |a| a.next_f64(TDigestError::CdfParse))?;
    Ok(doubles(digest.cdf(&values)?))
}

/// `TDIGEST.RANK` and `TDIGEST.REVRANK`.
pub(super) fn rank(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let reverse = args.command() == "tdigest.revrank";
    let (digest, values) = digest_and_values(ns, args, |a| a.next_f64(TDigestError::ValueParse))?;
    let ranks = digest.ranks(&values, reverse)?;
    Ok(Reply::Array(ranks.into_iter().map(Reply::Int).collect()))
}

/// `TDIGEST.BYRANK` and `TDIGEST.BYREVRANK`.
pub(super) fn by_rank(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let reverse = args.command() == "tdigest.byrevrank";
    let (digest, ranks) =
        digest_and_values(ns, args, |a| match a.next_i64(TDigestError::RankParse)? {
            rank if rank < 0 => Err(TDigestError::RankNegative.into()),
            rank => Ok(rank),
        })?;
    Ok(doubles(digest.by_ranks(&ranks, reverse)?))
}

pub(super) fn trimmed_mean(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let mut cuts = Args::of(args.command(), args.take(2)?);
    args.finish()?;
    let digest = existing(ns, key)?;
    let low = cuts.next_f64(TDigestError::LowCutParse)?;
    let high = cuts.next_f64(TDigestError::HighCutParse)?;
    Ok(Reply::double(digest.trimmed_mean(low, high)?))
}

pub(super) fn info(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
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

/// `TDIGEST.MERGE dest numkeys src [src ...] [COMPRESSION c] [OVERRIDE]`.
pub(super) fn merge(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let dest = args.next_key()?;
    let numkeys = args.next_arg()?;
    if ns
        .key_type(dest)?
        .is_some_and(|t| t != crate::KeyType::TDigest)
    {
        return Err(crate::Error::WrongType);
    }
    let numkeys = parse_i64(numkeys).ok_or(TDigestError::NumkeysParse)?;
    if numkeys <= 0 {
        return Err(TDigestError::NumkeysNotPositive.into());
    }
    let sources = args.take(usize::try_from(numkeys).unwrap_or(usize::MAX))?;
    let options = args.rest();
    let mut compression_arg = None;
    if !options.is_empty() {
        let at = options
            .iter()
            .position(|o| o.eq_ignore_ascii_case(b"compression"));
        let replace = options.iter().any(|o| o.eq_ignore_ascii_case(b"override"));
        if let Some(at) = at {
            let Some(value) = options.get(at + 1) else {
                return Err(args.wrong_arity());
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
