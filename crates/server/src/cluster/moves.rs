//! Slots on the move: the one this node migrates (and the write pause of its
//! hand-over), the one it imports, and those already moved before the controller's next
//! topology says so.
//!
//! From the hand-over until the controller pushes a topology that gives the slot to
//! its new node, the topology still names this node, so the source answers the slot's
//! commands `-ASK <slot> <host>:<port>` (Redis's redirection for one command, the
//! client's slot map unchanged) and the target serves the slot it imported. Both are
//! kept in `cluster-moves.conf` beside the topology, so a restart in between keeps
//! them. Routing reads one atomic flag when nothing moves.

use super::write_atomically;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

const FILE: &str = "cluster-moves.conf";

/// Redis's and Kvrocks' answer to a write during the hand-over's pause.
pub(crate) const TRYAGAIN: &str =
    "TRYAGAIN Can't write to slot being migrated which is in write forbidden phase";

/// The latest migration from this node, as `CLUSTER INFO` shows it.
pub(crate) struct Migration {
    pub(crate) slot: u16,
    pub(crate) to: String,
    /// `start`, `success` or `fail` (Kvrocks' words).
    pub(crate) state: &'static str,
    pub(crate) bytes: u64,
    pub(crate) pause_us: u64,
    pub(crate) error: String,
}

/// The latest import to this node: its slot, the node it comes from and its state
/// (`start`, `success` or `error`).
pub(crate) struct Import {
    pub(crate) slot: u16,
    pub(crate) from: String,
    pub(crate) state: &'static str,
}

#[derive(Default)]
struct State {
    migration: Option<Migration>,
    /// The slot whose writes are paused for the hand-over.
    frozen: Option<u16>,
    /// Slots handed over: their new node's `host:port`.
    migrated: BTreeMap<u16, String>,
    import: Option<Import>,
    /// Slots imported: the id of the node each came from.
    imported: BTreeMap<u16, String>,
}

/// What routing must know of moving slots.
pub(crate) enum Moving {
    /// Nothing: route by the topology.
    No,
    /// Paused for a hand-over: writes answer `TRYAGAIN`.
    Frozen,
    /// Handed over to `host:port`.
    Migrated(String),
    /// Imported here: served though the topology names another node.
    Imported,
}

pub(crate) struct Moves {
    /// Whether anything is moving or moved: routing looks no further when not.
    active: AtomicBool,
    state: Mutex<State>,
    file: PathBuf,
}

