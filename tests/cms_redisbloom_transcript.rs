//! Replays 460 count-min commands recorded from RedisBloom and compares every reply,
//! errors included, to the one RedisBloom sent.

mod common;

use rocksketch::command::execute;

#[test]
fn every_reply_equals_redisbloom() {
    let t = common::TempStore::new();
    let ns = t.store().ns(0);
    let records = common::transcript("cms_redisbloom.jsonl");
    for (n, (cmd, reply)) in records.iter().enumerate() {
        let got = common::reply_json(&execute(&ns, cmd));
        assert_eq!(
            &got,
            reply,
            "line {}: {:?}",
            n + 1,
            String::from_utf8_lossy(&cmd.concat())
        );
    }
    assert_eq!(records.len(), 460);
}
