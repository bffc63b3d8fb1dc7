//! `MULTI` / `EXEC` / `DISCARD` with Redis's replies, and commands that panic.

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{Client, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn server(config: ServerConfig) -> (tempfile::TempDir, TestServer) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), config);
    (dir, server)
}

fn ok() -> Value {
    Value::Simple("OK".to_owned())
}

fn queued() -> Value {
    Value::Simple("QUEUED".to_owned())
}

fn error(text: &str) -> Value {
    Value::Error(text.to_owned())
}

// Post-mortem: EXEC was an unknown command, so each queued command had already run
// when sent and redis-py retried the whole pipeline: one CMS.INCRBY applied 3 times.
#[test]
fn exec_runs_the_queue_once_and_only_then() {
    let (_dir, server) = server(ServerConfig::default());
    let mut c = server.client();
    let mut other = server.client();
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "k", "100", "4"]), queued());
    assert_eq!(c.cmd(&["CMS.INCRBY", "k", "x", "2"]), queued());
    assert_eq!(c.cmd(&["CMS.QUERY", "k", "x"]), queued());
    // Nothing ran yet.
    assert_eq!(
        other.cmd(&["CMS.QUERY", "k", "x"]),
        error("CMS: key does not exist")
    );
    assert_eq!(
        c.cmd(&["EXEC"]),
        Value::Array(vec![
            ok(),
            Value::Array(vec![Value::Int(2)]),
            Value::Array(vec![Value::Int(2)]),
        ])
    );
    assert_eq!(
        other.cmd(&["CMS.QUERY", "k", "x"]),
        Value::Array(vec![Value::Int(2)])
    );
    // Errors of a queued command are its reply inside EXEC's array.
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "k", "100", "4"]), queued());
    assert_eq!(
        c.cmd(&["EXEC"]),
        Value::Array(vec![error("CMS: key already exists")])
    );
}

