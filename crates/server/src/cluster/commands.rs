//! `CLUSTER` (Redis's replies), `CLUSTERX` (Kvrocks' controller commands), `READONLY`,
//! `READWRITE` and `ASKING`.

use super::slot::{self, CLUSTER_NS, SLOTS};
use super::topology::{self, Node, Topology, BAD_NODE_ID, BAD_VERSION, ID_LEN};
use super::Cluster;
use crate::commands::{bulk, err, is_this_host, HostResult, NOT_INTEGER};
use crate::conn::Connection;
use crate::replication::Replication;
use crate::Shared;
use rocksketch::command::args::Args;
use rocksketch::command::parse::parse_i64;
use rocksketch::command::Reply;
use std::fmt::Write as _;
use std::sync::Arc;

pub(crate) const DISABLED: &str = "ERR This instance has cluster support disabled";

fn cluster_of(conn: &Connection, disabled: &str) -> Result<Arc<Cluster>, Reply> {
    conn.shared.cluster.clone().ok_or_else(|| err(disabled))
}

/// `READONLY`, `READWRITE`: whether this connection reads from a replica.
pub(crate) fn readonly(conn: &mut Connection, args: &mut Args) -> HostResult {
    args.finish()?;
    cluster_of(conn, DISABLED)?;
    conn.readonly = args.command() == "readonly";
    Ok(Reply::ok())
}

/// `ASKING`: accepted. A node serves a slot it imported to every client until the
/// topology gives it the slot, so the flag changes nothing here.
pub(crate) fn asking(conn: &mut Connection, args: &mut Args) -> HostResult {
    args.finish()?;
    cluster_of(conn, DISABLED)?;
    Ok(Reply::ok())
}

/// `CLUSTER <subcommand>`, as Redis 7 answers.
pub(crate) fn cluster(conn: &mut Connection, args: &mut Args) -> HostResult {
    let asked = String::from_utf8_lossy(args.next_arg()?).into_owned();
    let sub = asked.to_ascii_lowercase();
    let arity = match sub.as_str() {
        "info" | "nodes" | "slots" | "shards" | "myid" => 0,
        "keyslot" | "countkeysinslot" => 1,
        "getkeysinslot" => 2,
        _ => {
            return Err(err(&format!(
                "ERR unknown subcommand '{asked}'. Try CLUSTER HELP."
            )))
        }
    };
    if args.len() != arity {
        return Err(err(&format!(
            "ERR wrong number of arguments for 'cluster|{sub}' command"
        )));
    }
    if sub == "keyslot" {
        return Ok(Reply::Int(i64::from(slot::key_slot(args.next_arg()?))));
    }
    let cluster = cluster_of(conn, DISABLED)?;
    let topology = cluster.topology();
    let shared = &conn.shared;
    Ok(match sub.as_str() {
        "info" => Reply::Verbatim((info_text(&topology) + &cluster.moves.info()).into_bytes()),
        "nodes" => Reply::Verbatim(nodes_text(&topology).into_bytes()),
        "slots" => slots_reply(&topology),
        "shards" => shards_reply(shared, &topology),
        "myid" => bulk(topology.myid.clone()),
        "countkeysinslot" => {
            let slot = parse_i64(args.next_arg()?).ok_or_else(|| err(NOT_INTEGER))?;
            let slot = slot_of(slot).ok_or_else(|| err("ERR Invalid slot"))?;
            Reply::Int(shared.store.ns(CLUSTER_NS + slot).counts()?.0 as i64)
        }
        _ => {
            let slot = parse_i64(args.next_arg()?).ok_or_else(|| err(NOT_INTEGER))?;
            let count = parse_i64(args.next_arg()?).ok_or_else(|| err(NOT_INTEGER))?;
            let (Some(slot), true) = (slot_of(slot), count >= 0) else {
                return Err(err("ERR Invalid slot or number of keys"));
            };
            let keys = shared
                .store
                .ns(CLUSTER_NS + slot)
                .scan(None, count as usize)?;
            Reply::Array(keys.into_iter().map(|(key, _)| Reply::Bulk(key)).collect())
        }
    })
}

fn slot_of(n: i64) -> Option<u16> {
    (0..SLOTS as i64).contains(&n).then_some(n as u16)
}

fn info_text(t: &Topology) -> String {
    let assigned = t.assigned();
    let primaries = t.slots_by_node().iter().filter(|s| !s.is_empty()).count();
    let epoch = t.version.max(0);
    format!(
        "cluster_state:{}\r\ncluster_slots_assigned:{assigned}\r\ncluster_slots_ok:{assigned}\r\n\
         cluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:{}\r\n\
         cluster_size:{primaries}\r\ncluster_current_epoch:{epoch}\r\ncluster_my_epoch:{epoch}\r\n\
         cluster_stats_messages_sent:0\r\ncluster_stats_messages_received:0\r\n\
         total_cluster_links_buffer_limit_exceeded:0\r\n",
        if assigned == SLOTS { "ok" } else { "fail" },
        t.nodes.len().max(1),
    )
}

