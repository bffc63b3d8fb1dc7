//! `COMMAND`: the command table as Redis reports it.

use super::*;
use crate::table::{lookup, Spec, COMMANDS};

fn command_entry(spec: &Spec) -> Reply {
    let (first, last, step) = spec.keys;
    Reply::Array(vec![
        bulk(spec.name),
        Reply::Int(spec.arity),
        Reply::Array(
            spec.flags
                .iter()
                .map(|f| Reply::Simple((*f).to_owned()))
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

/// `COMMAND [COUNT | LIST | INFO name... | DOCS [name...]]`.
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
