//! Cluster mode against Redis itself: Debian's `redis-server --cluster-enabled yes`
//! owning every slot, and a `rocksketch serve --cluster-enabled` node owning every slot
//! (pushed by `CLUSTERX SETNODES ... 0`, so the epochs match), get the same commands in
//! RESP2 and RESP3; replies must be the same, but for node ids, addresses and ports.

#[path = "common/cluster.rs"]
mod cluster;
#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use cluster::{push, Node};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redis_server::RedisServer;
use resp_client::{ok, Client, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::time::{Duration, Instant};

struct Pair {
    ours: Client,
    theirs: Client,
    ports: [i64; 2],
}

impl Pair {
    fn same(&mut self, words: &[&str]) -> Value {
        let ours = normal(self.ours.cmd(words), &self.ports);
        let theirs = normal(self.theirs.cmd(words), &self.ports);
        assert_eq!(ours, theirs, "{words:?}");
        ours
    }
}

/// A reply with what differs between two nodes by nature made equal: ids (40 hex
/// digits), addresses and ports, `CLUSTER NODES`' address field, replication offsets.
fn normal(value: Value, ports: &[i64; 2]) -> Value {
    let text = |bytes: &[u8]| -> Vec<u8> {
        let text = String::from_utf8_lossy(bytes);
        let is_id = |w: &str| w.len() == 40 && w.bytes().all(|b| b.is_ascii_hexdigit());
        let lines = text.split('\n').map(|line| {
            let words = line.split(' ').enumerate().map(|(i, w)| match (i, w) {
                (_, w) if is_id(w) => "ID".to_owned(),
                (1, w) if w.contains('@') => "ADDR".to_owned(),
                (_, "127.0.0.1") => String::new(),
                (_, w) => w.to_owned(),
            });
            words.collect::<Vec<_>>().join(" ")
        });
        lines.collect::<Vec<_>>().join("\n").into_bytes()
    };
    match value {
        Value::Bulk(b) => Value::Bulk(text(&b)),
        Value::Verbatim(f, b) => Value::Verbatim(f, text(&b)),
        Value::Int(port) if ports.contains(&port) => Value::Int(0),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| normal(v, ports)).collect()),
        Value::Map(pairs) => Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| match k == Value::bulk("replication-offset") {
                    // Each server's own write history.
                    true => (k, Value::Int(0)),
                    false => (normal(k, ports), normal(v, ports)),
                })
                .collect(),
        ),
        other => other,
    }
}

fn servers() -> (tempfile::TempDir, TestServer, RedisServer) {
    let theirs = RedisServer::start_with(&["--cluster-enabled", "yes"]);
    let mut admin = Client::connect(theirs.addr);
    assert_eq!(admin.cmd(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]), ok());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !matches!(admin.cmd(&["CLUSTER", "INFO"]), Value::Bulk(b) if b.starts_with(b"cluster_state:ok"))
    {
        assert!(
            Instant::now() < deadline,
            "redis-server's cluster never came up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        cluster_enabled: true,
        ..ServerConfig::default()
    };
    let ours = TestServer::start(dir.path(), config);
    assert_eq!(
        push(
            ours.addr,
            &[Node::primary('a', ours.addr, &[(0, 16383)])],
            0
        ),
        ok()
    );
    (dir, ours, theirs)
}

fn pair(ours: &TestServer, theirs: &RedisServer, resp: u8) -> Pair {
    let mut pair = Pair {
        ours: ours.client(),
        theirs: Client::connect(theirs.addr),
        ports: [i64::from(ours.addr.port()), i64::from(theirs.addr.port())],
    };
    if resp == 3 {
        pair.ours.cmd(&["HELLO", "3"]);
        pair.theirs.cmd(&["HELLO", "3"]);
    }
    pair
}

#[test]
fn cluster_replies_are_redis_clusters() {
    let (_dir, ours, theirs) = servers();
    for resp in [2, 3] {
        let mut p = pair(&ours, &theirs, resp);
        for sub in ["INFO", "NODES", "SLOTS", "SHARDS"] {
            p.same(&["CLUSTER", sub]);
        }
        let Value::Bulk(id) = p.ours.cmd(&["CLUSTER", "MYID"]) else {
            panic!("MYID")
        };
        assert_eq!(id.len(), 40);
        // `CLUSTER HELP` in cluster mode: Redis's first and last lines (the host's
        // lists only the subcommands it answers).
        let help = |c: &mut Client| match c.cmd(&["CLUSTER", "HELP"]) {
            Value::Array(lines) => [lines[0].clone(), lines[lines.len() - 1].clone()],
            other => panic!("CLUSTER HELP: {other:?}"),
        };
        assert_eq!(help(&mut p.ours), help(&mut p.theirs));
        for words in [
            &["CLUSTER", "KEYSLOT", "{user1}:a"][..],
            &["CLUSTER", "KEYSLOT"],
            &["CLUSTER", "KEYSLOT", "a", "b"],
            &["CLUSTER", "COUNTKEYSINSLOT", "16384"],
            &["CLUSTER", "COUNTKEYSINSLOT", "-1"],
            &["CLUSTER", "COUNTKEYSINSLOT", "x"],
            &["CLUSTER", "GETKEYSINSLOT", "1", "-1"],
            &["CLUSTER", "GETKEYSINSLOT", "x", "1"],
            &["CLUSTER", "GETKEYSINSLOT", "16384", "1"],
            &["CLUSTER", "NOSUCH"],
            &["SELECT", "1"],
            &["SELECT", "0"],
            &["READONLY"],
            &["READWRITE"],
            &["READONLY", "x"],
            &["PFADD", "{t}a", "1", "2", "3"],
            &["PFADD", "{t}b", "3", "4"],
            &["PFADD", "other", "9"],
            &["PFCOUNT", "{t}a", "{t}b"],
            &["PFCOUNT", "{t}a", "other"],
            &["PFMERGE", "{t}c", "{t}a", "{t}b"],
            &["PFMERGE", "{t}c", "other"],
            &["DEL", "{t}a", "other"],
            &["EXISTS", "{t}a", "{t}b", "{t}c"],
            &["TOUCH", "{t}a", "{t}b", "{t}a"],
            &["TOUCH", "{t}a", "other"],
            &["CLUSTER", "COUNTKEYSINSLOT", "15495"],
            &["CLUSTER", "GETKEYSINSLOT", "15495", "2"],
            &["CLUSTER", "GETKEYSINSLOT", "15495", "0"],
            &["MULTI"],
            &["PFADD", "{t}a", "8"],
            &["PFADD", "other", "8"],
            &["EXEC"],
            &["PFCOUNT", "{t}a"],
            &["MULTI"],
            &["PFADD", "{t}a", "8"],
            &["PFADD", "{t}b", "8"],
            &["EXEC"],
            &["DBSIZE"],
            &["FLUSHALL"],
            &["DBSIZE"],
        ] {
            p.same(words);
        }
    }
}

#[test]
fn keys_hash_to_redis_clusters_slots() {
    let (_dir, ours, theirs) = servers();
    let mut p = pair(&ours, &theirs, 2);
    let mut rng = StdRng::seed_from_u64(7);
    let alphabet = b"ab{}xyz:0";
    for _ in 0..3000 {
        let len = rng.gen_range(0..12);
        let key: String = (0..len)
            .map(|_| alphabet[rng.gen_range(0..alphabet.len())] as char)
            .collect();
        p.same(&["CLUSTER", "KEYSLOT", &key]);
    }
}
