//! RedisBloom's commands over a [`Namespace`], independent of the wire protocol: each
//! command returns a [`Reply`] that the RESP host encodes for RESP2 or RESP3. Tests
//! replay recorded RedisBloom transcripts through [`execute`] directly.

pub mod args;
pub mod batch;
mod bloom;
mod cms;
mod cuckoo;
mod hll;
pub mod parse;
mod ribbon;
pub mod table;
mod tdigest;
mod topk;
mod window;
mod wire;

pub use batch::execute_pipeline;

use crate::error::{Error, Result};
use crate::store::Namespace;
use args::Args;
use table::SKETCHES;

pub use rocksketch_resp::Reply;

/// A command's result as its reply: an engine error becomes an error reply.
pub fn reply(result: Result<Reply>) -> Reply {
    result.unwrap_or_else(|err| Reply::from(&err))
}

/// Runs one RedisBloom command (`request[0]` is its name) against `ns`. Never panics on
/// any input: unknown commands (the host's own among them) and bad arguments are error
/// replies.
pub fn execute(ns: &Namespace, request: &[Vec<u8>]) -> Reply {
    let Some(name) = request.first() else {
        return Reply::Error("ERR empty command".to_owned());
    };
    match SKETCHES.lookup(name) {
        Some(spec) if !spec.arity_ok(request.len()) => Reply::wrong_arity(spec.name),
        Some(spec) => reply((spec.handler)(ns, &mut Args::new(spec.name, request))),
        None => unknown_command(request),
    }
}

/// `cmd key item`: the key and the item.
fn key_and_item<'a>(args: &mut Args<'a>) -> Result<(&'a [u8], &'a [u8])> {
    let key = args.next_key()?;
    let item = args.next_arg()?;
    args.finish()?;
    Ok((key, item))
}

/// `cmd key cursor ...`: the key and the cursor, an integer or `bad`.
fn key_and_cursor<'a>(args: &mut Args<'a>, bad: impl Into<Error>) -> Result<(&'a [u8], i64)> {
    let key = args.next_key()?;
    let cursor = args.next_i64(bad)?;
    Ok((key, cursor))
}

/// `cmd key arg [arg ...]`: a key and the one or more arguments after it (items,
/// values), read by the command once the key is checked.
#[derive(Clone, Copy)]
struct KeyAndList<'a> {
    key: &'a [u8],
    list: &'a [Vec<u8>],
}

impl<'a> KeyAndList<'a> {
    fn parse(args: &mut Args<'a>) -> Result<KeyAndList<'a>> {
        let key = args.next_key()?;
        let list = args.rest_nonempty()?;
        Ok(KeyAndList { key, list })
    }

    /// `cmd key item value [item value ...]`: the list, in pairs.
    fn pairs(args: &mut Args<'a>) -> Result<KeyAndList<'a>> {
        let parsed = KeyAndList::parse(args)?;
        match parsed.list.len() % 2 {
            0 => Ok(parsed),
            _ => Err(args.wrong_arity()),
        }
    }
}

/// The names (lower case) of the commands [`execute`] answers, in the table's order.
pub fn commands() -> impl Iterator<Item = &'static str> {
    SKETCHES.rows().iter().map(|spec| spec.name)
}

/// `<filter>.EXISTS key item`: whether the item may be present.
fn exists_reply(
    args: &mut Args,
    exists: impl FnOnce(&[u8], &[u8]) -> Result<bool>,
) -> Result<Reply> {
    let (key, item) = key_and_item(args)?;
    Ok(Reply::Bool(exists(key, item)?))
}

/// A Bloom or cuckoo filter's membership answers for a key of another type: RedisBloom
/// reads such a key as empty (`BF.EXISTS`, `BF.MEXISTS`, `CF.EXISTS`, `CF.MEXISTS`,
/// `CF.COUNT` answer 0, not `WRONGTYPE`).
fn none_if_wrong_type<T: Clone>(answer: Result<Vec<T>>, n: usize, none: T) -> Result<Vec<T>> {
    match answer {
        Err(Error::WrongType) => Ok(vec![none; n]),
        answer => answer,
    }
}

/// `<filter>.MEXISTS key item [item ...]`: per item, whether it may be present.
fn mexists_reply(
    args: &mut Args,
    mexists: impl FnOnce(&[u8], &[Vec<u8>]) -> Result<Vec<bool>>,
) -> Result<Reply> {
    let KeyAndList { key, list } = KeyAndList::parse(args)?;
    let found = mexists(key, list)?;
    Ok(Reply::Array(found.into_iter().map(Reply::Bool).collect()))
}

/// A filter's `INFO key [FIELD]` reply: every field as a map, or the one `FIELD` names
/// (its short name in `short`, in `fields`' order) as a one-element array.
fn info_reply(
    fields: Vec<(&'static str, Reply)>,
    short: &[&str],
    wanted: Option<&[u8]>,
) -> Result<Reply> {
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
        .map(|(name, value)| Reply::Field(Box::new((Reply::Simple(name.to_owned()), value))))
        .ok_or_else(|| crate::error::BloomError::InvalidInformation.into())
}

/// Redis's reply to an unknown command: the name and the first arguments, each quoted
/// and followed by a space, cut at about 128 characters.
pub fn unknown_command(request: &[Vec<u8>]) -> Reply {
    let Some((name, args)) = request.split_first() else {
        return Reply::Error("ERR empty command".to_owned());
    };
    let name: String = String::from_utf8_lossy(name).chars().take(128).collect();
    let mut rest = String::new();
    for arg in args {
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
