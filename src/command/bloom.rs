//! `BF.*` commands.

use super::args::Args;
use super::batch::Run;
use super::parse::{arg_index, parse_f64, parse_i64};
use super::{key_and_cursor, key_and_item};
use super::{window, KeyAndList, Reply};
use crate::bloom::{
    BloomInfo, DEFAULT_CAPACITY, DEFAULT_ERROR, DEFAULT_EXPANSION, MAX_CAPACITY, MAX_EXPANSION,
};
use crate::error::{BloomError, Error, Result};
use crate::store::Namespace;

/// `BF.RESERVE key error capacity [EXPANSION n] [NONSCALING]`, checked in RedisBloom's
/// order. Like RedisBloom, it looks for each option word anywhere among the arguments
/// (the key and the numbers too) and passes over any other word.
pub(super) fn reserve(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (all, window) = window::split(args.command(), { *args }.rest(), 3)?;
    let args = &mut Args::of(args.command(), all);
    if all.len() > 6 {
        return Err(args.wrong_arity());
    }
    let key = args.next_key()?;
    let error = args.next_f64(BloomError::BadErrorRate)?;
    if !(error > 0.0 && error < 1.0) {
        return Err(BloomError::ErrorRateRange.into());
    }
    let capacity = args.next_i64(BloomError::BadCapacity)?;
    let capacity = u64::try_from(capacity)
        .ok()
        .filter(|c| (1..=MAX_CAPACITY).contains(c))
        .ok_or(BloomError::CapacityRange)?;
    let nonscaling = arg_index("NONSCALING", all).is_some();
    let expansion = match arg_index("EXPANSION", all) {
        None => DEFAULT_EXPANSION,
        Some(at) => {
            let value = all.get(at + 1).ok_or(BloomError::NoExpansion)?;
            let expansion = parse_i64(value).ok_or(BloomError::BadExpansion)?;
            if expansion != 0 && nonscaling {
                return Err(BloomError::NonScalingCannotExpand.into());
            }
            u32::try_from(expansion)
                .ok()
                .filter(|e| *e <= MAX_EXPANSION)
                .ok_or(BloomError::ExpansionRange)?
        }
    };
    let expansion = if nonscaling { 0 } else { expansion };
    match window {
        None => ns.bloom(key).reserve(error, capacity, expansion)?,
        Some(window) => ns
            .bloom(key)
            .reserve_windowed(error, capacity, expansion, window)?,
    }
    Ok(Reply::ok())
}

pub(super) fn add(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, item) = key_and_item(args)?;
    Ok(Reply::Bool(ns.bloom(key).add(item)?))
}

/// A run of `BF.ADD`s: one engine call adds every item, answering each.
pub(super) fn add_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let Some(items) = run.items() else {
        return run.one_by_one(ns);
    };
    run.answered_adds(ns, ns.bloom(run.key()).madd(&items))
}

pub(super) fn madd(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let KeyAndList { key, list } = KeyAndList::parse(args)?;
    let (added, error) = ns.bloom(key).madd(list);
    madd_reply(added, error)
}

/// BF.MADD's and BF.INSERT's reply: one boolean per item added, then the error that
/// stopped the run, if any; a key of another type fails the whole command.
fn madd_reply(added: Vec<bool>, error: Option<Error>) -> Result<Reply> {
    match (added.is_empty(), error) {
        (true, Some(Error::WrongType)) => Err(Error::WrongType),
        (_, error) => {
            let mut replies: Vec<Reply> = added.into_iter().map(Reply::Bool).collect();
            replies.extend(error.map(|e| Reply::from(&e)));
            Ok(Reply::Array(replies))
        }
    }
}

/// `BF.INSERT key [CAPACITY n] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS
/// item [item ...]`, options in any order. RedisBloom tells the option words by their
/// first letters (`I...` items, `ER...` error, `E...` expansion, `C...` capacity, `N?C...`
/// nocreate, `N...` nonscaling), and so does this.
pub(super) fn insert(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let (mut error, mut capacity) = (DEFAULT_ERROR, DEFAULT_CAPACITY);
    let (mut expansion, mut nocreate, mut nonscaling) = (DEFAULT_EXPANSION, false, false);
    let items = loop {
        let word = args.next_arg()?;
        let letter = |i: usize| word.get(i).map_or(0, u8::to_ascii_lowercase);
        match letter(0) {
            b'i' => break args.rest_nonempty()?,
            b'e' if letter(1) == b'r' => {
                error = parse_f64(args.next_arg()?)
                    .filter(|e| *e > 0.0 && *e < 1.0)
                    .ok_or(BloomError::InsertBadErrorRate)?;
            }
            b'e' => {
                expansion = parse_i64(args.next_arg()?)
                    .and_then(|e| u32::try_from(e).ok())
                    .filter(|e| *e <= MAX_EXPANSION)
                    .ok_or(BloomError::InsertBadExpansion)?;
            }
            b'c' => {
                capacity = parse_i64(args.next_arg()?)
                    .and_then(|c| u64::try_from(c).ok())
                    .filter(|c| (1..=MAX_CAPACITY).contains(c))
                    .ok_or(BloomError::InsertBadCapacity)?;
            }
            b'n' if letter(2) == b'c' => nocreate = true,
            b'n' => nonscaling = true,
            _ => return Err(BloomError::UnknownArgument.into()),
        }
    };
    let expansion = if nonscaling { 0 } else { expansion };
    let create = (!nocreate).then_some((error, capacity, expansion));
    let (added, failed) = ns.bloom(key).insert(items, create)?;
    madd_reply(added, failed)
}

