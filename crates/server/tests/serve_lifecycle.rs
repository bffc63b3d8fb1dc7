//! The RESP host's life over raw sockets: many clients at once, shutdown (by command
//! and from a handle) keeping every acknowledged write, expiry and its background sweep.

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{error, ok, temp_server as server, Client, TestServer, Value};
use rocksketch::{Store, StoreOptions};
use rocksketch_server::ServerConfig;
use std::time::Duration;

#[test]
fn sixteen_clients_get_exact_results() {
    let (_dir, server) = server();
    let mut setup = server.client();
    // Wide enough that 16 × 50 items land in distinct columns: every count is exact.
    assert_eq!(setup.cmd(&["CMS.INITBYDIM", "counts", "100000", "4"]), ok());
    assert_eq!(setup.cmd(&["BF.RESERVE", "seen", "0.001", "1000"]), ok());
    let addr = server.addr;
    let threads: Vec<_> = (0..16)
        .map(|t| {
            std::thread::spawn(move || {
                let mut c = Client::connect(addr);
                for round in 0..20 {
                    let mut wire = Vec::new();
                    for i in 0..50 {
                        let item = format!("item-{i}");
                        let seen = format!("t{t}-r{round}-i{i}");
                        for args in [
                            vec!["CMS.INCRBY", "counts", &item, "1"],
                            vec!["BF.ADD", "seen", &seen],
                        ] {
                            wire.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
                            for a in args {
                                wire.extend_from_slice(
                                    format!("${}\r\n{a}\r\n", a.len()).as_bytes(),
                                );
                            }
                        }
                    }
                    c.send_raw(&wire);
                    for _ in 0..100 {
                        let reply = c.read();
                        assert!(
                            matches!(reply, Value::Array(_) | Value::Int(_)),
                            "{reply:?}"
                        );
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let items: Vec<String> = (0..50).map(|i| format!("item-{i}")).collect();
    let mut query = vec!["CMS.QUERY", "counts"];
    query.extend(items.iter().map(String::as_str));
    assert_eq!(
        setup.cmd(&query),
        Value::Array(vec![Value::Int(16 * 20); 50])
    );
    for t in 0..16 {
        for round in [0, 19] {
            let seen = format!("t{t}-r{round}-i49");
            assert_eq!(setup.cmd(&["BF.EXISTS", "seen", &seen]), Value::Int(1));
        }
    }
    let Value::Array(card) = setup.cmd(&["BF.INFO", "seen", "ITEMS"]) else {
        panic!()
    };
    // Adds of distinct items: the count only misses items that collided (rare at 0.1 %).
    assert!(
        matches!(card[0], Value::Int(n) if (15_900..=16_000).contains(&n)),
        "{card:?}"
    );
}

#[test]
fn shutdown_keeps_every_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start(dir.path(), ServerConfig::default());
    let mut c = server.client();
    let mut idle = server.client();
    assert_eq!(idle.cmd(&["PING"]), Value::Simple("PONG".into()));
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "c", "50", "2"]), ok());
    assert_eq!(
        c.cmd(&["CMS.INCRBY", "c", "a", "41"]),
        Value::Array(vec![Value::Int(41)])
    );
    assert_eq!(c.cmd(&["BF.ADD", "f", "kept"]), Value::Int(1));
    c.send(&[b"SHUTDOWN"]);
    assert!(c.try_read().is_none(), "SHUTDOWN closes without a reply");
    server.join();
    assert!(idle.is_closed(), "idle clients are disconnected");
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert_eq!(store.cms("c").query(&["a"]).unwrap(), vec![41]);
    assert!(store.bloom("f").exists(b"kept").unwrap());
}

#[test]
fn stop_from_a_handle_while_clients_are_connected() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start(dir.path(), ServerConfig::default());
    let mut clients: Vec<Client> = (0..4).map(|_| server.client()).collect();
    for (i, c) in clients.iter_mut().enumerate() {
        assert_eq!(c.cmd(&["BF.ADD", "f", &i.to_string()]), Value::Int(1));
    }
    server.stop();
    for c in &mut clients {
        assert!(c.is_closed());
    }
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    for i in 0..4 {
        assert!(store.bloom("f").exists(i.to_string().as_bytes()).unwrap());
    }
}

#[test]
fn expiry_commands_and_the_background_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start(dir.path(), ServerConfig::default());
    let mut c = server.client();
    assert_eq!(c.cmd(&["BF.ADD", "f", "x"]), Value::Int(1));
    assert_eq!(c.cmd(&["TTL", "f"]), Value::Int(-1));
    assert_eq!(c.cmd(&["TTL", "missing"]), Value::Int(-2));
    assert_eq!(c.cmd(&["EXPIRE", "missing", "10"]), Value::Int(0));
    assert_eq!(c.cmd(&["EXPIRE", "f", "100"]), Value::Int(1));
    assert_eq!(c.cmd(&["TTL", "f"]), Value::Int(100));
    let Value::Bulk(keyspace) = c.cmd(&["INFO", "keyspace"]) else {
        panic!("INFO answers a bulk string")
    };
    assert!(String::from_utf8(keyspace)
        .unwrap()
        .contains("db0:keys=1,expires=1,"));
    assert!(matches!(c.cmd(&["PTTL", "f"]), Value::Int(ms) if (99_000..=100_000).contains(&ms)));
    assert_eq!(c.cmd(&["EXPIRE", "f", "50", "NX"]), Value::Int(0));
    assert_eq!(c.cmd(&["EXPIRE", "f", "50", "GT"]), Value::Int(0));
    assert_eq!(c.cmd(&["EXPIRE", "f", "500", "GT"]), Value::Int(1));
    assert_eq!(c.cmd(&["EXPIRE", "f", "50", "XX", "LT"]), Value::Int(1));
    assert_eq!(c.cmd(&["TTL", "f"]), Value::Int(50));
    assert_eq!(c.cmd(&["PERSIST", "f"]), Value::Int(1));
    assert_eq!(c.cmd(&["PERSIST", "f"]), Value::Int(0));
    assert_eq!(c.cmd(&["EXPIRE", "f", "50", "XX"]), Value::Int(0));
    assert_eq!(c.cmd(&["EXPIRE", "f", "50", "LT"]), Value::Int(1));
    assert_eq!(
        c.cmd(&["EXPIRE", "f", "5", "NX", "XX"]),
        error("ERR NX and XX, GT or LT options at the same time are not compatible")
    );
    assert_eq!(
        c.cmd(&["EXPIRE", "f", "5", "GT", "LT"]),
        error("ERR GT and LT options at the same time are not compatible")
    );
    assert_eq!(
        c.cmd(&["EXPIRE", "f", "5", "SOON"]),
        error("ERR Unsupported option SOON")
    );
    // The options before the number, as Redis 7.0 checks them.
    assert_eq!(
        c.cmd(&["EXPIRE", "f", "ten", "SOON"]),
        error("ERR Unsupported option SOON")
    );
    assert_eq!(
        c.cmd(&["EXPIRE", "f", "ten"]),
        error("ERR value is not an integer or out of range")
    );
    assert_eq!(
        c.cmd(&["EXPIRE", "f", "9223372036854775807"]),
        error("ERR invalid expire time in 'expire' command")
    );
    let at = rocksketch::now_ms() / 1000 + 1000;
    assert_eq!(c.cmd(&["EXPIREAT", "f", &at.to_string()]), Value::Int(1));
    assert_eq!(c.cmd(&["EXPIRETIME", "f"]), Value::Int(at as i64));
    assert_eq!(c.cmd(&["PEXPIRETIME", "f"]), Value::Int(at as i64 * 1000));
    // Expired: gone from every read at once.
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "c", "10", "2"]), ok());
    assert_eq!(c.cmd(&["PEXPIRE", "c", "100"]), Value::Int(1));
    assert_eq!(c.cmd(&["PEXPIRE", "f", "100"]), Value::Int(1));
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(c.cmd(&["EXISTS", "c", "f"]), Value::Int(0));
    assert_eq!(c.cmd(&["TYPE", "c"]), Value::Simple("none".into()));
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(0));
    assert_eq!(c.cmd(&["BF.EXISTS", "f", "x"]), Value::Int(0));
    assert_eq!(
        c.cmd(&["CMS.QUERY", "c", "a"]),
        error("CMS: key does not exist")
    );
    assert_eq!(c.cmd(&["EXPIRE", "gone", "-1"]), Value::Int(0));
    assert_eq!(c.cmd(&["BF.ADD", "gone", "x"]), Value::Int(1));
    assert_eq!(c.cmd(&["EXPIRE", "gone", "-1"]), Value::Int(1));
    assert_eq!(c.cmd(&["EXISTS", "gone"]), Value::Int(0));
    // The server's sweeper deletes the expired records within a pass (about a second).
    std::thread::sleep(Duration::from_millis(1500));
    server.stop();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert_eq!(store.sweep_expired(None, 100).unwrap(), (0, None));
    let db = store.db().unwrap();
    let meta = db.cf_handle(rocksketch::META_CF).unwrap();
    assert_eq!(
        db.iterator_cf(meta, rocksdb::IteratorMode::Start).count(),
        0
    );
}
