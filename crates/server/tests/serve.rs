//! The RESP host over raw sockets: the wire format, pipelining, inline commands, RESP3,
//! errors, keyspace and connection commands. Limits and authentication are in
//! `serve_limits.rs`, concurrency, shutdown and expiry in `serve_lifecycle.rs`.
//! (`tests/redis_py` drives the host with redis-py and redis-cli.)

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{error, ok, temp_server as server, Value};
use std::time::Duration;

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
    // Redis's other data types are not served (GET and SET are, for HyperLogLogs).
    assert_eq!(
        c.cmd(&["LPUSH", "k", "v"]),
        error("ERR unknown command 'LPUSH', with args beginning with: 'k' 'v' ")
    );
    assert_eq!(c.cmd(&["GET", "k"]), Value::Nil);
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
