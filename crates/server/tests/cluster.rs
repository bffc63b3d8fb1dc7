//! Cluster mode: routing replies (`MOVED`, `CROSSSLOT`, `CLUSTERDOWN`) on every path a
//! command takes (alone, in a pipelined batch, queued in `MULTI`), reads from replicas
//! after `READONLY`, the controller's `CLUSTERX` rules, a topology and slot data that
//! survive a restart, and keyspace listings across the slots' namespaces.

#[path = "common/cluster.rs"]
mod cluster;
#[path = "common/resp_client.rs"]
mod resp_client;

use cluster::{node_id, push, slot_of, Node};
use resp_client::{error, ok, Client, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::collections::HashSet;
use std::net::SocketAddr;

fn node(dir: &std::path::Path) -> TestServer {
    cluster::start_node(dir)
}

fn moved(slot: u16, addr: SocketAddr) -> Value {
    error(&format!("MOVED {slot} {addr}"))
}

const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";
const UNSERVED: &str = "CLUSTERDOWN Hash slot not served";

/// A key whose slot `pick` accepts, of the form `{prefix}n`.
fn key_where(client: &mut Client, prefix: &str, pick: impl Fn(u16) -> bool) -> (String, u16) {
    (0..)
        .map(|n| format!("{prefix}{n}"))
        .map(|key| {
            let slot = slot_of(client, &key);
            (key, slot)
        })
        .find(|(_, slot)| pick(*slot))
        .unwrap()
}

#[test]
fn commands_run_where_their_slot_is_served_and_are_redirected_elsewhere() {
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (node(dir_a.path()), node(dir_b.path()));
    let mut c = a.client();
    // No topology yet: nothing is served.
    assert_eq!(c.cmd(&["BF.ADD", "k", "x"]), error(UNSERVED));
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    // A serves 0-8191 but for a gap (8000-8191 unassigned); B 8192-16383.
    let nodes = [
        Node::primary('a', a.addr, &[(0, 7999)]),
        Node::primary('b', b.addr, &[(8192, 16383)]),
    ];
    for addr in [a.addr, b.addr] {
        assert_eq!(push(addr, &nodes, 1), ok());
    }
    let (mine, _) = key_where(&mut c, "k", |s| s < 8000);
    let (theirs, their_slot) = key_where(&mut c, "k", |s| s >= 8192);
    let (gap, _) = key_where(&mut c, "k", |s| (8000..8192).contains(&s));
    assert_eq!(c.cmd(&["BF.ADD", &mine, "x"]), Value::Int(1));
    assert_eq!(c.cmd(&["BF.ADD", &theirs, "x"]), moved(their_slot, b.addr));
    assert_eq!(b.client().cmd(&["BF.ADD", &theirs, "x"]), Value::Int(1));
    assert_eq!(c.cmd(&["BF.EXISTS", &gap, "x"]), error(UNSERVED));
    // Multi-key commands: one slot, or CROSSSLOT (the merges' sources included).
    let (tag, tag_slot) = key_where(&mut c, "t", |s| s < 8000);
    let tagged: Vec<String> = (1..=3).map(|i| format!("{{{tag}}}{i}")).collect();
    let tagged: Vec<&str> = tagged.iter().map(String::as_str).collect();
    assert_eq!(slot_of(&mut c, tagged[2]), tag_slot);
    let (home, other) = (&mut c, mine.as_str());
    assert_eq!(home.cmd(&["DEL", tagged[0], tagged[1]]), Value::Int(0));
    assert_eq!(home.cmd(&["DEL", tagged[0], other]), error(CROSSSLOT));
    assert_eq!(home.cmd(&["CMS.INITBYDIM", tagged[0], "10", "2"]), ok());
    assert_eq!(home.cmd(&["CMS.INITBYDIM", tagged[1], "10", "2"]), ok());
    let merge = ["CMS.MERGE", tagged[0], "2", tagged[1], other];
    assert_eq!(home.cmd(&merge), error(CROSSSLOT));
    let merge = ["CMS.MERGE", tagged[0], "1", tagged[1]];
    assert_eq!(home.cmd(&merge), ok());
    let merge = ["TDIGEST.MERGE", tagged[2], "2", tagged[0], &theirs];
    assert_eq!(home.cmd(&merge), error(CROSSSLOT));
    assert_eq!(home.cmd(&["PFCOUNT", tagged[0], other]), error(CROSSSLOT));
    // A pipelined run of one command on one key (a batch) is redirected whole.
    let mut wire = Vec::new();
    for i in 0..50 {
        wire.extend(
            format!(
                "*3\r\n$6\r\nBF.ADD\r\n${}\r\n{theirs}\r\n$2\r\ny{}\r\n",
                theirs.len(),
                i % 10
            )
            .as_bytes(),
        );
    }
    c.send_raw(&wire);
    for _ in 0..50 {
        assert_eq!(c.read(), moved(their_slot, b.addr));
    }
    // MULTI: a command for another node fails the transaction when queued; commands
    // of two slots fail it at EXEC.
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(
        c.cmd(&["BF.ADD", &mine, "q"]),
        Value::Simple("QUEUED".into())
    );
    assert_eq!(c.cmd(&["BF.ADD", &theirs, "q"]), moved(their_slot, b.addr));
    assert_eq!(
        c.cmd(&["EXEC"]),
        error("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(
        c.cmd(&["BF.ADD", &mine, "q"]),
        Value::Simple("QUEUED".into())
    );
    assert_eq!(
        c.cmd(&["BF.ADD", tagged[0], "q"]),
        Value::Simple("QUEUED".into())
    );
    assert_eq!(c.cmd(&["EXEC"]), error(CROSSSLOT));
    assert_eq!(
        c.cmd(&["BF.EXISTS", &mine, "q"]),
        Value::Int(0),
        "nothing ran"
    );
    // One database only.
    assert_eq!(c.cmd(&["SELECT", "0"]), ok());
    assert_eq!(
        c.cmd(&["SELECT", "1"]),
        error("ERR SELECT is not allowed in cluster mode")
    );
}

#[test]
fn a_replica_serves_reads_after_readonly_and_takes_over_when_promoted() {
    let (dir_p, dir_r) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut p, r) = (node(dir_p.path()), node(dir_r.path()));
    let nodes = [
        Node::primary('p', p.addr, &[(0, 16383)]),
        Node::replica('r', r.addr, 'p'),
    ];
    for addr in [p.addr, r.addr] {
        assert_eq!(push(addr, &nodes, 1), ok());
    }
    let mut cp = p.client();
    let slot = slot_of(&mut cp, "bf");
    assert_eq!(cp.cmd(&["BF.ADD", "bf", "x"]), Value::Int(1));
    assert_eq!(
        cp.cmd(&["WAIT", "1", "10000"]),
        Value::Int(1),
        "the replica follows"
    );
    let mut cr = r.client();
    assert_eq!(cr.cmd(&["BF.EXISTS", "bf", "x"]), moved(slot, p.addr));
    assert_eq!(cr.cmd(&["READONLY"]), ok());
    assert_eq!(cr.cmd(&["BF.EXISTS", "bf", "x"]), Value::Int(1));
    assert_eq!(
        cr.cmd(&["BF.ADD", "bf", "y"]),
        moved(slot, p.addr),
        "writes go to the primary"
    );
    assert_eq!(cr.cmd(&["READWRITE"]), ok());
    assert_eq!(cr.cmd(&["BF.EXISTS", "bf", "x"]), moved(slot, p.addr));
    // The primary goes; the controller promotes the replica.
    p.stop();
    let promoted = [Node::primary('r', r.addr, &[(0, 16383)])];
    assert_eq!(push(r.addr, &promoted, 2), ok());
    assert_eq!(cr.cmd(&["BF.ADD", "bf", "y"]), Value::Int(1));
    assert_eq!(
        cr.cmd(&["BF.EXISTS", "bf", "x"]),
        Value::Int(1),
        "nothing lost"
    );
    let Value::Array(role) = cr.cmd(&["ROLE"]) else {
        panic!("ROLE")
    };
    assert_eq!(role[0], Value::bulk("master"));
}

#[test]
fn the_controllers_rules_hold_and_the_topology_and_slots_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = node(dir.path());
    let mut c = n.client();
    let Value::Bulk(first_id) = c.cmd(&["CLUSTER", "MYID"]) else {
        panic!("MYID")
    };
    assert_eq!(first_id.len(), 40);
    assert_eq!(c.cmd(&["CLUSTERX", "VERSION"]), Value::bulk("-1"));
    let Value::Array(config) = c.cmd(&["CONFIG", "GET", "cluster-enabled"]) else {
        panic!()
    };
    assert_eq!(config[1], Value::bulk("yes"));
    let other: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let nodes = [
        Node::primary('m', n.addr, &[(0, 9999)]),
        Node::primary('o', other, &[(10000, 16383)]),
    ];
    assert_eq!(push(n.addr, &nodes, 5), ok());
    // Named in the list by its address: this node took the list's id.
    assert_eq!(c.cmd(&["CLUSTER", "MYID"]), Value::bulk(&node_id('m')));
    assert_eq!(
        push(n.addr, &nodes, 4),
        error("ERR Invalid cluster version")
    );
    assert_eq!(
        push(n.addr, &nodes, 5),
        ok(),
        "the same version changes nothing"
    );
    let setslot = |c: &mut Client, version: &str| {
        c.cmd(&[
            "CLUSTERX",
            "SETSLOT",
            "10000",
            "NODE",
            &node_id('m'),
            version,
        ])
    };
    assert_eq!(setslot(&mut c, "7"), error("ERR Invalid cluster version"));
    assert_eq!(setslot(&mut c, "6"), ok());
    assert_eq!(c.cmd(&["CLUSTERX", "VERSION"]), Value::bulk("6"));
    let bad = ["CLUSTERX", "SETNODES", "not a node list", "9"];
    assert_eq!(c.cmd(&bad), error("ERR Invalid cluster nodes info"));
    assert_eq!(
        c.cmd(&["CLUSTERX", "SETNODEID", "short"]),
        error("ERR Invalid cluster node id")
    );
    assert_eq!(
        c.cmd(&["CLUSTERX", "MIGRATE", "1", &node_id('o'), "SYNC"]),
        error(
            "ERR only asynchronous migrations of one slot are supported: \
             CLUSTER INFO shows the migration's state"
        )
    );
    // Keys in many slots: listed once each, however a SCAN steps through them.
    let keys: Vec<String> = (0..400).map(|i| format!("key:{i}")).collect();
    let mut served = Vec::new();
    for key in &keys {
        let slot = slot_of(&mut c, key);
        if slot <= 10000 {
            assert_eq!(c.cmd(&["PFADD", key, "x"]), Value::Int(1));
            served.push((key.clone(), slot));
        }
    }
    let nodes_before = c.cmd(&["CLUSTER", "NODES"]);
    drop(c);
    n.stop();
    let n = node(dir.path());
    let mut c = n.client();
    assert_eq!(c.cmd(&["CLUSTERX", "VERSION"]), Value::bulk("6"));
    assert_eq!(c.cmd(&["CLUSTER", "NODES"]), nodes_before);
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(served.len() as i64));
    let (key, slot) = &served[0];
    let in_slot = served.iter().filter(|(_, s)| s == slot).count() as i64;
    let count = c.cmd(&["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]);
    assert_eq!(count, Value::Int(in_slot));
    let Value::Array(listed) = c.cmd(&["CLUSTER", "GETKEYSINSLOT", &slot.to_string(), "100"])
    else {
        panic!("GETKEYSINSLOT")
    };
    assert!(listed.contains(&Value::bulk(key)));
    assert_eq!(listed.len() as i64, in_slot);
    let mut seen = HashSet::new();
    let mut cursor = "0".to_owned();
    loop {
        let Value::Array(page) = c.cmd(&["SCAN", &cursor, "COUNT", "7"]) else {
            panic!("SCAN")
        };
        let (Value::Bulk(next), Value::Array(found)) = (&page[0], &page[1]) else {
            panic!()
        };
        for key in found {
            let Value::Bulk(key) = key else {
                panic!("{key:?}")
            };
            assert!(seen.insert(key.clone()), "{key:?} listed twice");
        }
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), served.len());
    let Value::Array(all) = c.cmd(&["KEYS", "key:*"]) else {
        panic!("KEYS")
    };
    assert_eq!(all.len(), served.len());
    assert_eq!(c.cmd(&["PFCOUNT", key]), Value::Int(1));
    assert_eq!(c.cmd(&["FLUSHALL"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(0));
}

#[test]
fn without_cluster_mode_the_cluster_commands_say_so() {
    let (_dir, server) = resp_client::temp_server();
    let mut c = server.client();
    let disabled = error("ERR This instance has cluster support disabled");
    assert_eq!(c.cmd(&["CLUSTER", "INFO"]), disabled);
    assert_eq!(c.cmd(&["READONLY"]), disabled);
    assert_eq!(
        c.cmd(&["CLUSTERX", "VERSION"]),
        error("ERR Cluster mode is not enabled")
    );
    assert_eq!(c.cmd(&["CLUSTER", "KEYSLOT", "foo"]), Value::Int(12182));
    let config = c.cmd(&["CONFIG", "GET", "cluster-enabled"]);
    let no = Value::Array(vec![Value::bulk("cluster-enabled"), Value::bulk("no")]);
    assert_eq!(config, no);
}

#[test]
fn requests_combined_across_connections_are_routed_too() {
    // One I/O thread: clients ready together have their runs of one key combined.
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        cluster_enabled: true,
        threads: 1,
        ..ServerConfig::default()
    };
    let a = TestServer::start_as_configured(dir.path(), config);
    let other: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let nodes = [
        Node::primary('a', a.addr, &[(0, 8191)]),
        Node::primary('b', other, &[(8192, 16383)]),
    ];
    assert_eq!(push(a.addr, &nodes, 1), ok());
    let mut c = a.client();
    let (mine, _) = key_where(&mut c, "k", |s| s < 8192);
    let (theirs, their_slot) = key_where(&mut c, "k", |s| s >= 8192);
    // Large enough that a false positive among 100 items is out of the question.
    assert_eq!(c.cmd(&["BF.RESERVE", &mine, "0.000001", "100000"]), ok());
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (mine, theirs) = (mine.clone(), theirs.clone());
            let addr = a.addr;
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                let mut wins = Vec::new();
                for i in 0..300 {
                    let key = if t % 2 == 0 { &mine } else { &theirs };
                    let reply = c.cmd(&["BF.ADD", key, &format!("i{}", i % 100)]);
                    if t % 2 == 1 {
                        assert_eq!(reply, moved(their_slot, other), "client {t} request {i}");
                    } else if reply == Value::Int(1) {
                        wins.push(i % 100);
                    } else {
                        assert_eq!(reply, Value::Int(0), "client {t} request {i}");
                    }
                }
                wins
            })
        })
        .collect();
    let mut wins: Vec<usize> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    wins.sort_unstable();
    assert_eq!(wins, (0..100).collect::<Vec<_>>(), "one winner per item");
    assert_eq!(
        c.cmd(&["DBSIZE"]),
        Value::Int(1),
        "nothing was written for the other node"
    );
}
