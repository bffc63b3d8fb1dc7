//! Progress of long benchmarks: a bar on standard error when it is a terminal, nothing
//! under `--json` or when the output goes to a file or a pipe. Bars advance outside the
//! timed regions, so they do not change what is measured.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

static QUIET: AtomicBool = AtomicBool::new(false);

/// Hides every bar from now on (`--json`).
pub fn quiet() {
    QUIET.store(true, Ordering::Relaxed);
}

/// A bar of `len` steps labelled `what`; hidden unless standard error is a terminal.
pub fn bar(len: usize, what: &str) -> ProgressBar {
    if QUIET.load(Ordering::Relaxed) || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg:>24} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_owned());
    bar
}
