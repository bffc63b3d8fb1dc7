//! RedisBloom's commands over a [`Namespace`], independent of the wire protocol: each
//! command returns a [`Reply`] that the RESP host encodes for RESP2 or RESP3. Tests
//! replay recorded RedisBloom transcripts through [`execute`] directly.

pub(crate) mod batch;
mod bloom;
mod cms;
mod cuckoo;
pub(crate) mod parse;
mod ribbon;
mod tdigest;
mod topk;
mod wire;

pub use batch::execute_pipeline;

use crate::error::Error;
use crate::store::Namespace;

pub use rocksketch_resp::Reply;

/// A command's result as its reply: an engine error becomes an error reply.
fn reply(result: Result<Reply, Error>) -> Reply {
    result.unwrap_or_else(|err| Reply::from(&err))
}

/// Runs one command (`args[0]` is its name) against `ns`. Never panics on any input:
/// unknown commands and bad arguments are error replies.
pub fn execute(ns: &Namespace, args: &[Vec<u8>]) -> Reply {
    let Some(name) = args.first() else {
        return Reply::Error("ERR empty command".to_owned());
    };
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    match cms::handler(&lower)
        .or_else(|| bloom::handler(&lower))
        .or_else(|| cuckoo::handler(&lower))
        .or_else(|| tdigest::handler(&lower))
        .or_else(|| topk::handler(&lower))
        .or_else(|| ribbon::handler(&lower))
    {
        Some(handler) => reply(handler(ns, args)),
        None => unknown_command(args),
    }
}

/// `<filter>.EXISTS key item`: whether the item may be present.
fn exists_reply(
    name: &str,
    args: &[Vec<u8>],
    exists: impl FnOnce(&[u8], &[u8]) -> Result<bool, Error>,
) -> Result<Reply, Error> {
    let [_, key, item] = args else {
        return Ok(Reply::wrong_arity(name));
    };
    Ok(Reply::Bool(exists(key, item)?))
}

/// `<filter>.MEXISTS key item [item ...]`: per item, whether it may be present.
fn mexists_reply(
    name: &str,
    args: &[Vec<u8>],
    mexists: impl FnOnce(&[u8], &[Vec<u8>]) -> Result<Vec<bool>, Error>,
) -> Result<Reply, Error> {
    if args.len() < 3 {
        return Ok(Reply::wrong_arity(name));
    }
    let found = mexists(&args[1], &args[2..])?;
    Ok(Reply::Array(found.into_iter().map(Reply::Bool).collect()))
}

/// A filter's `INFO key [FIELD]` reply: every field as a map, or the one `FIELD` names
/// (its short name in `short`, in `fields`' order) as a one-element array.
fn info_reply(
    fields: Vec<(&'static str, Reply)>,
    short: &[&str],
    wanted: Option<&Vec<u8>>,
) -> Result<Reply, Error> {
    let Some(wanted) = wanted else {
        return Ok(Reply::Map(
            fields
                .into_iter()
                .map(|(name, value)| (Reply::Simple(name.to_owned()), value))
                .collect(),
        ));
    };
    short
        .iter()
        .position(|s| wanted.eq_ignore_ascii_case(s.as_bytes()))
        .and_then(|at| fields.into_iter().nth(at))
        .map(|(_, value)| Reply::Array(vec![value]))
        .ok_or_else(|| Error::InvalidArgument("Invalid information value".to_owned()))
}

/// Redis's reply to an unknown command: the name and the first arguments, each quoted
/// and followed by a space, cut at about 128 characters.
pub(crate) fn unknown_command(args: &[Vec<u8>]) -> Reply {
    let name: String = String::from_utf8_lossy(&args[0])
        .chars()
        .take(128)
        .collect();
    let mut rest = String::new();
    for arg in &args[1..] {
        if rest.len() >= 128 {
            break;
        }
        let room = 128 - rest.len();
        let arg: String = String::from_utf8_lossy(arg).chars().take(room).collect();
        rest.push_str(&format!("'{arg}' "));
    }
    Reply::Error(format!(
        "ERR unknown command '{name}', with args beginning with: {rest}"
    ))
}
