//! The one shape of every kind's full merge: decode the stored page (or start one),
//! apply the operands in order, skip and count those that do not decode or fit, encode.

use crate::Merged;

/// What a full merge needs of one kind of page; [`fold`] does the rest.
pub(crate) trait PageKind {
    type Page;

    /// Decodes a stored page.
    fn decode(bytes: &[u8]) -> crate::Result<Self::Page>;

    /// The page to start from when none is stored, made from the operands (say, sized
    /// by the first that decodes); `None` when no page can be made, and every operand
    /// is then skipped.
    fn start(operands: &[&[u8]]) -> Option<Self::Page>;

    /// Applies one operand; false when it does not decode or does not fit the page.
    fn apply(page: &mut Self::Page, operand: &[u8]) -> bool;

    /// Applies all operands at once where that is faster, or declines (false) and
    /// leaves the page unchanged, and they are then applied one by one.
    fn apply_all(_page: &mut Self::Page, _operands: &[&[u8]]) -> bool {
        false
    }

    /// Encodes the merged page.
    fn encode(page: Self::Page) -> Vec<u8>;
}

/// The full merge of kind `K`; see [`crate::full_merge`] for the contract. A stored
/// page that does not decode is returned unchanged, with every operand skipped.
pub(crate) fn fold<K: PageKind>(existing: Option<&[u8]>, operands: &[&[u8]]) -> Merged {
    let page = match existing {
        Some(bytes) => match K::decode(bytes) {
            Ok(page) => Some(page),
            Err(_) => return Merged::unchanged(bytes, operands.len()),
        },
        None => K::start(operands),
    };
    // No page and none to be made: an empty value reads back as a truncated page, so
    // the reader reports the loss.
    let Some(mut page) = page else {
        return Merged {
            value: Vec::new(),
            skipped: operands.len(),
        };
    };
    let skipped = match K::apply_all(&mut page, operands) {
        true => 0,
        false => operands
            .iter()
            .filter(|op| !K::apply(&mut page, op))
            .count(),
    };
    Merged {
        value: K::encode(page),
        skipped,
    }
}
