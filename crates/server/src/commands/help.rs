//! `HELP` of the container commands (`CLIENT HELP`, `CONFIG HELP`, ...), which their
//! errors point to: a line of usage and a line or more of description for each
//! subcommand the host answers, simple strings in an array, as Redis writes them.

use rocksketch::command::Reply;

/// Usage and description of each subcommand, grouped by container, `HELP` last.
const LINES: &[(&str, &[&str])] = &[
    ("client", &[
        "GETNAME",
        "    Return the name of the current connection.",
        "GETREDIR",
        "    Return -1: this server does not offer client-side caching.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current connection.",
        "KILL <ip:port>",
        "    Kill the connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are ID, ADDR, LADDR, TYPE (NORMAL|MASTER|REPLICA|PUBSUB),",
        "    USER, MAXAGE and SKIPME (YES|NO).",
        "LIST [TYPE (NORMAL|MASTER|REPLICA|PUBSUB)] [ID <id> [<id> ...]]",
        "    Return information about client connections.",
        "NO-EVICT (ON|OFF)",
        "    Protect the current connection from eviction.",
        "NO-TOUCH (ON|OFF)",
        "    Keep the current connection's reads from touching keys.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all clients, or only writes, for <timeout> milliseconds.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETINFO (LIB-NAME|LIB-VER) <value>",
        "    Set the client library's name or version shown by CLIENT LIST.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "TRACKINGINFO",
        "    Report tracking status for the current connection (always off here).",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "UNPAUSE",
        "    End the current client pause.",
    ]),
    ("cluster", &[
        "COUNTKEYSINSLOT <slot>",
        "    Return the number of keys in <slot>.",
        "GETKEYSINSLOT <slot> <count>",
        "    Return up to <count> key names in <slot>.",
        "INFO",
        "    Return information about the cluster.",
        "KEYSLOT <key>",
        "    Return the hash slot for <key>.",
        "MYID",
        "    Return the node id.",
        "NODES",
        "    Return the cluster configuration seen by this node.",
        "SHARDS",
        "    Return information about the cluster's shards.",
        "SLOTS",
        "    Return information about slots range mappings.",
    ]),
    ("command", &[
        "(no subcommand)",
        "    Return details about all commands.",
        "COUNT",
        "    Return the number of commands in this server.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about commands.",
        "GETKEYS <full-command>",
        "    Return the keys from a full command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full command.",
        "INFO [<command-name> ...]",
        "    Return details about commands, all of them if none is named.",
        "LIST",
        "    Return a list of all commands and subcommands in this server.",
    ]),
    ("config", &[
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file (this server runs without one).",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
    ]),
    ("module", &["LIST", "    Return a list of loaded modules."]),
    ("slowlog", &[
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 means all).",
        "    Entries are made of: id, timestamp, time in microseconds, arguments array,",
        "    client IP and port, client name.",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
    ]),
];

/// `container HELP`: its subcommands' usage; `None` for a command without them.
pub(crate) fn help(container: &str) -> Option<Reply> {
    let (_, lines) = LINES.iter().find(|(name, _)| *name == container)?;
    let head = format!(
        "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        container.to_ascii_uppercase()
    );
    let tail = ["HELP", "    Prints this help."];
    let lines = std::iter::once(head)
        .chain(lines.iter().chain(&tail).map(|l| (*l).to_owned()))
        .map(Reply::Simple);
    Some(Reply::Array(lines.collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::command_meta::subcommands;

    /// Every subcommand the host lists has a usage line, and every usage line names
    /// one it lists.
    #[test]
    fn help_names_exactly_the_listed_subcommands() {
        for (container, lines) in LINES {
            let mut named: Vec<String> = lines
                .iter()
                .filter(|l| !l.starts_with(' ') && !l.starts_with('('))
                .map(|l| l.split(' ').next().unwrap().to_ascii_lowercase())
                .collect();
            named.dedup();
            named.push("help".to_owned());
            let mut listed: Vec<String> = subcommands(container)
                .iter()
                .map(|s| s.name.split_once('|').unwrap().1.to_owned())
                .collect();
            named.sort();
            listed.sort();
            assert_eq!(named, listed, "{container}");
        }
    }
}
