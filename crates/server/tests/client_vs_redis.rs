//! `CLIENT LIST`, `CLIENT INFO`, `INFO` and `TIME` against Redis itself (Debian's
//! `redis-server`), in RESP2 and RESP3: the same connections opened on both servers,
//! the same commands, and the same answers wherever they do not depend on the server
//! (connection ids are compared by which connection they name, times by being close).

#[path = "common/redis_server.rs"]
mod redis_server;
#[path = "common/resp_client.rs"]
mod resp_client;

use redis_server::RedisServer;
use resp_client::{temp_server, Client, Value};
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Three connections to one server, in one protocol, and their ids.
struct Side {
    conns: Vec<Client>,
    ids: Vec<String>,
}

impl Side {
    fn open(addr: SocketAddr, resp: u8) -> Side {
        let mut conns: Vec<Client> = (0..3).map(|_| Client::connect(addr)).collect();
        let mut ids = Vec::new();
        for c in &mut conns {
            if resp == 3 {
                assert!(matches!(c.cmd(&["HELLO", "3"]), Value::Map(_)));
            }
            let Value::Int(id) = c.cmd(&["CLIENT", "ID"]) else {
                panic!("CLIENT ID answers an integer");
            };
            ids.push(id.to_string());
        }
        Side { conns, ids }
    }

    /// `words` with `#k` replaced by connection k's id, sent on connection 0.
    fn ask(&mut self, words: &[&str]) -> Value {
        let words: Vec<String> = words
            .iter()
            .map(|w| match w.strip_prefix('#') {
                Some(k) => self.ids[k.parse::<usize>().unwrap()].clone(),
                None => (*w).to_owned(),
            })
            .collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        self.conns[0].cmd(&words)
    }

    /// A `CLIENT LIST` or `CLIENT INFO` reply with each line reduced to what does not
    /// depend on the server: which of our connections it is (or `other`), its `cmd`,
    /// `resp` and `db`; and the reply's type (bulk or verbatim).
    fn lines(&self, reply: &Value) -> (String, Vec<String>) {
        let (kind, text) = match reply {
            Value::Bulk(text) => ("bulk".to_owned(), text),
            Value::Verbatim(format, text) => (format!("verbatim {format}"), text),
            other => return (format!("{other:?}"), Vec::new()),
        };
        let text = String::from_utf8_lossy(text);
        let lines = text
            .lines()
            .map(|line| {
                let field = |name| resp_client::client_field(line, name);
                let who = match self.ids.iter().position(|id| *id == field("id")) {
                    Some(k) => format!("#{k}"),
                    None => "other".to_owned(),
                };
                format!(
                    "{who} cmd={} db={} resp={} flags={}",
                    field("cmd"),
                    field("db"),
                    field("resp"),
                    field("flags")
                )
            })
            .collect();
        (kind, lines)
    }
}

/// Both servers, ours first so that it stops before its directory goes.
type Servers = (resp_client::TestServer, tempfile::TempDir, RedisServer);

fn pair(resp: u8) -> (Side, Side, Servers) {
    let (dir, ours) = temp_server();
    let theirs = RedisServer::start();
    let (a, b) = (Side::open(ours.addr, resp), Side::open(theirs.addr, resp));
    (a, b, (ours, dir, theirs))
}

/// What both servers list or refuse for every form of `CLIENT LIST` Redis parses.
#[test]
fn client_list_filters_answer_as_redis() {
    for resp in [2, 3] {
        let (mut ours, mut theirs, _servers) = pair(resp);
        let forms: &[&[&str]] = &[
            &["CLIENT", "LIST"],
            &["CLIENT", "LIST", "TYPE", "normal"],
            &["CLIENT", "LIST", "TYPE", "NORMAL"],
            &["CLIENT", "LIST", "TYPE", "replica"],
            &["CLIENT", "LIST", "TYPE", "slave"],
            &["CLIENT", "LIST", "TYPE", "master"],
            &["CLIENT", "LIST", "TYPE", "pubsub"],
            &["CLIENT", "LIST", "TYPE", "bogus"],
            &["CLIENT", "LIST", "TYPE"],
            &["CLIENT", "LIST", "TYPE", "normal", "ID", "#1"],
            &["CLIENT", "LIST", "ID"],
            &["CLIENT", "LIST", "ID", "#2", "#1", "#2"],
            &["CLIENT", "LIST", "ID", "#1", "999999", "-1", "0"],
            &["CLIENT", "LIST", "ID", "#1", "x"],
            &["CLIENT", "LIST", "ID", "#1", "TYPE", "normal"],
            &["CLIENT", "LIST", "id", "#0"],
            &["CLIENT", "LIST", "bogus"],
            &["CLIENT", "INFO"],
            &["CLIENT", "KILL", "TYPE", "bogus"],
            &["CLIENT", "KILL", "TYPE", "replica"],
        ];
        for form in forms {
            let (a, b) = (ours.ask(form), theirs.ask(form));
            match (&a, &b) {
                (Value::Error(_), _) | (_, Value::Error(_)) | (Value::Int(_), _) => {
                    assert_eq!(a, b, "RESP{resp} {form:?}")
                }
                _ => assert_eq!(ours.lines(&a), theirs.lines(&b), "RESP{resp} {form:?}"),
            }
        }
    }
}

