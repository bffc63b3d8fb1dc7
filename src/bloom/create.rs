//! Finding a Bloom filter's metadata under its lock, or creating the filter: with
//! RedisBloom's defaults for an add, with given parameters (`BF.RESERVE`, `BF.INSERT`),
//! or not at all (`NOCREATE`).

use super::sizing::validate;
use super::{BloomFilter, DEFAULT_CAPACITY, DEFAULT_ERROR, DEFAULT_EXPANSION};
use crate::error::{BloomError, Result};
use crate::meta::{BloomParams, KeyType, Meta, Params};
use crate::store::KeyGuard;

/// What an add does to a missing filter.
#[derive(Clone, Copy)]
pub(super) enum IfMissing {
    /// Creates it with RedisBloom's defaults (`BF.ADD`, `BF.MADD`).
    Defaults,
    /// Creates it with these parameters (`BF.INSERT`).
    Create(BloomParams),
    /// Answers `ERR not found` (`BF.INSERT ... NOCREATE`).
    NotFound,
}

impl BloomFilter {
    /// The key's metadata, creating a filter with RedisBloom's defaults if the key is
    /// missing (as `BF.ADD` does), under the exclusive `guard`.
    ///
    /// The key is written with the first write made under `guard` (see
    /// [`KeyGuard::create_with_first_write`]): a refused add creates nothing.
    pub(super) fn meta_or_create(&self, guard: &KeyGuard) -> Result<Meta> {
        self.meta_or_create_with(guard, IfMissing::Defaults)
    }

    /// [`BloomFilter::meta_or_create`], doing what `if_missing` says to a missing key;
    /// the parameters are worked out only then.
    pub(super) fn meta_or_create_with(
        &self,
        guard: &KeyGuard,
        if_missing: IfMissing,
    ) -> Result<Meta> {
        match guard.typed_meta(KeyType::Bloom)? {
            Some(meta) => Ok(meta),
            None => {
                let params = match if_missing {
                    IfMissing::Defaults => {
                        validate(DEFAULT_ERROR, DEFAULT_CAPACITY, DEFAULT_EXPANSION)?
                    }
                    IfMissing::Create(params) => params,
                    IfMissing::NotFound => return Err(BloomError::NotFound.into()),
                };
                let page_bits = self.store.page_cells() * 32;
                guard.create_with_first_write(Params::Bloom(BloomParams {
                    page_bits,
                    ..params
                }))
            }
        }
    }

    pub(super) fn create(
        &self,
        guard: &KeyGuard,
        params: BloomParams,
        window: Option<crate::Window>,
    ) -> Result<Meta> {
        let page_bits = self.store.page_cells() * 32;
        let params = Params::Bloom(BloomParams {
            page_bits,
            ..params
        });
        guard.create_windowed(params, window)
    }
}
