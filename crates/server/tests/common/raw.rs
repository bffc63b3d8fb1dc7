//! A raw connection for the host's tests: bytes in, bytes out, cut at random points
//! on the way in, and read until a marker, for a while, or to the end.
#![allow(dead_code)]

use super::resp_client::wire;
use rand::rngs::StdRng;
use rand::Rng;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

/// A raw connection: bytes in, bytes out.
pub struct Raw(pub TcpStream);

impl Raw {
    pub fn connect(addr: SocketAddr) -> Raw {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        Raw(stream)
    }

    /// Switches to RESP3, reading past `HELLO`'s map (which names the server).
    pub fn hello3(&mut self) {
        self.0.write_all(&wire(&["HELLO", "3"])).unwrap();
        self.0.write_all(&wire(&["ECHO", "hello"])).unwrap();
        self.read_until(b"$5\r\nhello\r\n");
    }

    /// Sends `bytes` cut at random points, with short pauses between the pieces.
    pub fn send_split(&mut self, bytes: &[u8], rng: &mut StdRng) {
        let mut at = 0;
        while at < bytes.len() {
            let piece = rng
                .gen_range(1..=bytes.len() - at)
                .min(rng.gen_range(1..64));
            self.0.write_all(&bytes[at..at + piece]).unwrap();
            at += piece;
            if rng.gen_bool(0.2) {
                std::thread::sleep(Duration::from_micros(rng.gen_range(0..800)));
            }
        }
    }

    /// Reads until the output ends with `end`.
    pub fn read_until(&mut self, end: &[u8]) -> Vec<u8> {
        self.0
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while !out.ends_with(end) {
            let n = self.0.read(&mut buf).expect("the reply arrives");
            assert!(n > 0, "closed after {:?}", String::from_utf8_lossy(&out));
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    /// What arrives within `wait` (nothing, if the server holds the requests).
    pub fn read_for(&mut self, wait: Duration) -> Vec<u8> {
        self.0.set_read_timeout(Some(wait)).unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = self.0.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    /// Shuts the writing side (a half-close) and reads every byte until the server
    /// closes the connection.
    pub fn finish(&mut self) -> Vec<u8> {
        self.0.shutdown(Shutdown::Write).unwrap();
        self.0
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut out = Vec::new();
        self.0
            .read_to_end(&mut out)
            .expect("the replies, then the end");
        out
    }
}
