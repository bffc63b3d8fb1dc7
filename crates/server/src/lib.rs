//! `rocksketch serve`: a RESP2/RESP3 host for the RedisBloom command set over a [`Store`].
//!
//! A fixed pool of I/O threads (one per core by default) multiplexes the connections
//! with readiness I/O (see `worker.rs`); the accepting thread hands each new connection
//! to one of them. Blind writes never take a lock another client waits on, so the
//! threads run in parallel; answered writes to one key are combined into batches, and
//! RocksDB's write group commits concurrent batches together.
//!
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! use rocksketch_server::{Server, ServerConfig};
//! use rocksketch::{Store, StoreOptions};
//!
//! let store = Store::open("./rocksketch-data", StoreOptions::default()).unwrap();
//! let server = Server::bind(store, ServerConfig::default())?;
//! println!("listening on {}", server.local_addr());
//! let handle = server.handle(); // handle.shutdown() from anywhere stops it
//! server.run(); // returns after SHUTDOWN or handle.shutdown()
//! # drop(handle);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

mod activity;
mod admit;
mod client;
mod cluster;
pub(crate) mod commands;
mod conn;

mod cursors;
mod fast;
mod gate;
mod glob;
mod introspect;
mod multi;
mod ops_meter;
mod pause;
mod persistence;
mod replication;
mod reply_mode;
mod table;
mod together;
mod watch;
mod worker;

use cursors::Cursors;
use parking_lot::Mutex;
use rocksketch::resp::Limits;
use rocksketch::Store;
use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How the host listens and what it allows.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The address to bind (loopback by default).
    pub bind: String,
    /// The port; 0 picks a free one (see [`Server::local_addr`]).
    pub port: u16,
    /// With a password, every command but `AUTH`, `HELLO ... AUTH` and `QUIT` answers
    /// `NOAUTH` until the client authenticates.
    pub requirepass: Option<String>,
    /// Most clients connected at once (Redis's `maxclients`).
    pub max_clients: usize,
    /// Limits on one request from an authenticated client.
    pub limits: Limits,
    /// Largest unprocessed input one client may hold (Redis's
    /// `client-query-buffer-limit`).
    pub max_query_buffer: usize,
    /// Numbered databases for `SELECT`; each maps to a namespace of the store.
    pub databases: u16,
    /// Whether `DEBUG` is answered (Redis's `enable-debug-command`); off by default.
    pub enable_debug_command: bool,
    /// I/O threads serving the connections; 0 means [`default_io_threads`].
    pub threads: usize,
    /// Connections an I/O thread takes before the next thread gets any; once every
    /// thread has this many, each new one goes to the thread with fewest. 0: round
    /// robin. See [`DEFAULT_THREAD_FILL`].
    pub thread_fill: usize,
    /// Where `SAVE` and `BGSAVE` put their checkpoints; `None`: `backups` in the
    /// store's directory.
    pub backup_dir: Option<std::path::PathBuf>,
    /// The primary to follow from the start (`replicaof host port`); the store should
    /// be opened with [`rocksketch::StoreOptions::replica`].
    pub replicaof: Option<(String, u16)>,
    /// The password sent to the primary (`masterauth`).
    pub masterauth: Option<String>,
    /// A node of a Redis Cluster whose topology a controller sets with `CLUSTERX`
    /// (Redis's `cluster-enabled`); only database 0.
    pub cluster_enabled: bool,
    /// The flushed write-ahead logs kept for replicas, in megabytes and seconds, as the
    /// store was opened with them ([`rocksketch::StoreOptions::wal_keep_mb`] and
    /// `wal_keep_seconds`): what `CONFIG GET repl-backlog-size` (in bytes) and
    /// `repl-backlog-ttl` show.
    pub repl_backlog: (u64, u64),
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            bind: "127.0.0.1".to_owned(),
            port: 6379,
            requirepass: None,
            max_clients: 10_000,
            limits: Limits::default(),
            max_query_buffer: 1 << 30,
            databases: 16,
            enable_debug_command: false,
            threads: 0,
            thread_fill: DEFAULT_THREAD_FILL,
            backup_dir: None,
            replicaof: None,
            masterauth: None,
            cluster_enabled: false,
            repl_backlog: (0, 0),
        }
    }
}

