//! The RESP host over raw sockets: the wire format, pipelining, inline commands, limits,
//! authentication, concurrency and shutdown. (`tests/redis_py` drives it with redis-py
//! and redis-cli.)

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{Client, TestServer, Value};
use rocksketch::resp::Limits;
use rocksketch::server::ServerConfig;
use rocksketch::{Store, StoreOptions};
use std::time::Duration;

/// A server over a temporary directory; bind it as `let (_dir, server)`, so the server
/// stops before its directory goes.
fn server() -> (tempfile::TempDir, TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), ServerConfig::default());
    (dir, server)
}

fn error(text: &str) -> Value {
    Value::Error(text.to_owned())
}

fn ok() -> Value {
    Value::Simple("OK".to_owned())
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let (_dir, server) = server();
    let mut c = server.client();
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "c", "1000", "5"]), ok());
    let mut wire = Vec::new();
    for i in 0..500 {
        let item = format!("item{}", i % 7);
        wire.extend_from_slice(
            format!(
                "*4\r\n$10\r\nCMS.INCRBY\r\n$1\r\nc\r\n${}\r\n{item}\r\n$1\r\n1\r\n",
                item.len()
            )
            .as_bytes(),
        );
    }
    c.send_raw(&wire);
    let mut seen = [0i64; 7];
    for i in 0..500 {
        seen[i % 7] += 1;
        assert_eq!(
            c.read(),
            Value::Array(vec![Value::Int(seen[i % 7])]),
            "reply {i}"
        );
    }
}

#[test]
fn inline_commands_work_as_from_telnet() {
    let (_dir, server) = server();
    let mut c = server.client();
    c.send_raw(b"PING\r\nECHO  hello\nBF.ADD   f x\r\n\r\nBF.EXISTS f x\n");
    assert_eq!(c.read(), Value::Simple("PONG".into()));
    assert_eq!(c.read(), Value::bulk("hello"));
    assert_eq!(c.read(), Value::Int(1));
    assert_eq!(c.read(), Value::Int(1));
}

#[test]
fn requests_split_across_reads_are_reassembled() {
    let (_dir, server) = server();
    let mut c = server.client();
    let wire = b"*3\r\n$6\r\nBF.ADD\r\n$3\r\nkey\r\n$5\r\nvalue\r\n";
    for byte in wire {
        c.send_raw(&[*byte]);
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(c.read(), Value::Int(1));
    assert_eq!(c.cmd(&["BF.EXISTS", "key", "value"]), Value::Int(1));
}

#[test]
fn resp3_after_hello_3_and_back() {
    let (_dir, server) = server();
    let mut c = server.client();
    let Value::Map(hello) = c.cmd(&["HELLO", "3"]) else {
        panic!("HELLO 3 answers a map")
    };
    assert!(hello.contains(&(Value::bulk("proto"), Value::Int(3))));
    assert!(hello.contains(&(Value::bulk("server"), Value::bulk("redis"))));
    assert_eq!(c.cmd(&["BF.ADD", "f", "a"]), Value::Bool(true));
    assert_eq!(c.cmd(&["BF.ADD", "f", "a"]), Value::Bool(false));
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "c", "10", "2"]), ok());
    assert_eq!(
        c.cmd(&["CMS.INFO", "c"]),
        Value::Map(vec![
            (Value::Simple("width".into()), Value::Int(10)),
            (Value::Simple("depth".into()), Value::Int(2)),
            (Value::Simple("count".into()), Value::Int(0)),
        ])
    );
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Value::Nil);
    assert!(matches!(c.cmd(&["HELLO", "2"]), Value::Array(_)));
    assert_eq!(c.cmd(&["BF.EXISTS", "f", "a"]), Value::Int(1));
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Value::Nil);
    assert_eq!(
        c.cmd(&["HELLO", "4"]),
        error("NOPROTO unsupported protocol version")
    );
    assert_eq!(
        c.cmd(&["HELLO", "x"]),
        error("ERR Protocol version is not an integer or out of range")
    );
}

