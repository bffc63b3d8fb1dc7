//! The dump of a windowed filter: its window, its live generations and their pages.
//!
//! ```text
//! kind 3, header (cursor 1):  window_ms u64 | slices u16 | generations u32 |
//!                             per generation, oldest first:
//!                               generation u64 | len u32 | the family's header (len bytes)
//! kind 4, page (cursor >= 2): generation u64 | sub u32 | page u32 | body      (all LE)
//! ```
//!
//! Each generation's number is its time (`generation × slice_ms` is when its slice
//! began), so a restored filter's items leave its window when the dumped ones would
//! have. Positions number the pages of the header's generations one after another (each
//! generation's as a plain chain's); the cursor's tag names the key version and the
//! oldest live generation, so a dump that a slice boundary overtakes (a generation
//! aged out, another began) is refused as a changed filter and starts again.

use super::dump::{ChainDump, DumpError, KIND_WINDOW_HEADER, KIND_WINDOW_PAGE};
use super::{frame, next_stored_page, Chain, DumpCursor, StoredPage};
use crate::error::{Error, Result};
use crate::window::{generation_prefix, Window};
use rocksketch_merge::bytes::{le_u32, le_u64};

/// Positions a dump may number (the cursor's bits for them).
const MAX_POSITION: u64 = (1 << 34) - 1;

/// One step of a windowed filter's dump (see [`super::scandump`]).
pub(super) fn scandump<F: ChainDump>(
    filter: &F,
    chain: &Chain<F::Params>,
    cursor: i64,
) -> Result<(i64, Vec<u8>)> {
    let Some((window, generations)) = &chain.window else {
        return Err(F::dump_error(DumpError::BadChunk));
    };
    let oldest = generations.first().copied().unwrap_or(0);
    let tag = DumpCursor::tag(
        chain.version ^ oldest.rotate_left(32),
        chain.pages.len() as u32,
    );
    let per_generation: u64 = chain.pages.iter().map(|p| u64::from(*p)).sum();
    if per_generation.saturating_mul(generations.len() as u64) + 1 > MAX_POSITION {
        return Err(Error::InvalidArgument(
            "the windowed filter has too many pages to dump".to_owned(),
        ));
    }
    let at = DumpCursor::parse(cursor).ok_or_else(|| F::dump_error(DumpError::InvalidPosition))?;
    if cursor == 0 {
        let mut payload = Vec::new();
        window.encode_into(&mut payload);
        payload.extend_from_slice(&(generations.len() as u32).to_le_bytes());
        for g in generations {
            let header = filter.header(chain, &generation_prefix(&chain.prefix, *g))?;
            payload.extend_from_slice(&g.to_le_bytes());
            payload.extend_from_slice(&(header.len() as u32).to_le_bytes());
            payload.extend_from_slice(&header);
        }
        let next = DumpCursor { tag, position: 1 };
        return Ok((next.encode(), frame(F::MAGIC, KIND_WINDOW_HEADER, &payload)));
    }
    if at.tag != tag {
        return Err(F::dump_error(DumpError::Changed));
    }
    // Position p names page j × per_generation + w = p - 1 of the dump: page w of
    // generation j (as a plain chain's positions name its pages from 1).
    let mut skip = at.position.saturating_sub(1);
    for (j, g) in generations.iter().enumerate() {
        if skip >= per_generation {
            skip -= per_generation;
            continue;
        }
        let prefix = generation_prefix(&chain.prefix, *g);
        if let Some(StoredPage {
            next,
            sub,
            page,
            value,
        }) = next_stored_page(filter.store(), &prefix, &chain.pages, skip + 1)?
        {
            let body = filter.page_body(chain, sub, value)?;
            let mut payload = Vec::with_capacity(16 + body.len());
            payload.extend_from_slice(&g.to_le_bytes());
            payload.extend_from_slice(&sub.to_le_bytes());
            payload.extend_from_slice(&page.to_le_bytes());
            payload.extend_from_slice(&body);
            let next = DumpCursor {
                tag,
                position: j as u64 * per_generation + next,
            };
            return Ok((next.encode(), frame(F::MAGIC, KIND_WINDOW_PAGE, &payload)));
        }
        skip = 0;
    }
    Ok((0, Vec::new()))
}

/// Creates a windowed filter from its dump's header: the window, and each
/// generation's tally from the family's header of it (their parameters must agree).
pub(super) fn load_header<F: ChainDump>(filter: &F, payload: &[u8]) -> Result<()> {
    let bad = || F::dump_error(DumpError::BadHeader);
    let window = payload
        .get(..Window::ENCODED_LEN)
        .and_then(|w| Window::decode(w).ok())
        .ok_or_else(bad)?;
    let mut at = Window::ENCODED_LEN;
    let count = le_u32(payload, at).map_err(|_| bad())?;
    at += 4;
    // No more generations can be live at once.
    if count == 0 || u64::from(count) > window.max_live() {
        return Err(bad());
    }
    let mut params = None;
    let mut generations = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let g = le_u64(payload, at).map_err(|_| bad())?;
        let len = le_u32(payload, at + 8).map_err(|_| bad())? as usize;
        at += 12;
        let header = payload.get(at..at + len).ok_or_else(bad)?;
        at += len;
        let (these, counts) = filter.parse_header(header)?;
        if params.is_some_and(|p| p != these) {
            return Err(bad());
        }
        if generations.last().is_some_and(|(last, _)| *last >= g) {
            return Err(bad());
        }
        params = Some(these);
        generations.push((g, counts));
    }
    let (Some(params), true) = (params, at == payload.len()) else {
        return Err(bad());
    };
    let (ns, key) = filter.ns_key();
    match filter
        .store()
        .create_restored_windowed(ns, key, params, window, generations)?
    {
        true => Ok(()),
        false => Err(F::dump_error(DumpError::HeaderForExisting)),
    }
}
