//! What the store's column families hold in table files, for `INFO` and `LASTSAVE`.

use super::Store;
use crate::error::Result;
use std::time::SystemTime;

impl Store {
    /// A RocksDB integer property of the pages column family (see
    /// `rocksdb::properties`), summed over its levels where RocksDB does so.
    pub fn pages_property(&self, name: &str) -> Result<Option<u64>> {
        let db = self.db()?;
        Ok(db.property_int_value_cf(db.pages_cf()?, name)?)
    }

    /// The newest table file at level 0 of the store's column families — a memtable
    /// flush writes one there — as its file number (RocksDB numbers files in the order
    /// it makes them) and its modification time; `None` while level 0 is empty.
    pub fn newest_level0_table(&self) -> Result<Option<(u64, Option<SystemTime>)>> {
        let db = self.db()?;
        let cfs = &self.inner.cfs;
        let newest = db
            .live_files()?
            .into_iter()
            .filter(|f| f.level == 0)
            .filter(|f| f.column_family_name == cfs.meta || f.column_family_name == cfs.pages)
            .filter_map(|f| Some((table_number(&f.name)?, f.name)))
            .max_by_key(|(number, _)| *number);
        Ok(newest.map(|(number, name)| {
            let path = db.path().join(name.trim_start_matches('/'));
            let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
            (number, modified)
        }))
    }
}

/// The number of a table file named like `/000123.sst`.
fn table_number(name: &str) -> Option<u64> {
    let name = name.rsplit('/').next()?;
    name.strip_suffix(".sst")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_numbers_are_read_from_file_names() {
        assert_eq!(table_number("/000123.sst"), Some(123));
        assert_eq!(table_number("000007.sst"), Some(7));
        assert_eq!(table_number("/MANIFEST-000005"), None);
        assert_eq!(table_number("/x.sst"), None);
    }

    #[test]
    fn a_flush_makes_a_newer_level0_table() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Default::default()).unwrap();
        assert_eq!(store.newest_level0_table().unwrap(), None);
        store.ns(0).cms(b"c").init_by_dim(100, 3).unwrap();
        store.flush().unwrap();
        let (first, modified) = store.newest_level0_table().unwrap().unwrap();
        assert!(modified.is_some());
        store
            .ns(0)
            .cms(b"c")
            .incr_by(&[(b"a".as_slice(), 1)])
            .unwrap();
        store.flush().unwrap();
        let (second, _) = store.newest_level0_table().unwrap().unwrap();
        assert!(second > first, "{second} after {first}");
    }
}
