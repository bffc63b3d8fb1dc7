//! The RocksDB merge operator: a thin adapter over `rocksketch_merge`'s pure functions.
//!
//! A host database that owns its `rocksdb::DB` registers it on the options of the column
//! family that holds rocksketch's pages with [`register_merge_operator`].

use rocksdb::MergeOperands;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

pub use rocksketch_merge::MERGE_OPERATOR_NAME;

static SKIPPED_OPERANDS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Operands the last full merge on this thread was given (for `inspect`).
    static MERGED_OPERANDS: Cell<usize> = const { Cell::new(0) };
}

/// How many operands the last full merge on this thread was given, and resets it to 0.
/// RocksDB merges on the reading thread, so a read followed by this says how many
/// operands the page read had waiting.
pub(crate) fn take_merged_operands() -> usize {
    MERGED_OPERANDS.with(|n| n.replace(0))
}

/// Registers rocksketch's merge operator on column family options.
pub fn register_merge_operator(opts: &mut rocksdb::Options) {
    opts.set_merge_operator(MERGE_OPERATOR_NAME, full_merge, partial_merge);
}

/// How many operands merges in this process have skipped because they did not decode.
pub fn skipped_operands() -> u64 {
    SKIPPED_OPERANDS.load(Ordering::Relaxed)
}

fn full_merge(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    MERGED_OPERANDS.with(|n| n.set(operands.len()));
    let merged = rocksketch_merge::full_merge(existing, operands);
    if merged.skipped > 0 {
        SKIPPED_OPERANDS.fetch_add(merged.skipped as u64, Ordering::Relaxed);
    }
    // Always Some: a failed merge would make RocksDB read-only.
    Some(merged.value)
}

fn partial_merge(_key: &[u8], _: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    rocksketch_merge::partial_merge(operands)
}