/// Whether a server configured so over the data directory `dir` starts as a replica
/// (`replicaof`, or in cluster mode a saved topology that names it one): open its
/// store with [`rocksketch::StoreOptions::replica`] then.
pub fn starts_as_replica(dir: &std::path::Path, config: &ServerConfig) -> bool {
    config.replicaof.is_some() || (config.cluster_enabled && cluster::saved_as_replica(dir))
}

/// What a client that has not authenticated may send (Redis 7 keeps them small too).
const UNAUTHENTICATED_LIMITS: Limits = Limits {
    max_bulk: 16 << 10,
    max_args: 10,
    max_inline: 16 << 10,
};

/// How long the accept loop waits after an error such as `EMFILE`.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(20);

/// Descriptors kept for everything but clients: the listener, RocksDB's files, logs.
const RESERVED_DESCRIPTORS: u64 = 256;

/// `max_clients`, lowered if the open-file limit cannot be raised to serve that many
/// (each client holds one descriptor, its socket; the I/O threads' epoll instances are
/// among the reserved).
fn fit_max_clients(max_clients: usize) -> usize {
    let wanted = (max_clients as u64).saturating_add(RESERVED_DESCRIPTORS);
    let limit = rlimit::increase_nofile_limit(wanted).unwrap_or(1024);
    if limit >= wanted {
        return max_clients;
    }
    limit.saturating_sub(RESERVED_DESCRIPTORS).max(1) as usize
}

/// Metadata records the expiry sweeper reads per step, and its pause between steps.
const SWEEP_STEP: usize = 1000;
const SWEEP_PAUSE: Duration = Duration::from_millis(100);

/// A bound server, ready to [`Server::run`].
pub struct Server {
    listener: TcpListener,
    shared: Arc<Shared>,
}

/// Stops a running server from another thread (or a signal handler thread).
/// It does not keep the store open: once [`Server::run`] returns, the database is closed.
#[derive(Clone)]
pub struct ShutdownHandle {
    control: Arc<Control>,
}

impl ShutdownHandle {
    /// Asks the server to stop: it stops accepting, closes every connection after the
    /// command it is running, flushes the store and returns from [`Server::run`].
    pub fn shutdown(&self) {
        self.control.begin_shutdown();
    }
}

/// The shutdown flag, and the address to connect to to wake the accept loop.
struct Control {
    shutting_down: AtomicBool,
    addr: SocketAddr,
}

impl Control {
    fn begin_shutdown(&self) {
        if self.shutting_down.swap(true, Ordering::SeqCst) {
            return;
        }
        // Wake the accept loop with a connection of our own.
        let _ = TcpStream::connect(self.addr);
    }
}

/// What connections share.
pub(crate) struct Shared {
    store: Store,
    config: ServerConfig,
    addr: SocketAddr,
    control: Arc<Control>,
    clients: Mutex<HashMap<u64, ClientEntry>>,
    next_client_id: AtomicU64,
    started: Instant,
    stats: Stats,
    /// Settings `CONFIG SET` changes (the password and `maxclients` among them: read
    /// from here, not from `config`, once the server runs).
    live: introspect::Live,
    slowlog: introspect::SlowLog,
    /// `INFO commandstats`, by the command's position in the command table.
    command_stats: introspect::CommandStats,
    ops: ops_meter::OpsMeter,
    /// Checkpoints: `SAVE`, `BGSAVE`, `LASTSAVE`.
    saves: persistence::Saves,
    /// Replication: the primary followed, the replicas fed.
    replication: replication::Replication,
    cursors: Mutex<Cursors>,
    /// The keys connections `WATCH`.
    watches: watch::Watches,
    /// `CLIENT PAUSE`.
    pause: pause::ClientPause,
    /// Cluster mode's topology, if it is on.
    cluster: Option<Arc<cluster::Cluster>>,
    /// `'static` so that a connection can hold it while it runs a command that needs
    /// the connection mutably, without counting references on every command (one
    /// gate per server, 8 KiB, kept for the life of the process).
    gate: &'static gate::Gate,
}

