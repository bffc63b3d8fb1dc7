//! Recovery from a full disk without a restart: `rocksketch serve` on a small tmpfs,
//! filled until writes are refused while another client writes and a third reads; then
//! the filesystem grows and writes must be accepted again on the same connections.
//!
//! Two ways back, each asserted through the server's log: a little space freed (less
//! than RocksDB wants before it resumes by itself) makes the store reopen its database;
//! a lot freed lets RocksDB resume by itself. Through both, the reader never sees an
//! error or a count going back, and after a restart every acknowledged increment is
//! there and no refused one. With and without `--sync`.
//!
//! Mounting a tmpfs needs root: elsewhere the test says so and passes without running.

#[path = "../../server/tests/common/resp_client.rs"]
mod resp_client;

#[path = "common/full_disk.rs"]
mod full_disk;

use full_disk::{assert_refused_keys_absent, count, fill_keys, on_small_disk, start, DISK_FULL};
use resp_client::{Client, Value};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A second writer: `CMS.INCRBY c y 1` until stopped; the increments acknowledged.
fn writer(addr: SocketAddr, stop: Arc<AtomicBool>) -> JoinHandle<i64> {
    std::thread::spawn(move || {
        let mut c = Client::connect(addr);
        let mut acked = 0;
        while !stop.load(Ordering::Relaxed) {
            match c.cmd(&["CMS.INCRBY", "c", "y", "1"]) {
                Value::Array(v) if v.len() == 1 => acked += 1,
                Value::Error(e) => {
                    assert_eq!(e, DISK_FULL);
                    std::thread::sleep(Duration::from_millis(5));
                }
                other => panic!("{other:?}"),
            }
        }
        acked
    })
}

/// A reader: the count of `y` and a Bloom lookup, over and over until stopped. Every
/// reply must be an answer (no error, through the reopen too) and the count never goes
/// back. Returns the reads made.
fn reader(addr: SocketAddr, stop: Arc<AtomicBool>) -> JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut c = Client::connect(addr);
        let (mut last, mut reads) = (0, 0);
        while !stop.load(Ordering::Relaxed) {
            let now = count(&mut c, "y");
            assert!(now >= last, "the count went back from {last} to {now}");
            last = now;
            assert_eq!(c.cmd(&["BF.EXISTS", "bf:0:0", "item"]), Value::Int(1));
            reads += 1;
        }
        reads
    })
}

