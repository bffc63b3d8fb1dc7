//! A primary's replicas in its client table, against Redis itself (a Debian
//! `redis-server` primary with a `redis-server` replica, and ours with ours):
//! `CLIENT LIST` lists each replica with flags `S` and its last command `replconf`,
//! `TYPE replica` / `slave` / `normal` pick them out or leave them out, `INFO clients`
//! does not count them as connected clients, and `CLIENT KILL TYPE replica` ends the
//! link, which the replica then makes again.

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/replicas.rs"]
mod replicas;
#[path = "common/resp_client.rs"]
mod resp_client;

use redis_server::RedisServer;
use resp_client::{Client, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Waits until the primary at `addr` has `n` replicas streaming.
fn replicas_online(addr: SocketAddr, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut c = Client::connect(addr);
    loop {
        let connected = replicas::info_field(&mut c, "connected_slaves");
        let Value::Bulk(info) = c.cmd(&["INFO", "replication"]) else {
            panic!("INFO answers text");
        };
        let online = String::from_utf8_lossy(&info)
            .matches("state=online")
            .count();
        if connected == n.to_string() && online == n {
            return;
        }
        assert!(Instant::now() < deadline, "no {n} replicas online");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `CLIENT LIST [TYPE t]` reduced to what does not depend on the server.
fn listed(c: &mut Client, kind: Option<&str>) -> Vec<String> {
    let mut words = vec!["CLIENT", "LIST"];
    words.extend(kind.iter().flat_map(|k| ["TYPE", *k]));
    let Value::Bulk(text) = c.cmd(&words) else {
        panic!("CLIENT LIST answers text");
    };
    let mut lines: Vec<String> = String::from_utf8_lossy(&text)
        .lines()
        .map(|line| {
            let field = |name| resp_client::client_field(line, name);
            format!(
                "flags={} cmd={} db={}",
                field("flags"),
                field("cmd"),
                field("db")
            )
        })
        .collect();
    lines.sort();
    lines
}

/// What a primary at `addr` with one replica online shows and does.
fn scenario(addr: SocketAddr) -> Vec<String> {
    replicas_online(addr, 1);
    let mut c = Client::connect(addr);
    let mut seen = Vec::new();
    for kind in [
        None,
        Some("replica"),
        Some("slave"),
        Some("normal"),
        Some("master"),
    ] {
        seen.push(format!("{kind:?}: {:?}", listed(&mut c, kind)));
    }
    let Value::Bulk(info) = c.cmd(&["INFO", "clients"]) else {
        panic!("INFO answers text");
    };
    let info = String::from_utf8_lossy(&info).into_owned();
    seen.extend(
        info.lines()
            .filter(|l| l.starts_with("connected_clients"))
            .map(str::to_owned),
    );
    seen.push(format!(
        "{:?}",
        c.cmd(&["CLIENT", "KILL", "TYPE", "normal"])
    ));
    seen.push(format!(
        "{:?}",
        c.cmd(&["CLIENT", "KILL", "TYPE", "replica"])
    ));
    // The replica links again, and is listed again once it has acknowledged (a
    // replica does every second).
    replicas_online(addr, 1);
    std::thread::sleep(Duration::from_millis(1500));
    seen.push(format!("again: {:?}", listed(&mut c, Some("slave"))));
    seen
}

#[test]
fn replicas_are_listed_and_killed_as_redis_lists_and_kills_them() {
    let theirs = RedisServer::start();
    let port = theirs.addr.port().to_string();
    let _their_replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let ours = replicas::start(dirs[0].path());
    let our_replica = replicas::start(dirs[1].path());
    replicas::follow(&our_replica, ours.addr);
    let (a, b) = (scenario(ours.addr), scenario(theirs.addr));
    assert_eq!(a, b);
    assert!(a[1].contains("flags=S cmd=replconf"), "{a:#?}");
    assert_eq!(a[a.len() - 2], "Int(1)", "{a:#?}");
}
