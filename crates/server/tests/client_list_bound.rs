//! `CLIENT LIST`'s reply is bounded. In a test binary of its own: it builds some 64 MiB
//! on purpose, which would disturb the resident-memory assertions of tests running
//! beside it in one process.

#[path = "common/resp_client.rs"]
mod resp_client;

use resp_client::{error, ok, temp_server as server, Value};

/// `CLIENT LIST ID` names one client as often as a request holds arguments, and a
/// client's name is any bulk string: the reply stops at a bound with an error instead of
/// growing with their product, and the connection goes on.
#[test]
fn client_list_replies_are_bounded() {
    let (_dir, server) = server();
    let mut c = server.client();
    let name = "n".repeat(1 << 20);
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", &name]), ok());
    let Value::Int(id) = c.cmd(&["CLIENT", "ID"]) else {
        panic!("CLIENT ID answers an integer");
    };
    let id = id.to_string();
    let rss_before = resident();
    // A thousand times a 1 MiB line: a reply of 1 GiB, unbounded.
    let mut words = vec!["CLIENT", "LIST", "ID"];
    words.extend(std::iter::repeat_n(id.as_str(), 1000));
    assert_eq!(
        c.cmd(&words),
        error("ERR CLIENT LIST reply too large (over 64 MiB)")
    );
    let rss_after = resident();
    assert!(
        rss_after < rss_before + (256 << 20),
        "resident memory grew from {rss_before} to {rss_after} bytes"
    );
    // Twenty times fits, and the connection goes on.
    let words: Vec<&str> = ["CLIENT", "LIST", "ID"]
        .into_iter()
        .chain(std::iter::repeat_n(id.as_str(), 20))
        .collect();
    let Value::Bulk(text) = c.cmd(&words) else {
        panic!("CLIENT LIST answers text");
    };
    assert_eq!(text.iter().filter(|b| **b == b'\n').count(), 20);
    assert_eq!(c.cmd(&["PING"]), Value::Simple("PONG".into()));
}

/// The process's resident memory, in bytes.
fn resident() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages = statm.split_whitespace().nth(1).unwrap();
    pages.parse::<u64>().unwrap() * 4096
}
