//! The RESP wire format: [`Reply`]s and their encoding for RESP2 or RESP3, and an
//! incremental parser for requests (multi-bulk arrays and inline commands) with size
//! limits, so a hostile client can neither crash the host nor make it buffer without
//! bound. No I/O and no storage here, so the parser can be fuzzed on its own.

#![warn(missing_docs)]

mod double;
mod inbox;
mod inline;
pub mod stream;

pub use inbox::{Inbox, Request};

/// Splits a line into arguments as Redis does (`sdssplitargs`: white space, `"..."` with
/// escapes, `'...'`), for inline commands and `redis.conf`-style files; `None` for a
/// quote left open.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    inline::split(line)
}

pub use double::format_double;

use std::fmt;

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
    /// A set in RESP3; an array in RESP2 (`CLIENT TRACKINGINFO`'s flags).
    Set(Vec<Reply>),
    /// A map in RESP3; a flat array of keys and values in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// One named value: a map of one entry in RESP3, an array of just the value in
    /// RESP2 (RedisBloom's `BF.INFO key FIELD`).
    Field(Box<(Reply, Reply)>),
    /// A boolean in RESP3; the integer 1 or 0 in RESP2.
    Bool(bool),
    /// The null array (`*-1` in RESP2, `_` in RESP3): `EXEC` of a transaction a
    /// `WATCH`ed key's change aborted.
    NullArray,
    /// A double, as Redis prints it ([`format_double`]): a RESP3 double, a bulk string
    /// in RESP2. Built with [`Reply::double`].
    Double(String),
    /// Text for people (`CLUSTER INFO`, `CLUSTER NODES`): a RESP3 verbatim string of
    /// format `txt`, a bulk string in RESP2.
    Verbatim(Vec<u8>),
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Simple("OK".to_owned())
    }

    /// A double reply of `value`.
    pub fn double(value: f64) -> Reply {
        Reply::Double(format_double(value))
    }

    /// Redis's reply to a wrong number of arguments.
    pub fn wrong_arity(name: &str) -> Reply {
        Reply::Error(format!(
            "ERR wrong number of arguments for '{}' command",
            name.to_ascii_lowercase()
        ))
    }
}

/// The protocol version a connection speaks (`HELLO 2` / `HELLO 3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2: maps, sets, doubles and booleans are sent as arrays, bulk strings and
    /// integers.
    Resp2,
    /// RESP3: every reply in its own type.
    Resp3,
}

/// Appends `reply` to `out` in the connection's protocol.
pub fn encode(reply: &Reply, protocol: Protocol, out: &mut Vec<u8>) {
    match reply {
        Reply::Simple(s) => line(out, b'+', s.as_bytes()),
        Reply::Error(e) => line(out, b'-', e.as_bytes()),
        Reply::Int(i) => line(out, b':', i.to_string().as_bytes()),
        Reply::Bulk(b) => {
            line(out, b'$', b.len().to_string().as_bytes());
            out.extend_from_slice(b);
            out.extend_from_slice(b"\r\n");
        }
        Reply::Nil => match protocol {
            Protocol::Resp2 => out.extend_from_slice(b"$-1\r\n"),
            Protocol::Resp3 => out.extend_from_slice(b"_\r\n"),
        },
        Reply::NullArray => match protocol {
            Protocol::Resp2 => out.extend_from_slice(b"*-1\r\n"),
            Protocol::Resp3 => out.extend_from_slice(b"_\r\n"),
        },
        Reply::Bool(b) => match protocol {
            Protocol::Resp2 => line(out, b':', if *b { b"1" } else { b"0" }),
            Protocol::Resp3 => line(out, b'#', if *b { b"t" } else { b"f" }),
        },
        Reply::Double(text) => match protocol {
            Protocol::Resp2 => encode(&Reply::Bulk(text.as_bytes().to_vec()), protocol, out),
            Protocol::Resp3 => line(out, b',', text.as_bytes()),
        },
        Reply::Verbatim(text) => match protocol {
            Protocol::Resp2 => encode(&Reply::Bulk(text.clone()), protocol, out),
            Protocol::Resp3 => {
                line(out, b'=', (text.len() + 4).to_string().as_bytes());
                out.extend_from_slice(b"txt:");
                out.extend_from_slice(text);
                out.extend_from_slice(b"\r\n");
            }
        },
        Reply::Array(items) => {
            line(out, b'*', items.len().to_string().as_bytes());
            for item in items {
                encode(item, protocol, out);
            }
        }
        Reply::Set(items) => {
            let kind = match protocol {
                Protocol::Resp2 => b'*',
                Protocol::Resp3 => b'~',
            };
            line(out, kind, items.len().to_string().as_bytes());
            for item in items {
                encode(item, protocol, out);
            }
        }
        Reply::Field(pair) => match protocol {
            Protocol::Resp2 => {
                line(out, b'*', b"1");
                encode(&pair.1, protocol, out);
            }
            Protocol::Resp3 => {
                line(out, b'%', b"1");
                encode(&pair.0, protocol, out);
                encode(&pair.1, protocol, out);
            }
        },
        Reply::Map(pairs) => {
            match protocol {
                Protocol::Resp2 => line(out, b'*', (2 * pairs.len()).to_string().as_bytes()),
                Protocol::Resp3 => line(out, b'%', pairs.len().to_string().as_bytes()),
            }
            for (k, v) in pairs {
                encode(k, protocol, out);
                encode(v, protocol, out);
            }
        }
    }
}

