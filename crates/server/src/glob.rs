//! Redis's glob patterns for `KEYS` and `SCAN MATCH`: `*`, `?`, `[abc]`, `[^a]`,
//! `[a-z]` and `\` to escape. Iterative, so no pattern can exhaust the stack.

/// Whether `text` matches `pattern` as Redis's `stringmatchlen` decides it.
pub fn matches(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // Where to resume after the last `*`: the pattern after it and the text it has eaten.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if pattern.get(p) == Some(&b'*') {
            while pattern.get(p) == Some(&b'*') {
                p += 1;
            }
            if p == pattern.len() {
                return true;
            }
            star = Some((p, t));
            continue;
        }
        if let Some((width, true)) = match_one(&pattern[p.min(pattern.len())..], text[t]) {
            p += width;
            t += 1;
            continue;
        }
        match star {
            Some((after_star, eaten)) => {
                p = after_star;
                t = eaten + 1;
                star = Some((after_star, eaten + 1));
            }
            None => return false,
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|b| *b == b'*')
}

/// Matches one character against the pattern's first element (not `*`): how many
/// pattern bytes the element takes and whether `c` matches it; `None` at its end.
fn match_one(pattern: &[u8], c: u8) -> Option<(usize, bool)> {
    match *pattern.first()? {
        b'?' => Some((1, true)),
        b'\\' => match pattern.get(1) {
            Some(escaped) => Some((2, *escaped == c)),
            None => Some((1, c == b'\\')),
        },
        b'[' => Some(match_class(pattern, c)),
        literal => Some((1, literal == c)),
    }
}

/// A `[...]` class at the start of `pattern`; an unclosed class runs to the end.
fn match_class(pattern: &[u8], c: u8) -> (usize, bool) {
    let mut i = 1;
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    let mut hit = false;
    while let Some(&b) = pattern.get(i) {
        match b {
            b']' => return (i + 1, hit != negate),
            b'\\' if i + 1 < pattern.len() => {
                hit |= pattern[i + 1] == c;
                i += 2;
            }
            _ if pattern.get(i + 1) == Some(&b'-') && i + 2 < pattern.len() => {
                let (mut lo, mut hi) = (b, pattern[i + 2]);
                if lo > hi {
                    std::mem::swap(&mut lo, &mut hi);
                }
                hit |= (lo..=hi).contains(&c);
                i += 3;
            }
            _ => {
                hit |= b == c;
                i += 1;
            }
        }
    }
    (i, hit != negate)
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn redis_patterns() {
        let cases: &[(&str, &str, bool)] = &[
            ("*", "", true),
            ("*", "anything", true),
            ("h?llo", "hello", true),
            ("h?llo", "hllo", false),
            ("h*llo", "heeeello", true),
            ("h*llo", "hllo", true),
            ("h[ae]llo", "hallo", true),
            ("h[ae]llo", "hillo", false),
            ("h[^e]llo", "hallo", true),
            ("h[^e]llo", "hello", false),
            ("h[a-b]llo", "hbllo", true),
            ("h[b-a]llo", "hallo", true),
            ("h[a-b]llo", "hcllo", false),
            ("h\\*llo", "h*llo", true),
            ("h\\*llo", "hello", false),
            ("user:*:bf", "user:42:bf", true),
            ("user:*:bf", "user:42:cms", false),
            ("*a*b*c", "xaxxbxxxc", true),
            ("*a*b*c", "xaxxbxxx", false),
            ("a*", "b", false),
            ("", "", true),
            ("", "a", false),
            ("abc", "ab", false),
            ("[abc", "c", true),
        ];
        for (pattern, text, expected) in cases {
            assert_eq!(
                matches(pattern.as_bytes(), text.as_bytes()),
                *expected,
                "{pattern} vs {text}"
            );
        }
    }

    quickcheck::quickcheck! {
        /// Any pattern against any text answers, without panicking; a text always
        /// matches itself when it holds no special characters.
        fn never_panics(pattern: Vec<u8>, text: Vec<u8>) -> bool {
            let _ = matches(&pattern, &text);
            let plain: Vec<u8> = text
                .into_iter()
                .filter(|b| !b"*?[]\\".contains(b))
                .collect();
            matches(&plain, &plain)
        }
    }
}
