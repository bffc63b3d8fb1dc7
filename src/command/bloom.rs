//! `BF.*` commands.

use super::parse::{arg_index, parse_f64, parse_i64};
use super::Reply;
use crate::bloom::{BloomInfo, DEFAULT_CAPACITY, DEFAULT_ERROR, DEFAULT_EXPANSION, MAX_EXPANSION};
use crate::error::{BloomError, Error, Result};
use crate::store::Namespace;

type Handler = fn(&Namespace, &[Vec<u8>]) -> Result<Reply>;

pub(super) fn handler(name: &str) -> Option<Handler> {
    Some(match name {
        "bf.reserve" => reserve,
        "bf.add" => add,
        "bf.madd" => madd,
        "bf.insert" => insert,
        "bf.scandump" => scandump,
        "bf.loadchunk" => loadchunk,
        "bf.exists" => exists,
        "bf.mexists" => mexists,
        "bf.card" => card,
        "bf.info" => info,
        "bf.debug" => debug,
        _ => return None,
    })
}

fn reserve(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 4 {
        return Ok(Reply::wrong_arity("bf.reserve"));
    }
    let error = parse_f64(&args[2]).ok_or(BloomError::BadErrorRate)?;
    let capacity = parse_i64(&args[3]).ok_or(BloomError::BadCapacity)?;
    if !(error > 0.0 && error < 1.0) {
        return Err(BloomError::ErrorRateRange.into());
    }
    let capacity = u64::try_from(capacity).map_err(|_| BloomError::CapacityRange)?;
    let options = &args[4..];
    let nonscaling = arg_index("NONSCALING", options).is_some();
    let expansion = match arg_index("EXPANSION", options) {
        None => DEFAULT_EXPANSION,
        Some(_) if nonscaling => return Err(BloomError::NonScalingCannotExpand.into()),
        Some(at) => parse_expansion(options.get(at + 1))?,
    };
    let expansion = if nonscaling { 0 } else { expansion };
    ns.bloom(&args[1]).reserve(error, capacity, expansion)?;
    Ok(Reply::ok())
}

fn add(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, item] = args else {
        return Ok(Reply::wrong_arity("bf.add"));
    };
    Ok(Reply::Bool(ns.bloom(key).add(item)?))
}

fn madd(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("bf.madd"));
    }
    let (added, error) = ns.bloom(&args[1]).madd(&args[2..]);
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

fn insert(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 4 {
        return Ok(Reply::wrong_arity("bf.insert"));
    }
    let (mut error, mut capacity) = (DEFAULT_ERROR, DEFAULT_CAPACITY);
    let (mut expansion, mut nocreate, mut nonscaling) = (None, false, false);
    let mut at = 2;
    let items = loop {
        let Some(word) = args.get(at) else {
            return Ok(Reply::wrong_arity("bf.insert"));
        };
        let value = args.get(at + 1);
        match word.to_ascii_uppercase().as_slice() {
            b"ITEMS" if args.len() > at + 1 => break &args[at + 1..],
            b"ITEMS" => return Ok(Reply::wrong_arity("bf.insert")),
            b"NOCREATE" => nocreate = true,
            b"NONSCALING" => nonscaling = true,
            b"CAPACITY" => {
                capacity = value
                    .and_then(|v| parse_i64(v))
                    .and_then(|v| u64::try_from(v).ok())
                    .ok_or(BloomError::BadCapacity)?;
                at += 1;
            }
            b"ERROR" => {
                error = value
                    .and_then(|v| parse_f64(v))
                    .ok_or(BloomError::BadErrorRate)?;
                at += 1;
            }
            b"EXPANSION" => {
                expansion = Some(parse_expansion(value)?);
                at += 1;
            }
            _ => {
                return Err(Error::InvalidArgument(
                    "Unknown argument received".to_owned(),
                ))
            }
        }
        at += 1;
    };
    if nonscaling && expansion.is_some() {
        return Err(BloomError::NonScalingCannotExpand.into());
    }
    let expansion = if nonscaling {
        0
    } else {
        expansion.unwrap_or(DEFAULT_EXPANSION)
    };
    let create = (!nocreate).then_some((error, capacity, expansion));
    let (added, failed) = ns.bloom(&args[1]).insert(items, create)?;
    madd_reply(added, failed)
}

fn scandump(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, cursor] = args else {
        return Ok(Reply::wrong_arity("bf.scandump"));
    };
    let cursor = parse_i64(cursor).ok_or_else(invalid_position)?;
    let (next, chunk) = ns.bloom(key).scandump(cursor)?;
    Ok(Reply::Array(vec![Reply::Int(next), Reply::Bulk(chunk)]))
}

fn loadchunk(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, cursor, chunk] = args else {
        return Ok(Reply::wrong_arity("bf.loadchunk"));
    };
    let cursor = parse_i64(cursor).ok_or_else(invalid_position)?;
    ns.bloom(key).loadchunk(cursor, chunk)?;
    Ok(Reply::ok())
}

fn invalid_position() -> Error {
    Error::from(BloomError::InvalidPosition)
}

fn exists(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    super::exists_reply("bf.exists", args, |key, item| ns.bloom(key).exists(item))
}

fn mexists(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    super::mexists_reply("bf.mexists", args, |key, items| {
        ns.bloom(key).mexists(items)
    })
}

fn card(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity("bf.card"));
    };
    Ok(Reply::Int(ns.bloom(key).card()? as i64))
}

fn info(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if !(2..=3).contains(&args.len()) {
        return Ok(Reply::wrong_arity("bf.info"));
    }
    let fields = fields(&ns.bloom(&args[1]).info()?);
    let short = ["CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"];
    super::info_reply(fields, &short, args.get(2))
}

fn parse_expansion(value: Option<&Vec<u8>>) -> Result<u32> {
    Ok(value
        .and_then(|v| parse_i64(v))
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| *v <= MAX_EXPANSION)
        .ok_or(BloomError::BadExpansion)?)
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
fn debug(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key] = args else {
        return Ok(Reply::wrong_arity("bf.debug"));
    };
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