#[derive(Default)]
pub(crate) struct Stats {
    commands: AtomicU64,
    connections: AtomicU64,
    rejected: AtomicU64,
}

/// What `CLIENT LIST` shows of a connection.
pub(crate) struct ClientEntry {
    info: ClientInfo,
    /// Ends the connection (`CLIENT KILL`).
    kill: worker::KillSwitch,
    /// What it ran last, and when.
    activity: Arc<activity::Activity>,
    /// Set once the connection feeds a replica (`PSYNC`): it is listed as one, and a
    /// kill closes its socket.
    feed: Option<Arc<replication::Peer>>,
}

impl ClientEntry {
    /// Ends the connection: its I/O thread drops it, or a replica's feed ends.
    fn kill(&self) {
        match &self.feed {
            Some(peer) => peer.close(),
            None => self.kill.kill(),
        }
    }
}

#[derive(Clone, Default)]
pub(crate) struct ClientInfo {
    addr: String,
    laddr: String,
    name: String,
    lib_name: String,
    lib_ver: String,
    /// The socket's file descriptor.
    fd: i32,
    db: u16,
    resp: u8,
    connected: Option<Instant>,
}

impl Shared {
    fn begin_shutdown(&self) {
        self.control.begin_shutdown();
    }

    fn is_shutting_down(&self) -> bool {
        self.control.shutting_down.load(Ordering::SeqCst)
    }

    fn update_client(&self, id: u64, update: impl FnOnce(&mut ClientInfo)) {
        if let Some(entry) = self.clients.lock().get_mut(&id) {
            update(&mut entry.info);
        }
    }
}

impl Server {
    /// Binds the listening socket; serving starts with [`Server::run`].
    /// Raises the process's open-file limit for `max_clients` (two descriptors each)
    /// where it can, as Redis does, and lowers `max_clients` to what the limit allows
    /// where it cannot (see [`Server::max_clients`]).
    pub fn bind(store: Store, mut config: ServerConfig) -> io::Result<Server> {
        config.max_clients = fit_max_clients(config.max_clients);
        if config.threads == 0 {
            // Resolved here, so `CONFIG GET io-threads` answers the number serving.
            config.threads = default_io_threads();
        }
        let listener = TcpListener::bind((config.bind.as_str(), config.port))?;
        let addr = listener.local_addr()?;
        let live = introspect::Live::new(&config, config.max_clients);
        let backup_dir = match &config.backup_dir {
            Some(dir) => dir.clone(),
            None => store.path().map_err(io::Error::other)?.join("backups"),
        };
        let saves = persistence::Saves::new(backup_dir);
        let replication = replication::Replication::new(&store, config.masterauth.clone())?;
        let cluster = match config.cluster_enabled {
            true => Some(Arc::new(cluster::Cluster::open(
                &store.path().map_err(io::Error::other)?,
            )?)),
            false => None,
        };
        Ok(Server {
            listener,
            shared: Arc::new(Shared {
                store,
                config,
                addr,
                control: Arc::new(Control {
                    shutting_down: AtomicBool::new(false),
                    addr,
                }),
                clients: Mutex::new(HashMap::new()),
                next_client_id: AtomicU64::new(1),
                started: Instant::now(),
                stats: Stats::default(),
                live,
                slowlog: introspect::SlowLog::default(),
                command_stats: introspect::CommandStats::new(crate::commands::stat_count()),
                ops: ops_meter::OpsMeter::default(),
                saves,
                replication,
                cursors: Mutex::new(Cursors::default()),
                watches: watch::Watches::default(),
                pause: pause::ClientPause::default(),
                cluster,
                gate: Box::leak(Box::default()),
            }),
        })
    }

    /// The address the server listens on (with the port picked, if 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// The most clients served at once: the configured number, or fewer if the
    /// process cannot open enough descriptors.
    pub fn max_clients(&self) -> usize {
        self.shared.live.max_clients()
    }