#[test]
fn the_transaction_protocol_answers_as_redis_does() {
    let (_dir, server) = server(ServerConfig::default());
    let mut c = server.client();
    assert_eq!(c.cmd(&["EXEC"]), error("ERR EXEC without MULTI"));
    assert_eq!(c.cmd(&["DISCARD"]), error("ERR DISCARD without MULTI"));
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(
        c.cmd(&["MULTI"]),
        error("ERR MULTI calls can not be nested")
    );
    assert_eq!(
        c.cmd(&["WATCH", "k"]),
        error("ERR WATCH inside MULTI is not allowed")
    );
    assert_eq!(c.cmd(&["BF.ADD", "f", "a"]), queued());
    assert_eq!(c.cmd(&["DISCARD"]), ok());
    assert_eq!(c.cmd(&["BF.EXISTS", "f", "a"]), Value::Int(0));

    // A queueing error (unknown command, wrong arity) aborts EXEC; nothing runs.
    assert_eq!(c.cmd(&["MULTI"]), ok());
    assert_eq!(c.cmd(&["BF.ADD", "f", "a"]), queued());
    assert!(
        matches!(c.cmd(&["NOSUCH", "x"]), Value::Error(e) if e.starts_with("ERR unknown command 'NOSUCH'"))
    );
    assert_eq!(
        c.cmd(&["BF.ADD", "f"]),
        error("ERR wrong number of arguments for 'bf.add' command")
    );
    assert_eq!(
        c.cmd(&["EXEC"]),
        error("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(c.cmd(&["BF.EXISTS", "f", "a"]), Value::Int(0));
    // The transaction is over: EXEC again has no MULTI.
    assert_eq!(c.cmd(&["EXEC"]), error("ERR EXEC without MULTI"));
    assert_eq!(
        c.cmd(&["MULTI", "x"]),
        error("ERR wrong number of arguments for 'multi' command")
    );

    // Pipelined commands inside MULTI are queued one by one, not batched.
    let mut wire = Vec::new();
    for words in [
        &["MULTI"][..],
        &["BF.ADD", "g", "a"],
        &["BF.ADD", "g", "a"],
        &["EXEC"],
    ] {
        wire.extend_from_slice(format!("*{}\r\n", words.len()).as_bytes());
        for w in words {
            wire.extend_from_slice(format!("${}\r\n{w}\r\n", w.len()).as_bytes());
        }
    }
    c.send_raw(&wire);
    assert_eq!(c.read(), ok());
    assert_eq!(c.read(), queued());
    assert_eq!(c.read(), queued());
    assert_eq!(c.read(), Value::Array(vec![Value::Int(1), Value::Int(0)]));
}

#[test]
fn no_other_client_runs_inside_exec() {
    let (_dir, server) = server(ServerConfig::default());
    let mut c = server.client();
    assert_eq!(c.cmd(&["CMS.INITBYDIM", "k", "1000", "4"]), ok());
    const STEPS: i64 = 2000;
    let stop = Arc::new(AtomicBool::new(false));
    let addr = server.addr;
    let watchers: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut r = Client::connect(addr);
                let mut seen = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let Value::Array(v) = r.cmd(&["CMS.QUERY", "k", "x"]) else {
                        panic!("not an array");
                    };
                    seen.push(v[0].clone());
                }
                seen
            })
        })
        .collect();
    for round in 1..=3 {
        assert_eq!(c.cmd(&["MULTI"]), ok());
        for _ in 0..STEPS {
            assert_eq!(c.cmd(&["CMS.INCRBY", "k", "x", "1"]), queued());
        }
        let Value::Array(replies) = c.cmd(&["EXEC"]) else {
            panic!("EXEC answers an array");
        };
        assert_eq!(replies.len(), STEPS as usize);
        assert_eq!(
            replies.last(),
            Some(&Value::Array(vec![Value::Int(round * STEPS)]))
        );
    }
    stop.store(true, Ordering::Relaxed);
    for w in watchers {
        for value in w.join().unwrap() {
            let Value::Int(n) = value else {
                panic!("{value:?}")
            };
            assert_eq!(
                n % STEPS,
                0,
                "a reader saw {n}, in the middle of a transaction"
            );
        }
    }
}

// Post-mortem: a command that panicked killed its connection's thread but left its
// client entry, which held a duplicate of the socket: the client waited forever for a
// reply or EOF, and the entry counted against maxclients.
#[test]
fn a_panicking_command_answers_closes_its_connection_and_frees_its_slot() {
    let (_dir, server) = server(ServerConfig {
        enable_debug_command: true,
        max_clients: 2,
        ..ServerConfig::default()
    });
    let mut watcher = server.client();
    for _ in 0..5 {
        let mut c = server.client();
        let Value::Int(id) = c.cmd(&["CLIENT", "ID"]) else {
            panic!("CLIENT ID answers an integer");
        };
        assert!(
            matches!(c.cmd(&["DEBUG", "PANIC"]), Value::Error(e) if e.starts_with("ERR internal error"))
        );
        assert!(c.is_closed());
        // The entry leaves CLIENT LIST (its thread ends just after the reply).
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let Value::Bulk(list) = watcher.cmd(&["CLIENT", "LIST"]) else {
                panic!("CLIENT LIST answers a bulk string");
            };
            let list = String::from_utf8(list).unwrap();
            if !list.contains(&format!("id={id} ")) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "client {id} is still listed: {list}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // The server goes on: with maxclients 2, a new client still gets in.
    assert_eq!(server.client().cmd(&["PING"]), Value::Simple("PONG".into()));
}

#[test]
fn debug_is_refused_unless_enabled() {
    let (_dir, server) = server(ServerConfig::default());
    let mut c = server.client();
    assert!(
        matches!(c.cmd(&["DEBUG", "PANIC"]), Value::Error(e) if e.starts_with("ERR DEBUG command not allowed"))
    );
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
}
