//! Slot migration (`CLUSTERX MIGRATE`), the test playing the controller: a slot moves
//! from one primary to another under writers that follow Redis Cluster's redirections
//! (`-ASK`, `-MOVED`, `-TRYAGAIN`), and every write acknowledged is on the target, the
//! source drops the slot once the topology says so, and its other slots stay. A
//! migration that cannot run is refused or fails leaving the slot where it was; an
//! import takes chunks only from its own link, only inside its slot, and ends with it.
//! (Pipelined clients with messy byte streams: `cluster_migrate_messy.rs`.)

#[path = "common/cluster.rs"]
mod cluster;
#[path = "common/migrate.rs"]
mod migrate;
#[path = "common/resp_client.rs"]
mod resp_client;

use cluster::{node_id, push, Node};
use migrate::{a_serves_all, cluster_info, count, tag_where, wait_for};
use resp_client::{error, ok, Client, TestServer, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn node(dir: &std::path::Path) -> TestServer {
    cluster::start_node(dir)
}

/// A client that follows redirections as a cluster client does: `MOVED` changes where
/// it sends, `ASK` sends one command with `ASKING` to the node named, `TRYAGAIN` waits
/// and sends again.
struct Follower {
    home: SocketAddr,
    links: HashMap<SocketAddr, Client>,
}

impl Follower {
    fn new(home: SocketAddr) -> Follower {
        Follower {
            home,
            links: HashMap::new(),
        }
    }

    fn on(&mut self, addr: SocketAddr) -> &mut Client {
        self.links
            .entry(addr)
            .or_insert_with(|| Client::connect(addr))
    }

    fn cmd(&mut self, words: &[&str]) -> Value {
        let mut asking: Option<SocketAddr> = None;
        for _ in 0..1000 {
            let reply = match asking.take() {
                Some(addr) => {
                    assert_eq!(self.on(addr).cmd(&["ASKING"]), ok());
                    self.on(addr).cmd(words)
                }
                None => {
                    let home = self.home;
                    self.on(home).cmd(words)
                }
            };
            let Value::Error(text) = &reply else {
                return reply;
            };
            let words: Vec<&str> = text.split(' ').collect();
            match words.as_slice() {
                ["MOVED", _, addr] => self.home = addr.parse().unwrap(),
                ["ASK", _, addr] => asking = Some(addr.parse().unwrap()),
                ["TRYAGAIN", ..] => std::thread::sleep(Duration::from_millis(2)),
                _ => return reply,
            }
        }
        panic!("redirected without end: {words:?}");
    }
}

#[test]
fn a_slot_migrates_under_writers_and_loses_nothing() {
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut a, b) = (node(dir_a.path()), node(dir_b.path()));
    let mut c = a.client();
    let mut nodes = vec![
        Node::primary('a', a.addr, &[(0, 8191)]),
        Node::primary('b', b.addr, &[(8192, 16383)]),
    ];
    for addr in [a.addr, b.addr] {
        assert_eq!(push(addr, &nodes, 1), ok());
    }
    let (tag, slot) = tag_where(&mut c, "m", |s| s < 8191);
    let (stay, stay_slot) = tag_where(&mut c, "s", |s| s < 8191 && s != slot);
    // A slot worth copying: filters and sketches of every kind, and a key beside it.
    for i in 0..300 {
        let key = format!("{{{tag}}}bf{i}");
        assert_eq!(c.cmd(&["BF.ADD", &key, "x"]), Value::Int(1));
    }
    assert_eq!(
        c.cmd(&["CMS.INITBYDIM", &format!("{{{tag}}}cms"), "2000", "5"]),
        ok()
    );
    assert_eq!(c.cmd(&["TDIGEST.CREATE", &format!("{{{tag}}}td")]), ok());
    for v in 0..500 {
        c.cmd(&["TDIGEST.ADD", &format!("{{{tag}}}td"), &v.to_string()]);
    }
    let stay_key = format!("{{{stay}}}k");
    assert_eq!(c.cmd(&["CF.ADD", &stay_key, "kept"]), Value::Int(1));
    let quantiles = [
        "TDIGEST.QUANTILE",
        &format!("{{{tag}}}td"),
        "0.1",
        "0.5",
        "0.9",
    ];
    let quantiles_before = c.cmd(&quantiles);

    // Writers: each counts its own increments (one item per sketch: exact counts) and
    // its filter's items, as acknowledged.
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (stop, home, tag) = (stop.clone(), a.addr, tag.clone());
            std::thread::spawn(move || {
                let mut client = Follower::new(home);
                let sketch = format!("{{{tag}}}w{w}");
                let filter = format!("{{{tag}}}f{w}");
                assert_eq!(client.cmd(&["CMS.INITBYDIM", &sketch, "100", "3"]), ok());
                let (mut acked, mut items) = (0i64, Vec::new());
                while !stop.load(Ordering::Relaxed) {
                    match client.cmd(&["CMS.INCRBY", &sketch, "x", "1"]) {
                        Value::Array(counts) => {
                            acked += 1;
                            assert_eq!(counts, vec![Value::Int(acked)], "writer {w}");
                        }
                        other => panic!("writer {w}: {other:?}"),
                    }
                    let item = format!("i{}", items.len());
                    match client.cmd(&["BF.ADD", &filter, &item]) {
                        Value::Int(_) => items.push(item),
                        other => panic!("writer {w}: {other:?}"),
                    }
                }
                (sketch, acked, filter, items)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let b_id = node_id('b');
    let migrate = ["CLUSTERX", "MIGRATE", &slot.to_string(), &b_id];
    assert_eq!(c.cmd(&migrate), ok());
    assert_eq!(
        c.cmd(&migrate),
        error("ERR There is already a migrating job")
    );
    let info = wait_for(a.addr, "migrating_state: success");
    for line in [
        format!("migrating_slot: {slot}"),
        format!("migrating_slot(s): {slot}"),
        format!("destination_node: {b_id}"),
    ] {
        assert!(info.lines().any(|l| l == line), "{line} in {info}");
    }
    wait_for(b.addr, "import_state: success");
    // Handed over, before the topology says so: the source asks the target.
    std::thread::sleep(Duration::from_millis(200));
    let some_key = format!("{{{tag}}}bf7");
    assert_eq!(
        c.cmd(&["BF.EXISTS", &some_key, "x"]),
        error(&format!("ASK {slot} {}", b.addr))
    );
    assert_eq!(
        c.cmd(&migrate),
        error("ERR Can't migrate slot which has been migrated")
    );
    // The controller's new topology gives the slot to the target.
    nodes[0].slots = vec![(0, slot - 1), (slot + 1, 8191)];
    nodes[1].slots = vec![(slot, slot), (8192, 16383)];
    for addr in [a.addr, b.addr] {
        assert_eq!(push(addr, &nodes, 2), ok());
    }
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let mut on_b = b.client();
    for writer in writers {
        let (sketch, acked, filter, items) = writer.join().unwrap();
        assert!(acked > 0);
        let counted = on_b.cmd(&["CMS.QUERY", &sketch, "x"]);
        assert_eq!(counted, Value::Array(vec![Value::Int(acked)]), "{sketch}");
        for item in items {
            assert_eq!(on_b.cmd(&["BF.EXISTS", &filter, &item]), Value::Int(1));
        }
    }
    assert_eq!(on_b.cmd(&quantiles), quantiles_before);
    assert_eq!(on_b.cmd(&["BF.EXISTS", &some_key, "x"]), Value::Int(1));
    let slot_arg = slot.to_string();
    assert_eq!(
        count(b.addr, &["CLUSTER", "COUNTKEYSINSLOT", &slot_arg]),
        300 + 2 + 8
    );
    // The source dropped the slot's records, and only those.
    assert_eq!(count(a.addr, &["CLUSTER", "COUNTKEYSINSLOT", &slot_arg]), 0);
    assert_eq!(c.cmd(&["CF.EXISTS", &stay_key, "kept"]), Value::Int(1));
    let stay_arg = stay_slot.to_string();
    assert_eq!(count(a.addr, &["CLUSTER", "COUNTKEYSINSLOT", &stay_arg]), 1);
    assert_eq!(
        c.cmd(&["BF.EXISTS", &some_key, "x"]),
        error(&format!("MOVED {slot} {}", b.addr))
    );
    // And it stays so across a restart.
    drop(c);
    a.stop();
    let a = node(dir_a.path());
    assert_eq!(count(a.addr, &["CLUSTER", "COUNTKEYSINSLOT", &slot_arg]), 0);
    assert_eq!(count(a.addr, &["CLUSTER", "COUNTKEYSINSLOT", &stay_arg]), 1);
}

#[test]
fn a_handed_over_slot_stays_handed_over_across_restarts() {
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (mut a, mut b) = (node(dir_a.path()), node(dir_b.path()));
    let nodes = a_serves_all(&a, &b);
    let mut c = a.client();
    let (tag, slot) = tag_where(&mut c, "r", |_| true);
    let key = format!("{{{tag}}}hll");
    assert_eq!(c.cmd(&["PFADD", &key, "a", "b", "c"]), Value::Int(1));
    let migrate = ["CLUSTERX", "MIGRATE", &slot.to_string(), &node_id('b')];
    assert_eq!(c.cmd(&migrate), ok());
    wait_for(a.addr, "migrating_state: success");
    drop(c);
    a.stop();
    b.stop();
    let (a, b) = (node(dir_a.path()), node(dir_b.path()));
    let ask = format!("ASK {slot} {}", nodes[1].addr);
    assert_eq!(a.client().cmd(&["PFCOUNT", &key]), error(&ask));
    assert_eq!(b.client().cmd(&["PFCOUNT", &key]), Value::Int(3));
    assert_eq!(b.client().cmd(&["PFADD", &key, "d"]), Value::Int(1));
}

#[test]
fn migrations_that_cannot_run_leave_the_slot_where_it_was() {
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let (a, b, r) = (
        node(dirs[0].path()),
        node(dirs[1].path()),
        node(dirs[2].path()),
    );
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let nodes = [
        Node::primary('a', a.addr, &[(0, 8191)]),
        Node::primary('b', b.addr, &[(8192, 16383)]),
        Node::replica('r', r.addr, 'b'),
        Node::primary('d', closed, &[]),
    ];
    for addr in [a.addr, b.addr, r.addr] {
        assert_eq!(push(addr, &nodes, 1), ok());
    }
    let mut c = a.client();
    let (tag, slot) = tag_where(&mut c, "f", |s| s < 8192);
    let key = format!("{{{tag}}}k");
    assert_eq!(c.cmd(&["BF.ADD", &key, "x"]), Value::Int(1));
    let s = slot.to_string();
    let refused = [
        (
            s.as_str(),
            node_id('r'),
            "ERR Can't migrate slot to a slave",
        ),
        (s.as_str(), node_id('a'), "ERR Can't migrate slot to myself"),
        (
            s.as_str(),
            node_id('z'),
            "ERR Can't find the destination node id",
        ),
        (
            "9000",
            node_id('b'),
            "ERR Can't migrate slot which doesn't belong to me",
        ),
        ("16384", node_id('b'), "ERR Invalid slot id"),
    ];
    for (slot, to, answer) in refused {
        assert_eq!(c.cmd(&["CLUSTERX", "MIGRATE", slot, &to]), error(answer));
    }
    // A target that does not answer: the migration fails, the slot serves on.
    assert_eq!(c.cmd(&["CLUSTERX", "MIGRATE", &s, &node_id('d')]), ok());
    wait_for(a.addr, "migrating_state: fail");
    assert_eq!(c.cmd(&["BF.ADD", &key, "y"]), Value::Int(1));
    assert_eq!(c.cmd(&["BF.EXISTS", &key, "x"]), Value::Int(1));

    // The import's side: chunks only on the link that started it, inside its slot.
    let mut link = b.client();
    let apply = |client: &mut Client, slot: &str, chunk: &[u8]| {
        client.send(&[b"CLUSTERX", b"APPLY", slot.as_bytes(), chunk]);
        client.read()
    };
    let none = format!("ERR No import of slot {slot} runs on this connection");
    assert_eq!(apply(&mut link, &s, &[1]), error(&none));
    assert_eq!(link.cmd(&["CLUSTERX", "IMPORT", &s, "0"]), ok());
    assert_eq!(
        b.client().cmd(&["CLUSTERX", "IMPORT", &s, "0"]),
        error("ERR There is already an importing job")
    );
    assert_eq!(apply(&mut b.client(), &s, &[1]), error(&none));
    assert_eq!(apply(&mut link, &s, &[1]), Value::Int(0));
    assert!(
        matches!(apply(&mut link, &s, &[9]), Value::Error(_)),
        "a bad version"
    );
    let ns = 0x8000u16 + slot;
    let mut chunk = vec![1u8, 0, 1];
    let meta_key = [&(ns + 1).to_be_bytes()[..], b"x"].concat();
    chunk.extend_from_slice(&(meta_key.len() as u32).to_le_bytes());
    chunk.extend_from_slice(&meta_key);
    chunk.extend_from_slice(&1u32.to_le_bytes());
    chunk.push(0);
    let outside = apply(&mut link, &s, &chunk);
    assert!(
        matches!(&outside, Value::Error(e) if e.contains("outside")),
        "{outside:?}"
    );
    wait_for(b.addr, "import_state: start");
    assert_eq!(
        r.client().cmd(&["CLUSTERX", "IMPORT", &s, "0"]),
        error("ERR Slave can't import slot")
    );
    // The link closes before success: the import fails.
    drop(link);
    wait_for(b.addr, "import_state: error");
    assert_eq!(count(b.addr, &["CLUSTER", "COUNTKEYSINSLOT", &s]), 0);
    // Success serves the slot; a failure on the same link after it (the source could
    // not save the hand-over) takes it back, with what was written meanwhile.
    let mut link = b.client();
    assert_eq!(link.cmd(&["CLUSTERX", "IMPORT", &s, "0"]), ok());
    assert_eq!(link.cmd(&["CLUSTERX", "IMPORT", &s, "1"]), ok());
    assert_eq!(b.client().cmd(&["BF.ADD", &key, "z"]), Value::Int(1));
    assert_eq!(count(b.addr, &["CLUSTER", "COUNTKEYSINSLOT", &s]), 1);
    assert_eq!(
        b.client().cmd(&["CLUSTERX", "IMPORT", &s, "0"]),
        error("ERR Can't import slot which has been imported"),
        "what it serves is not wiped by a second import"
    );
    assert_eq!(link.cmd(&["CLUSTERX", "IMPORT", &s, "2"]), ok());
    assert_eq!(
        b.client().cmd(&["BF.ADD", &key, "z"]),
        error(&format!("MOVED {slot} {}", a.addr))
    );
    assert_eq!(count(b.addr, &["CLUSTER", "COUNTKEYSINSLOT", &s]), 0);
    assert!(cluster_info(b.addr).contains("import_state: error"));
}
