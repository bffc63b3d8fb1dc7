//! `CF.*` commands.

use super::parse::{arg_index, parse_i64};
use super::Reply;
use crate::cuckoo::{CuckooInfo, CuckooOptions, MAX_EXPANSION};
use crate::error::{CuckooError, Result};
use crate::store::Namespace;

type Handler = fn(&Namespace, &[Vec<u8>]) -> Result<Reply>;

pub(super) fn handler(name: &str) -> Option<Handler> {
    Some(match name {
        "cf.reserve" => reserve,
        "cf.add" => add,
        "cf.addnx" => add_nx,
        "cf.insert" => insert,
        "cf.insertnx" => insert_nx,
        "cf.exists" => exists,
        "cf.mexists" => mexists,
        "cf.count" => count,
        "cf.del" | "cf.delete" => del,
        "cf.info" | "cf.stats" => info,
        "cf.scandump" => scandump,
        "cf.loadchunk" => loadchunk,
        "cf.debug" => debug,
        _ => return None,
    })
}

/// The value after an option's keyword, parsed as an integer in `range`: RedisBloom's
/// two errors, "Couldn't parse" and out of range.
fn option_value(
    options: &[Vec<u8>],
    keyword: &str,
    range: std::ops::RangeInclusive<i64>,
    (parse_error, range_error): (CuckooError, CuckooError),
) -> Result<Option<i64>> {
    let Some(at) = arg_index(keyword, options) else {
        return Ok(None);
    };
    let value = options
        .get(at + 1)
        .and_then(|v| parse_i64(v))
        .ok_or(parse_error)?;
    if !range.contains(&value) {
        return Err(range_error.into());
    }
    Ok(Some(value))
}

/// `CF.RESERVE key capacity [BUCKETSIZE n] [MAXITERATIONS n] [EXPANSION n]
/// [FINGERPRINT 8|16]`, checked in RedisBloom's order.
fn reserve(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 || args.len().is_multiple_of(2) {
        return Ok(Reply::wrong_arity("cf.reserve"));
    }
    let capacity = parse_i64(&args[2]).ok_or(CuckooError::BadCapacity)?;
    let options = &args[3..];
    let defaults = CuckooOptions::default();
    let max_iterations = option_value(
        options,
        "MAXITERATIONS",
        1..=65535,
        (
            CuckooError::MaxIterationsParse,
            CuckooError::MaxIterationsRange,
        ),
    )?;
    let bucket_size = option_value(
        options,
        "BUCKETSIZE",
        1..=255,
        (CuckooError::BucketSizeParse, CuckooError::BucketSizeRange),
    )?;
    let expansion = option_value(
        options,
        "EXPANSION",
        0..=i64::from(MAX_EXPANSION),
        (CuckooError::ExpansionParse, CuckooError::ExpansionRange),
    )?;
    let fp_bits = option_value(
        options,
        "FINGERPRINT",
        8..=16,
        (CuckooError::FingerprintParse, CuckooError::FingerprintRange),
    )?;
    let capacity = u64::try_from(capacity).map_err(|_| CuckooError::CapacityRange)?;
    ns.cuckoo(&args[1]).reserve(CuckooOptions {
        capacity,
        bucket_size: bucket_size.map_or(defaults.bucket_size, |v| v as u8),
        max_iterations: max_iterations.map_or(defaults.max_iterations, |v| v as u16),
        expansion: expansion.map_or(defaults.expansion, |v| v as u32),
        fp_bits: fp_bits.map_or(defaults.fp_bits, |v| v as u8),
    })?;
    Ok(Reply::ok())
}

fn add(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, item] = args else {
        return Ok(Reply::wrong_arity("cf.add"));
    };
    ns.cuckoo(key).add(item)?;
    Ok(Reply::Bool(true))
}

fn add_nx(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, item] = args else {
        return Ok(Reply::wrong_arity("cf.addnx"));
    };
    Ok(Reply::Bool(ns.cuckoo(key).add_nx(item)?))
}

/// `CF.INSERT`: RedisBloom's form, or the cuckoo-module design's short `CF.INSERT key
/// item` (one item, the filter created with defaults if missing, answered as `CF.ADD`).
fn insert(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    match args {
        [_, _, word] if word.eq_ignore_ascii_case(b"items") => Ok(Reply::wrong_arity("cf.insert")),
        [_, key, item] => add(ns, &[b"CF.ADD".to_vec(), key.clone(), item.clone()]),
        _ => insert_common(ns, args, false),
    }
}

fn insert_nx(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    insert_common(ns, args, true)
}

