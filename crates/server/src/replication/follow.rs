//! The replica's side: a thread that connects to the primary, authenticates, asks to
//! continue from the offset it holds (`PSYNC`), takes a full sync when the primary
//! cannot continue it, applies the batches it streams in order, and acknowledges what
//! it applied. A link that fails is retried, with a growing pause, until the replica is
//! told to stop following.

use super::REPL_TIMEOUT;
use crate::Shared;
use parking_lot::Mutex;
use rocksketch::resp::stream as wire;
use rocksketch_merge::batch;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const FIRST_RETRY: Duration = Duration::from_millis(50);
const LAST_RETRY: Duration = Duration::from_secs(1);
/// The most bytes of the primary's batches applied as one write.
const APPLY_BYTES: usize = 1 << 20;

/// What `INFO replication` and `ROLE` show of the link.
#[derive(Default)]
pub(crate) struct Link {
    state: Mutex<LinkState>,
}

#[derive(Default)]
struct LinkState {
    /// `connect`, `connecting`, `sync` or `connected`, as `ROLE` names them.
    phase: &'static str,
    last_io: Option<Instant>,
    down_since: Option<Instant>,
    error: String,
}

impl Link {
    fn set_phase(&self, phase: &'static str) {
        let mut state = self.state.lock();
        state.phase = phase;
        state.last_io = Some(Instant::now());
        if phase == "connected" {
            state.down_since = None;
            state.error.clear();
        }
    }

    fn touch(&self) {
        self.state.lock().last_io = Some(Instant::now());
    }

    fn down(&self, error: String) {
        let mut state = self.state.lock();
        state.phase = "connect";
        state.down_since.get_or_insert_with(Instant::now);
        state.error = error;
    }

    /// The link's phase, as `ROLE` names it.
    pub(crate) fn phase(&self) -> &'static str {
        match self.state.lock().phase {
            "" => "connect",
            phase => phase,
        }
    }

    pub(crate) fn is_up(&self) -> bool {
        self.phase() == "connected"
    }

    /// Seconds since the primary last sent anything (-1: never).
    pub(crate) fn last_io_seconds(&self) -> i64 {
        self.state
            .lock()
            .last_io
            .map_or(-1, |t| t.elapsed().as_secs() as i64)
    }

    /// Seconds the link has been down (-1: up, or never down).
    pub(crate) fn down_seconds(&self) -> i64 {
        self.state
            .lock()
            .down_since
            .map_or(-1, |t| t.elapsed().as_secs() as i64)
    }

    /// Why the link last failed (empty if it did not).
    pub(crate) fn error(&self) -> String {
        self.state.lock().error.clone()
    }
}

/// A running follower.
pub(crate) struct Follower {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) link: Arc<Link>,
    stop: Arc<AtomicBool>,
    /// The open connection, to cut it when told to stop.
    stream: Arc<Mutex<Option<TcpStream>>>,
    thread: Option<JoinHandle<()>>,
}

impl Follower {
    pub(crate) fn start(shared: Arc<Shared>, host: String, port: u16) -> Follower {
        let link = Arc::new(Link::default());
        let stop = Arc::new(AtomicBool::new(false));
        let stream = Arc::new(Mutex::new(None));
        let run = {
            let (link, stop, stream) = (link.clone(), stop.clone(), stream.clone());
            let (host, port) = (host.clone(), port);
            move || follow(&shared, &host, port, &link, &stop, &stream)
        };
        let thread = std::thread::Builder::new()
            .name("replica-of".to_owned())
            .spawn(run)
            .ok();
        Follower {
            host,
            port,
            link,
            stop,
            stream,
            thread,
        }
    }

