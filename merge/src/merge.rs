//! The merge contract: one entry point for every kind, total and deterministic.

use crate::bits::BitPage;
use crate::counter::CounterPage;
use crate::cuckoo::FpPage;
use crate::fold::fold;
use crate::header::{self, Kind};
use crate::hll::Registers;
use crate::ribbon::StagePage;
use crate::tally::Tally;
use crate::tdigest::Digest;
use crate::topk::TopKPage;
use crate::{bits, counter, cuckoo, hll, ribbon, tally, tdigest, topk};

/// The result of a full merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The materialized value to store.
    pub value: Vec<u8>,
    /// Operands that could not be decoded or did not fit the page, and were skipped.
    pub skipped: usize,
}

impl Merged {
    pub(crate) fn unchanged(existing: &[u8], skipped: usize) -> Merged {
        Merged {
            value: existing.to_vec(),
            skipped,
        }
    }
}

/// Materializes a page from its stored value (if any) and the operands written after it.
///
/// Total: never panics and never fails, because a failed merge makes RocksDB read-only.
/// - An operand that cannot be decoded, or does not fit the page, is skipped and counted
///   in [`Merged::skipped`], and the page is flagged ([`header::FLAG_LOST_OPERANDS`]), so
///   every later read of it reports the loss instead of answering without those writes.
/// - A stored value that cannot be decoded is returned unchanged (and every operand is
///   counted as skipped), so the read that decodes it reports the corruption.
///
/// Deterministic: the same inputs always give the same bytes.
pub fn full_merge<'a, I>(existing: Option<&[u8]>, operands: I) -> Merged
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let operands: Vec<&[u8]> = operands.into_iter().collect();
    let mut merged = merge_family(existing, &operands);
    // Flag a page made without some operands; a corrupt stored value stays as it was.
    if merged.skipped > 0 && header::decode(&merged.value).is_ok() {
        header::mark_lost_operands(&mut merged.value);
    }
    merged
}

fn merge_family(existing: Option<&[u8]>, operands: &[&[u8]]) -> Merged {
    let family = match existing {
        Some(bytes) => header::peek_kind(bytes).and_then(Result::ok),
        None => operands
            .iter()
            .find_map(|op| header::peek_kind(op).and_then(Result::ok)),
    };
    match family {
        Some(Kind::CounterPage | Kind::CounterDelta) => fold::<CounterPage>(existing, operands),
        Some(Kind::TallyPage | Kind::TallyDelta) => fold::<Tally>(existing, operands),
        Some(Kind::BitPage | Kind::BitDelta) => fold::<BitPage>(existing, operands),
        Some(Kind::FpPage | Kind::FpOps) => fold::<FpPage>(existing, operands),
        Some(Kind::DigestPage | Kind::DigestOps) => fold::<Digest>(existing, operands),
        Some(Kind::TopKPage | Kind::TopKOps) => fold::<TopKPage>(existing, operands),
        Some(Kind::StagePage | Kind::StageOps) => fold::<StagePage>(existing, operands),
        Some(Kind::HllPage | Kind::HllOps) => fold::<Registers>(existing, operands),
        // A solved shard takes no operands: any is skipped, and flags the page.
        Some(Kind::RibbonPage) | None => Merged {
            value: existing.unwrap_or_default().to_vec(),
            skipped: operands.len(),
        },
    }
}

/// Combines a run of operands into one, or declines (`None`) where it cannot: operands
/// of different kinds, or one that does not decode. Declining is always safe; RocksDB
/// then keeps the operands as they are and the full merge applies them one by one.
///
/// The result is bounded: a combined counter delta is never larger than its dense form.
pub fn partial_merge<'a, I>(operands: I) -> Option<Vec<u8>>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let operands: Vec<&[u8]> = operands.into_iter().collect();
    match header::peek_kind(operands.first()?)?.ok()? {
        Kind::CounterDelta => counter::partial_merge(&operands),
        Kind::TallyDelta => tally::partial_merge(&operands),
        Kind::BitDelta => bits::partial_merge(&operands),
        Kind::FpOps => cuckoo::partial_merge(&operands),
        Kind::DigestOps => tdigest::ops::partial_merge(&operands),
        Kind::TopKOps => topk::ops::partial_merge(&operands),
        Kind::StageOps => ribbon::partial_merge(&operands),
        Kind::HllOps => hll::partial_merge(&operands),
        Kind::CounterPage
        | Kind::TallyPage
        | Kind::BitPage
        | Kind::FpPage
        | Kind::DigestPage
        | Kind::TopKPage
        | Kind::StagePage
        | Kind::RibbonPage
        | Kind::HllPage => None,
    }
}
