//! Replays 819 t-digest commands recorded from RedisBloom and compares every reply,
//! errors included, to the one RedisBloom sent. RedisBloom's t-digest is deterministic
//! (no random draws), so every reply must be identical, doubles to the digit.

mod common;

#[test]
fn every_reply_equals_redisbloom() {
    let t = common::TempStore::new();
    assert_eq!(
        common::replay(&t.store().ns(0), "tdigest_redisbloom.jsonl"),
        819
    );
}