#[test]
fn unknown_commands_and_wrong_arity_answer_redis_errors() {
    let (_dir, server) = server();
    let mut c = server.client();
    assert_eq!(
        c.cmd(&["NOSUCH", "a", "b"]),
        error("ERR unknown command 'NOSUCH', with args beginning with: 'a' 'b' ")
    );
    assert_eq!(
        c.cmd(&["nosuch"]),
        error("ERR unknown command 'nosuch', with args beginning with: ")
    );
    assert_eq!(
        c.cmd(&["GET", "k"]),
        error("ERR unknown command 'GET', with args beginning with: 'k' ")
    );
    assert_eq!(
        c.cmd(&["ECHO"]),
        error("ERR wrong number of arguments for 'echo' command")
    );
    assert_eq!(
        c.cmd(&["TYPE", "a", "b"]),
        error("ERR wrong number of arguments for 'type' command")
    );
    assert_eq!(
        c.cmd(&["BF.ADD", "k"]),
        error("ERR wrong number of arguments for 'bf.add' command")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "SETNAME"]),
        error("ERR wrong number of arguments for 'client|setname' command")
    );
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
}

#[test]
fn keyspace_commands() {
    let (_dir, server) = server();
    let mut c = server.client();
    for key in ["user:1:seen", "user:2:seen", "user:1:hits"] {
        assert_eq!(c.cmd(&["BF.ADD", key, "x"]), Value::Int(1));
    }
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "hits", "100", "3"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(4));
    assert_eq!(c.cmd(&["TYPE", "hits"]), Value::Simple("CMSk-TYPE".into()));
    assert_eq!(
        c.cmd(&["TYPE", "user:1:seen"]),
        Value::Simple("MBbloom--".into())
    );
    assert_eq!(c.cmd(&["TYPE", "nothing"]), Value::Simple("none".into()));
    assert_eq!(c.cmd(&["EXISTS", "hits", "hits", "nothing"]), Value::Int(2));
    assert_eq!(
        c.cmd(&["KEYS", "user:*:seen"]),
        Value::Array(vec![Value::bulk("user:1:seen"), Value::bulk("user:2:seen")])
    );
    // SCAN in steps of one visits every key once; MATCH and TYPE filter.
    let mut cursor = "0".to_owned();
    let mut seen = Vec::new();
    loop {
        let Value::Array(reply) = c.cmd(&["SCAN", &cursor, "COUNT", "1"]) else {
            panic!("SCAN answers an array")
        };
        let [Value::Bulk(next), Value::Array(keys)] = &reply[..] else {
            panic!("SCAN reply {reply:?}")
        };
        seen.extend(keys.iter().cloned());
        cursor = String::from_utf8(next.clone()).unwrap();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen.len(), 4);
    assert_eq!(
        c.cmd(&["SCAN", "0", "TYPE", "cmsk-type"]),
        Value::Array(vec![
            Value::bulk("0"),
            Value::Array(vec![Value::bulk("hits")])
        ])
    );
    assert_eq!(
        c.cmd(&["SCAN", "0", "MATCH", "*:1:*", "COUNT", "100"]),
        Value::Array(vec![
            Value::bulk("0"),
            Value::Array(vec![Value::bulk("user:1:hits"), Value::bulk("user:1:seen")])
        ])
    );
    assert_eq!(c.cmd(&["SCAN", "x"]), error("ERR invalid cursor"));
    assert_eq!(c.cmd(&["SCAN", "0", "COUNT"]), error("ERR syntax error"));
    assert_eq!(
        c.cmd(&["DEL", "hits", "nothing", "user:2:seen"]),
        Value::Int(2)
    );
    assert_eq!(c.cmd(&["UNLINK", "user:1:hits"]), Value::Int(1));
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(1));
    // Databases are namespaces.
    assert_eq!(c.cmd(&["SELECT", "1"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(0));
    assert_eq!(c.cmd(&["BF.ADD", "user:1:seen", "y"]), Value::Int(1));
    assert_eq!(c.cmd(&["BF.EXISTS", "user:1:seen", "x"]), Value::Int(0));
    assert_eq!(c.cmd(&["FLUSHDB"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(0));
    assert_eq!(c.cmd(&["SELECT", "0"]), ok());
    assert_eq!(c.cmd(&["BF.EXISTS", "user:1:seen", "x"]), Value::Int(1));
    assert_eq!(
        c.cmd(&["SELECT", "16"]),
        error("ERR DB index is out of range")
    );
    assert_eq!(
        c.cmd(&["SELECT", "one"]),
        error("ERR value is not an integer or out of range")
    );
    assert_eq!(c.cmd(&["SELECT", "2"]), ok());
    assert_eq!(c.cmd(&["BF.ADD", "k", "z"]), Value::Int(1));
    assert_eq!(c.cmd(&["FLUSHALL"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(0));
    assert_eq!(c.cmd(&["SELECT", "0"]), ok());
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(0));
}

#[test]
fn connection_commands() {
    let (_dir, server) = server();
    let mut c = server.client();
    assert_eq!(c.cmd(&["PING", "hi"]), Value::bulk("hi"));
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", "worker-1"]), ok());
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Value::bulk("worker-1"));
    assert_eq!(
        c.cmd(&["CLIENT", "SETNAME", "bad name"]),
        error("ERR Client names cannot contain spaces, newlines or special characters.")
    );
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "LIB-NAME", "test"]), ok());
    assert_eq!(
        c.cmd(&["CLIENT", "SETINFO", "colour", "red"]),
        error("ERR Unrecognized option 'colour'")
    );
    let Value::Int(id) = c.cmd(&["CLIENT", "ID"]) else {
        panic!("CLIENT ID answers an integer")
    };
    let mut other = server.client();
    let Value::Bulk(list) = other.cmd(&["CLIENT", "LIST"]) else {
        panic!("CLIENT LIST answers a bulk string")
    };
    let list = String::from_utf8(list).unwrap();
    assert_eq!(list.lines().count(), 2, "{list}");
    assert!(list.contains(&format!("id={id} ")) && list.contains("name=worker-1 "));
    assert!(list.contains("lib-name=test"));
    let Value::Bulk(info) = c.cmd(&["INFO"]) else {
        panic!("INFO answers a bulk string")
    };
    let info = String::from_utf8(info).unwrap();
    for field in [
        "redis_version:",
        "arch_bits:64",
        "cluster_enabled:0",
        "connected_clients:2",
    ] {
        assert!(info.contains(field), "{field} in {info}");
    }
    assert!(info.contains("# Rocksketch\r\npages_estimated_keys:"));
    let Value::Bulk(section) = c.cmd(&["INFO", "clients"]) else {
        panic!()
    };
    assert!(!String::from_utf8(section)
        .unwrap()
        .contains("redis_version"));
    assert!(matches!(c.cmd(&["COMMAND", "COUNT"]), Value::Int(n) if n > 30));
    let Value::Array(info) = c.cmd(&["COMMAND", "INFO", "bf.add", "nosuch"]) else {
        panic!()
    };
    assert_eq!(info[1], Value::Nil);
    let Value::Array(bf_add) = &info[0] else {
        panic!()
    };
    assert_eq!(bf_add[..2], [Value::bulk("bf.add"), Value::Int(3)]);
    assert!(matches!(c.cmd(&["COMMAND", "DOCS"]), Value::Array(_)));
    assert_eq!(c.cmd(&["QUIT"]), ok());
    assert!(c.is_closed());
    assert_eq!(other.cmd(&["PING"]), Value::Simple("PONG".into()));
}

