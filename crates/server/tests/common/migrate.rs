//! Slot-migration tests' helpers: keys of a chosen slot, a two-node topology, and
//! `CLUSTER INFO` waited on.
#![allow(dead_code)]

use super::cluster::{push, slot_of, Node};
use super::resp_client::{ok, Client, TestServer, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A key of the form `{prefix}n` in a slot `pick` accepts, and its slot.
pub fn tag_where(client: &mut Client, prefix: &str, pick: impl Fn(u16) -> bool) -> (String, u16) {
    (0..)
        .map(|n| format!("{prefix}{n}"))
        .map(|tag| {
            let slot = slot_of(client, &format!("{{{tag}}}"));
            (tag, slot)
        })
        .find(|(_, slot)| pick(*slot))
        .unwrap()
}

/// The topology where `a` serves every slot and `b` none, pushed to both.
pub fn a_serves_all(a: &TestServer, b: &TestServer) -> [Node; 2] {
    let nodes = [
        Node::primary('a', a.addr, &[(0, 16383)]),
        Node::primary('b', b.addr, &[]),
    ];
    for addr in [a.addr, b.addr] {
        assert_eq!(push(addr, &nodes, 1), ok());
    }
    nodes
}

pub fn cluster_info(addr: SocketAddr) -> String {
    match Client::connect(addr).cmd(&["CLUSTER", "INFO"]) {
        Value::Bulk(text) | Value::Verbatim(_, text) => String::from_utf8(text).unwrap(),
        other => panic!("CLUSTER INFO: {other:?}"),
    }
}

/// Waits for `CLUSTER INFO` of `addr` to hold `line`.
pub fn wait_for(addr: SocketAddr, line: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info = cluster_info(addr);
        if info.lines().any(|l| l == line) {
            return info;
        }
        assert!(Instant::now() < deadline, "no '{line}' in:\n{info}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn count(addr: SocketAddr, words: &[&str]) -> i64 {
    match Client::connect(addr).cmd(words) {
        Value::Int(n) => n,
        other => panic!("{words:?}: {other:?}"),
    }
}

/// The hand-over's write pause `CLUSTER INFO` reports.
pub fn pause_us(info: &str) -> u64 {
    let field = info
        .lines()
        .find_map(|l| l.strip_prefix("migrating_pause_us: "));
    field.unwrap().parse().unwrap()
}
