//! Pipelined clients whose bytes are cut at random points (and half-closed) lose
//! nothing across a slot's hand-over: a write answered `TRYAGAIN` or `-ASK` did not
//! happen here, every other one is on the target; and a write that meets the
//! hand-over's pause waits for it rather than being answered `TRYAGAIN`.

#[path = "common/cluster.rs"]
mod cluster;
#[path = "common/messy.rs"]
mod messy;
#[path = "common/migrate.rs"]
mod migrate;
#[path = "common/resp_client.rs"]
mod resp_client;

use cluster::node_id;
use migrate::{a_serves_all, pause_us, tag_where, wait_for};
use resp_client::{ok, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn messy_pipelines_lose_nothing_across_a_hand_over() {
    use messy::{read_messily, send_messily, wire};
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (
        cluster::start_node(dir_a.path()),
        cluster::start_node(dir_b.path()),
    );
    a_serves_all(&a, &b);
    let mut c = a.client();
    let (tag, slot) = tag_where(&mut c, "p", |_| true);
    let keys: Vec<String> = (0..6).map(|w| format!("{{{tag}}}m{w}")).collect();
    for key in &keys {
        assert_eq!(c.cmd(&["CMS.INITBYDIM", key, "100", "3"]), ok());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = keys
        .iter()
        .enumerate()
        .map(|(w, key)| {
            let (stop, addr, key) = (stop.clone(), a.addr, key.clone());
            std::thread::spawn(move || {
                let request: Vec<Vec<u8>> = ["CMS.INCRBY", &key, "x", "1"]
                    .iter()
                    .map(|s| s.as_bytes().to_vec())
                    .collect();
                let (mut acked, mut refused, mut round, mut retry) = (0i64, 0, 0u64, 0);
                while !stop.load(Ordering::Relaxed) || refused == 0 {
                    round += 1;
                    let seed = (w as u64) << 32 | round;
                    let stream = std::net::TcpStream::connect(addr).unwrap();
                    let sender = stream.try_clone().unwrap();
                    let bytes = wire(&vec![request.clone(); 50]);
                    let send = std::thread::spawn(move || send_messily(sender, bytes, seed, true));
                    for reply in read_messily(stream, 50, seed, true) {
                        match reply.first() {
                            Some(b'*') => {
                                acked += 1;
                                let want = format!("*1\r\n:{acked}\r\n");
                                assert_eq!(reply, want.as_bytes(), "client {w}");
                            }
                            Some(b'-') if reply.starts_with(b"-TRYAGAIN") => retry += 1,
                            Some(b'-') => refused += 1,
                            _ => panic!("client {w}: {}", String::from_utf8_lossy(&reply)),
                        }
                    }
                    send.join().unwrap();
                }
                (acked, retry)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let migrate = ["CLUSTERX", "MIGRATE", &slot.to_string(), &node_id('b')];
    assert_eq!(c.cmd(&migrate), ok());
    let info = wait_for(a.addr, "migrating_state: success");
    stop.store(true, Ordering::Relaxed);
    let mut on_b = b.client();
    for (key, client) in keys.iter().zip(clients) {
        let (acked, retry) = client.join().unwrap();
        assert!(acked > 0, "{key}");
        let counted = on_b.cmd(&["CMS.QUERY", key, "x"]);
        assert_eq!(counted, Value::Array(vec![Value::Int(acked)]), "{key}");
        // Writes wait out a pause shorter than the hold's bound: none was refused.
        if pause_us(&info) < 400_000 {
            assert_eq!(retry, 0, "{key}: TRYAGAIN answered");
        }
    }
}
