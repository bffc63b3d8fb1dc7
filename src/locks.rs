//! Striped per-key reader-writer locks.
//!
//! Every operation on a key's data holds its stripe for as long as it uses the key's
//! version: blind writes and reads hold it **shared** (they never wait for each other),
//! creation, deletion, expiry, growth and read-dependent replies hold it **exclusive**.
//! So a delete can never land between a writer's look-up of the version and its write:
//! no operand is ever written under a version that was already deleted (it would be a
//! stray page that nothing reclaims), and no reply is computed from a version deleted
//! half-way through it.
//!
//! The stripes are not reentrant: a thread holding one must not take another (of any
//! key: two keys may share a stripe). The guard types make that the only way to reach
//! a key's metadata under the lock ([`crate::store::KeyGuard`]).

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

const STRIPES: usize = 1024;

/// A fixed array of reader-writer locks indexed by a hash of the key.
pub struct KeyLocks {
    stripes: Box<[RwLock<()>]>,
}

/// A held stripe, shared or exclusive.
pub enum Held<'a> {
    Shared(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    Exclusive(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
}

impl Default for KeyLocks {
    fn default() -> KeyLocks {
        KeyLocks {
            stripes: (0..STRIPES).map(|_| RwLock::new(())).collect(),
        }
    }
}

impl KeyLocks {
    fn index(&self, ns: u16, key: &[u8]) -> usize {
        let h = rocksketch_merge::hash::murmur64a(key, u64::from(ns));
        (h % STRIPES as u64) as usize
    }

    fn stripe(&self, ns: u16, key: &[u8]) -> &RwLock<()> {
        &self.stripes[self.index(ns, key)]
    }

    /// Locks the stripe of `key` in namespace `ns` exclusively.
    pub fn exclusive(&self, ns: u16, key: &[u8]) -> Held<'_> {
        Held::Exclusive(self.stripe(ns, key).write())
    }

    /// Locks the stripes of all `keys` exclusively, each once, in the stripes' order (so
    /// that two such calls never wait for each other crosswise). For a replica applying a
    /// primary's batch, whose readers take one stripe at a time.
    pub fn exclusive_many(&self, keys: &[(u16, &[u8])]) -> Vec<Held<'_>> {
        let mut stripes: Vec<usize> = keys.iter().map(|(ns, key)| self.index(*ns, key)).collect();
        stripes.sort_unstable();
        stripes.dedup();
        stripes
            .into_iter()
            .filter_map(|i| self.stripes.get(i))
            .map(|stripe| Held::Exclusive(stripe.write()))
            .collect()
    }

    /// Locks the stripe of `key` in namespace `ns` shared.
    pub fn shared(&self, ns: u16, key: &[u8]) -> Held<'_> {
        Held::Shared(self.stripe(ns, key).read())
    }
}
