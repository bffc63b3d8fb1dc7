//! One hostile client on loopback must not take the server down or hostage: cursor
//! memory, flags, pre-authentication limits, descriptors, inline quoting.
//!
//! The memory and descriptor tests run the real binary under `prlimit` (an
//! address-space or open-file limit), so a regression fails instead of taking the
//! machine down.

#[path = "../../server/tests/common/resp_client.rs"]
mod resp_client;

use resp_client::{Client, TestServer, Value};
use rocksketch_server::ServerConfig;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_rocksketch");

/// `rocksketch serve --port 0` on a temporary directory, under `prlimit` flags.
struct Process {
    child: Child,
    addr: SocketAddr,
    stderr: Option<std::process::ChildStderr>,
    _dir: tempfile::TempDir,
}

impl Process {
    fn start(limits: &[&str], flags: &[&str]) -> Process {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new("prlimit")
            .args(limits)
            .arg("--")
            .arg(BIN)
            .args(["serve", "--port", "0", "--dir"])
            .arg(dir.path())
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("prlimit runs");
        let addr = resp_client::listening_addr(&mut child);
        let stderr = child.stderr.take();
        Process {
            child,
            addr,
            stderr,
            _dir: dir,
        }
    }

    /// Resident memory in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .expect("VmRSS")
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// Post-mortem: each SCAN cursor kept a copy of the last key it passed, 100 000 cursors
// at most whatever their size: 300 scans over a 4 MB key name took 1.2 GB.
#[test]
fn scan_cursors_over_a_huge_key_name_stay_small() {
    let server = Process::start(&["--as=6000000000"], &[]);
    let mut c = Client::connect(server.addr);
    // A 4 MiB name is refused now (key names are at most 8 KiB); the scans go over
    // the longest name allowed.
    let huge = "k".repeat(4 << 20);
    let refused = c.cmd(&["BF.ADD", &huge, "x"]);
    assert!(matches!(refused, Value::Error(e) if e.starts_with("ERR key is too long")));
    let big = "k".repeat(rocksketch::MAX_KEY_LEN);
    assert_eq!(c.cmd(&["BF.ADD", &big, "x"]), Value::Int(1));
    let before = server.rss_kib();
    for _ in 0..300 {
        let Value::Array(reply) = c.cmd(&["SCAN", "0", "COUNT", "1", "MATCH", "nomatch"]) else {
            panic!("SCAN answers an array");
        };
        assert_eq!(reply.len(), 2);
    }
    let grown_mib = server.rss_kib().saturating_sub(before) / 1024;
    assert!(
        grown_mib < 100,
        "300 scans grew the server by {grown_mib} MiB"
    );
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
}

// Post-mortem: `--requirepas s3cret` (a typo) started a server with no password.
#[test]
fn unknown_or_malformed_flags_stop_the_server_from_starting() {
    for flags in [
        &["--requirepas", "s3cret"][..],
        &["--port", "not-a-number"],
        &["--maxclients"],
        &["stray"],
    ] {
        let out = Command::new(BIN)
            .args(["serve", "--dir", "/nonexistent/never-created"])
            .args(flags)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{flags:?} started a server");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let named = flags[0].trim_start_matches("--");
        assert!(stderr.contains(named), "{flags:?}: {stderr}");
    }
}

// Post-mortem: the limits of a client that has not authenticated (10 arguments) were
// applied to every request already received with the AUTH, so a longer command
// pipelined behind it broke the connection.
#[test]
fn auth_pipelined_with_a_long_command_lifts_the_limits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        ServerConfig {
            requirepass: Some("s3cret".into()),
            ..ServerConfig::default()
        },
    );
    let mut c = server.client();
    let items: Vec<String> = (0..40).map(|i| format!("item{i}")).collect();
    let mut wire = b"*2\r\n$4\r\nAUTH\r\n$6\r\ns3cret\r\n".to_vec();
    wire.extend_from_slice(
        format!("*{}\r\n$7\r\nBF.MADD\r\n$1\r\nf\r\n", items.len() + 2).as_bytes(),
    );
    for item in &items {
        wire.extend_from_slice(format!("${}\r\n{item}\r\n", item.len()).as_bytes());
    }
    c.send_raw(&wire);
    assert_eq!(c.read(), Value::Simple("OK".into()));
    assert_eq!(c.read(), Value::Array(vec![Value::Int(1); items.len()]));
    // Before AUTH, the small limits still hold.
    let mut stranger = server.client();
    let mut long = format!("*{}\r\n$7\r\nBF.MADD\r\n$1\r\nf\r\n", items.len() + 2).into_bytes();
    for item in &items {
        long.extend_from_slice(format!("${}\r\n{item}\r\n", item.len()).as_bytes());
    }
    stranger.send_raw(&long);
    assert!(matches!(stranger.read(), Value::Error(e) if e.contains("Protocol error")));
}

