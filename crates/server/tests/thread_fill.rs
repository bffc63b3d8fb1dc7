//! Connections fill one I/O thread before the next gets any (`--thread-fill`): with two
//! threads and a fill of 4, the first four clients' work runs on `io-0` and the next
//! four's on `io-1`; once the first four close, new clients go to `io-0` again. Which
//! thread served is read from each thread's CPU time (`/proc/self/task/*/schedstat`),
//! so this test has a binary of its own: no other server's threads share the process.

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{Client, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// Nanoseconds on a CPU of the thread named `name`.
fn cpu_ns(name: &str) -> u64 {
    let tasks = std::fs::read_dir("/proc/self/task").expect("Linux's /proc");
    for task in tasks.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() == name {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap();
            return stat.split(' ').next().unwrap().parse().unwrap();
        }
    }
    panic!("no thread named {name}");
}

/// Each client makes 400 round trips.
fn work(clients: &mut [Client]) {
    for _ in 0..400 {
        for c in clients.iter_mut() {
            assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
        }
    }
}

/// CPU time `io-0` and `io-1` spend while `clients` work (once each has been answered,
/// so it has reached its thread).
fn spent(clients: &mut [Client]) -> (u64, u64) {
    for c in clients.iter_mut() {
        assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    }
    let before = (cpu_ns("io-0"), cpu_ns("io-1"));
    work(clients);
    (cpu_ns("io-0") - before.0, cpu_ns("io-1") - before.1)
}

#[test]
fn connections_fill_one_thread_before_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        threads: 2,
        thread_fill: 4,
        max_clients: 10,
        ..ServerConfig::default()
    };
    let server = TestServer::start_as_configured(dir.path(), config);
    let mut first: Vec<Client> = (0..4).map(|_| server.client()).collect();
    let (zero, one) = spent(&mut first);
    // The idle thread wakes every 200 ms at most; the busy one served 1 600 requests.
    assert!(
        one * 5 < zero,
        "the first four on io-0: io-0 {zero} ns, io-1 {one} ns"
    );

    let mut next: Vec<Client> = (0..4).map(|_| server.client()).collect();
    let (zero, one) = spent(&mut next);
    assert!(
        zero * 5 < one,
        "the next four on io-1: io-0 {zero} ns, io-1 {one} ns"
    );

    // The first four close; io-0 notices, and takes new clients again.
    drop(first);
    std::thread::sleep(Duration::from_millis(300));
    let mut again: Vec<Client> = (0..2).map(|_| server.client()).collect();
    let (zero, one) = spent(&mut again);
    assert!(
        one * 5 < zero,
        "new clients on io-0 again: io-0 {zero} ns, io-1 {one} ns"
    );
    drop((again, next));

    // Churn: 8 threads connecting three at a time, asking and closing, 40 times each,
    // past `maxclients` (10) at times, so some connections are refused. Once all are
    // gone the counts have not drifted: new clients fill io-0 first again.
    let addr = server.addr;
    let churn: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                for _ in 0..40 {
                    let held: Vec<TcpStream> = (0..3)
                        .filter_map(|_| TcpStream::connect(addr).ok())
                        .collect();
                    for mut s in held {
                        // A refused one gets an error and is closed: either is fine.
                        let _ = s.write_all(b"PING\r\n");
                        let _ = s.read(&mut [0u8; 64]);
                    }
                }
            })
        })
        .collect();
    for t in churn {
        t.join().unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let Value::Bulk(stats) = server.client().cmd(&["INFO", "stats"]) else {
        panic!("INFO stats")
    };
    let stats = String::from_utf8(stats).unwrap();
    assert!(
        stats.contains("rejected_connections:") && !stats.contains("rejected_connections:0\r"),
        "the churn went past maxclients: {stats}"
    );
    let mut last: Vec<Client> = (0..3).map(|_| server.client()).collect();
    let (zero, one) = spent(&mut last);
    assert!(
        one * 5 < zero,
        "after churn, io-0 first: io-0 {zero} ns, io-1 {one} ns"
    );
}
