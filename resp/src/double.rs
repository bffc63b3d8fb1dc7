//! Doubles as Redis writes them (`d2string`, in both protocols): `nan`, `inf`, `-inf`,
//! `0`/`-0`, integral values within `±LLONG_MAX/2` as integers, and everything else as
//! the digits of Grisu2 (Redis' `fpconv_dtoa`: round-trip exact, at most 17 digits,
//! not always the shortest), laid out as `fpconv`'s `emit_digits` does. Clients compare
//! these strings, so the digits must be Grisu2's, not another shortest-digits
//! algorithm's.

/// Cached powers of ten for Grisu: `10^k ≈ frac · 2^exp` for k = -348, -340, ..., 340,
/// `frac` the 64-bit significand rounded to nearest (computed with exact rationals).
const POWERS: [(u64, i32); 87] = [
    (0xfa8fd5a0081c0288, -1220), // 1e-348
    (0xbaaee17fa23ebf76, -1193), // 1e-340
    (0x8b16fb203055ac76, -1166), // 1e-332
    (0xcf42894a5dce35ea, -1140), // 1e-324
    (0x9a6bb0aa55653b2d, -1113), // 1e-316
    (0xe61acf033d1a45df, -1087), // 1e-308
    (0xab70fe17c79ac6ca, -1060), // 1e-300
    (0xff77b1fcbebcdc4f, -1034), // 1e-292
    (0xbe5691ef416bd60c, -1007), // 1e-284
    (0x8dd01fad907ffc3c, -980),  // 1e-276
    (0xd3515c2831559a83, -954),  // 1e-268
    (0x9d71ac8fada6c9b5, -927),  // 1e-260
    (0xea9c227723ee8bcb, -901),  // 1e-252
    (0xaecc49914078536d, -874),  // 1e-244
    (0x823c12795db6ce57, -847),  // 1e-236
    (0xc21094364dfb5637, -821),  // 1e-228
    (0x9096ea6f3848984f, -794),  // 1e-220
    (0xd77485cb25823ac7, -768),  // 1e-212
    (0xa086cfcd97bf97f4, -741),  // 1e-204
    (0xef340a98172aace5, -715),  // 1e-196
    (0xb23867fb2a35b28e, -688),  // 1e-188
    (0x84c8d4dfd2c63f3b, -661),  // 1e-180
    (0xc5dd44271ad3cdba, -635),  // 1e-172
    (0x936b9fcebb25c996, -608),  // 1e-164
    (0xdbac6c247d62a584, -582),  // 1e-156
    (0xa3ab66580d5fdaf6, -555),  // 1e-148
    (0xf3e2f893dec3f126, -529),  // 1e-140
    (0xb5b5ada8aaff80b8, -502),  // 1e-132
    (0x87625f056c7c4a8b, -475),  // 1e-124
    (0xc9bcff6034c13053, -449),  // 1e-116
    (0x964e858c91ba2655, -422),  // 1e-108
    (0xdff9772470297ebd, -396),  // 1e-100
    (0xa6dfbd9fb8e5b88f, -369),  // 1e-92
    (0xf8a95fcf88747d94, -343),  // 1e-84
    (0xb94470938fa89bcf, -316),  // 1e-76
    (0x8a08f0f8bf0f156b, -289),  // 1e-68
    (0xcdb02555653131b6, -263),  // 1e-60
    (0x993fe2c6d07b7fac, -236),  // 1e-52
    (0xe45c10c42a2b3b06, -210),  // 1e-44
    (0xaa242499697392d3, -183),  // 1e-36
    (0xfd87b5f28300ca0e, -157),  // 1e-28
    (0xbce5086492111aeb, -130),  // 1e-20
    (0x8cbccc096f5088cc, -103),  // 1e-12
    (0xd1b71758e219652c, -77),   // 1e-4
    (0x9c40000000000000, -50),   // 1e4
    (0xe8d4a51000000000, -24),   // 1e12
    (0xad78ebc5ac620000, 3),     // 1e20
    (0x813f3978f8940984, 30),    // 1e28
    (0xc097ce7bc90715b3, 56),    // 1e36
    (0x8f7e32ce7bea5c70, 83),    // 1e44
    (0xd5d238a4abe98068, 109),   // 1e52
    (0x9f4f2726179a2245, 136),   // 1e60
    (0xed63a231d4c4fb27, 162),   // 1e68
    (0xb0de65388cc8ada8, 189),   // 1e76
    (0x83c7088e1aab65db, 216),   // 1e84
    (0xc45d1df942711d9a, 242),   // 1e92
    (0x924d692ca61be758, 269),   // 1e100
    (0xda01ee641a708dea, 295),   // 1e108
    (0xa26da3999aef774a, 322),   // 1e116
    (0xf209787bb47d6b85, 348),   // 1e124
    (0xb454e4a179dd1877, 375),   // 1e132
    (0x865b86925b9bc5c2, 402),   // 1e140
    (0xc83553c5c8965d3d, 428),   // 1e148
    (0x952ab45cfa97a0b3, 455),   // 1e156
    (0xde469fbd99a05fe3, 481),   // 1e164
    (0xa59bc234db398c25, 508),   // 1e172
    (0xf6c69a72a3989f5c, 534),   // 1e180
    (0xb7dcbf5354e9bece, 561),   // 1e188
    (0x88fcf317f22241e2, 588),   // 1e196
    (0xcc20ce9bd35c78a5, 614),   // 1e204
    (0x98165af37b2153df, 641),   // 1e212
    (0xe2a0b5dc971f303a, 667),   // 1e220
    (0xa8d9d1535ce3b396, 694),   // 1e228
    (0xfb9b7cd9a4a7443c, 720),   // 1e236
    (0xbb764c4ca7a44410, 747),   // 1e244
    (0x8bab8eefb6409c1a, 774),   // 1e252
    (0xd01fef10a657842c, 800),   // 1e260
    (0x9b10a4e5e9913129, 827),   // 1e268
    (0xe7109bfba19c0c9d, 853),   // 1e276
    (0xac2820d9623bf429, 880),   // 1e284
    (0x80444b5e7aa7cf85, 907),   // 1e292
    (0xbf21e44003acdd2d, 933),   // 1e300
    (0x8e679c2f5e44ff8f, 960),   // 1e308
    (0xd433179d9c8cb841, 986),   // 1e316
    (0x9e19db92b4e31ba9, 1013),  // 1e324
    (0xeb96bf6ebadf77d9, 1039),  // 1e332
    (0xaf87023b9bf0ee6b, 1066),  // 1e340
];
const FIRST_POWER: i32 = -348;
const STEP_POWERS: i32 = 8;
const EXP_MIN: i32 = -60;
const EXP_MAX: i32 = -32;
const FRAC_MASK: u64 = 0x000F_FFFF_FFFF_FFFF;
const EXP_MASK: u64 = 0x7FF0_0000_0000_0000;
const HIDDEN_BIT: u64 = 0x0010_0000_0000_0000;
const EXP_BIAS: i32 = 1023 + 52;
const TENS: [u64; 20] = [
    10_000_000_000_000_000_000,
    1_000_000_000_000_000_000,
    100_000_000_000_000_000,
    10_000_000_000_000_000,
    1_000_000_000_000_000,
    100_000_000_000_000,
    10_000_000_000_000,
    1_000_000_000_000,
    100_000_000_000,
    10_000_000_000,
    1_000_000_000,
    100_000_000,
    10_000_000,
    1_000_000,
    100_000,
    10_000,
    1_000,
    100,
    10,
    1,
];

