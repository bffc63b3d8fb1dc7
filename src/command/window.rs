//! The `WINDOW ms [SLICES g]` option that ends the create commands of windowed
//! filters and sketches (see [`crate::window`]).

use super::args::Args;
use super::Reply;
use crate::error::{Error, Result};
use crate::window::{Window, WindowInfo, DEFAULT_SLICES};

/// Reads `WINDOW ms [SLICES g]` if the next argument is `WINDOW`; `None` if it is not.
pub(super) fn option(args: &mut Args) -> Result<Option<Window>> {
    if !args.next_if("WINDOW") {
        return Ok(None);
    }
    let bad_ms =
        || Error::InvalidArgument("WINDOW must be a positive number of milliseconds".into());
    let ms = args.next_arg().map_err(|_| bad_ms())?;
    let ms = super::parse::parse_i64(ms)
        .filter(|ms| *ms > 0)
        .ok_or_else(bad_ms)?;
    let slices = match args.next_if("SLICES") {
        false => DEFAULT_SLICES,
        true => {
            let bad = || Error::InvalidArgument("SLICES must be an integer from 1 to 64".into());
            let g = args.next_arg().map_err(|_| bad())?;
            super::parse::parse_i64(g)
                .and_then(|g| u16::try_from(g).ok())
                .ok_or_else(bad)?
        }
    };
    Window::new(ms as u64, slices).map(Some)
}

/// Reads the whole of what follows a create command's own arguments: nothing, or the
/// window option (anything else is RedisBloom's arity error).
pub(super) fn trailing(args: &mut Args) -> Result<Option<Window>> {
    let window = option(args)?;
    args.finish()?;
    Ok(window)
}

/// The `INFO` fields of a windowed structure: `Window` (ms), `Slices`, and
/// `Generations`, an array of `[start ms, fill]` per live generation, newest first.
pub(super) fn info_fields(info: Option<WindowInfo>) -> Vec<(&'static str, Reply)> {
    let Some(info) = info else {
        return Vec::new();
    };
    let int = |n: u64| Reply::Int(i64::try_from(n).unwrap_or(i64::MAX));
    let generations = info
        .generations
        .iter()
        .map(|(start, fill)| Reply::Array(vec![int(*start), int(*fill)]))
        .collect();
    vec![
        ("Window", int(info.window.ms)),
        ("Slices", int(u64::from(info.window.slices))),
        ("Generations", Reply::Array(generations)),
    ]
}

/// Splits a create command's arguments at a `WINDOW` option found at `first` or later
/// (before it, the command's own arguments, parsed as without a window), reading the
/// option and checking that nothing follows it.
pub(super) fn split<'a>(
    command: &'static str,
    all: &'a [Vec<u8>],
    first: usize,
) -> Result<(&'a [Vec<u8>], Option<Window>)> {
    let at = all
        .iter()
        .skip(first)
        .position(|a| a.eq_ignore_ascii_case(b"WINDOW"))
        .map(|at| at + first);
    match at {
        None => Ok((all, None)),
        Some(at) => {
            let (own, option) = all.split_at(at);
            Ok((own, trailing(&mut Args::of(command, option))?))
        }
    }
}
