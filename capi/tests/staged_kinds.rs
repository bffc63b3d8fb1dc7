//! Top-K and t-digest through the C boundary as a host uses them: a Top-K page made by
//! `rks_topk_page_new` takes `rks_topk_ops` operands as the engine's page does (before,
//! no call made a page and every Top-K operand a host merged was skipped: lost), and
//! `rks_digest_values` refuses what `TDIGEST.CREATE` and `TDIGEST.ADD` refuse (it took
//! compression 20 000 and infinities, which the merge then dropped). `rks_cms_locate`
//! refuses output arrays that overlap.

use rocksketch_capi::rks_status::*;
use rocksketch_capi::*;

mod common;
use common::{buf, take};
use rocksketch_merge::topk::{Shape, TopKPage};
use rocksketch_merge::{full_merge, Page};

fn topk_ops(items: &[&[u8]], increments: &[u32]) -> Vec<u8> {
    let ptrs: Vec<*const u8> = items.iter().map(|i| i.as_ptr()).collect();
    let lens: Vec<usize> = items.iter().map(|i| i.len()).collect();
    let mut b = buf();
    // SAFETY: `items.len()` items, each its length of bytes.
    let status = unsafe {
        rks_topk_ops(
            ptrs.as_ptr(),
            lens.as_ptr(),
            increments.as_ptr(),
            items.len(),
            &mut b,
        )
    };
    assert_eq!(status, RKS_OK);
    take(b)
}

#[test]
fn a_top_k_page_made_through_the_boundary_takes_operands_as_the_engines_does() {
    let mut b = buf();
    // SAFETY: a valid buffer.
    assert_eq!(unsafe { rks_topk_page_new(3, 50, 4, 0.9, &mut b) }, RKS_OK);
    let page = take(b);
    let shape = Shape::new(3, 50, 4, 0.9).unwrap();
    assert_eq!(
        page,
        TopKPage::new(shape).encode(),
        "the engine's empty page"
    );
    let ops = [
        topk_ops(&[b"a", b"b", b"a"], &[1, 1, 1]),
        topk_ops(&[b"c", b"a"], &[5, 2]),
    ];
    let merged = full_merge(Some(&page), ops.iter().map(Vec::as_slice));
    assert_eq!(merged.skipped, 0, "no operand lost");
    let Ok(Page::TopK(top)) = Page::decode(&merged.value) else {
        panic!("a Top-K page");
    };
    let mut engine = TopKPage::new(shape);
    engine.add_all([(&b"a"[..], 1), (b"b", 1), (b"a", 1)]);
    engine.add_all([(&b"c"[..], 5), (b"a", 2)]);
    assert_eq!(top, engine);
    assert_eq!(top.count(b"a"), 4);
    // Refused as TOPK.RESERVE refuses them.
    for (k, decay) in [(0, 0.9), (1001, 0.9), (3, 0.0), (3, 1.5)] {
        // SAFETY: a valid buffer.
        let status = unsafe { rks_topk_page_new(k, 50, 4, decay, &mut buf()) };
        assert_eq!(status, RKS_INVALID_ARGUMENT, "k {k} decay {decay}");
    }
}

#[test]
fn digest_values_are_checked_as_tdigest_add_checks_them() {
    let digest = |compression: u32, values: &[f64]| {
        let mut b = buf();
        // SAFETY: `values.len()` values, a valid buffer.
        let status =
            unsafe { rks_digest_values(compression, values.as_ptr(), values.len(), &mut b) };
        if status == RKS_OK {
            take(b);
        }
        status
    };
    assert_eq!(digest(100, &[1.0, 2.5]), RKS_OK);
    assert_eq!(digest(10_000, &[1.0]), RKS_OK);
    for (compression, value) in [
        (20_000, 1.0),
        (0, 1.0),
        (100, f64::INFINITY),
        (100, f64::NEG_INFINITY),
        (100, f64::NAN),
    ] {
        assert_eq!(
            digest(compression, &[value]),
            RKS_INVALID_ARGUMENT,
            "{compression} {value}"
        );
    }
}

#[test]
fn overlapping_locate_arrays_are_refused() {
    let mut layout = rks_cms_layout::default();
    // SAFETY: a valid out pointer.
    let made = unsafe { rks_cms_layout_make(100, 3, 64, &mut layout) };
    assert_eq!(made, RKS_OK);
    let mut cells = [0u32; 6];
    let item = b"item";
    let at = cells.as_mut_ptr();
    // SAFETY: both arrays lie in `cells` (overlapping: to be refused).
    let status = unsafe { rks_cms_locate(layout, item.as_ptr(), item.len(), at, at.add(1), 3) };
    assert_eq!(status, RKS_INVALID_ARGUMENT);
    // SAFETY: two halves of `cells`, apart.
    let status = unsafe { rks_cms_locate(layout, item.as_ptr(), item.len(), at, at.add(3), 3) };
    assert_eq!(status, RKS_OK);
}
