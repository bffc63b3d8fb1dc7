//! The dump protocol of a chain of sub-filters, written once for the Bloom and cuckoo
//! filters (`BF.SCANDUMP`/`BF.LOADCHUNK`, `CF.SCANDUMP`/`CF.LOADCHUNK`): a header chunk
//! at cursor 1, then one chunk per stored page, `sub u32 LE | page u32 LE | body`, each
//! in the frame of [`super::frame`]. Each filter says what its header holds, what a
//! page's body is, and how both are loaded back ([`ChainDump`]). A windowed filter's
//! dump carries its generations (see [`super::window`]).

use super::{frame, next_stored_page, unframe, DumpCursor, StoredPage};
use crate::error::{Error, Result};
use crate::store::{KeyGuard, Store};
use rocksketch_merge::bytes::le_u32;

const KIND_HEADER: u8 = 1;
const KIND_PAGE: u8 = 2;
/// A windowed filter's header and pages (see [`super::window`]).
pub(super) const KIND_WINDOW_HEADER: u8 = 3;
pub(super) const KIND_WINDOW_PAGE: u8 = 4;

/// The dump errors every family has, each with its own text.
pub(crate) enum DumpError {
    /// A page chunk whose frame or contents are damaged, or that fits no position.
    BadChunk,
    /// A header chunk (position 1) whose frame or contents are damaged.
    BadHeader,
    /// A header chunk for a key that holds a filter already.
    HeaderForExisting,
    /// A page chunk for a key that holds nothing.
    NotFound,
    /// A cursor that names no chunk.
    InvalidPosition,
    /// The chain grew, or the key was recreated, since the dump began.
    Changed,
}

/// A chain as a dump sees it.
pub(crate) struct Chain<P> {
    pub version: u64,
    pub params: P,
    /// Each sub-filter's page count.
    pub pages: Vec<u32>,
    /// The key version's page prefix.
    pub prefix: Vec<u8>,
    /// A windowed filter's window and its live generations when the chain was read,
    /// oldest first.
    pub window: Option<(crate::Window, Vec<u64>)>,
}

/// What a filter tells the dump protocol.
pub(crate) trait ChainDump {
    type Params;
    /// The chunks' magic bytes.
    const MAGIC: &'static [u8; 4];

    fn store(&self) -> &Store;

    /// The family's error for a dump error.
    fn dump_error(error: DumpError) -> Error;

    /// The chain under the key's lock (the family's not-found error if there is none).
    fn chain(&self, guard: &KeyGuard) -> Result<Chain<Self::Params>>;

    /// The header chunk's payload: the parameters, and the counts of the tally under
    /// `tally_prefix` (the key version's, or a generation's).
    fn header(&self, chain: &Chain<Self::Params>, tally_prefix: &[u8]) -> Result<Vec<u8>>;

    /// The body of stored page `raw` of sub-filter `sub`, checked before it is sent.
    fn page_body(&self, chain: &Chain<Self::Params>, sub: u32, raw: Vec<u8>) -> Result<Vec<u8>>;

    /// Whether the key holds a filter of this family (`WRONGTYPE` if another).
    fn present(&self) -> Result<bool>;

    /// The namespace and key of the filter.
    fn ns_key(&self) -> (u16, &[u8]);

    /// The parameters and tally counts a header chunk's payload holds, checked (the
    /// family's bad-chunk error if they do not hold).
    fn parse_header(&self, payload: &[u8]) -> Result<(crate::meta::Params, Vec<u64>)>;

    /// Restores a page chunk's payload (see [`split_page`]) to the key version, or to
    /// generation `generation` of a windowed filter.
    fn load_page(&self, payload: &[u8], generation: Option<u64>) -> Result<()>;
}

/// One step of a dump: the next cursor (0 at the end) and a chunk.
pub(crate) fn scandump<F: ChainDump>(
    filter: &F,
    guard: &KeyGuard,
    cursor: i64,
) -> Result<(i64, Vec<u8>)> {
    let chain = filter.chain(guard)?;
    if chain.window.is_some() {
        return super::window::scandump(filter, &chain, cursor);
    }
    let tag = DumpCursor::tag(chain.version, chain.pages.len() as u32);
    let at = DumpCursor::parse(cursor).ok_or_else(|| F::dump_error(DumpError::InvalidPosition))?;
    if cursor == 0 {
        let next = DumpCursor { tag, position: 1 };
        let header = filter.header(&chain, &chain.prefix)?;
        return Ok((next.encode(), frame(F::MAGIC, KIND_HEADER, &header)));
    }
    if at.tag != tag {
        return Err(F::dump_error(DumpError::Changed));
    }
    let found = next_stored_page(filter.store(), &chain.prefix, &chain.pages, at.position)?;
    let Some(StoredPage {
        next,
        sub,
        page,
        value,
    }) = found
    else {
        return Ok((0, Vec::new()));
    };
    let body = filter.page_body(&chain, sub, value)?;
    let mut payload = Vec::with_capacity(8 + body.len());
    payload.extend_from_slice(&sub.to_le_bytes());
    payload.extend_from_slice(&page.to_le_bytes());
    payload.extend_from_slice(&body);
    let next = DumpCursor {
        tag,
        position: next,
    };
    Ok((next.encode(), frame(F::MAGIC, KIND_PAGE, &payload)))
}

/// Replays a chunk from [`scandump`]: the header chunk (position 1) creates the filter,
/// which must not exist; page chunks fill it. The key's state is checked before the
/// chunk, in RedisBloom's order: a page chunk for a missing key, or a header chunk for
/// an existing one, is refused whatever it holds.
pub(crate) fn loadchunk<F: ChainDump>(filter: &F, cursor: i64, chunk: &[u8]) -> Result<()> {
    let position = DumpCursor::parse(cursor).map(|c| c.position);
    let header = position == Some(1);
    match (filter.present()?, header) {
        (false, false) => return Err(F::dump_error(DumpError::NotFound)),
        (true, true) => return Err(F::dump_error(DumpError::HeaderForExisting)),
        _ => {}
    }
    match (unframe(F::MAGIC, chunk), position) {
        (Some((KIND_HEADER, payload)), Some(1)) => {
            let (params, counts) = filter.parse_header(payload)?;
            let (ns, key) = filter.ns_key();
            match filter.store().create_restored(ns, key, params, counts)? {
                true => Ok(()),
                false => Err(F::dump_error(DumpError::HeaderForExisting)),
            }
        }
        (Some((KIND_WINDOW_HEADER, payload)), Some(1)) => {
            super::window::load_header(filter, payload)
        }
        (_, Some(1)) => Err(F::dump_error(DumpError::BadHeader)),
        (Some((KIND_PAGE, payload)), Some(p)) if p >= 2 => filter.load_page(payload, None),
        (Some((KIND_WINDOW_PAGE, payload)), Some(p)) if p >= 2 => {
            let (generation, page) = payload
                .split_first_chunk::<8>()
                .ok_or_else(|| F::dump_error(DumpError::BadChunk))?;
            filter.load_page(page, Some(u64::from_le_bytes(*generation)))
        }
        _ => Err(F::dump_error(DumpError::BadChunk)),
    }
}

/// A page chunk's payload as (sub-filter, page, body); `None` if it is too short.
pub(crate) fn split_page(payload: &[u8]) -> Option<(u32, u32, &[u8])> {
    Some((
        le_u32(payload, 0).ok()?,
        le_u32(payload, 4).ok()?,
        payload.get(8..)?,
    ))
}
