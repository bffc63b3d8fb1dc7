//! `CF.*` commands.

use super::args::Args;
use super::batch::Run;
use super::parse::{arg_index, parse_i64};
use super::Reply;
use super::{key_and_cursor, key_and_item, window};
use crate::cuckoo::{CuckooInfo, CuckooOptions, DEFAULT_BUCKET_SIZE, MAX_CAPACITY, MAX_EXPANSION};
use crate::error::{CuckooError, Error, Result};
use crate::store::Namespace;

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
pub(super) fn reserve(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (all, window) = window::split(args.command(), { *args }.rest(), 2)?;
    let args = &mut Args::of(args.command(), all);
    let key = args.next_key()?;
    let capacity = args.next_arg()?;
    // Options come in pairs, each looked for anywhere among the rest.
    let options = args.rest();
    if options.len() % 2 == 1 {
        return Err(args.wrong_arity());
    }
    let capacity = parse_i64(capacity).ok_or(CuckooError::BadCapacity)?;
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
    let options = CuckooOptions {
        capacity,
        bucket_size: bucket_size.map_or(defaults.bucket_size, |v| v as u8),
        max_iterations: max_iterations.map_or(defaults.max_iterations, |v| v as u16),
        expansion: expansion.map_or(defaults.expansion, |v| v as u32),
        fp_bits: fp_bits.map_or(defaults.fp_bits, |v| v as u8),
    };
    match window {
        None => ns.cuckoo(key).reserve(options)?,
        Some(window) => ns.cuckoo(key).reserve_windowed(options, window)?,
    }
    Ok(Reply::ok())
}

pub(super) fn add(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, item) = key_and_item(args)?;
    ns.cuckoo(key).add(item)?;
    Ok(Reply::Bool(true))
}

/// A run of `CF.ADD`s: one engine call inserts every item; whatever stops it answers
/// the rest one by one, as they would have been.
pub(super) fn add_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let Some(items) = run.items() else {
        return run.one_by_one(ns);
    };
    let (added, error) = ns.cuckoo(run.key()).add_many(&items);
    run.answered_adds(ns, (vec![true; added], error))
}

pub(super) fn add_nx(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, item) = key_and_item(args)?;
    Ok(Reply::Bool(ns.cuckoo(key).add_nx(item)?))
}

/// A run of `CF.ADDNX`s: one engine call, answering each.
pub(super) fn add_nx_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let Some(items) = run.items() else {
        return run.one_by_one(ns);
    };
    run.answered_adds(ns, ns.cuckoo(run.key()).add_nx_many(&items))
}

/// `CF.INSERT`: RedisBloom's form, or the cuckoo-module design's short `CF.INSERT key
/// item` (one item, the filter created with defaults if missing, answered as `CF.ADD`).
/// A lone option word is RedisBloom's form cut short, answered its arity error as
/// RedisBloom does, never inserted as an item.
pub(super) fn insert(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let mut short = *args;
    let (_, item) = (short.next_key()?, short.next_arg()?);
    let option = [&b"items"[..], b"nocreate", b"capacity"]
        .iter()
        .any(|word| item.eq_ignore_ascii_case(word));
    match short.is_empty() {
        true if option => Err(args.wrong_arity()),
        true => add(ns, args),
        false => insert_common(ns, args, false),
    }
}

pub(super) fn insert_nx(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    insert_common(ns, args, true)
}

