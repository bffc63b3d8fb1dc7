//! Maps and sets for the short-lived, internally keyed collections of the hot paths
//! (pages by position, bit positions, connections by token): foldhash, seeded per
//! process, instead of SipHash. Collections keyed by bytes a client chose keep std's
//! SipHash, whose keys an attacker cannot aim collisions at.

pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
pub(crate) type FastSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
