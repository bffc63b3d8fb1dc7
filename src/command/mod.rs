//! RedisBloom's commands over a [`Namespace`], independent of the wire protocol: each
//! command returns a [`Reply`] that the RESP host encodes for RESP2 or RESP3. Tests
//! replay recorded RedisBloom transcripts through [`execute`] directly.

pub mod batch;
mod bloom;
mod cms;
pub mod parse;

pub use batch::execute_pipeline;

use crate::error::Error;
use crate::store::Namespace;

/// A reply, before it is encoded for a protocol version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A simple string (`+OK`).
    Simple(String),
    /// An integer.
    Int(i64),
    /// A bulk string.
    Bulk(Vec<u8>),
    /// The null reply.
    Nil,
    /// An error reply (the text as sent, with its prefix, if any).
    Error(String),
    /// An array.
    Array(Vec<Reply>),
    /// A map in RESP3; a flat array of keys and values in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// A boolean in RESP3; the integer 1 or 0 in RESP2.
    Bool(bool),
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Simple("OK".to_owned())
    }

    /// An error reply carrying an engine error's text.
    pub fn error(err: &Error) -> Reply {
        Reply::Error(err.to_string())
    }

    /// Redis's reply to a wrong number of arguments.
    pub fn wrong_arity(name: &str) -> Reply {
        Reply::Error(format!(
            "ERR wrong number of arguments for '{}' command",
            name.to_ascii_lowercase()
        ))
    }
}

impl From<Result<Reply, Error>> for Reply {
    fn from(result: Result<Reply, Error>) -> Reply {
        result.unwrap_or_else(|err| Reply::error(&err))
    }
}

/// Runs one command (`args[0]` is its name) against `ns`. Never panics on any input:
/// unknown commands and bad arguments are error replies.
pub fn execute(ns: &Namespace, args: &[Vec<u8>]) -> Reply {
    let Some(name) = args.first() else {
        return Reply::Error("ERR empty command".to_owned());
    };
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    match cms::handler(&lower).or_else(|| bloom::handler(&lower)) {
        Some(handler) => handler(ns, args).into(),
        None => unknown_command(args),
    }
}

/// Redis's reply to an unknown command: the name and the first arguments, each quoted
/// and followed by a space, cut at about 128 characters.
fn unknown_command(args: &[Vec<u8>]) -> Reply {
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
