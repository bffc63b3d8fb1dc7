//! Redis Cluster's key-to-slot mapping: CRC16 (XMODEM: polynomial 0x1021, no
//! reflection, initial 0) of the key, or of its hash tag, modulo 16384.

/// Hash slots in a cluster.
pub(crate) const SLOTS: usize = 16384;

/// The namespace of slot 0 in cluster mode: slot `s` lives in namespace
/// `CLUSTER_NS + s`, so every metadata record and page of one slot is one key range in
/// each column family (page keys begin with their namespace). Databases (`SELECT`)
/// use namespaces from 0; the store's own records use the last one.
pub(crate) const CLUSTER_NS: u16 = 0x8000;

const TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// CRC16/XMODEM of `bytes`.
pub(crate) fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ TABLE[usize::from((crc >> 8) as u8 ^ b)]
    })
}

/// The part of `key` that is hashed: what is between the first `{` and the first `}`
/// after it, if that is not empty; else the whole key.
pub(crate) fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    match key[open + 1..].iter().position(|&b| b == b'}') {
        Some(len) if len > 0 => &key[open + 1..open + 1 + len],
        _ => key,
    }
}

/// The hash slot of `key`.
pub(crate) fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key)) & (SLOTS as u16 - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_as_redis_computes_them() {
        // The check value of CRC16/XMODEM, and slots Redis 7's CLUSTER KEYSLOT answers.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"{user1}:a"), 8106);
        assert_eq!(key_slot(b""), 0);
    }

    #[test]
    fn hash_tags_as_redis_reads_them() {
        assert_eq!(hash_tag(b"{user1}.following"), b"user1");
        assert_eq!(
            key_slot(b"{user1}.following"),
            key_slot(b"{user1}.followers")
        );
        assert_eq!(
            hash_tag(b"foo{}{bar}"),
            b"foo{}{bar}",
            "an empty tag: the whole key"
        );
        assert_eq!(hash_tag(b"foo{{bar}}zap"), b"{bar");
        assert_eq!(hash_tag(b"foo{bar}{zap}"), b"bar");
        assert_eq!(hash_tag(b"foo{bar"), b"foo{bar");
        assert_eq!(hash_tag(b"}{x}"), b"x");
    }
}
