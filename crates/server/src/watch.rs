//! `WATCH`: optimistic locking for `MULTI`/`EXEC`, with Redis's semantics. A
//! connection's `EXEC` answers a null array, running nothing, if a key it watched was
//! written (by any client, itself included), deleted, expired or flushed since its
//! `WATCH`.
//!
//! Only watched keys are tracked: each has a version, raised by every command the
//! table marks as a write that names it (and by `FLUSHDB`/`FLUSHALL`, before they
//! empty a database, for those of its watched keys that exist), unless its reply says
//! it changed nothing, as Redis signals a key only when a command modified it (an
//! error; `PFADD`, `EXPIRE`, `PERSIST`, `DEL` answering 0). Raised before the write's
//! reply is sent and while the write holds the
//! transaction gate shared, so an `EXEC`, which holds it exclusively, sees every write
//! answered before it. A key that existed when watched and is gone at `EXEC` (expired,
//! or deleted by a path that is no command) counts as written too. With nothing watched,
//! a write pays one atomic load.

use crate::table;
use parking_lot::Mutex;
use rocksketch::command::Reply;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A watched key of one database.
type WatchKey = (u16, Vec<u8>);

/// The watched keys of every connection.
#[derive(Default)]
pub(crate) struct Watches {
    /// How many keys are watched (a key watched by two connections counts once).
    watched: AtomicUsize,
    /// Each watched key's version and how many connections watch it.
    keys: Mutex<HashMap<WatchKey, (u64, usize)>>,
}

/// What one connection watches: each key, its version then, and whether it existed.
#[derive(Default)]
pub(crate) struct Watched {
    keys: Vec<(WatchKey, u64, bool)>,
}

impl Watches {
    /// Starts watching `key` for a connection; `exists` is whether the key exists now.
    pub(crate) fn watch(&self, mine: &mut Watched, db: u16, key: &[u8], exists: bool) {
        let wkey = (db, key.to_vec());
        if mine.keys.iter().any(|(k, _, _)| *k == wkey) {
            return;
        }
        let mut keys = self.keys.lock();
        let entry = keys.entry(wkey.clone()).or_insert_with(|| {
            self.watched.fetch_add(1, Ordering::SeqCst);
            (0, 0)
        });
        entry.1 += 1;
        mine.keys.push((wkey, entry.0, exists));
    }

    /// Stops watching everything a connection watched.
    pub(crate) fn unwatch(&self, mine: &mut Watched) {
        if mine.keys.is_empty() {
            return;
        }
        let mut keys = self.keys.lock();
        for (wkey, _, _) in mine.keys.drain(..) {
            if let Some(entry) = keys.get_mut(&wkey) {
                entry.1 -= 1;
                if entry.1 == 0 {
                    keys.remove(&wkey);
                    self.watched.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    }

    /// Whether any key a connection watched was written since, given whether each key
    /// exists now (`exists`).
    pub(crate) fn dirty(&self, mine: &Watched, exists: impl Fn(u16, &[u8]) -> bool) -> bool {
        if mine.keys.is_empty() {
            return false;
        }
        let changed = {
            let keys = self.keys.lock();
            mine.keys
                .iter()
                .any(|(wkey, version, _)| keys.get(wkey).is_none_or(|(now, _)| now != version))
        };
        changed
            || mine
                .keys
                .iter()
                .any(|((db, key), _, existed)| *existed && !exists(*db, key))
    }

    /// [`Watches::touch`] for a command answered `replies` (a run of one command on
    /// one key), unless every one of them says nothing changed.
    pub(crate) fn touch_answered(&self, db: u16, request: &[Vec<u8>], replies: &[Reply]) {
        if self.watched.load(Ordering::SeqCst) == 0 {
            return;
        }
        let name = String::from_utf8_lossy(&request[0]).to_ascii_lowercase();
        let unchanged = |reply: &Reply| match reply {
            Reply::Error(_) => true,
            Reply::Int(0) => matches!(
                name.as_str(),
                "pfadd"
                    | "expire"
                    | "pexpire"
                    | "expireat"
                    | "pexpireat"
                    | "persist"
                    | "del"
                    | "unlink"
            ),
            _ => false,
        };
        if !replies.iter().all(unchanged) {
            self.touch(db, request);
        }
    }

    /// Records that `request` ran on database `db`: if it is a write, its keys are
    /// written (for `FLUSHDB`, every key of `db`; for `FLUSHALL`, of every database).
    pub(crate) fn touch(&self, db: u16, request: &[Vec<u8>]) {
        if self.watched.load(Ordering::SeqCst) == 0 {
            return;
        }
        let Some(spec) = request.first().and_then(|name| table::lookup(name)) else {
            return;
        };
        if !spec.flags.contains(&"write") {
            return;
        }
        let mut keys = self.keys.lock();
        for key in spec.keys_of(request) {
            if let Some((v, _)) = keys.get_mut(&(db, key.to_vec())) {
                *v += 1;
            }
        }
    }

    /// Before `FLUSHDB` or `FLUSHALL` empties databases `dbs`: the watched keys there
    /// that exist (`exists`) are written. One that does not exist is not, as in Redis
    /// (a watcher of an absent key is not disturbed by a flush that finds none).
    pub(crate) fn flushing(&self, dbs: std::ops::Range<u16>, exists: impl Fn(u16, &[u8]) -> bool) {
        if self.watched.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut keys = self.keys.lock();
        for ((db, key), (version, _)) in keys.iter_mut() {
            if dbs.contains(db) && exists(*db, key) {
                *version += 1;
            }
        }
    }
}
