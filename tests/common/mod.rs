//! Helpers shared by the integration tests.
#![allow(dead_code)]

use rocksketch::{Store, StoreOptions};
use std::path::Path;
use tempfile::TempDir;

/// A store in a temporary directory, removed when dropped.
pub struct TempStore {
    pub store: Option<Store>,
    pub dir: TempDir,
    /// What the store was opened with, and is reopened with.
    pub options: StoreOptions,
}

impl TempStore {
    pub fn new() -> TempStore {
        TempStore::with_options(StoreOptions::default())
    }

    pub fn with_options(options: StoreOptions) -> TempStore {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = Store::open(dir.path(), options.clone()).expect("store opens");
        TempStore {
            store: Some(store),
            dir,
            options,
        }
    }

    pub fn store(&self) -> &Store {
        self.store.as_ref().expect("store is open")
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Closes the database and opens it again.
    pub fn reopen(&mut self) {
        self.store = None;
        let options = self.options.clone();
        self.store = Some(Store::open(self.dir.path(), options).expect("reopens"));
    }
}

/// Arguments of a command as byte strings.
/// A client's dump loop: `scandump` from cursor 0 until the cursor comes back 0; the
/// `(cursor, chunk)` pairs to load in order.
pub fn dump_chunks(
    mut scandump: impl FnMut(i64) -> rocksketch::Result<(i64, Vec<u8>)>,
) -> Vec<(i64, Vec<u8>)> {
    let mut chunks = Vec::new();
    let mut cursor = 0;
    loop {
        let (next, chunk) = scandump(cursor).expect("a dump chunk");
        if next == 0 {
            return chunks;
        }
        chunks.push((next, chunk));
        cursor = next;
    }
}

pub fn args(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// A reply as the recorded RedisBloom transcripts write it (RESP2 shapes: doubles and
/// bulk strings as strings, maps as flat arrays, booleans as 1 or 0).
pub fn reply_json(reply: &rocksketch::command::Reply) -> serde_json::Value {
    use rocksketch::command::Reply;
    use serde_json::{json, Value};
    match reply {
        Reply::Simple(s) => json!(s),
        Reply::Bulk(b) | Reply::Verbatim(b) => json!(String::from_utf8_lossy(b)),
        Reply::Double(text) => json!(text),
        Reply::Int(i) => json!(i),
        Reply::Nil | Reply::NullArray => Value::Null,
        Reply::Error(e) => json!({ "error": e }),
        Reply::Bool(b) => json!(i64::from(*b)),
        Reply::Array(items) | Reply::Set(items) => {
            Value::Array(items.iter().map(reply_json).collect())
        }
        Reply::Field(pair) => Value::Array(vec![reply_json(&pair.1)]),
        Reply::Map(pairs) => Value::Array(
            pairs
                .iter()
                .flat_map(|(k, v)| [reply_json(k), reply_json(v)])
                .collect(),
        ),
    }
}

/// The records of a transcript in `vectors/`: each command's arguments and the reply
/// RedisBloom sent.
pub fn transcript(name: &str) -> Vec<(Vec<Vec<u8>>, serde_json::Value)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("vectors")
        .join(name);
    let text = std::fs::read_to_string(path).expect("transcript");
    text.lines()
        .map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).expect("json line");
            let cmd = record["cmd"]
                .as_array()
                .expect("cmd array")
                .iter()
                .map(|a| a.as_str().expect("string arg").as_bytes().to_vec())
                .collect();
            (cmd, record["reply"].clone())
        })
        .collect()
}

/// Page records left in the pages column family after a full compaction.
pub fn pages_after_compaction(store: &Store) -> usize {
    store.compact().unwrap();
    let db = store.db().unwrap();
    let cf = db.cf_handle(rocksketch::PAGES_CF).unwrap();
    db.iterator_cf(cf, rocksdb::IteratorMode::Start).count()
}

