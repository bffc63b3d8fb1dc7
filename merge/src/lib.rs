#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

pub mod batch;
pub mod bits;
pub mod bytes;
pub mod counter;
pub mod cuckoo;
pub mod error;
mod fold;
pub mod hash;
pub mod header;
pub mod hll;
pub mod layout;
mod merge;
pub mod page;
pub mod ribbon;
pub mod tally;
pub mod tdigest;
pub mod topk;
pub mod transfer;
pub mod wal_log;

pub use error::{Error, Result};

/// The largest page of any kind, in bytes. Every size a decoder reads from stored bytes
/// (a counter delta's `page_len`, a bit delta's `page_bits`, a cuckoo shape) is bounded
/// by it, so no operand can make a merge allocate more than a page.
pub const MAX_PAGE_BYTES: usize = 1 << 20;
/// The merge operator's name, recorded by RocksDB in the column family's options: every
/// host that registers the operator (the engine, a C or C++ host) gives this one.
pub const MERGE_OPERATOR_NAME: &str = "rocksketch.v1";
pub use header::Kind;
pub use merge::{full_merge, partial_merge, Merged};
pub use page::Page;
