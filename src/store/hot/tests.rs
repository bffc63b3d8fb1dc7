//! The hot-page cache's own rules: fills, drops, large pages, overlapping writes.
use super::*;
use rocksketch_merge::bits::BitPage;

#[test]
fn a_page_read_before_the_cache_was_dropped_is_not_installed_after() {
    let hot = HotPages::new(64 << 20);
    let key = b"page".to_vec();
    let page = Arc::new(Page::Bits(BitPage::zeroed(1024)));
    // A read registers its fill, reads (from the database about to be reopened)...
    let (_, misses) = hot.lookup(std::slice::from_ref(&key));
    assert!(misses[0].fill.is_some());
    // ... the reopen empties the cache ...
    hot.drop_prefix(&[]);
    // ... and the read's page, from before, must not come back.
    hot.fill(&key, &misses[0], Some(&page));
    let (found, misses) = hot.lookup(std::slice::from_ref(&key));
    assert!(found[0].is_none());
    hot.fill(&key, &misses[0], None);
    // A read after the drop fills as usual.
    let (_, misses) = hot.lookup(std::slice::from_ref(&key));
    hot.fill(&key, &misses[0], Some(&page));
    let (found, _) = hot.lookup(std::slice::from_ref(&key));
    assert!(found[0].is_some());
}

#[test]
fn pages_larger_than_a_shards_share_are_cached_within_half_the_budget() {
    let hot = HotPages::new(64 << 20);
    // A Top-K page of k = 1000 is about 1.6 MiB; a shard's share is 1 MiB.
    let page = Arc::new(Page::Bits(BitPage::zeroed(13 << 20)));
    let mut cached = 0;
    for n in 0..40u32 {
        let key = format!("big{n}").into_bytes();
        let (_, misses) = hot.lookup(std::slice::from_ref(&key));
        hot.fill(&key, &misses[0], Some(&page));
        let (found, misses) = hot.lookup(std::slice::from_ref(&key));
        if let Some(miss) = misses.first() {
            hot.fill(&key, miss, None);
        }
        cached += usize::from(found[0].is_some());
    }
    assert!(cached >= 16, "only {cached} large pages were cached");
    assert!(hot.oversized.load(Ordering::Relaxed) <= 32 << 20);
    assert!(hot.bytes() <= (32 << 20) + (64 << 20));
    // Dropping them gives their room back.
    hot.drop_prefix(b"big");
    assert_eq!(hot.oversized.load(Ordering::Relaxed), 0);
    assert_eq!(hot.bytes(), 0);
}

#[test]
fn overlapping_writes_drop_an_order_sensitive_page_and_apply_to_others() {
    use rocksketch_merge::tdigest::{ops::DigestOps, Digest};
    let hot = HotPages::new(64 << 20);
    let digest = Arc::new(Page::Digest(Digest::new(10)));
    let bits = Arc::new(Page::Bits(BitPage::zeroed(1024)));
    let (dkey, bkey) = (b"digest".to_vec(), b"bits".to_vec());
    for (key, page) in [(&dkey, &digest), (&bkey, &bits)] {
        let (_, misses) = hot.lookup(std::slice::from_ref(key));
        hot.fill(key, &misses[0], Some(page));
    }
    let op = PageWrite::Merge(DigestOps::new(10).values(&[1.0]).encode());
    let bit = PageWrite::Merge(
        rocksketch_merge::bits::BitDelta::sparse(1024, vec![3])
            .unwrap()
            .encode(),
    );
    // One writer at a time, even one writing the page twice: applied.
    hot.begin_writes([dkey.as_slice(), dkey.as_slice()].into_iter());
    hot.end_writes(
        [(dkey.as_slice(), &op), (dkey.as_slice(), &op)].into_iter(),
        true,
    );
    assert!(hot.lookup(std::slice::from_ref(&dkey)).0[0].is_some());
    // Two in flight at once: the digest goes, the bits stay (and get both writes).
    for key in [&dkey, &bkey, &dkey, &bkey] {
        hot.begin_writes([key.as_slice()].into_iter());
    }
    hot.end_writes(
        [(dkey.as_slice(), &op), (dkey.as_slice(), &op)].into_iter(),
        true,
    );
    hot.end_writes(
        [(bkey.as_slice(), &bit), (bkey.as_slice(), &bit)].into_iter(),
        true,
    );
    let (found, misses) = hot.lookup(std::slice::from_ref(&dkey));
    assert!(
        found[0].is_none(),
        "an order-sensitive page written by overlapping writes"
    );
    hot.fill(&dkey, &misses[0], None);
    assert!(hot.lookup(std::slice::from_ref(&bkey)).0[0].is_some());
}

#[test]
fn a_page_known_absent_answers_without_a_read_until_a_write_begins() {
    let hot = HotPages::new(64 << 20);
    let key = b"never written".to_vec();
    let keys = std::slice::from_ref(&key);
    let (_, misses) = hot.lookup(keys);
    hot.fill_absent(&key, &misses[0]);
    // Absent, from the cache: no miss, nothing found.
    let (found, misses) = hot.lookup(keys);
    assert!(found[0].is_none() && misses.is_empty());
    assert!(hot.bytes() > 0, "the absence is counted against the budget");
    // A write of the page forgets the absence: the next read goes to RocksDB.
    hot.begin_writes(keys.iter().map(|k| k.as_slice()));
    let merge = PageWrite::Merge(vec![1]);
    hot.end_writes(std::iter::once((key.as_slice(), &merge)), true);
    let (_, misses) = hot.lookup(keys);
    assert_eq!(misses.len(), 1);
    assert_eq!(hot.bytes(), 0);
}

