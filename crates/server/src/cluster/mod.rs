//! Cluster mode: this server as a node of a Redis Cluster whose topology a controller
//! (Apache Kvrocks' `kvrocks_controller`, or a test playing it) pushes with `CLUSTERX`.
//!
//! Clients see Redis Cluster: each key hashes to one of 16384 slots ([`slot`]); a
//! command whose keys are in a slot another node serves is answered `-MOVED`, one
//! whose keys span slots `-CROSSSLOT`, one whose slot nobody serves `-CLUSTERDOWN`.
//! A replica serves reads of its primary's slots to connections that sent `READONLY`.
//! The topology is read on every keyed command without a lock (an [`ArcSwap`]) and
//! replaced whole by the controller's commands, which also write it to
//! `cluster-nodes.conf` in the data directory before they answer.
//!
//! Slot `s` keeps its keys in namespace [`slot::CLUSTER_NS`] `+ s`: every metadata
//! record and page of one slot is one key range (what a slot's migration copies and
//! then drops with one range delete per column family).

pub(crate) mod commands;
mod import;
mod migrate;
mod moves;
pub(crate) mod slot;
pub(crate) mod topology;

pub(crate) use import::{link_closed, ImportLink};

use arc_swap::ArcSwap;
use moves::{Moves, Moving};
use parking_lot::Mutex;
use rocksketch::command::table::Spec;
use rocksketch::command::Reply;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use topology::Topology;

/// The topology file in the data directory (Kvrocks' name and format).
const FILE: &str = "cluster-nodes.conf";

/// Redis's replies when a command cannot run here.
const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";
const UNSERVED: &str = "CLUSTERDOWN Hash slot not served";

/// A node's view of its cluster.
pub(crate) struct Cluster {
    topology: ArcSwap<Topology>,
    file: PathBuf,
    /// Changes one at a time, each written to the file before the next.
    changes: Mutex<()>,
    /// Slots migrating, imported or handed over.
    moves: Moves,
}

impl Cluster {
    /// The topology saved in `dir`, or none yet (with a new id for this node, saved).
    pub(crate) fn open(dir: &Path) -> io::Result<Cluster> {
        let file = dir.join(FILE);
        let topology = match std::fs::read_to_string(&file) {
            Ok(text) => Topology::load(&text).map_err(|e| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: {e}", file.display()),
                )
            })?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let fresh = Topology::empty(crate::replication::new_id());
                write_atomically(&file, &fresh.dump())?;
                fresh
            }
            Err(e) => return Err(e),
        };
        Ok(Cluster {
            topology: ArcSwap::from_pointee(topology),
            file,
            changes: Mutex::new(()),
            moves: Moves::open(dir)?,
        })
    }

    /// The topology now.
    pub(crate) fn topology(&self) -> Arc<Topology> {
        self.topology.load_full()
    }

    /// Replaces the topology with what `change` makes of it, saved first; the new one.
    pub(crate) fn change(
        &self,
        change: impl FnOnce(&Topology) -> Result<Option<Topology>, String>,
    ) -> Result<Arc<Topology>, String> {
        let _one = self.changes.lock();
        let current = self.topology.load_full();
        let Some(next) = change(&current)? else {
            return Ok(current);
        };
        write_atomically(&self.file, &next.dump())
            .map_err(|e| format!("saving the cluster topology failed: {e}"))?;
        let next = Arc::new(next);
        self.topology.store(next.clone());
        Ok(next)
    }

    /// Where a command on `keys` runs: `Ok(Some(slot))` here, `Ok(None)` here for a
    /// command without keys, or the redirection or error to answer. A replica serves
    /// its primary's slots to a `READONLY` connection's reads; a slot on the move is
    /// answered as [`moves`] says.
    pub(crate) fn route<'k>(
        &self,
        mut keys: impl Iterator<Item = &'k [u8]>,
        write: bool,
        readonly: bool,
    ) -> Result<Option<u16>, Reply> {
        let Some(first) = keys.next() else {
            return Ok(None);
        };
        let slot = slot::key_slot(first);
        if keys.any(|key| slot::key_slot(key) != slot) {
            return Err(Reply::Error(CROSSSLOT.to_owned()));
        }
        let topology = self.topology.load();
        let Some(owner) = topology.owner(slot) else {
            return Err(Reply::Error(UNSERVED.to_owned()));
        };
        if owner.id == topology.myid {
            return self.moving(slot, write).map(|()| Some(slot));
        }
        if matches!(self.moves.moving(slot), Moving::Imported) {
            return Ok(Some(slot));
        }
        let my_primary = topology.me().and_then(|me| me.primary.as_deref());
        if readonly && !write && my_primary == Some(owner.id.as_str()) {
            return Ok(Some(slot));
        }
        Err(moved(slot, &owner.host, owner.port))
    }
}

impl Cluster {
    /// For a slot this node owns: whether a command runs, or the answer while the
    /// slot's hand-over pauses writes (`TRYAGAIN`) or once it moved (`-ASK`).
    fn moving(&self, slot: u16, write: bool) -> Result<(), Reply> {
        match self.moves.moving(slot) {
            Moving::No | Moving::Imported => Ok(()),
            Moving::Frozen if !write => Ok(()),
            Moving::Frozen => Err(Reply::Error(moves::TRYAGAIN.to_owned())),
            Moving::Migrated(to) => Err(Reply::Error(format!("ASK {slot} {to}"))),
        }
    }

