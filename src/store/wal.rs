//! The records of a RocksDB write batch ([`rocksketch_merge::batch`]), with the
//! store's error type.

use crate::error::{Error, Result};
pub(crate) use rocksketch_merge::batch::Record;

/// The first sequence number and the count of a batch's bytes.
pub(crate) fn header(data: &[u8]) -> Result<(u64, u32)> {
    rocksketch_merge::batch::header(data).map_err(storage)
}

/// Every record of a batch, checked against its count.
#[cfg(test)]
pub(crate) fn records(data: &[u8]) -> Result<Vec<Record<'_>>> {
    rocksketch_merge::batch::records(data).map_err(storage)
}

/// Every record of a batch with its column family's number.
pub(crate) fn records_cf(data: &[u8]) -> Result<Vec<(u32, Record<'_>)>> {
    rocksketch_merge::batch::records_cf(data).map_err(storage)
}

fn storage(e: rocksketch_merge::batch::BadBatch) -> Error {
    Error::Storage(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;
    use rocksdb::WriteBatch;

    #[test]
    fn reads_what_rocksdb_writes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Default::default()).unwrap();
        let db = store.db().unwrap();
        let (meta, pages) = (db.meta_cf().unwrap(), db.pages_cf().unwrap());
        let mut batch = WriteBatch::default();
        batch.put_cf(meta, b"m", b"v");
        batch.merge_cf(pages, b"p", vec![7u8; 300]);
        batch.delete_cf(meta, b"gone");
        batch.delete_range_cf(pages, b"a", b"b");
        batch.put(b"default", b"x");
        batch.put_log_data(b"not a write");
        let long = vec![7u8; 300];
        assert_eq!(
            records(batch.data()).unwrap(),
            vec![
                Record::Put(b"m", b"v"),
                Record::Merge(b"p", &long),
                Record::Delete(b"gone"),
                Record::DeleteRange(b"a", b"b"),
                Record::Put(b"default", b"x"),
            ]
        );
        db.write(WriteBatch::from_data(batch.data())).unwrap();
        let sequence = db.latest_sequence_number();
        assert_eq!(header(batch.data()).unwrap().1, 5);
        assert_eq!(sequence, 5);
    }

    #[test]
    fn cut_or_forged_batches_are_refused() {
        let mut batch = WriteBatch::default();
        batch.put(b"k", b"v");
        batch.merge(b"k", b"w");
        let data = batch.data().to_vec();
        for cut in 0..data.len() {
            assert!(records(&data[..cut]).is_err(), "cut at {cut}");
        }
        let mut wrong_count = data.clone();
        wrong_count[8] = 3;
        assert!(records(&wrong_count).is_err());
        let mut unknown = data.clone();
        unknown[12] = 0x42;
        assert!(records(&unknown).is_err());
        let mut long_varint = data[..12].to_vec();
        long_varint.extend_from_slice(&[0x1, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        assert!(records(&long_varint).is_err());
    }

    #[test]
    fn batches_appended_take_the_sequences_they_take_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let primary = Store::open(dir.path().join("p"), Default::default()).unwrap();
        let db = primary.db().unwrap();
        let pages = db.pages_cf().unwrap();
        for i in 0..3u8 {
            let mut batch = WriteBatch::default();
            batch.merge_cf(pages, [b'p', i], [i; 40]);
            batch.merge_cf(pages, b"q", [i; 8]);
            db.write(batch).unwrap();
        }
        let shipped = primary.updates_since(0, 16).unwrap();
        assert_eq!(shipped.len(), 3);
        let mut run = Vec::new();
        for (_, data) in &shipped {
            rocksketch_merge::batch::append(&mut run, data).unwrap();
        }
        assert_eq!(header(&run).unwrap(), (1, 6));
        let one_by_one: Vec<_> = shipped
            .iter()
            .flat_map(|(_, data)| records(data).unwrap())
            .collect();
        assert_eq!(records(&run).unwrap(), one_by_one);
        // Not the next batch: refused, the run unchanged.
        let before = run.clone();
        assert!(rocksketch_merge::batch::append(&mut run, &shipped[1].1).is_err());
        assert!(rocksketch_merge::batch::append(&mut run, &before[..11]).is_err());
        assert_eq!(run, before);
        let replica = Store::open(dir.path().join("r"), Default::default()).unwrap();
        replica.apply_replicated(&run).unwrap();
        assert_eq!(replica.latest_sequence().unwrap(), 6);
        assert_eq!(replica.updates_since(0, 16).unwrap(), vec![(1, run)]);
    }
}
