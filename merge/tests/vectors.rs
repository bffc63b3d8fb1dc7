//! Bit-exactness with RedisBloom's hashes, from the vectors recorded from its sources.
//!
//! `vectors/` at the workspace root is a copy of `../shared/vectors/`; where the shared
//! folder is present the copy must be identical to it.

use rocksketch_merge::hash::{murmur2, murmur64a};
use std::path::PathBuf;

/// The workspace root, as cargo names it when it runs the test: a test binary another
/// checkout built into the shared target directory (scripts/setup; CI's clean clone)
/// is found fresh here, and the directory it was compiled in may be gone.
fn workspace() -> PathBuf {
    let dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    dir.unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .join("..")
}

fn hex_bytes(s: &str) -> Vec<u8> {
    if s == "-" {
        return Vec::new();
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex byte"))
        .collect()
}

#[test]
fn murmur_vectors_match_redisbloom() {
    let text = std::fs::read_to_string(workspace().join("vectors/murmur.tsv")).expect("vectors");
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 6, "line {line}");
        let input = hex_bytes(cols[0]);
        let h64 = |c: &str| u64::from_str_radix(c, 16).expect("hex u64");
        assert_eq!(
            murmur64a(&input, 0),
            h64(cols[1]),
            "seed 0, input {}",
            cols[0]
        );
        let first = murmur64a(&input, 0xc6a4_a793_5bd1_e995);
        assert_eq!(first, h64(cols[2]), "bloom seed, input {}", cols[0]);
        assert_eq!(
            murmur64a(&input, first),
            h64(cols[3]),
            "chained, input {}",
            cols[0]
        );
        for (seed, want) in cols[4].split(',').enumerate() {
            let want = u32::from_str_radix(want, 16).expect("hex u32");
            assert_eq!(
                murmur2(&input, seed as u32),
                want,
                "seed {seed}, input {}",
                cols[0]
            );
        }
        let want = u32::from_str_radix(cols[5], 16).expect("hex u32");
        assert_eq!(murmur2(&input, 1919), want, "seed 1919, input {}", cols[0]);
        checked += 1;
    }
    assert!(checked >= 50, "only {checked} vectors read");
}

#[test]
fn vendored_vectors_equal_the_shared_ones() {
    let shared = workspace().join("../shared/vectors");
    if !shared.exists() {
        eprintln!("../shared/vectors is not beside this checkout; nothing to compare");
        return;
    }
    for name in ["murmur.tsv", "cms_redisbloom.jsonl"] {
        let ours = std::fs::read(workspace().join("vectors").join(name)).expect("ours");
        let theirs = std::fs::read(shared.join(name)).expect("shared");
        assert!(
            ours == theirs,
            "vectors/{name} differs from ../shared/vectors/{name}"
        );
    }
}
