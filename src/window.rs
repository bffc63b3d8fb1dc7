//! Sliding windows: a filter or sketch over the last `ms` milliseconds, kept as a ring
//! of generations.
//!
//! Time is cut into slices of `slice_ms = ms / slices` milliseconds; generation `n`
//! holds what was written in `[n × slice_ms, (n + 1) × slice_ms)`, under its own page
//! prefix (`version prefix | WINDOW_SUB | n`, so the generations of a key sort by age
//! and every one older than some `n` is one contiguous range). Writes go blindly to the
//! current generation; reads combine the live ones, those that end after `now - ms`. An
//! item written at `t` is therefore read at every time in `[t, t + ms]` (its generation
//! ends after `t`) and at no time from `t + ms + slice_ms` on (its generation ended by
//! `t + slice_ms`). A generation that is no longer live is never read again; the expiry
//! sweep removes it with one range delete.
//!
//! The clock is the store's ([`Clock`]), so tests drive time:
//!
//! ```
//! # fn main() -> rocksketch::Result<()> {
//! use rocksketch::{Clock, Store, StoreOptions, Window};
//!
//! let clock = Clock::manual(1_700_000_000_000);
//! let dir = tempfile::tempdir()?;
//! let options = StoreOptions { clock: clock.clone(), ..StoreOptions::default() };
//! let store = Store::open(dir.path(), options)?;
//! let seen = store.bloom("seen");
//! seen.reserve_windowed(0.001, 10_000, 2, Window::new(60_000, 6)?)?; // 1 min, 10 s slices
//! assert!(seen.add("event:81")?);
//! clock.advance(60_000); // the window's end: still seen
//! assert!(seen.exists("event:81")?);
//! clock.advance(10_000); // a slice later: forgotten
//! assert!(!seen.exists("event:81")?);
//! # Ok(()) }
//! ```

use crate::error::{Error, Result};
use crate::keys;
use std::fmt;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Slices a window has unless its creation names another count.
pub const DEFAULT_SLICES: u16 = 8;
/// The most slices a window may have: a read combines up to `slices + 1` generations.
pub const MAX_SLICES: u16 = 64;

/// The `sub` number under which a windowed key's generations live (below the tally's).
const WINDOW_SUB: u16 = u16::MAX - 1;

/// A sliding window: its length and the generations it is cut into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The window's length in milliseconds.
    pub ms: u64,
    /// Generations the window is cut into.
    pub slices: u16,
}

impl Window {
    /// A window of `ms` milliseconds in `slices` generations: `1 ≤ slices ≤ 64` and at
    /// least a millisecond per slice.
    pub fn new(ms: u64, slices: u16) -> Result<Window> {
        if !(1..=MAX_SLICES).contains(&slices) {
            return Err(Error::InvalidArgument(format!(
                "SLICES must be an integer from 1 to {MAX_SLICES}"
            )));
        }
        if ms < u64::from(slices) {
            return Err(Error::InvalidArgument(
                "WINDOW must be at least one millisecond per slice".to_owned(),
            ));
        }
        Ok(Window { ms, slices })
    }

    /// Milliseconds per generation.
    pub fn slice_ms(&self) -> u64 {
        (self.ms / u64::from(self.slices)).max(1)
    }

    /// The generation a write at `now` goes to.
    pub fn generation(&self, now: u64) -> u64 {
        now / self.slice_ms()
    }

    /// The generations a read at `now` combines: every one that ends after `now - ms`.
    pub fn live(&self, now: u64) -> RangeInclusive<u64> {
        now.saturating_sub(self.ms) / self.slice_ms()..=self.generation(now)
    }

    /// The most generations a read can combine (`slices + 1` when `slices` divides the
    /// window): what a filter's error is divided among.
    pub fn max_live(&self) -> u64 {
        self.ms.div_ceil(self.slice_ms()) + 1
    }

    /// The window's bytes in a metadata record: `ms u64 LE | slices u16 LE`.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.ms.to_le_bytes());
        out.extend_from_slice(&self.slices.to_le_bytes());
    }

    /// Bytes [`Window::encode_into`] writes.
    pub(crate) const ENCODED_LEN: usize = 10;

    /// Decodes [`Window::encode_into`]'s bytes, checking the fields.
    pub(crate) fn decode(bytes: &[u8]) -> std::result::Result<Window, rocksketch_merge::Error> {
        let ms = rocksketch_merge::bytes::le_u64(bytes, 0)?;
        let slices = bytes
            .get(8..10)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or(rocksketch_merge::Error::Truncated {
                need: Window::ENCODED_LEN,
                have: bytes.len(),
            })?;
        Window::new(ms, slices).map_err(|_| rocksketch_merge::Error::Invalid("window out of range"))
    }
}

/// The prefix of generation `generation`'s pages, given the key version's prefix: a
/// generation's pages are those of a whole structure under this prefix.
pub(crate) fn generation_prefix(version_prefix: &[u8], generation: u64) -> Vec<u8> {
    let mut out = keys::sub_prefix(version_prefix, WINDOW_SUB);
    out.extend_from_slice(&generation.to_be_bytes());
    out
}

/// Where one operation on a key reads and writes: the version prefix of a key without a
/// window; the live generations' prefixes, newest first, for one with a window.
#[derive(Debug, Clone)]
pub(crate) struct Prefixes {
    /// The prefixes to read and combine, the one writes go to first.
    pub(crate) live: Vec<Vec<u8>>,
}