/// Appends a request in the multi-bulk form clients send (`*N`, then `$len` and the
/// bytes of each argument): what a client or a test writes to a server.
pub fn encode_request<A: AsRef<[u8]>>(args: &[A], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for arg in args {
        let arg = arg.as_ref();
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

fn line(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    // A simple string or error must not break the line it is sent on.
    out.extend(
        body.iter()
            .map(|b| if *b == b'\r' || *b == b'\n' { b' ' } else { *b }),
    );
    out.extend_from_slice(b"\r\n");
}

/// Limits on what one request may hold (Redis's defaults).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest bulk string (Redis's `proto-max-bulk-len`, 512 MiB).
    pub max_bulk: usize,
    /// Most arguments in one command.
    pub max_args: usize,
    /// Longest inline command or header line.
    pub max_inline: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bulk: 512 << 20,
            max_args: 1 << 20,
            max_inline: 64 << 10,
        }
    }
}

/// A request that breaks the protocol; the host answers it and closes the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ERR Protocol error: {}", self.0)
    }
}

/// A parsed request and the bytes it took; `None` while more bytes are needed.
pub type Parsed = Result<Option<(Vec<Vec<u8>>, usize)>, ProtocolError>;

/// Parses one request from the start of `buf`: `Ok(None)` if more bytes are needed,
/// else the arguments and how many bytes they took. An empty inline line yields an
/// empty argument list, which the caller skips.
pub fn parse(buf: &[u8], limits: &Limits) -> Parsed {
    RequestParser::new(*limits).next(buf)
}

/// An incremental request parser for one connection. While a multi-bulk request is
/// incomplete it keeps the arguments already read, so a request that arrives in many
/// pieces costs time in proportion to its size, not to its size times its pieces.
///
/// Call [`RequestParser::next`] with the unconsumed bytes each time more arrive; the
/// bytes must start where the previous call's request started, until a request is
/// returned (then the caller drops the bytes it took).
#[derive(Debug)]
pub struct RequestParser {
    limits: Limits,
    partial: Option<Partial>,
}

/// A multi-bulk request read up to `at` (an offset from the request's first byte).
#[derive(Debug)]
struct Partial {
    count: usize,
    args: Vec<Vec<u8>>,
    at: usize,
}

impl RequestParser {
    /// A parser that refuses requests past `limits`.
    pub fn new(limits: Limits) -> RequestParser {
        RequestParser {
            limits,
            partial: None,
        }
    }

    /// Replaces the limits, for the requests after the one in progress.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The next request at the start of `buf` (see [`parse`]).
    pub fn next(&mut self, buf: &[u8]) -> Parsed {
        let result = match (buf.first(), self.partial.take()) {
            (None, _) => Ok(None),
            (Some(b'*'), partial) => self.multibulk(buf, partial),
            (Some(_), _) => parse_inline(buf, &self.limits),
        };
        if result.is_err() {
            self.partial = None;
        }
        result
    }

