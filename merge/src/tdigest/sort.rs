//! RedisBloom's `td_qsort`: quicksort with the middle element as pivot and a Lomuto
//! partition on `<`. It is not stable, and which of two equal means ends up first
//! changes later merges, so the digest sorts exactly this way. Recursion becomes an
//! explicit stack (the segments are disjoint, so the order they are sorted in does not
//! change the result), so a worst-case input cannot overflow the thread's stack.

use super::Centroid;

fn mean_at(nodes: &[Centroid], i: usize) -> f64 {
    nodes.get(i).map_or(f64::NAN, |n| n.mean)
}

/// Sorts `nodes` by mean in RedisBloom's order.
pub(super) fn td_qsort(nodes: &mut [Centroid]) {
    let Some(last) = nodes.len().checked_sub(1) else {
        return;
    };
    let mut segments = vec![(0usize, last)];
    while let Some((start, end)) = segments.pop() {
        if start >= end {
            continue;
        }
        if end - start == 1 {
            if mean_at(nodes, start) > mean_at(nodes, end) {
                nodes.swap(start, end);
            }
            continue;
        }
        let pivot = partition(nodes, start, end, (start + end) / 2);
        if pivot > start {
            segments.push((start, pivot - 1));
        }
        segments.push((pivot + 1, end));
    }
}

/// Lomuto partition around the mean at `pivot`; returns where the pivot lands.
fn partition(nodes: &mut [Centroid], start: usize, end: usize, pivot: usize) -> usize {
    let pivot_mean = mean_at(nodes, pivot);
    nodes.swap(pivot, end);
    let mut smaller = start;
    for j in start..end {
        if mean_at(nodes, j) < pivot_mean {
            nodes.swap(smaller, j);
            smaller += 1;
        }
    }
    nodes.swap(smaller, end);
    smaller
}