#[test]
fn malformed_input_closes_only_that_connection() {
    let (_dir, server) = server();
    let mut bystander = server.client();
    assert_eq!(bystander.cmd(&["BF.ADD", "f", "a"]), Value::Int(1));
    for bad in [
        &b"*1\r\n$x\r\n"[..],
        b"*2\r\n:1\r\n",
        b"*1\r\n$-5\r\n",
        b"*abc\r\n",
        b"*1\r\n$3\r\nabcde",
    ] {
        let mut c = server.client();
        c.send_raw(bad);
        match c.read() {
            Value::Error(e) => assert!(e.starts_with("ERR Protocol error"), "{e}"),
            other => panic!("{other:?} for {bad:?}"),
        }
        assert!(c.is_closed());
        assert_eq!(bystander.cmd(&["BF.EXISTS", "f", "a"]), Value::Int(1));
    }
}

#[test]
fn limits_refuse_oversize_requests() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        limits: Limits {
            max_bulk: 1024,
            max_args: 100,
            max_inline: 1024,
        },
        max_clients: 3,
        ..ServerConfig::default()
    };
    let server = TestServer::start(dir.path(), config);
    let mut c = server.client();
    c.send_raw(b"*1\r\n$1025\r\n");
    assert_eq!(c.read(), error("ERR Protocol error: invalid bulk length"));
    assert!(c.is_closed());
    let mut c = server.client();
    c.send_raw(b"*101\r\n");
    assert_eq!(
        c.read(),
        error("ERR Protocol error: invalid multibulk length")
    );
    assert!(c.is_closed());
    let mut c = server.client();
    c.send_raw(&[b'a'; 2000]);
    assert_eq!(
        c.read(),
        error("ERR Protocol error: too big inline request")
    );
    assert!(c.is_closed());
    // Past max_clients a connection is refused with Redis's error; others carry on.
    let mut held: Vec<Client> = (0..3).map(|_| server.client()).collect();
    for c in &mut held {
        assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    }
    let mut extra = server.client();
    assert_eq!(extra.read(), error("ERR max number of clients reached"));
    assert!(extra.is_closed());
    drop(held.pop());
    // The freed slot is reusable once the server has seen the close.
    let mut retry = None;
    for _ in 0..100 {
        let mut c = server.client();
        c.send(&[b"PING"]);
        if c.read() == Value::Simple("PONG".into()) {
            retry = Some(c);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(retry.is_some(), "a slot frees when a client leaves");
}

#[test]
fn requirepass_guards_every_command_until_auth() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        requirepass: Some("s3cret".into()),
        ..ServerConfig::default()
    };
    let server = TestServer::start(dir.path(), config);
    let mut c = server.client();
    for cmd in [
        &["PING"][..],
        &["BF.ADD", "f", "a"],
        &["KEYS", "*"],
        &["SHUTDOWN"],
    ] {
        assert_eq!(c.cmd(cmd), error("NOAUTH Authentication required."));
    }
    assert!(matches!(c.cmd(&["HELLO", "3"]), Value::Error(e) if e.starts_with("NOAUTH HELLO")));
    assert_eq!(
        c.cmd(&["AUTH", "wrong"]),
        error("WRONGPASS invalid username-password pair or user is disabled.")
    );
    assert_eq!(
        c.cmd(&["AUTH", "admin", "s3cret"]),
        error("WRONGPASS invalid username-password pair or user is disabled.")
    );
    // A stranger may not send large requests.
    c.send_raw(b"*11\r\n");
    assert_eq!(
        c.read(),
        error("ERR Protocol error: invalid multibulk length")
    );
    assert!(c.is_closed());
    let mut c = server.client();
    assert_eq!(c.cmd(&["AUTH", "s3cret"]), ok());
    assert_eq!(c.cmd(&["BF.ADD", "f", "a"]), Value::Int(1));
    let big = "x".repeat(20 << 10);
    assert_eq!(c.cmd(&["BF.ADD", "f", &big]), Value::Int(1));
    let mut c = server.client();
    let Value::Map(hello) = c.cmd(&["HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "me"])
    else {
        panic!("HELLO with AUTH authenticates")
    };
    assert!(hello.contains(&(Value::bulk("proto"), Value::Int(3))));
    assert_eq!(c.cmd(&["BF.EXISTS", "f", "a"]), Value::Bool(true));
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Value::bulk("me"));
    let mut c = server.client();
    assert_eq!(c.cmd(&["QUIT"]), ok());
}

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

