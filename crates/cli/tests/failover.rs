//! Failover without loss: a primary under load is killed (SIGKILL), its replica is
//! promoted with `REPLICAOF NO ONE`, and every increment acknowledged by `WAIT 1` is
//! there. The killed primary comes back as a replica of the promoted one (started with
//! `--replicaof`; its log may hold writes the new primary never got, so it must take a
//! full sync rather than continue), and the roles swap again, cycle after cycle
//! (`ROCKSKETCH_FAILOVER_CYCLES`, default 20); the same in cluster mode, with the
//! promotions and the rejoins made by topologies, as a controller makes them. Also the
//! replication settings `CONFIG GET` shows under Redis's names.

#[path = "../../server/tests/common/resp_client.rs"]
mod resp_client;

#[path = "../../server/tests/common/cluster.rs"]
mod cluster;

#[path = "common/process.rs"]
mod process;

use cluster::{push, Node};
use process::{start, Server};
use resp_client::{ok, Client, Value};
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn replica_of(dir: &Path, primary: SocketAddr) -> Server {
    let primary = format!("127.0.0.1:{}", primary.port());
    start(dir, &["--threads", "2", "--replicaof", &primary])
}

fn info_field(addr: SocketAddr, field: &str) -> String {
    let Value::Bulk(text) = Client::connect(addr).cmd(&["INFO", "replication"]) else {
        panic!("INFO answers a bulk string");
    };
    let text = String::from_utf8(text).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_default()
        .to_owned()
}

