//! HyperLogLogs: Redis's `PFADD`, `PFCOUNT` and `PFMERGE`, counts equal to Redis's, on
//! one blind-merge page per key.
//!
//! The page holds the 16384 registers in Redis's own encoding (sparse while Redis would
//! keep it sparse, else the 12 KiB dense layout; see [`rocksketch_merge::hll`]). An add
//! is an operand of `(register, rank)` pairs and every merge a register-wise max, so:
//! - [`Hll::add_blind`] writes the pairs under the key's shared lock and reads nothing;
//! - [`Hll::add`] (`PFADD`, which answers whether a register changed) reads the page
//!   (from the hot-page cache) under the key's lock and writes only the pairs that raise
//!   a register; pipelined and concurrent `PFADD`s of one key run as one such call;
//! - `PFMERGE` reads each source's page in turn (cached pages are shared, not copied)
//!   into one union and writes it to the destination as one operand.

#[cfg(feature = "baselines")]
mod baseline;

use crate::error::{Error, HllError, Result};
use crate::keys;
use crate::meta::{KeyType, Meta, Params};
use crate::store::{wrong_kind, KeyGuard, Store};
use rocksketch_merge::hll::{self, redis, HllOps, Registers};
use rocksketch_merge::Page;
use std::collections::BTreeMap;
use std::sync::Arc;

const WHAT: &str = "HyperLogLog page";

/// A handle on the HyperLogLog at one key. Creating the handle reads nothing.
pub struct Hll {
    store: Store,
    ns: u16,
    key: Vec<u8>,
}

handle_constructors!(hll, Hll, "HyperLogLog");

impl Hll {
    pub(crate) fn new(store: Store, ns: u16, key: Vec<u8>) -> Hll {
        Hll { store, ns, key }
    }

    /// The key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// Adds `items` (`PFADD`), creating the key if missing: whether a register changed
    /// or the key was created, as Redis answers.
    ///
    /// ```
    /// # fn main() -> rocksketch::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let store = rocksketch::Store::open(dir.path(), Default::default())?;
    /// let visitors = store.hll("visitors");
    /// assert!(visitors.add(&["alice", "bob"])?);
    /// assert!(!visitors.add(&["alice"])?);
    /// visitors.add_blind(&["carol"])?;
    /// assert_eq!(visitors.count()?, 3);
    /// # Ok(()) }
    /// ```
    pub fn add<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<bool> {
        Ok(self.add_each(&[items])?.first().copied().unwrap_or(false))
    }

    /// Several `PFADD`s in order, each answered as if run alone: one lock, one read of
    /// the page and one write for all of them.
    pub fn add_each<I: AsRef<[u8]>>(&self, adds: &[&[I]]) -> Result<Vec<bool>> {
        let guard = self.store.lock(self.ns, &self.key);
        let (meta, created) = match guard.typed_meta(KeyType::Hll)? {
            Some(meta) => (meta, false),
            // Written with the first raise (or alone): a failed write creates nothing.
            None => (guard.create_with_first_write(Params::Hll)?, true),
        };
        let page_key = self.page_key(&meta);
        let page = self.read(&page_key)?;
        let regs = page.as_hll().ok_or_else(|| wrong_kind(&self.key, WHAT))?;
        // The registers this call raises, by register: what later adds compare with.
        let mut raised: BTreeMap<u16, u8> = BTreeMap::new();
        let mut answers = Vec::with_capacity(adds.len());
        for (n, items) in adds.iter().enumerate() {
            let mut changed = created && n == 0;
            for item in items.iter() {
                let (index, rank) = hll::position(item.as_ref());
                let now = raised
                    .get(&index)
                    .copied()
                    .unwrap_or_else(|| regs.get(usize::from(index)));
                if rank > now {
                    raised.insert(index, rank);
                    changed = true;
                }
            }
            answers.push(changed);
        }
        // The write applies its operand to the cached page in place: let go of it first.
        drop(page);
        if raised.is_empty() {
            guard.write_pending()?;
        } else {
            let mut batch = guard.batch()?;
            let ops = HllOps::pairs(raised.into_iter().collect()).map_err(Error::encode(WHAT))?;
            batch.merge_page(page_key, ops.encode());
            self.store.write(batch)?;
        }
        Ok(answers)
    }

    /// Adds `items` without answering (for embedders): one operand, no read, under the
    /// key's shared lock (the exclusive one only to create a missing key).
    pub fn add_blind<I: AsRef<[u8]>>(&self, items: &[I]) -> Result<()> {
        self.raise_blind(HllOps::add(items))
    }

