//! Maps and sets with foldhash for the host's internal keys (connection tokens, batch
//! groups): keys a client does not choose, so a fast hasher is safe.

/// A `HashMap` with foldhash.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A `HashSet` with foldhash.
pub(crate) type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
