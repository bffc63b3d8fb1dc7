//! The primary's side: a replica's connection, handed over by its I/O thread after
//! `PSYNC`, is fed by a thread of its own: a checkpoint's files (a full sync), or the
//! write-ahead log's batches from the replica's offset on, read from disk as they come.
//! A second thread reads the replica's acknowledgements (`REPLCONF ACK`), which
//! `WAIT` and `INFO replication` report.

use super::REPL_TIMEOUT;
use crate::Shared;
use parking_lot::Mutex;
use rocksketch::resp::stream as wire;
use rocksketch::{Store, WalTail};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{Duration, Instant};

/// Batches read from the live log at a time.
const BATCHES: usize = 256;
/// Batches read at a time by RocksDB's iterator, which reads its file from the start
/// to seek on every call.
const CATCH_UP_BATCHES: usize = 16 << 10;
/// The pause after a send that left the replica with everything: the writes made
/// meanwhile go out together. A `WAIT` cuts it short (`Replication::hurry`). One
/// millisecond cost the primary's clients up to a tenth of their rate at `-P 1` on two
/// cores (each feed and each replica woken a thousand times a second). A feed that
/// found nothing new is idle: the next write wakes it (`Replication::wrote`), and it
/// looks on its own after this long too (writes made off the I/O threads).
const FEED_PAUSE: Duration = Duration::from_millis(4);
/// A ping this often on an idle link, so the replica sees the primary alive.
const PING_EVERY: Duration = Duration::from_secs(1);
/// A checkpoint's files are sent in pieces of this size.
const PIECE: usize = 1 << 20;
/// Checkpoints for full syncs are made in the store's directory under this prefix.
const SYNC_PREFIX: &str = ".sync-";

/// What `PSYNC` asked for, carried from the command to the feeding thread.
pub(crate) struct Handoff {
    pub(crate) replid: String,
    /// The replica's offset: the last sequence it holds (`None` for `-1` or `SYNC`).
    pub(crate) offset: Option<u64>,
    /// The port the replica said it listens on (`REPLCONF listening-port`).
    pub(crate) port: u16,
    /// The connection's client entry, kept while the feed lasts: `CLIENT LIST` shows
    /// the replica (flags `S`) and `CLIENT KILL` can end it.
    pub(crate) entry: Option<crate::admit::Deregister>,
}

/// A replica fed from here, as `INFO replication`, `ROLE` and `WAIT` see it.
pub(crate) struct Peer {
    pub(crate) ip: String,
    pub(crate) port: u16,
    acked: AtomicU64,
    /// When the replica last acknowledged (`None`: not yet, since `PSYNC`).
    last_ack: Mutex<Option<Instant>>,
    online: AtomicBool,
    closed: AtomicBool,
    /// The feed found nothing new and waits for a write to wake it.
    idle: AtomicBool,
    /// When `PSYNC` handed the connection over.
    since: Instant,
    stream: TcpStream,
    /// The thread feeding it, woken early by a `WAIT`.
    feeder: Thread,
}

impl Peer {
    pub(crate) fn acked(&self) -> u64 {
        self.acked.load(Ordering::SeqCst)
    }

    /// Seconds since the replica last acknowledged (or since its `PSYNC`).
    pub(crate) fn lag(&self) -> u64 {
        self.last_ack
            .lock()
            .unwrap_or(self.since)
            .elapsed()
            .as_secs()
    }

