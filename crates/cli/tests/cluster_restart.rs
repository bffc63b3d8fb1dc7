//! A cluster replica killed and restarted on its data directory rejoins from the
//! topology it saved: it opens its store as a replica, follows its primary again (a
//! partial resync: nothing written in between is lost or applied twice) and serves
//! `READONLY` reads of its primary's slots, with no command from the controller.

#[path = "../../server/tests/common/resp_client.rs"]
mod resp_client;

#[path = "../../server/tests/common/cluster.rs"]
mod cluster;

#[path = "common/process.rs"]
mod process;

use cluster::{push, Node};
use process::{start, Server, BIN};
use resp_client::{ok, Client, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn info(addr: std::net::SocketAddr, field: &str) -> String {
    let Value::Bulk(text) = Client::connect(addr).cmd(&["INFO", "replication"]) else {
        panic!("INFO answers a bulk string");
    };
    let text = String::from_utf8(text).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")));
    line.unwrap_or_default().to_owned()
}

#[test]
fn a_killed_cluster_replica_rejoins_from_its_saved_topology() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let p = start(dirs[0].path(), &["--cluster-enabled"]);
    let r = start(dirs[1].path(), &["--cluster-enabled"]);
    let nodes = [
        Node::primary('p', p.addr, &[(0, 16383)]),
        Node::replica('r', r.addr, 'p'),
    ];
    for addr in [p.addr, r.addr] {
        assert_eq!(push(addr, &nodes, 1), ok());
    }
    let mut cp = Client::connect(p.addr);
    let add = |c: &mut Client, i: usize| c.cmd(&["CMS.INCRBY", "c", &format!("i{}", i % 7), "1"]);
    assert_eq!(cp.cmd(&["CMS.INITBYDIM", "c", "100", "4"]), ok());
    for i in 0..100 {
        assert_eq!(
            add(&mut cp, i),
            Value::Array(vec![Value::Int(1 + i as i64 / 7)])
        );
    }
    assert_eq!(cp.cmd(&["WAIT", "1", "10000"]), Value::Int(1));
    let full_syncs = info(p.addr, "sync_full");
    let partial = info(p.addr, "sync_partial_ok");
    let port = r.addr.port();
    drop(r); // SIGKILL
    for i in 100..200 {
        assert!(matches!(add(&mut cp, i), Value::Array(_)));
    }
    let restarted = Command::new(BIN)
        .args(["serve", "--cache-mb", "16", "--cluster-enabled", "--port"])
        .arg(port.to_string())
        .arg("--dir")
        .arg(dirs[1].path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut restarted = restarted;
    let addr = resp_client::listening_addr(&mut restarted);
    let _r = Server {
        child: restarted,
        addr,
    };
    assert_eq!(info(addr, "role"), "slave", "a replica from the start");
    assert_eq!(cp.cmd(&["WAIT", "1", "10000"]), Value::Int(1));
    let deadline = Instant::now() + Duration::from_secs(30);
    while info(addr, "master_repl_offset") != info(p.addr, "master_repl_offset") {
        assert!(Instant::now() < deadline, "the replica never caught up");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(info(p.addr, "sync_full"), full_syncs, "no second full sync");
    assert_ne!(info(p.addr, "sync_partial_ok"), partial, "a partial resync");
    let mut cr = Client::connect(addr);
    assert_eq!(cr.cmd(&["READONLY"]), ok());
    let items: Vec<String> = (0..7).map(|i| format!("i{i}")).collect();
    let mut query = vec!["CMS.QUERY", "c"];
    query.extend(items.iter().map(String::as_str));
    assert_eq!(cr.cmd(&query), cp.cmd(&query));
    let Value::Array(counts) = cr.cmd(&query) else {
        panic!("counts")
    };
    let total: i64 = counts
        .iter()
        .map(|c| if let Value::Int(n) = c { *n } else { 0 })
        .sum();
    assert_eq!(total, 200, "every increment once");
    assert_eq!(
        cr.cmd(&["CLUSTER", "MYID"]),
        Value::bulk(&cluster::node_id('r'))
    );
}
