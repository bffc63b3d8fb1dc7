//! The source's side of a slot's migration (`CLUSTERX MIGRATE slot node-id`), run by
//! a thread of its own while the slot keeps serving here:
//!
//! 1. a link to the target, which starts importing (`CLUSTERX IMPORT slot 0`);
//! 2. the slot's namespace as of one snapshot, in chunks (`CLUSTERX APPLY slot chunk`:
//!    metadata and pages as they read, operands merged);
//! 3. the slot's writes since, from the write-ahead log (kept whole meanwhile:
//!    `Store::hold_logs`), round after round until a round finds little to send;
//! 4. the hand-over: the slot's writes pause (answered `TRYAGAIN`), the transaction
//!    gate taken and let go so that every write routed before the pause has finished,
//!    the log's last writes of the slot sent, the target told (`CLUSTERX IMPORT slot
//!    1`), and the slot recorded as handed over (saved) before the pause ends: its
//!    commands are answered `-ASK` from then on, until the controller's topology gives
//!    the slot to the target, when its records here go with one range delete per
//!    column family.
//!
//! Any failure before the target is told ends the migration as failed: the slot's
//! writes resume here and the target drops what it received.

use super::moves::Moves;
use super::slot::CLUSTER_NS;
use super::topology::Node;
use super::Cluster;
use crate::commands::err;
use crate::Shared;
use rocksketch::command::Reply;
use rocksketch::resp::stream as wire;
use std::io::{self, BufReader, BufWriter, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// About how many bytes one chunk of the copy holds.
const CHUNK: usize = 1 << 20;
/// A catch-up round that sends less than this ends the catching up.
const HANDOVER_BYTES: u64 = 256 << 10;
/// Catching up stops after this long even if the slot's writes outpace it (the
/// hand-over's pause then sends more).
const CATCH_UP_LIMIT: Duration = Duration::from_secs(30);
/// How long the target may take to answer.
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// Starts migrating `slot` to node `to`, checked as Kvrocks checks it.
pub(crate) fn start(
    shared: &Arc<Shared>,
    cluster: &Arc<Cluster>,
    slot: u16,
    to: &str,
) -> Result<(), Reply> {
    let topology = cluster.topology();
    let fail = |text: &str| Err(err(&format!("ERR {text}")));
    if cluster.moves.is_migrated(slot) {
        return fail("Can't migrate slot which has been migrated");
    }
    if topology
        .owner(slot)
        .is_none_or(|owner| owner.id != topology.myid)
    {
        return fail("Can't migrate slot which doesn't belong to me");
    }
    if topology.me().is_some_and(|me| me.primary.is_some()) {
        return fail("Slave can't migrate slot");
    }
    let Some(target) = topology.node(to).cloned() else {
        return fail("Can't find the destination node id");
    };
    if target.primary.is_some() {
        return fail("Can't migrate slot to a slave");
    }
    if target.id == topology.myid {
        return fail("Can't migrate slot to myself");
    }
    if !cluster.moves.begin_migration(slot, to) {
        return fail("There is already a migrating job");
    }
    let (shared, job_cluster) = (shared.clone(), cluster.clone());
    let spawned = std::thread::Builder::new()
        .name(format!("migrate-{slot}"))
        .spawn(move || {
            let moves = &job_cluster.moves;
            // A panic must not leave the slot's writes paused: it fails the migration.
            let run = || migrate(&shared, moves, slot, &target);
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
                .unwrap_or_else(|_| Err("the migration thread panicked".to_owned()));
            if let Err(e) = outcome {
                log::warn!("migrating slot {slot} to {} failed: {e}", target.id);
                let _ = moves.end_migration(Err(e));
            }
        });
    if let Err(e) = spawned {
        let _ = cluster.moves.end_migration(Err(e.to_string()));
        return fail(&format!("a migration thread did not start: {e}"));
    }
    Ok(())
}

/// Runs a migration to its end but for a failure, which the caller records.
fn migrate(shared: &Shared, moves: &Moves, slot: u16, target: &Node) -> Result<(), String> {
    let store = &shared.store;
    let link = Link::open(target, shared.live.requirepass()).map_err(|e| e.to_string())?;
    let mut job = Job {
        shared,
        moves,
        ns: CLUSTER_NS + slot,
        slot: slot.to_string(),
        link,
        tail: None,
        after: 0,
    };
    job.import_state(b"0")?;
    // From the snapshot on, the log is read to the hand-over: no flush may delete it.
    let _logs = store.hold_logs().map_err(|e| e.to_string())?;
    job.after = store
        .export_ns(job.ns, CHUNK, |chunk| {
            job.apply(&chunk).map_err(rocksketch::Error::Storage)
        })
        .map_err(|e| e.to_string())?;
    let catching_up = Instant::now();
    loop {
        let sent = job.forward()?;
        if sent < HANDOVER_BYTES || catching_up.elapsed() > CATCH_UP_LIMIT {
            break;
        }
    }
    // The target applies what is in flight before the pause, not during it.
    job.link.settle()?;
    let paused = Instant::now();
    moves.freeze(slot);
    // Every write routed before the pause holds the gate shared until it is written.
    drop(shared.gate.exclusive());
    let handed = job.forward().and_then(|_| job.import_state(b"1"));
    // Saved before the pause ends (the slot's commands are redirected from then on).
    let addr = format!("{}:{}", target.host, target.port);
    let saved = handed.and_then(|()| {
        moves.end_migration(Ok(addr.clone())).map_err(|e| {
            // The target serves the slot already: it must not.
            let _ = job.import_state(b"2");
            format!("the hand-over was not saved: {e}")
        })
    });
    let pause_us = paused.elapsed().as_micros() as u64;
    moves.update(|m| m.pause_us = pause_us);
    saved?;
    log::info!("slot {slot} handed over to {addr} (writes paused {pause_us} us)");
    Ok(())
}

/// A migration under way.
struct Job<'a> {
    shared: &'a Shared,
    moves: &'a Moves,
    ns: u16,
    /// The slot, as sent.
    slot: String,
    link: Link,
    tail: Option<rocksketch::WalTail>,
    /// The last sequence number whose writes of the slot the target has.
    after: u64,
}

