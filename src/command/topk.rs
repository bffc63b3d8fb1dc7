//! `TOPK.*` commands, in RedisBloom's order of checks so that each error matches its
//! own (see `vectors/topk_tdigest_notes.md`).

use super::args::Args;
use super::batch::Run;
use super::parse::{parse_f64, parse_i64};
use super::{KeyAndList, Reply};
use crate::error::{Error, Result, TopKError};
use crate::store::Namespace;
use crate::topk::TopK;
use rocksketch_merge::topk::ops::MAX_INCREMENT;

/// The Top-K at `key`, checked to exist and be a Top-K (before any argument).
fn existing(ns: &Namespace, key: &[u8]) -> Result<TopK> {
    let top = ns.topk(key);
    top.info()?;
    Ok(top)
}

/// `TOPK.RESERVE key k [width depth decay]`: the key is checked before the numbers.
pub(super) fn reserve(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let k = args.next_arg()?;
    let shape = args.rest();
    if !matches!(shape.len(), 0 | 3) {
        return Err(args.wrong_arity());
    }
    if ns.exists(key)? {
        return Err(TopKError::KeyAlreadyExists.into());
    }
    let number = |arg: &[u8], err: TopKError| {
        parse_i64(arg)
            .filter(|v| (1..=i64::from(u32::MAX)).contains(v))
            .map(|v| v as u64)
            .ok_or(Error::TopK(err))
    };
    let k = number(k, TopKError::InvalidK)?;
    let (width, depth, decay) = match shape {
        [width, depth, decay] => (
            number(width, TopKError::InvalidWidth)?,
            number(depth, TopKError::InvalidDepth)?,
            parse_f64(decay)
                .filter(|d| *d > 0.0 && *d <= 1.0)
                .ok_or(TopKError::InvalidDecay)?,
        ),
        _ => (8, 7, 0.9),
    };
    ns.topk(key).reserve(k, width, depth, decay)?;
    Ok(Reply::ok())
}

/// An expelled item as RedisBloom replies with it: nil, or the item cut at a NUL byte.
pub(crate) fn expelled(item: Option<Vec<u8>>) -> Reply {
    match item {
        None => Reply::Nil,
        Some(item) => Reply::Bulk(rocksketch_merge::topk::add::c_string(&item).to_vec()),
    }
}

/// `TOPK.ADD key item [item ...]` and `TOPK.INCRBY key item increment [...]`: the
/// key, and the items with their increments (an `INCRBY`'s up to its first bad
/// increment, and that error), read once the key is found.
struct Add<'a> {
    /// For `TOPK.ADD`, items; for `TOPK.INCRBY`, item-increment pairs.
    args: KeyAndList<'a>,
    incrby: bool,
}

/// `TOPK.INCRBY`'s pairs up to the first bad increment, and that error if any.
type Pairs<'a> = (Vec<(&'a [u8], u32)>, Option<TopKError>);

impl<'a> Add<'a> {
    fn parse(args: &mut Args<'a>) -> Result<Add<'a>> {
        let incrby = args.command() == "topk.incrby";
        let args = match incrby {
            true => KeyAndList::pairs(args)?,
            false => KeyAndList::parse(args)?,
        };
        Ok(Add { args, incrby })
    }

    fn pairs(&self) -> Pairs<'a> {
        let list = self.args.list;
        if !self.incrby {
            return (list.iter().map(|i| (i.as_slice(), 1)).collect(), None);
        }
        let mut args = Args::of("topk.incrby", list);
        let mut pairs = Vec::with_capacity(list.len() / 2);
        while let Some(item) = args.next_opt() {
            match args.next_u64(TopKError::BadIncrement) {
                Ok(n) if n <= u64::from(MAX_INCREMENT) => pairs.push((item, n as u32)),
                _ => return (pairs, Some(TopKError::BadIncrement)),
            }
        }
        (pairs, None)
    }
}

