//! Frames of a long-lived stream between servers (rocksketch's replication, after the
//! handshake): RESP arrays of bulk strings, as Redis ships commands to its replicas,
//! read through any [`BufRead`] (a socket's, in the host).
//!
//! ```text
//! primary -> replica   +FULLRESYNC <replid> <sequence>   then FILE frames, then SYNCED
//!                      +CONTINUE <replid>                then BATCH and PING frames
//!   FILE <name> <offset> <bytes>    a piece of a checkpoint's file
//!   SYNCED <sequence>               the checkpoint is whole
//!   BATCH <sequence> <bytes>        one RocksDB write batch (Store::updates_since)
//!   PING                            the link is alive
//! replica -> primary
//!   REPLCONF ACK <sequence>         applied up to here
//! ```
//!
//! A peer is not trusted: lines, arrays and strings are bounded, and a string is read
//! as it arrives (memory grows with the bytes received, not with the length claimed).

use std::io::{self, BufRead, Read, Write};

/// The longest status line or length line read.
const MAX_LINE: usize = 4 << 10;
/// The most elements of one frame.
const MAX_ELEMENTS: usize = 8;
/// The longest string of one frame: a write batch (a `LOADCHUNK` of a large filter is
/// one) or a piece of a file.
pub const MAX_BULK: usize = 1 << 30;

fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

/// Reads one line, without its `\r\n`.
pub fn read_line(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut line = Vec::new();
    reader
        .by_ref()
        .take(MAX_LINE as u64 + 2)
        .read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    if !line.ends_with(b"\r\n") {
        return Err(invalid("a line too long or cut"));
    }
    line.truncate(line.len() - 2);
    Ok(line)
}

fn read_len(reader: &mut impl BufRead, prefix: u8, max: usize) -> io::Result<usize> {
    let line = read_line(reader)?;
    match line.split_first() {
        Some((&first, digits)) if first == prefix => std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|n| *n <= max)
            .ok_or_else(|| invalid(format!("a bad length: {}", String::from_utf8_lossy(&line)))),
        _ => Err(invalid(format!(
            "expected '{}', got: {}",
            prefix as char,
            String::from_utf8_lossy(&line)
                .chars()
                .take(80)
                .collect::<String>()
        ))),
    }
}

/// Reads one frame: an array of at most 8 bulk strings of at most [`MAX_BULK`] bytes.
pub fn read_frame(reader: &mut impl BufRead) -> io::Result<Vec<Vec<u8>>> {
    let count = read_len(reader, b'*', MAX_ELEMENTS)?;
    let mut frame = Vec::with_capacity(count);
    for _ in 0..count {
        let len = read_len(reader, b'$', MAX_BULK)?;
        let mut bytes = Vec::new();
        reader.by_ref().take(len as u64).read_to_end(&mut bytes)?;
        if bytes.len() != len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let mut end = [0u8; 2];
        reader.read_exact(&mut end)?;
        if &end != b"\r\n" {
            return Err(invalid("a string not ended by CRLF"));
        }
        frame.push(bytes);
    }
    Ok(frame)
}

/// Writes one frame.
pub fn write_frame<A: AsRef<[u8]>>(out: &mut impl Write, parts: &[A]) -> io::Result<()> {
    let mut bytes = Vec::new();
    crate::encode_request(parts, &mut bytes);
    out.write_all(&bytes)
}

/// A decimal number of a frame.
pub fn number(bytes: &[u8]) -> io::Result<u64> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid("not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_cut_or_hostile_ones_are_refused() {
        let mut bytes = Vec::new();
        write_frame(&mut bytes, &[&b"BATCH"[..], b"42", &[0, 13, 10, 255]]).unwrap();
        let frame = read_frame(&mut &bytes[..]).unwrap();
        assert_eq!(
            frame,
            vec![b"BATCH".to_vec(), b"42".to_vec(), vec![0, 13, 10, 255]]
        );
        for cut in 0..bytes.len() {
            assert!(read_frame(&mut &bytes[..cut]).is_err(), "cut at {cut}");
        }
        // A length past the bound, a huge array, a claimed length with no bytes behind it.
        for hostile in [
            &b"*1\r\n$1073741825\r\n"[..],
            b"*9\r\n",
            b"*1\r\n$1000000000\r\nshort\r\n",
            b"*1\r\n$-1\r\n",
            b"+OK\r\n",
        ] {
            assert!(read_frame(&mut &hostile[..]).is_err());
        }
        let long = vec![b'a'; MAX_LINE + 10];
        assert!(read_line(&mut &long[..]).is_err());
        assert_eq!(
            read_line(&mut &b"+CONTINUE x\r\n"[..]).unwrap(),
            b"+CONTINUE x"
        );
    }
}
