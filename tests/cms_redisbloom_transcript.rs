//! Replays 460 count-min commands recorded from RedisBloom and compares every reply,
//! errors included, to the one RedisBloom sent.

mod common;

#[test]
fn every_reply_equals_redisbloom() {
    let t = common::TempStore::new();
    assert_eq!(
        common::replay(&t.store().ns(0), "cms_redisbloom.jsonl"),
        460
    );
}