#[test]
fn a_client_sending_one_byte_a_second_holds_up_no_one() {
    let (_dir, server) = server();
    let mut slow = server.client();
    let addr = server.addr;
    let others = std::thread::spawn(move || {
        let mut c = Client::connect(addr);
        let start = std::time::Instant::now();
        for i in 0..200 {
            let item = i.to_string();
            assert_eq!(c.cmd(&["BF.ADD", "busy", &item]), Value::Int(1));
        }
        start.elapsed()
    });
    for byte in b"PING\r\n" {
        slow.send_raw(&[*byte]);
        std::thread::sleep(Duration::from_secs(1));
    }
    assert_eq!(slow.read(), Value::Simple("PONG".into()));
    let busy = others.join().unwrap();
    assert!(busy < Duration::from_secs(5), "others waited: {busy:?}");
}

#[test]
fn default_limits_refuse_absurd_lengths() {
    let (_dir, server) = server();
    for (bad, reply) in [
        (
            &b"*2000000\r\n"[..],
            "ERR Protocol error: invalid multibulk length",
        ),
        (
            b"*1\r\n$600000000\r\n",
            "ERR Protocol error: invalid bulk length",
        ),
        (
            b"*1\r\n$99999999999999999999999\r\n",
            "ERR Protocol error: invalid bulk length",
        ),
        (b"*-1\r\n*1\r\n$4\r\nPING\r\n", ""),
    ] {
        let mut c = server.client();
        c.send_raw(bad);
        if reply.is_empty() {
            // A null array is an empty request: skipped, as Redis does.
            assert_eq!(c.read(), Value::Simple("PONG".into()));
        } else {
            assert_eq!(c.read(), error(reply));
            assert!(c.is_closed());
        }
    }
    // A request that announces many arguments and stops costs nothing until they come.
    let mut c = server.client();
    c.send_raw(b"*1000000\r\n$3\r\nabc\r\n");
    let mut other = server.client();
    assert_eq!(other.cmd(&["PING"]), Value::Simple("PONG".into()));
    drop(c);
}

