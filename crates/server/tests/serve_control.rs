//! What an operator and a transaction rely on: settings that cannot lock clients out,
//! `SHUTDOWN`'s options and its refusal inside `MULTI`, `EXEC`'s wrong arity, a panic
//! inside `EXEC`, `WATCH`/`UNWATCH`, `RESET`, `CLIENT KILL`, key names past the limit,
//! and `SCAN` cursors one client cannot take from another. Replies are Redis 7's
//! (checked against `redis-server`).

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{error, ok, temp_server, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::time::Duration;

fn int(n: i64) -> Value {
    Value::Int(n)
}

#[test]
fn limits_that_would_lock_every_client_out_are_refused() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    for (name, floor) in [
        ("proto-max-bulk-len", 1048576),
        ("client-query-buffer-limit", 1048576),
        ("max-args", 1024),
    ] {
        let reply = c.cmd(&["CONFIG", "SET", name, "1"]);
        let want = format!(
            "ERR CONFIG SET failed (possibly related to argument '{name}') - argument must be \
             between {floor} and 9223372036854775807 inclusive"
        );
        assert_eq!(reply, error(&want));
        assert_eq!(c.cmd(&["CONFIG", "SET", name, &floor.to_string()]), ok());
    }
    // Still usable at the floors.
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "k", "10", "2"]), ok());
}

#[test]
fn io_threads_answer_the_number_serving() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_as_configured(dir.path(), ServerConfig::default());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let want = rocksketch_server::default_io_threads();
    assert_eq!(want, cores, "one per core");
    let io_threads = |server: &TestServer| server.client().cmd(&["CONFIG", "GET", "io-threads"]);
    let pair = |n: usize| {
        Value::Array(vec![
            Value::Bulk(b"io-threads".to_vec()),
            Value::Bulk(n.to_string().into_bytes()),
        ])
    };
    assert_eq!(io_threads(&server), pair(want), "the default, resolved");
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        threads: 3,
        ..ServerConfig::default()
    };
    let server = TestServer::start_as_configured(dir.path(), config);
    assert_eq!(io_threads(&server), pair(3));
}

#[test]
fn shutdown_abort_and_bad_options_do_not_stop_the_server() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    assert_eq!(
        c.cmd(&["SHUTDOWN", "ABORT"]),
        error("ERR No shutdown in progress.")
    );
    assert_eq!(c.cmd(&["SHUTDOWN", "FOO"]), error("ERR syntax error"));
    assert_eq!(
        c.cmd(&["SHUTDOWN", "SAVE", "NOSAVE"]),
        error("ERR syntax error")
    );
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
}

#[test]
fn shutdown_inside_multi_is_refused_and_fails_the_transaction() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(
        c.cmd(&["SHUTDOWN"]),
        error("ERR Command not allowed inside a transaction")
    );
    assert_eq!(
        c.cmd(&["EXEC"]),
        error("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
}

#[test]
fn exec_of_the_wrong_arity_ends_the_transaction() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(
        c.cmd(&["CMS.INITBYDIM", "k", "10", "2"]),
        Value::Simple("QUEUED".into())
    );
    assert_eq!(
        c.cmd(&["EXEC", "x"]),
        error("EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command")
    );
    assert_eq!(c.cmd(&["EXEC"]), error("ERR EXEC without MULTI"));
    assert_eq!(c.cmd(&["EXISTS", "k"]), int(0), "nothing ran");
}

#[test]
fn a_panic_inside_exec_is_answered_and_the_rest_of_the_transaction_runs() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        enable_debug_command: true,
        ..ServerConfig::default()
    };
    let server = TestServer::start(dir.path(), config);
    let mut c = server.client();
    assert_eq!(c.cmd(&["MULTI"]), ok());
    for words in [
        &["CMS.INITBYDIM", "a", "10", "2"][..],
        &["DEBUG", "PANIC"],
        &["CMS.INITBYDIM", "b", "10", "2"],
    ] {
        assert_eq!(c.cmd(words), Value::Simple("QUEUED".into()));
    }
    let Value::Array(replies) = c.cmd(&["EXEC"]) else {
        panic!("EXEC answers an array");
    };
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[0], ok());
    assert!(matches!(&replies[1], Value::Error(e) if e.starts_with("ERR internal error")));
    assert_eq!(replies[2], ok());
    assert_eq!(c.cmd(&["EXISTS", "a", "b"]), int(2));
}