// Post-mortem: the default maxclients (10 000) needs 20 000 descriptors, above the
// usual limit; clients past the limit made accept fail, and the loop spun on it.
#[test]
fn maxclients_follows_the_open_file_limit() {
    let mut server = Process::start(&["--nofile=400"], &[]);
    let mut stderr = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut stderr)
        .unwrap();
    // One descriptor per client (its socket), 256 kept for the rest.
    assert!(stderr.contains("allows 144 clients"), "{stderr}");
    let mut clients: Vec<Client> = (0..144).map(|_| Client::connect(server.addr)).collect();
    for c in &mut clients {
        assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
    }
    let mut extra = Client::connect(server.addr);
    assert_eq!(
        extra.try_read(),
        Some(Value::Error("ERR max number of clients reached".into()))
    );
    drop(clients);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        Client::connect(server.addr).cmd(&["PING"]),
        Value::Simple("PONG".into())
    );
}

// Post-mortem: inline commands were split at every space, quotes and all.
#[test]
fn inline_commands_follow_redis_quoting() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), ServerConfig::default());
    let mut c = server.client();
    c.send_raw(b"ECHO \"a b\"\r\nECHO 'it\\'s'\r\nECHO \"\\x41\\n\"\r\n");
    assert_eq!(c.read(), Value::bulk("a b"));
    assert_eq!(c.read(), Value::bulk("it's"));
    assert_eq!(c.read(), Value::bulk("A\n"));
    c.send_raw(b"ECHO \"a b\r\n");
    assert_eq!(
        c.read(),
        Value::Error("ERR Protocol error: unbalanced quotes in request".into())
    );
    assert!(c.is_closed());
}

// The sizes a client controls in the newest structures, each at its limit and just past
// it, in a server under an address-space limit: refused past the limit with RedisBloom's
// refusal texts, and at the limit the server's memory stays bounded.
#[test]
fn digests_and_top_ks_at_their_limits_keep_memory_bounded() {
    let server = Process::start(&["--as=6000000000"], &["--cache-mb", "16"]);
    let mut c = Client::connect(server.addr);
    let before = server.rss_kib();
    let err = |text: &str| Value::Error(text.to_owned());
    assert_eq!(
        c.cmd(&["TDIGEST.CREATE", "too", "COMPRESSION", "10001"]),
        err("ERR T-Digest: allocation failed")
    );
    assert_eq!(
        c.cmd(&["TOPK.RESERVE", "too", "1001", "8", "7", "0.9"]),
        err("ERR Insufficient memory to create topk data structure")
    );
    assert_eq!(
        c.cmd(&["TOPK.RESERVE", "too", "10", "65537", "1", "0.9"]),
        err("ERR Insufficient memory to create topk data structure")
    );
    let long = "i".repeat(1025);
    let item = |i: usize| format!("{i:01024}");
    for k in 0..8 {
        let (td, tk) = (format!("td{k}"), format!("tk{k}"));
        assert_eq!(
            c.cmd(&["TDIGEST.CREATE", &td, "COMPRESSION", "10000"]),
            Value::Simple("OK".into())
        );
        assert_eq!(
            c.cmd(&["TOPK.RESERVE", &tk, "1000", "65536", "1", "0.9"]),
            Value::Simple("OK".into())
        );
        for round in 0..5 {
            let values: Vec<String> = (0..50_000)
                .map(|v| format!("{}", (v * 7919 + round) % 100_003))
                .collect();
            let mut add = vec!["TDIGEST.ADD", td.as_str()];
            add.extend(values.iter().map(String::as_str));
            assert_eq!(c.cmd(&add), Value::Simple("OK".into()));
        }
        let items: Vec<String> = (0..1000).map(item).collect();
        let mut add = vec!["TOPK.ADD", tk.as_str()];
        add.extend(items.iter().map(String::as_str));
        let Value::Array(replies) = c.cmd(&add) else {
            panic!("TOPK.ADD answers an array")
        };
        assert_eq!(replies.len(), 1000);
        assert_eq!(
            c.cmd(&["TOPK.ADD", &tk, &long]),
            err("TopK: item longer than 1024 bytes")
        );
        let Value::Array(q) = c.cmd(&["TDIGEST.QUANTILE", &td, "0.5"]) else {
            panic!()
        };
        assert_eq!(q.len(), 1);
        let Value::Array(list) = c.cmd(&["TOPK.LIST", &tk]) else {
            panic!()
        };
        assert_eq!(list.len(), 1000);
    }
    let grown_mib = server.rss_kib().saturating_sub(before) / 1024;
    // 8 digests of 60 010 centroids and 8 Top-Ks of 1000 1 KiB items (about 20 MiB of
    // pages), a 16 MiB page cache and the memtables: measured 42 MiB.
    assert!(grown_mib < 150, "the server grew by {grown_mib} MiB");
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
}

