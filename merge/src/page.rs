//! A materialized page of any kind, decoded: what a cache of hot pages keeps, and
//! applies each new operand to with the same code as [`crate::full_merge`].

use crate::bits::BitPage;
use crate::counter::CounterPage;
use crate::cuckoo::FpPage;
use crate::error::{Error, Result};
use crate::header::{self, Kind};
use crate::hll::Registers;
use crate::ribbon::{Shard, StagePage};
use crate::tally::Tally;
use crate::tdigest::Digest;
use crate::topk::TopKPage;

/// A decoded page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    /// A count-min sketch's counters.
    Counter(CounterPage),
    /// A key's tally: counts per slot.
    Tally(Tally),
    /// A Bloom filter page of bits.
    Bits(BitPage),
    /// A cuckoo filter page of fingerprints.
    Fp(FpPage),
    /// A t-digest.
    Digest(Digest),
    /// A Top-K: counters and heap.
    TopK(TopKPage),
    /// Hashes staged for a Ribbon build.
    Stage(StagePage),
    /// A solved Ribbon shard.
    Ribbon(Shard),
    /// A HyperLogLog's registers.
    Hll(Registers),
}

impl Page {
    /// Decodes a stored page of any kind (checking header and checksum); an operand, or
    /// a page flagged as missing writes, is an error.
    pub fn decode(bytes: &[u8]) -> Result<Page> {
        match header::peek_kind(bytes) {
            Some(Ok(Kind::CounterPage)) => CounterPage::decode(bytes).map(Page::Counter),
            Some(Ok(Kind::TallyPage)) => Tally::decode_page(bytes).map(Page::Tally),
            Some(Ok(Kind::BitPage)) => BitPage::decode(bytes).map(Page::Bits),
            Some(Ok(Kind::FpPage)) => FpPage::decode(bytes).map(Page::Fp),
            Some(Ok(Kind::DigestPage)) => Digest::decode(bytes).map(Page::Digest),
            Some(Ok(Kind::TopKPage)) => TopKPage::decode(bytes).map(Page::TopK),
            Some(Ok(Kind::StagePage)) => StagePage::decode(bytes).map(Page::Stage),
            Some(Ok(Kind::RibbonPage)) => Shard::decode(bytes).map(Page::Ribbon),
            Some(Ok(Kind::HllPage)) => Registers::decode(bytes).map(Page::Hll),
            Some(Ok(_)) => Err(Error::Invalid("an operand where a page was expected")),
            Some(Err(err)) => Err(err),
            None => Err(Error::Invalid("too short for a page header")),
        }
    }

    /// Applies one operand as a full merge of this page would. `false` where the full
    /// merge would skip it (it does not decode, or does not fit the page): the page is
    /// then unchanged, and only a full merge gives the page as stored (flagged).
    pub fn apply(&mut self, operand: &[u8]) -> bool {
        match self {
            Page::Counter(page) => page.apply_operand(operand),
            Page::Tally(page) => page.apply_operand(operand),
            Page::Bits(page) => page.apply_operand(operand),
            Page::Fp(page) => page.apply_operand(operand),
            Page::Digest(page) => page.apply_operand(operand),
            Page::TopK(page) => page.apply_operand(operand),
            Page::Stage(page) => page.apply_operand(operand),
            Page::Ribbon(_) => false,
            Page::Hll(page) => page.apply_operand(operand),
        }
    }

    /// The page, if it is a cuckoo page.
    pub fn as_fp(&self) -> Option<&FpPage> {
        match self {
            Page::Fp(page) => Some(page),
            _ => None,
        }
    }

    /// The page, if it is a digest.
    pub fn as_digest(&self) -> Option<&Digest> {
        match self {
            Page::Digest(page) => Some(page),
            _ => None,
        }
    }

    /// The page, if it is a Top-K.
    pub fn as_topk(&self) -> Option<&TopKPage> {
        match self {
            Page::TopK(page) => Some(page),
            _ => None,
        }
    }

    /// The page, if it is a staging page.
    pub fn as_stage(&self) -> Option<&StagePage> {
        match self {
            Page::Stage(page) => Some(page),
            _ => None,
        }
    }

    /// The page, if it is a solved Ribbon shard.
    pub fn as_ribbon(&self) -> Option<&Shard> {
        match self {
            Page::Ribbon(page) => Some(page),
            _ => None,
        }
    }

    /// The page, if it is a HyperLogLog's registers.
    pub fn as_hll(&self) -> Option<&Registers> {
        match self {
            Page::Hll(page) => Some(page),
            _ => None,
        }
    }

    /// The page, if it is a counter page.
    pub fn as_counter(&self) -> Option<&CounterPage> {
        match self {
            Page::Counter(page) => Some(page),
            _ => None,
        }
    }

