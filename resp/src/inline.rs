//! Splitting an inline command into arguments as Redis does (`sdssplitargs`): words
//! separated by white space; `"..."` with the escapes `\n \r \t \b \a \\ \"` and `\xHH`;
//! `'...'` with `\'`. A closing quote must be followed by white space or the end of the
//! line, and a quote left open is an error.

/// The arguments of an inline line, or `None` for unbalanced quotes.
pub(crate) fn split(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut args = Vec::new();
    let mut at = 0;
    loop {
        while line.get(at).is_some_and(|b| is_space(*b)) {
            at += 1;
        }
        let Some(&first) = line.get(at) else {
            return Some(args);
        };
        let (arg, next) = match first {
            b'"' => double_quoted(line, at + 1)?,
            b'\'' => single_quoted(line, at + 1)?,
            _ => {
                let end = line[at..]
                    .iter()
                    .position(|b| is_space(*b))
                    .map_or(line.len(), |n| at + n);
                (line[at..end].to_vec(), end)
            }
        };
        args.push(arg);
        at = next;
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// After a closing quote at `at - 1`: the end of the line or white space must follow.
fn closed(line: &[u8], at: usize) -> Option<usize> {
    match line.get(at) {
        None => Some(at),
        Some(b) if is_space(*b) => Some(at),
        Some(_) => None,
    }
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

fn double_quoted(line: &[u8], mut at: usize) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    loop {
        match *line.get(at)? {
            b'"' => return Some((out, closed(line, at + 1)?)),
            b'\\' => {
                let escaped = *line.get(at + 1)?;
                let hex_pair = (escaped == b'x')
                    .then(|| Some(hex(*line.get(at + 2)?)? * 16 + hex(*line.get(at + 3)?)?))
                    .flatten();
                if let Some(byte) = hex_pair {
                    out.push(byte);
                    at += 4;
                    continue;
                }
                out.push(match escaped {
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'a' => 0x07,
                    other => other,
                });
                at += 2;
            }
            other => {
                out.push(other);
                at += 1;
            }
        }
    }
}

fn single_quoted(line: &[u8], mut at: usize) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    loop {
        match *line.get(at)? {
            b'\'' => return Some((out, closed(line, at + 1)?)),
            b'\\' if line.get(at + 1) == Some(&b'\'') => {
                out.push(b'\'');
                at += 2;
            }
            other => {
                out.push(other);
                at += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    fn words(line: &str) -> Option<Vec<String>> {
        split(line.as_bytes()).map(|args| {
            args.into_iter()
                .map(|a| String::from_utf8_lossy(&a).into_owned())
                .collect()
        })
    }

    #[test]
    fn splits_as_redis_does() {
        assert_eq!(words("ECHO \"a b\"").unwrap(), ["ECHO", "a b"]);
        assert_eq!(words("  set  k\tv ").unwrap(), ["set", "k", "v"]);
        assert_eq!(words("x \"a\\nb\\x41\\\"\"").unwrap(), ["x", "a\nbA\""]);
        assert_eq!(words("x 'it\\'s' \"\"").unwrap(), ["x", "it's", ""]);
        assert_eq!(words("x \"\\xZZ\"").unwrap(), ["x", "xZZ"]);
        assert_eq!(words("").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn unbalanced_quotes_are_refused() {
        for bad in ["ECHO \"a", "ECHO 'a", "ECHO \"a\"b", "ECHO 'a'b", "x \"\\"] {
            assert_eq!(words(bad), None, "{bad}");
        }
    }
}
