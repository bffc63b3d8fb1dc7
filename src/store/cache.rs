//! A bounded map from byte keys to values, shared by the metadata cache and the blind
//! writers' count hints. When full, an arbitrary entry makes room: a miss costs one
//! point read, so a simple policy is enough.

use parking_lot::RwLock;
use std::collections::HashMap;

pub(crate) struct BoundedMap<V> {
    map: RwLock<HashMap<Vec<u8>, V>>,
    capacity: usize,
}

impl<V: Clone> BoundedMap<V> {
    /// A map of at most `capacity` entries (0 keeps nothing).
    pub(crate) fn new(capacity: usize) -> BoundedMap<V> {
        BoundedMap {
            map: RwLock::new(HashMap::new()),
            capacity,
        }
    }

    pub(crate) fn get(&self, key: &[u8]) -> Option<V> {
        self.map.read().get(key).cloned()
    }

    /// Inserts or replaces `key`'s value.
    pub(crate) fn insert(&self, key: Vec<u8>, value: V) {
        if self.capacity == 0 {
            return;
        }
        let mut map = self.map.write();
        make_room(&mut map, self.capacity, &key);
        map.insert(key, value);
    }

    /// Inserts `value` unless another thread got there first; returns the value kept
    /// (`value` itself when the map keeps nothing).
    pub(crate) fn get_or_insert(&self, key: Vec<u8>, value: V) -> V {
        if self.capacity == 0 {
            return value;
        }
        let mut map = self.map.write();
        make_room(&mut map, self.capacity, &key);
        map.entry(key).or_insert(value).clone()
    }

    pub(crate) fn remove(&self, key: &[u8]) {
        self.map.write().remove(key);
    }

    pub(crate) fn clear(&self) {
        self.map.write().clear();
    }
}

/// Drops an arbitrary entry if the map is full and `key` is not in it.
fn make_room<V>(map: &mut HashMap<Vec<u8>, V>, capacity: usize, key: &[u8]) {
    if map.len() >= capacity && !map.contains_key(key) {
        if let Some(victim) = map.keys().next().cloned() {
            map.remove(&victim);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BoundedMap;

    #[test]
    fn stays_within_its_capacity_and_keeps_the_first_insert() {
        let map = BoundedMap::new(2);
        map.insert(b"a".to_vec(), 1);
        map.insert(b"b".to_vec(), 2);
        map.insert(b"c".to_vec(), 3);
        let kept = [b"a", b"b", b"c"]
            .iter()
            .filter(|k| map.get(&k[..]).is_some())
            .count();
        assert_eq!(kept, 2);
        assert_eq!(map.get(b"c"), Some(3));
        assert_eq!(map.get_or_insert(b"c".to_vec(), 9), 3);
        map.remove(b"c");
        assert_eq!(map.get(b"c"), None);
        let none = BoundedMap::new(0);
        none.insert(b"a".to_vec(), 1);
        assert_eq!(none.get(b"a"), None);
        assert_eq!(none.get_or_insert(b"a".to_vec(), 7), 7);
    }
}