/// The process's virtual and resident memory sizes, in bytes.
fn memory() -> (u64, u64) {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let mut pages = statm
        .split_whitespace()
        .map(|p| p.parse::<u64>().unwrap() * 4096);
    (pages.next().unwrap(), pages.next().unwrap())
}

#[test]
fn announced_lengths_reserve_no_memory_and_the_query_buffer_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        max_query_buffer: 1 << 20,
        ..ServerConfig::default()
    };
    let server = TestServer::start(dir.path(), config);
    let mut probe = server.client();
    assert_eq!(probe.cmd(&["PING"]), Value::Simple("PONG".into()));
    let before = memory();
    // Eight clients announce a million arguments and a bulk string near the 512 MiB
    // limit, then stall: the server holds what arrived, not what was announced.
    let stalled: Vec<Client> = (0..8)
        .map(|_| {
            let mut c = server.client();
            c.send_raw(b"*1000000\r\n$536870000\r\nabc");
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(probe.cmd(&["PING"]), Value::Simple("PONG".into()));
    let after = memory();
    // Announced: 8 x 512 MiB. Each new thread may get a malloc arena (64 MiB of address
    // space), so the virtual bound is loose; resident memory must barely move.
    let virt = after.0.saturating_sub(before.0);
    let resident = after.1.saturating_sub(before.1);
    assert!(virt < 2 << 30, "{} MiB more address space", virt >> 20);
    assert!(resident < 64 << 20, "{} MiB more resident", resident >> 20);
    drop(stalled);
    // A client whose unparsed input passes the query buffer limit is dropped.
    // (It may reset the connection before the error reply is read: either will do.)
    let mut greedy = server.client();
    greedy.send_raw(b"*1\r\n$4000000\r\n");
    let chunk = vec![b'x'; 64 << 10];
    for _ in 0..20 {
        use std::io::Write;
        if greedy.reader.get_mut().write_all(&chunk).is_err() {
            break;
        }
    }
    let mut reply = Vec::new();
    let ended = {
        use std::io::Read;
        greedy.reader.read_to_end(&mut reply)
    };
    match ended {
        // Closed after the error reply, or reset before it was read: dropped either way.
        Ok(_) => assert_eq!(
            reply,
            b"-ERR Protocol error: query buffer limit reached\r\n"
        ),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
    }
    assert_eq!(probe.cmd(&["PING"]), Value::Simple("PONG".into()));
}