/// `BF.SCANDUMP key iterator`: the key is checked before the iterator, as RedisBloom does.
pub(super) fn scandump(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let cursor = args.next_arg()?;
    args.finish()?;
    let filter = ns.bloom(key);
    let Some(cursor) = parse_i64(cursor) else {
        filter.info()?;
        return Err(BloomError::ScanDumpNotNumeric.into());
    };
    let (next, chunk) = filter.scandump(cursor)?;
    Ok(Reply::Array(vec![Reply::Int(next), Reply::Bulk(chunk)]))
}

pub(super) fn loadchunk(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let (key, cursor) = key_and_cursor(args, BloomError::LoadChunkNotNumeric)?;
    let chunk = args.next_arg()?;
    args.finish()?;
    ns.bloom(key).loadchunk(cursor, chunk)?;
    Ok(Reply::ok())
}

pub(super) fn exists(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    super::exists_reply(args, |key, item| {
        let answer = ns.bloom(key).mexists(&[item]);
        Ok(super::none_if_wrong_type(answer, 1, false)?[0])
    })
}

/// A run of `BF.EXISTS`: one read of every item.
pub(super) fn exists_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    run.exists(ns, |items| {
        super::none_if_wrong_type(ns.bloom(run.key()).mexists(items), items.len(), false)
    })
}

pub(super) fn mexists(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    super::mexists_reply(args, |key, items| {
        super::none_if_wrong_type(ns.bloom(key).mexists(items), items.len(), false)
    })
}

pub(super) fn card(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
    Ok(Reply::Int(ns.bloom(key).card()? as i64))
}

/// `BF.INFO key [CAPACITY | SIZE | FILTERS | ITEMS | EXPANSION]`.
pub(super) fn info(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let wanted = args.next_opt();
    args.finish()?;
    let filter = ns.bloom(key);
    let mut fields = fields(&filter.info()?);
    fields.extend(window::info_fields(filter.window_info()?));
    let short = ["CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"];
    super::info_reply(fields, &short, wanted)
}

fn fields(info: &BloomInfo) -> Vec<(&'static str, Reply)> {
    vec![
        ("Capacity", Reply::Int(info.capacity as i64)),
        ("Size", Reply::Int(info.size as i64)),
        ("Number of filters", Reply::Int(i64::from(info.filters))),
        ("Number of items inserted", Reply::Int(info.items as i64)),
        (
            "Expansion rate",
            info.expansion
                .map_or(Reply::Nil, |e| Reply::Int(i64::from(e))),
        ),
    ]
}

/// `BF.DEBUG`: RedisBloom's strings, `size:<items>` then one per sub-filter.
pub(super) fn debug(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
    let (size, subs) = ns.bloom(key).debug()?;
    let mut out = vec![Reply::Bulk(format!("size:{size}").into_bytes())];
    out.extend(subs.iter().map(|s| {
        Reply::Bulk(
            format!(
                "bytes:{} bits:{} hashes:{} hashwidth:64 capacity:{} size:{} ratio:{}",
                s.bytes,
                s.bits,
                s.hashes,
                s.capacity,
                s.items,
                printf_g(s.error)
            )
            .into_bytes(),
        )
    }));
    Ok(Reply::Array(out))
}

/// C's `printf("%g")`: 6 significant digits, trailing zeros dropped, scientific
/// notation (two-digit exponent at least) below 1e-4 or from 1e6.
pub(crate) fn printf_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let scientific = format!("{x:.5e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            s.to_owned()
        }
    };
    if (-4..6).contains(&exponent) {
        let decimals = (5 - exponent).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::printf_g;

    #[test]
    fn printf_g_matches_c() {
        for (x, want) in [
            (0.01, "0.01"),
            (0.005, "0.005"),
            (0.0025, "0.0025"),
            (0.000625, "0.000625"),
            (7.8125e-5, "7.8125e-05"),
            (1.0 / 3.0, "0.333333"),
            (0.1, "0.1"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (1e-10, "1e-10"),
            (0.00012345678, "0.000123457"),
        ] {
            assert_eq!(printf_g(x), want, "{x}");
        }
    }
}