impl Job<'_> {
    /// Tells the target the import's state: `0` start, `1` success, `2` failed.
    fn import_state(&mut self, state: &[u8]) -> Result<(), String> {
        self.link
            .call(&[b"CLUSTERX", &b"IMPORT"[..], self.slot.as_bytes(), state])
    }

    /// Sends a chunk (its answer is read later: see [`Link`]).
    fn apply(&mut self, chunk: &[u8]) -> Result<(), String> {
        self.link
            .send(&[b"CLUSTERX", b"APPLY", self.slot.as_bytes(), chunk])?;
        self.moves.update(|m| m.bytes += chunk.len() as u64);
        Ok(())
    }

    /// Sends the slot's writes the log holds after `after`, up to the newest write at
    /// least; the bytes sent. Each batch read is sent whole (its writes of the slot).
    fn forward(&mut self) -> Result<u64, String> {
        let store = &self.shared.store;
        let upto = store.latest_sequence().map_err(|e| e.to_string())?;
        let mut sent = 0;
        let mut idle = 0;
        while self.after < upto {
            let batches = crate::replication::next_batches(store, &mut self.tail, self.after)
                .map_err(|e| e.to_string())?;
            let Some((first, data)) = batches.last() else {
                // Written but not yet readable in the log file: shortly.
                idle += 1;
                if idle > 2000 {
                    return Err(format!("the log does not show the writes up to {upto}"));
                }
                std::thread::sleep(Duration::from_millis(1));
                continue;
            };
            let count = data.get(8..12).and_then(|b| b.try_into().ok());
            self.after = first + u64::from(count.map_or(1, u32::from_le_bytes)) - 1;
            let changes = store.ns_changes(self.ns, &batches, u64::MAX, CHUNK);
            for chunk in changes.map_err(|e| e.to_string())? {
                sent += chunk.len() as u64;
                self.apply(&chunk)?;
            }
        }
        self.link.out.flush().map_err(broken)?;
        Ok(sent)
    }
}

/// The connection to the target: chunks go out up to [`WINDOW`] ahead of their
/// answers, so that the copy never waits a round trip per chunk.
struct Link {
    out: BufWriter<TcpStream>,
    input: BufReader<TcpStream>,
    /// Commands sent whose answers are not read yet.
    outstanding: usize,
}

/// Chunks in flight at most.
const WINDOW: usize = 16;

impl Link {
    fn open(target: &Node, password: Option<String>) -> io::Result<Link> {
        let addr = (target.host.as_str(), target.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::other(format!("{} has no address", target.host)))?;
        let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(IO_TIMEOUT))?;
        stream.set_write_timeout(Some(IO_TIMEOUT))?;
        let mut link = Link {
            out: BufWriter::with_capacity(64 << 10, stream.try_clone()?),
            input: BufReader::new(stream),
            outstanding: 0,
        };
        if let Some(password) = password {
            link.call(&[&b"AUTH"[..], password.as_bytes()])
                .map_err(io::Error::other)?;
        }
        Ok(link)
    }

    /// Sends a command and reads every answer owed; an error answer is an error.
    fn call(&mut self, parts: &[&[u8]]) -> Result<(), String> {
        self.send(parts)?;
        self.settle()
    }

    /// Reads every answer owed.
    fn settle(&mut self) -> Result<(), String> {
        self.out.flush().map_err(broken)?;
        while self.outstanding > 0 {
            self.answer()?;
        }
        Ok(())
    }

    /// Sends a command, reading answers owed while more than [`WINDOW`] are.
    fn send(&mut self, parts: &[&[u8]]) -> Result<(), String> {
        wire::write_frame(&mut self.out, parts).map_err(broken)?;
        self.outstanding += 1;
        if self.outstanding > WINDOW {
            self.out.flush().map_err(broken)?;
            self.answer()?;
        }
        Ok(())
    }

    fn answer(&mut self) -> Result<(), String> {
        let line = wire::read_line(&mut self.input).map_err(broken)?;
        self.outstanding -= 1;
        match line.split_first() {
            Some((b'-', text)) => Err(format!(
                "the target answered {}",
                String::from_utf8_lossy(text)
            )),
            _ => Ok(()),
        }
    }
}

fn broken(e: io::Error) -> String {
    format!("the link to the target failed: {e}")
}
