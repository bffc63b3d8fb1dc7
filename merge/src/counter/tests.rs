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
    let many = CounterDelta::encode_sum(&[1, 2, 3, 0]);
    assert!(matches!(
        CounterDelta::decode(&many).unwrap().body(),
        DeltaBody::Dense(_)
    ));
    assert!(many.len() <= CounterPage::zeroed(4).encode().len() + BODY_OFFSET);
}
