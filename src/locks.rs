//! Striped per-key locks: creation, deletion and read-dependent replies of one key are
//! serialized; blind writes take none.

use parking_lot::{Mutex, MutexGuard};

const STRIPES: usize = 1024;

/// A fixed array of mutexes indexed by a hash of the key.
pub struct KeyLocks {
    stripes: Box<[Mutex<()>]>,
}

impl Default for KeyLocks {
    fn default() -> KeyLocks {
        KeyLocks {
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
        }
    }
}

impl KeyLocks {
    /// Locks the stripe of `key` in namespace `ns`.
    pub fn lock(&self, ns: u16, key: &[u8]) -> MutexGuard<'_, ()> {
        let h = rocksketch_merge::hash::murmur64a(key, u64::from(ns));
        self.stripes[(h % STRIPES as u64) as usize].lock()
    }
}
