//! The digest's answers, each as RedisBloom computes it (`td_cdf`, `td_quantile(s)`,
//! `td_trimmed_mean`, and the rank arithmetic of its command layer; means and unit
//! weights compare exactly, as in the reference build), compressing the
//! digest exactly when RedisBloom's would: a caller that stores the digest after a
//! query stores what RedisBloom would hold.

use super::Digest;

/// C's `a < b ? a : b` and `a > b ? a : b` (NaN picks `b`).
fn c_min(a: f64, b: f64) -> f64 {
    if a < b {
        a
    } else {
        b
    }
}

fn c_max(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}

fn weighted_average(x1: f64, w1: f64, x2: f64, w2: f64) -> f64 {
    let sorted = |x1: f64, w1: f64, x2: f64, w2: f64| {
        let x = (x1 * w1 + x2 * w2) / (w1 + w2);
        c_max(x1, c_min(x, x2))
    };
    if x1 <= x2 {
        sorted(x1, w1, x2, w2)
    } else {
        sorted(x2, w2, x1, w1)
    }
}

/// x86-64's conversion of a double to `long long`: NaN and out-of-range values give
/// `i64::MIN` (what RedisBloom sends for them).
pub fn c_to_i64(x: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if x.is_nan() || !(-LIMIT..LIMIT).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

/// Rounds half toward zero (RedisBloom's `_halfRoundDown`).
fn half_round_down(x: f64) -> f64 {
    let int = x.trunc();
    if (x - int).abs() <= 0.5 {
        int
    } else if int >= 0.0 {
        int + 1.0
    } else {
        int - 1.0
    }
}

/// A walk over the merged centroids towards growing target indexes.
struct Walk {
    so_far: f64,
    pos: usize,
}

impl Digest {
    fn mean(&self, i: usize) -> f64 {
        self.nodes.get(i).map_or(f64::NAN, |n| n.mean)
    }

    fn weight(&self, i: usize) -> f64 {
        self.nodes.get(i).map_or(0.0, |n| n.weight as f64)
    }

    fn walk(&self) -> Walk {
        Walk {
            so_far: self.weight(0) / 2.0,
            pos: 0,
        }
    }

    /// `td_internal_iterate_centroids_to_index` (at least two merged centroids).
    fn walk_to(&self, index: f64, walk: &mut Walk) -> f64 {
        let n = self.merged_nodes;
        let total = self.merged_weight as f64;
        let left_w = self.weight(0);
        if left_w > 1.0 && index < left_w / 2.0 {
            return self.min + (index - 1.0) / (left_w / 2.0 - 1.0) * (self.mean(0) - self.min);
        }
        if index > total - 1.0 {
            return self.max;
        }
        let right_w = self.weight(n - 1);
        let right_m = self.mean(n - 1);
        if right_w > 1.0 && total - index <= right_w / 2.0 {
            return self.max - (total - index - 1.0) / (right_w / 2.0 - 1.0) * (self.max - right_m);
        }
        while walk.pos + 1 < n {
            let i = walk.pos;
            let (w, w_next) = (self.weight(i), self.weight(i + 1));
            let (m, m_next) = (self.mean(i), self.mean(i + 1));
            let dw = (w + w_next) / 2.0;
            if walk.so_far + dw > index {
                let mut left_unit = 0.0;
                if w == 1.0 {
                    if index - walk.so_far < 0.5 {
                        return m;
                    }
                    left_unit = 0.5;
                }
                let mut right_unit = 0.0;
                if w_next == 1.0 {
                    if walk.so_far + dw - index <= 0.5 {
                        return m_next;
                    }
                    right_unit = 0.5;
                }
                let z1 = index - walk.so_far - left_unit;
                let z2 = walk.so_far + dw - index - right_unit;
                return weighted_average(m, z2, m_next, z1);
            }
            walk.so_far += dw;
            walk.pos += 1;
        }
        let z1 = index - total - right_w / 2.0;
        let z2 = right_w / 2.0 - z1;
        weighted_average(right_m, z1, self.max, z2)
    }

    /// `TDIGEST.QUANTILE`: each non-decreasing run of `qs` (all in `[0, 1]`) is one
    /// walk, as RedisBloom's `td_quantiles` call per run. Compresses.
    pub fn quantiles(&mut self, qs: &[f64]) -> Vec<f64> {
        self.compress();
        match self.merged_nodes {
            0 => return vec![f64::NAN; qs.len()],
            1 => return vec![self.mean(0); qs.len()],
            _ => {}
        }
        let mut walk = self.walk();
        let mut previous = f64::NEG_INFINITY;
        qs.iter()
            .map(|&q| {
                if q < previous {
                    walk = self.walk();
                }
                previous = q;
                self.walk_to(q * self.merged_weight as f64, &mut walk)
            })
            .collect()
    }

    /// `td_quantile` (what `BYRANK` uses). Compresses.
    pub fn quantile(&mut self, q: f64) -> f64 {
        self.compress();
        if !(0.0..=1.0).contains(&q) || self.nodes.is_empty() {
            return f64::NAN;
        }
        if self.nodes.len() == 1 {
            return self.mean(0);
        }
        let index = q * self.merged_weight as f64;
        if index < 1.0 {
            return self.min;
        }
        self.walk_to(index, &mut self.walk())
    }

    /// `td_cdf`. Compresses.
    pub fn cdf(&mut self, val: f64) -> f64 {
        self.compress();
        let n = self.merged_nodes;
        if n == 0 {
            return f64::NAN;
        }
        if val < self.min {
            return 0.0;
        }
        if val > self.max {
            return 1.0;
        }
        if n == 1 {
            let width = self.max - self.min;
            return if val - self.min <= width {
                0.5
            } else {
                (val - self.min) / width
            };
        }
        let total = self.merged_weight as f64;
        let (left_m, left_w) = (self.mean(0), self.weight(0));
        if val < left_m {
            let width = left_m - self.min;
            if width > 0.0 {
                if val == self.min {
                    return 0.5 / total;
                }
                return (1.0 + (val - self.min) / width * (left_w / 2.0 - 1.0)) / total;
            }
            return 0.0;
        }
        let (right_m, right_w) = (self.mean(n - 1), self.weight(n - 1));
        if val > right_m {
            let width = self.max - right_m;
            if width > 0.0 {
                if val == self.max {
                    return 1.0 - 0.5 / total;
                }
                let dq = (1.0 + (self.max - val) / width * (right_w / 2.0 - 1.0)) / total;
                return 1.0 - dq;
            }
            return 1.0;
        }
        let mut so_far = 0.0;
        let mut it = 0;
        while it + 1 < n {
            if self.mean(it) == val {
                let mut dw = 0.0;
                while it < n && self.mean(it) == val {
                    dw += self.weight(it);
                    it += 1;
                }
                return (so_far + dw / 2.0) / total;
            }
            let (m, m_next) = (self.mean(it), self.mean(it + 1));
            if m <= val && val < m_next {
                let (w, w_next) = (self.weight(it), self.weight(it + 1));
                if m_next - m > 0.0 {
                    let (mut left_x, mut right_x) = (0.0, 0.0);
                    if w == 1.0 {
                        if w_next == 1.0 {
                            return (so_far + 1.0) / total;
                        }
                        left_x = 0.5;
                    } else if w_next == 1.0 {
                        right_x = 0.5;
                    }
                    let dw = (w + w_next) / 2.0;
                    let dw_inner = dw - left_x - right_x;
                    let base = so_far + w / 2.0 + left_x;
                    return (base + dw_inner * (val - m) / (m_next - m)) / total;
                }
                return (so_far + (w + w_next) / 2.0) / total;
            }
            so_far += self.weight(it);
            it += 1;
        }
        1.0 - 0.5 / total
    }

    /// `td_trimmed_mean` for cuts already checked to lie in `[0, 1]`. Compresses.
    pub fn trimmed_mean(&mut self, low: f64, high: f64) -> f64 {
        self.compress();
        match self.merged_nodes {
            0 => return f64::NAN,
            1 => return self.mean(0),
            _ => {}
        }
        let total = self.merged_weight as f64;
        let (left, right) = ((total * low).floor(), (total * high).ceil());
        let (mut done, mut sum, mut count) = (0.0, 0.0, 0.0);
        for node in self.nodes.iter().take(self.merged_nodes) {
            let w = node.weight as f64;
            let mut take = w - c_min(c_max(0.0, left - done), w);
            take = c_min(c_max(0.0, right - done), take);
            done += w;
            sum += node.mean * take;
            count += take;
            if done >= right {
                break;
            }
        }
        sum / count
    }

    /// `TDIGEST.MIN`: NaN while empty.
    pub fn min_value(&self) -> f64 {
        if self.observations() == 0 {
            f64::NAN
        } else {
            self.min
        }
    }

    /// `TDIGEST.MAX`: NaN while empty.
    pub fn max_value(&self) -> f64 {
        if self.observations() == 0 {
            f64::NAN
        } else {
            self.max
        }
    }

    /// `TDIGEST.RANK` (`reverse`: `REVRANK`) of each value: -2 while empty. Compresses
    /// only when a value lies within `[min, max]`.
    pub fn ranks(&mut self, values: &[f64], reverse: bool) -> Vec<i64> {
        let n = self.observations() as f64;
        values
            .iter()
            .map(|&v| {
                if self.observations() == 0 {
                    -2
                } else if v < self.min {
                    if reverse {
                        c_to_i64(n)
                    } else {
                        -1
                    }
                } else if v > self.max {
                    if reverse {
                        -1
                    } else {
                        c_to_i64(n)
                    }
                } else if reverse {
                    c_to_i64((n - (self.cdf(v) * n).round()).round())
                } else {
                    c_to_i64(half_round_down(self.cdf(v) * n))
                }
            })
            .collect()
    }

    /// `TDIGEST.BYRANK` (`reverse`: `BYREVRANK`) of each rank (all non-negative).
    /// Compresses only when a rank lies strictly between 0 and the observation count.
    pub fn by_ranks(&mut self, ranks: &[i64], reverse: bool) -> Vec<f64> {
        let n = self.observations() as f64;
        ranks
            .iter()
            .map(|&r| {
                let r = r as f64;
                if n == 0.0 {
                    f64::NAN
                } else if r == 0.0 {
                    if reverse {
                        self.max
                    } else {
                        self.min
                    }
                } else if r >= n {
                    if reverse {
                        f64::NEG_INFINITY
                    } else {
                        f64::INFINITY
                    }
                } else if reverse {
                    self.quantile((n - r - 1.0) / n)
                } else {
                    self.quantile(r / n)
                }
            })
            .collect()
    }
}
