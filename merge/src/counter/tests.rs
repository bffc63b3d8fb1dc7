use super::*;

#[test]
fn page_round_trip() {
    let page = CounterPage::from_cells(vec![0, 1, u32::MAX, 7]);
    assert_eq!(CounterPage::decode(&page.encode()), Ok(page));
}

#[test]
fn delta_round_trip_both_forms() {
    let sparse = CounterDelta::sparse(8, vec![(3, 5), (7, u32::MAX), (3, 1)]).unwrap();
    assert_eq!(CounterDelta::decode(&sparse.encode()), Ok(sparse));
    let dense = CounterDelta::dense(vec![1, 0, 2, 0]).unwrap();
    assert_eq!(CounterDelta::decode(&dense.encode()), Ok(dense));
}

#[test]
fn flipped_byte_is_a_checksum_error() {
    let mut bytes = CounterDelta::sparse(8, vec![(1, 1)]).unwrap().encode();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    assert!(matches!(
        CounterDelta::decode(&bytes),
        Err(Error::ChecksumMismatch { .. })
    ));
    let mut page = CounterPage::zeroed(4).encode();
    page[header::HEADER_LEN] ^= 0x80;
    assert!(matches!(
        CounterPage::decode(&page),
        Err(Error::ChecksumMismatch { .. })
    ));
}

#[test]
fn truncation_never_decodes() {
    let bytes = CounterDelta::sparse(8, vec![(1, 1), (2, 2)])
        .unwrap()
        .encode();
    for cut in 0..bytes.len() {
        assert!(matches!(
            CounterDelta::decode(&bytes[..cut]),
            Err(Error::Truncated { .. })
        ));
    }
}

#[test]
fn out_of_range_index_is_rejected() {
    assert!(CounterDelta::sparse(4, vec![(4, 1)]).is_err());
    // Forge one past the constructor: the decoder must refuse it too.
    let forged = CounterDelta {
        page_len: 4,
        body: DeltaBody::Sparse(vec![(9, 1)]),
    };
    assert_eq!(
        CounterDelta::decode(&forged.encode()),
        Err(Error::Invalid("delta index beyond the page"))
    );
}

// Post-mortem: a 17-byte delta claiming `page_len = u32::MAX` made the full merge
// allocate a 16 GiB page inside RocksDB, which aborts the process.
#[test]
fn a_delta_claiming_a_huge_page_is_skipped_not_allocated() {
    let forged = CounterDelta {
        page_len: u32::MAX,
        body: DeltaBody::Sparse(vec![]),
    }
    .encode();
    assert_eq!(forged.len(), 17);
    assert!(matches!(
        CounterDelta::decode(&forged),
        Err(Error::Invalid(_))
    ));
    let merged = crate::fold::fold::<CounterPage>(None, &[&forged]);
    assert_eq!(merged.skipped, 1);
    assert!(merged.value.is_empty());
    assert_eq!(partial_merge(&[&forged]), None);
    let largest = (crate::MAX_PAGE_BYTES / 4) as u32;
    assert!(CounterDelta::sparse(largest, vec![]).is_ok());
    assert!(CounterDelta::sparse(largest + 1, vec![]).is_err());
}

#[test]
fn encode_sum_picks_the_smaller_form() {
    let few = CounterDelta::encode_sum(&[0, 0, 0, 0, 0, 0, 9, 0]);
    assert!(matches!(
        CounterDelta::decode(&few).unwrap().body(),
        DeltaBody::Sparse(entries) if entries == &vec![(6, 9)]
    ));
    // Three compact entries (6 bytes) are smaller than 4 dense cells (16)...
    let three = CounterDelta::encode_sum(&[1, 2, 3, 0]);
    assert!(matches!(
        CounterDelta::decode(&three).unwrap().body(),
        DeltaBody::Sparse(entries) if entries == &vec![(0, 1), (1, 2), (2, 3)]
    ));
    // ...three of 6 bytes each (18) are not.
    let big = 1 << 28;
    let many = CounterDelta::encode_sum(&[big, big, big, 0]);
    assert!(matches!(
        CounterDelta::decode(&many).unwrap().body(),
        DeltaBody::Dense(_)
    ));
    assert!(many.len() <= CounterPage::zeroed(4).encode().len() + BODY_OFFSET);
    assert!(three.len() < many.len());
}

/// A delta in form 0 (fixed-width sparse entries), as releases before the compact
/// form wrote them.
fn form_0(page_len: u32, entries: &[(u32, u32)]) -> Vec<u8> {
    let mut out = header::begin(Kind::CounterDelta, BODY_OFFSET + entries.len() * 8);
    out.extend_from_slice(&page_len.to_le_bytes());
    out.push(FORM_SPARSE);
    for (index, add) in entries {
        out.extend_from_slice(&index.to_le_bytes());
        out.extend_from_slice(&add.to_le_bytes());
    }
    header::finish(out)
}

#[test]
fn form_0_deltas_still_read_and_merge_like_compact_ones() {
    let entries = vec![(3, 5), (7, u32::MAX), (3, 1), (0, 0)];
    let old = form_0(8, &entries);
    let new = CounterDelta::sparse(8, entries.clone()).unwrap().encode();
    assert_eq!(old[header::HEADER_LEN + FORM_OFFSET], FORM_SPARSE);
    assert_eq!(new[header::HEADER_LEN + FORM_OFFSET], FORM_COMPACT);
    assert!(new.len() < old.len(), "{} {}", new.len(), old.len());
    assert_eq!(CounterDelta::decode(&old), CounterDelta::decode(&new));
    let page = CounterPage::from_cells(vec![1; 8]).encode();
    let merged = |op: &[u8]| crate::fold::fold::<CounterPage>(Some(&page), &[op, op]).value;
    assert_eq!(merged(&old), merged(&new));
    assert_eq!(partial_merge(&[&old, &new]), partial_merge(&[&new, &old]));
    assert!(CounterDelta::decode(&form_0(8, &[(8, 1)])).is_err());
}

#[test]
fn compact_deltas_with_bad_entries_are_refused() {
    let framed = |body: &[u8]| {
        let mut out = header::begin(Kind::CounterDelta, BODY_OFFSET + body.len());
        out.extend_from_slice(&8u32.to_le_bytes());
        out.push(FORM_COMPACT);
        out.extend_from_slice(body);
        header::finish(out)
    };
    assert!(CounterDelta::decode(&framed(&[1, 2, 7, 0])).is_ok());
    for bad in [
        &[1][..],                           // an index without its addition
        &[8, 1],                            // an index beyond the page
        &[1, 0x80],                         // a cut addition
        &[1, 0xff, 0xff, 0xff, 0xff, 0x1f], // an addition past 32 bits
        &[0x88, 0x80, 0x80, 0x80, 0x00, 1], // an index past 32 bits' varint
        &[0x81, 0x00, 1],                   // an overlong index (two bytes for 1)
    ] {
        let bytes = framed(bad);
        assert!(CounterDelta::decode(&bytes).is_err(), "{bad:?}");
        let page = CounterPage::zeroed(8).encode();
        let folded = crate::fold::fold::<CounterPage>(Some(&page), &[&bytes]);
        assert_eq!(folded.skipped, 1, "{bad:?}");
    }
}
