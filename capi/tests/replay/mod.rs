//! Replays a test host's transcript through the Rust library, checking every answer.

use rocksketch::{CuckooOptions, Store, StoreOptions};
use std::collections::BTreeMap;
use std::path::Path;

/// Replays `transcript` on a fresh store in `dir`; returns how many answers of each
/// operation were compared. Panics at the first answer that differs.
pub fn replay(transcript: &str, dir: &Path) -> BTreeMap<String, usize> {
    let mut options = StoreOptions::default();
    let mut store: Option<Store> = None;
    let mut checked = BTreeMap::new();
    for (number, line) in transcript.lines().enumerate() {
        let f: Vec<&str> = line.split('\t').collect();
        let at = || format!("transcript line {}: {line}", number + 1);
        if f[0] == "store" {
            assert_eq!(f[1], "page_bytes", "{}", at());
            options.page_bytes = f[2].parse().unwrap();
            continue;
        }
        let s = store.get_or_insert_with(|| Store::open(dir, options.clone()).unwrap());
        let num = |i: usize| -> u64 { f[i].parse().unwrap_or_else(|_| panic!("{}", at())) };
        let flag = |i: usize| f[i] == "1";
        match f[0] {
            "cms.init" => s.cms(f[1]).init_by_dim(num(2), num(3)).unwrap(),
            "cms.incrby" => {
                let got = s
                    .cms(f[1])
                    .incr_by_with_estimates(&[(f[2], num(3))])
                    .unwrap();
                assert_eq!(u64::from(got[0]), num(4), "{}", at());
            }
            "cms.query" => {
                let got = s.cms(f[1]).query(&[f[2]]).unwrap();
                assert_eq!(u64::from(got[0]), num(3), "{}", at());
            }
            "cms.count" => assert_eq!(s.cms(f[1]).info().unwrap().count, num(2), "{}", at()),
            "bf.reserve" => {
                let error: f64 = f[2].parse().unwrap();
                s.bloom(f[1]).reserve(error, num(3), num(4) as u32).unwrap();
            }
            "bf.add" => assert_eq!(s.bloom(f[1]).add(f[2]).unwrap(), flag(3), "{}", at()),
            "bf.exists" => assert_eq!(s.bloom(f[1]).exists(f[2]).unwrap(), flag(3), "{}", at()),
            "bf.filters" => {
                assert_eq!(
                    u64::from(s.bloom(f[1]).info().unwrap().filters),
                    num(2),
                    "{}",
                    at()
                )
            }
            "cf.reserve" => s
                .cuckoo(f[1])
                .reserve(CuckooOptions {
                    capacity: num(2),
                    bucket_size: num(3) as u8,
                    expansion: num(4) as u32,
                    fp_bits: num(5) as u8,
                    ..CuckooOptions::default()
                })
                .unwrap(),
            "cf.add" => s.cuckoo(f[1]).add(f[2]).unwrap(),
            "cf.del" => assert_eq!(s.cuckoo(f[1]).delete(f[2]).unwrap(), flag(3), "{}", at()),
            "cf.count" => assert_eq!(s.cuckoo(f[1]).count(f[2]).unwrap(), num(3), "{}", at()),
            "cf.filters" => {
                assert_eq!(
                    u64::from(s.cuckoo(f[1]).info().unwrap().filters),
                    num(2),
                    "{}",
                    at()
                )
            }
            "flush" => s.flush().unwrap(),
            "compact" => s.compact().unwrap(),
            "reopen" => {
                store = None;
                continue;
            }
            "none" => continue,
            "skipped" => assert_eq!(num(1), 0, "the host's merges skipped operands"),
            _ => panic!("unknown operation at {}", at()),
        }
        *checked.entry(f[0].to_owned()).or_insert(0) += 1;
    }
    checked
}
