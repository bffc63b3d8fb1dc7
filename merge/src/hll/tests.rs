use super::redis::{self, decode_sparse, export, import, sparse_of};
use super::{partial_merge, position, HllOps, Registers, DENSE_BYTES, REGISTERS};
use crate::full_merge;
use quickcheck::quickcheck;

fn added(items: impl IntoIterator<Item = String>) -> Registers {
    let mut regs = Registers::new();
    for item in items {
        let (index, rank) = position(item.as_bytes());
        regs.raise(index, rank);
    }
    regs
}

fn elements(n: u64) -> impl Iterator<Item = String> {
    (1..=n).map(|i| format!("e{i}"))
}

/// Answers of Redis 7.0.15's `PFADD x e1 .. en` then `PFCOUNT x`.
#[test]
fn counts_equal_redis() {
    for (n, count) in [
        (1, 1),
        (10, 10),
        (100, 100),
        (1000, 1008),
        (10_000, 9972),
        (100_000, 100_853),
    ] {
        assert_eq!(added(elements(n)).count(), count, "{n} elements");
    }
    assert_eq!(Registers::new().count(), 0);
}

/// Redis 7.0.15: `PFADD h1 foo bar baz`, `PFCOUNT h1`, `GET h1` (and `PFDEBUG DECODE h1`:
/// `Z:6558 v:4,1 Z:789 v:5,1 Z:2658 v:1,1 Z:6376`).
#[test]
fn registers_and_string_equal_redis() {
    let regs = added(["foo", "bar", "baz"].map(String::from));
    assert_eq!(regs.get(6558), 4);
    assert_eq!(regs.get(7348), 5);
    assert_eq!(regs.get(10007), 1);
    assert_eq!(regs.as_bytes().iter().filter(|r| **r != 0).count(), 3);
    let get = [
        0x48, 0x59, 0x4c, 0x4c, 0x01, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x59, 0x9d, 0x8c, 0x43,
        0x14, 0x90, 0x4a, 0x61, 0x80, 0x58, 0xe7,
    ];
    assert_eq!(export(&regs), get);
    assert_eq!(import(&get), Ok(regs));
}

#[test]
fn empty_is_one_xzero_as_redis_creates_it() {
    assert_eq!(sparse_of(&Registers::new()), Some(vec![0x7f, 0xff]));
}

#[test]
fn dense_when_redis_would_promote() {
    let mut regs = Registers::new();
    regs.raise(5, 33);
    assert_eq!(sparse_of(&regs), None);
    let many = added(elements(5000));
    assert_eq!(sparse_of(&many), None);
    let string = export(&many);
    assert_eq!(string.len(), redis::HEADER_LEN + DENSE_BYTES);
    assert_eq!(import(&string), Ok(many));
}

#[test]
fn hostile_strings_are_refused() {
    let good = export(&added(elements(50)));
    assert!(import(&good).is_ok());
    assert!(
        import(&good[..good.len() - 1]).is_err(),
        "short of the registers"
    );
    let mut long = good.clone();
    long.push(0x00);
    assert!(import(&long).is_err(), "past the registers");
    let mut magic = good.clone();
    magic[0] = b'X';
    assert!(import(&magic).is_err());
    let mut encoding = good.clone();
    encoding[4] = 2;
    assert!(import(&encoding).is_err());
    assert!(import(b"HYLL").is_err());
    let mut dense = export(&added(elements(5000)));
    dense.pop();
    assert!(import(&dense).is_err());
    // A run as long as all the registers, then more.
    assert!(decode_sparse(&[0x7f, 0xff, 0x80]).is_err());
    assert!(decode_sparse(&[0x7f]).is_err(), "XZERO cut short");
}

#[test]
fn operands_refuse_out_of_range_registers() {
    assert!(HllOps::pairs(vec![(REGISTERS as u16, 1)]).is_err());
    assert!(HllOps::pairs(vec![(0, 64)]).is_err());
    let mut page = Registers::new();
    let mut bad = HllOps::Pairs(vec![(1, 2)]).encode();
    let last = bad.len() - 1;
    bad[last] = 64; // rank 64, checksum now wrong too
    assert!(!page.apply_operand(&bad));
}

