//! Bit pages and deltas: codecs, hostile operands, and the partial merge.

use super::*;

#[test]
fn round_trips() {
    let mut page = BitPage::zeroed(64);
    page.set(3);
    page.set(63);
    assert_eq!(BitPage::decode(&page.encode()), Ok(page.clone()));
    let sparse = BitDelta::sparse(64, vec![5, 1, 5]).unwrap();
    assert_eq!(BitDelta::decode(&sparse.encode()), Ok(sparse));
    let dense = BitDelta::Dense(page);
    assert_eq!(BitDelta::decode(&dense.encode()), Ok(dense));
}

#[test]
fn flipped_byte_is_a_checksum_error() {
    let mut bytes = BitDelta::sparse(64, vec![9]).unwrap().encode();
    let last = bytes.len() - 1;
    bytes[last] ^= 4;
    assert!(matches!(
        BitDelta::decode(&bytes),
        Err(Error::ChecksumMismatch { .. })
    ));
}

#[test]
fn truncation_never_decodes() {
    let bytes = BitDelta::sparse(64, vec![9, 10]).unwrap().encode();
    for cut in 0..bytes.len() {
        assert!(matches!(
            BitDelta::decode(&bytes[..cut]),
            Err(Error::Truncated { .. })
        ));
    }
}

#[test]
fn out_of_page_bits_are_rejected() {
    assert!(BitDelta::sparse(64, vec![64]).is_err());
    assert!(BitDelta::sparse(12, vec![1]).is_err());
    let forged = BitDelta::Sparse {
        page_bits: 64,
        bits: vec![70],
    };
    assert!(BitDelta::decode(&forged.encode()).is_err());
}

#[test]
fn a_delta_claiming_a_huge_page_is_skipped_not_allocated() {
    let forged = BitDelta::Sparse {
        page_bits: u32::MAX - 7,
        bits: vec![1],
    }
    .encode();
    assert!(BitDelta::decode(&forged).is_err());
    let merged = crate::fold::fold::<BitPage>(None, &[&forged]);
    assert_eq!(merged.skipped, 1);
    assert!(merged.value.is_empty());
    let largest = (crate::MAX_PAGE_BYTES * 8) as u32;
    assert!(BitDelta::sparse(largest, vec![]).is_ok());
    assert!(BitDelta::sparse(largest + 8, vec![]).is_err());
}

/// The union read bit by bit, as the partial merge's bytes were first defined.
fn union_bit_by_bit(page_bits: u32, operands: &[BitDelta]) -> Vec<u8> {
    let mut union = BitPage::zeroed(page_bits);
    for delta in operands {
        union.or_view(&BitView::decode(&delta.encode()).unwrap());
    }
    if union.count_ones() as usize * 4 < union.bytes.len() {
        let bits = (0..page_bits).filter(|b| union.get(*b)).collect();
        BitDelta::Sparse { page_bits, bits }.encode()
    } else {
        BitDelta::Dense(union).encode()
    }
}

quickcheck::quickcheck! {
    fn partial_merge_is_the_union_read_bit_by_bit(
        words: u8, ops: Vec<(bool, Vec<u16>)>
    ) -> bool {
        // Pages of 8 to 512 bits, not always whole 64-bit words; a few operands of a
        // few positions each, so that both paths run and positions repeat.
        let page_bits = (u32::from(words % 64) + 1) * 8;
        let few = (page_bits / 32 + 2) as usize;
        let deltas: Vec<BitDelta> = ops
            .iter()
            .take(ops.len() % 5)
            .map(|(dense, bits)| {
                let bits: Vec<u32> = bits
                    .iter()
                    .take(bits.len() % few)
                    .map(|b| u32::from(*b) % page_bits)
                    .collect();
                if *dense {
                    let mut page = BitPage::zeroed(page_bits);
                    bits.iter().for_each(|b| page.set(*b));
                    BitDelta::Dense(page)
                } else {
                    BitDelta::sparse(page_bits, bits).unwrap()
                }
            })
            .collect();
        let encoded: Vec<Vec<u8>> = deltas.iter().map(BitDelta::encode).collect();
        let refs: Vec<&[u8]> = encoded.iter().map(Vec::as_slice).collect();
        let merged = partial_merge(&refs);
        if deltas.is_empty() {
            return merged.is_none();
        }
        merged == Some(union_bit_by_bit(page_bits, &deltas))
    }
}

#[test]
fn partial_merge_refuses_mixed_pages_and_undecodable_operands() {
    let a = BitDelta::sparse(64, vec![1]).unwrap().encode();
    let b = BitDelta::sparse(128, vec![1]).unwrap().encode();
    assert_eq!(partial_merge(&[&a, &b]), None);
    assert_eq!(partial_merge(&[&a, b"junk"]), None);
    assert_eq!(partial_merge(&[]), None);
}
