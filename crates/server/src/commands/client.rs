//! `CLIENT`: `SETINFO`, `SETNAME`, `GETNAME`, `ID`, `INFO`, `LIST` and `KILL` (and,
//! in `client_flow.rs`, the subcommands that change how connections are served).

use super::connection::set_name;
use super::*;
use crate::ClientEntry;

/// `CLIENT SETINFO | SETNAME | GETNAME | ID | INFO | LIST | KILL`, and those of
/// [`super::client_flow`].
pub(crate) fn client(conn: &mut Connection, args: &mut Args) -> HostResult {
    let word = args.next_arg()?;
    let sub = lower(word);
    Ok(match (sub.as_str(), args.rest()) {
        ("id", []) => Reply::Int(conn.id as i64),
        ("setname", [name]) => {
            set_name(conn, name)?;
            Reply::ok()
        }
        ("getname", []) => {
            let name = conn
                .shared
                .clients
                .lock()
                .get(&conn.id)
                .map(|c| c.info.name.clone());
            match name {
                Some(name) if !name.is_empty() => bulk(name),
                _ => Reply::Nil,
            }
        }
        ("setinfo", [option, value]) => {
            let value = String::from_utf8_lossy(value).into_owned();
            if value.bytes().any(|b| !(b'!'..=b'~').contains(&b)) {
                return Err(Reply::Error(format!(
                    "ERR {} cannot contain spaces, newlines or special characters.",
                    lower(option)
                )));
            }
            match lower(option).as_str() {
                "lib-name" => conn.shared.update_client(conn.id, |c| c.lib_name = value),
                "lib-ver" => conn.shared.update_client(conn.id, |c| c.lib_ver = value),
                _ => {
                    return Err(Reply::Error(format!(
                        "ERR Unrecognized option '{}'",
                        String::from_utf8_lossy(option)
                    )))
                }
            }
            Reply::ok()
        }
        ("info", []) => {
            let clients = conn.shared.clients.lock();
            let line = clients
                .get(&conn.id)
                .map(|c| client_line(conn.id, c, Some("client|info")))
                .unwrap_or_default();
            Reply::Verbatim(line.into_bytes())
        }
        ("list", filter) => {
            let filter = ListFilter::parse(filter)?;
            let clients = conn.shared.clients.lock();
            let ids = match filter {
                ListFilter::Kind(kind) => {
                    let of_kind = clients
                        .iter()
                        .filter(|(_, c)| kind.is_none_or(|k| k == c.kind()));
                    let mut ids: Vec<u64> = of_kind.map(|(id, _)| *id).collect();
                    ids.sort_unstable();
                    ids
                }
                ListFilter::Ids(ids) => ids,
            };
            let running = |id| (id == conn.id).then_some("client|list");
            let mut text = String::new();
            for id in ids {
                if let Some(c) = clients.get(&id) {
                    text.push_str(&client_line(id, c, running(id)));
                }
                if text.len() > MAX_LIST_BYTES {
                    return Err(err("ERR CLIENT LIST reply too large (over 64 MiB)"));
                }
            }
            Reply::Verbatim(text.into_bytes())
        }
        ("kill", [addr]) => {
            // The old form: one address, `+OK` or an error, the caller included.
            if kill_where(conn, |_, c| c.info.addr.as_bytes() == addr.as_slice()) == 0 {
                return Err(err("ERR No such client"));
            }
            Reply::ok()
        }
        ("kill", filters) if !filters.is_empty() => {
            let filter = KillFilter::parse(filters)?;
            let me = conn.id;
            Reply::Int(kill_where(conn, |id, c| {
                (id != me || !filter.skip_me) && filter.matches(id, c)
            }) as i64)
        }
        ("id" | "setname" | "getname" | "setinfo" | "info" | "kill", _) => Reply::Error(format!(
            "ERR wrong number of arguments for 'client|{sub}' command"
        )),
        (sub, rest) => match super::client_flow::client(conn, sub, word, rest) {
            Some(reply) => reply?,
            None => Reply::Error(format!(
                "ERR unknown subcommand '{}'. Try CLIENT HELP.",
                String::from_utf8_lossy(word)
            )),
        },
    })
}

/// The most text `CLIENT LIST` answers. Its lines are as long as the clients' names
/// (any bulk string) and `ID` may name one client a million times, so without a bound
/// one request could make the server build terabytes; real lists are kilobytes.
const MAX_LIST_BYTES: usize = 64 << 20;

/// A connection's line in `CLIENT LIST` (Redis's fields; those of buffers and
/// subscriptions this host does not keep are 0). `running` names the command the
/// connection is running now, for the one asking.
fn client_line(id: u64, entry: &ClientEntry, running: Option<&str>) -> String {
    let c = &entry.info;
    let age = c.connected.map_or(0, |t| t.elapsed().as_secs());
    let (cmd, idle) = match (running, &entry.feed) {
        (Some(cmd), _) => (cmd.to_owned(), 0),
        // A replica's last command is its acknowledgement, sent every second.
        (None, Some(peer)) => (peer.last_command().to_owned(), peer.lag()),
        (None, None) => (entry.activity.command(), entry.activity.idle_seconds()),
    };
    let flags = match entry.feed {
        Some(_) => "S".to_owned(),
        None => entry.activity.flag_letters(),
    };
    let multi = entry.activity.queued();
    format!(
        "id={id} addr={} laddr={} fd={} name={} age={age} idle={idle} flags={flags} db={} \
         sub=0 psub=0 ssub=0 multi={multi} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 \
         oll=0 omem=0 tot-mem=0 events=r cmd={cmd} user=default redir=-1 resp={} \
         lib-name={} lib-ver={}\n",
        c.addr, c.laddr, c.fd, c.name, c.db, c.resp, c.lib_name, c.lib_ver
    )
}