// Ribbon filters at their limits: the smallest error rate (32-bit results) and just
// past it, large items (only their hashes are kept) and large staging commands; builds
// of 200 000 items per key keep the server's memory bounded.
#[test]
fn ribbons_at_their_limits_keep_memory_bounded() {
    let server = Process::start(&["--as=6000000000"], &["--cache-mb", "16"]);
    let mut c = Client::connect(server.addr);
    let before = server.rss_kib();
    assert_eq!(
        c.cmd(&["RIBBON.RESERVE", "too", "2.3e-10"]),
        Value::Error(
            "ERR error rate must be in the range [2.3283064365386963e-10, 1) \
             (2^-32: at most 32 result bits)"
                .to_owned()
        )
    );
    let big = "x".repeat(64 << 10);
    for k in 0..4 {
        let key = format!("rb{k}");
        let rate = if k % 2 == 0 {
            "2.3283064365386963e-10"
        } else {
            "0.5"
        };
        assert_eq!(
            c.cmd(&["RIBBON.RESERVE", &key, rate]),
            Value::Simple("OK".into())
        );
        for round in 0..4 {
            let items: Vec<String> = (0..50_000).map(|i| format!("{round}:{i}")).collect();
            let mut add = vec!["RIBBON.ADD", key.as_str()];
            add.extend(items.iter().map(String::as_str));
            assert_eq!(c.cmd(&add), Value::Int(50_000));
        }
        assert_eq!(c.cmd(&["RIBBON.ADD", &key, &big]), Value::Int(1));
        assert_eq!(c.cmd(&["RIBBON.BUILD", &key]), Value::Int(200_001));
        assert_eq!(c.cmd(&["RIBBON.EXISTS", &key, &big]), Value::Int(1));
        let mut probe = vec!["RIBBON.MEXISTS", key.as_str()];
        let items: Vec<String> = (0..1000).map(|i| format!("3:{i}")).collect();
        probe.extend(items.iter().map(String::as_str));
        let Value::Array(found) = c.cmd(&probe) else {
            panic!("RIBBON.MEXISTS answers an array")
        };
        assert!(found.iter().all(|f| *f == Value::Int(1)));
    }
    let grown_mib = server.rss_kib().saturating_sub(before) / 1024;
    // Two filters of 200 001 items at 32 bits and two at 1 bit (about 2 MiB of shards),
    // the staging pages built from, a 16 MiB page cache and the memtables.
    assert!(grown_mib < 150, "the server grew by {grown_mib} MiB");
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
}