    /// A handle that stops the server.
    pub fn handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            control: self.shared.control.clone(),
        }
    }

    /// Accepts and serves clients until shut down, then closes every connection, waits
    /// for the I/O threads and flushes the store, so nothing acknowledged is lost.
    pub fn run(self) -> rocksketch::Result<()> {
        let config = &self.shared.config;
        let mut workers = worker::Workers::start(&self.shared, config.threads, config.thread_fill)?;
        let sweeper = self.start_sweeper();
        if let Some((host, port)) = self.shared.config.replicaof.clone() {
            replication::Replication::follow(&self.shared, host, port);
        }
        if let Some(cluster) = &self.shared.cluster {
            cluster::commands::follow_topology(&self.shared, &cluster.topology());
        }
        for stream in self.listener.incoming() {
            if self.shared.is_shutting_down() {
                break;
            }
            let stream = match stream {
                Ok(stream) => stream,
                // A connection that failed before we took it (reset by the peer): the
                // listener itself carries on.
                Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => continue,
                Err(_) => {
                    // Out of descriptors (or memory): the pending connection stays in
                    // the backlog, so accepting again at once would spin. Back off.
                    std::thread::sleep(ACCEPT_BACKOFF);
                    continue;
                }
            };
            if let Some((lane, admitted)) = self.admit(stream, &mut workers) {
                workers.assign(lane, admitted);
            }
        }
        log::info!(
            "shutting down: closing {} connections",
            self.shared.clients.lock().len()
        );
        // The follower stops (a batch being applied is applied whole), the feeds end.
        self.shared.replication.stop();
        // Each I/O thread closes its connections as it stops.
        workers.join();
        if let Some(sweeper) = sweeper {
            let _ = sweeper.join();
        }
        log::info!("connections closed; flushing the memtables");
        let flushed = self.shared.store.flush();
        match &flushed {
            Ok(()) => log::info!("memtables flushed; every acknowledged write is on disk"),
            Err(e) => log::warn!("flushing the memtables failed: {e}"),
        }
        flushed
    }

    /// Starts the thread that deletes expired keys: a step of [`SWEEP_STEP`] metadata
    /// records every [`SWEEP_PAUSE`], and a pass over all of them at most every second.
    fn start_sweeper(&self) -> Option<JoinHandle<()>> {
        let shared = self.shared.clone();
        let sweep = move || {
            let mut cursor: Option<Vec<u8>> = None;
            let mut pass_started = Instant::now();
            while !shared.is_shutting_down() {
                std::thread::sleep(SWEEP_PAUSE);
                shared
                    .ops
                    .sample(shared.stats.commands.load(Ordering::Relaxed));
                if cursor.is_none() && pass_started.elapsed() < Duration::from_secs(1) {
                    continue;
                }
                // `CLIENT PAUSE` stops the data changing: expired keys read as absent
                // and are deleted once it ends, as Redis does.
                if shared.pause.writes_paused() {
                    continue;
                }
                if cursor.is_none() {
                    pass_started = Instant::now();
                }
                // An error (say, a corrupt record) ends this pass; the next one retries.
                cursor = match shared.store.sweep_expired(cursor.as_deref(), SWEEP_STEP) {
                    Ok((_, next)) => next,
                    Err(_) => None,
                };
            }
        };
        std::thread::Builder::new()
            .name("expiry-sweeper".to_owned())
            .spawn(sweep)
            .ok()
    }
}

/// I/O threads when none are configured: one per core. Connections fill them in turn
/// ([`DEFAULT_THREAD_FILL`]), so a second thread serves only once the first has many
/// clients.
pub fn default_io_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Connections an I/O thread takes before the next one gets any, by default. One
/// thread serves a few clients best: their requests for one key join one batch (one
/// hot key split over two threads makes each wait on the other's batch), and one
/// thread's pass amortizes its system calls over all of them. On this project's 2-core
/// machine one thread answered 16 clients' writes faster than two round robin
/// (`scripts/bench-serve 200000 threads`), while 64 clients on 64 keys saturate one
/// thread and two served them up to a third faster (`ROCKSKETCH_FLAGS="--threads 2"
/// scripts/bench-serve 200000 contention`); figures in the README.
pub const DEFAULT_THREAD_FILL: usize = 32;
