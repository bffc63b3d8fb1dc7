//! What a Redis client is told of an engine error: RedisBloom's texts, Redis's `ERR`
//! and `WRONGTYPE` prefixes, and storage errors in a short form that names no file of
//! the server (their whole message goes to the log).

use crate::error::Error;
use rocksketch_resp::Reply;
use std::fmt;

impl From<Error> for Reply {
    fn from(err: Error) -> Reply {
        Reply::from(&err)
    }
}

impl From<&Error> for Reply {
    /// An error reply with the text a Redis client expects (RedisBloom's, where it has one). A
    /// storage error is told to the client in a short, stable form that names no file
    /// of the server (`client_storage_text`); its whole message goes to the log.
    fn from(err: &Error) -> Reply {
        let text = match err {
            Error::RocksDb(err) => {
                log_storage_error("storage error", &err.as_ref());
                client_storage_text(err.as_ref())
            }
            Error::Storage(msg) => {
                log_storage_error("storage error", msg);
                client_storage_text(msg)
            }
            Error::Io(io) => {
                log_storage_error("i/o error", io);
                format!("ERR storage error: {}", io.kind())
            }
            Error::Corruption { key, what, source } => format!(
                "ERR corruption in {what} of key '{}': {source}",
                String::from_utf8_lossy(key)
            ),
            Error::Encode { what, source } => format!("ERR could not encode {what}: {source}"),
            Error::WrongType => {
                "WRONGTYPE Operation against a key holding the wrong kind of value".to_owned()
            }
            Error::InvalidArgument(msg) => format!("ERR {msg}"),
            Error::ReadOnly => "READONLY You can't write against a read only replica.".to_owned(),
            Error::WrongArity(command) => {
                format!("ERR wrong number of arguments for '{command}' command")
            }
            Error::Cms(err) => err.text().to_owned(),
            Error::Bloom(err) => err.text().to_owned(),
            Error::Cuckoo(err) => err.text().to_owned(),
            Error::TDigest(err) => err.text().to_owned(),
            Error::TopK(err) => err.text().to_owned(),
            Error::Ribbon(err) => err.text().to_owned(),
            Error::Hll(err) => err.text().to_owned(),
        };
        Reply::Error(text)
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
        let reply = Reply::from(&Error::Storage(full.to_owned()));
        assert_eq!(reply, Reply::Error(DISK_FULL.to_owned()));
    }

    #[test]
    fn replies_carry_the_wire_texts_and_display_the_library_texts() {
        let wrong = Error::WrongType;
        assert_eq!(
            Reply::from(&wrong),
            Reply::Error(
                "WRONGTYPE Operation against a key holding the wrong kind of value".into()
            )
        );
        assert_eq!(wrong.to_string(), "the key holds another type of structure");
        let exists = Error::from(crate::BloomError::ItemExists);
        assert_eq!(Reply::from(&exists), Reply::Error("ERR item exists".into()));
        assert_eq!(exists.to_string(), "item exists");
        let invalid = Error::InvalidArgument("key too long".into());
        assert_eq!(
            Reply::from(&invalid),
            Reply::Error("ERR key too long".into())
        );
        assert_eq!(invalid.to_string(), "invalid argument: key too long");
        for err in [wrong, exists, invalid] {
            assert!(!err.to_string().starts_with("ERR"), "{err}");
        }
    }
}
