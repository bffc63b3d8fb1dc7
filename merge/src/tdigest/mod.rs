//! T-Digest pages: RedisBloom's merging t-digest (its `t-digest-c`), so that every
//! answer equals RedisBloom's for the same sequence of adds and compressions.
//!
//! A digest is one page: centroids (mean, weight), merged ones first and then the
//! buffer of unmerged ones, plus min, max and the counts INFO reports. `TDIGEST.ADD`
//! writes its values as an operand ([`ops`]); the full merge adds them one by one as
//! RedisBloom's `td_add` does, compressing whenever the buffer is full, so a page and
//! its operands always materialize to the same bytes.
//!
//! ```text
//! Digest page payload (version 1), 56 + 16 x nodes bytes:
//! compression u32 | merged_nodes u32 | unmerged_nodes u32 | reserved u32 (0) |
//! min f64 | max f64 | merged_weight i64 | unmerged_weight i64 | total_compressions i64 |
//! nodes: (mean f64 | weight i64) x (merged_nodes + unmerged_nodes)       (all LE)
//! ```

pub mod ops;
mod query;
mod sort;

use crate::bytes::le_u64;
use crate::error::{Error, Result};
use crate::header::{self, Kind};

/// RedisBloom's default compression.
pub const DEFAULT_COMPRESSION: u32 = 100;
/// The largest compression a digest may have: its page then holds at most 60 010
/// centroids (about 940 KiB), within [`crate::MAX_PAGE_BYTES`]. RedisBloom allows more
/// (as far as memory goes); past this, rocksketch answers as RedisBloom does when the
/// allocation fails.
pub const MAX_COMPRESSION: u32 = 10_000;
const FIXED_LEN: usize = 56;
const NODE_LEN: usize = 16;

/// RedisBloom's capacity for a compression: `6 x compression + 10` centroids.
pub fn capacity(compression: u32) -> usize {
    6 * compression as usize + 10
}

/// One centroid: the mean of `weight` observations.
#[derive(Debug, Clone, Copy)]
pub struct Centroid {
    /// The mean of the values it stands for.
    pub mean: f64,
    /// How many values it stands for.
    pub weight: i64,
}

/// A weight sum would overflow `i64` (RedisBloom's `overflow detected`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow;

/// A decoded digest.
#[derive(Debug, Clone)]
pub struct Digest {
    compression: u32,
    min: f64,
    max: f64,
    merged_nodes: usize,
    merged_weight: i64,
    unmerged_weight: i64,
    total_compressions: i64,
    /// Merged centroids first, then the unmerged buffer.
    nodes: Vec<Centroid>,
}

impl PartialEq for Digest {
    /// Bit-for-bit: two digests are equal when they encode to the same bytes.
    fn eq(&self, other: &Digest) -> bool {
        self.encode() == other.encode()
    }
}

impl Eq for Digest {}

impl Digest {
    /// An empty digest (`td_reset` state); `compression` is clamped to
    /// `1..=MAX_COMPRESSION`.
    pub fn new(compression: u32) -> Digest {
        Digest {
            compression: compression.clamp(1, MAX_COMPRESSION),
            min: f64::MAX,
            max: -f64::MAX,
            merged_nodes: 0,
            merged_weight: 0,
            unmerged_weight: 0,
            total_compressions: 0,
            nodes: Vec::new(),
        }
    }

    /// The compression parameter (RedisBloom's `COMPRESSION`).
    pub fn compression(&self) -> u32 {
        self.compression
    }

    /// How many centroids and values it holds at most before it compresses.
    pub fn capacity(&self) -> usize {
        capacity(self.compression)
    }

    /// The smallest value added (`f64::MAX` while empty, as RedisBloom keeps it).
    pub fn min(&self) -> f64 {
        self.min
    }

    /// The largest value added (`-f64::MAX` while empty).
    pub fn max(&self) -> f64 {
        self.max
    }

    /// How many centroids are merged.
    pub fn merged_nodes(&self) -> usize {
        self.merged_nodes
    }

    /// How many values wait unmerged.
    pub fn unmerged_nodes(&self) -> usize {
        self.nodes.len() - self.merged_nodes
    }

    /// The total weight of the merged centroids.
    pub fn merged_weight(&self) -> i64 {
        self.merged_weight
    }

    /// The total weight of the values waiting unmerged.
    pub fn unmerged_weight(&self) -> i64 {
        self.unmerged_weight
    }

    /// Observations: merged and unmerged weight (wrapping as RedisBloom's sum cannot).
    pub fn observations(&self) -> i64 {
        self.merged_weight.wrapping_add(self.unmerged_weight)
    }

    /// How many times the digest was compressed.
    pub fn total_compressions(&self) -> i64 {
        self.total_compressions
    }

    /// All centroids, merged ones first.
    pub fn nodes(&self) -> &[Centroid] {
        &self.nodes
    }

    /// `td_add`: compresses first if the buffer is full, then appends `(mean, weight)`.
    pub fn add(&mut self, mean: f64, weight: i64) -> std::result::Result<(), Overflow> {
        if self.nodes.len() + 1 >= self.capacity() {
            self.compress();
        }
        if self.nodes.len() >= self.capacity() {
            return Err(Overflow);
        }
        let unmerged = self.unmerged_weight.checked_add(weight).ok_or(Overflow)?;
        unmerged.checked_add(self.merged_weight).ok_or(Overflow)?;
        if mean < self.min {
            self.min = mean;
        }
        if mean > self.max {
            self.max = mean;
        }
        self.nodes.push(Centroid { mean, weight });
        self.unmerged_weight = unmerged;
        Ok(())
    }

