//! Replication tests' helpers: servers in this process, a replica told to follow, and
//! waiting until it holds what its primary has.
#![allow(dead_code)]

use crate::resp_client::{ok, Client, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

pub fn start(dir: &Path) -> TestServer {
    TestServer::start(dir, ServerConfig::default())
}

pub fn follow(replica: &TestServer, primary: SocketAddr) {
    let port = primary.port().to_string();
    assert_eq!(
        replica.client().cmd(&["REPLICAOF", "127.0.0.1", &port]),
        ok()
    );
}

pub fn info_field(c: &mut Client, field: &str) -> String {
    let Value::Bulk(text) = c.cmd(&["INFO", "replication"]) else {
        panic!("INFO is a bulk string");
    };
    let text = String::from_utf8(text).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_default()
        .to_owned()
}

pub fn offset(server: &TestServer) -> String {
    info_field(&mut server.client(), "master_repl_offset")
}

/// Waits until `replica` holds every write `primary` has.
pub fn caught_up(primary: &TestServer, replica: &TestServer) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (want, have) = (offset(primary), offset(replica));
        if want == have {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "replica at {have}, primary at {want}; {:?}",
            replica.client().cmd(&["INFO", "replication"])
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