#[test]
fn watch_aborts_exec_when_a_watched_key_changes_and_only_then() {
    let (_dir, server) = temp_server();
    let (mut a, mut b) = (server.client(), server.client());
    assert_eq!(a.cmd(&["BF.RESERVE", "w", "0.01", "100"]), ok());

    // Unchanged: EXEC runs.
    assert_eq!(a.cmd(&["WATCH", "w", "other"]), ok());
    assert_eq!(
        b.cmd(&["BF.EXISTS", "w", "x"]),
        int(0),
        "a read is no change"
    );
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["BF.ADD", "w", "a"]), Value::Simple("QUEUED".into()));
    assert_eq!(a.cmd(&["EXEC"]), Value::Array(vec![int(1)]));

    // Written by another client: EXEC runs nothing and answers a null array.
    assert_eq!(a.cmd(&["WATCH", "w"]), ok());
    assert_eq!(b.cmd(&["BF.ADD", "w", "b"]), int(1));
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["BF.ADD", "w", "c"]), Value::Simple("QUEUED".into()));
    a.send(&[b"EXEC"]);
    let mut null = [0u8; 5];
    std::io::Read::read_exact(&mut a.reader, &mut null).unwrap();
    assert_eq!(&null, b"*-1\r\n");
    assert_eq!(a.cmd(&["BF.EXISTS", "w", "c"]), int(0));

    // Deleted, and flushed: both abort; UNWATCH forgets.
    for change in [&["DEL", "w"][..], &["FLUSHDB"]] {
        a.cmd(&["DEL", "w"]);
        assert_eq!(a.cmd(&["BF.RESERVE", "w", "0.01", "100"]), ok());
        assert_eq!(a.cmd(&["WATCH", "w"]), ok());
        b.cmd(change);
        assert_eq!(a.cmd(&["MULTI"]), ok());
        assert_eq!(a.cmd(&["PING"]), Value::Simple("QUEUED".into()));
        assert_eq!(a.cmd(&["EXEC"]), Value::Nil, "after {change:?}");
    }
    assert_eq!(a.cmd(&["WATCH", "w"]), ok());
    assert_eq!(a.cmd(&["UNWATCH"]), ok());
    assert_eq!(b.cmd(&["BF.ADD", "w", "z"]), int(1));
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["PING"]), Value::Simple("QUEUED".into()));
    assert_eq!(
        a.cmd(&["EXEC"]),
        Value::Array(vec![Value::Simple("PONG".into())])
    );
    assert_eq!(
        a.cmd(&["WATCH"]),
        error("ERR wrong number of arguments for 'watch' command")
    );
}

#[test]
fn watch_sees_writes_combined_by_the_batching_paths() {
    let (_dir, server) = temp_server();
    let (mut a, mut b) = (server.client(), server.client());
    assert_eq!(a.cmd(&["CMS.INITBYDIM", "c", "10", "2"]), ok());
    assert_eq!(a.cmd(&["WATCH", "c"]), ok());
    // A pipelined run of one command on one key runs as one batch.
    let mut pipeline = Vec::new();
    for _ in 0..10 {
        pipeline.extend_from_slice(b"*4\r\n$10\r\nCMS.INCRBY\r\n$1\r\nc\r\n$1\r\nx\r\n$1\r\n1\r\n");
    }
    b.send_raw(&pipeline);
    for _ in 0..10 {
        b.read();
    }
    assert_eq!(a.cmd(&["MULTI"]), ok());
    assert_eq!(a.cmd(&["PING"]), Value::Simple("QUEUED".into()));
    assert_eq!(a.cmd(&["EXEC"]), Value::Nil);
}

#[test]
fn reset_returns_the_connection_to_its_first_state() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", "me"]), ok());
    assert_eq!(c.cmd(&["SELECT", "3"]), ok());
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(
        c.cmd(&["RESET"]),
        Value::Simple("RESET".into()),
        "runs inside MULTI"
    );
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Value::Nil);
    assert_eq!(c.cmd(&["EXEC"]), error("ERR EXEC without MULTI"));
    let Value::Bulk(info) = c.cmd(&["CLIENT", "INFO"]) else {
        panic!("CLIENT INFO is a bulk string");
    };
    assert!(String::from_utf8_lossy(&info).contains(" db=0 "));
    assert_eq!(
        c.cmd(&["RESET", "x"]),
        error("ERR wrong number of arguments for 'reset' command")
    );
}

#[test]
fn reset_deauthenticates_when_a_password_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        requirepass: Some("pw".into()),
        ..ServerConfig::default()
    };
    let server = TestServer::start(dir.path(), config);
    let mut c = server.client();
    assert_eq!(c.cmd(&["AUTH", "pw"]), ok());
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    assert_eq!(c.cmd(&["RESET"]), Value::Simple("RESET".into()));
    assert_eq!(c.cmd(&["PING"]), error("NOAUTH Authentication required."));
}

