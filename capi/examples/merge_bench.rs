//! The C boundary's cost, the Rust side: the workload of `host DIR bench N` (reads of
//! pages whose operands wait in the memtable, capi/tests/hosts/host.cc) in the bundled
//! RocksDB, merged by the Rust operator, and by the C ABI's
//! `rks_full_merge`/`rks_partial_merge` called as rocksketch.hpp calls them (pointer
//! arrays in, a sink copying the value out). `scripts/bench-capi` runs it beside the C++
//! host in Debian's RocksDB and prints the ratios.
//!
//! Usage: merge_bench DIR N

use rocksdb::{MergeOperands, Options, DB};
use rocksketch_capi::{rks_full_merge, rks_partial_merge, rks_status};
use rocksketch_merge::counter::CounterDelta;
use std::ffi::c_void;
use std::time::Instant;

type Merge = fn(&[u8], Option<&[u8]>, &MergeOperands) -> Option<Vec<u8>>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, n): (&str, u64) = match args.as_slice() {
        [_, dir, n] => (dir, n.parse().expect("N is a count")),
        _ => panic!("usage: merge_bench DIR N"),
    };
    boundary_alone(n);
    let rust: (Merge, Merge) = (rust_full, rust_partial);
    let capi: (Merge, Merge) = (capi_full, capi_partial);
    for (name, (full, partial)) in [("rust-operator", rust), ("c-abi-in-rust", capi)] {
        let path = std::path::Path::new(dir).join(name);
        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_merge_operator(rocksketch_merge::MERGE_OPERATOR_NAME, full, partial);
        let db = DB::open(&opts, &path).expect("open");
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for (phase, pages) in [("many", 16), ("few", n / 4)] {
            let key = |page: u64| format!("p:{phase}:0:{page}");
            for i in 0..n {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let delta = CounterDelta::sparse(4096, vec![((state % 4096) as u32, 1)]);
                db.merge(key(i % pages), delta.unwrap().encode())
                    .expect("merge");
            }
            let keys: Vec<String> = (0..pages).map(key).collect();
            let (start, mut merges) = (Instant::now(), 0u64);
            while start.elapsed().as_secs_f64() < 1.0 {
                for key in &keys {
                    assert!(db.get(key).expect("read").is_some());
                }
                merges += pages;
            }
            let elapsed = start.elapsed().as_secs_f64();
            println!(
                "{name}\t{phase}\t{n}\tmerges_per_s\t{:.0}\toperands_per_s\t{:.0}",
                merges as f64 / elapsed,
                merges as f64 * (n / pages) as f64 / elapsed
            );
        }
    }
}

/// The boundary without RocksDB: full merges of the same operands in memory, called
/// directly and through `rks_full_merge` as rocksketch.hpp calls it (pointer arrays in,
/// a sink out), interleaved in one process so the machine's noise falls on both.
fn boundary_alone(n: u64) {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for (phase, per_merge) in [("many", n / 16), ("few", 4)] {
        let operands: Vec<Vec<u8>> = (0..per_merge)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let delta = CounterDelta::sparse(4096, vec![((state % 4096) as u32, 1)]);
                delta.unwrap().encode()
            })
            .collect();
        let slices: Vec<&[u8]> = operands.iter().map(Vec::as_slice).collect();
        let (ptrs, lens): (Vec<*const u8>, Vec<usize>) =
            slices.iter().map(|o| (o.as_ptr(), o.len())).unzip();
        let reps = (2_000_000 / per_merge).max(1);
        let (mut direct, mut capi) = (0.0, 0.0);
        for _ in 0..5 {
            let start = Instant::now();
            for _ in 0..reps {
                let value = rocksketch_merge::full_merge(None, slices.iter().copied()).value;
                std::hint::black_box(value);
            }
            direct += start.elapsed().as_secs_f64();
            let start = Instant::now();
            for _ in 0..reps {
                let mut value = Vec::new();
                // SAFETY: the arrays live through the call; `value` is the sink's.
                let status = unsafe {
                    rks_full_merge(
                        std::ptr::null(),
                        0,
                        false,
                        ptrs.as_ptr(),
                        lens.as_ptr(),
                        ptrs.len(),
                        Some(sink),
                        (&mut value as *mut Vec<u8>).cast(),
                    )
                };
                assert_eq!(status, rks_status::RKS_OK);
                std::hint::black_box(value);
            }
            capi += start.elapsed().as_secs_f64();
        }
        let merges = 5.0 * reps as f64;
        println!(
            "in-memory-direct\t{phase}\t{n}\tmerges_per_s\t{:.0}",
            merges / direct
        );
        println!(
            "in-memory-c-abi\t{phase}\t{n}\tmerges_per_s\t{:.0}",
            merges / capi
        );
    }
}

fn rust_full(_: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    Some(rocksketch_merge::full_merge(existing, operands).value)
}

fn rust_partial(_: &[u8], _: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    rocksketch_merge::partial_merge(operands)
}

unsafe extern "C" fn sink(ctx: *mut c_void, data: *const u8, len: usize) {
    // SAFETY: `ctx` is the `Vec` the caller passed; `data` holds `len` bytes.
    unsafe { (*ctx.cast::<Vec<u8>>()).extend_from_slice(std::slice::from_raw_parts(data, len)) }
}

fn arrays(operands: &MergeOperands) -> (Vec<*const u8>, Vec<usize>) {
    operands.iter().map(|o| (o.as_ptr(), o.len())).unzip()
}

fn capi_full(_: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let (ptrs, lens) = arrays(operands);
    let mut value = Vec::new();
    let (e_ptr, e_len) = existing.map_or((std::ptr::null(), 0), |e| (e.as_ptr(), e.len()));
    // SAFETY: the arrays and `existing` live through the call; `value` is the sink's.
    let status = unsafe {
        rks_full_merge(
            e_ptr,
            e_len,
            existing.is_some(),
            ptrs.as_ptr(),
            lens.as_ptr(),
            ptrs.len(),
            Some(sink),
            (&mut value as *mut Vec<u8>).cast(),
        )
    };
    (status == rks_status::RKS_OK).then_some(value)
}

fn capi_partial(_: &[u8], _: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let (ptrs, lens) = arrays(operands);
    let (mut value, mut merged) = (Vec::new(), false);
    // SAFETY: the arrays live through the call; `value` is the sink's.
    let status = unsafe {
        rks_partial_merge(
            ptrs.as_ptr(),
            lens.as_ptr(),
            ptrs.len(),
            Some(sink),
            (&mut value as *mut Vec<u8>).cast(),
            &mut merged,
        )
    };
    (status == rks_status::RKS_OK && merged).then_some(value)
}
