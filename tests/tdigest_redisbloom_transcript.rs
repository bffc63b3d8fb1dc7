//! Replays 819 t-digest commands recorded from RedisBloom and compares every reply,
//! errors included, to the one RedisBloom sent. RedisBloom's t-digest is deterministic
//! (no random draws), so every reply must be identical, doubles to the digit.
//!
//! The transcript sets up two keys of other types with `SET str v` and
//! `TOPK.RESERVE tk 3`, only to get `WRONGTYPE` errors from them; rocksketch holds no
//! strings (and Top-K is not built yet), so those two keys are made count-min sketches
//! here, which gives the same errors. `TYPE` and `EXISTS` are answered from the
//! namespace as the host answers them.

mod common;

use rocksketch::command::execute;
use serde_json::json;

#[test]
fn every_reply_equals_redisbloom() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let records = common::transcript("tdigest_redisbloom.jsonl");
    for (n, (cmd, reply)) in records.iter().enumerate() {
        let name = String::from_utf8_lossy(&cmd[0]).to_ascii_uppercase();
        let got = match name.as_str() {
            "SET" | "TOPK.RESERVE" => {
                ns.cms(&cmd[1]).init_by_dim(10, 2).expect("stand-in key");
                json!("OK")
            }
            "TYPE" => json!(ns
                .key_type(&cmd[1])
                .unwrap()
                .map_or("none", |t| t.redis_name())),
            "EXISTS" => json!(i64::from(ns.exists(&cmd[1]).unwrap())),
            _ => common::reply_json(&execute(&ns, cmd)),
        };
        let text: Vec<_> = cmd.iter().map(|a| String::from_utf8_lossy(a)).collect();
        assert_eq!(&got, reply, "line {}: {text:?}", n + 1);
    }
    assert_eq!(records.len(), 819);
}
