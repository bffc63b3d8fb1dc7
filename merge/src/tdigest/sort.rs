//! RedisBloom's `td_qsort`: quicksort with the middle element as pivot and a Lomuto
//! partition on `<`. It is not stable, and which of two equal means ends up first
//! changes later merges, so the digest sorts exactly this way. Recursion becomes an
//! explicit stack (the segments are disjoint, so the order they are sorted in does not
//! change the result), so a worst-case input cannot overflow the thread's stack.
//!
//! Equal means are this quicksort's worst case (quadratic: each partition peels off one
//! element). A segment with no two means in order (all equal, NaNs aside) is settled in
//! linear time by replaying just the swaps those partitions make, so many repeated
//! values cost what spread ones cost.

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
        if unordered(nodes.get(start..=end).unwrap_or_default()) {
            settle_unordered(nodes, start, end);
            continue;
        }
        let pivot = partition(nodes, start, end, (start + end) / 2);
        if pivot > start {
            segments.push((start, pivot - 1));
        }
        segments.push((pivot + 1, end));
    }
}

/// Whether no mean in `segment` is below another (all equal, NaNs aside): then no
/// partition of it finds a mean below its pivot.
fn unordered(segment: &[Centroid]) -> bool {
    let mut seen = None;
    segment
        .iter()
        .filter(|n| !n.mean.is_nan())
        .all(|n| *seen.get_or_insert(n.mean) == n.mean)
}

/// What the quicksort does to an unordered segment: each partition swaps the middle
/// element to the end and then the end to the start (no mean is below the pivot), and
/// goes on with the rest; two elements are left as they are.
fn settle_unordered(nodes: &mut [Centroid], mut start: usize, end: usize) {
    while end >= start + 2 {
        let middle = (start + end) / 2;
        nodes.swap(middle, end);
        nodes.swap(start, end);
        start += 1;
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

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::quickcheck;

    /// RedisBloom's recursion, as written, without the fast path.
    fn reference(nodes: &mut [Centroid], start: usize, end: usize) {
        if start < end {
            if end - start == 1 {
                if nodes[start].mean > nodes[end].mean {
                    nodes.swap(start, end);
                }
                return;
            }
            let pivot = partition(nodes, start, end, (start + end) / 2);
            if pivot > start {
                reference(nodes, start, pivot - 1);
            }
            reference(nodes, pivot + 1, end);
        }
    }

    quickcheck! {
        fn same_order_as_redisbloom(keys: Vec<u8>, domain: u8) -> bool {
            let domain = domain % 5;
            let nodes: Vec<Centroid> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| Centroid {
                    mean: match domain {
                        0 => 1.0,
                        1 if k % 7 == 0 => f64::NAN,
                        _ => f64::from(k % (domain + 1)),
                    },
                    weight: i as i64 + 1,
                })
                .collect();
            let mut fast = nodes.clone();
            let mut slow = nodes;
            td_qsort(&mut fast);
            if !slow.is_empty() {
                let end = slow.len() - 1;
                reference(&mut slow, 0, end);
            }
            fast.iter().zip(&slow).all(|(a, b)| a.weight == b.weight)
        }
    }
}
