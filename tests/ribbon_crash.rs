//! A process killed during `RIBBON.BUILD` loses nothing: a child stages items and
//! builds; the parent kills it (SIGKILL) at a moment spread over the adds and the build,
//! reopens the store, finds every acknowledged item, and builds what was left staged.

mod common;

use rocksketch::{Store, StoreOptions};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

const BATCHES: u64 = 3;
const BATCH: u64 = 40_000;
/// Milliseconds from "building" to the kill, per cycle (the first kills during adds).
const DELAYS: [u64; 9] = [0, 0, 2, 5, 10, 20, 50, 200, 800];

fn batch(b: u64) -> Vec<Vec<u8>> {
    (b * BATCH..(b + 1) * BATCH)
        .map(|i| format!("item:{i}").into_bytes())
        .collect()
}

/// The child: stages the batches (one acknowledgement each), then builds.
#[test]
#[ignore = "run by kills_during_builds in a child process"]
fn ribbon_crash_writer() {
    let Ok(dir) = std::env::var("ROCKSKETCH_RIBBON_CRASH_DIR") else {
        return;
    };
    let store = Store::open(&dir, StoreOptions::default()).unwrap();
    let mut out = std::io::stdout().lock();
    for b in 0..BATCHES {
        store.ribbon("r").add(&batch(b)).unwrap();
        writeln!(out, "ack {b}").unwrap();
        out.flush().unwrap();
    }
    writeln!(out, "building").unwrap();
    out.flush().unwrap();
    store.ribbon("r").build().unwrap();
    writeln!(out, "built").unwrap();
    out.flush().unwrap();
}

#[test]
fn kills_during_builds() {
    let mut outcomes = Vec::new();
    for (cycle, delay) in DELAYS.into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["ribbon_crash_writer", "--exact", "--ignored", "--nocapture"])
            .env("ROCKSKETCH_RIBBON_CRASH_DIR", dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut acked = 0;
        let mut built = false;
        // Kill at "building" plus a delay that sweeps the build, or earlier in the adds.
        let kill_after_acks = if cycle == 0 { 1 } else { BATCHES };
        for line in lines.by_ref() {
            let line = line.unwrap();
            if line.contains("ack ") {
                acked += 1;
            }
            if acked == kill_after_acks && (cycle == 0 || line.ends_with("building")) {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().unwrap();
        child.wait().unwrap();
        for line in lines.map_while(Result::ok) {
            acked += u64::from(line.contains("ack "));
            built |= line.ends_with("built");
        }
        let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
        let r = store.ribbon("r");
        for b in 0..acked {
            let found = r.mexists(&batch(b)).unwrap();
            assert!(found.iter().all(|f| *f), "cycle {cycle}: batch {b} lost");
        }
        let info = r.info().unwrap();
        let finished = info.generations == 1;
        assert!(
            !built || finished,
            "cycle {cycle}: an acknowledged build is missing"
        );
        // Whatever the kill left staged, the next build seals; nothing is lost.
        let sealed = r.build().unwrap();
        let info = r.info().unwrap();
        assert_eq!(info.staged, 0);
        assert!(info.built >= acked * BATCH && sealed <= info.built);
        for b in 0..acked {
            assert!(r.mexists(&batch(b)).unwrap().iter().all(|f| *f));
        }
        assert_eq!(info.generations, 1);
        outcomes.push((acked, finished));
    }
    // The kills landed both before and after a build finished.
    assert!(outcomes.iter().any(|(_, f)| *f), "{outcomes:?}");
    assert!(
        outcomes.iter().any(|(a, f)| !*f && *a == BATCHES),
        "{outcomes:?}"
    );
    println!("{outcomes:?}");
}
