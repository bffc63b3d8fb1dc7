//! Operand sequences against the model: applied one by one, through partial merges at
//! fuzzer-chosen cuts, and in one full merge, counter pages must equal a plain
//! `Vec<u32>` of saturating counters.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_merge::counter::{CounterDelta, CounterPage};
use rocksketch_merge::{full_merge, partial_merge};

fuzz_target!(|data: &[u8]| {
    let Some((&len_byte, rest)) = data.split_first() else {
        return;
    };
    let page_len = 1 + u32::from(len_byte % 32);
    let mut model = vec![0u32; page_len as usize];
    let mut ops: Vec<Vec<u8>> = Vec::new();
    let mut cuts = Vec::new();
    // Each 4-byte record: index, add class, add byte, flags (bit 0: end of operand,
    // bit 1: cut a partial-merge run here).
    let mut entries = Vec::new();
    for rec in rest.chunks_exact(4) {
        let index = u32::from(rec[0]) % page_len;
        let add = match rec[1] % 4 {
            0 => u32::MAX - u32::from(rec[2] % 3),
            1 => u32::from(rec[2]) << 20,
            _ => u32::from(rec[2]),
        };
        model[index as usize] = model[index as usize].saturating_add(add);
        entries.push((index, add));
        if rec[3] & 1 == 1 {
            ops.push(
                CounterDelta::sparse(page_len, std::mem::take(&mut entries))
                    .unwrap()
                    .encode(),
            );
            if rec[3] & 2 == 2 {
                cuts.push(ops.len());
            }
        }
    }
    if !entries.is_empty() {
        ops.push(CounterDelta::sparse(page_len, entries).unwrap().encode());
    }
    if ops.is_empty() {
        return;
    }
    let cells = |v: &[u8]| CounterPage::decode(v).unwrap().into_cells();

    let all = full_merge(None, ops.iter().map(Vec::as_slice));
    assert_eq!(all.skipped, 0);
    assert_eq!(cells(&all.value), model);

    let mut page: Option<Vec<u8>> = None;
    for op in &ops {
        page = Some(full_merge(page.as_deref(), [op.as_slice()]).value);
    }
    assert_eq!(page.as_deref(), Some(all.value.as_slice()));

    cuts.push(0);
    cuts.push(ops.len());
    cuts.sort_unstable();
    cuts.dedup();
    let mut grouped = Vec::new();
    for w in cuts.windows(2) {
        let run = &ops[w[0]..w[1]];
        match partial_merge(run.iter().map(Vec::as_slice)) {
            Some(one) => grouped.push(one),
            None => grouped.extend(run.iter().cloned()),
        }
    }
    let through = full_merge(None, grouped.iter().map(Vec::as_slice));
    assert_eq!(through.value, all.value);
});
