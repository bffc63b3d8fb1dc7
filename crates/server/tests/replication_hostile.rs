//! Hostile primaries: a fake primary that answers the replica's handshake with a bad
//! file name, an impossible length, files whose pieces skip ahead, batches that do not
//! decode, leave a gap or do not join, or an error; each leaves the link down with a clear error
//! and the replica's data as it was, and the replica writable once promoted.

#[path = "common/replicas.rs"]
mod replicas;
#[path = "common/resp_client.rs"]
mod resp_client;

use replicas::{follow, info_field, start};
use resp_client::{ok, Value};
use rocksketch::resp::encode_request;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

/// A fake primary that answers the handshake, then `PSYNC` with what `reply` makes of
/// the offset the replica asked for.
/// What a fake primary answers `PSYNC` with, given the offset the replica asked for.
type Answer = fn(u64) -> Vec<u8>;

fn hostile_primary(reply: Answer) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            // REPLCONF, then PSYNC: each an array of 3 bulk strings (7 lines).
            for reply_to in 0..2 {
                for _ in 0..7 {
                    line.clear();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                }
                let answer = if reply_to == 0 {
                    b"+OK\r\n".to_vec()
                } else {
                    reply(line.trim().parse::<i64>().unwrap_or(0).max(0) as u64)
                };
                let _ = stream.write_all(&answer);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    addr
}

/// A RESP array of bulk strings.
fn frame<A: AsRef<[u8]>>(parts: &[A]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_request(parts, &mut out);
    out
}

/// `+CONTINUE`, then one batch of the log.
fn batch(sequence: u64, data: &[u8]) -> Vec<u8> {
    let mut out = b"+CONTINUE 0123\r\n".to_vec();
    out.extend_from_slice(&frame(&[
        &b"BATCH"[..],
        sequence.to_string().as_bytes(),
        data,
    ]));
    out
}

#[test]
fn hostile_primaries_leave_the_replica_as_it_was_with_a_clear_error() {
    let replies: &[(Answer, &str)] = &[
        (
            |_| {
                b"+FULLRESYNC 0123 5\r\n*4\r\n$4\r\nFILE\r\n$9\r\n../escape\r\n$1\r\n0\r\n$1\r\nx\r\n".to_vec()
            },
            "bad file name",
        ),
        (
            |_| b"+FULLRESYNC 0123 5\r\n*2\r\n$99999999999\r\n".to_vec(),
            "bad length",
        ),
        // Whole files (handed to the syncer), then one whose pieces skip ahead.
        (
            |_| {
                let mut out = b"+FULLRESYNC 0123 5\r\n".to_vec();
                for (name, at, data) in
                    [("a", 0, "xx"), ("b", 0, "y"), ("c", 0, "z"), ("c", 5, "w")]
                {
                    out.extend_from_slice(&frame(&["FILE", name, &at.to_string(), data]));
                }
                out
            },
            "out of order",
        ),
        // A batch whose records do not decode, and one whose count lies.
        (|at| batch(at + 1, b"junk"), "cannot be read"),
        (
            |at| {
                let mut data = (at + 1).to_le_bytes().to_vec();
                data.extend_from_slice(&[9, 0, 0, 0, 0x1, 1, b'k', 1, b'v']);
                batch(at + 1, &data)
            },
            "cannot be read",
        ),
        (|at| batch(at + 5, b"junk"), "gap"),
        // Two batches that arrive together (applied as one write) whose second's own
        // header does not follow the first: neither is applied.
        (
            |at| {
                let record = [0x1, 1, b'k', 1, b'v'];
                let mut first = (at + 1).to_le_bytes().to_vec();
                first.extend_from_slice(&1u32.to_le_bytes());
                first.extend_from_slice(&record);
                let mut second = (at + 9).to_le_bytes().to_vec();
                second.extend_from_slice(&1u32.to_le_bytes());
                second.extend_from_slice(&record);
                let mut out = batch(at + 1, &first);
                out.extend_from_slice(&frame(&[
                    &b"BATCH"[..],
                    (at + 2).to_string().as_bytes(),
                    &second,
                ]));
                out
            },
            "does not follow",
        ),
        (|_| b"-ERR go away\r\n".to_vec(), "go away"),
    ];
    for (reply, error) in replies {
        let dir = tempfile::tempdir().unwrap();
        let replica = start(dir.path());
        let mut r = replica.client();
        assert_eq!(r.cmd(&["BF.ADD", "bf", "mine"]), Value::Int(1));
        let primary = hostile_primary(*reply);
        follow(&replica, primary);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !info_field(&mut r, "master_link_error").contains(error) {
            assert!(
                Instant::now() < deadline,
                "{error}: {:?}",
                r.cmd(&["INFO", "replication"])
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(
            r.cmd(&["BF.EXISTS", "bf", "mine"]),
            Value::Int(1),
            "{error}"
        );
        assert_eq!(r.cmd(&["DBSIZE"]), Value::Int(1), "{error}");
        assert_eq!(r.cmd(&["REPLICAOF", "NO", "ONE"]), ok());
        assert_eq!(r.cmd(&["BF.ADD", "bf", "again"]), Value::Int(1));
        let parent = dir.path().parent().unwrap();
        assert!(!dir.path().join("escape").exists() && !parent.join("escape").exists());
    }
}
