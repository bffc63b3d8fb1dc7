//! Arbitrary bytes into every decoder and both merge functions: no panic, and whatever
//! decodes re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_merge::bits::{BitDelta, BitPage};
use rocksketch_merge::counter::{CounterDelta, CounterPage};
use rocksketch_merge::cuckoo::{FpOps, FpPage};
use rocksketch_merge::hll::{HllOps, Registers};
use rocksketch_merge::ribbon::{Shard, StageOps, StagePage};
use rocksketch_merge::tally::Tally;
use rocksketch_merge::tdigest::Digest;
use rocksketch_merge::topk::TopKPage;
use rocksketch_merge::{full_merge, partial_merge};

fuzz_target!(|data: &[u8]| {
    if let Ok(page) = CounterPage::decode(data) {
        assert_eq!(page.encode(), data);
    }
    if let Ok(delta) = CounterDelta::decode(data) {
        assert_eq!(delta.encode(), data);
    }
    if let Ok(page) = BitPage::decode(data) {
        assert_eq!(page.encode(), data);
    }
    if let Ok(delta) = BitDelta::decode(data) {
        assert_eq!(delta.encode(), data);
    }
    if let Ok(tally) = Tally::decode_page(data) {
        assert_eq!(tally.encode_page(), data);
    }
    if let Ok(tally) = Tally::decode_delta(data) {
        assert_eq!(tally.encode_delta(), data);
    }
    if let Ok(page) = FpPage::decode(data) {
        assert_eq!(page.encode(), data);
    }
    if let Ok(ops) = FpOps::decode(data) {
        assert_eq!(ops.encode(), data);
    }
    if let Ok(digest) = Digest::decode(data) {
        assert_eq!(digest.encode(), data);
    }
    if let Ok(top) = TopKPage::decode(data) {
        assert_eq!(top.encode(), data);
    }
    if let Ok(pairs) = rocksketch_merge::topk::ops::decode(data) {
        assert_eq!(
            rocksketch_merge::topk::ops::encode(pairs).as_deref(),
            Some(data)
        );
    }
    if let Ok(page) = StagePage::decode(data) {
        assert_eq!(page.encode(), data);
    }
    if let Ok(ops) = StageOps::decode(data) {
        assert_eq!(ops.encode(), data);
    }
    // A page holds Redis's register encoding, any valid one; it re-encodes in the
    // canonical one, to the same registers.
    if let Ok(regs) = Registers::decode(data) {
        assert_eq!(Registers::decode(&regs.encode()), Ok(regs));
    }
    if let Ok(ops) = HllOps::decode(data) {
        assert_eq!(ops.encode(), data);
    }
    if let Ok(shard) = Shard::decode(data) {
        assert_eq!(shard.encode(), data);
        let _ = shard.contains(data.len() as u64);
    }
    // Split the input into an existing value and operands at 0xff bytes.
    let mut parts = data.split(|b| *b == 0xff);
    let existing = parts.next();
    let operands: Vec<&[u8]> = parts.collect();
    let merged = full_merge(existing, operands.iter().copied());
    assert!(merged.skipped <= operands.len());
    let _ = partial_merge(operands.iter().copied());
});
