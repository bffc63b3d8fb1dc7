//! Backups: checkpoints of the whole database, taken while writes go on.

use super::Store;
use crate::error::{Error, Result};
use std::path::Path;

impl Store {
    /// The database's directory.
    pub fn path(&self) -> Result<std::path::PathBuf> {
        Ok(self.db()?.path().to_path_buf())
    }

    /// Makes a checkpoint of the database in `dir`, which must not exist (its parent
    /// must): RocksDB's consistent copy of one moment, its table files hard-linked when
    /// `dir` is on the database's file system (copied otherwise), taken without stopping
    /// writes. The memtables are flushed first, so the copy needs no log replayed.
    /// [`Store::open`] opens it as a store of its own. Every write acknowledged before
    /// the call is in it; writes racing the call are in it whole or not at all (each is
    /// one RocksDB batch). A store over a host's database ([`Store::with_db`])
    /// checkpoints the host's whole database.
    ///
    /// Returns the sequence number of the newest write acknowledged before the call,
    /// which the checkpoint holds at least.
    pub fn checkpoint(&self, dir: &Path) -> Result<u64> {
        if dir.exists() {
            return Err(Error::InvalidArgument(format!(
                "the checkpoint directory {} exists already",
                dir.display()
            )));
        }
        let db = self.db()?;
        let sequence = db.latest_sequence_number();
        rocksdb::checkpoint::Checkpoint::new(&*db)?.create_checkpoint(dir)?;
        Ok(sequence)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Store, StoreOptions};

    #[test]
    fn a_checkpoint_opens_as_the_store_it_was_then() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("db"), StoreOptions::default()).unwrap();
        let ns = store.ns(0);
        ns.bloom(b"bf").add(b"before").unwrap();
        ns.cms(b"cms").init_by_dim(100, 3).unwrap();
        ns.cms(b"cms").incr_by(&[(b"x".as_slice(), 5)]).unwrap();
        let copy = dir.path().join("copy");
        let sequence = store.checkpoint(&copy).unwrap();
        assert!(sequence > 0);
        ns.bloom(b"bf").add(b"after").unwrap();
        ns.cms(b"cms").incr_by(&[(b"x".as_slice(), 1)]).unwrap();
        assert!(
            store.checkpoint(&copy).is_err(),
            "an existing directory is refused"
        );

        let restored = Store::open(&copy, StoreOptions::default()).unwrap();
        let ns = restored.ns(0);
        assert!(ns.bloom(b"bf").exists(b"before").unwrap());
        assert!(!ns.bloom(b"bf").exists(b"after").unwrap());
        assert_eq!(ns.cms(b"cms").query(&[b"x".as_slice()]).unwrap(), vec![5]);
        // The original goes on with its own writes.
        assert_eq!(
            store.ns(0).cms(b"cms").query(&[b"x".as_slice()]).unwrap(),
            vec![6]
        );
    }
}