#[test]
fn client_kill_drops_a_hostile_client_at_once() {
    let (_dir, server) = temp_server();
    let (mut operator, mut hostile) = (server.client(), server.client());
    let Value::Int(id) = hostile.cmd(&["CLIENT", "ID"]) else {
        panic!("CLIENT ID is an integer");
    };
    // Half a request: the hostile client holds its connection open, idle.
    hostile.send_raw(b"*3\r\n$6\r\nBF.ADD\r\n");
    let id = id.to_string();
    assert_eq!(operator.cmd(&["CLIENT", "KILL", "ID", &id]), int(1));
    hostile
        .reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert!(hostile.is_closed(), "killed");
    assert_eq!(operator.cmd(&["CLIENT", "KILL", "ID", &id]), int(0), "gone");
    assert_eq!(
        operator.cmd(&["CLIENT", "KILL", "ID", "abc"]),
        error("ERR client-id should be greater than 0")
    );
    assert_eq!(
        operator.cmd(&["CLIENT", "KILL", "FOO", "x"]),
        error("ERR syntax error")
    );
    assert_eq!(
        operator.cmd(&["CLIENT", "KILL", "1.2.3.4:5"]),
        error("ERR No such client")
    );
    // By address (the old form), and SKIPME: the caller is spared by default.
    let mut other = server.client();
    assert_eq!(
        other.cmd(&["PING"]),
        Value::Simple("PONG".into()),
        "admitted"
    );
    let addr = other.reader.get_ref().local_addr().unwrap().to_string();
    assert_eq!(operator.cmd(&["CLIENT", "KILL", &addr]), ok());
    assert!(other.is_closed());
    let Value::Int(me) = operator.cmd(&["CLIENT", "ID"]) else {
        panic!("CLIENT ID is an integer");
    };
    let me = me.to_string();
    assert_eq!(operator.cmd(&["CLIENT", "KILL", "ID", &me]), int(0));
    assert_eq!(operator.cmd(&["PING"]), Value::Simple("PONG".into()));
}

#[test]
fn keys_longer_than_the_limit_are_refused_and_write_nothing() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    let limit = rocksketch::MAX_KEY_LEN;
    let long = "k".repeat(limit + 1);
    let want = error(&format!(
        "ERR key is too long ({} bytes; at most {limit})",
        limit + 1
    ));
    for words in [
        vec!["CMS.INITBYDIM", &long, "100", "20"],
        vec!["BF.ADD", &long, "x"],
        vec!["BF.RESERVE", &long, "0.01", "100"],
        vec!["CF.ADD", &long, "x"],
        vec!["TOPK.RESERVE", &long, "3"],
        vec!["TDIGEST.CREATE", &long],
        vec!["RIBBON.ADD", &long, "x"],
    ] {
        assert_eq!(c.cmd(&words), want, "{}", words[0]);
    }
    assert_eq!(c.cmd(&["DBSIZE"]), int(0));
    let longest = "k".repeat(limit);
    assert_eq!(c.cmd(&["CMS.INITBYDIM", &longest, "100", "20"]), ok());
    assert_eq!(
        c.cmd(&["CMS.INCRBY", &longest, "x", "2"]),
        Value::Array(vec![int(2)])
    );
}

#[test]
fn one_clients_scans_cannot_evict_another_clients_cursor() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    // Long names: the old shared table evicted by bytes after some 2000 of them.
    let long = |n: usize| format!("{n:04}{}", "n".repeat(rocksketch::MAX_KEY_LEN - 4));
    for n in 0..4 {
        assert_eq!(c.cmd(&["CMS.INITBYDIM", &long(n), "10", "1"]), ok());
    }
    let Value::Array(first) = c.cmd(&["SCAN", "0", "COUNT", "1"]) else {
        panic!("SCAN answers an array");
    };
    let Value::Bulk(cursor) = &first[0] else {
        panic!("a cursor");
    };
    let cursor = String::from_utf8(cursor.clone()).unwrap();
    assert_ne!(cursor, "0");

    let mut hostile = server.client();
    let scan = b"*4\r\n$4\r\nSCAN\r\n$1\r\n0\r\n$5\r\nCOUNT\r\n$1\r\n1\r\n";
    for _ in 0..3 {
        hostile.send_raw(&scan.repeat(1000));
        for _ in 0..1000 {
            hostile.read();
        }
    }
    let Value::Array(next) = c.cmd(&["SCAN", &cursor, "COUNT", "1"]) else {
        panic!("SCAN goes on from the cursor, got an error");
    };
    let Value::Array(keys) = &next[1] else {
        panic!("keys");
    };
    assert_eq!(keys, &vec![Value::bulk(&long(1))]);
}

#[test]
fn info_carries_the_modules_section_clients_detect_redisbloom_by() {
    let (_dir, server) = temp_server();
    let mut c = server.client();
    let line = "module:name=bf,ver=20612,api=1,filters=0,usedby=[],using=[],options=[]";
    for words in [&["INFO"][..], &["INFO", "modules"], &["INFO", "everything"]] {
        let Value::Bulk(info) = c.cmd(words) else {
            panic!("INFO is a bulk string");
        };
        let info = String::from_utf8(info).unwrap();
        assert!(
            info.contains(&format!("# Modules\r\n{line}\r\n")),
            "{words:?}: {info}"
        );
    }
    // The version MODULE LIST reports.
    let Value::Array(modules) = c.cmd(&["MODULE", "LIST"]) else {
        panic!("MODULE LIST is an array");
    };
    let Value::Array(bf) = &modules[0] else {
        panic!("a module");
    };
    assert_eq!(bf[3], Value::Int(20612));
    let Value::Bulk(server_only) = c.cmd(&["INFO", "server"]) else {
        panic!("INFO is a bulk string");
    };
    assert!(!String::from_utf8(server_only)
        .unwrap()
        .contains("# Modules"));
}
