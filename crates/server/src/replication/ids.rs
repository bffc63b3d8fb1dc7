//! Replication ids, as Redis keeps them: the id of the history this server's data
//! follows, and the one it followed before a promotion with the offset up to which the
//! two agree. Kept in a file beside the database (`replication.state`), so that a
//! restarted primary or replica continues the same history.

use std::fmt::Write as _;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;

const FILE: &str = "replication.state";

/// What the state file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ids {
    pub(crate) replid: String,
    /// The id before the last promotion, and the offset it reached.
    pub(crate) replid2: Option<(String, u64)>,
    /// Whether this server was a replica when the state was written.
    pub(crate) role_replica: bool,
}

/// A new id: 40 hex digits, as Redis's.
pub(crate) fn new_id() -> String {
    let mut id = String::with_capacity(40);
    while id.len() < 40 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        hasher.write_u32(std::process::id());
        let _ = write!(id, "{:016x}", hasher.finish());
    }
    id.truncate(40);
    id
}

impl Ids {
    fn fresh() -> Ids {
        Ids {
            replid: new_id(),
            replid2: None,
            role_replica: false,
        }
    }

    /// The ids in `dir`'s state file. A primary keeps the history it had; one that
    /// was a replica until this start (started without `replicaof`) takes a new id,
    /// keeping the old one up to the offset it holds, as a promotion does.
    pub(crate) fn load(dir: &Path, replica: bool, latest: u64) -> Ids {
        let text = std::fs::read_to_string(dir.join(FILE)).unwrap_or_default();
        let mut ids = Ids::fresh();
        let mut was_replica = false;
        for line in text.lines() {
            let mut words = line.split_whitespace();
            match (words.next(), words.next(), words.next()) {
                (Some("replid"), Some(id), None) if valid(id) => ids.replid = id.to_owned(),
                (Some("replid2"), Some(id), Some(offset)) if valid(id) => {
                    if let Ok(offset) = offset.parse() {
                        ids.replid2 = Some((id.to_owned(), offset));
                    }
                }
                (Some("role"), Some("replica"), None) => was_replica = true,
                _ => {}
            }
        }
        if was_replica && !replica {
            return ids.promoted(latest);
        }
        ids.role_replica = replica;
        ids
    }

    /// Writes the state file (atomically: a whole new file, renamed over the old).
    pub(crate) fn save(&self, dir: &Path) {
        let mut text = format!("replid {}\n", self.replid);
        if let Some((id, offset)) = &self.replid2 {
            let _ = writeln!(text, "replid2 {id} {offset}");
        }
        if self.role_replica {
            text.push_str("role replica\n");
        }
        let tmp = dir.join(format!("{FILE}.tmp"));
        let written =
            std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, dir.join(FILE)));
        if let Err(e) = written {
            log::warn!(
                "writing the replication state in {} failed: {e}",
                dir.display()
            );
        }
    }

    /// After a promotion at `offset`.
    pub(crate) fn promoted(self, offset: u64) -> Ids {
        Ids {
            replid: new_id(),
            replid2: Some((self.replid, offset)),
            role_replica: false,
        }
    }

    /// A replica's, following a primary whose history is `replid` (a full sync, or a
    /// continuation under the primary's new id after its promotion).
    pub(crate) fn following(&self, replid: &str) -> Ids {
        if replid == self.replid {
            return Ids {
                role_replica: true,
                ..self.clone()
            };
        }
        Ids {
            replid: replid.to_owned(),
            replid2: None,
            role_replica: true,
        }
    }

    /// The id a replica at `latest` asks to continue (`PSYNC`): its own, or the one it
    /// had before a promotion if it wrote nothing since (a replica restarted without
    /// `replicaof` and then told to follow again continues where it stopped).
    pub(crate) fn psync_id(&self, latest: u64) -> &str {
        match &self.replid2 {
            Some((id, upto)) if *upto == latest => id,
            _ => &self.replid,
        }
    }

    /// Whether a replica at `offset` of history `replid` can continue from this
    /// server's log (if the log still reaches back to it).
    pub(crate) fn continues(&self, replid: &str, offset: u64) -> bool {
        replid == self.replid
            || self
                .replid2
                .as_ref()
                .is_some_and(|(id, upto)| id == replid && offset <= *upto)
    }
}

fn valid(id: &str) -> bool {
    id.len() == 40 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_survive_a_restart_and_a_promotion_keeps_the_old_history() {
        let dir = tempfile::tempdir().unwrap();
        let first = Ids::load(dir.path(), false, 0);
        first.save(dir.path());
        assert_eq!(Ids::load(dir.path(), false, 0), first);
        assert!(first.continues(&first.replid, 7));
        assert!(!first.continues(&new_id(), 7));

        let followed = new_id();
        let replica = first.following(&followed);
        replica.save(dir.path());
        assert_eq!(Ids::load(dir.path(), true, 50), replica);
        // Restarted without replicaof: a primary of a new history, the old up to 50.
        let promoted = Ids::load(dir.path(), false, 50);
        assert_ne!(promoted.replid, followed);
        assert!(promoted.continues(&followed, 50));
        assert!(!promoted.continues(&followed, 51));
        assert!(promoted.continues(&promoted.replid, 51));
    }
}
