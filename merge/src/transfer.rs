//! The chunks a slot's migration sends from one store to another: writes to either
//! column family, named by family rather than by RocksDB's column family number (two
//! stores number their families independently).
//!
//! ```text
//! chunk:     version u8 (1) | op*
//! op:        tag u8 | family u8 | varstring key | [varstring value]
//!   tag 0 Put (value), 1 Merge (value), 2 Delete, 3 DeleteRange (value = end key)
//!   family 0 metadata, 1 pages
//! varstring: length u32 LE | bytes
//! ```
//! A chunk comes from another server: nothing here trusts it. Any byte this code does
//! not understand refuses the chunk whole.

/// The version byte of the chunks this code writes.
pub const VERSION: u8 = 1;

/// A column family, by role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Keys' metadata.
    Meta,
    /// Pages.
    Pages,
}

/// One write of a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op<'a> {
    /// A value put.
    Put(Family, &'a [u8], &'a [u8]),
    /// An operand merged.
    Merge(Family, &'a [u8], &'a [u8]),
    /// A key deleted.
    Delete(Family, &'a [u8]),
    /// The keys of `[from, to)` deleted.
    DeleteRange(Family, &'a [u8], &'a [u8]),
}

impl Op<'_> {
    /// The family written and the first key (the only one but for a range).
    pub fn target(&self) -> (Family, &[u8]) {
        match *self {
            Op::Put(f, k, _) | Op::Merge(f, k, _) | Op::Delete(f, k) => (f, k),
            Op::DeleteRange(f, from, _) => (f, from),
        }
    }

    /// Appends the op to `chunk` (begun with [`begin`]).
    pub fn encode_into(&self, chunk: &mut Vec<u8>) {
        let (tag, family, key, value) = match *self {
            Op::Put(f, k, v) => (0, f, k, Some(v)),
            Op::Merge(f, k, v) => (1, f, k, Some(v)),
            Op::Delete(f, k) => (2, f, k, None),
            Op::DeleteRange(f, from, to) => (3, f, from, Some(to)),
        };
        chunk.push(tag);
        chunk.push(match family {
            Family::Meta => 0,
            Family::Pages => 1,
        });
        put_string(chunk, key);
        if let Some(value) = value {
            put_string(chunk, value);
        }
    }
}

/// An empty chunk: its version byte.
pub fn begin() -> Vec<u8> {
    vec![VERSION]
}

/// Every op of a chunk, in order.
pub fn decode(chunk: &[u8]) -> Result<Vec<Op<'_>>, BadChunk> {
    let (&version, mut input) = chunk.split_first().ok_or(BadChunk("empty"))?;
    if version != VERSION {
        return Err(BadChunk("unknown version"));
    }
    let mut out = Vec::new();
    while let Some((&tag, rest)) = input.split_first() {
        let (&family, rest) = rest.split_first().ok_or(BadChunk("cut op"))?;
        input = rest;
        let family = match family {
            0 => Family::Meta,
            1 => Family::Pages,
            _ => return Err(BadChunk("unknown family")),
        };
        let key = string(&mut input)?;
        out.push(match tag {
            0 => Op::Put(family, key, string(&mut input)?),
            1 => Op::Merge(family, key, string(&mut input)?),
            2 => Op::Delete(family, key),
            3 => Op::DeleteRange(family, key, string(&mut input)?),
            _ => return Err(BadChunk("unknown op")),
        });
    }
    Ok(out)
}

/// Why a chunk cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadChunk(pub &'static str);

impl std::fmt::Display for BadChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a migrated chunk cannot be read: {}", self.0)
    }
}

impl std::error::Error for BadChunk {}

fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    // Keys and pages are far below 4 GiB (the host bounds keys, pages are at most
    // MAX_PAGE_BYTES plus a header).
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn string<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], BadChunk> {
    let (len, rest) = input
        .split_first_chunk::<4>()
        .ok_or(BadChunk("cut length"))?;
    let len = u32::from_le_bytes(*len) as usize;
    if rest.len() < len {
        return Err(BadChunk("cut string"));
    }
    let (bytes, rest) = rest.split_at(len);
    *input = rest;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_read_back_and_cut_chunks_are_refused() {
        let ops = [
            Op::Put(Family::Meta, b"m", b"meta"),
            Op::Merge(Family::Pages, b"p", &[7; 300]),
            Op::Delete(Family::Meta, b""),
            Op::DeleteRange(Family::Pages, b"a", b"b"),
        ];
        let mut chunk = begin();
        for op in &ops {
            op.encode_into(&mut chunk);
        }
        assert_eq!(decode(&chunk).unwrap(), ops);
        assert_eq!(decode(&begin()).unwrap(), vec![]);
        // Every cut but those at an op's end leaves part of an op.
        let ends: Vec<usize> = (0..=ops.len())
            .map(|n| {
                let mut c = begin();
                ops[..n].iter().for_each(|op| op.encode_into(&mut c));
                c.len()
            })
            .collect();
        for cut in 0..chunk.len() {
            match decode(&chunk[..cut]) {
                Ok(read) => assert_eq!(
                    read[..],
                    ops[..ends.iter().position(|&e| e == cut).unwrap()]
                ),
                Err(_) => assert!(!ends.contains(&cut), "a whole prefix refused at {cut}"),
            }
        }
        for (at, byte) in [(0, 2), (1, 9), (2, 5)] {
            let mut forged = chunk.clone();
            forged[at] = byte;
            assert!(decode(&forged).is_err(), "byte {at} forged as {byte}");
        }
    }
}
