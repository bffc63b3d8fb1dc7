//! Key encoding. Integers are big-endian so that keys sort numerically and all pages of
//! one key version sort together (one range delete removes them).
//!
//! ```text
//! meta key: ns u16 BE | user key
//! page key: ns u16 BE | key_len u32 BE | user key | version u64 BE | sub u16 BE | page u32 BE
//! ```
//!
//! `sub` numbers the sub-filters of a chain (0 for a count-min sketch); [`TALLY_SUB`] holds
//! the key's tally page (the totals updated on every write).

/// The sub-filter number of the tally page.
pub const TALLY_SUB: u16 = u16::MAX;

/// The meta column family key of `key` in namespace `ns`.
pub fn meta_key(ns: u16, key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + key.len());
    out.extend_from_slice(&ns.to_be_bytes());
    out.extend_from_slice(key);
    out
}

/// Splits a meta key into namespace and user key.
pub fn split_meta_key(raw: &[u8]) -> Option<(u16, &[u8])> {
    let (ns, key) = raw.split_first_chunk::<2>()?;
    Some((u16::from_be_bytes(*ns), key))
}

/// The prefix shared by every page of one version of a key.
pub fn version_prefix(ns: u16, key: &[u8], version: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 + 4 + key.len() + 8 + 6);
    out.extend_from_slice(&ns.to_be_bytes());
    // Keys longer than 4 GiB cannot reach here: the RESP host and the API bound them.
    out.extend_from_slice(&(key.len() as u32).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&version.to_be_bytes());
    out
}

/// The key of page `page` of sub-filter `sub`, given its version prefix.
pub fn page_key(prefix: &[u8], sub: u16, page: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + 6);
    out.extend_from_slice(prefix);
    out.extend_from_slice(&sub.to_be_bytes());
    out.extend_from_slice(&page.to_be_bytes());
    out
}

/// The prefix shared by every page of sub-filter `sub` of a key version.
pub fn sub_prefix(prefix: &[u8], sub: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + 2);
    out.extend_from_slice(prefix);
    out.extend_from_slice(&sub.to_be_bytes());
    out
}

/// The smallest key greater than every key starting with `prefix`, if any.
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_of_a_version_sort_together_and_numerically() {
        let p = version_prefix(0, b"k", 7);
        let a = page_key(&p, 0, 2);
        let b = page_key(&p, 0, 256);
        let t = page_key(&p, TALLY_SUB, 0);
        assert!(a < b && b < t);
        let end = prefix_end(&p).unwrap();
        assert!(t < end);
        // A key that extends "k" must not fall inside k's range.
        let other = page_key(&version_prefix(0, b"k\0", 7), 0, 0);
        assert!(!(other >= p && other < end));
    }

    #[test]
    fn meta_keys_split() {
        assert_eq!(split_meta_key(&meta_key(3, b"abc")), Some((3, &b"abc"[..])));
        assert_eq!(split_meta_key(&[1]), None);
    }

    #[test]
    fn prefix_end_carries() {
        assert_eq!(prefix_end(&[1, 255]), Some(vec![2]));
        assert_eq!(prefix_end(&[255, 255]), None);
    }
}
