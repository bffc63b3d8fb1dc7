//! The records of a RocksDB write batch, read from its bytes (`WriteBatch::data`): what
//! a replica applying a primary's batch must tell its caches.
//!
//! ```text
//! batch:  sequence u64 LE | count u32 LE | record*
//! record: tag u8 | [column family varint32, for the *Cf tags] | varstring key | ...
//!   Put, Merge: varstring value; RangeDelete: varstring end key; LogData: one varstring
//! varstring: length varint32 | bytes
//! ```
//! (RocksDB's `db/write_batch.cc` and `db/dbformat.h`.) Any other tag is refused, so a
//! batch this code does not understand is never applied half-understood.

use crate::error::{Error, Result};

/// One record of a batch (the column family is not kept: callers treat keys of
/// either family alike).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Record<'a> {
    Put(&'a [u8], &'a [u8]),
    Merge(&'a [u8], &'a [u8]),
    Delete(&'a [u8]),
    DeleteRange(&'a [u8], &'a [u8]),
}

const HEADER: usize = 12;

/// The first sequence number and the count of a batch's bytes.
pub(crate) fn header(data: &[u8]) -> Result<(u64, u32)> {
    let (seq, rest) = data
        .split_first_chunk::<8>()
        .ok_or_else(|| bad("short header"))?;
    let (count, _) = rest
        .split_first_chunk::<4>()
        .ok_or_else(|| bad("short header"))?;
    Ok((u64::from_le_bytes(*seq), u32::from_le_bytes(*count)))
}

/// Every record of a batch, checked against its count.
pub(crate) fn records(data: &[u8]) -> Result<Vec<Record<'_>>> {
    let (_, count) = header(data)?;
    let mut input = data.get(HEADER..).unwrap_or_default();
    let mut out = Vec::new();
    while let Some((&tag, rest)) = input.split_first() {
        input = rest;
        let cf_tag = matches!(tag, 0x4..=0x6 | 0x8 | 0xE);
        if cf_tag {
            varint32(&mut input)?;
        }
        match tag {
            0x1 | 0x5 => out.push(Record::Put(varstring(&mut input)?, varstring(&mut input)?)),
            0x2 | 0x6 => out.push(Record::Merge(
                varstring(&mut input)?,
                varstring(&mut input)?,
            )),
            0x0 | 0x4 | 0x7 | 0x8 => out.push(Record::Delete(varstring(&mut input)?)),
            0xF | 0xE => out.push(Record::DeleteRange(
                varstring(&mut input)?,
                varstring(&mut input)?,
            )),
            0x3 => {
                varstring(&mut input)?; // log data: not a write
            }
            0xD => {} // no-op
            other => {
                return Err(bad(&format!(
                    "record tag {other:#x} is not one this store writes"
                )))
            }
        }
    }
    if out.len() != count as usize {
        return Err(bad(&format!(
            "{} records for a count of {count}",
            out.len()
        )));
    }
    Ok(out)
}

fn bad(what: &str) -> Error {
    Error::Storage(format!("a replicated write batch cannot be read: {what}"))
}

fn varint32(input: &mut &[u8]) -> Result<u32> {
    let mut value = 0u32;
    for shift in (0..35).step_by(7) {
        let (&byte, rest) = input.split_first().ok_or_else(|| bad("cut varint"))?;
        *input = rest;
        value |= u32::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(bad("varint past 32 bits"))
}

fn varstring<'a>(input: &mut &'a [u8]) -> Result<&'a [u8]> {
    let len = varint32(input)? as usize;
    if input.len() < len {
        return Err(bad("cut string"));
    }
    let (bytes, rest) = input.split_at(len);
    *input = rest;
    Ok(bytes)
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
        unknown[HEADER] = 0x42;
        assert!(records(&unknown).is_err());
        let mut long_varint = data[..HEADER].to_vec();
        long_varint.extend_from_slice(&[0x1, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        assert!(records(&long_varint).is_err());
    }
}
