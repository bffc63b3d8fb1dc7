//! `SAVE`, `BGSAVE`, `LASTSAVE` and `INFO persistence`. A save is a backup: a checkpoint
//! of the store ([`Store::checkpoint`]: consistent, table files hard-linked, taken while
//! writes go on) in the backup directory, which `rocksketch serve --dir` starts from.
//! (Every acknowledged write is in RocksDB's write-ahead log before its answer; a save
//! is not what makes writes durable, it is a copy to keep.)
//!
//! The directory holds the newest checkpoint, `checkpoint-<unix ms>`, and `latest`, a
//! symbolic link to it, as Redis keeps one `dump.rdb`: a checkpoint is made under a
//! hidden name, renamed once complete, `latest` is moved to it (a rename, so it always
//! names a complete one), and only then are older checkpoints removed.

use parking_lot::Mutex;
use rocksketch::Store;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The link to the newest checkpoint.
pub(crate) const LATEST: &str = "latest";
const PREFIX: &str = "checkpoint-";

/// The saves of one server: where they go, the newest, and the one in the background.
pub(crate) struct Saves {
    dir: PathBuf,
    /// Unix seconds of the last successful save (the start, before any).
    last: AtomicU64,
    newest: Mutex<Option<Saved>>,
    /// One save at a time: a `SAVE` waits for a running `BGSAVE`.
    saving: Mutex<()>,
    background: Mutex<Background>,
    /// The last save failed.
    failed: AtomicBool,
    saves: AtomicU64,
}

/// A checkpoint made.
#[derive(Clone)]
pub(crate) struct Saved {
    pub(crate) path: PathBuf,
    /// The newest write acknowledged before it began, which it holds at least.
    pub(crate) sequence: u64,
    pub(crate) took: Duration,
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Saves {
    /// Saves into `dir`; `LASTSAVE` starts from the newest checkpoint found there, or
    /// (as Redis does without a dump) from now.
    pub(crate) fn new(dir: PathBuf) -> Saves {
        let found = std::fs::read_link(dir.join(LATEST))
            .ok()
            .map(|target| dir.join(target))
            .filter(|path| path.is_dir());
        let last = found
            .as_deref()
            .and_then(|path| std::fs::metadata(path).ok()?.modified().ok())
            .and_then(|modified| modified.duration_since(UNIX_EPOCH).ok())
            .map_or_else(unix_now, |d| d.as_secs());
        Saves {
            newest: Mutex::new(found.map(|path| Saved {
                path,
                sequence: 0,
                took: Duration::ZERO,
            })),
            dir,
            last: AtomicU64::new(last),
            saving: Mutex::new(()),
            background: Mutex::default(),
            failed: AtomicBool::new(false),
            saves: AtomicU64::new(0),
        }
    }

    /// Makes a checkpoint now (`SAVE`, and `BGSAVE` on its own thread).
    pub(crate) fn save(&self, store: &Store) -> rocksketch::Result<Saved> {
        let _one = self.saving.lock();
        let started = Instant::now();
        let saved = self.checkpoint(store).map(|(path, sequence)| Saved {
            path,
            sequence,
            took: started.elapsed(),
        });
        self.failed.store(saved.is_err(), Ordering::Relaxed);
        match &saved {
            Ok(saved) => {
                self.last.store(unix_now(), Ordering::Relaxed);
                self.saves.fetch_add(1, Ordering::Relaxed);
                *self.newest.lock() = Some(saved.clone());
                log::info!(
                    "checkpoint {} made in {:.3} s",
                    saved.path.display(),
                    saved.took.as_secs_f64()
                );
            }
            Err(e) => log::warn!("saving a checkpoint in {} failed: {e}", self.dir.display()),
        }
        saved
    }

    fn checkpoint(&self, store: &Store) -> rocksketch::Result<(PathBuf, u64)> {
        std::fs::create_dir_all(&self.dir)?;
        let mut name = format!("{PREFIX}{}", unix_millis());
        for n in 1.. {
            if !self.dir.join(&name).exists() {
                break;
            }
            name = format!("{PREFIX}{}-{n}", unix_millis());
        }
        let partial = self.dir.join(format!(".{name}.partial"));
        let sequence = store.checkpoint(&partial)?;
        let path = self.dir.join(&name);
        std::fs::rename(&partial, &path)?;
        let link = self.dir.join(".latest.partial");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&name, &link)?;
        std::fs::rename(&link, self.dir.join(LATEST))?;
        std::fs::File::open(&self.dir)?.sync_all()?;
        remove_older(&self.dir, &name);
        Ok((path, sequence))
    }

    /// Claims the one background save, or (`schedule`) asks the running one for
    /// another pass once it ends.
    pub(crate) fn begin_background(&self, schedule: bool) -> Begun {
        let mut background = self.background.lock();
        if !background.running {
            background.running = true;
            Begun::Start
        } else if schedule {
            background.scheduled = true;
            Begun::Scheduled
        } else {
            Begun::Busy
        }
    }

    /// The background save claimed by [`Saves::begin_background`]: saves, again while
    /// passes were scheduled meanwhile, then lets the next one start.
    pub(crate) fn run_background(&self, store: &Store) {
        loop {
            let _ = self.save(store);
            let mut background = self.background.lock();
            if !std::mem::take(&mut background.scheduled) {
                background.running = false;
                return;
            }
        }
    }

    /// Gives back a claim whose save could not start.
    pub(crate) fn abandon_background(&self) {
        *self.background.lock() = Background::default();
    }

    /// `LASTSAVE`: Unix seconds of the last successful save.
    pub(crate) fn last(&self) -> u64 {
        self.last.load(Ordering::Relaxed)
    }

    pub(crate) fn background_running(&self) -> bool {
        self.background.lock().running
    }

    pub(crate) fn last_failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Saves made since the start.
    pub(crate) fn count(&self) -> u64 {
        self.saves.load(Ordering::Relaxed)
    }

    /// The newest checkpoint (found at the start, or made since).
    pub(crate) fn newest(&self) -> Option<Saved> {
        self.newest.lock().clone()
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

fn unix_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// Removes the checkpoints but `keep`, and what saves cut short left (a crash).
fn remove_older(dir: &Path, keep: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = name.starts_with(PREFIX) || name.starts_with(&format!(".{PREFIX}"));
        if ours && name != keep {
            if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                log::warn!("removing the old checkpoint {name}: {e}");
            }
        }
    }
}

/// The background save: whether it runs, and whether another pass was asked for.
#[derive(Default)]
struct Background {
    running: bool,
    scheduled: bool,
}

/// What [`Saves::begin_background`] did.
pub(crate) enum Begun {
    Start,
    Scheduled,
    Busy,
}

#[cfg(test)]
mod tests;