    /// Its last command, as `CLIENT LIST` shows it: `PSYNC` until it acknowledges.
    pub(crate) fn last_command(&self) -> &'static str {
        match self.last_ack.lock().is_some() {
            true => "replconf",
            false => "psync",
        }
    }

    /// `online` once it streams, `wait_bgsave` while a full sync is sent.
    pub(crate) fn state(&self) -> &'static str {
        if self.online.load(Ordering::SeqCst) {
            "online"
        } else {
            "wait_bgsave"
        }
    }

    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    /// Sends what is written now, without waiting out the pause.
    pub(crate) fn hurry(&self) {
        self.feeder.unpark();
    }

    /// Wakes the feed if it is idle (see [`FEED_PAUSE`]).
    pub(crate) fn wrote(&self) {
        if self.idle.load(Ordering::Relaxed) && self.idle.swap(false, Ordering::SeqCst) {
            self.feeder.unpark();
        }
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

/// Feeds the replica on `stream` until it goes, the server stops or its history is
/// replaced. Runs on a thread of its own.
pub(crate) fn serve_replica(shared: Arc<Shared>, stream: TcpStream, handoff: Handoff) {
    let Ok(peer) = prepare(&stream, &handoff) else {
        return;
    };
    let peer = Arc::new(peer);
    if let Some(entry) = &handoff.entry {
        if let Some(client) = shared.clients.lock().get_mut(&entry.id()) {
            client.feed = Some(peer.clone());
            client.info.fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
        }
    }
    shared.replication.peers.lock().push(peer.clone());
    shared.replication.feeds.fetch_add(1, Ordering::SeqCst);
    let fed = feed(&shared, &stream, &peer, &handoff);
    peer.close();
    shared
        .replication
        .peers
        .lock()
        .retain(|p| !Arc::ptr_eq(p, &peer));
    shared.replication.feeds.fetch_sub(1, Ordering::SeqCst);
    match fed {
        Ok(()) => log::info!("replica {}:{} done", peer.ip, peer.port),
        Err(e) => log::info!("replica {}:{} dropped: {e}", peer.ip, peer.port),
    }
}

fn prepare(stream: &TcpStream, handoff: &Handoff) -> io::Result<Peer> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(REPL_TIMEOUT))?;
    Ok(Peer {
        ip: stream.peer_addr()?.ip().to_string(),
        port: handoff.port,
        acked: AtomicU64::new(0),
        last_ack: Mutex::new(None),
        since: Instant::now(),
        online: AtomicBool::new(false),
        closed: AtomicBool::new(false),
        idle: AtomicBool::new(false),
        stream: stream.try_clone()?,
        feeder: std::thread::current(),
    })
}

fn feed(
    shared: &Arc<Shared>,
    stream: &TcpStream,
    peer: &Arc<Peer>,
    handoff: &Handoff,
) -> io::Result<()> {
    let rep = &shared.replication;
    let store = &shared.store;
    let epoch = rep.epoch.load(Ordering::SeqCst);
    let mut out = BufWriter::with_capacity(256 << 10, stream.try_clone()?);
    let ids = rep.ids();
    let latest = store.latest_sequence().map_err(io::Error::other)?;
    let partial = handoff.offset.filter(|&offset| {
        ids.continues(&handoff.replid, offset)
            && offset <= latest
            && store.updates_since(offset, 1).is_ok()
    });
    let Some(mut offset) = partial else {
        if handoff.offset.is_some() {
            rep.partial_err.fetch_add(1, Ordering::Relaxed);
        }
        rep.full_syncs.fetch_add(1, Ordering::Relaxed);
        return full_sync(shared, &mut out, &ids.replid);
    };
    rep.partial_ok.fetch_add(1, Ordering::Relaxed);
    write!(out, "+CONTINUE {}\r\n", ids.replid)?;
    out.flush()?;
    peer.online.store(true, Ordering::SeqCst);
    read_acks(shared, stream.try_clone()?, peer);
    let mut last_sent = Instant::now();
    let mut tail: Option<WalTail> = None;
    loop {
        if peer.is_closed() || shared.is_shutting_down() {
            return Ok(());
        }
        if rep.epoch.load(Ordering::SeqCst) != epoch {
            return Err(io::Error::other("this server's history was replaced"));
        }
        let batches = next_batches(store, &mut tail, offset).map_err(io::Error::other)?;
        if batches.is_empty() {
            // Idle: the next write wakes this feed (`Replication::wrote`). Marked idle
            // first, then looked again, so that a write made in between is not missed.
            if !peer.idle.swap(true, Ordering::SeqCst) {
                continue;
            }
            if last_sent.elapsed() >= PING_EVERY {
                wire::write_frame(&mut out, &[b"PING"])?;
                last_sent = Instant::now();
            }
            out.flush()?;
            std::thread::park_timeout(FEED_PAUSE);
            continue;
        }
        peer.idle.store(false, Ordering::SeqCst);
        let caught_up = batches.len() < BATCHES;
        for (sequence, data) in batches {
            wire::write_frame(
                &mut out,
                &[b"BATCH", sequence.to_string().as_bytes(), &data],
            )?;
            offset = last_sequence(sequence, &data);
        }
        last_sent = Instant::now();
        if caught_up {
            // Everything written so far is sent: send it, and let the next writes
            // gather for a moment rather than read them one by one as they come (a
            // busy primary's writes are not sent one by one: only an idle feed is woken
            // by a write).
            out.flush()?;
            std::thread::park_timeout(FEED_PAUSE);
        }
    }
}

