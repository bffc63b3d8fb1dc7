//! A full resynchronization's last step on a replica: its database replaced, in place,
//! by a checkpoint of the primary's, while the store stays in use.

use super::db::{Closed, Slot};
use super::options::open_db;
use super::Store;
use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long the swap waits for the operations still on the old database.
const DRAIN: Duration = Duration::from_secs(30);

/// The file RocksDB reads first; moved in last, so a database cut short by a crash in
/// the middle of the move has none and opens empty (and syncs again).
const CURRENT: &str = "CURRENT";

impl Store {
    /// Replaces this store's database with the one in `checkpoint` (a directory made by
    /// [`Store::checkpoint`], on the same file system as the store's own directory):
    /// the store's slot is emptied (operations wait), the old database closed and its
    /// files removed, the checkpoint's files moved in and opened, and the caches
    /// emptied. Files in the directory that are not RocksDB's (backups, a replica's
    /// state) stay. The checkpoint directory is gone afterwards. Only for a store
    /// opened with [`Store::open`], and only on a replica: nothing else may write
    /// meanwhile. Returns the sequence number of the database now open.
    pub fn replace_with_checkpoint(&self, checkpoint: &Path) -> Result<u64> {
        let watch = self.inner.watch.clone().ok_or_else(|| {
            Error::InvalidArgument(
                "a store over a host's database cannot replace its database".to_owned(),
            )
        })?;
        let slot = &self.inner.db;
        match slot.close(DRAIN) {
            Closed::Db(db) => drop(db),
            Closed::Empty | Closed::Busy => return Err(busy()),
        }
        let moved = move_in(&watch.dir, checkpoint);
        let reopened = open_db(&watch.dir, &watch.options, &watch.cache, false);
        self.clear_caches();
        match reopened {
            Ok(db) => {
                let sequence = db.latest_sequence_number();
                slot.fill(Arc::new(Slot::Open(Arc::new(db))));
                moved.map(|()| sequence)
            }
            Err(e) => {
                log::error!("opening the database after a full sync failed: {e}");
                Err(e)
            }
        }
    }
}

fn busy() -> Error {
    Error::Storage("the database is in use; it cannot be replaced now".to_owned())
}

/// Removes the database in `dir` and moves the files of `checkpoint` in.
fn move_in(dir: &Path, checkpoint: &Path) -> Result<()> {
    rocksdb::DB::destroy(&rocksdb::Options::default(), dir)?;
    std::fs::create_dir_all(dir)?;
    let mut names: Vec<_> = std::fs::read_dir(checkpoint)?
        .map(|entry| entry.map(|e| e.file_name()))
        .collect::<std::io::Result<_>>()?;
    // CURRENT last.
    names.sort_by_key(|name| name == CURRENT);
    for name in names {
        std::fs::rename(checkpoint.join(&name), dir.join(&name))?;
    }
    std::fs::remove_dir(checkpoint)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::{Store, StoreOptions};

    #[test]
    fn a_replica_takes_a_checkpoint_in_place_and_keeps_its_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let primary = Store::open(dir.path().join("p"), StoreOptions::default()).unwrap();
        primary.ns(0).bloom(b"bf").add(b"shipped").unwrap();
        let replica_dir = dir.path().join("r");
        let options = StoreOptions {
            replica: true,
            ..Default::default()
        };
        let replica = Store::open(&replica_dir, options).unwrap();
        std::fs::write(replica_dir.join("state"), b"kept").unwrap();
        // A read caches the replica's own (empty) view first.
        assert!(!replica.ns(0).exists(b"bf").unwrap());
        let checkpoint = replica_dir.with_extension("incoming");
        let sequence = primary.checkpoint(&checkpoint).unwrap();
        let now = replica.replace_with_checkpoint(&checkpoint).unwrap();
        assert_eq!(now, sequence);
        assert!(replica.ns(0).bloom(b"bf").exists(b"shipped").unwrap());
        assert_eq!(replica.latest_sequence().unwrap(), sequence);
        assert!(!checkpoint.exists());
        assert_eq!(std::fs::read(replica_dir.join("state")).unwrap(), b"kept");
        assert!(replica.is_replica());
        drop(replica);
        let reopened = Store::open(&replica_dir, StoreOptions::default()).unwrap();
        assert!(reopened.ns(0).bloom(b"bf").exists(b"shipped").unwrap());
    }
}
