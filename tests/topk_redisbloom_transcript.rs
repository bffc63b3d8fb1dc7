//! Replays 545 Top-K commands recorded from RedisBloom and compares every reply, errors
//! included, to the one RedisBloom sent. The transcript holds only traffic whose replies
//! do not depend on RedisBloom's random decay draws (see `topk_tdigest_notes.md`), so
//! every reply must be identical.

mod common;

#[test]
fn every_reply_equals_redisbloom() {
    let t = common::TempStore::new();
    assert_eq!(
        common::replay(&t.store().ns(0), "topk_redisbloom.jsonl"),
        545
    );
}