fn caught_up(primary: SocketAddr, replica: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let want = info_field(primary, "master_repl_offset");
        if info_field(replica, "master_link_status") == "up"
            && info_field(replica, "master_repl_offset") == want
        {
            return;
        }
        assert!(Instant::now() < deadline, "the replica never caught up");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn count(addr: SocketAddr) -> i64 {
    let mut c = Client::connect(addr);
    // A cluster's replica serves reads to READONLY connections (an error elsewhere).
    c.cmd(&["READONLY"]);
    match c.cmd(&["CMS.QUERY", "c", "x"]) {
        Value::Array(items) => match items.first() {
            Some(Value::Int(n)) => *n,
            other => panic!("not a count: {other:?}"),
        },
        other => panic!("not an array: {other:?}"),
    }
}

/// Increments `c` by 10 at a time, each ten acknowledged with `WAIT 1`, until the
/// connection fails (the primary is killed); adds to `acked` what a replica holds.
fn write_until_killed(addr: SocketAddr, acked: Arc<AtomicI64>, sent: Arc<AtomicI64>) {
    write_until(addr, acked, sent, Arc::default());
}

/// [`write_until_killed`], or until `stop` is set.
fn write_until(
    addr: SocketAddr,
    acked: Arc<AtomicI64>,
    sent: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
) {
    let mut c = Client::connect(addr);
    while !stop.load(Ordering::SeqCst) {
        let ten = b"*4\r\n$10\r\nCMS.INCRBY\r\n$1\r\nc\r\n$1\r\nx\r\n$1\r\n1\r\n".repeat(10);
        // Counted as sent before the write: a write cut by the kill may still land.
        sent.fetch_add(10, Ordering::SeqCst);
        if c.reader.get_mut().write_all(&ten).is_err() {
            return;
        }
        for _ in 0..10 {
            match c.try_read() {
                Some(Value::Array(_)) => {}
                _ => return,
            }
        }
        if c.reader
            .get_mut()
            .write_all(b"*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$4\r\n2000\r\n")
            .is_err()
        {
            return;
        }
        match c.try_read() {
            Some(Value::Int(n)) if n >= 1 => {
                acked.fetch_add(10, Ordering::SeqCst);
            }
            Some(Value::Int(_)) => {}
            _ => return,
        }
    }
}

/// A primary on `dirs[0]` with the counter `c` made, and its replica on `dirs[1]`,
/// caught up.
fn pair(dirs: &[tempfile::TempDir; 2]) -> (Server, Server) {
    let primary = start(dirs[0].path(), &["--threads", "2"]);
    assert_eq!(
        Client::connect(primary.addr).cmd(&["CMS.INITBYDIM", "c", "100", "3"]),
        Value::Simple("OK".into())
    );
    let replica = replica_of(dirs[1].path(), primary.addr);
    caught_up(primary.addr, replica.addr);
    (primary, replica)
}

/// The number of kill-and-promote cycles (`ROCKSKETCH_FAILOVER_CYCLES`, default 20).
fn cycles() -> usize {
    std::env::var("ROCKSKETCH_FAILOVER_CYCLES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20)
}

/// Kill-and-promote cycles from `primary` (on directory 0) and `replica` (on 1):
/// `promote` makes the replica (on directory `i`) the primary, `rejoin` starts the
/// killed primary's directory (`i`) again as the replica of the given primary (on the
/// other directory).
fn kill_and_promote(
    (mut primary, mut replica): (Server, Server),
    mut promote: impl FnMut(&Server, usize),
    mut rejoin: impl FnMut(usize, &Server) -> Server,
) {
    let (acked, sent) = (Arc::new(AtomicI64::new(0)), Arc::new(AtomicI64::new(0)));
    let mut at = 0; // which directory the primary runs on
    for cycle in 0..cycles() {
        let writers: Vec<_> = (0..3)
            .map(|_| {
                let (addr, acked, sent) = (primary.addr, acked.clone(), sent.clone());
                std::thread::spawn(move || write_until_killed(addr, acked, sent))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(300));
        // SIGKILL, mid-write.
        drop(primary);
        for writer in writers {
            writer.join().unwrap();
        }
        let promoted = replica;
        promote(&promoted, 1 - at);
        let (have, acked_now, sent_now) = (
            count(promoted.addr),
            acked.load(Ordering::SeqCst),
            sent.load(Ordering::SeqCst),
        );
        assert!(
            have >= acked_now && have <= sent_now,
            "cycle {cycle}: {have} on the promoted replica, {acked_now} acknowledged, \
             {sent_now} sent"
        );
        assert!(acked_now > 0, "cycle {cycle}: nothing was acknowledged");
        // Every later cycle counts from what the promoted one holds.
        acked.store(have, Ordering::SeqCst);
        sent.store(have, Ordering::SeqCst);
        // The old primary returns as the new one's replica.
        primary = promoted;
        replica = rejoin(at, &primary);
        at = 1 - at;
        caught_up(primary.addr, replica.addr);
        assert_eq!(
            count(replica.addr),
            have,
            "cycle {cycle}: the rejoined replica"
        );
    }
}

#[test]
fn acknowledged_writes_survive_kill_and_promote_cycles() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let promote = |promoted: &Server, _| {
        let answer = Client::connect(promoted.addr).cmd(&["REPLICAOF", "NO", "ONE"]);
        assert_eq!(answer, Value::Simple("OK".into()));
    };
    let rejoin = |at: usize, primary: &Server| replica_of(dirs[at].path(), primary.addr);
    kill_and_promote(pair(&dirs), promote, rejoin);
}

/// The same cycles in cluster mode, the test playing the controller: the promotion is
/// a topology naming the replica the primary of every slot, the killed primary returns
/// with its saved topology and follows once the next one names it the replica.
#[test]
fn acknowledged_writes_survive_cluster_failovers() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let ids = ['x', 'y'];
    let version = std::cell::Cell::new(1);
    let push_to = |servers: &[&Server], nodes: &[Node]| {
        for server in servers {
            assert_eq!(push(server.addr, nodes, version.get()), ok());
        }
        version.set(version.get() + 1);
    };
    let primary = start(dirs[0].path(), &["--threads", "2", "--cluster-enabled"]);
    let replica = start(dirs[1].path(), &["--threads", "2", "--cluster-enabled"]);
    let nodes = [
        Node::primary(ids[0], primary.addr, &[(0, 16383)]),
        Node::replica(ids[1], replica.addr, ids[0]),
    ];
    push_to(&[&primary, &replica], &nodes);
    assert_eq!(
        Client::connect(primary.addr).cmd(&["CMS.INITBYDIM", "c", "100", "3"]),
        ok()
    );
    caught_up(primary.addr, replica.addr);
    let promote = |promoted: &Server, at: usize| {
        push_to(
            &[promoted],
            &[Node::primary(ids[at], promoted.addr, &[(0, 16383)])],
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        while info_field(promoted.addr, "role") != "master" {
            assert!(Instant::now() < deadline, "never promoted");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let rejoin = |at: usize, primary: &Server| {
        let back = start(dirs[at].path(), &["--threads", "2", "--cluster-enabled"]);
        let nodes = [
            Node::primary(ids[1 - at], primary.addr, &[(0, 16383)]),
            Node::replica(ids[at], back.addr, ids[1 - at]),
        ];
        push_to(&[primary, &back], &nodes);
        back
    };
    kill_and_promote((primary, replica), promote, rejoin);
}

/// A replica killed (SIGKILL) in the middle of the stream and started again continues
/// from what its log holds (a partial sync, no full one): nothing lost, nothing applied
/// twice, whatever batch it was cut in.
#[test]
fn a_replica_killed_mid_stream_continues_without_loss_or_duplicates() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let (primary, mut replica) = pair(&dirs);
    let (acked, sent) = (Arc::new(AtomicI64::new(0)), Arc::new(AtomicI64::new(0)));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (addr, acked, sent, stop) = (primary.addr, acked.clone(), sent.clone(), stop.clone());
        std::thread::spawn(move || write_until(addr, acked, sent, stop))
    };
    for _ in 0..5 {
        std::thread::sleep(Duration::from_millis(200));
        drop(replica); // SIGKILL, mid-stream
        replica = replica_of(dirs[1].path(), primary.addr);
    }
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    caught_up(primary.addr, replica.addr);
    assert!(acked.load(Ordering::SeqCst) > 0);
    assert_eq!(count(replica.addr), count(primary.addr));
    assert_eq!(info_field(primary.addr, "sync_full"), "1");
    let partial: u32 = info_field(primary.addr, "sync_partial_ok").parse().unwrap();
    assert!(partial >= 6, "{partial} partial syncs for 6 connections");
}

/// The replication settings `CONFIG GET` shows under Redis's names and aliases: the
/// backlog as the flags set it (megabytes shown in bytes), a replica's read-only mode
/// (which cannot be turned off), no minimum of replicas for a write.
#[test]
fn replication_settings_show_under_redis_names() {
    let dir = tempfile::tempdir().unwrap();
    let flags = ["--repl-backlog-size", "8", "--repl-backlog-ttl", "60"];
    let server = start(dir.path(), &flags);
    let mut c = Client::connect(server.addr);
    let get = |c: &mut Client, name: &str| {
        let Value::Array(pair) = c.cmd(&["CONFIG", "GET", name]) else {
            panic!("CONFIG GET {name} is an array")
        };
        pair
    };
    for (name, want) in [
        ("repl-backlog-size", "8388608"),
        ("repl-backlog-ttl", "60"),
        ("replica-read-only", "yes"),
        ("slave-read-only", "yes"),
        ("min-replicas-to-write", "0"),
        ("min-slaves-to-write", "0"),
        ("slaveof", ""),
    ] {
        assert_eq!(
            get(&mut c, name),
            vec![Value::bulk(name), Value::bulk(want)],
            "{name}"
        );
    }
    let Value::Error(refused) = c.cmd(&["CONFIG", "SET", "slave-read-only", "no"]) else {
        panic!("a writable replica is refused")
    };
    assert!(refused.contains("not supported"), "{refused}");
    assert_eq!(c.cmd(&["CONFIG", "SET", "slave-read-only", "yes"]), ok());
    let Value::Error(immutable) = c.cmd(&["CONFIG", "SET", "repl-backlog-size", "1"]) else {
        panic!("the backlog is set at start")
    };
    assert!(immutable.contains("immutable"), "{immutable}");
    // The default: only the live logs are kept.
    drop(server);
    let other = tempfile::tempdir().unwrap();
    let server = start(other.path(), &[]);
    let mut c = Client::connect(server.addr);
    assert_eq!(get(&mut c, "repl-backlog-size")[1], Value::bulk("0"));
}