/// `CF.INSERT[NX] key [CAPACITY n] [NOCREATE] ITEMS item...`: per item 1 (added), 0
/// (present, NX only) or -1 (no room). Booleans in RESP3 for `CF.INSERT`'s additions;
/// `CF.INSERTNX` stays integers, as RedisBloom replies.
fn insert_common(ns: &Namespace, args: &[Vec<u8>], nx: bool) -> Result<Reply> {
    let name = if nx { "cf.insertnx" } else { "cf.insert" };
    if args.len() < 4 {
        return Ok(Reply::wrong_arity(name));
    }
    let (mut capacity, mut nocreate) = (None, false);
    let mut at = 2;
    let items = loop {
        let Some(word) = args.get(at) else {
            return Ok(Reply::wrong_arity(name));
        };
        match word.to_ascii_uppercase().as_slice() {
            b"ITEMS" if args.len() > at + 1 => break &args[at + 1..],
            b"ITEMS" => return Ok(Reply::wrong_arity(name)),
            b"NOCREATE" => nocreate = true,
            b"CAPACITY" if at + 1 < args.len() => {
                let value = parse_i64(&args[at + 1]).ok_or(CuckooError::BadCapacity)?;
                capacity = Some(u64::try_from(value).map_err(|_| CuckooError::CapacityRange)?);
                at += 1;
            }
            _ => return Err(CuckooError::UnknownArgument.into()),
        }
        at += 1;
    };
    let answers = ns.cuckoo(&args[1]).insert(items, capacity, nocreate, nx)?;
    Ok(Reply::Array(
        answers
            .into_iter()
            .map(|a| match (nx, a) {
                (false, 1) => Reply::Bool(true),
                (_, a) => Reply::Int(a),
            })
            .collect(),
    ))
}

fn exists(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    super::exists_reply("cf.exists", args, |key, item| ns.cuckoo(key).exists(item))
}

fn mexists(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    super::mexists_reply("cf.mexists", args, |key, items| {
        ns.cuckoo(key).mexists(items)
    })
}

fn count(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, item] = args else {
        return Ok(Reply::wrong_arity("cf.count"));
    };
    Ok(Reply::Int(ns.cuckoo(key).count(item)? as i64))
}

fn del(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, item] = args else {
        return Ok(Reply::wrong_arity(&String::from_utf8_lossy(&args[0])));
    };
    Ok(Reply::Bool(ns.cuckoo(key).delete(item)?))
}

fn info(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity(&String::from_utf8_lossy(&args[0])));
    };
    let info = ns.cuckoo(key).info()?;
    Ok(Reply::Map(
        fields(&info)
            .into_iter()
            .map(|(name, value)| (Reply::Simple(name.to_owned()), Reply::Int(value)))
            .collect(),
    ))
}

fn fields(info: &CuckooInfo) -> [(&'static str, i64); 8] {
    [
        ("Size", info.size as i64),
        ("Number of buckets", info.buckets as i64),
        ("Number of filters", i64::from(info.filters)),
        ("Number of items inserted", info.inserted as i64),
        ("Number of items deleted", info.deleted as i64),
        ("Bucket size", i64::from(info.bucket_size)),
        ("Expansion rate", i64::from(info.expansion)),
        ("Max iterations", i64::from(info.max_iterations)),
    ]
}

fn scandump(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, cursor] = args else {
        return Ok(Reply::wrong_arity("cf.scandump"));
    };
    let cursor = parse_i64(cursor).ok_or(CuckooError::InvalidPosition)?;
    // A filter holding no items has nothing to dump: RedisBloom answers [0, nil].
    if ns.cuckoo(key).info()?.inserted == 0 {
        return Ok(Reply::Array(vec![Reply::Int(0), Reply::Nil]));
    }
    let (next, chunk) = ns.cuckoo(key).scandump(cursor)?;
    Ok(Reply::Array(vec![Reply::Int(next), Reply::Bulk(chunk)]))
}

fn loadchunk(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, cursor, chunk] = args else {
        return Ok(Reply::wrong_arity("cf.loadchunk"));
    };
    let cursor = parse_i64(cursor).ok_or(CuckooError::InvalidPosition)?;
    ns.cuckoo(key).loadchunk(cursor, chunk)?;
    Ok(Reply::ok())
}

/// `CF.DEBUG`: RedisBloom's one-line description of the filter.
fn debug(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity("cf.debug"));
    };
    let i = ns.cuckoo(key).info()?;
    Ok(Reply::Bulk(
        format!(
            "bktsize:{} buckets:{} items:{} deletes:{} filters:{} max_iterations:{} expansion:{}",
            i.bucket_size,
            i.buckets,
            i.inserted,
            i.deleted,
            i.filters,
            i.max_iterations,
            i.expansion
        )
        .into_bytes(),
    ))
}
