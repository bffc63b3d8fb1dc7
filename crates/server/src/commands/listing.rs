//! `COMMAND`: the command table as Redis reports it.

use super::command_meta::{meta, subcommands, Find, KeySpec, Meta, Sub};
use super::*;
use crate::table::{lookup, Spec, COMMANDS};

fn command_entry(spec: &Spec) -> Reply {
    let (first, last, step) = spec.keys;
    // A merge's sources follow their count: keys a client finds only by asking
    // `COMMAND GETKEYS`, which Redis flags so.
    let movable = spec.counted_sources.then_some("movablekeys");
    let flags = spec.flags.iter().copied().chain(movable);
    let meta = meta(spec);
    let subs = subcommands(spec.name);
    let subs = match subs.is_empty() {
        // As Redis 7.0 answers: an empty set, or an array of entries.
        true => Reply::Set(vec![]),
        false => Reply::Array(subs.iter().map(sub_entry).collect()),
    };
    entry(
        spec.name,
        spec.arity,
        flags,
        [first, last, step],
        &meta,
        subs,
    )
}

fn sub_entry(sub: &Sub) -> Reply {
    let meta = Meta {
        acl: sub.acl,
        tips: sub.tips,
        specs: &[],
    };
    let flags = sub.flags.iter().copied();
    entry(
        sub.name,
        sub.arity,
        flags,
        [0, 0, 0],
        &meta,
        Reply::Set(vec![]),
    )
}

/// Redis 7's ten fields of a command: name, arity, flags, first key, last key, step,
/// ACL categories, tips, key specifications, subcommands.
fn entry<'a>(
    name: &str,
    arity: i64,
    flags: impl Iterator<Item = &'a str>,
    keys: [i64; 3],
    meta: &Meta,
    subs: Reply,
) -> Reply {
    let words = |w: &[&str]| Reply::Set(w.iter().map(|f| Reply::Simple((*f).to_owned())).collect());
    let mut fields = vec![
        bulk(name),
        Reply::Int(arity),
        Reply::Set(flags.map(|f| Reply::Simple(f.to_owned())).collect()),
    ];
    fields.extend(keys.map(Reply::Int));
    fields.push(words(meta.acl));
    fields.push(Reply::Set(meta.tips.iter().map(|t| bulk(*t)).collect()));
    fields.push(Reply::Set(meta.specs.iter().map(key_spec).collect()));
    fields.push(subs);
    Reply::Array(fields)
}

/// A key specification as Redis 7 writes one: a map (a flat array in RESP2).
fn key_spec(spec: &KeySpec) -> Reply {
    let map = |pairs: Vec<(&str, Reply)>| {
        Reply::Map(pairs.into_iter().map(|(k, v)| (bulk(k), v)).collect())
    };
    let find = match spec.find {
        Find::Range { last, step } => map(vec![
            ("type", bulk("range")),
            (
                "spec",
                map(vec![
                    ("lastkey", Reply::Int(last)),
                    ("keystep", Reply::Int(step)),
                    ("limit", Reply::Int(0)),
                ]),
            ),
        ]),
        Find::Keynum { index, first, step } => map(vec![
            ("type", bulk("keynum")),
            (
                "spec",
                map(vec![
                    ("keynumidx", Reply::Int(index)),
                    ("firstkey", Reply::Int(first)),
                    ("keystep", Reply::Int(step)),
                ]),
            ),
        ]),
    };
    let begin = map(vec![
        ("type", bulk("index")),
        ("spec", map(vec![("index", Reply::Int(spec.begin))])),
    ]);
    let notes = (!spec.notes.is_empty()).then(|| ("notes", bulk(spec.notes)));
    let flags = spec.flags.iter().map(|f| Reply::Simple((*f).to_owned()));
    let mut pairs: Vec<(&str, Reply)> = notes.into_iter().collect();
    pairs.push(("flags", Reply::Set(flags.collect())));
    pairs.push(("begin_search", begin));
    pairs.push(("find_keys", find));
    map(pairs)
}

/// The entry `COMMAND INFO` answers for a name: a command, or a subcommand as
/// `container|sub`.
fn named_entry(name: &[u8]) -> Reply {
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    match name.split_once('|') {
        None => lookup(name.as_bytes()).map_or(Reply::Nil, command_entry),
        Some((container, _)) => subcommands(container)
            .iter()
            .find(|s| s.name == name)
            .map_or(Reply::Nil, sub_entry),
    }
}