quickcheck! {
    /// The full merge is the register-wise max of every operand, whatever the partial
    /// merges grouped first: what a reader sees never depends on compaction.
    fn merges_are_register_max(groups: Vec<Vec<(u16, u8)>>, dense: Vec<(u16, u8)>) -> bool {
        let clip = |v: &Vec<(u16, u8)>| -> Vec<(u16, u8)> {
            v.iter().map(|(i, r)| (i % REGISTERS as u16, r % 64)).collect()
        };
        let mut ops: Vec<Vec<u8>> = groups.iter().map(|g| HllOps::pairs(clip(g)).unwrap().encode()).collect();
        let mut expect = Registers::new();
        for (i, r) in groups.iter().flat_map(clip) {
            expect.raise(i, r);
        }
        if !dense.is_empty() {
            let mut regs = Registers::new();
            for (i, r) in clip(&dense) {
                regs.raise(i, r);
            }
            expect.merge(&regs);
            ops.push(HllOps::Dense(regs).encode());
        }
        let refs: Vec<&[u8]> = ops.iter().map(Vec::as_slice).collect();
        let whole = full_merge(None, refs.iter().copied());
        let half = refs.len() / 2;
        let combined = partial_merge(&refs[..half]);
        let mut split: Vec<&[u8]> = combined.iter().map(Vec::as_slice).collect();
        if combined.is_none() {
            split.extend_from_slice(&refs[..half]);
        }
        split.extend_from_slice(&refs[half..]);
        let parted = full_merge(None, split.iter().copied());
        let read = |m: &crate::Merged| {
            if refs.is_empty() { Some(Registers::new()) } else { Registers::decode(&m.value).ok() }
        };
        whole.skipped == 0 && parted.skipped == 0
            && read(&whole) == Some(expect.clone()) && read(&parted) == Some(expect)
    }

    /// Any registers of at most 63 survive a page round trip and a Redis string round trip.
    fn encodings_round_trip(set: Vec<(u16, u8)>) -> bool {
        let mut regs = Registers::new();
        for (i, r) in set {
            regs.raise(i % REGISTERS as u16, r % 64);
        }
        Registers::decode(&regs.encode()) == Ok(regs.clone()) && import(&export(&regs)) == Ok(regs)
    }

    /// The packed form of any registers decodes to them, at the length planned, whether
    /// or not it is the shortest form.
    fn packed_form_round_trips(set: Vec<(u16, u8)>, spread: bool) -> bool {
        let mut regs = Registers::new();
        for (i, r) in set {
            let index = if spread { i % REGISTERS as u16 } else { i % 64 };
            regs.raise(index, r % 64);
        }
        match super::packed::plan(&regs) {
            None => regs == Registers::new(),
            Some(plan) => {
                let packed = plan.pack();
                packed.len() == plan.len && super::packed::unpack(&packed) == Ok(regs)
            }
        }
    }

    /// No bytes make the importer or the page decoder panic.
    fn any_bytes_are_safe(bytes: Vec<u8>, sparse: bool) -> bool {
        let mut string = b"HYLL".to_vec();
        string.extend_from_slice(&[u8::from(sparse), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        string.extend_from_slice(&bytes);
        let _ = import(&string);
        let _ = Registers::decode(&bytes);
        let _ = HllOps::decode(&bytes);
        true
    }
}

#[test]
fn a_kept_count_follows_every_change() {
    let mut regs = added(elements(100));
    assert_eq!(regs.count(), 100);
    for item in (101..=1000).map(|i| format!("e{i}")) {
        let (index, rank) = position(item.as_bytes());
        regs.raise(index, rank);
    }
    assert_eq!(regs.count(), 1008);
    let mut merged = Registers::new();
    assert_eq!(merged.count(), 0);
    merged.merge(&regs);
    assert_eq!(merged.count(), 1008);
    let mut applied = Registers::new();
    assert_eq!(applied.count(), 0);
    assert!(applied.apply_operand(&HllOps::Dense(regs.clone()).encode()));
    assert_eq!(applied.count(), 1008);
    let mut paired = Registers::new();
    assert_eq!(paired.count(), 0);
    assert!(paired.apply_operand(&HllOps::add(&["a", "b"]).encode()));
    assert_eq!(paired.count(), 2);
}

#[test]
fn pages_take_the_packed_form_while_it_is_shortest() {
    use crate::header::HEADER_LEN;
    for (n, most) in [(10, 25), (100, 160), (1000, 1500)] {
        let regs = added(elements(n));
        let page = regs.encode();
        let redis_body = export(&regs).len() - redis::HEADER_LEN;
        assert_eq!(page[HEADER_LEN], 2, "{n}: packed");
        assert!(
            page.len() - HEADER_LEN - 1 <= most,
            "{n}: {} bytes",
            page.len()
        );
        assert!(page.len() - HEADER_LEN - 1 < redis_body * 7 / 10, "{n}");
        assert_eq!(Registers::decode(&page), Ok(regs));
    }
    // Empty: Redis's two-byte XZERO; full and high: dense or packed, never longer.
    assert_eq!(Registers::new().encode()[HEADER_LEN], 1);
    let many = added(elements(200_000));
    assert!(many.encode().len() <= HEADER_LEN + 1 + DENSE_BYTES);
    assert_eq!(Registers::decode(&many.encode()), Ok(many));
}

#[test]
fn packed_pages_refuse_what_does_not_decode_exactly() {
    use crate::header::{begin, finish, Kind};
    let frame = |payload: &[u8]| {
        let mut out = begin(Kind::HllPage, payload.len());
        out.extend_from_slice(payload);
        finish(out)
    };
    let regs = added(elements(30));
    let page = regs.encode();
    let payload = &page[crate::header::HEADER_LEN..];
    assert_eq!(Registers::decode(&frame(payload)), Ok(regs));
    // Cut short, a byte too many, a nonzero bit past the last register, counts and
    // parameters out of range.
    assert!(Registers::decode(&frame(&payload[..payload.len() - 1])).is_err());
    assert!(Registers::decode(&frame(&[payload, &[0]].concat())).is_err());
    let mut tail = payload.to_vec();
    *tail.last_mut().unwrap() |= 0x80;
    let _ = Registers::decode(&frame(&tail)); // may be a longer valid code; must not panic
    for fields in [[2, 0, 0, 0], [2, 1, 0, 14], [2, 0x01, 0x40, 0]] {
        assert!(Registers::decode(&frame(&fields)).is_err(), "{fields:?}");
    }
    // A gap past the last register.
    assert!(Registers::decode(&frame(&[2, 1, 0, 13, 0xff, 0xff, 0xff])).is_err());
}
