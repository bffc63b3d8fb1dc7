//! Helpers shared by the integration tests.
#![allow(dead_code)]

use rocksketch::{Store, StoreOptions};
use std::path::Path;
use tempfile::TempDir;

/// A store in a temporary directory, removed when dropped.
pub struct TempStore {
    pub store: Option<Store>,
    pub dir: TempDir,
}

impl TempStore {
    pub fn new() -> TempStore {
        TempStore::with_options(StoreOptions::default())
    }

    pub fn with_options(options: StoreOptions) -> TempStore {
        let dir = tempfile::tempdir().expect("temporary directory");
        let store = Store::open(dir.path(), options).expect("store opens");
        TempStore {
            store: Some(store),
            dir,
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
        self.store = Some(Store::open(self.dir.path(), StoreOptions::default()).expect("reopens"));
    }
}

/// Arguments of a command as byte strings.
pub fn args(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}
