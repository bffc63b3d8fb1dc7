//! Replication over loopback, servers in this process: a replica and a replica of it
//! converge to the primary's answers for every structure under concurrent writers (some
//! pipelining, their bytes cut at random points, which the primary answers in batches
//! across connections and the replicas apply joined); a
//! replica refuses writes; `ROLE`, `INFO replication` and `WAIT` answer as Redis's; a
//! restarted replica continues with a partial sync, or takes a full one when the
//! primary's log no longer reaches back; a wrong password leaves the link down with a
//! clear error until `masterauth` is right (hostile primaries: replication_hostile.rs).

#[path = "common/messy.rs"]
mod messy;
#[path = "common/replicas.rs"]
mod replicas;
#[path = "common/resp_client.rs"]
mod resp_client;

use replicas::{caught_up, follow, info_field, start};
use resp_client::{ok, Client, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

const KEYS: &[&str] = &[
    "bf", "cf", "cms", "cms2", "tk", "td", "hll", "hll2", "wbf", "wcms",
];

fn create(c: &mut Client) {
    c.cmd(&["BF.RESERVE", "bf", "0.01", "500", "EXPANSION", "2"]);
    c.cmd(&["CF.RESERVE", "cf", "500"]);
    c.cmd(&["CMS.INITBYDIM", "cms", "300", "4"]);
    c.cmd(&["CMS.INITBYDIM", "cms2", "300", "4"]);
    c.cmd(&["TOPK.RESERVE", "tk", "5", "40", "4", "0.9"]);
    c.cmd(&["TDIGEST.CREATE", "td", "COMPRESSION", "50"]);
    // Windows of an hour: what a run writes stays in them (slices may pass).
    c.cmd(&["BF.RESERVE", "wbf", "0.01", "500", "WINDOW", "3600000"]);
    c.cmd(&["CMS.INITBYDIM", "wcms", "300", "4", "WINDOW", "3600000"]);
}

/// Random writes of every family, re-creations and deletes among them.
fn write_load(addr: SocketAddr, seed: u64, count: usize) {
    let mut c = Client::connect(addr);
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let item = (x % 700).to_string();
        let _ = match x % 100 {
            0..=24 => c.cmd(&["BF.ADD", "bf", &item]),
            25..=39 => c.cmd(&["CF.ADD", "cf", &item]),
            40..=44 => c.cmd(&["CF.DEL", "cf", &item]),
            45..=64 => c.cmd(&["CMS.INCRBY", "cms", &item, "2"]),
            65..=74 => c.cmd(&["TOPK.ADD", "tk", &item]),
            75..=83 => c.cmd(&["TDIGEST.ADD", "td", &item]),
            84..=86 => c.cmd(&["PFADD", "hll", &item, "x"]),
            87..=88 => c.cmd(&["CMS.MERGE", "cms2", "1", "cms"]),
            89 => c.cmd(&["PFMERGE", "hll2", "hll"]),
            90..=91 => c.cmd(&["DEL", KEYS[(x / 100 % KEYS.len() as u64) as usize]]),
            92..=93 => c.cmd(&["BF.ADD", "wbf", &item]),
            94..=95 => c.cmd(&["CMS.INCRBY", "wcms", &item, "3"]),
            _ => {
                create(&mut c);
                Value::Nil
            }
        };
    }
}

/// A pipelined writer whose bytes are cut at random points and sent with pauses, then
/// half-closed: one reply for every request (some may be errors: other writers delete
/// and re-create the keys meanwhile).
fn messy_load(addr: SocketAddr, seed: u64, count: usize) {
    let requests: Vec<Vec<Vec<u8>>> = (0..count as u64)
        .map(|i| {
            let item = ((i * 7 + seed * 13) % 700).to_string();
            let words: Vec<&str> = match i % 5 {
                0 => vec!["BF.ADD", "bf", &item],
                1 => vec!["CF.ADD", "cf", &item],
                2 => vec!["CMS.INCRBY", "cms", &item, "5"],
                3 => vec!["TOPK.ADD", "tk", &item],
                _ => vec!["TDIGEST.ADD", "td", &item],
            };
            words.iter().map(|w| w.as_bytes().to_vec()).collect()
        })
        .collect();
    let replies = messy::run_messily(addr, &requests, seed);
    assert_eq!(replies.len(), count);
}

