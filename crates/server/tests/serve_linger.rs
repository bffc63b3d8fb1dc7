//! A connection closed while its client is still sending (a protocol error, the query
//! buffer limit, a pipeline after `QUIT`): the client reads its error, not a reset.
//! Closing a socket with unread input makes the kernel answer RST, and a client in the
//! middle of sending a large request got a broken pipe and never saw why (redis-py
//! raised `ConnectionError` for `ECHO` past `proto-max-bulk-len`). The server shuts
//! the socket for writing and reads and drops what still arrives, for a bounded time.

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{error, TestServer, Value};
use rocksketch::resp::Limits;
use rocksketch_server::ServerConfig;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// Bytes the client goes on sending after its request was refused: more than the
/// kernel's socket buffers hold on loopback, so a reset would surely be seen.
const SENT_AFTER: usize = 16 << 20;

fn server(dir: &std::path::Path) -> TestServer {
    let config = ServerConfig {
        limits: Limits {
            max_bulk: 1 << 20,
            ..Limits::default()
        },
        max_query_buffer: 1 << 20,
        max_clients: 4,
        ..ServerConfig::default()
    };
    TestServer::start(dir, config)
}

/// Writes `SENT_AFTER` bytes of `x` in 64 KiB writes; the error of the first that fails.
fn keep_sending(stream: &mut std::net::TcpStream) -> std::io::Result<()> {
    let chunk = vec![b'x'; 64 << 10];
    for _ in 0..SENT_AFTER / chunk.len() {
        stream.write_all(&chunk)?;
    }
    Ok(())
}

#[test]
fn a_client_still_sending_reads_its_protocol_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let mut c = server.client();
    // A bulk string past proto-max-bulk-len, whose bytes the client goes on sending, as
    // a client writing a whole request before reading does.
    c.send_raw(b"*2\r\n$4\r\nECHO\r\n$2097152\r\n");
    keep_sending(c.reader.get_mut()).expect("no reset while sending");
    assert_eq!(c.read(), error("ERR Protocol error: invalid bulk length"));
    assert!(c.is_closed());
    assert_eq!(server.client().cmd(&["PING"]), Value::Simple("PONG".into()));
}

#[test]
fn a_client_past_the_query_buffer_limit_reads_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let mut c = server.client();
    // Many small arguments, each within the bulk limit: the unparsed input grows past
    // the query buffer limit as the request arrives.
    c.send_raw(b"*100000\r\n");
    let mut wire = Vec::new();
    while wire.len() < SENT_AFTER {
        wire.extend_from_slice(b"$1000\r\n");
        wire.extend_from_slice(&[b'y'; 1000]);
        wire.extend_from_slice(b"\r\n");
    }
    c.reader
        .get_mut()
        .write_all(&wire)
        .expect("no reset while sending");
    let mut reply = Vec::new();
    c.reader
        .read_to_end(&mut reply)
        .expect("an error, then end of stream");
    assert_eq!(
        reply,
        b"-ERR Protocol error: query buffer limit reached\r\n"
    );
}

#[test]
fn replies_before_quit_arrive_and_what_follows_it_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let mut c = server.client();
    let mut wire = b"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nQUIT\r\n".to_vec();
    // Requests after QUIT are never run: not even this one, which would have grown.
    wire.extend_from_slice(b"*3\r\n$7\r\nCMS.INCRBY\r\n");
    c.send_raw(&wire);
    keep_sending(c.reader.get_mut()).expect("no reset while sending");
    assert_eq!(c.read(), Value::Simple("PONG".into()));
    assert_eq!(c.read(), Value::Simple("OK".into()));
    assert!(c.is_closed());
}

#[test]
fn a_lingering_connection_frees_its_slot_and_ends_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path());
    let mut admin = server.client();
    let clients = |admin: &mut resp_client::Client| match admin.cmd(&["CLIENT", "LIST"]) {
        Value::Bulk(list) => String::from_utf8(list).unwrap().lines().count(),
        other => panic!("CLIENT LIST answered {other:?}"),
    };
    let mut stuck = server.client();
    stuck.send_raw(b"*1\r\n$2097152\r\nabc");
    assert_eq!(
        stuck.read(),
        error("ERR Protocol error: invalid bulk length")
    );
    // The client never closes: the server has shut its side, and the connection is
    // no longer a client (max_clients is 4: three more are admitted).
    assert!(stuck.is_closed());
    assert_eq!(clients(&mut admin), 1);
    let more: Vec<_> = (0..3).map(|_| server.client()).collect();
    for mut c in more {
        assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    }
    // The linger ends within its bound: the server closes the socket, so a write
    // then fails (a reset answers the first, a broken pipe the next).
    let start = Instant::now();
    let stream = stuck.reader.get_mut();
    loop {
        if stream.write_all(b"x").is_err() {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "still lingering");
        std::thread::sleep(Duration::from_millis(50));
    }
}
