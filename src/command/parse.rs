//! Argument parsing with Redis's rules, so that what RedisBloom rejects is rejected here.

/// Redis's `string2ll`: an optional `-`, then digits with no leading zero (but `0`
/// itself); no `+`, no spaces, nothing after; must fit in `i64`.
pub fn parse_i64(arg: &[u8]) -> Option<i64> {
    let (negative, digits) = match arg.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, arg),
    };
    match digits {
        [b'0'] if !negative => return Some(0),
        [b'1'..=b'9', ..] => {}
        _ => return None,
    }
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let text = std::str::from_utf8(arg).ok()?;
    text.parse().ok()
}

/// Redis's `string2d`: a whole decimal floating-point number, not NaN.
pub fn parse_f64(arg: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(arg).ok()?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    text.parse::<f64>().ok().filter(|v| !v.is_nan())
}

/// Case-insensitive position of a keyword among `args`.
pub fn arg_index(keyword: &str, args: &[Vec<u8>]) -> Option<usize> {
    args.iter()
        .position(|a| a.eq_ignore_ascii_case(keyword.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_follow_redis() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        for bad in [
            &b""[..],
            b"-",
            b"01",
            b"+1",
            b" 1",
            b"1 ",
            b"1.0",
            b"-0",
            b"x",
            b"9223372036854775808",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn floats_follow_redis() {
        assert_eq!(parse_f64(b"0.001"), Some(0.001));
        assert_eq!(parse_f64(b"1e-3"), Some(0.001));
        assert_eq!(parse_f64(b"nan"), None);
        assert_eq!(parse_f64(b" 1"), None);
        assert_eq!(parse_f64(b""), None);
    }
}
