//! Fuzzed payloads in valid frames: each input becomes a page or operand of every kind
//! with a correct header and checksum, so the decoders past the checksum (lengths,
//! forms, shapes, indexes) and both merge functions see arbitrary payloads. No panic,
//! no allocation beyond a page (`MAX_PAGE_BYTES`), and whatever decodes re-encodes to
//! the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_merge::bits::{BitDelta, BitPage};
use rocksketch_merge::counter::{CounterDelta, CounterPage};
use rocksketch_merge::cuckoo::{FpOps, FpPage};
use rocksketch_merge::header::{begin_version, finish, Kind, HEADER_LEN, VERSION_1, VERSION_2};
use rocksketch_merge::hll::{HllOps, Registers};
use rocksketch_merge::ribbon::{Shard, StageOps, StagePage};
use rocksketch_merge::tally::Tally;
use rocksketch_merge::tdigest::Digest;
use rocksketch_merge::topk::TopKPage;
use rocksketch_merge::{full_merge, partial_merge, MAX_PAGE_BYTES};

const KINDS: [Kind; 17] = [
    Kind::CounterPage,
    Kind::CounterDelta,
    Kind::TallyPage,
    Kind::TallyDelta,
    Kind::BitPage,
    Kind::BitDelta,
    Kind::FpPage,
    Kind::FpOps,
    Kind::DigestPage,
    Kind::DigestOps,
    Kind::TopKPage,
    Kind::TopKOps,
    Kind::StagePage,
    Kind::StageOps,
    Kind::RibbonPage,
    Kind::HllPage,
    Kind::HllOps,
];

/// A payload in a valid frame: cuckoo kinds take format version 2 (12-bit
/// fingerprints) when their payload's first byte says 12, so both versions are fuzzed.
fn framed(kind: Kind, payload: &[u8]) -> Vec<u8> {
    let version = match (kind, payload.first()) {
        (Kind::FpPage | Kind::FpOps, Some(12)) => VERSION_2,
        _ => VERSION_1,
    };
    let mut out = begin_version(kind, version, payload.len());
    out.extend_from_slice(payload);
    finish(out)
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the kind of the base value; the rest, split at 0xff, are
    // payloads framed as the same kind's operand.
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.split(|b| *b == 0xff);
    let base_payload = parts.next().unwrap_or_default();
    let base_kind = KINDS[usize::from(pick) % KINDS.len()];
    let op_kind = KINDS[(usize::from(pick) / KINDS.len()) % KINDS.len()];
    let base = framed(base_kind, base_payload);
    let operands: Vec<Vec<u8>> = parts.map(|p| framed(op_kind, p)).collect();

    for value in std::iter::once(&base).chain(&operands) {
        if let Ok(page) = CounterPage::decode(value) {
            assert_eq!(&page.encode(), value);
        }
        if let Ok(delta) = CounterDelta::decode(value) {
            // Form 0 (fixed-width sparse entries) is read but no longer written: it
            // re-encodes in the compact form, to the same delta.
            if value.get(HEADER_LEN + 4) == Some(&0) {
                assert_eq!(CounterDelta::decode(&delta.encode()), Ok(delta));
            } else {
                assert_eq!(&delta.encode(), value);
            }
        }
        if let Ok(page) = BitPage::decode(value) {
            assert_eq!(&page.encode(), value);
        }
        if let Ok(delta) = BitDelta::decode(value) {
            assert_eq!(&delta.encode(), value);
        }
        if let Ok(tally) = Tally::decode_page(value) {
            assert_eq!(&tally.encode_page(), value);
        }
        if let Ok(tally) = Tally::decode_delta(value) {
            assert_eq!(&tally.encode_delta(), value);
        }
        if let Ok(page) = FpPage::decode(value) {
            assert_eq!(&page.encode(), value);
        }
        if let Ok(ops) = FpOps::decode(value) {
            assert_eq!(&ops.encode(), value);
        }
        if let Ok(digest) = Digest::decode(value) {
            assert_eq!(&digest.encode(), value);
        }
        if let Ok(top) = TopKPage::decode(value) {
            assert_eq!(&top.encode(), value);
        }
        if let Ok(page) = StagePage::decode(value) {
            assert_eq!(&page.encode(), value);
        }
        if let Ok(ops) = StageOps::decode(value) {
            assert_eq!(&ops.encode(), value);
        }
        // A page holds Redis's register encoding, any valid one; it re-encodes in the
        // canonical one, to the same registers.
        if let Ok(regs) = Registers::decode(value) {
            assert_eq!(Registers::decode(&regs.encode()), Ok(regs));
        }
        if let Ok(ops) = HllOps::decode(value) {
            assert_eq!(&ops.encode(), value);
        }
        if let Ok(shard) = Shard::decode(value) {
            assert_eq!(&shard.encode(), value);
            // A lookup of any hash in any shard that decodes stays in bounds.
            for h in [0, u64::MAX, 0x9e37_79b9_7f4a_7c15, value.len() as u64] {
                let _ = shard.contains(h);
            }
        }
    }
    let refs: Vec<&[u8]> = operands.iter().map(Vec::as_slice).collect();
    for existing in [None, Some(base.as_slice())] {
        let merged = full_merge(existing, refs.iter().copied());
        assert!(merged.skipped <= refs.len());
        // A merge result is at most a page, or the input it kept unchanged.
        let input: usize = refs.iter().map(|r| r.len()).sum::<usize>() + base.len();
        assert!(merged.value.len() <= (2 * MAX_PAGE_BYTES).max(input + 64));
    }
    if let Some(combined) = partial_merge(refs.iter().copied()) {
        let input: usize = refs.iter().map(|r| r.len()).sum();
        assert!(combined.len() <= (2 * MAX_PAGE_BYTES).max(input + 64));
    }
});
