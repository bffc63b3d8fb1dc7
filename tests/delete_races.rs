//! Writes racing a `DEL`, an expiry, a `FLUSHDB` or a `CMS.MERGE` of their key.
//!
//! Post-mortem: writers looked the key's version up without a lock, so a delete could
//! land between the look-up and the write. The write then went to a version already
//! range-deleted: its reply counted from zero (`CMS.INCRBY` answered 1, 2, 3 on a key
//! holding a million), and its pages survived every compaction. Writers now hold the
//! key's stripe shared from look-up to reply; deletes and merges hold it exclusively.

mod common;

use rocksketch::{CmsError, Error};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

const START: u64 = 1_000_000;

/// Runs `writers` threads calling `write` until it fails, while the main thread waits
/// for a first write to succeed, then `delay`, and then runs `delete`. Returns how many writes succeeded.
fn race(
    writers: usize,
    delay: Duration,
    write: impl Fn() -> Result<(), Error> + Send + Sync + 'static,
    delete: impl FnOnce(),
) -> u64 {
    let write = Arc::new(write);
    let done = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..writers)
        .map(|_| {
            let (write, done) = (write.clone(), done.clone());
            std::thread::spawn(move || {
                // A bound, in case the delete never comes.
                for _ in 0..200_000 {
                    if write().is_err() {
                        return;
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    // The race needs writes in flight: wait for the first to be acknowledged (threads
    // may start late on a loaded machine), then let them run on for `delay`.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while done.load(Ordering::Relaxed) == 0 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    std::thread::sleep(delay);
    delete();
    for t in threads {
        t.join().unwrap();
    }
    done.load(Ordering::Relaxed)
}

#[test]
fn incrby_racing_a_delete_answers_from_the_version_or_not_at_all() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    for cycle in 0..30u64 {
        let cms = store.cms("k");
        cms.init_by_dim(1000, 4).unwrap();
        cms.incr_by(&[("x", START)]).unwrap();
        let writer = store.clone();
        let acked = race(
            4,
            Duration::from_millis(3 + cycle % 5),
            move || {
                let estimate = writer.cms("k").incr_by_with_estimates(&[("x", 1)])?[0];
                assert!(
                    u64::from(estimate) > START,
                    "cycle {cycle}: CMS.INCRBY answered {estimate} on a key holding {START}"
                );
                Ok(())
            },
            || assert!(store.ns(0).delete(b"k").unwrap()),
        );
        assert!(
            acked > 0,
            "cycle {cycle}: no write got in before the delete"
        );
        assert!(matches!(
            store.cms("k").query(&["x"]),
            Err(Error::Cms(CmsError::KeyDoesNotExist))
        ));
    }
    assert_eq!(
        common::pages_after_compaction(&store),
        0,
        "pages of deleted versions"
    );
}

#[test]
fn blind_adds_racing_deletes_expiry_and_flush_leave_no_pages() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    let ns = store.ns(0);
    for cycle in 0..12u32 {
        let (s, key) = (store.clone(), format!("f{cycle}"));
        let (write, end): (Box<dyn Fn() -> Result<(), Error> + Send + Sync>, _) = match cycle % 3 {
            0 => {
                s.cuckoo(&key).reserve(Default::default()).unwrap();
                let k = key.clone();
                (Box::new(move || s.cuckoo(&k).add(b"item")), "del")
            }
            1 => {
                s.bloom(&key).reserve(0.01, 100_000, 2).unwrap();
                let k = key.clone();
                (
                    Box::new(move || s.bloom(&k).add_blind(&[b"a", b"b"])),
                    "expire",
                )
            }
            _ => {
                s.cms(&key).init_by_dim(100, 3).unwrap();
                let k = key.clone();
                (Box::new(move || s.cms(&k).incr_by(&[("x", 1)])), "flush")
            }
        };
        let deleter = store.clone();
        let key2 = key.clone();
        // Blind Bloom and cuckoo adds create a missing key, so their writers would not
        // stop on their own: they run a fixed number of writes around the delete.
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let bounded = move || {
            if stop2.load(Ordering::Relaxed) {
                return Err(Error::InvalidArgument("stopped".into()));
            }
            write()
        };
        race(3, Duration::from_millis(5), bounded, move || {
            let ns = deleter.ns(0);
            match end {
                "del" => assert!(ns.delete(key2.as_bytes()).unwrap()),
                "expire" => {
                    let at = rocksketch::now_ms() + 3;
                    assert!(ns.expire_at(key2.as_bytes(), at).unwrap());
                    std::thread::sleep(Duration::from_millis(10));
                    deleter.sweep_expired(None, 1000).unwrap();
                }
                _ => assert!(ns.flush().unwrap() >= 1),
            }
            std::thread::sleep(Duration::from_millis(2));
            stop.store(true, Ordering::Relaxed);
        });
        // Whatever a writer recreated after the delete is a live key: delete it too.
        ns.flush().unwrap();
    }
    assert_eq!(
        common::pages_after_compaction(&store),
        0,
        "pages of deleted versions"
    );
}

#[test]
fn merge_into_its_own_source_keeps_every_acknowledged_increment() {
    let t = common::TempStore::new();
    let store = t.store().clone();
    let cms = store.cms("k");
    cms.init_by_dim(2000, 5).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..3)
        .map(|_| {
            let (s, stop, acked) = (store.clone(), stop.clone(), acked.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    s.cms("k").incr_by_with_estimates(&[("x", 1)]).unwrap();
                    acked.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for _ in 0..200 {
        // k := 1·k: a no-op, unless it loses an increment.
        cms.merge(&[("k", 1)]).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let total = acked.load(Ordering::Relaxed);
    assert!(total > 0);
    assert_eq!(u64::from(cms.query(&["x"]).unwrap()[0]), total);
    assert_eq!(cms.info().unwrap().count, total);
}

#[test]
fn a_sweep_step_of_zero_is_refused() {
    let t = common::TempStore::new();
    assert!(matches!(
        t.store().sweep_expired(None, 0),
        Err(Error::InvalidArgument(_))
    ));
    assert!(t.store().sweep_expired(None, 1).is_ok());
}
