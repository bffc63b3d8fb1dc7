//! `CMS.INCRBY`'s answers: a combined call's answers split back per request.

use crate::error::{Error, Result};

/// Each combined request's answer from the combined call's `outcome` (see
/// `Cms::incr_by_with_estimates_alone`). When nothing was written, only the first
/// request is answered (the error), and the combiner runs the others again alone; once
/// the increments were written, every request is answered, so none is applied twice.
pub(super) fn per_request(
    requests: &[Vec<(Vec<u8>, u64)>],
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
            vec![(b"a".to_vec(), 1)],
            vec![(b"b".to_vec(), 2), (b"c".to_vec(), 3)],
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
}
