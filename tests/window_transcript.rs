//! A windowed count-min sketch is RedisBloom's sketch over its window: replays the 460
//! count-min commands recorded from RedisBloom with every sketch created windowed (one
//! generation that no run outlives, and also eight slices of an hour, which a run does
//! not cross at the fixed time of the test's clock), and every reply must be
//! RedisBloom's, errors included; `CMS.INFO` must answer RedisBloom's fields first.
//! Merges, increments, queries and their errors all go through the generations.

mod common;

use common::{reply_json, transcript, TempStore};
use rocksketch::command::execute;
use rocksketch::{Clock, StoreOptions};
use serde_json::{json, Value};

fn replay_windowed(window: &[&str]) -> usize {
    let clock = Clock::manual(1_700_000_000_000 + 1_000);
    let t = TempStore::with_options(StoreOptions {
        clock,
        ..StoreOptions::default()
    });
    let ns = t.store().ns(0);
    let records = transcript("cms_redisbloom.jsonl");
    let mut created = 0;
    for (n, (cmd, reply)) in records.iter().enumerate() {
        let name = String::from_utf8_lossy(&cmd[0]).to_ascii_uppercase();
        let got = match name.as_str() {
            // Stand-ins as the plain replay makes them (see `common::replay`).
            "SET" => {
                ns.cms(&cmd[1]).init_by_dim(10, 2).expect("stand-in key");
                json!("OK")
            }
            "DEL" => json!(i64::from(ns.delete(&cmd[1]).unwrap())),
            "EXISTS" => json!(i64::from(ns.exists(&cmd[1]).unwrap())),
            "CMS.INITBYDIM" | "CMS.INITBYPROB" if cmd.len() == 4 => {
                let mut windowed = cmd.clone();
                windowed.extend(window.iter().map(|w| w.as_bytes().to_vec()));
                let got = reply_json(&execute(&ns, &windowed));
                created += usize::from(got == json!("OK"));
                got
            }
            "CMS.INFO" => match reply_json(&execute(&ns, cmd)) {
                // RedisBloom's six values, then the window's fields.
                Value::Array(mut fields) if fields.len() == 12 => {
                    assert_eq!(fields[6], json!("window"));
                    fields.truncate(6);
                    Value::Array(fields)
                }
                other => other,
            },
            _ => reply_json(&execute(&ns, cmd)),
        };
        let text: Vec<_> = cmd.iter().map(|a| String::from_utf8_lossy(a)).collect();
        assert_eq!(&got, reply, "line {}: {text:?} ({window:?})", n + 1);
    }
    assert!(created >= 10, "only {created} sketches were made windowed");
    records.len()
}

#[test]
fn windowed_sketches_answer_as_redisbloom_within_their_window() {
    assert_eq!(
        replay_windowed(&["WINDOW", "1099511627776", "SLICES", "1"]),
        460
    );
    assert_eq!(replay_windowed(&["WINDOW", "3600000", "SLICES", "8"]), 460);
}