impl Moves {
    pub(crate) fn open(dir: &Path) -> io::Result<Moves> {
        let file = dir.join(FILE);
        let mut state = State::default();
        match std::fs::read_to_string(&file) {
            Ok(text) => load(&text, &mut state).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: {e}", file.display()),
                )
            })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let moves = Moves {
            active: AtomicBool::new(false),
            state: Mutex::new(state),
            file,
        };
        moves.refresh(&moves.state.lock());
        Ok(moves)
    }

    /// What routing must know of `slot`.
    pub(crate) fn moving(&self, slot: u16) -> Moving {
        if !self.active.load(Ordering::Acquire) {
            return Moving::No;
        }
        let state = self.state.lock();
        if let Some(to) = state.migrated.get(&slot) {
            Moving::Migrated(to.clone())
        } else if state.frozen == Some(slot) {
            Moving::Frozen
        } else if state.imported.contains_key(&slot) {
            Moving::Imported
        } else {
            Moving::No
        }
    }

    /// `CLUSTER INFO`'s lines for the latest migration and import, as Kvrocks words
    /// them (with the bytes sent and the hand-over's write pause besides). The slot is
    /// given under both of Kvrocks' names: `migrating_slot` (what kvrocks_controller
    /// reads) and `migrating_slot(s)` (what newer Kvrocks nodes print); the same for imports.
    pub(crate) fn info(&self) -> String {
        let state = self.state.lock();
        let mut out = String::new();
        if let Some(m) = &state.migration {
            out.push_str(&format!(
                "migrating_slot: {0}\r\nmigrating_slot(s): {0}\r\ndestination_node: {1}\r\n\
                 migrating_state: {2}\r\nmigrating_bytes: {3}\r\nmigrating_pause_us: {4}\r\n",
                m.slot, m.to, m.state, m.bytes, m.pause_us
            ));
            if !m.error.is_empty() {
                out.push_str(&format!("migrating_error: {}\r\n", m.error));
            }
        }
        if let Some(i) = &state.import {
            out.push_str(&format!(
                "importing_slot: {0}\r\nimporting_slot(s): {0}\r\nimport_state: {1}\r\n",
                i.slot, i.state
            ));
        }
        out
    }

    /// Whether a slot's writes are paused for a hand-over.
    pub(crate) fn is_frozen(&self) -> bool {
        self.active.load(Ordering::Acquire) && self.state.lock().frozen.is_some()
    }

    /// Whether `slot` was imported here and the topology does not say so yet.
    pub(crate) fn is_imported(&self, slot: u16) -> bool {
        self.state.lock().imported.contains_key(&slot)
    }

    /// Whether `slot` was handed over already.
    pub(crate) fn is_migrated(&self, slot: u16) -> bool {
        self.state.lock().migrated.contains_key(&slot)
    }

    /// Starts a migration of `slot` to node `to`, unless one is running.
    pub(crate) fn begin_migration(&self, slot: u16, to: &str) -> bool {
        let mut state = self.state.lock();
        if state.migration.as_ref().is_some_and(|m| m.state == "start") {
            return false;
        }
        state.migration = Some(Migration {
            slot,
            to: to.to_owned(),
            state: "start",
            bytes: 0,
            pause_us: 0,
            error: String::new(),
        });
        true
    }

    /// Updates the running migration.
    pub(crate) fn update(&self, change: impl FnOnce(&mut Migration)) {
        if let Some(m) = self.state.lock().migration.as_mut() {
            change(m);
        }
    }

    /// Pauses the slot's writes (they answer `TRYAGAIN`).
    pub(crate) fn freeze(&self, slot: u16) {
        let mut state = self.state.lock();
        state.frozen = Some(slot);
        self.refresh(&state);
    }

    /// Ends the running migration: handed over to `addr` (saved before the pause ends),
    /// or failed with `error` (the slot's writes resume here).
    pub(crate) fn end_migration(&self, outcome: Result<String, String>) -> io::Result<()> {
        let mut state = self.state.lock();
        let saved = match outcome {
            Ok(addr) => {
                let slot = state.migration.as_ref().map(|m| m.slot);
                if let Some(slot) = slot {
                    state.migrated.insert(slot, addr);
                }
                let saved = self.save(&state);
                if let Some(m) = state.migration.as_mut() {
                    m.state = if saved.is_ok() { "success" } else { "fail" };
                }
                if saved.is_err() {
                    // Not saved: not handed over, the slot stays here.
                    slot.map(|slot| state.migrated.remove(&slot));
                }
                saved
            }
            Err(error) => {
                if let Some(m) = state.migration.as_mut() {
                    m.state = "fail";
                    m.error = error;
                }
                Ok(())
            }
        };
        state.frozen = None;
        self.refresh(&state);
        saved
    }

    /// Starts importing `slot` from node `from`, unless an import is running.
    pub(crate) fn begin_import(&self, slot: u16, from: &str) -> bool {
        let mut state = self.state.lock();
        if state.import.as_ref().is_some_and(|i| i.state == "start") {
            return false;
        }
        state.import = Some(Import {
            slot,
            from: from.to_owned(),
            state: "start",
        });
        true
    }

    /// Whether `slot` is being imported now.
    pub(crate) fn is_importing(&self, slot: u16) -> bool {
        let state = self.state.lock();
        state
            .import
            .as_ref()
            .is_some_and(|i| i.slot == slot && i.state == "start")
    }

    /// Ends the running import of `slot`: served here from now on (saved first), or
    /// failed. Whether it was running.
    pub(crate) fn end_import(&self, slot: u16, success: bool) -> io::Result<bool> {
        let mut state = self.state.lock();
        let Some(import) = state
            .import
            .as_mut()
            .filter(|i| i.slot == slot && i.state == "start")
        else {
            return Ok(false);
        };
        import.state = if success { "success" } else { "error" };
        let from = import.from.clone();
        let saved = if success {
            state.imported.insert(slot, from);
            let saved = self.save(&state);
            if saved.is_err() {
                state.imported.remove(&slot);
                if let Some(i) = state.import.as_mut() {
                    i.state = "error";
                }
            }
            saved
        } else {
            Ok(())
        };
        self.refresh(&state);
        saved.map(|()| true)
    }

    /// Takes back a finished import of `slot` (its source could not save the
    /// hand-over): no longer served here. Whether it was imported.
    pub(crate) fn revoke_import(&self, slot: u16) -> io::Result<bool> {
        let mut state = self.state.lock();
        if state.imported.remove(&slot).is_none() {
            return Ok(false);
        }
        if let Some(i) = state.import.as_mut().filter(|i| i.slot == slot) {
            i.state = "error";
        }
        self.refresh(&state);
        self.save(&state).map(|()| true)
    }

    /// Follows a new topology, given who owns each slot there (and this node's id):
    /// handed-over slots now owned elsewhere are forgotten, and returned for their
    /// records to be dropped; imported slots now owned here, or by neither this node
    /// nor their source, are forgotten (the latter returned to be dropped too).
    pub(crate) fn follow(&self, owner: impl Fn(u16) -> Option<String>, me: &str) -> Vec<u16> {
        let mut state = self.state.lock();
        let mut drop = Vec::new();
        let before = (state.migrated.len(), state.imported.len());
        state.migrated.retain(|&slot, _| {
            let mine = owner(slot).as_deref() == Some(me);
            if !mine {
                drop.push(slot);
            }
            mine
        });
        state.imported.retain(|&slot, from| {
            let now = owner(slot);
            if now.as_deref() != Some(me) && now.as_deref() != Some(from.as_str()) {
                drop.push(slot);
            }
            now.as_deref() == Some(from.as_str())
        });
        if before != (state.migrated.len(), state.imported.len()) {
            if let Err(e) = self.save(&state) {
                log::warn!("saving the moved slots failed: {e}");
            }
        }
        self.refresh(&state);
        drop
    }

    fn refresh(&self, state: &State) {
        let active =
            state.frozen.is_some() || !state.migrated.is_empty() || !state.imported.is_empty();
        self.active.store(active, Ordering::Release);
    }

    fn save(&self, state: &State) -> io::Result<()> {
        let mut text = String::new();
        for (slot, addr) in &state.migrated {
            text.push_str(&format!("migrated {slot} {addr}\n"));
        }
        for (slot, from) in &state.imported {
            text.push_str(&format!("imported {slot} {from}\n"));
        }
        write_atomically(&self.file, &text)
    }
}

