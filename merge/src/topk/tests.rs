use super::ops::{self, MAX_INCREMENT};
use super::*;
use crate::{full_merge, partial_merge};
use quickcheck::quickcheck;

fn shape(k: u32, width: u32, depth: u32, decay: f64) -> Shape {
    Shape::new(k, width, depth, decay).unwrap()
}

#[test]
fn replies_and_heap_follow_redisbloom() {
    // `tk:two` of the recorded transcript: k 2, width 2, depth 1, decay 1.
    let page = TopKPage::new(shape(2, 2, 1, 1.0));
    let mut sketch = page.overlay(4);
    let expelled: Vec<Option<Vec<u8>>> = ["a", "b", "c", "d"]
        .iter()
        .map(|i| sketch.add(i.as_bytes(), 1))
        .collect();
    assert_eq!(
        expelled,
        vec![None, None, Some(b"a".to_vec()), Some(b"b".to_vec())]
    );
    let mut applied = page.clone();
    applied.add_all(["a", "b", "c", "d"].iter().map(|i| (i.as_bytes(), 1)));
    assert_eq!(applied.list(), vec![(&b"c"[..], 1), (&b"d"[..], 1)]);
    assert!(applied.query(b"c") && !applied.query(b"a"));
}

#[test]
fn items_reply_cut_at_nul_and_increment_zero_enters_the_heap() {
    let mut page = TopKPage::new(shape(1, 1000, 2, 0.9));
    page.add_all([(&b"x\0y"[..], 1)]);
    let mut sketch = page.overlay(1);
    assert_eq!(sketch.add(b"z", 1), Some(b"x\0y".to_vec()));
    assert_eq!(add::c_string(b"x\0y"), b"x");
    let mut zero = TopKPage::new(shape(3, 2000, 3, 0.9));
    zero.add_all([(&b"zero"[..], 0)]);
    assert!(zero.query(b"zero"));
    assert!(zero.list().is_empty());
}

#[test]
fn counts_wrap_at_32_bits() {
    let mut page = TopKPage::new(shape(2, 16, 1, 0.9));
    page.add_all(std::iter::repeat_n((&b"w"[..], MAX_INCREMENT), 42_950));
    assert_eq!(page.count(b"w"), (42_950u64 * 100_000 % (1 << 32)) as u32);
}

#[test]
fn page_round_trips_and_rejects_corruption() {
    let mut page = TopKPage::new(shape(5, 64, 3, 0.9));
    page.add_all(
        (0..300u32)
            .map(|i| (format!("item{}", i % 37).into_bytes(), 1 + i % 3))
            .collect::<Vec<_>>()
            .iter()
            .map(|(i, n)| (i.as_slice(), *n)),
    );
    let bytes = page.encode();
    assert_eq!(TopKPage::decode(&bytes).unwrap(), page);
    for cut in 0..bytes.len() {
        assert!(TopKPage::decode(&bytes[..cut]).is_err());
    }
    assert!(Shape::new(0, 1, 1, 0.9).is_none());
    assert!(Shape::new(1, 1 << 16, 2, 0.9).is_none());
    assert!(Shape::new(1, 1, 1, 0.0).is_none());
    assert!(ops::encode([(&[0u8; MAX_ITEM_BYTES + 1][..], 1)]).is_none());
    assert!(ops::encode([(&b"x"[..], MAX_INCREMENT + 1)]).is_none());
}

fn pairs_of(items: &[(u8, u8)]) -> Vec<(Vec<u8>, u32)> {
    items
        .iter()
        .map(|(i, n)| (vec![b'i', i % 23], u32::from(*n % 4)))
        .collect()
}

fn operand(pairs: &[(Vec<u8>, u32)]) -> Vec<u8> {
    ops::encode(pairs.iter().map(|(i, n)| (i.as_slice(), *n))).unwrap()
}

quickcheck! {
    /// Any split of the operands into partial merges gives the page one full merge gives,
    /// and so does applying them one by one; replies computed on an overlay expel what
    /// applying to the page expels.
    fn partial_merges_and_overlays_agree(chunks: Vec<Vec<(u8, u8)>>, split: usize, decay: u8) -> bool {
        let decay = [0.9, 1.0, 0.5, 1e-300][usize::from(decay % 4)];
        let page = TopKPage::new(shape(3, 5, 2, decay));
        let ops: Vec<Vec<u8>> = chunks.iter().map(|c| operand(&pairs_of(c))).collect();
        let whole = full_merge(Some(&page.encode()), ops.iter().map(Vec::as_slice));
        let at = if ops.is_empty() { 0 } else { split % ops.len() };
        let (a, b) = ops.split_at(at);
        let mut parts = Vec::new();
        for half in [a, b] {
            if !half.is_empty() {
                parts.push(partial_merge(half.iter().map(Vec::as_slice)).unwrap());
            }
        }
        let split_merge = full_merge(Some(&page.encode()), parts.iter().map(Vec::as_slice));
        let mut one_by_one = page.clone();
        let all_applied = ops.iter().all(|op| one_by_one.apply_operand(op));
        // Replies from an overlay over the page as it was, then the page itself.
        let all: Vec<(Vec<u8>, u32)> = chunks.iter().flat_map(|c| pairs_of(c)).collect();
        let mut sketch = page.overlay(all.len() % 3 * 50);
        let replies: Vec<_> = all.iter().map(|(i, n)| sketch.add(i, *n)).collect();
        let mut stepped = page.clone();
        let expected: Vec<_> = all
            .iter()
            .map(|(i, n)| {
                let mut s = stepped.overlay(1);
                let r = s.add(i, *n);
                stepped.add_all([(i.as_slice(), *n)]);
                r
            })
            .collect();
        whole.skipped == 0
            && split_merge.value == whole.value
            && all_applied
            && one_by_one.encode() == whole.value
            && replies == expected
            && stepped.encode() == whole.value
    }
}
