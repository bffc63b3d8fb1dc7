//! `WAIT` answers as soon as replicas acknowledge (at once if they already have): a
//! parked `WAIT` is otherwise looked at once per I/O-thread tick (a millisecond), and a
//! replica's feed otherwise sends only after its pause (a few milliseconds); and an idle
//! replica gets a write at once. A client that writes and waits for its
//! replica each time (the way to make a write survive a failover) must not be held to
//! either. Alone in its binary, so no other test's servers share the cores. Then the
//! same waits among pipelining clients whose bytes are cut at random points: every
//! `WAIT` answers 1, every client gets all its replies, the replica ends as the primary.

#[path = "common/messy.rs"]
mod messy;
#[path = "common/replicas.rs"]
mod replicas;
#[path = "common/resp_client.rs"]
mod resp_client;

use replicas::{caught_up, follow, start};
use resp_client::{ok, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

#[test]
fn wait_answers_when_the_replica_acknowledges_not_at_the_next_tick() {
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let primary = start(dirs[0].path());
    let replica = start(dirs[1].path());
    follow(&replica, primary.addr);
    let mut c = primary.client();
    assert_eq!(c.cmd(&["BF.ADD", "bf", "first"]), Value::Int(1));
    caught_up(&primary, &replica);
    let mut rounds: Vec<Duration> = (0..200)
        .map(|i| {
            let started = Instant::now();
            assert_eq!(c.cmd(&["BF.ADD", "bf", &i.to_string()]), Value::Int(1));
            assert_eq!(c.cmd(&["WAIT", "1", "5000"]), Value::Int(1));
            started.elapsed()
        })
        .collect();
    rounds.sort();
    // Here about 0.3 ms with the optimized build; a tick's polling alone is 1 ms.
    assert!(
        rounds[100] < Duration::from_millis(1),
        "median write + WAIT {:?} (fastest {:?})",
        rounds[100],
        rounds[0]
    );
    let mut r = replica.client();
    assert_eq!(r.cmd(&["BF.EXISTS", "bf", "199"]), Value::Int(1));

    // Already acknowledged: answered at once, not parked until the next tick.
    caught_up(&primary, &replica);
    let mut answered: Vec<Duration> = (0..21)
        .map(|_| {
            let started = Instant::now();
            assert_eq!(c.cmd(&["WAIT", "1", "5000"]), Value::Int(1));
            started.elapsed()
        })
        .collect();
    answered.sort();
    assert!(answered[10] < Duration::from_millis(1), "{answered:?}");

    // An idle replica gets a write at once: the write wakes its feed, which otherwise
    // looks every few milliseconds.
    let mut lags: Vec<Duration> = (0..50)
        .map(|i| {
            let item = format!("marker-{i}");
            assert_eq!(c.cmd(&["BF.ADD", "markers", &item]), Value::Int(1));
            let written = Instant::now();
            while r.cmd(&["BF.EXISTS", "markers", &item]) != Value::Int(1) {
                assert!(written.elapsed() < Duration::from_secs(5), "{item}");
            }
            let lag = written.elapsed();
            std::thread::sleep(Duration::from_millis(6));
            lag
        })
        .collect();
    lags.sort();
    assert!(
        lags[25] < Duration::from_millis(1),
        "median lag {:?}",
        lags[25]
    );
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "cms", "1000", "4"]), ok());

    let writers: Vec<_> = (0..4)
        .map(|seed| {
            let addr = primary.addr;
            std::thread::spawn(move || messy_writer(addr, seed, 2000))
        })
        .collect();
    for i in 0..300 {
        assert!(matches!(
            c.cmd(&["CMS.INCRBY", "cms", "waited", "1"]),
            Value::Array(_)
        ));
        assert_eq!(c.cmd(&["WAIT", "1", "5000"]), Value::Int(1), "wait {i}");
    }
    for writer in writers {
        writer.join().unwrap();
    }
    assert_eq!(c.cmd(&["WAIT", "1", "5000"]), Value::Int(1));
    for (key, item) in [("cms", "waited"), ("cms", "0"), ("cms", "1999")] {
        assert_eq!(
            r.cmd(&["CMS.QUERY", key, item]),
            c.cmd(&["CMS.QUERY", key, item]),
            "{key} {item}"
        );
    }
    assert_eq!(r.cmd(&["BF.CARD", "bf"]), c.cmd(&["BF.CARD", "bf"]));
}

/// Pipelined `BF.ADD`s and `CMS.INCRBY`s, bytes cut at random points, then a half-close:
/// one reply each, none an error.
fn messy_writer(addr: SocketAddr, seed: u64, count: usize) {
    let requests: Vec<Vec<Vec<u8>>> = (0..count)
        .map(|i| {
            let item = i.to_string();
            let words = if i % 2 == 0 {
                vec!["BF.ADD", "bf", &item]
            } else {
                vec!["CMS.INCRBY", "cms", &item, "1"]
            };
            words.iter().map(|w| w.as_bytes().to_vec()).collect()
        })
        .collect();
    let replies = messy::run_messily(addr, &requests, seed);
    assert!(replies.iter().all(|r| r[0] != b'-'), "no errors");
}
