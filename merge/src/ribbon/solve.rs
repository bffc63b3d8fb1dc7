//! Standard Ribbon (Dillinger & Walzer 2021) with a ribbon width of 64: each item is the
//! equation `XOR(solution[start + j] for j where coeff bit j is set) == fingerprint`,
//! banded on the fly (an item's row is reduced against the rows already stored until it
//! finds an empty pivot, or reduces to nothing), then solved by back substitution into
//! the interleaved column layout that [`super::Shard`] queries.

use super::{mask, probe, Shard, WIDTH};

/// Extra slots asked per item: a shard of `n` items gets `n × (1 + OVERHEAD) + 64`
/// slots, rounded up to a whole block of 64. Measured (see the module tests and
/// `rocksketch bench ribbon`): a shard of 8 192 items solves on the first seed about
/// nine times in ten, and a failed seed only costs another try.
const OVERHEAD: f64 = 0.04;
/// Seeds tried before the slots grow; see [`slots_for`].
const SEEDS_PER_SIZE: u32 = 4;
/// Sizes tried (each 1.25x the last) before giving up.
const SIZES: u32 = 8;

/// Slots for `n` items at growth step `step` (0 first): whole blocks of 64.
pub(crate) fn slots_for(n: usize, step: u32) -> u64 {
    let grow = 1.25f64.powi(step as i32);
    let wanted = (n as f64 * (1.0 + OVERHEAD) * grow).ceil() as u64 + WIDTH;
    wanted.div_ceil(WIDTH) * WIDTH
}

/// Solves the shard of `hashes` (ascending, distinct) at `r` result bits: the first
/// `(seed, slots)` that bands gives the shard. Deterministic: the same hashes and `r`
/// always give the same shard. `None` only if no size and seed solve, which needs
/// hashes whose probes collide at every seed (not seen in practice).
pub fn solve(hashes: &[u64], r: u8) -> Option<Shard> {
    let mut seed = 0u32;
    for step in 0..SIZES {
        let slots = slots_for(hashes.len(), step);
        for _ in 0..SEEDS_PER_SIZE {
            if let Some(shard) = try_solve(hashes, r, seed, slots) {
                return Some(shard);
            }
            seed += 1;
        }
    }
    None
}

/// One attempt at `seed` with `slots` slots.
pub(crate) fn try_solve(hashes: &[u64], r: u8, seed: u32, slots: u64) -> Option<Shard> {
    let len = usize::try_from(slots).ok()?;
    let mut rows = vec![0u64; len];
    let mut results = vec![0u32; len];
    let fp_mask = mask(r);
    for h in hashes {
        let p = probe(*h, seed, slots, fp_mask);
        let mut at = p.start as usize;
        let mut coeff = p.coeff;
        let mut fp = p.fp;
        // The row's lowest set bit is at `at`; rows stored at `at` have it there too.
        loop {
            let row = rows.get_mut(at)?;
            if *row == 0 {
                *row = coeff;
                *results.get_mut(at)? = fp;
                break;
            }
            coeff ^= *row;
            fp ^= *results.get(at)?;
            if coeff == 0 {
                if fp == 0 {
                    break; // the same equation again
                }
                return None; // inconsistent: this seed does not solve
            }
            let shift = coeff.trailing_zeros();
            at += shift as usize;
            coeff >>= shift;
        }
    }
    Some(back_substitute(&rows, &results, r, seed, hashes.len()))
}

/// Solves the banded rows from the last slot to the first, one column (result bit) at
/// a time in parallel: `state[b]` holds bit `b` of the solution in the 64 slots from
/// the current one on. A slot without a row (a free variable) is solved as 0.
fn back_substitute(rows: &[u64], results: &[u32], r: u8, seed: u32, items: usize) -> Shard {
    let blocks = rows.len() / WIDTH as usize;
    let columns = usize::from(r);
    let mut words = vec![0u64; blocks * columns];
    let mut state = [0u64; 32];
    for (i, (row, result)) in rows.iter().zip(results).enumerate().rev() {
        for (b, column) in state.iter_mut().take(columns).enumerate() {
            let shifted = *column << 1;
            let bit = ((result >> b) & 1) as u64 ^ u64::from((row & shifted).count_ones() & 1);
            *column = shifted | bit;
        }
        if i % WIDTH as usize == 0 {
            let block = i / WIDTH as usize;
            let out = words.get_mut(block * columns..(block + 1) * columns);
            if let (Some(out), Some(state)) = (out, state.get(..columns)) {
                out.copy_from_slice(state);
            }
        }
    }
    Shard::from_parts(r, seed, rows.len() as u64, items, words)
}