    /// About the bytes the page occupies in memory (its encoded size).
    pub fn size(&self) -> usize {
        let payload = match self {
            Page::Counter(page) => page.cells().len() * 4,
            Page::Tally(page) => page.slots().len() * 8,
            Page::Bits(page) => page.bytes().len(),
            Page::Fp(page) => page.memory_bytes(),
            Page::Digest(page) => page.memory_bytes(),
            Page::TopK(page) => page.memory_bytes(),
            Page::Stage(page) => page.hashes().len() * 8,
            Page::Ribbon(page) => 16 + page.solution_bytes(),
            Page::Hll(page) => page.as_bytes().len(),
        };
        header::HEADER_LEN + payload
    }

    /// Encodes the page as [`crate::full_merge`] would store it.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Page::Counter(page) => page.encode(),
            Page::Tally(page) => page.encode_page(),
            Page::Bits(page) => page.encode(),
            Page::Fp(page) => page.encode(),
            Page::Digest(page) => page.encode(),
            Page::TopK(page) => page.encode(),
            Page::Stage(page) => page.encode(),
            Page::Ribbon(page) => page.encode(),
            Page::Hll(page) => page.encode(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Page;
    use crate::bits::{BitDelta, BitPage};
    use crate::counter::{CounterDelta, CounterPage};
    use crate::cuckoo::{FpOp, FpOps, FpPage, Shape};
    use crate::tally::Tally;
    use quickcheck::quickcheck;

    /// Applying operands one by one to a decoded page gives what the full merge stores.
    fn same_as_full_merge(page: Vec<u8>, operands: &[Vec<u8>]) -> bool {
        let mut decoded = Page::decode(&page).unwrap();
        let all_applied = operands.iter().all(|op| decoded.apply(op));
        let merged = crate::full_merge(Some(&page), operands.iter().map(Vec::as_slice));
        all_applied && merged.skipped == 0 && decoded.encode() == merged.value
    }

    quickcheck! {
        fn counters(cells: Vec<u32>, adds: Vec<(u16, u32)>) -> bool {
            let len = cells.len().max(1);
            let page = CounterPage::from_cells(if cells.is_empty() { vec![7] } else { cells });
            let ops: Vec<Vec<u8>> = adds
                .chunks(3)
                .map(|c| {
                    let entries = c.iter().map(|(i, a)| (u32::from(*i) % len as u32, *a)).collect();
                    CounterDelta::sparse(len as u32, entries).unwrap().encode()
                })
                .collect();
            same_as_full_merge(page.encode(), &ops)
        }

        fn bits(set: Vec<u16>, deltas: Vec<Vec<u16>>) -> bool {
            let mut page = BitPage::zeroed(4096);
            for bit in set {
                page.set(u32::from(bit) % 4096);
            }
            let ops: Vec<Vec<u8>> = deltas
                .into_iter()
                .map(|d| {
                    let bits = d.into_iter().map(|b| u32::from(b) % 4096).collect();
                    BitDelta::sparse(4096, bits).unwrap().encode()
                })
                .collect();
            same_as_full_merge(page.encode(), &ops)
        }

        fn tallies(slots: Vec<u64>, deltas: Vec<Vec<u64>>) -> bool {
            let ops: Vec<Vec<u8>> = deltas.into_iter().map(|d| Tally::new(d).encode_delta()).collect();
            same_as_full_merge(Tally::new(slots).encode_page(), &ops)
        }

        fn fingerprints(inserts: Vec<(u8, u8)>, deletes: Vec<(u8, u8)>) -> bool {
            let shape = Shape::new(8, 2, 16).unwrap();
            let op = |(b, f): (u8, u8)| (u32::from(b) % 16, u16::from(f.max(1)));
            let ops = vec![
                FpOps::new(shape, inserts.iter().map(|x| { let (bucket, fp) = op(*x); FpOp::Insert { bucket, fp } }).collect()).unwrap().encode(),
                FpOps::new(shape, deletes.iter().map(|x| { let (bucket, fp) = op(*x); FpOp::Delete { bucket, fp } }).collect()).unwrap().encode(),
            ];
            same_as_full_merge(FpPage::empty(shape).encode(), &ops)
        }
    }

    #[test]
    fn refuses_operands_the_full_merge_skips() {
        let mut page = Page::decode(&CounterPage::zeroed(4).encode()).unwrap();
        assert!(!page.apply(&CounterDelta::sparse(5, vec![(0, 1)]).unwrap().encode()));
        assert!(!page.apply(&BitDelta::sparse(32, vec![1]).unwrap().encode()));
        assert!(!page.apply(b"garbage"));
        assert_eq!(page, Page::Counter(CounterPage::zeroed(4)));
        assert!(Page::decode(&Tally::new(vec![1]).encode_delta()).is_err());
    }
}