/// Redis' `d2string`.
pub fn format_double(value: f64) -> String {
    if value.is_nan() {
        return "nan".to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // LLONG_MAX / 2 as a double is 2^62.
    const HALF_RANGE: f64 = 4_611_686_018_427_387_904.0;
    if (-HALF_RANGE..=HALF_RANGE).contains(&value) && value.fract() == 0.0 {
        return (value as i64).to_string();
    }
    dtoa(value)
}

#[derive(Clone, Copy)]
struct Fp {
    frac: u64,
    exp: i32,
}

fn build_fp(d: f64) -> Fp {
    let bits = d.to_bits();
    let frac = bits & FRAC_MASK;
    let exp = ((bits & EXP_MASK) >> 52) as i32;
    if exp != 0 {
        Fp {
            frac: frac + HIDDEN_BIT,
            exp: exp - EXP_BIAS,
        }
    } else {
        Fp {
            frac,
            exp: -EXP_BIAS + 1,
        }
    }
}

fn normalize(mut fp: Fp) -> Fp {
    while fp.frac & HIDDEN_BIT == 0 {
        fp.frac <<= 1;
        fp.exp -= 1;
    }
    Fp {
        frac: fp.frac << 11,
        exp: fp.exp - 11,
    }
}

fn boundaries(fp: Fp) -> (Fp, Fp) {
    let mut upper = Fp {
        frac: (fp.frac << 1) + 1,
        exp: fp.exp - 1,
    };
    while upper.frac & (HIDDEN_BIT << 1) == 0 {
        upper.frac <<= 1;
        upper.exp -= 1;
    }
    upper.frac <<= 10;
    upper.exp -= 10;
    let l_shift = if fp.frac == HIDDEN_BIT { 2 } else { 1 };
    let lower_exp = fp.exp - l_shift;
    let lower = Fp {
        frac: ((fp.frac << l_shift) - 1) << (lower_exp - upper.exp),
        exp: upper.exp,
    };
    (lower, upper)
}

fn multiply(a: Fp, b: Fp) -> Fp {
    const LO: u64 = 0xFFFF_FFFF;
    let ah_bl = (a.frac >> 32) * (b.frac & LO);
    let al_bh = (a.frac & LO) * (b.frac >> 32);
    let al_bl = (a.frac & LO) * (b.frac & LO);
    let ah_bh = (a.frac >> 32) * (b.frac >> 32);
    let tmp = (ah_bl & LO) + (al_bh & LO) + (al_bl >> 32) + (1 << 31);
    Fp {
        frac: ah_bh + (ah_bl >> 32) + (al_bh >> 32) + (tmp >> 32),
        exp: a.exp + b.exp + 64,
    }
}

fn cached_power(exp: i32) -> (Fp, i32) {
    const ONE_LOG_TEN: f64 = 0.301_029_995_663_981_14;
    let approx = (f64::from(-(exp + 87)) * ONE_LOG_TEN) as i32;
    let mut idx = (approx - FIRST_POWER) / STEP_POWERS;
    loop {
        let (frac, pexp) = POWERS[idx.clamp(0, 86) as usize];
        let current = exp + pexp + 64;
        if current < EXP_MIN && idx < 86 {
            idx += 1;
        } else if current > EXP_MAX && idx > 0 {
            idx -= 1;
        } else {
            return (Fp { frac, exp: pexp }, FIRST_POWER + idx * STEP_POWERS);
        }
    }
}

fn round_digit(digits: &mut [u8], delta: u64, mut rem: u64, kappa: u64, frac: u64) {
    while rem < frac
        && delta.wrapping_sub(rem) >= kappa
        && (rem.wrapping_add(kappa) < frac
            || frac.wrapping_sub(rem) > rem.wrapping_add(kappa).wrapping_sub(frac))
    {
        if let Some(last) = digits.last_mut() {
            *last = last.wrapping_sub(1);
        }
        rem = rem.wrapping_add(kappa);
    }
}

/// Grisu2's digits of `d` (positive, finite, non-zero) and the power of ten of the last.
fn grisu2(d: f64) -> (Vec<u8>, i32) {
    let w = build_fp(d);
    let (lower, upper) = boundaries(w);
    let w = normalize(w);
    let (cp, k) = cached_power(upper.exp);
    let w = multiply(w, cp);
    let mut upper = multiply(upper, cp);
    let mut lower = multiply(lower, cp);
    lower.frac += 1;
    upper.frac -= 1;
    let mut big_k = -k;

    let wfrac = upper.frac.wrapping_sub(w.frac);
    let mut delta = upper.frac.wrapping_sub(lower.frac);
    let shift = (-upper.exp) as u32;
    let one = 1u64 << shift;
    let mut part1 = upper.frac >> shift;
    let mut part2 = upper.frac & (one - 1);
    let mut digits = Vec::with_capacity(18);
    let mut kappa = 10;
    for &div in &TENS[10..] {
        let digit = part1 / div;
        if digit != 0 || !digits.is_empty() {
            digits.push(b'0' + digit as u8);
        }
        part1 -= digit * div;
        kappa -= 1;
        let tmp = (part1 << shift) + part2;
        if tmp <= delta {
            big_k += kappa;
            round_digit(&mut digits, delta, tmp, div << shift, wfrac);
            return (digits, big_k);
        }
    }
    let mut unit = 18;
    loop {
        part2 = part2.wrapping_mul(10);
        delta = delta.wrapping_mul(10);
        kappa -= 1;
        let digit = part2 >> shift;
        if digit != 0 || !digits.is_empty() {
            digits.push(b'0' + digit as u8);
        }
        part2 &= one - 1;
        if part2 < delta || digits.len() >= 18 {
            big_k += kappa;
            round_digit(
                &mut digits,
                delta,
                part2,
                one,
                wfrac.wrapping_mul(TENS[unit]),
            );
            return (digits, big_k);
        }
        unit = unit.saturating_sub(1);
    }
}

/// `fpconv_dtoa` of a finite non-zero double.
fn dtoa(d: f64) -> String {
    let neg = d < 0.0;
    let (digits, k) = grisu2(d.abs());
    let mut out = String::with_capacity(24);
    if neg {
        out.push('-');
    }
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let n = digits.len() as i32;
    let exp = (k + n - 1).abs();
    if k >= 0 && exp < n + 7 {
        out.push_str(&text(&digits));
        out.extend(std::iter::repeat_n('0', k as usize));
        return out;
    }
    if k < 0 && (k > -7 || exp < 4) {
        let offset = n - k.abs();
        if offset <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-offset) as usize));
            out.push_str(&text(&digits));
        } else {
            let (int, fraction) = digits.split_at(offset as usize);
            out.push_str(&text(int));
            out.push('.');
            out.push_str(&text(fraction));
        }
        return out;
    }
    let shown = digits.len().min(if neg { 17 } else { 18 });
    let (first, rest) = digits.split_at(1.min(shown));
    out.push_str(&text(first));
    if shown > 1 {
        out.push('.');
        out.push_str(&text(&rest[..shown - 1]));
    }
    out.push('e');
    out.push(if k + shown as i32 - 1 < 0 { '-' } else { '+' });
    out.push_str(&exp.to_string());
    out
}

#[cfg(test)]
mod tests;
