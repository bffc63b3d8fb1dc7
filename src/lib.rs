//! rocksketch keeps probabilistic data structures in RocksDB, and every write is a
//! **blind merge**: a small operand appended to a page, folded in by RocksDB's merge
//! operator when a read or a compaction needs the page. No write reads or rewrites a page.
//!
//! ```
//! # fn main() -> rocksketch::Result<()> {
//! use rocksketch::{Store, StoreOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let store = Store::open(dir.path(), StoreOptions::default())?;
//! let words = store.cms("words");
//! words.init_by_prob(0.001, 0.01)?; // 2000 × 7, as RedisBloom sizes it
//! let text = "the quick brown fox jumps over the lazy dog the end";
//! let items: Vec<(&str, u64)> = text.split(' ').map(|w| (w, 1)).collect();
//! words.incr_by(&items)?; // one write batch of blind deltas
//!
//! // A count-min estimate never undercounts, and overcounts by at most
//! // error × total count with probability 1 - 0.01.
//! let total = words.info()?.count;
//! let the = words.query(&["the"])?[0];
//! assert!(the >= 3 && f64::from(the) <= 3.0 + 0.001 * total as f64);
//!
//! // Reopening keeps everything.
//! drop(words);
//! drop(store);
//! let store = Store::open(dir.path(), StoreOptions::default())?;
//! assert_eq!(store.cms("words").query(&["the"])?, vec![the]);
//! # Ok(()) }
//! ```
//!
//! A host that owns its own `rocksdb::DB` registers the merge operator on its pages
//! column family with [`register_merge_operator`] and wraps the handle with
//! [`Store::with_db`].

#![warn(missing_docs)]

/// A handle type's constructors on [`Namespace`] and on [`Store`] (namespace 0), in
/// the handle's own module: the store knows no handle type, so no module circle runs
/// through it.
macro_rules! handle_constructors {
    ($method:ident, $handle:ident, $what:literal) => {
        impl crate::store::Namespace {
            #[doc = concat!("The ", $what, " at `key` (it need not exist yet).")]
            pub fn $method(&self, key: impl AsRef<[u8]>) -> $handle {
                $handle::new(self.store.clone(), self.ns, key.as_ref().to_vec())
            }
        }

        impl crate::store::Store {
            #[doc = concat!("The ", $what, " at `key` in namespace 0.")]
            pub fn $method(&self, key: impl AsRef<[u8]>) -> $handle {
                self.ns(0).$method(key)
            }
        }
    };
}

pub mod bloom;
mod chain;
mod chunk;
pub mod cms;
mod combine;
pub mod command;
pub mod cuckoo;
mod error;
mod fast;
pub mod hll;
pub mod inspect;
mod keys;
mod locks;
mod meta;
mod operator;
pub mod ribbon;
pub use rocksketch_resp as resp;
mod store;
pub mod tdigest;
pub mod topk;
pub mod window;

pub use bloom::{BloomFilter, BloomInfo};
pub use cms::{Cms, CmsInfo};
pub use cuckoo::{CuckooFilter, CuckooInfo, CuckooOptions};
pub use error::{
    BloomError, CmsError, CuckooError, Error, HllError, Result, RibbonError, TDigestError,
    TopKError,
};
pub use hll::Hll;
pub use meta::KeyType;
pub use operator::{register_merge_operator, skipped_operands, MERGE_OPERATOR_NAME};
pub use ribbon::{RibbonFilter, RibbonInfo};
pub use store::{
    now_ms, take_last_lookup, ColumnFamilies, Db, Listed, LogsHeld, Namespace, Span, Store,
    StoreOptions, WalTail, INTERNAL_NS, MAX_KEY_LEN, META_CF, PAGES_CF,
};
pub use tdigest::{TDigest, TDigestInfo};
pub use topk::TopK;
pub use window::{Clock, Window, WindowInfo};
