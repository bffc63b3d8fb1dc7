//! A page's stash: the fingerprints no slot could take, kept sorted so that a lookup is
//! a binary search, not a scan.
//!
//! A stash grows where a page holds more copies of items than their bucket pairs can:
//! a pair takes at most `2 × bucket_size` copies of one item, and items added many times
//! fill pairs far below the load a page reaches with distinct items. Such pages stash
//! hundreds of fingerprints, and every lookup of the page reads the stash.
//!
//! Each entry's bucket is the smaller of its pair's two (either stands for the pair;
//! the stored format takes both), and entries are ordered by (bucket, fingerprint), so
//! the copies of one item are one run. Pages written before the stash was kept this
//! way are put in this order when decoded.

use super::Shape;

/// Stashed `(bucket, fingerprint)` entries, sorted, each bucket the smaller of its pair.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Stash {
    entries: Vec<(u32, u16)>,
}

impl Stash {
    /// The stash of decoded entries, in any order and naming either bucket of a pair.
    pub(super) fn from_entries(shape: Shape, mut entries: Vec<(u32, u16)>) -> Stash {
        for (bucket, fp) in &mut entries {
            *bucket = shape.pair_key(*bucket, *fp);
        }
        entries.sort_unstable();
        Stash { entries }
    }

    /// The entries in their order (the order they are stored in).
    pub(super) fn entries(&self) -> &[(u32, u16)] {
        &self.entries
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Stashes `fp` of the pair of `bucket`.
    pub(super) fn push(&mut self, shape: Shape, bucket: u32, fp: u16) {
        let entry = (shape.pair_key(bucket, fp), fp);
        let at = self.entries.partition_point(|e| *e <= entry);
        self.entries.insert(at, entry);
    }

    /// The range of `fp`'s copies stashed for the pair of `bucket`.
    fn run(&self, shape: Shape, bucket: u32, fp: u16) -> std::ops::Range<usize> {
        let entry = (shape.pair_key(bucket, fp), fp);
        let start = self.entries.partition_point(|e| *e < entry);
        let end = self.entries.partition_point(|e| *e <= entry);
        start..end
    }

    /// Copies of `fp` stashed for the pair of `bucket`.
    pub(super) fn count(&self, shape: Shape, bucket: u32, fp: u16) -> usize {
        self.run(shape, bucket, fp).len()
    }

    /// Removes one copy of `fp` stashed for the pair of `bucket`; whether there was one.
    pub(super) fn remove(&mut self, shape: Shape, bucket: u32, fp: u16) -> bool {
        let run = self.run(shape, bucket, fp);
        if run.is_empty() {
            return false;
        }
        self.entries.remove(run.start);
        true
    }

    /// Takes out the first stashed fingerprint whose pair includes `bucket`. A scan:
    /// only deletes, which free slots, ask.
    pub(super) fn take_for(&mut self, shape: Shape, bucket: u32) -> Option<u16> {
        let at = self
            .entries
            .iter()
            .position(|(b, fp)| *b == bucket || shape.alt(*b, *fp) == bucket)?;
        Some(self.entries.remove(at).1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_found_by_either_bucket_of_their_pair() {
        let shape = Shape::new(8, 2, 1024).unwrap();
        let fp = 77;
        let (b1, b2) = (5, shape.alt(5, 77));
        assert_ne!(b1, b2);
        let mut stash = Stash::default();
        stash.push(shape, b2, fp);
        stash.push(shape, 900, 3);
        stash.push(shape, b1, fp);
        stash.push(shape, 0, 1);
        assert!(stash.entries().windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(stash.count(shape, b1, fp), 2);
        assert_eq!(stash.count(shape, b2, fp), 2);
        assert_eq!(stash.count(shape, b1, fp + 1), 0);
        assert!(stash.remove(shape, b2, fp));
        assert_eq!(stash.count(shape, b1, fp), 1);
        assert_eq!(stash.take_for(shape, b2), Some(fp));
        assert_eq!(stash.count(shape, b1, fp), 0);
        assert!(!stash.remove(shape, b1, fp));
        assert_eq!(stash.len(), 2);
    }

    #[test]
    fn decoded_entries_in_any_order_read_the_same() {
        let shape = Shape::new(16, 4, 256).unwrap();
        let raw: Vec<(u32, u16)> = (0..200u32)
            .map(|i| ((i * 37) % 256, (i as u16 % 9) * 1000 + 1))
            .collect();
        let mut pushed = Stash::default();
        for (b, fp) in &raw {
            pushed.push(shape, *b, *fp);
        }
        let mut reversed = raw.clone();
        reversed.reverse();
        // Entries naming the other bucket of their pair.
        let swapped: Vec<(u32, u16)> = raw
            .iter()
            .map(|(b, fp)| (shape.alt(*b, *fp), *fp))
            .collect();
        assert_eq!(Stash::from_entries(shape, reversed), pushed);
        assert_eq!(Stash::from_entries(shape, swapped), pushed);
        for (b, fp) in &raw {
            let copies = raw
                .iter()
                .filter(|(c, f)| f == fp && (c == b || *c == shape.alt(*b, *fp)))
                .count();
            assert_eq!(pushed.count(shape, *b, *fp), copies);
        }
    }
}