/// Replays a transcript in `vectors/` against `ns` and asserts every reply equals the
/// recorded one; returns how many commands ran. `SET key v` (used by the transcripts
/// only to make a key of another type) makes `key` a count-min sketch instead, since
/// rocksketch holds no strings; `TYPE`, `EXISTS` and `DEL` are answered from the
/// namespace as the host answers them.
pub fn replay(ns: &rocksketch::Namespace, name: &str) -> usize {
    use serde_json::json;
    let records = transcript(name);
    for (n, (cmd, reply)) in records.iter().enumerate() {
        let got = match String::from_utf8_lossy(&cmd[0])
            .to_ascii_uppercase()
            .as_str()
        {
            "SET" => {
                ns.cms(&cmd[1]).init_by_dim(10, 2).expect("stand-in key");
                json!("OK")
            }
            "TYPE" => json!(ns
                .key_type(&cmd[1])
                .unwrap()
                .map_or("none", |t| t.redis_name())),
            "EXISTS" => json!(i64::from(ns.exists(&cmd[1]).unwrap())),
            "DEL" => json!(i64::from(ns.delete(&cmd[1]).unwrap())),
            _ => reply_json(&rocksketch::command::execute(ns, cmd)),
        };
        let text: Vec<_> = cmd.iter().map(|a| String::from_utf8_lossy(a)).collect();
        assert_eq!(&got, reply, "{name} line {}: {text:?}", n + 1);
    }
    records.len()
}

/// Ends `key` the way `how` picks (0: `DEL`, 1: expiry and a sweep, 2: `FLUSHDB`), while
/// writers may be running, then lets them run on briefly and stops them with `stop`;
/// the caller joins them.
pub fn end_key_under_writers(
    store: &Store,
    key: &str,
    how: u32,
    stop: &std::sync::atomic::AtomicBool,
) {
    use std::time::Duration;
    let ns = store.ns(0);
    std::thread::sleep(Duration::from_millis(5));
    match how % 3 {
        0 => assert!(ns.delete(key.as_bytes()).unwrap()),
        1 => {
            assert!(ns
                .expire_at(key.as_bytes(), rocksketch::now_ms() + 2)
                .unwrap());
            std::thread::sleep(Duration::from_millis(10));
            store.sweep_expired(None, 1000).unwrap();
        }
        _ => assert!(ns.flush().unwrap() >= 1),
    }
    std::thread::sleep(Duration::from_millis(3));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Copies a fixture database's files into `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Writes a format fixture: phase 0 then a compaction (whole pages in the last level),
/// phase 1 then a flush (operands in L0), phase 2 (operands only in the WAL).
pub fn write_fixture(path: &Path, phase: fn(&Store, u32)) {
    let _ = std::fs::remove_dir_all(path);
    {
        let store = Store::open(path, StoreOptions::default()).unwrap();
        phase(&store, 0);
        store.compact().unwrap();
        phase(&store, 1);
        let db = store.db().unwrap();
        db.flush_cf(db.cf_handle(rocksketch::PAGES_CF).unwrap())
            .unwrap();
        phase(&store, 2);
    }
    for entry in std::fs::read_dir(path).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("LOG") || name == "LOCK" {
            std::fs::remove_file(path.join(name)).unwrap();
        }
    }
}

/// A format fixture opened from a copy, beside a fresh store that ran the same phases:
/// what every fixture test compares.
pub struct Fixture {
    pub old: Store,
    pub fresh: TempStore,
    _copy: TempDir,
}

impl Fixture {
    /// Copies the fixture at `path`, opens it, and runs `phase` 0, 1, 2 on a fresh store.
    pub fn open(path: &Path, phase: fn(&Store, u32)) -> Fixture {
        let copy = tempfile::tempdir().unwrap();
        copy_dir(path, copy.path());
        let old = Store::open(copy.path(), StoreOptions::default()).unwrap();
        let fresh = TempStore::new();
        for n in 0..3 {
            phase(fresh.store(), n);
        }
        Fixture {
            old,
            fresh,
            _copy: copy,
        }
    }

    /// The old store's `answers`, asserted equal to the fresh store's.
    pub fn answers<T: PartialEq + std::fmt::Debug>(&self, answers: fn(&Store) -> T) -> T {
        let got = answers(&self.old);
        assert_eq!(got, answers(self.fresh.store()));
        got
    }

    /// Compacts the old data under the current code: every answer stays `got`, and no
    /// operand was skipped.
    pub fn compacts_to<T: PartialEq + std::fmt::Debug>(&self, got: &T, answers: fn(&Store) -> T) {
        self.old.compact().unwrap();
        assert_eq!(&answers(&self.old), got);
        assert_eq!(self.old.skipped_operands(), 0);
    }
}

/// Asserts that no two `items` share a counter in the first row of a Top-K `width`
/// counters wide (so with depth 1 and decay 1 their counts are exact).
pub fn assert_apart_in_top_k(items: &[String], width: u32) {
    let mut cells: Vec<u32> = items
        .iter()
        .map(|i| rocksketch_merge::hash::murmur2(i.as_bytes(), 0) % width)
        .collect();
    cells.sort_unstable();
    cells.dedup();
    assert_eq!(
        cells.len(),
        items.len(),
        "the items must not share a counter"
    );
}