impl Prefixes {
    /// The prefixes of the key version `version_prefix` at `now`.
    pub(crate) fn of(version_prefix: Vec<u8>, window: Option<Window>, now: u64) -> Prefixes {
        let Some(window) = window else {
            return Prefixes {
                live: vec![version_prefix],
            };
        };
        let live = window
            .live(now)
            .rev()
            .map(|g| generation_prefix(&version_prefix, g))
            .collect();
        Prefixes { live }
    }

    /// Where writes go: the version prefix, or the current generation's.
    pub(crate) fn write(&self) -> &[u8] {
        &self.live[0]
    }

    /// The prefixes read besides [`Prefixes::write`]'s: older live generations.
    pub(crate) fn older(&self) -> &[Vec<u8>] {
        &self.live[1..]
    }
}

/// The range of page keys holding the generations of `version_prefix` older than
/// `oldest_live`: what the expiry sweep deletes.
pub(crate) fn dead_range(version_prefix: &[u8], oldest_live: u64) -> (Vec<u8>, Vec<u8>) {
    (
        generation_prefix(version_prefix, 0),
        generation_prefix(version_prefix, oldest_live),
    )
}

/// A windowed structure's `INFO` fields: its window and what each live generation
/// holds, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowInfo {
    /// The window.
    pub window: Window,
    /// `(start_ms, fill)` per live generation, the current one first: the time its
    /// slice began and its items (a count-min sketch's: its total count).
    pub generations: Vec<(u64, u64)>,
}

impl WindowInfo {
    /// The info of `window` at `now`, `fill` given newest first.
    pub(crate) fn new(window: Window, now: u64, fill: Vec<u64>) -> WindowInfo {
        let slice = window.slice_ms();
        let generations = window
            .live(now)
            .rev()
            .zip(fill)
            .map(|(g, fill)| (g.saturating_mul(slice), fill))
            .collect();
        WindowInfo {
            window,
            generations,
        }
    }
}

/// The time windows are read by: the system's, or one a test sets.
#[derive(Clone, Default)]
pub struct Clock {
    manual: Option<Arc<AtomicU64>>,
}

impl Clock {
    /// The system clock (the default).
    pub fn system() -> Clock {
        Clock { manual: None }
    }

    /// A clock that reads `start_ms` until set or advanced.
    pub fn manual(start_ms: u64) -> Clock {
        Clock {
            manual: Some(Arc::new(AtomicU64::new(start_ms))),
        }
    }

    /// Unix time in milliseconds.
    pub fn now_ms(&self) -> u64 {
        match &self.manual {
            Some(t) => t.load(Ordering::SeqCst),
            None => crate::now_ms(),
        }
    }

    /// Moves a manual clock to `ms` (the system clock ignores it).
    pub fn set(&self, ms: u64) {
        if let Some(t) = &self.manual {
            t.store(ms, Ordering::SeqCst);
        }
    }

    /// Moves a manual clock on by `ms`.
    pub fn advance(&self, ms: u64) {
        if let Some(t) = &self.manual {
            t.fetch_add(ms, Ordering::SeqCst);
        }
    }
}

impl fmt::Debug for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.manual {
            Some(t) => write!(f, "Clock::manual({})", t.load(Ordering::SeqCst)),
            None => f.write_str("Clock::system()"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_is_live_for_the_window_and_gone_a_slice_after() {
        for (ms, slices) in [(1000, 8), (1000, 7), (10, 10), (5, 1), (97, 3)] {
            let w = Window::new(ms, slices).unwrap();
            for t in 0..3 * ms {
                let g = w.generation(t);
                for now in t..=t + ms {
                    assert!(w.live(now).contains(&g), "{ms}/{slices}: {t} at {now}");
                }
                for now in t + ms + w.slice_ms()..t + 2 * ms + 2 {
                    assert!(!w.live(now).contains(&g), "{ms}/{slices}: {t} at {now}");
                }
                assert!(w.live(t).count() as u64 <= w.max_live());
            }
        }
    }

    #[test]
    fn generations_sort_by_age_inside_the_version_and_before_the_tally() {
        let vp = keys::version_prefix(0, b"k", 1);
        let a = keys::page_key(&generation_prefix(&vp, 2), 0, 9);
        let b = keys::page_key(&generation_prefix(&vp, 256), 0, 0);
        let tally = keys::page_key(&vp, keys::TALLY_SUB, 0);
        assert!(a < b && b < tally);
        let (from, to) = dead_range(&vp, 256);
        assert!(from <= a && a < to && b >= to);
        assert!(b.starts_with(&vp));
    }

    #[test]
    fn bad_windows_are_refused_and_round_trip() {
        assert!(Window::new(7, 8).is_err());
        assert!(Window::new(100, 0).is_err());
        assert!(Window::new(100, MAX_SLICES + 1).is_err());
        let w = Window::new(60_000, 8).unwrap();
        let mut bytes = Vec::new();
        w.encode_into(&mut bytes);
        assert_eq!(bytes.len(), Window::ENCODED_LEN);
        assert_eq!(Window::decode(&bytes), Ok(w));
        assert!(Window::decode(&bytes[..9]).is_err());
    }
}
