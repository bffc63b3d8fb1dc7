//! `CMS.INCRBY`'s combined requests: each caller's pairs packed for the combiner, and
//! the combined call's answers split back per request.

use crate::error::{Error, Result};

/// One caller's `(item, increment)` pairs, owned for the combiner in two allocations
/// (the items' bytes end to end, and each item's end with its increment) rather than
/// one per item.
pub(crate) struct Request {
    bytes: Vec<u8>,
    ends: Vec<(usize, u64)>,
}

impl Request {
    pub(super) fn new<I: AsRef<[u8]>>(items: &[(I, u64)]) -> Request {
        let size = items.iter().map(|(item, _)| item.as_ref().len()).sum();
        let mut bytes = Vec::with_capacity(size);
        let ends = items
            .iter()
            .map(|(item, incr)| {
                bytes.extend_from_slice(item.as_ref());
                (bytes.len(), *incr)
            })
            .collect();
        Request { bytes, ends }
    }

    /// How many pairs.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// The pairs, in order.
    pub(super) fn pairs(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().map(|(end, _)| *end));
        starts
            .zip(&self.ends)
            .map(|(start, &(end, incr))| (&self.bytes[start..end], incr))
    }
}

/// Every request's pairs, in order: the combined call's input.
pub(super) fn all_pairs(requests: &[Request]) -> Vec<(&[u8], u64)> {
    let mut pairs = Vec::with_capacity(requests.iter().map(Request::len).sum());
    for request in requests {
        pairs.extend(request.pairs());
    }
    pairs
}

/// Each combined request's answer from the combined call's `outcome` (see
/// `Cms::incr_by_with_estimates_alone`). When nothing was written, only the first
/// request is answered (the error), and the combiner runs the others again alone; once
/// the increments were written, every request is answered, so none is applied twice.
pub(super) fn per_request(
    requests: &[Request],
    outcome: Result<Result<Vec<u32>>>,
) -> Vec<Result<Vec<u32>>> {
    match outcome {
        Ok(Ok(estimates)) => {
            let mut estimates = estimates.into_iter();
            requests
                .iter()
                .map(|r| Ok(estimates.by_ref().take(r.len()).collect()))
                .collect()
        }
        Err(err) => vec![Err(err)],
        Ok(Err(err)) => {
            let text =
                format!("{err} (the increments were applied; their estimates could not be read)");
            requests
                .iter()
                .map(|_| Err(Error::Storage(text.clone())))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_combined_increment_that_was_written_is_answered_for_every_request() {
        let requests = vec![
            Request::new(&[(b"a", 1)]),
            Request::new(&[(b"b".as_slice(), 2), (b"c".as_slice(), 3)]),
        ];
        // Written, then the read failed: every request answered (the combiner re-runs
        // only what is left unanswered: before, all but the first ran twice).
        let read_failed = Ok(Err(Error::Storage("read failed".into())));
        let answers = per_request(&requests, read_failed);
        assert_eq!(answers.len(), requests.len());
        for answer in answers {
            let text = answer.unwrap_err().to_string();
            assert!(text.contains("the increments were applied"), "{text}");
        }
        // Not written: the first answered, the rest left to run alone.
        let write_failed = Err(Error::Storage("write failed".into()));
        assert_eq!(per_request(&requests, write_failed).len(), 1);
        let fine = per_request(&requests, Ok(Ok(vec![1, 2, 3])));
        let fine: Vec<Vec<u32>> = fine.into_iter().map(Result::unwrap).collect();
        assert_eq!(fine, vec![vec![1], vec![2, 3]]);
    }

    #[test]
    fn packed_requests_give_back_their_pairs_in_order() {
        let empty: [(&[u8], u64); 0] = [];
        let pairs: [(&[u8], u64); 4] = [(b"", 0), (b"ab", 1), (b"", u64::MAX), (b"xyz", 7)];
        let requests = vec![
            Request::new(&pairs),
            Request::new(&empty),
            Request::new(&pairs[1..2]),
        ];
        assert_eq!(requests[0].pairs().collect::<Vec<_>>(), pairs);
        assert_eq!(requests[1].len(), 0);
        let all = all_pairs(&requests);
        assert_eq!(all.len(), 5);
        assert_eq!(all[..4], pairs);
        assert_eq!(all[4], (b"ab".as_slice(), 1));
    }
}