    /// Whether [`Digest::compress`] would change anything (the buffer holds centroids).
    pub fn needs_compress(&self) -> bool {
        self.nodes.len() > self.merged_nodes
    }

    /// `td_compress`: sorts all centroids by mean (RedisBloom's own quicksort, whose
    /// order of equal means matters) and merges neighbours as the scale function
    /// allows. A digest of total weight 1 is only sorted.
    pub fn compress(&mut self) {
        if !self.needs_compress() {
            return;
        }
        sort::td_qsort(&mut self.nodes);
        let total = self.merged_weight as f64 + self.unmerged_weight as f64;
        if total <= 1.0 {
            return;
        }
        let normalizer =
            f64::from(self.compression) / (2.0 * std::f64::consts::PI * total * total.ln());
        let mut merged: Vec<Centroid> = Vec::with_capacity(self.nodes.len());
        let mut nodes = self.nodes.iter().copied();
        let Some(mut cur) = nodes.next() else {
            return;
        };
        let mut weight_so_far = 0.0;
        for node in nodes {
            let proposed = cur.weight as f64 + node.weight as f64;
            let z = proposed * normalizer;
            let q0 = weight_so_far / total;
            let q2 = (weight_so_far + proposed) / total;
            if z <= q0 * (1.0 - q0) && z <= q2 * (1.0 - q2) {
                cur.weight = cur.weight.wrapping_add(node.weight);
                let delta = node.mean - cur.mean;
                cur.mean += (delta * node.weight as f64) / cur.weight as f64;
            } else {
                weight_so_far += cur.weight as f64;
                merged.push(cur);
                cur = node;
            }
        }
        merged.push(cur);
        self.merged_nodes = merged.len();
        self.nodes = merged;
        self.merged_weight = total as i64;
        self.unmerged_weight = 0;
        self.total_compressions = self.total_compressions.wrapping_add(1);
    }

    /// `td_merge(self, from)`: both compressed, then every centroid of `from` added.
    /// On overflow `self` is left part-way, as RedisBloom's is (callers discard it).
    pub fn merge_from(&mut self, from: &mut Digest) -> std::result::Result<(), Overflow> {
        self.compress();
        from.compress();
        for node in &from.nodes {
            self.add(node.mean, node.weight)?;
        }
        Ok(())
    }

    /// Encodes the page.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = header::begin(Kind::DigestPage, FIXED_LEN + NODE_LEN * self.nodes.len());
        for field in [
            self.compression,
            self.merged_nodes as u32,
            self.unmerged_nodes() as u32,
            0,
        ] {
            out.extend_from_slice(&field.to_le_bytes());
        }
        for field in [self.min, self.max] {
            out.extend_from_slice(&field.to_le_bytes());
        }
        for field in [
            self.merged_weight,
            self.unmerged_weight,
            self.total_compressions,
        ] {
            out.extend_from_slice(&field.to_le_bytes());
        }
        for node in &self.nodes {
            out.extend_from_slice(&node.mean.to_le_bytes());
            out.extend_from_slice(&node.weight.to_le_bytes());
        }
        header::finish(out)
    }

    /// Decodes a page, checking header, checksum and every count against the capacity.
    pub fn decode(bytes: &[u8]) -> Result<Digest> {
        let framed = header::decode_as(bytes, Kind::DigestPage)?;
        Digest::decode_payload(framed.payload)
    }

    fn decode_payload(p: &[u8]) -> Result<Digest> {
        let u32_at = |at| crate::bytes::le_u32(p, at);
        let f64_at = |at| le_u64(p, at).map(f64::from_bits);
        let i64_at = |at| le_u64(p, at).map(|v| v as i64);
        let compression = u32_at(0)?;
        let merged_nodes = u32_at(4)? as usize;
        let unmerged_nodes = u32_at(8)? as usize;
        if !(1..=MAX_COMPRESSION).contains(&compression) || u32_at(12)? != 0 {
            return Err(Error::Invalid("digest compression out of range"));
        }
        let count = merged_nodes + unmerged_nodes;
        if count > capacity(compression) {
            return Err(Error::Invalid("more centroids than the digest's capacity"));
        }
        if p.len() != FIXED_LEN + NODE_LEN * count {
            return Err(Error::Invalid("digest length does not match its centroids"));
        }
        let mut nodes = Vec::with_capacity(count);
        for at in (FIXED_LEN..p.len()).step_by(NODE_LEN) {
            let node = Centroid {
                mean: f64_at(at)?,
                weight: i64_at(at + 8)?,
            };
            if node.weight <= 0 {
                return Err(Error::Invalid("digest centroid out of range"));
            }
            nodes.push(node);
        }
        let digest = Digest {
            compression,
            min: f64_at(16)?,
            max: f64_at(24)?,
            merged_nodes,
            merged_weight: i64_at(32)?,
            unmerged_weight: i64_at(40)?,
            total_compressions: i64_at(48)?,
            nodes,
        };
        if digest.merged_weight < 0 || digest.unmerged_weight < 0 {
            return Err(Error::Invalid("negative digest weight"));
        }
        Ok(digest)
    }

    /// The bytes the digest occupies in memory, about.
    pub fn memory_bytes(&self) -> usize {
        FIXED_LEN + NODE_LEN * self.nodes.len()
    }
}

#[cfg(test)]
mod tests;
