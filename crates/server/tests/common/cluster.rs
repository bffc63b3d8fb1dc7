//! Cluster tests' controller: node lists in Kvrocks' `CLUSTERX SETNODES` format, pushed
//! to `rocksketch serve` nodes as `kvrocks_controller` would.
#![allow(dead_code)]

use super::resp_client::{Client, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::net::SocketAddr;

/// A node in cluster mode over a store in `dir`.
pub fn start_node(dir: &std::path::Path) -> TestServer {
    let config = ServerConfig {
        cluster_enabled: true,
        ..ServerConfig::default()
    };
    TestServer::start(dir, config)
}

/// A node id of 40 characters made of `c`.
pub fn node_id(c: char) -> String {
    std::iter::repeat_n(c, 40).collect()
}

/// One node of a topology: its id, address, primary (for a replica) and slots.
pub struct Node {
    pub id: String,
    pub addr: SocketAddr,
    pub primary: Option<String>,
    pub slots: Vec<(u16, u16)>,
}

impl Node {
    pub fn primary(id: char, addr: SocketAddr, slots: &[(u16, u16)]) -> Node {
        Node {
            id: node_id(id),
            addr,
            primary: None,
            slots: slots.to_vec(),
        }
    }

    pub fn replica(id: char, addr: SocketAddr, of: char) -> Node {
        Node {
            id: node_id(id),
            addr,
            primary: Some(node_id(of)),
            slots: Vec::new(),
        }
    }
}

/// The node list `CLUSTERX SETNODES` takes.
pub fn node_list(nodes: &[Node]) -> String {
    let lines: Vec<String> = nodes
        .iter()
        .map(|n| {
            let (ip, port) = (n.addr.ip(), n.addr.port());
            let mut line = match &n.primary {
                Some(p) => format!("{} {ip} {port} slave {p}", n.id),
                None => format!("{} {ip} {port} master -", n.id),
            };
            for (a, b) in &n.slots {
                line += &match a == b {
                    true => format!(" {a}"),
                    false => format!(" {a}-{b}"),
                };
            }
            line
        })
        .collect();
    lines.join("\n")
}

/// Pushes the topology to `addr` at `version`; the reply.
pub fn push(addr: SocketAddr, nodes: &[Node], version: i64) -> Value {
    let list = node_list(nodes);
    Client::connect(addr).cmd(&["CLUSTERX", "SETNODES", &list, &version.to_string()])
}

/// `slots` (sorted, distinct) as ranges of consecutive slots.
pub fn ranges(slots: &[u16]) -> Vec<(u16, u16)> {
    let mut out: Vec<(u16, u16)> = Vec::new();
    for &slot in slots {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == slot => *last = slot,
            _ => out.push((slot, slot)),
        }
    }
    out
}

/// The slot a server computes for `key` (`CLUSTER KEYSLOT`).
pub fn slot_of(client: &mut Client, key: &str) -> u16 {
    match client.cmd(&["CLUSTER", "KEYSLOT", key]) {
        Value::Int(slot) => slot as u16,
        other => panic!("CLUSTER KEYSLOT {key}: {other:?}"),
    }
}
