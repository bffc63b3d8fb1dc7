//! `CLIENT PAUSE` with many clients pipelining behind held writes, their byte streams
//! cut at random points: while the pause lasts the server spends (almost) nothing on
//! them and answers other clients' reads at once; when it ends, every held request is
//! answered, in order. A test binary of its own, so that no other test's work counts
//! in the CPU time it measures.

#[path = "common/resp_client.rs"]
mod resp_client;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use resp_client::{temp_server, wire, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// This process's CPU time (user and system), from `/proc/self/stat`.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

#[test]
fn a_pause_holds_pipelining_clients_for_nothing_and_answers_them_in_order() {
    let (_dir, server) = temp_server();
    let mut pauser = server.client();
    const CLIENTS: usize = 256;
    // More than one run of requests (512), so that some wait unparsed in the inbox.
    const PINGS: usize = 600;
    assert_eq!(
        pauser.cmd(&["CLIENT", "PAUSE", "4000", "WRITE"]),
        resp_client::ok()
    );
    let paused = Instant::now();
    // Each client: a write, then pings, all behind it, sent in random pieces.
    let mut streams = Vec::new();
    for c in 0..CLIENTS {
        let mut stream = TcpStream::connect(server.addr).unwrap();
        let mut bytes = wire(&["PFADD", &format!("k{c}"), "a"]);
        for _ in 0..PINGS {
            bytes.extend(wire(&["PING"]));
        }
        let mut rng = StdRng::seed_from_u64(c as u64);
        // Every fourth client sends it whole, so that the server parses more than it
        // runs before the write is held.
        if c % 4 == 0 {
            stream.write_all(&bytes).unwrap();
        }
        let mut at = if c % 4 == 0 { bytes.len() } else { 0 };
        while at < bytes.len() {
            let piece = rng.gen_range(1..=(bytes.len() - at).min(400));
            stream.write_all(&bytes[at..at + piece]).unwrap();
            at += piece;
        }
        streams.push(stream);
    }
    // Other clients' reads go on at once, however many clients are held.
    let mut reads = server.client();
    for _ in 0..50 {
        let asked = Instant::now();
        assert_eq!(reads.cmd(&["EXISTS", "k0"]), Value::Int(0));
        assert!(
            asked.elapsed() < Duration::from_millis(200),
            "a read waited"
        );
    }
    // While the rest of the pause lasts, the held clients cost (almost) nothing.
    let (cpu, wall) = (cpu_time(), Instant::now());
    std::thread::sleep(Duration::from_millis(1000));
    let spent = cpu_time() - cpu;
    assert!(
        paused.elapsed() < Duration::from_millis(3900),
        "the window fell in the pause"
    );
    assert!(
        spent < Duration::from_millis(100),
        "{spent:?} of CPU in {:?} of a pause",
        wall.elapsed()
    );
    // Then every request is answered, in order, once the pause is over.
    let mut expected = b":1\r\n".to_vec();
    for _ in 0..PINGS {
        expected.extend_from_slice(b"+PONG\r\n");
    }
    for stream in &mut streams {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut got = vec![0; expected.len()];
        stream.read_exact(&mut got).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected)
        );
    }
    assert!(
        paused.elapsed() >= Duration::from_millis(3900),
        "answered before the pause ended"
    );
}