/// One line per node: `<id> <host>:<port>@<bus port> <flags> <primary|-> <ping sent>
/// <pong received> <epoch> connected [<slots>...]`.
fn nodes_text(t: &Topology) -> String {
    if t.me().is_none() {
        // Not (yet) in the topology: this node alone, as Redis shows a fresh node.
        return format!("{} :0@0 myself,master - 0 0 0 connected\n", t.myid);
    }
    let slots = t.slots_by_node();
    let mut out = String::new();
    for (node, slots) in t.nodes.iter().zip(&slots) {
        let myself = if node.id == t.myid { "myself," } else { "" };
        let (role, primary) = match &node.primary {
            Some(p) => ("slave", p.as_str()),
            None => ("master", "-"),
        };
        let bus = u32::from(node.port) + 10000;
        let _ = write!(
            out,
            "{} {}:{}@{bus} {myself}{role} {primary} 0 0 {} connected",
            node.id,
            node.host,
            node.port,
            t.version.max(0)
        );
        for (first, last) in slots {
            let _ = match first == last {
                true => write!(out, " {first}"),
                false => write!(out, " {first}-{last}"),
            };
        }
        out.push('\n');
    }
    out
}

fn node_entry(node: &Node) -> Reply {
    Reply::Array(vec![
        bulk(node.host.clone()),
        Reply::Int(i64::from(node.port)),
        bulk(node.id.clone()),
        Reply::Map(Vec::new()),
    ])
}

/// `CLUSTER SLOTS`: `[first, last, primary, replicas...]` per run of slots.
fn slots_reply(t: &Topology) -> Reply {
    let replicas = t.replicas_by_node();
    let ranges = t.ranges().into_iter().map(|(first, last, owner, at)| {
        let mut entry = vec![Reply::Int(i64::from(first)), Reply::Int(i64::from(last))];
        entry.push(node_entry(owner));
        entry.extend(replicas[at].iter().copied().map(node_entry));
        Reply::Array(entry)
    });
    Reply::Array(ranges.collect())
}

/// `CLUSTER SHARDS`: each primary with its slots and its nodes.
fn shards_reply(shared: &Shared, t: &Topology) -> Reply {
    let (slots, replicas) = (t.slots_by_node(), t.replicas_by_node());
    let offset = shared.store.latest_sequence().unwrap_or(0) as i64;
    let describe = |node: &Node| {
        let field = |name: &str, value: Reply| (bulk(name), value);
        Reply::Map(vec![
            field("id", bulk(node.id.clone())),
            field("port", Reply::Int(i64::from(node.port))),
            field("ip", bulk(node.host.clone())),
            field("endpoint", bulk(node.host.clone())),
            field(
                "role",
                bulk(if node.primary.is_some() {
                    "replica"
                } else {
                    "master"
                }),
            ),
            field(
                "replication-offset",
                Reply::Int(if node.id == t.myid { offset } else { 0 }),
            ),
            field("health", bulk("online")),
        ])
    };
    let primaries = t
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.primary.is_none());
    let shards = primaries.map(|(at, primary)| {
        let ints = |(a, b): &(u16, u16)| [Reply::Int(i64::from(*a)), Reply::Int(i64::from(*b))];
        let slots = slots[at].iter().flat_map(ints);
        let nodes = std::iter::once(primary).chain(replicas[at].iter().copied());
        Reply::Map(vec![
            (bulk("slots"), Reply::Array(slots.collect())),
            (bulk("nodes"), Reply::Array(nodes.map(describe).collect())),
        ])
    });
    Reply::Array(shards.collect())
}