/// The reply to one add: each pair's expelled item, then the error of a bad increment.
fn add_reply(expelled: impl Iterator<Item = Option<Vec<u8>>>, bad: Option<TopKError>) -> Reply {
    let mut replies: Vec<Reply> = expelled.map(self::expelled).collect();
    if let Some(err) = bad {
        replies.push(Reply::Error(err.text().to_owned()));
    }
    Reply::Array(replies)
}

pub(super) fn add(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let command = Add::parse(args)?;
    let top = existing(ns, command.args.key)?;
    // Pairs before a bad increment stay applied, and the reply ends with its error
    // (RedisBloom announces every pair's element first and leaves the reply short).
    let (pairs, bad) = command.pairs();
    Ok(add_reply(top.incr_by(&pairs)?.into_iter(), bad))
}

/// A run of `TOPK.ADD`s or `TOPK.INCRBY`s: every command's pairs in one engine call,
/// the replies split back per command.
pub(super) fn add_run(ns: &Namespace, run: Run) -> Vec<Reply> {
    let Some(commands) = run.parse_all(Add::parse) else {
        return run.one_by_one(ns);
    };
    // A missing key or another type answers before any argument is read.
    let top = match existing(ns, run.key()) {
        Ok(top) => top,
        Err(err) => return run.each(Reply::from(&err)),
    };
    let per_command: Vec<Pairs> = commands.iter().map(Add::pairs).collect();
    let pairs: Vec<(&[u8], u32)> = per_command
        .iter()
        .flat_map(|(p, _)| p.iter().copied())
        .collect();
    let Ok(expelled) = top.incr_by(&pairs) else {
        // Nothing was written: the commands answer one by one, as they would have.
        return run.one_by_one(ns);
    };
    let mut expelled = expelled.into_iter();
    per_command
        .into_iter()
        .map(|(pairs, bad)| add_reply(expelled.by_ref().take(pairs.len()), bad))
        .collect()
}

pub(super) fn query(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let KeyAndList { key, list } = KeyAndList::parse(args)?;
    let found = existing(ns, key)?.query(list)?;
    Ok(Reply::Array(found.into_iter().map(Reply::Bool).collect()))
}

pub(super) fn count(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let KeyAndList { key, list } = KeyAndList::parse(args)?;
    let counts = existing(ns, key)?.count(list)?;
    Ok(Reply::Array(
        counts
            .into_iter()
            .map(|c| Reply::Int(i64::from(c)))
            .collect(),
    ))
}

/// RedisBloom's `strncasecmp(arg, "WITHCOUNT", len(arg)) == 0`: any case, any prefix
/// (the empty one too), and the word followed by a NUL byte.
fn is_withcount(arg: &[u8]) -> bool {
    const WORD: &[u8] = b"withcount";
    for (i, c) in arg.iter().enumerate() {
        let want = WORD.get(i).copied().unwrap_or(0);
        if c.to_ascii_lowercase() != want {
            return false;
        }
        if *c == 0 {
            return true;
        }
    }
    true
}

/// `TOPK.LIST key [WITHCOUNT]`.
pub(super) fn list(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    let with_count = match args.rest() {
        [] => false,
        [option] if is_withcount(option) => true,
        [_] => return Err(TopKError::WithcountExpected.into()),
        _ => return Err(args.wrong_arity()),
    };
    let items = existing(ns, key)?.list()?;
    let mut out = Vec::with_capacity(items.len() * 2);
    for (item, count) in items {
        out.push(Reply::Bulk(item));
        if with_count {
            out.push(Reply::Int(i64::from(count)));
        }
    }
    Ok(Reply::Array(out))
}

pub(super) fn info(ns: &Namespace, args: &mut Args) -> Result<Reply> {
    let key = args.next_key()?;
    args.finish()?;
    let shape = ns.topk(key).info()?;
    let name = |n: &str| Reply::Simple(n.to_owned());
    Ok(Reply::Map(vec![
        (name("k"), Reply::Int(i64::from(shape.k))),
        (name("width"), Reply::Int(i64::from(shape.width))),
        (name("depth"), Reply::Int(i64::from(shape.depth))),
        (name("decay"), Reply::double(shape.decay)),
    ]))
}