/// The batches after `offset`: from the tail of the live log where it holds them (each
/// poll reads only what was appended), else from RocksDB's iterator (a replica catching
/// up from flushed logs), many at a time since each call seeks anew.
pub(crate) fn next_batches(
    store: &Store,
    tail: &mut Option<WalTail>,
    offset: u64,
) -> rocksketch::Result<Vec<(u64, Vec<u8>)>> {
    if tail.is_none() {
        *tail = store.tail_wal(offset)?;
    }
    if let Some(live) = tail {
        match live.poll(BATCHES) {
            Ok(batches) => return Ok(batches),
            Err(e) => {
                log::info!("feeding from RocksDB's iterator: {e}");
                *tail = None;
            }
        }
    }
    store.updates_since(offset, CATCH_UP_BATCHES)
}

/// The last sequence number a batch that starts at `sequence` takes.
fn last_sequence(sequence: u64, data: &[u8]) -> u64 {
    let count = data
        .get(8..12)
        .and_then(|b| b.try_into().ok())
        .map_or(1, u32::from_le_bytes);
    sequence.saturating_add(u64::from(count)).saturating_sub(1)
}

/// Reads the replica's `REPLCONF ACK <offset>` frames, on a thread of its own, until
/// the link ends; then closes the link. Each new offset wakes the parked `WAIT`s.
fn read_acks(shared: &Arc<Shared>, stream: TcpStream, peer: &Arc<Peer>) {
    let peer = peer.clone();
    let shared = shared.clone();
    let read = move || {
        let _ = stream.set_read_timeout(Some(REPL_TIMEOUT));
        let mut reader = BufReader::new(stream);
        while let Ok(frame) = wire::read_frame(&mut reader) {
            if let [name, sub, offset] = &frame[..] {
                if name.eq_ignore_ascii_case(b"replconf") && sub.eq_ignore_ascii_case(b"ack") {
                    if let Ok(offset) = wire::number(offset) {
                        let before = peer.acked.fetch_max(offset, Ordering::SeqCst);
                        *peer.last_ack.lock() = Some(Instant::now());
                        if offset > before {
                            shared.replication.acknowledged();
                        }
                    }
                }
            }
        }
        peer.close();
    };
    let _ = std::thread::Builder::new()
        .name("replica-acks".to_owned())
        .spawn(read);
}

/// A full sync: a checkpoint of the store, its files sent in pieces, then `SYNCED`.
/// The replica then swaps its database and asks again from the checkpoint's sequence.
fn full_sync(shared: &Shared, out: &mut impl Write, replid: &str) -> io::Result<()> {
    let rep = &shared.replication;
    let n = rep.full_syncs.load(Ordering::Relaxed);
    let dir = rep
        .dir
        .join(format!("{SYNC_PREFIX}{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let started = Instant::now();
    let sequence = shared.store.checkpoint(&dir).map_err(io::Error::other)?;
    write!(out, "+FULLRESYNC {replid} {sequence}\r\n")?;
    let sent = send_files(&dir, out);
    let _ = std::fs::remove_dir_all(&dir);
    let bytes = sent?;
    wire::write_frame(out, &[&b"SYNCED"[..], sequence.to_string().as_bytes()])?;
    out.flush()?;
    log::info!(
        "full sync: {bytes} bytes sent in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn send_files(dir: &Path, out: &mut impl Write) -> io::Result<u64> {
    let mut total = 0u64;
    let mut piece = vec![0u8; PIECE];
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let mut file = std::fs::File::open(entry.path())?;
        let mut at = 0u64;
        loop {
            let n = file.read(&mut piece)?;
            // An empty file is sent as one empty piece, so that it exists.
            if n == 0 && at > 0 {
                break;
            }
            let offset = at.to_string();
            let frame: [&[u8]; 4] = [b"FILE", name.as_bytes(), offset.as_bytes(), &piece[..n]];
            wire::write_frame(out, &frame)?;
            at += n as u64;
            total += n as u64;
            if n == 0 {
                break;
            }
        }
    }
    Ok(total)
}

/// Removes the checkpoints a previous process left behind mid-sync.
pub(crate) fn remove_stale_checkpoints(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(SYNC_PREFIX) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
