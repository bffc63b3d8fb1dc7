//! The records of a RocksDB write batch, read from its bytes (`WriteBatch::data`), as a
//! replica applying a primary's batch must know them (what its caches must follow).
//!
//! ```text
//! batch:  sequence u64 LE | count u32 LE | record*
//! record: tag u8 | [column family varint32, for the *Cf tags] | varstring key | ...
//!   Put, Merge: varstring value; RangeDelete: varstring end key; LogData: one varstring
//! varstring: length varint32 | bytes
//! ```
//! (RocksDB's `db/write_batch.cc` and `db/dbformat.h`.) Any other tag is refused, so a
//! batch this code does not understand is never applied half-understood. The bytes come
//! from another server: nothing here trusts them.

/// One record of a batch (the column family is not kept: callers treat keys of
/// either family alike).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// A value put (either family).
    Put(&'a [u8], &'a [u8]),
    /// An operand merged.
    Merge(&'a [u8], &'a [u8]),
    /// A key deleted (single deletes too).
    Delete(&'a [u8]),
    /// The keys of `[from, to)` deleted.
    DeleteRange(&'a [u8], &'a [u8]),
}

const HEADER: usize = 12;

/// The first sequence number and the count of a batch's bytes.
pub fn header(data: &[u8]) -> Result<(u64, u32)> {
    let (seq, rest) = data
        .split_first_chunk::<8>()
        .ok_or_else(|| bad("short header"))?;
    let (count, _) = rest
        .split_first_chunk::<4>()
        .ok_or_else(|| bad("short header"))?;
    Ok((u64::from_le_bytes(*seq), u32::from_le_bytes(*count)))
}

/// Appends the batch `data` to the batch `into` (empty, or one whose writes `data`'s
/// directly follow), as RocksDB's `WriteBatchInternal::Append` does: one batch of both's
/// records in order, counting both. Written at once, it takes the sequence numbers the
/// two take written one after the other, so a replica can apply a run of its primary's
/// batches as one write. Refused, `into` unchanged, when `data` is no batch or not the
/// next one (its first sequence is not the one after `into`'s last).
pub fn append(into: &mut Vec<u8>, data: &[u8]) -> Result<()> {
    let (sequence, count) = header(data)?;
    if into.is_empty() {
        into.extend_from_slice(data);
        return Ok(());
    }
    let (first, total) = header(into)?;
    if first.checked_add(u64::from(total)) != Some(sequence) {
        return Err(bad(&format!(
            "batch {sequence} does not follow {total} writes from {first}"
        )));
    }
    let total = total
        .checked_add(count)
        .ok_or_else(|| bad("a count past 32 bits"))?;
    let records = data.get(HEADER..).unwrap_or_default();
    if let Some(count) = into.get_mut(8..HEADER) {
        count.copy_from_slice(&total.to_le_bytes());
    }
    into.extend_from_slice(records);
    Ok(())
}

/// Every record of a batch, checked against its count.
pub fn records(data: &[u8]) -> Result<Vec<Record<'_>>> {
    Ok(records_cf(data)?.into_iter().map(|(_, r)| r).collect())
}

/// Every record of a batch with the number of its column family (0, the default
/// family, for the tags without one), checked against its count.
pub fn records_cf(data: &[u8]) -> Result<Vec<(u32, Record<'_>)>> {
    let (_, count) = header(data)?;
    let mut input = data.get(HEADER..).unwrap_or_default();
    let mut out = Vec::new();
    while let Some((&tag, rest)) = input.split_first() {
        input = rest;
        let cf_tag = matches!(tag, 0x4..=0x6 | 0x8 | 0xE);
        let cf = if cf_tag { varint32(&mut input)? } else { 0 };
        match tag {
            0x1 | 0x5 => out.push((
                cf,
                Record::Put(varstring(&mut input)?, varstring(&mut input)?),
            )),
            0x2 | 0x6 => out.push((
                cf,
                Record::Merge(varstring(&mut input)?, varstring(&mut input)?),
            )),
            0x0 | 0x4 | 0x7 | 0x8 => out.push((cf, Record::Delete(varstring(&mut input)?))),
            0xF | 0xE => out.push((
                cf,
                Record::DeleteRange(varstring(&mut input)?, varstring(&mut input)?),
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

/// Why a batch's bytes cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadBatch(pub String);

impl std::fmt::Display for BadBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a replicated write batch cannot be read: {}", self.0)
    }
}

impl std::error::Error for BadBatch {}

type Result<T> = std::result::Result<T, BadBatch>;

fn bad(what: &str) -> BadBatch {
    BadBatch(what.to_owned())
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
