//! `BF.*` commands.

use super::parse::{arg_index, parse_f64, parse_i64};
use super::Reply;
use crate::bloom::{BloomInfo, MAX_EXPANSION};
use crate::error::{BloomError, Error, Result};
use crate::store::Namespace;

type Handler = fn(&Namespace, &[Vec<u8>]) -> Result<Reply>;

pub(super) fn handler(name: &str) -> Option<Handler> {
    Some(match name {
        "bf.reserve" => reserve,
        "bf.add" => add,
        "bf.madd" => madd,
        "bf.exists" => exists,
        "bf.mexists" => mexists,
        "bf.card" => card,
        "bf.info" => info,
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
        None => crate::bloom::DEFAULT_EXPANSION,
        Some(_) if nonscaling => return Err(BloomError::NonScalingCannotExpand.into()),
        Some(at) => options
            .get(at + 1)
            .and_then(|v| parse_i64(v))
            .and_then(|v| u32::try_from(v).ok())
            .filter(|v| *v <= MAX_EXPANSION)
            .ok_or(BloomError::BadExpansion)?,
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
    match (added.is_empty(), error) {
        // A key of another type fails the whole command, as in RedisBloom.
        (true, Some(Error::WrongType)) => Err(Error::WrongType),
        (_, error) => {
            let mut replies: Vec<Reply> = added.into_iter().map(Reply::Bool).collect();
            replies.extend(error.map(|e| Reply::error(&e)));
            Ok(Reply::Array(replies))
        }
    }
}

fn exists(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    let [_, key, item] = args else {
        return Ok(Reply::wrong_arity("bf.exists"));
    };
    Ok(Reply::Bool(ns.bloom(key).exists(item)?))
}

fn mexists(ns: &Namespace, args: &[Vec<u8>]) -> Result<Reply> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity("bf.mexists"));
    }
    let found = ns.bloom(&args[1]).mexists(&args[2..])?;
    Ok(Reply::Array(found.into_iter().map(Reply::Bool).collect()))
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
    let info = ns.bloom(&args[1]).info()?;
    let fields = fields(&info);
    match args.get(2) {
        None => Ok(Reply::Map(
            fields
                .into_iter()
                .map(|(name, value)| (Reply::Simple(name.to_owned()), value))
                .collect(),
        )),
        Some(wanted) => {
            let short = ["CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION"];
            let at = short
                .iter()
                .position(|s| wanted.eq_ignore_ascii_case(s.as_bytes()))
                .ok_or_else(|| Error::InvalidArgument("Invalid information value".to_owned()))?;
            Ok(Reply::Array(vec![fields[at].1.clone()]))
        }
    }
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
