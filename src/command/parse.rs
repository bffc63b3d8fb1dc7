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

/// Redis's `string2d` (glibc `strtod` over the whole argument): decimal or hexadecimal
/// (`0x1p-1`) floating point, `inf`/`infinity` in any case with a sign; not NaN, no
/// leading space, nothing after the number, no overflow to infinity and no underflow
/// to zero (subnormals are fine).
pub fn parse_f64(arg: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(arg).ok()?;
    if text.is_empty() || text.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let unsigned = text.trim_start_matches(['+', '-']);
    if text.len() - unsigned.len() > 1 {
        return None;
    }
    let negative = text.starts_with('-');
    let value = match unsigned.get(..2) {
        Some("0x" | "0X") => parse_hex(&unsigned[2..]).map(|v| if negative { -v } else { v })?,
        _ => text.parse::<f64>().ok()?,
    };
    let spelled_infinite =
        unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity");
    let nonzero_digits = unsigned
        .chars()
        .take_while(|c| !matches!(c, 'e' | 'E' | 'p' | 'P'))
        .any(|c| c.is_ascii_hexdigit() && c != '0' && !matches!(c, 'x' | 'X'));
    match value {
        v if v.is_nan() => None,
        v if v.is_infinite() && !spelled_infinite => None,
        v if v == 0.0 && nonzero_digits => None,
        v => Some(v),
    }
}

/// The digits of a hexadecimal float after `0x`: `h[.h][p[+-]d]`, at least one digit.
fn parse_hex(text: &str) -> Option<f64> {
    let (mantissa, exponent) = match text.find(['p', 'P']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let mut bits: u64 = 0;
    let mut scale: i64 = 0;
    let mut sticky = false;
    let mut digits = 0;
    let mut seen_point = false;
    for c in mantissa.chars() {
        if c == '.' && !seen_point {
            seen_point = true;
            continue;
        }
        let d = u64::from(c.to_digit(16)?);
        digits += 1;
        if bits >> 60 == 0 {
            bits = bits << 4 | d;
            if seen_point {
                scale -= 4;
            }
        } else {
            sticky |= d != 0;
            if !seen_point {
                scale += 4;
            }
        }
    }
    if digits == 0 {
        return None;
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let body = e.strip_prefix(['+', '-']).unwrap_or(e);
            if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            e.parse::<i64>().unwrap_or(if e.starts_with('-') {
                -100_000
            } else {
                100_000
            })
        }
    };
    // A sticky low bit keeps rounding to 53 bits correct when digits were cut.
    let bits = bits | u64::from(sticky);
    let exp = (scale + exponent).clamp(-100_000, 100_000) as i32;
    // Scale in two steps so neither factor over- or underflows on its own.
    let half = exp / 2;
    Some(bits as f64 * 2f64.powi(half) * 2f64.powi(exp - half))
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
        let accepted: &[(&[u8], f64)] = &[
            (b"0x10", 16.0),
            (b"0x1p-1", 0.5),
            (b"-0x1.8p1", -3.0),
            (b"inf", f64::INFINITY),
            (b"-Infinity", f64::NEG_INFINITY),
            (b"+3", 3.0),
            (b".5", 0.5),
            (b"00012", 12.0),
            (b"1E1", 10.0),
            (b"4.9e-324", 4.9e-324),
        ];
        for (text, want) in accepted {
            assert_eq!(
                parse_f64(text),
                Some(*want),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        for bad in [
            &b"1e400"[..],
            b"-1e400",
            b"1e-400",
            b"0x",
            b"0x1p",
            b"--1",
            b"1,5",
            b"-nan",
            b"1 ",
            b"infinit",
        ] {
            assert_eq!(parse_f64(bad), None, "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse_f64(b"0e5"), Some(0.0));
        assert_eq!(parse_f64(b"-0"), Some(-0.0));
    }
}