/// `CF.INSERT[NX] key [CAPACITY n] [NOCREATE] ITEMS item...`: per item 1 (added), 0
/// (present, NX only) or -1 (no room). In RESP3 `CF.INSERT` answers booleans (false: no
/// room); `CF.INSERTNX` stays integers, as RedisBloom replies. RedisBloom tells the option
/// words by their first letters (`C...` capacity, `N...` nocreate, `I...` items), and so
/// does this.
fn insert_common(ns: &Namespace, args: &mut Args, nx: bool) -> Result<Reply> {
    let key = args.next_key()?;
    if args.len() < 2 {
        return Err(args.wrong_arity());
    }
    let (mut capacity, mut nocreate) = (None, false);
    let items = loop {
        let word = args.next_arg()?;
        match word.first().map(u8::to_ascii_lowercase) {
            Some(b'i') => break args.rest_nonempty()?,
            Some(b'n') => nocreate = true,
            Some(b'c') => {
                let value = parse_i64(args.next_arg()?).ok_or(CuckooError::BadCapacity)?;
                let value = u64::try_from(value)
                    .ok()
                    .filter(|c| (INSERT_MIN_CAPACITY..=MAX_CAPACITY).contains(c))
                    .ok_or(CuckooError::InsertCapacityRange)?;
                capacity = Some(value);
            }
            _ => return Err(CuckooError::UnknownArgument.into()),
        }
    };
    let answers = ns.cuckoo(key).insert(items, capacity, nocreate, nx)?;
    Ok(Reply::Array(
        answers
            .into_iter()
            .map(|a| match nx {
                false => Reply::Bool(a == 1),
                true => Reply::Int(a),
            })
            .collect(),
    ))
}

/// The smallest capacity `CF.INSERT` takes: twice the default bucket size (RedisBloom
/// checks it against its `cf-initial-size` setting's range).
const INSERT_MIN_CAPACITY: u64 = 2 * DEFAULT_BUCKET_SIZE as u64;

pub(super) fn exists(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    super::exists_reply(args, |key, item| {
        let answer = ns.cuckoo(key).mexists(&[item]);
        Ok(super::none_if_wrong_type(answer, 1, false)?[0])
    })
}

/// A run of `CF.EXISTS`: one read of every item.
pub(super) fn exists_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    run.exists(ns, |items| {
        super::none_if_wrong_type(ns.cuckoo(run.key()).mexists(items), items.len(), false)
    })
}

pub(super) fn mexists(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    super::mexists_reply(args, |key, items| {
        super::none_if_wrong_type(ns.cuckoo(key).mexists(items), items.len(), false)
    })
}

pub(super) fn count(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, item) = key_and_item(args)?;
    let answer = ns.cuckoo(key).count(item).map(|n| vec![n]);
    Ok(Reply::Int(
        super::none_if_wrong_type(answer, 1, 0)?[0] as i64,
    ))
}

/// `CF.DEL` (and the cuckoo-module design's `CF.DELETE`).
pub(super) fn del(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, item) = key_and_item(args)?;
    // RedisBloom answers "Not found" for a key of another type too.
    match ns.cuckoo(key).delete(item) {
        Err(Error::WrongType) => Err(CuckooError::DelNotFound.into()),
        answer => Ok(Reply::Bool(answer?)),
    }
}

/// `CF.INFO` (and the cuckoo-module design's `CF.STATS`).
pub(super) fn info(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
    let filter = ns.cuckoo(key);
    let info = filter.info()?;
    let windowed = window::info_fields(filter.window_info()?);
    Ok(Reply::Map(
        fields(&info)
            .into_iter()
            .map(|(name, value)| (name, Reply::Int(value)))
            .chain(windowed)
            .map(|(name, value)| (Reply::Simple(name.to_owned()), value))
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

pub(super) fn scandump(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, cursor) = key_and_cursor(args, CuckooError::InvalidPosition)?;
    args.finish()?;
    if cursor < 0 {
        return Err(CuckooError::InvalidPosition.into());
    }
    // A filter holding no items has nothing to dump: RedisBloom answers [0, nil].
    if ns.cuckoo(key).info()?.inserted == 0 {
        return Ok(Reply::Array(vec![Reply::Int(0), Reply::Nil]));
    }
    let (next, chunk) = ns.cuckoo(key).scandump(cursor)?;
    Ok(Reply::Array(vec![Reply::Int(next), Reply::Bulk(chunk)]))
}

pub(super) fn loadchunk(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, cursor) = key_and_cursor(args, CuckooError::InvalidPosition)?;
    if cursor == 0 {
        return Err(CuckooError::InvalidPosition.into());
    }
    let chunk = args.next_arg()?;
    args.finish()?;
    ns.cuckoo(key).loadchunk(cursor, chunk)?;
    Ok(Reply::ok())
}

/// `CF.DEBUG`: RedisBloom's one-line description of the filter.
pub(super) fn debug(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
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