#[test]
fn an_absence_read_while_a_write_began_is_not_recorded() {
    let hot = HotPages::new(64 << 20);
    let key = b"racing".to_vec();
    let keys = std::slice::from_ref(&key);
    // A read registers its fill and finds nothing; a write begins before it records
    // that, and may or may not be in what it read.
    let (_, misses) = hot.lookup(keys);
    hot.begin_writes(keys.iter().map(|k| k.as_slice()));
    hot.fill_absent(&key, &misses[0]);
    let merge = PageWrite::Merge(vec![1]);
    hot.end_writes(std::iter::once((key.as_slice(), &merge)), true);
    assert_eq!(hot.lookup(keys).1.len(), 1, "the stale absence was kept");
    // Dropped prefixes forget absences too.
    let (_, misses) = hot.lookup(keys);
    hot.fill_absent(&key, &misses[0]);
    hot.drop_prefix(b"rac");
    assert_eq!(hot.lookup(keys).1.len(), 1);
}

#[test]
fn absences_are_evicted_like_pages() {
    // A small budget: absences of many keys stay within it.
    let hot = HotPages::new(SHARDS * 4096);
    for n in 0..20_000u32 {
        let key = format!("absent {n}").into_bytes();
        let (_, misses) = hot.lookup(std::slice::from_ref(&key));
        hot.fill_absent(&key, &misses[0]);
    }
    assert!(hot.bytes() <= SHARDS * 4096, "{} bytes", hot.bytes());
}

#[test]
fn absences_larger_than_a_shards_share_are_accounted_as_pages_are() {
    // A shard's share of 64 bytes: every absence costs more.
    let hot = HotPages::new(4096);
    for n in 0..200u32 {
        let key = format!("absent {n}").into_bytes();
        let (_, misses) = hot.lookup(std::slice::from_ref(&key));
        hot.fill_absent(&key, &misses[0]);
        hot.begin_writes(std::iter::once(key.as_slice()));
        hot.end_writes(std::iter::once((key.as_slice(), &PageWrite::Drop)), true);
    }
    hot.drop_prefix(&[]);
    assert_eq!(hot.oversized.load(Ordering::Relaxed), 0);
    assert_eq!(hot.bytes(), 0);
}

/// A page known never written, then written: whether the write's operand alone makes
/// the cached page.
fn absent_then_written(hot: &HotPages, key: &[u8]) {
    let key = key.to_vec();
    let (_, misses) = hot.lookup(std::slice::from_ref(&key));
    hot.fill_absent(&key, &misses[0]);
    let (found, misses) = hot.lookup(std::slice::from_ref(&key));
    assert!(found[0].is_none() && misses.is_empty(), "known absent");
}

fn bit(n: u32) -> PageWrite {
    PageWrite::Merge(
        rocksketch_merge::bits::BitDelta::sparse(1024, vec![n])
            .unwrap()
            .encode(),
    )
}

fn cached_bits(hot: &HotPages, key: &[u8]) -> Option<Vec<bool>> {
    let (found, misses) = hot.lookup(&[key.to_vec()]);
    if let Some(miss) = misses.first() {
        hot.fill(key, miss, None);
    }
    let page = found[0].clone()?;
    let Page::Bits(bits) = &*page else {
        panic!("a bit page");
    };
    Some((0..8).map(|n| bits.get(n)).collect())
}

#[test]
fn the_first_write_of_a_page_known_absent_makes_the_cached_page() {
    let hot = HotPages::new(64 << 20);
    absent_then_written(&hot, b"new");
    hot.begin_writes([b"new".as_slice()].into_iter());
    hot.end_writes([(b"new".as_slice(), &bit(3))].into_iter(), true);
    let want: Vec<bool> = (0..8).map(|n| n == 3).collect();
    assert_eq!(cached_bits(&hot, b"new"), Some(want));

    // A failed write makes nothing (and the page is no longer known absent).
    absent_then_written(&hot, b"failed");
    hot.begin_writes([b"failed".as_slice()].into_iter());
    hot.end_writes([(b"failed".as_slice(), &bit(3))].into_iter(), false);
    assert_eq!(cached_bits(&hot, b"failed"), None);

    // Two writers in flight: neither knows the other's operand, nothing is made.
    absent_then_written(&hot, b"two");
    hot.begin_writes([b"two".as_slice()].into_iter());
    hot.begin_writes([b"two".as_slice()].into_iter());
    hot.end_writes([(b"two".as_slice(), &bit(1))].into_iter(), true);
    hot.end_writes([(b"two".as_slice(), &bit(2))].into_iter(), true);
    assert_eq!(cached_bits(&hot, b"two"), None);

    // The cache dropped (a reopen, a deleted version) while the write was in flight.
    absent_then_written(&hot, b"dropped");
    hot.begin_writes([b"dropped".as_slice()].into_iter());
    hot.drop_prefix(&[]);
    hot.end_writes([(b"dropped".as_slice(), &bit(3))].into_iter(), true);
    assert_eq!(cached_bits(&hot, b"dropped"), None);

    // A page not known absent (never read) is not made by a write either.
    hot.begin_writes([b"unread".as_slice()].into_iter());
    hot.end_writes([(b"unread".as_slice(), &bit(3))].into_iter(), true);
    assert_eq!(cached_bits(&hot, b"unread"), None);
}