/// Everything a reader may ask of the keys.
fn answers(server: &TestServer) -> Vec<Value> {
    let mut c = server.client();
    let mut out = vec![c.cmd(&["DBSIZE"])];
    for key in KEYS {
        out.push(c.cmd(&["TYPE", key]));
    }
    for item in (0..700).step_by(7) {
        let item = item.to_string();
        out.push(c.cmd(&["BF.EXISTS", "bf", &item]));
        out.push(c.cmd(&["CF.COUNT", "cf", &item]));
        out.push(c.cmd(&["CMS.QUERY", "cms", &item]));
        out.push(c.cmd(&["CMS.QUERY", "cms2", &item]));
        out.push(c.cmd(&["TOPK.QUERY", "tk", &item]));
        out.push(c.cmd(&["BF.EXISTS", "wbf", &item]));
        out.push(c.cmd(&["CMS.QUERY", "wcms", &item]));
    }
    out.push(c.cmd(&["BF.CARD", "bf"]));
    out.push(c.cmd(&["CF.INFO", "cf"]));
    out.push(c.cmd(&["CMS.INFO", "cms"]));
    out.push(c.cmd(&["TOPK.LIST", "tk", "WITHCOUNT"]));
    out.push(c.cmd(&["TDIGEST.INFO", "td"]));
    out.push(c.cmd(&["TDIGEST.QUANTILE", "td", "0.1", "0.5", "0.99"]));
    for key in ["hll", "hll2"] {
        out.push(c.cmd(&["PFCOUNT", key]));
        out.push(c.cmd(&["GET", key]));
    }
    out
}

#[test]
fn replicas_and_a_replica_of_a_replica_converge_under_concurrent_writers() {
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let primary = start(dirs[0].path());
    let replica = start(dirs[1].path());
    let chained = start(dirs[2].path());
    create(&mut primary.client());
    // Some writes before the replica exists: they come with its full sync.
    write_load(primary.addr, 1, 300);
    follow(&replica, primary.addr);
    follow(&chained, replica.addr);
    let mut writers: Vec<_> = (0..4)
        .map(|seed| {
            let addr = primary.addr;
            std::thread::spawn(move || write_load(addr, seed + 10, 600))
        })
        .collect();
    writers.extend((0..3).map(|seed| {
        let addr = primary.addr;
        std::thread::spawn(move || messy_load(addr, seed + 20, 1500))
    }));
    for writer in writers {
        writer.join().unwrap();
    }
    let mut c = primary.client();
    assert_eq!(c.cmd(&["WAIT", "1", "10000"]), Value::Int(1));
    // A t-digest read compresses the digest it read, on the primary (a write that
    // replicates, as RedisBloom's reads change what its INFO shows): read once first.
    let settled = answers(&primary);
    caught_up(&primary, &replica);
    caught_up(&primary, &chained);
    let want = answers(&primary);
    drop(settled);
    assert_eq!(
        answers(&replica),
        want,
        "the replica answers as the primary"
    );
    assert_eq!(answers(&chained), want, "the replica's replica too");

    // Replicas refuse writes, of every kind, and serve reads.
    let mut r = replica.client();
    let readonly = Value::Error("READONLY You can't write against a read only replica.".into());
    for write in [
        &["BF.ADD", "bf", "new"][..],
        &["CMS.INCRBY", "cms", "x", "1"],
        &["DEL", "bf"],
        &["FLUSHALL"],
        &["TDIGEST.CREATE", "other"],
    ] {
        assert_eq!(r.cmd(write), readonly, "{write:?}");
    }
    assert_eq!(answers(&replica), want);

    // ROLE and INFO as Redis shows them.
    let Value::Array(role) = c.cmd(&["ROLE"]) else {
        panic!("ROLE is an array")
    };
    assert_eq!(role[0], Value::bulk("master"));
    let Value::Array(peers) = &role[2] else {
        panic!("replicas listed")
    };
    assert_eq!(peers.len(), 1);
    let Value::Array(role) = r.cmd(&["ROLE"]) else {
        panic!("ROLE is an array")
    };
    assert_eq!(role[0], Value::bulk("slave"));
    assert_eq!(role[2], Value::Int(i64::from(primary.addr.port())));
    assert_eq!(role[3], Value::bulk("connected"));
    assert_eq!(info_field(&mut r, "master_link_status"), "up");
    assert_eq!(info_field(&mut c, "connected_slaves"), "1");
    assert_eq!(info_field(&mut r, "connected_slaves"), "1");

    // Promoted, the replica takes writes, and its own replica follows it on.
    assert_eq!(r.cmd(&["REPLICAOF", "NO", "ONE"]), ok());
    assert_eq!(r.cmd(&["BF.ADD", "bf", "after promotion"]), Value::Int(1));
    caught_up(&replica, &chained);
    assert_eq!(
        chained
            .client()
            .cmd(&["BF.EXISTS", "bf", "after promotion"]),
        Value::Int(1)
    );
}