fn load(text: &str, state: &mut State) -> Result<(), String> {
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let slot = |s: &str| {
            s.parse::<u16>()
                .ok()
                .filter(|&n| usize::from(n) < super::slot::SLOTS)
                .ok_or_else(|| format!("bad slot in '{line}'"))
        };
        match words.as_slice() {
            ["migrated", s, addr] => state.migrated.insert(slot(s)?, (*addr).to_owned()),
            ["imported", s, from] => state.imported.insert(slot(s)?, (*from).to_owned()),
            _ => return Err(format!("unreadable line '{line}'")),
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_survive_a_restart_and_end_with_the_topology() {
        let dir = tempfile::tempdir().unwrap();
        let moves = Moves::open(dir.path()).unwrap();
        assert!(matches!(moves.moving(7), Moving::No));
        assert!(moves.begin_migration(7, "b"));
        assert!(!moves.begin_migration(8, "b"), "one at a time");
        moves.freeze(7);
        assert!(matches!(moves.moving(7), Moving::Frozen));
        assert!(matches!(moves.moving(8), Moving::No));
        moves.end_migration(Ok("h:2".into())).unwrap();
        assert!(moves.begin_import(9, "c"));
        assert!(moves.end_import(9, true).unwrap());
        assert!(!moves.end_import(9, true).unwrap(), "not running any more");
        let moves = Moves::open(dir.path()).unwrap();
        assert!(matches!(moves.moving(7), Moving::Migrated(a) if a == "h:2"));
        assert!(matches!(moves.moving(9), Moving::Imported));
        // The controller's topology: 7 with its new node, 9 still with its source.
        let owner = |slot| Some(if slot == 7 { "b" } else { "c" }.to_owned());
        assert_eq!(moves.follow(owner, "a"), vec![7]);
        assert!(matches!(moves.moving(9), Moving::Imported));
        assert!(moves.follow(|_| Some("a".to_owned()), "a").is_empty());
        let moves = Moves::open(dir.path()).unwrap();
        assert!(matches!(moves.moving(7), Moving::No));
        assert!(matches!(moves.moving(9), Moving::No));
        assert!(!moves.active.load(Ordering::Relaxed));
    }
}