    /// Writes `ops` to the page, creating the key if missing.
    fn raise_blind(&self, ops: HllOps) -> Result<()> {
        let shared = self.store.share(self.ns, &self.key);
        let (guard, meta) = match shared.typed_meta(KeyType::Hll)? {
            Some(meta) => (shared, meta),
            None => {
                drop(shared);
                let guard = self.store.lock(self.ns, &self.key);
                let meta = match guard.typed_meta(KeyType::Hll)? {
                    Some(meta) => meta,
                    None => guard.create_with_first_write(Params::Hll)?,
                };
                (guard, meta)
            }
        };
        let mut batch = guard.batch()?;
        batch.merge_page(self.page_key(&meta), ops.encode());
        self.store.write(batch)
    }

    /// The estimated number of distinct items added (`PFCOUNT key`): 0 for a missing key.
    pub fn count(&self) -> Result<u64> {
        Ok(self.with_registers(Registers::count)?.unwrap_or(0))
    }

    /// A copy of the registers, `None` for a missing key (`PFDEBUG GETREG`).
    pub fn registers(&self) -> Result<Option<Registers>> {
        self.with_registers(Registers::clone)
    }

    /// The string Redis's `GET` gives for these registers (`HYLL` header, sparse or
    /// dense as Redis keeps them, the cardinality cached); `None` for a missing key.
    pub fn export(&self) -> Result<Option<Vec<u8>>> {
        self.with_registers(redis::export)
    }

    /// Replaces the key with the HyperLogLog in a Redis string (`SET key value`), after
    /// checking it: a string without Redis's magic is [`HllError::NotHll`], one whose
    /// registers do not decode [`HllError::Corrupt`]. The key loses any expiry.
    pub fn import(&self, string: &[u8]) -> Result<()> {
        let regs = redis::import(string).map_err(|_| match redis::looks_like_hll(string) {
            true => HllError::Corrupt,
            false => HllError::NotHll,
        })?;
        let guard = self.store.lock(self.ns, &self.key);
        let meta = guard.new_meta(Params::Hll)?;
        let mut batch = self.store.batch()?;
        batch.put_page(self.page_key(&meta), regs.encode());
        guard.put_meta(meta, batch)
    }

    /// Raises this key's registers to the union of `sources` and its own (`PFMERGE`),
    /// creating it if missing. Each source is read in turn under its own lock (a missing
    /// one is empty, another type `WRONGTYPE` before anything is written); the union
    /// is written as one operand.
    pub fn merge_from<K: AsRef<[u8]>>(&self, sources: &[K]) -> Result<()> {
        let mut union = Registers::new();
        self.union_into(&mut union)?;
        for source in sources {
            Hll::new(self.store.clone(), self.ns, source.as_ref().to_vec())
                .union_into(&mut union)?;
        }
        self.raise_blind(HllOps::of(union))
    }

    /// Raises `union` by this key's registers (nothing for a missing key).
    fn union_into(&self, union: &mut Registers) -> Result<()> {
        self.with_registers(|regs| union.merge(regs)).map(|_| ())
    }

    /// Runs `answer` on the registers under the key's shared lock; `None` if missing.
    fn with_registers<T>(&self, answer: impl FnOnce(&Registers) -> T) -> Result<Option<T>> {
        let guard = self.store.share(self.ns, &self.key);
        let Some(meta) = self.meta(&guard)? else {
            return Ok(None);
        };
        let page = self.read(&self.page_key(&meta))?;
        let regs = page.as_hll().ok_or_else(|| wrong_kind(&self.key, WHAT))?;
        Ok(Some(answer(regs)))
    }

    fn meta(&self, guard: &KeyGuard) -> Result<Option<Meta>> {
        guard.typed_meta(KeyType::Hll)
    }

    fn page_key(&self, meta: &Meta) -> Vec<u8> {
        keys::page_key(
            &keys::version_prefix(self.ns, &self.key, meta.version),
            0,
            0,
        )
    }

    /// The page (a page never written reads, and is cached, as empty registers).
    fn read(&self, page_key: &[u8]) -> Result<Arc<Page>> {
        let empty = || Page::Hll(Registers::new());
        let page = self
            .store
            .read_pages_or(&self.key, WHAT, &[page_key.to_vec()], empty)?
            .pop()
            .flatten();
        Ok(page.unwrap_or_else(|| Arc::new(empty())))
    }
}

impl crate::store::Namespace {
    /// The estimated number of distinct items in the union of the HyperLogLogs at
    /// `keys` (`PFCOUNT k1 k2 ...`): missing keys are empty, another type `WRONGTYPE`.
    pub fn hll_count<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<u64> {
        let mut union = Registers::new();
        for key in keys {
            self.hll(key).union_into(&mut union)?;
        }
        Ok(union.count())
    }
}

impl Store {
    /// [`crate::store::Namespace::hll_count`] in namespace 0.
    pub fn hll_count<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<u64> {
        self.ns(0).hll_count(keys)
    }
}
