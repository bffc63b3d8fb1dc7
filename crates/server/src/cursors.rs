//! `SCAN`'s cursors, kept server-side, each owned by the connection that made it.
//!
//! Redis's cursors are stateless positions in its hash table. Ours resume a scan in key
//! order, and a key name does not fit the integer a cursor must be (clients parse it as
//! a 64-bit, in JavaScript a 53-bit, number), so each cursor names a saved position.
//! Saved positions are owned: a connection keeps at most [`PER_CLIENT`] cursors and
//! [`PER_CLIENT_BYTES`] of key names (its oldest go first), and its cursors go when it
//! closes. One client's scans can only ever evict its own cursors; any connection may
//! use any live cursor (connection pools send a scan's steps on different connections).

use std::collections::{HashMap, VecDeque};

/// Cursors one connection keeps at once; a scan whose cursor was evicted gets
/// `ERR invalid cursor`.
const PER_CLIENT: usize = 64;
/// Bytes of key names one connection's cursors may hold (its newest cursor is kept even
/// when its key alone is larger).
const PER_CLIENT_BYTES: usize = 1 << 20;

/// A saved position: the keyspace it is of (a database's first namespace), and the
/// namespace and key it resumes after.
struct Position {
    scope: u16,
    ns: u16,
    last: Vec<u8>,
}

/// The cursors of every connection.
#[derive(Default)]
pub(crate) struct Cursors {
    next: u64,
    positions: HashMap<u64, Position>,
    /// Each owner's cursors, oldest first, and the bytes their keys take.
    owners: HashMap<u64, (VecDeque<u64>, usize)>,
}

impl Cursors {
    /// Saves the position after `(ns, last)` in keyspace `scope` for connection
    /// `owner`; the cursor's id.
    pub(super) fn save(&mut self, owner: u64, scope: u16, (ns, last): (u16, Vec<u8>)) -> u64 {
        self.next += 1;
        let id = self.next;
        let (order, bytes) = self.owners.entry(owner).or_default();
        *bytes += last.len();
        order.push_back(id);
        self.positions.insert(id, Position { scope, ns, last });
        // The newest stays, whatever its size, so every scan can go on.
        while order.len() > 1 && (order.len() > PER_CLIENT || *bytes > PER_CLIENT_BYTES) {
            let Some(old) = order.pop_front() else {
                break;
            };
            if let Some(position) = self.positions.remove(&old) {
                *bytes -= position.last.len();
            }
        }
        id
    }

    /// The namespace and key a cursor resumes after, if the cursor is live and of
    /// keyspace `scope`.
    pub(super) fn get(&self, scope: u16, id: u64) -> Option<(u16, Vec<u8>)> {
        match self.positions.get(&id) {
            Some(p) if p.scope == scope => Some((p.ns, p.last.clone())),
            _ => None,
        }
    }

    /// Forgets the cursors of a connection that closed.
    pub(super) fn drop_owner(&mut self, owner: u64) {
        if let Some((order, _)) = self.owners.remove(&owner) {
            for id in order {
                self.positions.remove(&id);
            }
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.positions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_client_cannot_evict_another_clients_cursors() {
        let mut cursors = Cursors::default();
        let kept = cursors.save(1, 0, (0, b"a".to_vec()));
        for n in 0..100_000u32 {
            cursors.save(2, 0, (0, n.to_be_bytes().to_vec()));
        }
        assert_eq!(cursors.get(0, kept), Some((0, b"a".to_vec())));
        assert!(cursors.len() <= 1 + PER_CLIENT);
        // Long names: bounded by bytes too, and still not another's.
        for _ in 0..100 {
            cursors.save(2, 0, (0, vec![b'x'; 100 << 10]));
        }
        assert_eq!(cursors.get(0, kept), Some((0, b"a".to_vec())));
        let bytes: usize = cursors.positions.values().map(|p| p.last.len()).sum();
        assert!(bytes <= 1 + PER_CLIENT_BYTES + (100 << 10));
    }

    #[test]
    fn a_cursor_works_from_any_connection_until_its_owner_closes() {
        let mut cursors = Cursors::default();
        let id = cursors.save(7, 3, (5, b"k".to_vec()));
        assert_eq!(cursors.get(3, id), Some((5, b"k".to_vec())));
        assert_eq!(cursors.get(4, id), None, "another database's cursor");
        cursors.drop_owner(7);
        assert_eq!(cursors.get(3, id), None);
        assert_eq!(cursors.len(), 0);
        assert!(cursors.owners.is_empty());
    }
}
