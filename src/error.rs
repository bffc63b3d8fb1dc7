//! The engine's error type: storage failures, corruption, and the user-facing cases, each
//! with the text RedisBloom sends for it.

use std::fmt;

mod families;

pub use families::{
    BloomError, CmsError, CuckooError, HllError, RibbonError, TDigestError, TopKError,
};

/// Everything that can go wrong in the engine.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// RocksDB reported an error: its message, and its kind (`kind()`).
    RocksDb(rocksdb::Error),
    /// The store could not do its part: a column family missing, a write left
    /// unanswered, a database that could not be reopened in time.
    Storage(String),
    /// An I/O error outside RocksDB.
    Io(std::io::Error),
    /// A stored page or record of `key` could not be decoded.
    Corruption {
        /// The key whose data is damaged.
        key: Vec<u8>,
        /// What of it: a page, a metadata record.
        what: &'static str,
        /// What the decoder found.
        source: rocksketch_merge::Error,
    },
    /// The key holds another type of structure.
    WrongType,
    /// A codec refused to build `what` (an operand) from shapes the engine derived:
    /// a bug, or stored parameters past the codec's limits; never the client's input.
    Encode {
        /// What it was to build.
        what: &'static str,
        /// The codec's reason.
        source: rocksketch_merge::Error,
    },
    /// An argument is out of range; the text says which and why.
    InvalidArgument(String),
    /// A command was given too few or too many arguments (its name, in lower case).
    WrongArity(&'static str),
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
    /// A HyperLogLog command error.
    Hll(HllError),
    /// The store is a replica ([`crate::Store::set_replica`]): it takes the writes its
    /// primary ships, none of its own.
    ReadOnly,
}

impl fmt::Display for Error {
    /// The library's text. What a Redis client is told (RedisBloom's texts, `ERR`,
    /// `WRONGTYPE`) is made in the command layer (`command::wire`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::RocksDb(err) => write!(f, "storage error: {}", err.as_ref()),
            Error::Storage(msg) => write!(f, "storage error: {msg}"),
            Error::Io(err) => write!(f, "i/o error: {err}"),
            Error::Corruption { key, what, source } => write!(
                f,
                "corruption in {what} of key '{}': {source}",
                String::from_utf8_lossy(key)
            ),
            Error::Encode { what, source } => write!(f, "could not encode {what}: {source}"),
            Error::WrongType => f.write_str("the key holds another type of structure"),
            Error::ReadOnly => f.write_str("a replica takes no writes of its own"),
            Error::InvalidArgument(msg) => write!(f, "invalid argument: {msg}"),
            Error::WrongArity(command) => {
                write!(f, "wrong number of arguments for '{command}'")
            }
            Error::Cms(err) => f.write_str(library_text(err.text())),
            Error::Bloom(err) => f.write_str(library_text(err.text())),
            Error::Cuckoo(err) => f.write_str(library_text(err.text())),
            Error::TDigest(err) => f.write_str(library_text(err.text())),
            Error::TopK(err) => f.write_str(library_text(err.text())),
            Error::Ribbon(err) => f.write_str(library_text(err.text())),
            Error::Hll(err) => f.write_str(library_text(err.text())),
        }
    }
}

/// A family error's RedisBloom text without the wire's `ERR ` prefix.
fn library_text(text: &str) -> &str {
    text.strip_prefix("ERR ").unwrap_or(text)
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
        Error::RocksDb(err)
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

impl From<HllError> for Error {
    fn from(err: HllError) -> Error {
        Error::Hll(err)
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
