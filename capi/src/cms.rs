//! Count-min sketches and tallies: where an item's counters are, the delta operands that
//! add to them, and the reads that answer `CMS.QUERY` and `CMS.INFO`'s count.
//!
//! Counters are row-major and cut into pages of `page_cells`; a host stores page `p` of
//! a sketch under a key of its choosing and merges deltas into it.

use crate::rks_status::*;
use crate::{check, fill_buf, guard, out, page_error, rks_buf, rks_status, slice, slice_mut};
use rocksketch_merge::counter::{CounterDelta, CounterPage};
use rocksketch_merge::layout::cms::{CmsLayout, MAX_CELLS, MAX_DEPTH};
use rocksketch_merge::tally::Tally;
use rocksketch_merge::MAX_PAGE_BYTES;

/// The shape of a sketch: `width × depth` counters in pages of `page_cells`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rks_cms_layout {
    /// Counters per row.
    pub width: u32,
    /// Rows (hash functions).
    pub depth: u32,
    /// Counters per page.
    pub page_cells: u32,
}

impl rks_cms_layout {
    fn checked(self) -> Result<CmsLayout, rks_status> {
        let cells = u64::from(self.width) * u64::from(self.depth);
        let page_ok = (1..=(MAX_PAGE_BYTES / 4) as u32).contains(&self.page_cells);
        let shape_ok = self.width > 0
            && self.depth > 0
            && u64::from(self.depth) <= MAX_DEPTH
            && cells <= MAX_CELLS;
        check(page_ok && shape_ok, RKS_INVALID_ARGUMENT)?;
        Ok(CmsLayout {
            width: self.width,
            depth: self.depth,
            page_cells: self.page_cells,
        })
    }
}

/// Makes the layout `CMS.INITBYDIM width depth` makes in a store whose pages are
/// `page_bytes` long (`RKS_DEFAULT_PAGE_BYTES` by default). Checks what rocksketch
/// checks: width and depth nonzero, depth at most 128, at most 2^28 counters.
///
/// # Safety
/// `layout` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_cms_layout_make(
    width: u64,
    depth: u64,
    page_bytes: u32,
    layout: *mut rks_cms_layout,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let layout = unsafe { out(layout)? };
        let made = rks_cms_layout {
            width: u32::try_from(width).map_err(|_| RKS_INVALID_ARGUMENT)?,
            depth: u32::try_from(depth).map_err(|_| RKS_INVALID_ARGUMENT)?,
            page_cells: page_bytes / 4,
        };
        made.checked()?;
        *layout = made;
        Ok(())
    })
}

/// Pages the sketch takes (0 for an invalid layout).
#[no_mangle]
pub extern "C" fn rks_cms_pages(layout: rks_cms_layout) -> u32 {
    layout.checked().map_or(0, |l| l.pages())
}

/// Counters in page `page` (the last page may be short; 0 past the last or for an
/// invalid layout). A delta for the page is built with this length.
#[no_mangle]
pub extern "C" fn rks_cms_page_len(layout: rks_cms_layout, page: u32) -> u32 {
    layout.checked().map_or(0, |l| l.page_len(page))
}

/// Where `item`'s counter is in each row: `pages[row]`, `offsets[row]`, for the
/// `layout.depth` rows; `cap` is the arrays' length (`RKS_BUFFER_TOO_SMALL` below depth).
/// The two arrays must be distinct: overlapping ones are refused
/// (`RKS_INVALID_ARGUMENT`), since each is written as an array of its own.
///
/// # Safety
/// `item` addresses `item_len` bytes; `pages` and `offsets` hold `cap` writable items
/// each, in memory no other thread uses during the call.
#[no_mangle]
pub unsafe extern "C" fn rks_cms_locate(
    layout: rks_cms_layout,
    item: *const u8,
    item_len: usize,
    pages: *mut u32,
    offsets: *mut u32,
    cap: usize,
) -> rks_status {
    guard(|| {
        let layout = layout.checked()?;
        check(cap >= layout.depth as usize, RKS_BUFFER_TOO_SMALL)?;
        // Two mutable slices over one memory would be undefined behaviour: refused.
        let bytes = cap.saturating_mul(std::mem::size_of::<u32>());
        let (p, o) = (pages as usize, offsets as usize);
        let apart = p.saturating_add(bytes) <= o || o.saturating_add(bytes) <= p;
        check(cap == 0 || apart, RKS_INVALID_ARGUMENT)?;
        // SAFETY: the caller's contract; the arrays do not overlap (checked above).
        let (item, pages, offsets) = unsafe {
            (
                slice(item, item_len)?,
                slice_mut(pages, cap)?,
                slice_mut(offsets, cap)?,
            )
        };
        for (row, (page, offset)) in layout.slots(item).enumerate() {
            pages[row] = page;
            offsets[row] = offset;
        }
        Ok(())
    })
}