    /// Stops following: cuts the link and waits for the thread (a batch being applied
    /// is applied whole first).
    pub(crate) fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(stream) = self.stream.lock().as_ref() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn follow(
    shared: &Shared,
    host: &str,
    port: u16,
    link: &Link,
    stop: &AtomicBool,
    current: &Mutex<Option<TcpStream>>,
) {
    let mut pause = FIRST_RETRY;
    while !stop.load(Ordering::SeqCst) && !shared.is_shutting_down() {
        link.set_phase("connecting");
        let result = session(shared, host, port, link, stop, current);
        *current.lock() = None;
        match result {
            Ok(()) => pause = FIRST_RETRY,
            Err(e) => {
                if !stop.load(Ordering::SeqCst) {
                    log::warn!("replication from {host}:{port}: {e}");
                }
                link.down(e.to_string());
                std::thread::sleep(pause);
                pause = (pause * 2).min(LAST_RETRY);
            }
        }
    }
}

/// One connection to the primary: the handshake, then a full sync (`Ok` after it: the
/// caller connects again to continue) or the stream of batches (until it fails).
fn session(
    shared: &Shared,
    host: &str,
    port: u16,
    link: &Link,
    stop: &AtomicBool,
    current: &Mutex<Option<TcpStream>>,
) -> io::Result<()> {
    let addr = (host, port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::other(format!("{host} has no address")))?;
    let stream = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)?;
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(REPL_TIMEOUT))?;
    stream.set_write_timeout(Some(REPL_TIMEOUT))?;
    *current.lock() = Some(stream.try_clone()?);
    if stop.load(Ordering::SeqCst) {
        return Ok(());
    }
    let mut out = stream.try_clone()?;
    let mut reader = BufReader::with_capacity(1 << 20, stream);
    let rep = &shared.replication;
    if let Some(password) = rep.masterauth() {
        wire::write_frame(&mut out, &[&b"AUTH"[..], password.as_bytes()])?;
        expect_ok(&mut reader, "AUTH")?;
    }
    let own_port = shared.addr.port().to_string();
    wire::write_frame(
        &mut out,
        &[&b"REPLCONF"[..], b"listening-port", own_port.as_bytes()],
    )?;
    expect_ok(&mut reader, "REPLCONF")?;
    let ids = rep.ids();
    let store = &shared.store;
    let offset = store.latest_sequence().map_err(io::Error::other)?;
    // A store that never synced asks for everything.
    let (replid, offset_arg) = if ids.role_replica || offset > 0 {
        (ids.psync_id(offset).to_owned(), offset.to_string())
    } else {
        ("?".to_owned(), "-1".to_owned())
    };
    wire::write_frame(
        &mut out,
        &[&b"PSYNC"[..], replid.as_bytes(), offset_arg.as_bytes()],
    )?;
    let line = wire::read_line(&mut reader)?;
    let line = String::from_utf8_lossy(&line).into_owned();
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["+FULLRESYNC", id, _] => {
            link.set_phase("sync");
            let incoming = receive_checkpoint(&rep.dir, &mut reader, link)?;
            if stop.load(Ordering::SeqCst) {
                let _ = std::fs::remove_dir_all(&incoming);
                return Ok(());
            }
            rep.new_epoch();
            let sequence = store
                .replace_with_checkpoint(&incoming)
                .map_err(io::Error::other)?;
            rep.set_ids(rep.ids().following(id));
            log::info!("full sync from {host}:{port} done, at offset {sequence}");
            Ok(())
        }
        ["+CONTINUE", id] | ["+CONTINUE", id, ..] => {
            let ids = rep.ids();
            if *id != ids.replid || !ids.role_replica {
                rep.set_ids(rep.ids().following(id));
            }
            link.set_phase("connected");
            log::info!("replicating from {host}:{port} from offset {offset}");
            stream_batches(shared, &mut reader, &mut out, link)
        }
        _ => Err(io::Error::other(format!(
            "the primary answered PSYNC: {line}"
        ))),
    }
}

fn expect_ok(reader: &mut impl BufRead, what: &str) -> io::Result<()> {
    let line = wire::read_line(reader)?;
    if line.first() == Some(&b'-') {
        return Err(io::Error::other(format!(
            "the primary refused {what}: {}",
            String::from_utf8_lossy(&line[1..])
        )));
    }
    Ok(())
}

/// Applies the primary's batches in order, acknowledging what is applied whenever the
/// input runs dry. The batches that have arrived together are applied as one write (as
/// the primary combines its clients' requests, and for the same reason: one log append
/// and one memtable write instead of one each), up to [`APPLY_BYTES`]. A batch already
/// held is skipped; a gap or a batch that does not apply ends the link (the next one
/// resyncs).
fn stream_batches(
    shared: &Shared,
    reader: &mut BufReader<TcpStream>,
    out: &mut TcpStream,
    link: &Link,
) -> io::Result<()> {
    let store = &shared.store;
    let mut latest = store.latest_sequence().map_err(io::Error::other)?;
    let mut acked = None;
    let mut run = Vec::new();
    // The last sequence of what is applied or waits in `run`.
    let mut last = latest;
    loop {
        if reader.buffer().is_empty() || run.len() >= APPLY_BYTES {
            apply_run(shared, &mut run, &mut latest)?;
            last = latest;
        }
        if reader.buffer().is_empty() && acked != Some(latest) {
            let offset = latest.to_string();
            wire::write_frame(out, &[&b"REPLCONF"[..], b"ACK", offset.as_bytes()])?;
            acked = Some(latest);
        }
        let frame = wire::read_frame(reader)?;
        link.touch();
        match frame.as_slice() {
            [name, sequence, data] if name.as_slice() == b"BATCH" => {
                let sequence = wire::number(sequence)?;
                if sequence <= last {
                    continue;
                }
                if last.checked_add(1) != Some(sequence) {
                    return Err(io::Error::other(format!(
                        "a gap in the stream: batch {sequence} after {last}"
                    )));
                }
                let (_, count) = batch::header(data).map_err(io::Error::other)?;
                batch::append(&mut run, data).map_err(io::Error::other)?;
                last = sequence
                    .saturating_add(u64::from(count))
                    .saturating_sub(1)
                    .max(last);
            }
            [name] if name.as_slice() == b"PING" => acked = None,
            _ => return Err(io::Error::other("an unexpected frame from the primary")),
        }
    }
}