/// Each connection's last command, and how long it has been idle, as Redis shows them.
#[test]
fn client_list_shows_each_connections_last_command_and_idle_time() {
    let (mut ours, mut theirs, _servers) = pair(2);
    for side in [&mut ours, &mut theirs] {
        side.conns[1].cmd(&["PING"]);
        side.conns[2].cmd(&["CONFIG", "GET", "maxclients"]);
    }
    let (a, b) = (
        ours.ask(&["CLIENT", "LIST"]),
        theirs.ask(&["CLIENT", "LIST"]),
    );
    let (_, lines) = ours.lines(&a);
    assert_eq!(ours.lines(&a), theirs.lines(&b));
    assert!(
        lines.iter().any(|l| l.starts_with("#1 cmd=ping ")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.starts_with("#2 cmd=config|get ")));
    assert!(lines.iter().any(|l| l.starts_with("#0 cmd=client|list ")));

    std::thread::sleep(Duration::from_millis(3100));
    for (side, exact) in [(&mut ours, true), (&mut theirs, false)] {
        side.conns[2].cmd(&["PING"]);
        let Value::Bulk(text) = side.ask(&["CLIENT", "LIST", "ID", "#1", "#2", "#0"]) else {
            panic!("CLIENT LIST answers text");
        };
        let idle: Vec<u64> = String::from_utf8_lossy(&text)
            .lines()
            .map(|l| resp_client::client_field(l, "idle").parse().unwrap())
            .collect();
        // #1 has been idle three seconds; #2 has just run a command, #0 is running one.
        // Redis counts idle time in whole seconds of a clock it reads ten times a second,
        // so a second's boundary between two moments may add one, and the clock's lag
        // take one; ours counts from the millisecond.
        assert!((2..=4).contains(&idle[0]), "{idle:?}");
        match exact {
            true => assert!(
                (3..=4).contains(&idle[0]) && idle[1..] == [0, 0],
                "{idle:?}"
            ),
            false => assert!(idle[1..].iter().all(|&i| i <= 1), "{idle:?}"),
        }
    }
}

/// `INFO` is text in a verbatim string in RESP3, as Redis sends it; `TIME` is the
/// clock as two bulk strings.
#[test]
fn info_and_time_answer_as_redis() {
    for resp in [2, 3] {
        let (mut ours, mut theirs, _servers) = pair(resp);
        for section in [&["INFO"][..], &["INFO", "server"], &["INFO", "nosuch"]] {
            let (a, b) = (ours.ask(section), theirs.ask(section));
            let kind = |v: &Value| match v {
                Value::Verbatim(format, _) => format!("verbatim {format}"),
                Value::Bulk(_) => "bulk".to_owned(),
                other => format!("{other:?}"),
            };
            assert_eq!(kind(&a), kind(&b), "RESP{resp} {section:?}");
        }
        for side in [&mut ours, &mut theirs] {
            let Value::Array(time) = side.ask(&["TIME"]) else {
                panic!("TIME answers an array");
            };
            let [Value::Bulk(secs), Value::Bulk(micros)] = &time[..] else {
                panic!("TIME answers two bulk strings: {time:?}");
            };
            let secs: u64 = String::from_utf8_lossy(secs).parse().unwrap();
            let micros: u64 = String::from_utf8_lossy(micros).parse().unwrap();
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs();
            assert!(secs.abs_diff(now) <= 2 && micros < 1_000_000);
        }
        assert_eq!(ours.ask(&["TIME", "x"]), theirs.ask(&["TIME", "x"]));
    }
}
