//! RocksDB's log format as a replica's feed reads it (`rocksketch_merge::wal_log`), past
//! its checksums: batches the fuzzer chooses are written as RocksDB's log writer writes
//! them and read back in pieces cut where the fuzzer says, each piece possibly with a
//! byte flipped. Unflipped, the batches read back exactly; flipped, reading stops at a
//! checksum mismatch or hands out only whole batches it read before it; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rocksketch_merge::wal_log::{append, parse, Parsed};

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    // Batches: lengths from pairs of bytes (scaled up to cross blocks), filled with data.
    let mut batches = Vec::new();
    for (i, pair) in rest.chunks(2).take(64).enumerate() {
        let len = usize::from(pair[0]) * (1 + usize::from(control & 0x3f) * 8)
            + usize::from(*pair.get(1).unwrap_or(&0));
        let mut batch = (i as u64 + 1).to_le_bytes().to_vec();
        batch.extend_from_slice(&1u32.to_le_bytes());
        batch.extend((0..len).map(|j| (i + j) as u8));
        batches.push(batch);
    }
    let mut log = Vec::new();
    for batch in &batches {
        append(&mut log, batch);
    }
    let flip = (control & 0x40 != 0 && !log.is_empty())
        .then(|| usize::from(rest.first().copied().unwrap_or(0)) * 131 % log.len());
    if let Some(at) = flip {
        log[at] ^= 0x5a;
    }
    let step = 1 + usize::from(rest.last().copied().unwrap_or(0)) * 97;
    let (mut got, mut at, mut fragment, mut seen) = (Vec::new(), 0, None, 0);
    let mut corrupt = false;
    while seen < log.len() && !corrupt {
        seen = (seen + step).min(log.len());
        match parse(&log[..seen], 0, &mut at, &mut fragment, &mut |b| {
            got.push(b.to_vec());
            true
        }) {
            Ok(Parsed::Corrupt) | Err(_) => corrupt = true,
            Ok(_) => {}
        }
    }
    if flip.is_none() {
        assert!(!corrupt);
        assert_eq!(got, batches);
    } else {
        // Whatever was handed out is a whole batch that was written, in order.
        assert!(got.len() <= batches.len());
        for (got, want) in got.iter().zip(&batches) {
            if got != want {
                // A flip inside a length can only shorten what is read before the
                // checksum catches it; a wrong batch never passes its checksum.
                panic!("a batch that was not written passed its checksum");
            }
        }
    }
});