    fn multibulk(&mut self, buf: &[u8], partial: Option<Partial>) -> Parsed {
        let limits = self.limits;
        let mut partial = match partial {
            Some(partial) => partial,
            None => {
                let Some((header, at)) = read_line(buf, 0, &limits)? else {
                    return Ok(None);
                };
                let count = parse_count(&header[1..], "multibulk")?;
                if count > limits.max_args as i64 {
                    return Err(ProtocolError("invalid multibulk length".to_owned()));
                }
                let count = count.max(0) as usize;
                Partial {
                    count,
                    args: Vec::with_capacity(count.min(1024)),
                    at,
                }
            }
        };
        while partial.args.len() < partial.count {
            match read_bulk(buf, partial.at, &limits)? {
                Some((arg, next)) => {
                    partial.args.push(arg);
                    partial.at = next;
                }
                None => {
                    self.partial = Some(partial);
                    return Ok(None);
                }
            }
        }
        Ok(Some((partial.args, partial.at)))
    }
}

/// Finds the line starting at `at`; `Ok(None)` if it is not complete yet.
fn read_line<'a>(
    buf: &'a [u8],
    at: usize,
    limits: &Limits,
) -> Result<Option<(&'a [u8], usize)>, ProtocolError> {
    let rest = buf.get(at..).unwrap_or_default();
    // A line over the limit is refused whether or not its end has arrived, so that
    // the answer does not depend on how the bytes were cut into reads.
    match rest.windows(2).position(|w| w == b"\r\n") {
        Some(end) if end <= limits.max_inline => Ok(Some((&rest[..end], at + end + 2))),
        None if rest.len() <= limits.max_inline => Ok(None),
        _ => Err(ProtocolError("too big inline request".to_owned())),
    }
}

/// A length as `i64`'s `FromStr` reads it (an optional sign, then at least one digit,
/// no overflow), without the UTF-8 check and the generic parser: one runs per argument.
fn parse_count(text: &[u8], what: &str) -> Result<i64, ProtocolError> {
    let bad = || ProtocolError(format!("invalid {what} length"));
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return Err(bad());
    }
    let mut n: i64 = 0;
    for &byte in digits {
        let digit = match byte {
            b'0'..=b'9' => i64::from(byte - b'0'),
            _ => return Err(bad()),
        };
        let next = n.checked_mul(10).and_then(|n| match negative {
            true => n.checked_sub(digit),
            false => n.checked_add(digit),
        });
        n = next.ok_or_else(bad)?;
    }
    Ok(n)
}

/// One `$len\r\nbytes\r\n` argument at `at`, and where the next one starts.
fn read_bulk(
    buf: &[u8],
    at: usize,
    limits: &Limits,
) -> Result<Option<(Vec<u8>, usize)>, ProtocolError> {
    let Some((head, body)) = read_line(buf, at, limits)? else {
        return Ok(None);
    };
    if head.first() != Some(&b'$') {
        return Err(ProtocolError(format!(
            "expected '$', got '{}'",
            head.first().map_or(' ', |b| *b as char)
        )));
    }
    let len = parse_count(&head[1..], "bulk")?;
    if len < 0 || len as usize > limits.max_bulk {
        return Err(ProtocolError("invalid bulk length".to_owned()));
    }
    let end = body + len as usize;
    match buf.get(end..end + 2) {
        None => Ok(None),
        Some(b"\r\n") => Ok(Some((buf[body..end].to_vec(), end + 2))),
        Some(_) => Err(ProtocolError("bulk string not followed by CRLF".to_owned())),
    }
}

fn parse_inline(buf: &[u8], limits: &Limits) -> Parsed {
    // Inline commands end at LF; a CR before it is dropped (telnet and nc send either).
    let end = buf.iter().position(|b| *b == b'\n');
    if end.unwrap_or(buf.len()) > limits.max_inline {
        return Err(ProtocolError("too big inline request".to_owned()));
    }
    let Some(end) = end else {
        return Ok(None);
    };
    let text = buf[..end].strip_suffix(b"\r").unwrap_or(&buf[..end]);
    let args = inline::split(text)
        .ok_or_else(|| ProtocolError("unbalanced quotes in request".to_owned()))?;
    if args.len() > limits.max_args {
        return Err(ProtocolError("invalid multibulk length".to_owned()));
    }
    Ok(Some((args, end + 1)))
}

#[cfg(test)]
mod tests;
