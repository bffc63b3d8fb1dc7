//! `SCAN`'s cursors, kept server-side.

use std::collections::{HashMap, VecDeque};

/// `SCAN` cursors: Redis clients treat a cursor as an opaque integer, so each one names
/// the last key a scan returned. The table is bounded in count and in bytes (a key may
/// be 512 MiB); the oldest cursors go first.
#[derive(Default)]
pub(crate) struct Cursors {
    next: u64,
    positions: HashMap<u64, (u16, Vec<u8>)>,
    order: VecDeque<u64>,
    bytes: usize,
}

/// Cursors kept at once; a scan whose cursor was evicted gets `ERR invalid cursor`.
const MAX_CURSORS: usize = 100_000;
/// Bytes of key names the cursors may hold at once (the newest cursor is kept even
/// when its key alone is larger).
const MAX_CURSOR_BYTES: usize = 16 << 20;

impl Cursors {
    pub(super) fn save(&mut self, ns: u16, last: Vec<u8>) -> u64 {
        self.next += 1;
        let id = self.next;
        self.bytes += last.len();
        self.positions.insert(id, (ns, last));
        self.order.push_back(id);
        // The newest stays, whatever its size, so every scan can go on.
        while self.order.len() > 1
            && (self.order.len() > MAX_CURSORS || self.bytes > MAX_CURSOR_BYTES)
        {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some((_, key)) = self.positions.remove(&old) {
                self.bytes -= key.len();
            }
        }
        id
    }

    pub(super) fn get(&self, ns: u16, id: u64) -> Option<Vec<u8>> {
        match self.positions.get(&id) {
            Some((cursor_ns, last)) if *cursor_ns == ns => Some(last.clone()),
            _ => None,
        }
    }
}
