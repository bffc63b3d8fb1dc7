//! `rocksketch serve` as a child process on a free port, killed (SIGKILL) when dropped.
#![allow(dead_code)]

use crate::resp_client;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_rocksketch");

pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a server over `dir` with a 16 MiB page cache and the extra `flags`.
pub fn start(dir: &Path, flags: &[&str]) -> Server {
    start_with(dir, &[&["--cache-mb", "16"], flags].concat())
}

/// Starts a server over `dir` with just these `flags`.
pub fn start_with(dir: &Path, flags: &[&str]) -> Server {
    let mut child = Command::new(BIN)
        .args(["serve", "--port", "0", "--dir"])
        .arg(dir)
        .args(flags)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = resp_client::listening_addr(&mut child);
    Server { child, addr }
}
