//! `COMMAND`: the command table as Redis reports it.

use super::*;
use crate::table::{lookup, Spec, COMMANDS};

fn command_entry(spec: &Spec) -> Reply {
    let (first, last, step) = spec.keys;
    // A merge's sources follow their count: keys a client finds only by asking
    // `COMMAND GETKEYS`, which Redis flags so.
    let movable = spec.counted_sources.then_some("movablekeys");
    Reply::Array(vec![
        bulk(spec.name),
        Reply::Int(spec.arity),
        Reply::Array(
            spec.flags
                .iter()
                .copied()
                .chain(movable)
                .map(|f| Reply::Simple(f.to_owned()))
                .collect(),
        ),
        Reply::Int(first),
        Reply::Int(last),
        Reply::Int(step),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
        Reply::Array(vec![]),
    ])
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
        "list" => Reply::Array(COMMANDS.rows().iter().map(|s| bulk(s.name)).collect()),
        "info" if names.is_empty() => {
            Reply::Array(COMMANDS.rows().iter().map(command_entry).collect())
        }
        "info" => Reply::Array(
            named()
                .map(|s| s.map_or(Reply::Nil, command_entry))
                .collect(),
        ),
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
