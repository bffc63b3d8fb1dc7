//! The host's input path under clients that are ordinary but rough: one that half-closes
//! after a long pipeline, one that floods an I/O thread while another waits, pipelines
//! cut at every byte, and answered writes from many clients at once that the batching
//! pass combines (still counted in `INFO commandstats`).

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{ok, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

fn one_thread(dir: &std::path::Path) -> TestServer {
    let config = ServerConfig {
        threads: 1,
        ..ServerConfig::default()
    };
    TestServer::start(dir, config)
}

fn wire(words: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    rocksketch::resp::encode_request(words, &mut out);
    out
}

#[test]
fn a_half_closed_client_has_every_command_run_and_answered() {
    let dir = tempfile::tempdir().unwrap();
    let server = one_thread(dir.path());
    assert_eq!(
        server.client().cmd(&["CMS.INITBYDIM", "c", "100", "3"]),
        ok()
    );
    const N: usize = 50_000;
    let one = wire(&[b"CMS.INCRBY", b"c", b"x", b"1"]);
    // As the client: everything sent, then the writing side shut, then read.
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    stream.write_all(&one.repeat(N)).unwrap();
    stream.shutdown(Shutdown::Write).unwrap();
    let mut replies = Vec::new();
    stream
        .read_to_end(&mut replies)
        .expect("reads to the close");
    let count = replies.windows(4).filter(|w| w == b"*1\r\n").count();
    assert_eq!(count, N, "every command answered before the close");
    assert!(replies.ends_with(format!("*1\r\n:{N}\r\n").as_bytes()));
    let query = server.client().cmd(&["CMS.QUERY", "c", "x"]);
    assert_eq!(query, Value::Array(vec![Value::Int(N as i64)]));
}

#[test]
fn a_half_closed_client_that_does_not_read_yet_gets_every_reply() {
    let dir = tempfile::tempdir().unwrap();
    let server = one_thread(dir.path());
    // More replies than socket buffers hold: the server must wait for the reader.
    const N: usize = 100_000;
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    stream
        .write_all(&wire(&[b"ECHO", &[b'e'; 100]]).repeat(N))
        .unwrap();
    stream.shutdown(Shutdown::Write).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let mut replies = Vec::new();
    stream
        .read_to_end(&mut replies)
        .expect("reads to the close");
    assert_eq!(replies.len(), N * (6 + 100 + 2));
}

#[test]
fn a_flooding_client_does_not_hold_up_another_on_its_io_thread() {
    let dir = tempfile::tempdir().unwrap();
    let server = one_thread(dir.path());
    // About 32 MB of requests, read back as fast as they come.
    const N: usize = 400_000;
    let mut flood = TcpStream::connect(server.addr).unwrap();
    flood
        .set_read_timeout(Some(Duration::from_secs(300)))
        .unwrap();
    let request = wire(&[b"ECHO", &[b'f'; 50]]);
    let reply_len = 5 + 50 + 2;
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let (pinged_tx, pinged_rx) = std::sync::mpsc::channel::<()>();
    let reader = {
        let mut flood = flood.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            let (mut got, mut at_ping) = (0usize, None);
            while got < N * reply_len {
                let n = flood.read(&mut buf).expect("reads");
                assert!(n > 0);
                if got == 0 {
                    started_tx.send(()).unwrap();
                }
                got += n;
                if at_ping.is_none() && pinged_rx.try_recv().is_ok() {
                    at_ping = Some(got / reply_len);
                }
            }
            at_ping
        })
    };
    let writer = std::thread::spawn(move || flood.write_all(&request.repeat(N)).unwrap());
    started_rx.recv().unwrap();
    let mut other = server.client();
    assert_eq!(other.cmd(&["PING"]), Value::Simple("PONG".into()));
    pinged_tx.send(()).unwrap();
    writer.join().unwrap();
    let at_ping = reader.join().unwrap().expect("the flood was still running");
    // Before, the flood's whole input ran before the PING: the PING was answered
    // after all but the last replies in flight.
    assert!(
        at_ping < N / 2,
        "PING answered only after {at_ping} of {N} flood replies"
    );
}

#[test]
fn pipelines_cut_at_every_byte_from_several_clients_run_as_sent() {
    let dir = tempfile::tempdir().unwrap();
    let server = one_thread(dir.path());
    let mut setup = server.client();
    assert_eq!(setup.cmd(&["BF.RESERVE", "bf", "0.01", "1000"]), ok());
    assert_eq!(setup.cmd(&["CF.RESERVE", "cf", "1000"]), ok());
    let threads: Vec<_> = (0..4)
        .map(|c| {
            let addr = server.addr;
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(addr).unwrap();
                stream.set_nodelay(true).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(60)))
                    .unwrap();
                let mut bytes = Vec::new();
                for i in 0..40 {
                    let item = format!("c{c}-{i}");
                    let (cmd, key): (&[u8], &[u8]) = match (c + i) % 2 {
                        0 => (b"BF.ADD", b"bf"),
                        _ => (b"CF.ADD", b"cf"),
                    };
                    bytes.extend(wire(&[cmd, key, item.as_bytes()]));
                }
                for byte in &bytes {
                    stream.write_all(std::slice::from_ref(byte)).unwrap();
                }
                let mut replies = vec![0u8; 40 * 4];
                stream.read_exact(&mut replies).unwrap();
                assert_eq!(replies, b":1\r\n".repeat(40), "client {c}");
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // Each item is in the filter it was sent to, and no item sent to the cuckoo
    // filter ran as a Bloom add (at 160 of 1000 items the Bloom filter's false
    // positive rate is about 1e-9; the cuckoo filter's, about 1%, is not asserted).
    for c in 0..4 {
        for i in 0..40 {
            let item = format!("c{c}-{i}");
            let to_bloom = (c + i) % 2 == 0;
            let got_bf = setup.cmd(&["BF.EXISTS", "bf", &item]);
            assert_eq!(got_bf, Value::Int(i64::from(to_bloom)), "{item} in bf");
            if !to_bloom {
                assert_eq!(
                    setup.cmd(&["CF.EXISTS", "cf", &item]),
                    Value::Int(1),
                    "{item}"
                );
            }
        }
    }
}

#[test]
fn batched_requests_from_many_clients_are_counted_in_commandstats() {
    let dir = tempfile::tempdir().unwrap();
    let server = one_thread(dir.path());
    let mut setup = server.client();
    assert_eq!(setup.cmd(&["BF.RESERVE", "bf", "0.01", "100000"]), ok());
    const CLIENTS: usize = 8;
    const EACH: usize = 2000;
    let threads: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let addr = server.addr;
            std::thread::spawn(move || {
                let mut stream = TcpStream::connect(addr).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(60)))
                    .unwrap();
                for chunk in 0..EACH / 100 {
                    let mut bytes = Vec::new();
                    for i in 0..100 {
                        let item = format!("{c}-{chunk}-{i}");
                        bytes.extend(wire(&[b"BF.ADD", b"bf", item.as_bytes()]));
                    }
                    stream.write_all(&bytes).unwrap();
                    let mut replies = vec![0u8; 100 * 4];
                    stream.read_exact(&mut replies).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let Value::Bulk(info) = setup.cmd(&["INFO", "commandstats"]) else {
        panic!("INFO is a bulk string");
    };
    let info = String::from_utf8(info).unwrap();
    let line = info
        .lines()
        .find(|l| l.starts_with("cmdstat_bf.add:"))
        .unwrap_or_else(|| panic!("no bf.add in {info}"));
    let want = format!("cmdstat_bf.add:calls={},", CLIENTS * EACH);
    assert!(line.starts_with(&want), "{line}");
}