#[test]
fn wait_parks_only_its_own_client() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        ServerConfig {
            threads: 1,
            ..ServerConfig::default()
        },
    );
    let mut waiting = server.client();
    let mut other = server.client();
    assert_eq!(waiting.cmd(&["WAIT", "0", "0"]), Value::Int(0));
    let started = Instant::now();
    // A pipeline: the PING after the WAIT is answered after it, in order.
    waiting.send(&[b"WAIT", b"1", b"300"]);
    waiting.send(&[b"PING"]);
    assert_eq!(other.cmd(&["PING"]), Value::Simple("PONG".into()));
    assert!(
        started.elapsed() < Duration::from_millis(250),
        "served meanwhile"
    );
    assert_eq!(waiting.read(), Value::Int(0));
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(waiting.read(), Value::Simple("PONG".into()));
    assert_eq!(
        waiting.cmd(&["WAIT", "1", "-1"]),
        Value::Error("ERR timeout is negative".into())
    );
    // Inside a transaction it answers at once.
    assert_eq!(waiting.cmd(&["MULTI"]), ok());
    assert_eq!(
        waiting.cmd(&["WAIT", "5", "0"]),
        Value::Simple("QUEUED".into())
    );
    assert_eq!(waiting.cmd(&["EXEC"]), Value::Array(vec![Value::Int(0)]));
}

