//! Debian's `redis-server`, the oracle for core Redis behaviour, on a free loopback
//! port, in memory only, in a directory of its own, killed when dropped.
#![allow(dead_code)]

use super::resp_client::{Client, Value};
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Child,
    pub addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    /// Starts one on a free port. The port is picked by binding port 0 and letting it
    /// go, so another server (these tests run in parallel) may take it first: then this
    /// redis-server exits, and what answers on the port is another process. A server
    /// counts as started only when the process answering is this child; else another
    /// port is tried.
    pub fn start() -> RedisServer {
        RedisServer::start_with(&[])
    }

    /// The same with more arguments (`--cluster-enabled yes`).
    pub fn start_with(args: &[&str]) -> RedisServer {
        for _ in 0..20 {
            if let Some(server) = RedisServer::try_start(args) {
                return server;
            }
        }
        panic!("redis-server did not start on any of 20 ports");
    }

    fn try_start(args: &[&str]) -> Option<RedisServer> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("redis-server")
            .current_dir(dir.path())
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(args)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs (scripts/setup installs Debian's)");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let mut server = RedisServer {
            child,
            addr,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(addr).is_err() {
            if Instant::now() > deadline || !matches!(server.child.try_wait(), Ok(None)) {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let Value::Bulk(info) = Client::connect(addr).cmd(&["INFO", "server"]) else {
            return None;
        };
        let ours = format!("process_id:{}\r\n", server.child.id());
        let is_child = String::from_utf8_lossy(&info).contains(&ours);
        let alive = matches!(server.child.try_wait(), Ok(None));
        // Not ours: dropped, which kills the child if it still runs.
        (is_child && alive).then_some(server)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
