use super::*;
use std::collections::BTreeMap;

/// The fold by its definition, in quadratic time: each slot's later sum from the
/// slots after it, and each counter's total, grouped by page in first-touch order.
fn reference(slots: &ItemSlots, adds: &[u32]) -> Folded {
    let all = slots.all();
    let depth = slots.depth();
    let add_of = |n: usize| adds[n / depth];
    let later = (0..all.len())
        .map(|n| {
            (n + 1..all.len())
                .filter(|&m| all[m] == all[n])
                .fold(0u32, |sum, m| sum.saturating_add(add_of(m)))
        })
        .collect();
    let mut pages: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
    for (n, &(page, offset)) in all.iter().enumerate() {
        if all[..n].contains(&(page, offset)) {
            continue;
        }
        let total = (n..all.len())
            .filter(|&m| all[m] == (page, offset))
            .fold(0u32, |sum, m| sum.saturating_add(add_of(m)));
        if total != 0 {
            pages.entry(page).or_default().push((offset, total));
        }
    }
    Folded {
        later,
        pages: pages.into_iter().collect(),
    }
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// Random slots over `pages` pages of `page_cells` counters (few counters, so they
/// repeat), with additions that are zero, small, or near saturation.
fn case(seed: u64, depth: usize, pages: u32, page_cells: u32) -> (ItemSlots, Vec<u32>) {
    let mut next = xorshift(seed);
    let items = (next() % 300) as usize;
    let cells = u64::from(pages * page_cells);
    let slots = (0..items * depth)
        .map(|_| {
            let cell = (next() % cells) as u32;
            (cell / page_cells, cell % page_cells)
        })
        .collect();
    let adds = (0..items)
        .map(|_| match next() % 8 {
            0 => 0,
            1 => u32::MAX - (next() % 3) as u32,
            2 => 1 << 31,
            _ => (next() % 5) as u32,
        })
        .collect();
    (ItemSlots::from_parts(depth, page_cells, cells, slots), adds)
}

#[test]
fn both_folds_match_the_definition() {
    for seed in 1..300u64 {
        let depth = 1 + (seed % 7) as usize;
        let (pages, page_cells) = [(1, 40), (3, 17), (9, 5), (1, 1)][(seed % 4) as usize];
        let (slots, adds) = case(seed.wrapping_mul(0x9e37_79b9), depth, pages, page_cells);
        let expected = reference(&slots, &adds);
        assert_eq!(slots.fold(&adds), expected, "scratch, seed {seed}");
        // Again, on the scratch the first left behind (it must be zeroed again).
        assert_eq!(slots.fold(&adds), expected, "scratch reused, seed {seed}");
        let mut map = FastMap::default();
        assert_eq!(
            slots.fold_with(&adds, &mut map),
            expected,
            "map, seed {seed}"
        );
        assert!(map.is_empty(), "the map's sums are all taken");
    }
}

#[test]
fn a_sketch_past_the_scratch_folds_in_a_map_with_the_same_result() {
    let cells = SCRATCH_CELLS + 1;
    let page_cells = 1 << 18;
    let last = cells - 1;
    let at = |cell: u64| ((cell / page_cells) as u32, (cell % page_cells) as u32);
    // The last counter (beyond the scratch's size) and the first, repeated.
    let slots = vec![at(last), at(0), at(last), at(5), at(0), at(last)];
    let slots = ItemSlots::from_parts(2, page_cells as u32, cells, slots);
    let adds = [3, 4, 5];
    let folded = slots.fold(&adds);
    assert_eq!(folded, reference(&slots, &adds));
    assert_eq!(folded.later, vec![9, 5, 5, 0, 0, 0]);
    assert_eq!(
        folded.pages,
        vec![(0, vec![(0, 8), (5, 4)]), (4, vec![(0, 12)])]
    );
    SCRATCH.with(|scratch| {
        assert!(scratch.borrow().len() as u64 <= SCRATCH_CELLS);
        assert!(scratch.borrow().iter().all(|&sum| sum == 0));
    });
}