#[test]
fn a_restarted_replica_continues_and_one_left_behind_resyncs_fully() {
    let (pdir, rdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let primary = start(pdir.path());
    let mut c = primary.client();
    create(&mut c);
    let mut replica = start(rdir.path());
    follow(&replica, primary.addr);
    write_load(primary.addr, 3, 300);
    caught_up(&primary, &replica);
    assert_eq!(info_field(&mut c, "sync_full"), "1");
    replica.stop();
    write_load(primary.addr, 4, 300);

    // Back, it asks to continue from what it holds.
    let mut replica = start(rdir.path());
    follow(&replica, primary.addr);
    caught_up(&primary, &replica);
    assert_eq!(answers(&replica), answers(&primary));
    assert_eq!(info_field(&mut c, "sync_full"), "1");
    assert_eq!(info_field(&mut c, "sync_partial_ok"), "2");
    replica.stop();

    // Writes, a flush that drops their log (SAVE checkpoints after flushing), more.
    write_load(primary.addr, 5, 300);
    assert_eq!(c.cmd(&["SAVE"]), ok());
    write_load(primary.addr, 6, 300);
    let replica = start(rdir.path());
    follow(&replica, primary.addr);
    caught_up(&primary, &replica);
    assert_eq!(answers(&replica), answers(&primary));
    assert_eq!(info_field(&mut c, "sync_full"), "2");
    assert_eq!(info_field(&mut c, "sync_partial_err"), "1");
}

#[test]
fn a_wrong_password_keeps_the_link_down_until_masterauth_is_right() {
    let (pdir, rdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let primary = TestServer::start(
        pdir.path(),
        ServerConfig {
            requirepass: Some("s3cret".into()),
            ..ServerConfig::default()
        },
    );
    let mut c = primary.client();
    assert_eq!(c.cmd(&["AUTH", "s3cret"]), ok());
    assert_eq!(c.cmd(&["BF.ADD", "bf", "x"]), Value::Int(1));
    let replica = start(rdir.path());
    let mut r = replica.client();
    assert_eq!(r.cmd(&["CONFIG", "SET", "masterauth", "wrong"]), ok());
    follow(&replica, primary.addr);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !info_field(&mut r, "master_link_error").contains("WRONGPASS") {
        assert!(
            Instant::now() < deadline,
            "{:?}",
            r.cmd(&["INFO", "replication"])
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(info_field(&mut r, "master_link_status"), "down");
    assert_eq!(r.cmd(&["EXISTS", "bf"]), Value::Int(0));
    assert_eq!(r.cmd(&["CONFIG", "SET", "masterauth", "s3cret"]), ok());
    let deadline = Instant::now() + Duration::from_secs(10);
    while info_field(&mut r, "master_link_status") != "up" {
        assert!(
            Instant::now() < deadline,
            "{:?}",
            r.cmd(&["INFO", "replication"])
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    while info_field(&mut r, "master_repl_offset") != info_field(&mut c, "master_repl_offset") {
        assert!(
            Instant::now() < deadline,
            "{:?}",
            r.cmd(&["INFO", "replication"])
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(r.cmd(&["BF.EXISTS", "bf", "x"]), Value::Int(1));
}

#[test]
fn expiry_flushes_and_chain_growth_show_on_the_replica_at_once() {
    let (pdir, rdir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let primary = start(pdir.path());
    let replica = start(rdir.path());
    follow(&replica, primary.addr);
    let (mut c, mut r) = (primary.client(), replica.client());
    // A filter that grows: its chain's new sub-filters come with the batches.
    assert_eq!(
        c.cmd(&["BF.RESERVE", "grows", "0.01", "10", "EXPANSION", "2"]),
        ok()
    );
    for i in 0..200 {
        c.cmd(&["BF.ADD", "grows", &i.to_string()]);
    }
    assert_eq!(c.cmd(&["BF.ADD", "short", "x"]), Value::Int(1));
    assert_eq!(c.cmd(&["PEXPIRE", "short", "300"]), Value::Int(1));
    assert_eq!(c.cmd(&["SELECT", "1"]), ok());
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "other", "10", "2"]), ok());
    assert_eq!(c.cmd(&["SELECT", "0"]), ok());
    caught_up(&primary, &replica);
    assert_eq!(r.cmd(&["BF.INFO", "grows"]), c.cmd(&["BF.INFO", "grows"]));
    for i in (0..200).step_by(13) {
        assert_eq!(
            r.cmd(&["BF.EXISTS", "grows", &i.to_string()]),
            Value::Int(1)
        );
    }
    assert_eq!(r.cmd(&["EXISTS", "short"]), Value::Int(1));
    assert!(matches!(r.cmd(&["PTTL", "short"]), Value::Int(ms) if ms > 0 && ms <= 300));
    std::thread::sleep(Duration::from_millis(350));
    // Expired on the replica's clock too, before the primary's sweep deletes it.
    assert_eq!(r.cmd(&["EXISTS", "short"]), Value::Int(0));
    assert_eq!(c.cmd(&["FLUSHALL"]), ok());
    caught_up(&primary, &replica);
    assert_eq!(r.cmd(&["DBSIZE"]), Value::Int(0));
    assert_eq!(r.cmd(&["SELECT", "1"]), ok());
    assert_eq!(r.cmd(&["DBSIZE"]), Value::Int(0));
}
