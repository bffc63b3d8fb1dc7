//! The frame around `SCANDUMP` chunks, shared by the filters' dump formats:
//!
//! ```text
//! magic [u8; 4] | version u8 | kind u8 | reserved u16 (zero) | crc32 u32 LE (of the payload) | payload
//! ```

use rocksketch_merge::bytes::le_u32;

const VERSION_1: u8 = 1;
const FRAME_LEN: usize = 4 + 1 + 1 + 2 + 4;

/// Frames `payload` as a chunk of `kind`.
pub(crate) fn frame(magic: &[u8; 4], kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(FRAME_LEN + payload.len());
    out.extend_from_slice(magic);
    out.push(VERSION_1);
    out.push(kind);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// A chunk's kind and payload, if its frame (magic, version, checksum) is intact.
pub(crate) fn unframe<'a>(magic: &[u8; 4], chunk: &'a [u8]) -> Option<(u8, &'a [u8])> {
    let (head, payload) = chunk.split_at_checked(FRAME_LEN)?;
    let intact = head.starts_with(magic)
        && head.get(4) == Some(&VERSION_1)
        && head.get(6..8) == Some(&[0, 0][..])
        && le_u32(head, 8) == crc32fast::hash(payload);
    intact.then(|| (head[5], payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_damage_is_caught() {
        let chunk = frame(b"TEST", 2, b"payload");
        assert_eq!(unframe(b"TEST", &chunk), Some((2, &b"payload"[..])));
        assert_eq!(unframe(b"OTHR", &chunk), None);
        for i in 0..chunk.len() {
            let mut bad = chunk.clone();
            bad[i] ^= 0x01;
            assert!(
                unframe(b"TEST", &bad) != Some((2, &b"payload"[..])),
                "flip at {i}"
            );
        }
        assert_eq!(unframe(b"TEST", &chunk[..5]), None);
    }
}