/// `COMMAND GETKEYS command arg...`: the keys the command names, as the host finds
/// them (a cluster routes by the same), with Redis 7's errors.
fn getkeys(request: &[Vec<u8>]) -> HostResult {
    if request.len() < 2 {
        return Err(err(
            "ERR wrong number of arguments for 'command|getkeys' command",
        ));
    }
    let Some(spec) = lookup(&request[0]) else {
        return Err(err("ERR Invalid command specified"));
    };
    if spec.keys.0 <= 0 && !spec.counted_sources {
        return Err(err("ERR The command has no key arguments"));
    }
    if !spec.arity_ok(request.len()) {
        return Err(err("ERR Invalid number of arguments specified for command"));
    }
    let keys: Vec<Reply> = spec.all_keys(request).map(bulk).collect();
    match keys.is_empty() {
        true => Err(err("ERR Invalid arguments specified for command")),
        false => Ok(Reply::Array(keys)),
    }
}

/// `COMMAND GETKEYSANDFLAGS command arg...`: [`getkeys`]'s keys (and errors), each with
/// the flags of the key specification that finds it.
fn getkeys_and_flags(request: &[Vec<u8>]) -> HostResult {
    getkeys(request)?;
    let spec = lookup(&request[0]).expect("getkeys found it");
    let keys = meta(spec).specs.iter().flat_map(|ks| {
        let flags = Reply::Set(
            ks.flags
                .iter()
                .map(|f| Reply::Simple((*f).to_owned()))
                .collect(),
        );
        key_positions(ks, request)
            .map(move |i| Reply::Array(vec![bulk(request[i].clone()), flags.clone()]))
    });
    Ok(Reply::Array(keys.collect()))
}

/// The arguments a key specification finds in `request` (the command's name first).
fn key_positions(ks: &KeySpec, request: &[Vec<u8>]) -> impl Iterator<Item = usize> {
    let len = request.len() as i64;
    let (start, end, step) = match ks.find {
        Find::Range { last, step } if last >= 0 => (ks.begin, ks.begin + last, step),
        Find::Range { last, step } => (ks.begin, len + last, step),
        Find::Keynum { index, first, step } => {
            let count = request
                .get((ks.begin + index) as usize)
                .and_then(|n| parse_i64(n))
                .unwrap_or(0)
                .max(0);
            let start = ks.begin + first;
            // A client's count: saturating, and cut to the arguments below.
            let span = count.saturating_sub(1).saturating_mul(step);
            (start, start.saturating_add(span), step)
        }
    };
    let end = end.min(len - 1);
    (start..=end)
        .step_by(step.max(1) as usize)
        .map(|i| i as usize)
}

/// `COMMAND [COUNT | LIST | INFO name... | DOCS [name...] | GETKEYS command arg...]`.
pub(crate) fn command(_conn: &mut Connection, args: &mut Args) -> HostResult {
    let Some(sub) = args.next_opt() else {
        return Ok(Reply::Array(
            COMMANDS.rows().iter().map(command_entry).collect(),
        ));
    };
    let names = args.rest();
    let named = || names.iter().map(|n| lookup(n));
    Ok(match lower(sub).as_str() {
        "count" => Reply::Int(COMMANDS.rows().len() as i64),
        "getkeys" => getkeys(names)?,
        "getkeysandflags" => getkeys_and_flags(names)?,
        // Subcommands too, after their container, as Redis 7.0 lists them.
        "list" => Reply::Array(
            COMMANDS
                .rows()
                .iter()
                .flat_map(|s| {
                    let subs = subcommands(s.name).iter().map(|sub| sub.name);
                    std::iter::once(s.name).chain(subs).map(bulk)
                })
                .collect(),
        ),
        "info" if names.is_empty() => {
            Reply::Array(COMMANDS.rows().iter().map(command_entry).collect())
        }
        "info" => Reply::Array(names.iter().map(|n| named_entry(n)).collect()),
        "docs" => {
            let specs: Vec<&Spec> = match names.is_empty() {
                true => COMMANDS.rows().iter().collect(),
                false => named().flatten().collect(),
            };
            Reply::Map(
                specs
                    .into_iter()
                    .map(|s| {
                        let doc = Reply::Map(vec![(bulk("summary"), bulk(""))]);
                        (bulk(s.name), doc)
                    })
                    .collect(),
            )
        }
        _ => Reply::Error(format!(
            "ERR unknown subcommand '{}'. Try COMMAND HELP.",
            String::from_utf8_lossy(sub)
        )),
    })
}