/// What `CLIENT LIST` lists, parsed as Redis parses it: every connection (kind
/// `None`); those of a `TYPE`; or `ID id [id ...]`, in the order given, repeats
/// included, unknown ones left out.
enum ListFilter {
    Kind(Option<Kind>),
    Ids(Vec<u64>),
}

/// A connection's type as `CLIENT LIST TYPE` and `CLIENT KILL TYPE` name them: a
/// replica's feed, or a normal client; `Other` (`master`, `pubsub`) matches none here
/// (the link to a primary is not a client, and there is no pub/sub).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Normal,
    Replica,
    Other,
}

impl ClientEntry {
    fn kind(&self) -> Kind {
        match self.feed.is_some() {
            true => Kind::Replica,
            false => Kind::Normal,
        }
    }
}

impl ListFilter {
    fn parse(words: &[Vec<u8>]) -> Result<ListFilter, Reply> {
        match words {
            [] => Ok(ListFilter::Kind(None)),
            [word, kind] if lower(word) == "type" => Ok(ListFilter::Kind(Some(kind_named(kind)?))),
            [word, ids @ ..] if !ids.is_empty() && lower(word) == "id" => ids
                .iter()
                .map(|id| parse_i64(id).map(|id| id as u64))
                .collect::<Option<Vec<u64>>>()
                .map(ListFilter::Ids)
                .ok_or_else(|| err("ERR Invalid client ID")),
            _ => Err(err(SYNTAX)),
        }
    }
}

/// The client type a name means; an error for a name Redis does not know.
fn kind_named(kind: &[u8]) -> Result<Kind, Reply> {
    match lower(kind).as_str() {
        "normal" => Ok(Kind::Normal),
        "replica" | "slave" => Ok(Kind::Replica),
        "master" | "pubsub" => Ok(Kind::Other),
        _ => Err(Reply::Error(format!(
            "ERR Unknown client type '{}'",
            String::from_utf8_lossy(kind)
        ))),
    }
}

/// Kills every connection `matches` accepts; how many.
fn kill_where(conn: &Connection, matches: impl Fn(u64, &ClientEntry) -> bool) -> usize {
    let clients = conn.shared.clients.lock();
    let mut killed = 0;
    for (id, entry) in clients.iter() {
        if matches(*id, entry) {
            entry.kill();
            killed += 1;
        }
    }
    killed
}

/// `CLIENT KILL`'s new form: `ID`, `ADDR`, `LADDR`, `USER`, `TYPE`, `MAXAGE` and
/// `SKIPME` (yes by default), every filter given must match.
#[derive(Default)]
struct KillFilter {
    id: Option<u64>,
    addr: Option<Vec<u8>>,
    laddr: Option<Vec<u8>>,
    /// Connections of another user: every connection here is the default user's, so
    /// such a filter matches none.
    none: bool,
    kind: Option<Kind>,
    max_age: Option<u64>,
    skip_me: bool,
}

impl KillFilter {
    fn parse(words: &[Vec<u8>]) -> Result<KillFilter, Reply> {
        let mut filter = KillFilter {
            skip_me: true,
            ..KillFilter::default()
        };
        let mut words = words.chunks(2);
        for pair in words.by_ref() {
            let [name, value] = pair else {
                return Err(err(SYNTAX));
            };
            match lower(name).as_str() {
                "id" => match parse_i64(value) {
                    Some(id) if id > 0 => filter.id = Some(id as u64),
                    _ => return Err(err("ERR client-id should be greater than 0")),
                },
                "addr" => filter.addr = Some(value.clone()),
                "laddr" => filter.laddr = Some(value.clone()),
                "user" => filter.none |= value.as_slice() != b"default",
                "type" => filter.kind = Some(kind_named(value)?),
                "maxage" => match parse_i64(value) {
                    Some(age) if age >= 0 => filter.max_age = Some(age as u64),
                    _ => return Err(err(NOT_INTEGER)),
                },
                "skipme" => match lower(value).as_str() {
                    "yes" => filter.skip_me = true,
                    "no" => filter.skip_me = false,
                    _ => return Err(err(SYNTAX)),
                },
                _ => return Err(err(SYNTAX)),
            }
        }
        Ok(filter)
    }

    fn matches(&self, id: u64, client: &ClientEntry) -> bool {
        let info = &client.info;
        let age = info.connected.map_or(0, |t| t.elapsed().as_secs());
        !self.none
            && self.kind.is_none_or(|kind| kind == client.kind())
            && self.id.is_none_or(|want| want == id)
            && self
                .addr
                .as_ref()
                .is_none_or(|a| a.as_slice() == info.addr.as_bytes())
            && self
                .laddr
                .as_ref()
                .is_none_or(|a| a.as_slice() == info.laddr.as_bytes())
            && self.max_age.is_none_or(|max| age >= max)
    }
}