/// Builds a delta operand for a page of `page_len` counters (see [`rks_cms_page_len`])
/// that adds `adds[i]` to counter `offsets[i]`, saturating at 2^32 - 1 as RedisBloom's
/// counters do. Repeated offsets add up.
///
/// # Safety
/// `offsets` and `adds` hold `n` items each; `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_counter_delta(
    page_len: u32,
    offsets: *const u32,
    adds: *const u32,
    n: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (offsets, adds, buf) = unsafe { (slice(offsets, n)?, slice(adds, n)?, out(buf)?) };
        let entries = offsets.iter().copied().zip(adds.iter().copied()).collect();
        let delta = CounterDelta::sparse(page_len, entries).map_err(|_| RKS_INVALID_ARGUMENT)?;
        fill_buf(buf, delta.encode());
        Ok(())
    })
}

/// Reads counter `offset` of a counter page of `page_len` counters into `*value` (0 for
/// a page never written, passed as `(NULL, 0)`).
///
/// # Safety
/// `page` addresses `len` bytes; `value` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_counter_get(
    page: *const u8,
    len: usize,
    page_len: u32,
    offset: u32,
    value: *mut u32,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (page, value) = unsafe { (slice(page, len)?, out(value)?) };
        check(offset < page_len, RKS_INVALID_ARGUMENT)?;
        *value = counter(page, page_len, offset)?;
        Ok(())
    })
}

fn counter(page: &[u8], page_len: u32, offset: u32) -> Result<u32, rks_status> {
    if page.is_empty() {
        return Ok(0);
    }
    let page = CounterPage::decode(page).map_err(page_error)?;
    check(page.cells().len() == page_len as usize, RKS_CORRUPT)?;
    page.cells()
        .get(offset as usize)
        .copied()
        .ok_or(RKS_INVALID_ARGUMENT)
}

/// `CMS.QUERY` of one item: the least of its counters. `pages[row]`/`page_lens[row]`
/// are the stored values of the pages [`rks_cms_locate`] gave for each row (`(NULL, 0)`
/// for one never written); `rows` must be `layout.depth`.
///
/// # Safety
/// `item` addresses `item_len` bytes; `pages` and `page_lens` hold `rows` items, each
/// page its length of bytes; `estimate` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_cms_query(
    layout: rks_cms_layout,
    item: *const u8,
    item_len: usize,
    pages: *const *const u8,
    page_lens: *const usize,
    rows: usize,
    estimate: *mut u32,
) -> rks_status {
    guard(|| {
        let layout = layout.checked()?;
        check(rows == layout.depth as usize, RKS_INVALID_ARGUMENT)?;
        // SAFETY: the caller's contract.
        let (item, ptrs, lens, estimate) = unsafe {
            (
                slice(item, item_len)?,
                slice(pages, rows)?,
                slice(page_lens, rows)?,
                out(estimate)?,
            )
        };
        let mut least = u32::MAX;
        for (row, (page, offset)) in layout.slots(item).enumerate() {
            // SAFETY: each page pointer addresses its length (the caller's contract).
            let bytes = unsafe { slice(ptrs[row], lens[row])? };
            least = least.min(counter(bytes, layout.page_len(page), offset)?);
        }
        *estimate = least;
        Ok(())
    })
}

/// Builds a tally delta: `adds[i]` added to slot `i`, wrapping at 2^64 (so `UINT64_MAX`
/// subtracts one). rocksketch keeps a sketch's total count in slot 0 of one tally page.
///
/// # Safety
/// `adds` holds `n` items (at most `MAX_PAGE_BYTES / 8`); `buf` is writable and empty.
#[no_mangle]
pub unsafe extern "C" fn rks_tally_delta(
    adds: *const u64,
    n: usize,
    buf: *mut rks_buf,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (adds, buf) = unsafe { (slice(adds, n)?, out(buf)?) };
        check(n > 0 && n <= MAX_PAGE_BYTES / 8, RKS_INVALID_ARGUMENT)?;
        fill_buf(buf, Tally::new(adds.to_vec()).encode_delta());
        Ok(())
    })
}

/// Reads slot `slot` of a tally page (0 for a page never written or a slot past its end).
///
/// # Safety
/// `page` addresses `len` bytes; `value` is writable.
#[no_mangle]
pub unsafe extern "C" fn rks_tally_get(
    page: *const u8,
    len: usize,
    slot: u32,
    value: *mut u64,
) -> rks_status {
    guard(|| {
        // SAFETY: the caller's contract.
        let (page, value) = unsafe { (slice(page, len)?, out(value)?) };
        *value = match page.is_empty() {
            true => 0,
            false => Tally::decode_page(page)
                .map_err(page_error)?
                .get(slot as usize),
        };
        Ok(())
    })
}
