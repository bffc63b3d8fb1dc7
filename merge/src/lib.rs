#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

pub mod bits;
pub mod bytes;
pub mod counter;
pub mod cuckoo;
pub mod error;
pub mod hash;
pub mod header;
mod merge;
pub mod tally;

pub use error::{Error, Result};
pub use header::Kind;
pub use merge::{full_merge, partial_merge, Merged};