/// `CLUSTERX VERSION | MYID | SETNODEID id | SETNODES nodes version [FORCE] | SETSLOT
/// slot NODE id version | MIGRATE slot id`: the controller's commands, as Kvrocks
/// answers them; `IMPORT slot state` and `APPLY slot chunk`: a migrating node's.
pub(crate) fn clusterx(conn: &mut Connection, args: &mut Args) -> HostResult {
    const USAGE: &str =
        "ERR CLUSTERX command, CLUSTERX VERSION|MYID|SETNODEID|SETNODES|SETSLOT|MIGRATE";
    let cluster = cluster_of(conn, "ERR Cluster mode is not enabled")?;
    let sub = String::from_utf8_lossy(args.next_arg()?).to_ascii_lowercase();
    if sub == "apply" {
        let [slot, chunk] = args.rest() else {
            return Err(err(USAGE));
        };
        let slot = slot_arg(slot)?;
        return super::import::apply(conn, &cluster, slot, chunk);
    }
    let rest: Vec<String> = args
        .rest()
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let my_port = conn.shared.addr.port();
    let changed = match (sub.as_str(), rest.as_slice()) {
        ("version", []) => return Ok(bulk(cluster.topology().version.to_string())),
        ("myid", []) => return Ok(bulk(cluster.topology().myid.clone())),
        ("setnodeid", [id]) if id.len() == ID_LEN => cluster.change(|t| {
            let mut next = t.clone();
            next.myid = id.clone();
            Ok(Some(next))
        }),
        ("setnodes", [nodes, version, force @ ..]) if force.len() <= 1 => {
            let version = version
                .parse::<i64>()
                .map_err(|_| err("ERR Invalid version"))?;
            let force = match force {
                [] => false,
                [f] if f.eq_ignore_ascii_case("force") => true,
                _ => return Err(err("ERR Invalid setnodes options")),
            };
            cluster.change(|t| set_nodes(t, nodes, version, force, my_port))
        }
        ("setslot", [slots, node, id, version]) => {
            let slots = topology::parse_range(slots).map_err(|e| err(&format!("ERR {e}")))?;
            if !node.eq_ignore_ascii_case("node") {
                return Err(err("ERR Invalid setslot options"));
            }
            if id.len() != ID_LEN {
                return Err(err("ERR Invalid node id"));
            }
            let version = version.parse::<i64>().map_err(|_| err(NOT_INTEGER))?;
            cluster.change(|t| {
                if version <= 0 || version != t.version + 1 {
                    return Err(BAD_VERSION.to_owned());
                }
                let mut next = t.clone();
                next.assign(slots, id)?;
                next.version = version;
                Ok(Some(next))
            })
        }
        ("migrate", [slot, id]) => {
            let slot = slot_arg(slot.as_bytes())?;
            super::migrate::start(&conn.shared, &cluster, slot, id)?;
            return Ok(Reply::ok());
        }
        ("migrate", [_, _, ..]) => {
            return Err(err(
                "ERR only asynchronous migrations of one slot are supported: \
                 CLUSTER INFO shows the migration's state",
            ))
        }
        ("import", [slot, state]) => {
            let slot = slot_arg(slot.as_bytes())?;
            return super::import::import(conn, &cluster, slot, state);
        }
        ("setnodeid", [_]) => return Err(err(&format!("ERR {BAD_NODE_ID}"))),
        _ => return Err(err(USAGE)),
    };
    let topology = changed.map_err(|e| err(&format!("ERR {e}")))?;
    follow_topology(&conn.shared, &topology);
    cluster.follow_moves(&conn.shared.store, &topology);
    Ok(Reply::ok())
}

/// A slot number argument.
fn slot_arg(arg: &[u8]) -> Result<u16, Reply> {
    let n = parse_i64(arg).ok_or_else(|| err(NOT_INTEGER))?;
    slot_of(n).ok_or_else(|| err("ERR Invalid slot id"))
}

/// Kvrocks' rules: an older version is refused, the same one changes nothing unless
/// forced; a node list that does not name this node by id names it by port.
fn set_nodes(
    t: &Topology,
    nodes: &str,
    version: i64,
    force: bool,
    my_port: u16,
) -> Result<Option<Topology>, String> {
    if version < 0 || (!force && version < t.version) {
        return Err(BAD_VERSION.to_owned());
    }
    if !force && version == t.version {
        return Ok(None);
    }
    let mut next = Topology::parse(nodes, version, t.myid.clone())?;
    if next.me().is_none() || force {
        let mine = next
            .nodes
            .iter()
            .find(|n| n.port == my_port && is_this_host(&n.host));
        if let Some(mine) = mine {
            next.myid = mine.id.clone();
        }
    }
    Ok(Some(next))
}

/// Follows this node's primary as the topology names it, or stops following when it
/// names this node a primary (`REPLICAOF` semantics).
pub(crate) fn follow_topology(shared: &Arc<Shared>, t: &Topology) {
    let Some(me) = t.me() else {
        return;
    };
    let following = shared.replication.primary().map(|(h, p, _)| (h, p));
    match me.primary.as_deref().and_then(|id| t.node(id)) {
        Some(primary) => {
            let target = (primary.host.clone(), primary.port);
            if following.as_ref() != Some(&target) {
                Replication::follow(shared, target.0, target.1);
            }
        }
        None if me.primary.is_none() && following.is_some() => {
            if let Err(e) = Replication::promote(shared) {
                log::warn!("promotion by the cluster topology failed: {e}");
            }
        }
        None => {}
    }
}