/// Applies the batches gathered in `run` as one write, if any; `latest` becomes the
/// store's newest sequence.
fn apply_run(shared: &Shared, run: &mut Vec<u8>, latest: &mut u64) -> io::Result<()> {
    let store = &shared.store;
    if run.is_empty() {
        return Ok(());
    }
    store.apply_replicated(run).map_err(io::Error::other)?;
    run.clear();
    shared.replication.wrote();
    *latest = store.latest_sequence().map_err(io::Error::other)?;
    Ok(())
}

/// Receives a checkpoint's files into a directory beside the store's (on its file
/// system), until `SYNCED`; returns the directory. Each file, once whole, is synced on a
/// thread of its own while the next ones arrive (the disk writes the last file while
/// the network brings the next), and all are synced before this returns.
fn receive_checkpoint(
    dir: &Path,
    reader: &mut BufReader<TcpStream>,
    link: &Link,
) -> io::Result<std::path::PathBuf> {
    let incoming = dir.with_extension("incoming");
    let _ = std::fs::remove_dir_all(&incoming);
    std::fs::create_dir_all(&incoming)?;
    std::thread::scope(|scope| {
        let (whole, to_sync) = mpsc::channel::<std::fs::File>();
        let syncer = std::thread::Builder::new()
            .name("replica-sync".to_owned())
            .spawn_scoped(scope, move || -> io::Result<()> {
                to_sync.into_iter().try_for_each(|file| file.sync_all())
            })?;
        let received = receive_files(&incoming, reader, link, &whole);
        drop(whole);
        let synced = syncer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the full sync's file syncer panicked")));
        // A failed sync is the cause when the receiver stopped for want of the syncer.
        synced.and(received)
    })?;
    Ok(incoming)
}

/// The frames of a full sync, each file written in order into `incoming` and handed to
/// `whole` once complete, until `SYNCED`.
fn receive_files(
    incoming: &Path,
    reader: &mut BufReader<TcpStream>,
    link: &Link,
    whole: &mpsc::Sender<std::fs::File>,
) -> io::Result<()> {
    let done = |file: std::fs::File| {
        whole
            .send(file)
            .map_err(|_| io::Error::other("the full sync's file syncer stopped"))
    };
    let mut open: Option<(String, std::fs::File, u64)> = None;
    loop {
        let frame = wire::read_frame(reader)?;
        link.touch();
        match frame.as_slice() {
            [name, file, at, bytes] if name.as_slice() == b"FILE" => {
                let file = String::from_utf8(file.clone())
                    .ok()
                    .filter(|f| valid_name(f))
                    .ok_or_else(|| io::Error::other("a bad file name in a full sync"))?;
                let at = wire::number(at)?;
                if open.as_ref().is_none_or(|(name, _, _)| *name != file) {
                    let handle = std::fs::File::create_new(incoming.join(&file))?;
                    if let Some((_, finished, _)) = open.replace((file.clone(), handle, 0)) {
                        done(finished)?;
                    }
                }
                let Some((_, handle, written)) = open.as_mut() else {
                    continue;
                };
                if at != *written {
                    return Err(io::Error::other("a file of a full sync out of order"));
                }
                handle.write_all(bytes)?;
                *written += bytes.len() as u64;
            }
            [name, _] if name.as_slice() == b"SYNCED" => {
                if let Some((_, finished, _)) = open.take() {
                    done(finished)?;
                }
                return Ok(());
            }
            [name] if name.as_slice() == b"PING" => {}
            _ => return Err(io::Error::other("an unexpected frame in a full sync")),
        }
    }
}

/// A plain file name of a checkpoint: no path, nothing hidden.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}
