//! Replays 460 count-min commands recorded from RedisBloom and compares every reply,
//! errors included, to the one RedisBloom sent.

mod common;

use rocksketch::command::{execute, Reply};
use serde_json::{json, Value};

/// A reply as the transcript records it (RESP2 shapes).
fn to_json(reply: &Reply) -> Value {
    match reply {
        Reply::Simple(s) => json!(s),
        Reply::Bulk(b) => json!(String::from_utf8_lossy(b)),
        Reply::Double(text) => json!(text),
        Reply::Int(i) => json!(i),
        Reply::Nil => Value::Null,
        Reply::Error(e) => json!({ "error": e }),
        Reply::Bool(b) => json!(i64::from(*b)),
        Reply::Array(items) => Value::Array(items.iter().map(to_json).collect()),
        Reply::Map(pairs) => Value::Array(
            pairs
                .iter()
                .flat_map(|(k, v)| [to_json(k), to_json(v)])
                .collect(),
        ),
    }
}

#[test]
fn every_reply_equals_redisbloom() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/vectors/cms_redisbloom.jsonl");
    let text = std::fs::read_to_string(path).expect("transcript");
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let mut replayed = 0;
    for (n, line) in text.lines().enumerate() {
        let record: Value = serde_json::from_str(line).expect("json line");
        let cmd: Vec<Vec<u8>> = record["cmd"]
            .as_array()
            .expect("cmd array")
            .iter()
            .map(|a| a.as_str().expect("string arg").as_bytes().to_vec())
            .collect();
        let got = to_json(&execute(&ns, &cmd));
        assert_eq!(got, record["reply"], "line {}: {}", n + 1, record["cmd"]);
        replayed += 1;
    }
    assert_eq!(replayed, 460);
}
