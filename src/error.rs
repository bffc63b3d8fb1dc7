//! The engine's error type: storage failures, corruption, and the user-facing cases, each
//! with the text RedisBloom sends for it.

use std::fmt;

mod families;

pub use families::{BloomError, CmsError, CuckooError, RibbonError, TDigestError, TopKError};

/// Everything that can go wrong in the engine.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// RocksDB reported an error (its message; rust-rocksdb's error is only a string).
    Storage(String),
    /// An I/O error outside RocksDB.
    Io(std::io::Error),
    /// A stored page or record of `key` could not be decoded.
    Corruption {
        key: Vec<u8>,
        what: &'static str,
        source: rocksketch_merge::Error,
    },
    /// The key holds another type of structure.
    WrongType,
    /// A codec refused to build `what` (an operand) from shapes the engine derived:
    /// a bug, or stored parameters past the codec's limits; never the client's input.
    Encode {
        what: &'static str,
        source: rocksketch_merge::Error,
    },
    /// An argument is out of range; the text says which and why.
    InvalidArgument(String),
    /// A count-min sketch command error.
    Cms(CmsError),
    /// A Bloom filter command error.
    Bloom(BloomError),
    /// A cuckoo filter command error.
    Cuckoo(CuckooError),
    /// A t-digest command error.
    TDigest(TDigestError),
    /// A Top-K command error.
    TopK(TopKError),
    /// A Ribbon filter command error.
    Ribbon(RibbonError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Told to clients by `client_storage_text`; this is the log's and the
            // library's text.
            Error::Storage(msg) => write!(f, "storage error: {msg}"),
            Error::Io(err) => write!(f, "i/o error: {err}"),
            Error::Corruption { key, what, source } => write!(
                f,
                "ERR corruption in {what} of key '{}': {source}",
                String::from_utf8_lossy(key)
            ),
            Error::Encode { what, source } => write!(f, "ERR could not encode {what}: {source}"),
            Error::WrongType => {
                f.write_str("WRONGTYPE Operation against a key holding the wrong kind of value")
            }
            Error::InvalidArgument(msg) => write!(f, "ERR {msg}"),
            Error::Cms(err) => f.write_str(err.text()),
            Error::Bloom(err) => f.write_str(err.text()),
            Error::Cuckoo(err) => f.write_str(err.text()),
            Error::TDigest(err) => f.write_str(err.text()),
            Error::TopK(err) => f.write_str(err.text()),
            Error::Ribbon(err) => f.write_str(err.text()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(err) => Some(err),
            Error::Corruption { source, .. } | Error::Encode { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<rocksdb::Error> for Error {
    fn from(err: rocksdb::Error) -> Error {
        Error::Storage(err.into_string())
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Error {
        Error::Io(err)
    }
}

impl Error {
    /// A codec's refusal to build `what`.
    pub(crate) fn encode(what: &'static str) -> impl Fn(rocksketch_merge::Error) -> Error {
        move |source| Error::Encode { what, source }
    }

    /// Corruption found in `what` of `key`.
    pub(crate) fn corrupt(
        key: &[u8],
        what: &'static str,
        source: rocksketch_merge::Error,
    ) -> Error {
        Error::Corruption {
            key: key.to_vec(),
            what,
            source,
        }
    }
}

impl From<CuckooError> for Error {
    fn from(err: CuckooError) -> Error {
        Error::Cuckoo(err)
    }
}

impl From<BloomError> for Error {
    fn from(err: BloomError) -> Error {
        Error::Bloom(err)
    }
}

impl From<TopKError> for Error {
    fn from(err: TopKError) -> Error {
        Error::TopK(err)
    }
}

impl From<RibbonError> for Error {
    fn from(err: RibbonError) -> Error {
        Error::Ribbon(err)
    }
}

impl From<TDigestError> for Error {
    fn from(err: TDigestError) -> Error {
        Error::TDigest(err)
    }
}

impl From<CmsError> for Error {
    fn from(err: CmsError) -> Error {
        Error::Cms(err)
    }
}

/// `Result` with the engine's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<&Error> for rocksketch_resp::Reply {
    /// An error reply carrying the error's text (RedisBloom's, where it has one). A
    /// storage error is told to the client in a short, stable form that names no file
    /// of the server ([`client_storage_text`]); its whole message goes to the log.
    fn from(err: &Error) -> rocksketch_resp::Reply {
        let text = match err {
            Error::Storage(msg) => {
                log_storage_error("storage error", msg);
                client_storage_text(msg)
            }
            Error::Io(io) => {
                log_storage_error("i/o error", io);
                format!("ERR storage error: {}", io.kind())
            }
            other => other.to_string(),
        };
        rocksketch_resp::Reply::Error(text)
    }
}

/// Logs a storage error at most once a second, with how many were not logged since
/// (a full disk refuses every write: one line each would flood the log, and a log on a
/// full pipe would stall the server).
fn log_storage_error(what: &str, msg: &dyn fmt::Display) {
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    static LAST_MS: AtomicU64 = AtomicU64::new(0);
    static QUIET: AtomicU64 = AtomicU64::new(0);
    let now = crate::now_ms();
    let last = LAST_MS.load(Relaxed);
    if now.saturating_sub(last) < 1000
        || LAST_MS
            .compare_exchange(last, now, Relaxed, Relaxed)
            .is_err()
    {
        QUIET.fetch_add(1, Relaxed);
        return;
    }
    match QUIET.swap(0, Relaxed) {
        0 => log::warn!("{what}: {msg}"),
        n => log::warn!("{what}: {msg} ({n} more since the last report)"),
    }
}

/// What the client of a failed write sees of RocksDB's `msg`: a full disk is
/// [`DISK_FULL`]; any other error is `ERR storage error: ` and the message's leading
/// parts up to the first that names a file or an operation on one, so that no path of
/// the server reaches a client (`IO error: While lock file: /data/LOCK: ...` reads
/// `ERR storage error: IO error`).
pub fn client_storage_text(msg: &str) -> String {
    if msg.contains("No space left on device") || msg.contains("NoSpace") {
        return DISK_FULL.to_owned();
    }
    let reason: Vec<&str> = msg
        .split(": ")
        .take_while(|part| !part.contains('/') && !part.starts_with("While "))
        .take(2)
        .collect();
    match reason.is_empty() {
        true => "ERR storage error".to_owned(),
        false => format!("ERR storage error: {}", reason.join(": ")),
    }
}

/// The reply to a write refused because the disk is full.
pub const DISK_FULL: &str = "ERR disk full: writes are refused until space is freed";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_errors_reach_clients_without_server_paths() {
        let full = "IO error: No space left on device: While appending to file: \
                    /srv/data/000015.log: No space left on device";
        assert_eq!(client_storage_text(full), DISK_FULL);
        assert_eq!(
            client_storage_text("IO error: While lock file: /d/LOCK: Resource busy"),
            "ERR storage error: IO error"
        );
        assert_eq!(
            client_storage_text(
                "Corruption: block checksum mismatch: stored = 1, computed = 2 in /d/9.sst"
            ),
            "ERR storage error: Corruption: block checksum mismatch"
        );
        assert_eq!(client_storage_text("/only/a/path"), "ERR storage error");
        let reply = rocksketch_resp::Reply::from(&Error::Storage(full.to_owned()));
        assert_eq!(reply, rocksketch_resp::Reply::Error(DISK_FULL.to_owned()));
    }
}
