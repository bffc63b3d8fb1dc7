//! The RESP host's limits and authentication over raw sockets: oversize requests,
//! absurd announced lengths (no memory reserved for them), slow clients, `requirepass`.

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{error, ok, temp_server as server, Client, TestServer, Value};
use rocksketch::resp::Limits;
use rocksketch_server::ServerConfig;
use std::time::Duration;

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
    // A client whose unparsed input passes the query buffer limit is dropped, and reads
    // why: the server lingers, dropping what still arrives (tests/serve_linger.rs).
    let mut greedy = server.client();
    greedy.send_raw(b"*1\r\n$4000000\r\n");
    let chunk = vec![b'x'; 64 << 10];
    for _ in 0..20 {
        use std::io::Write;
        greedy.reader.get_mut().write_all(&chunk).expect("no reset");
    }
    let mut reply = Vec::new();
    {
        use std::io::Read;
        greedy
            .reader
            .read_to_end(&mut reply)
            .expect("the error, then end of stream");
    }
    assert_eq!(
        reply,
        b"-ERR Protocol error: query buffer limit reached\r\n"
    );
    assert_eq!(probe.cmd(&["PING"]), Value::Simple("PONG".into()));
}

/// The process's virtual and resident memory sizes, in bytes.
fn memory() -> (u64, u64) {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let mut pages = statm
        .split_whitespace()
        .map(|p| p.parse::<u64>().unwrap() * 4096);
    (pages.next().unwrap(), pages.next().unwrap())
}