/// Fills the disk, grows it to `grow_mib`, and checks what the module's doc says;
/// `expect` is the log line of the way back.
fn recover(sync: bool, grow_mib: u32, expect: &str) {
    let Some((fs, dir, mut server, mut c)) = on_small_disk("disk_recovery", sync) else {
        return;
    };
    assert_eq!(c.cmd(&["BF.ADD", "bf:0:0", "item"]), Value::Int(1));
    let stop = Arc::new(AtomicBool::new(false));
    let other = writer(server.addr, stop.clone());
    let read = reader(server.addr, stop.clone());
    let filled = fill_keys(&mut c);
    let mut acked = filled.acked as i64;
    fs.grow(grow_mib);
    let grown = Instant::now();
    loop {
        match c.cmd(&["CMS.INCRBY", "c", "x", "1"]) {
            Value::Array(v) if v == [Value::Int(acked + 1)] => break,
            Value::Error(e) => assert_eq!(e, DISK_FULL),
            other => panic!("{other:?}"),
        }
        assert!(
            grown.elapsed() < Duration::from_secs(30),
            "writes still refused {:?} after the disk grew",
            grown.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    acked += 1;
    let took = grown.elapsed();
    // Writes go on, on the same connections.
    for _ in 0..100 {
        assert_eq!(
            c.cmd(&["CMS.INCRBY", "c", "x", "1"]),
            Value::Array(vec![Value::Int(acked + 1)])
        );
        acked += 1;
    }
    // The store's watch notes a recovery within a second (the log line asserted below).
    std::thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::Relaxed);
    let other_acked = other.join().unwrap();
    assert!(read.join().unwrap() > 0);
    assert_eq!(count(&mut c, "x"), acked);
    assert_eq!(count(&mut c, "y"), other_acked);
    // In the running server, after the way back: no refused key appeared.
    assert_refused_keys_absent(&mut c, &filled);
    c.send(&[b"SHUTDOWN"]);
    let status = server.child.wait().unwrap();
    let log = server.log.take().unwrap().join().unwrap();
    assert!(status.success(), "exit {status:?}: {log}");
    assert!(log.contains(expect), "recovered in {took:?}; log: {log}");
    // A restart has every acknowledged increment and no refused one.
    let server = start(&dir, sync);
    let mut c = Client::connect(server.addr);
    assert_eq!(count(&mut c, "x"), acked);
    assert_eq!(count(&mut c, "y"), other_acked);
    assert_refused_keys_absent(&mut c, &filled);
    println!("recovered {took:?} after the disk grew ({expect})");
}

const REOPENED: &str = "reopened the database after a write error";
const RESUMED: &str = "writes are accepted again";

#[test]
fn a_little_space_freed_reopens_the_database() {
    recover(false, 24, REOPENED);
}

#[test]
fn a_little_space_freed_reopens_the_database_with_synchronous_commits() {
    recover(true, 24, REOPENED);
}

#[test]
fn much_space_freed_lets_rocksdb_resume_by_itself() {
    recover(false, 160, RESUMED);
}

/// A failed flush: a store whose memtable outgrows the disk, flushed when less than
/// 192 KiB is left. The flush fails (RocksDB's background error, not a refused append),
/// writes are refused from then on; after the disk grows a little the store reopens its
/// database by itself and takes writes again, and every acknowledged increment is there,
/// then and after a restart.
#[test]
fn a_failed_flush_is_recovered_from_too() {
    let Some(fs) = full_disk::Tmpfs::mount(6) else {
        println!("disk_recovery: cannot mount a tmpfs here (needs root); not run");
        return;
    };
    let dir = fs.path.join("data");
    let options = rocksketch::StoreOptions {
        write_buffer_bytes: 16 << 20,
        ..Default::default()
    };
    let store = rocksketch::Store::open(&dir, options.clone()).unwrap();
    store.cms("c").init_by_dim(1000, 5).unwrap();
    let free = || {
        let stat = rustix::fs::statvfs(&dir).unwrap();
        stat.f_bavail * stat.f_frsize
    };
    let mut acked = 0u32;
    for round in 0.. {
        if free() < 192 << 10 {
            break;
        }
        for k in 0..50 {
            store.bloom(format!("bf:{round}:{k}")).add("item").unwrap();
        }
        store.cms("c").incr_by(&[("x", 1)]).unwrap();
        acked += 1;
    }
    let failed = store.flush().unwrap_err();
    assert!(
        failed.to_string().contains("No space left on device"),
        "{failed}"
    );
    let refused = store.cms("c").incr_by(&[("x", 1)]).unwrap_err();
    assert!(
        refused.to_string().contains("No space left on device"),
        "{refused}"
    );
    assert_eq!(store.cms("c").query(&["x"]).unwrap(), vec![acked]);
    fs.grow(24);
    let grown = Instant::now();
    while store.cms("c").incr_by(&[("x", 1)]).is_err() {
        assert!(grown.elapsed() < Duration::from_secs(30), "no recovery");
        std::thread::sleep(Duration::from_millis(50));
    }
    acked += 1;
    assert_eq!(store.cms("c").query(&["x"]).unwrap(), vec![acked]);
    store.flush().unwrap();
    drop(store);
    let store = rocksketch::Store::open(&dir, options).unwrap();
    assert_eq!(store.cms("c").query(&["x"]).unwrap(), vec![acked]);
    println!("recovered {:?} after the disk grew", grown.elapsed());
}
