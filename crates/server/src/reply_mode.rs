//! `CLIENT REPLY ON | OFF | SKIP`: whether a connection is sent its replies, with
//! Redis's rules. `OFF` silences every reply (its own included) until `ON`; `SKIP`
//! silences its own and the next command's (and does nothing under `OFF`); `ON` is
//! always answered. Whether a command's reply is sent is decided once it has run, so
//! `CLIENT REPLY ON` after a `SKIP` is answered, as in Redis.

/// A connection's reply mode.
#[derive(Default, Clone, Copy)]
pub(crate) struct ReplyMode {
    off: bool,
    /// The running command's reply is not sent (set by the `SKIP` before it).
    skip: bool,
    /// Set by `SKIP`: the next command's reply is not sent.
    skip_next: bool,
    /// The running command is `CLIENT REPLY OFF | SKIP`, which has no reply.
    silent: bool,
}

impl ReplyMode {
    /// Whether every reply is sent (the fast paths, which batch requests across
    /// connections and encode several replies at once, run only then).
    pub(crate) fn is_on(&self) -> bool {
        !(self.off || self.skip || self.skip_next || self.silent)
    }

    /// Whether the reply of the command that just ran is dropped.
    pub(crate) fn drops_reply(&self) -> bool {
        self.off || self.skip || self.silent
    }

    /// After a command has been processed (answered, or parked with its answer to
    /// come): a `SKIP` it made applies to the next one.
    pub(crate) fn next_command(&mut self) {
        self.skip = std::mem::take(&mut self.skip_next);
        self.silent = false;
    }

    /// `CLIENT REPLY word`: `false` for a word Redis refuses (`ERR syntax error`).
    pub(crate) fn set(&mut self, word: &str) -> bool {
        match word {
            "on" => {
                self.off = false;
                self.skip = false;
            }
            "off" => {
                self.off = true;
                self.silent = true;
            }
            "skip" => {
                if !self.off {
                    self.skip_next = true;
                }
                self.silent = true;
            }
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs commands (`Some(word)`: `CLIENT REPLY word`, `None`: another command) and
    /// returns which were answered.
    fn answered(script: &[Option<&str>]) -> Vec<bool> {
        let mut mode = ReplyMode::default();
        script
            .iter()
            .map(|step| {
                if let Some(word) = step {
                    assert!(mode.set(word));
                }
                let sent = !mode.drops_reply();
                mode.next_command();
                sent
            })
            .collect()
    }

    #[test]
    fn follows_redis_for_every_sequence_the_oracle_was_asked() {
        let (on, off, skip, other) = (Some("on"), Some("off"), Some("skip"), None);
        // What Redis 7.0 answered to each (see tests in client_flow_vs_redis.rs).
        assert_eq!(
            answered(&[off, other, other, skip, other, on, other]),
            [false, false, false, false, false, true, true]
        );
        assert_eq!(
            answered(&[skip, skip, other, other]),
            [false, false, false, true]
        );
        assert_eq!(answered(&[skip, on, other]), [false, true, true]);
        assert_eq!(
            answered(&[off, skip, other, on, other]),
            [false, false, false, true, true]
        );
        let mut mode = ReplyMode::default();
        assert!(!mode.set("maybe") && mode.is_on());
    }
}