    /// Follows a new topology in the slots on the move: the records of a slot handed
    /// over and now another node's go (one range delete per column family).
    pub(crate) fn follow_moves(&self, store: &rocksketch::Store, t: &Topology) {
        let owner = |slot| t.owner(slot).map(|n| n.id.clone());
        for slot in self.moves.follow(owner, &t.myid) {
            if let Err(e) = store.drop_ns(slot::CLUSTER_NS + slot) {
                log::warn!("dropping the records of slot {slot}, moved away, failed: {e}");
            }
        }
    }
}

/// Whether `reply` is the answer to a write while a slot's hand-over pauses writes.
pub(crate) fn is_paused(reply: &Reply) -> bool {
    matches!(reply, Reply::Error(text) if text == moves::TRYAGAIN)
}

/// The answer to a write a hand-over's pause stops (once it waited long enough).
pub(crate) const TRYAGAIN: &str = moves::TRYAGAIN;

/// Whether the topology saved in `dir` names this node a replica: a restarted replica
/// opens its store as one, so that it writes nothing of its own before it follows.
pub(crate) fn saved_as_replica(dir: &Path) -> bool {
    let saved = std::fs::read_to_string(dir.join(FILE)).ok();
    let topology = saved.and_then(|text| Topology::load(&text).ok());
    topology.is_some_and(|t| t.me().is_some_and(|me| me.primary.is_some()))
}

/// `-MOVED <slot> <host>:<port>`.
fn moved(slot: u16, host: &str, port: u16) -> Reply {
    Reply::Error(format!("MOVED {slot} {host}:{port}"))
}

/// Writes `text` to `path` whole or not at all, durably.
fn write_atomically(path: &Path, text: &str) -> io::Result<()> {
    use std::io::Write as _;
    let tmp = path.with_extension("conf.tmp");
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

impl crate::Shared {
    /// The namespace `key` lives in for a connection on database `db`: the database's,
    /// or in cluster mode its slot's.
    pub(crate) fn key_ns(&self, db: u16, key: &[u8]) -> u16 {
        match self.cluster {
            Some(_) => slot::CLUSTER_NS + slot::key_slot(key),
            None => db,
        }
    }

    /// Where `request` (of row `spec`) runs for a connection on database `db`: the
    /// namespace of its keys (the database's for one without keys), or the
    /// redirection or error to answer in cluster mode.
    pub(crate) fn route<H>(
        &self,
        spec: &Spec<H>,
        request: &[Vec<u8>],
        db: u16,
        readonly: bool,
    ) -> Result<u16, Reply> {
        let Some(cluster) = &self.cluster else {
            return Ok(db);
        };
        let write = spec.flags.contains(&"write");
        let slot = cluster.route(spec.all_keys(request), write, readonly)?;
        Ok(slot.map_or(db, |slot| slot::CLUSTER_NS + slot))
    }

    /// Whether a slot's hand-over pauses writes now.
    pub(crate) fn writes_paused(&self) -> bool {
        self.cluster.as_ref().is_some_and(|c| c.moves.is_frozen())
    }

    /// Routing checked again, under the transaction gate, for a request routed before
    /// (a batch across connections, a transaction's queue): the answer if a slot's
    /// hand-over paused or moved its slot since.
    pub(crate) fn reroute(&self, request: &[Vec<u8>]) -> Result<(), Reply> {
        let Some(cluster) = &self.cluster else {
            return Ok(());
        };
        let spec = request.first().and_then(|name| crate::table::lookup(name));
        let Some(spec) = spec else {
            return Ok(());
        };
        match spec.all_keys(request).next() {
            Some(key) => cluster.moving(slot::key_slot(key), spec.flags.contains(&"write")),
            None => Ok(()),
        }
    }

    /// The keyspace `DBSIZE`, `KEYS`, `SCAN` and `FLUSHDB` list for database `db`: its
    /// namespace, or in cluster mode every slot's.
    pub(crate) fn keyspace(&self, db: u16) -> rocksketch::Span {
        match self.cluster {
            Some(_) => {
                let last = slot::CLUSTER_NS + (slot::SLOTS as u16 - 1);
                self.store.span(slot::CLUSTER_NS, last)
            }
            None => self.store.span(db, db),
        }
    }
}

/// In cluster mode, Redis's error for a transaction whose commands' keys span slots
/// (each was routed when queued, so they all run here).
pub(crate) fn cross_slot(shared: &crate::Shared, queued: &[Vec<Vec<u8>>]) -> Option<Reply> {
    shared.cluster.as_ref()?;
    let mut slots = queued.iter().flat_map(|request| {
        let spec = request.first().and_then(|name| crate::table::lookup(name));
        spec.into_iter()
            .flat_map(move |spec| spec.all_keys(request))
            .map(slot::key_slot)
    });
    let first = slots.next()?;
    slots
        .any(|slot| slot != first)
        .then(|| Reply::Error(CROSSSLOT.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_saved_as_a_replica_restarts_as_one() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!saved_as_replica(dir.path()), "no topology yet");
        let cluster = Cluster::open(dir.path()).unwrap();
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        let nodes = format!("{a} h 1 master - 0-16383\n{b} h 2 slave {a}");
        let set = |me: &str| {
            let t = Topology::parse(&nodes, 1, me.to_owned()).unwrap();
            cluster.change(|_| Ok(Some(t))).unwrap();
        };
        set(&b);
        assert!(saved_as_replica(dir.path()));
        set(&a);
        assert!(!saved_as_replica(dir.path()));
    }
}
