//! Go's `strconv` as cel-go's string conversions use it: `ParseInt(s, 10, 64)`,
//! `ParseUint(s, 10, 64)`, `ParseFloat(s, 64)`, `ParseBool`, `Atoi`, and the number formats
//! of `fmt` and `strconv.FormatFloat`.
//!
//! The grammar is Go's, not Rust's: `+5` is an int but not a uint, `1_000` and `0x1p3` are
//! doubles, `1e309` is a range error rather than infinity, and `inf`/`infinity`/`nan` are
//! matched without regard to case.

/// `strconv.ParseInt(s, 10, 64)`: an optional sign and decimal digits, within int64.
pub fn parse_int(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'+' => (false, &s[1..]),
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = parse_decimal_u64(digits)?;
    if neg {
        if magnitude <= i64::MAX as u64 + 1 {
            Some((magnitude as i64).wrapping_neg())
        } else {
            None
        }
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// `strconv.ParseUint(s, 10, 64)`: decimal digits only (no sign), within uint64.
pub fn parse_uint(s: &str) -> Option<u64> {
    parse_decimal_u64(s)
}

/// `strconv.Atoi`: the same grammar as `ParseInt(s, 10, 0)` on a 64-bit platform.
pub fn atoi(s: &str) -> Option<i64> {
    parse_int(s)
}

fn parse_decimal_u64(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for b in s.bytes() {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(n)
}

/// `strconv.ParseBool`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// `strconv.ParseFloat(s, 64)`: `None` for a syntax error and for a value out of range
/// (cel-go turns both into a conversion error).
pub fn parse_float(s: &str) -> Option<f64> {
    if let Some((f, n)) = special(s) {
        return (n == s.len()).then_some(f);
    }
    let r = read_float(s)?;
    if r.end != s.len() {
        return None;
    }
    let f = if r.hex {
        hex_float(&r)?
    } else {
        // The digits (without underscores) and the exponent, for Rust's correctly rounded
        // decimal parser: it agrees with Go on every finite decimal input.
        let cleaned: String = s.chars().filter(|&c| c != '_').collect();
        cleaned.parse::<f64>().ok()?
    };
    f.is_finite().then_some(f)
}

/// Go's `special`: `[+-]inf`, `[+-]infinity` and `nan`, ignoring case; returns the value and
/// the number of bytes it spans.
fn special(s: &str) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let (sign, rest, nsign) = match b.first()? {
        b'+' => (1.0, &s[1..], 1),
        b'-' => (-1.0, &s[1..], 1),
        _ => (1.0, s, 0),
    };
    let first = rest.as_bytes().first().map(u8::to_ascii_lowercase);
    if first == Some(b'i') {
        let mut n = common_prefix_ignore_case(rest, "infinity");
        if 3 < n && n < 8 {
            n = 3;
        }
        if n == 3 || n == 8 {
            return Some((sign * f64::INFINITY, nsign + n));
        }
    } else if nsign == 0 && first == Some(b'n') && common_prefix_ignore_case(rest, "nan") == 3 {
        return Some((f64::NAN, 3));
    }
    None
}

fn common_prefix_ignore_case(s: &str, prefix: &str) -> usize {
    s.bytes()
        .zip(prefix.bytes())
        .take_while(|(a, b)| a.to_ascii_lowercase() == *b)
        .count()
}

struct ReadFloat {
    neg: bool,
    hex: bool,
    /// Hex mantissa digits (without leading zeros) and the binary exponent of the last one.
    hex_digits: Vec<u8>,
    dp: i64,
    end: usize,
}

/// Go's `readFloat`: the syntax of a decimal or hexadecimal float literal, with underscores
/// allowed where Go allows them.
fn read_float(s: &str) -> Option<ReadFloat> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut neg = false;
    match b.first()? {
        b'+' => i += 1,
        b'-' => {
            neg = true;
            i += 1
        }
        _ => {}
    }
    let mut hex = false;
    let mut exp_char = b'e';
    if i + 2 < b.len() && b[i] == b'0' && b[i + 1].eq_ignore_ascii_case(&b'x') {
        hex = true;
        exp_char = b'p';
        i += 2;
    }
    let mut underscores = false;
    let mut saw_dot = false;
    let mut saw_digits = false;
    let mut nd: i64 = 0;
    let mut dp: i64 = 0;
    let mut all_hex = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c == b'_' {
            underscores = true;
        } else if c == b'.' {
            if saw_dot {
                break;
            }
            saw_dot = true;
            dp = nd;
        } else if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw_digits = true;
            nd += 1;
            if hex {
                all_hex.push((c as char).to_digit(16).unwrap_or(0) as u8);
            }
        } else {
            break;
        }
        i += 1;
    }
    if !saw_digits {
        return None;
    }
    if !saw_dot {
        dp = nd;
    }
    // 0.<digits> x 16^dp: leading zeros only move the point.
    let leading_zeros = all_hex.iter().take_while(|&&d| d == 0).count();
    let hex_digits = all_hex.split_off(leading_zeros);
    if hex {
        dp -= leading_zeros as i64;
    }
    let mut exp: i64 = 0;
    if i < b.len() && b[i].to_ascii_lowercase() == exp_char {
        i += 1;
        if i >= b.len() {
            return None;
        }
        let mut esign = 1;
        if b[i] == b'+' {
            i += 1;
        } else if b[i] == b'-' {
            i += 1;
            esign = -1;
        }
        if i >= b.len() || !b[i].is_ascii_digit() {
            return None;
        }
        let mut e: i64 = 0;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            if b[i] == b'_' {
                underscores = true;
            } else if e < 10000 {
                e = e * 10 + (b[i] - b'0') as i64;
            }
            i += 1;
        }
        exp = e * esign;
    } else if hex {
        // A hexadecimal float must have an exponent.
        return None;
    }
    if underscores && !underscore_ok(&s[..i]) {
        return None;
    }
    Some(ReadFloat {
        neg,
        hex,
        hex_digits,
        // for hex: the binary exponent of the value 0.<digits> is 4*dp + exp
        dp: if hex { 4 * dp + exp } else { dp + exp },
        end: i,
    })
}

/// Go's `underscoreOK`: underscores only between digits, or between a base prefix and a digit.
fn underscore_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let b = if !b.is_empty() && (b[0] == b'-' || b[0] == b'+') {
        &b[1..]
    } else {
        b
    };
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(b[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = b[1].eq_ignore_ascii_case(&b'x');
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// The value `0.<hex digits> * 2^dp`, rounded to the nearest double (ties to even); `None`
/// when it overflows.
fn hex_float(r: &ReadFloat) -> Option<f64> {
    let sign = if r.neg { -1.0 } else { 1.0 };
    if r.hex_digits.is_empty() {
        return Some(sign * 0.0);
    }
    // Keep 30 hex digits (120 bits) and a sticky bit for the rest.
    let mut mant: u128 = 0;
    let mut kept: i64 = 0;
    let mut sticky = false;
    for &d in &r.hex_digits {
        if kept < 30 {
            mant = (mant << 4) | d as u128;
            kept += 1;
        } else if d != 0 {
            sticky = true;
        }
    }
    // value = mant * 2^exp2 (plus the sticky remainder)
    let mut exp2 = r.dp - 4 * kept;
    let width = 128 - mant.leading_zeros() as i64;
    let lead = exp2 + width - 1;
    if lead > 1023 {
        return None;
    }
    // Significant bits available: 53 for normal numbers, fewer for subnormals.
    let keep = if lead >= -1022 {
        53
    } else {
        53 - (-1022 - lead)
    };
    if keep <= 0 {
        // Below the smallest subnormal: zero, or the smallest subnormal when above half of it.
        let above_half = keep == 0 && (!mant.is_power_of_two() || sticky);
        return Some(sign * if above_half { f64::from_bits(1) } else { 0.0 });
    }
    let drop = width - keep;
    let mut m: u128 = if drop > 0 {
        let dropped = mant & ((1u128 << drop) - 1);
        let half = 1u128 << (drop - 1);
        let mut m = mant >> drop;
        if dropped > half || (dropped == half && (sticky || m & 1 == 1)) {
            m += 1;
        }
        m
    } else {
        mant << (-drop)
    };
    exp2 += drop;
    if m >> 53 != 0 {
        m >>= 1;
        exp2 += 1;
    }
    let w = 128 - m.leading_zeros() as i64;
    let e_lead = exp2 + w - 1;
    if e_lead > 1023 {
        return None;
    }
    let bits: u64 = if e_lead >= -1022 && w == 53 {
        (((e_lead + 1023) as u64) << 52) | (m as u64 & ((1u64 << 52) - 1))
    } else {
        // subnormal: the significand sits at 2^-1074
        m as u64
    };
    Some(sign * f64::from_bits(bits))
}

/// How Go writes NaN and the infinities.
fn non_finite(f: f64) -> Option<String> {
    if f.is_nan() {
        Some("NaN".into())
    } else if f.is_infinite() {
        Some(if f > 0.0 { "+Inf" } else { "-Inf" }.into())
    } else {
        None
    }
}

/// `mant` and `exp` of Rust's `{:e}` as Go writes an exponent: sign and at least two digits.
fn go_exponent(rust_e: &str) -> String {
    let (mant, exp) = rust_e.split_once('e').unwrap_or((rust_e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mant}e{sign}{:02}", exp.abs())
}

/// Go's `strconv.FormatFloat(f, 'f', -1, 64)`: the shortest decimal that reads back as `f`,
/// without an exponent.
pub fn format_float_f(f: f64) -> String {
    non_finite(f).unwrap_or_else(|| format!("{f}"))
}

/// `fmt.Sprintf("%.{prec}f", f)`.
pub fn format_fixed(f: f64, prec: usize) -> String {
    non_finite(f).unwrap_or_else(|| format!("{f:.prec$}"))
}

/// `fmt.Sprintf("%1.{prec}e", f)`: `d.ddddde±XX` with at least two exponent digits.
pub fn format_scientific(f: f64, prec: usize) -> String {
    non_finite(f).unwrap_or_else(|| go_exponent(&format!("{f:.prec$e}")))
}

/// Go's `fmt` `%g` of a float64 (what cel-go's `string(double)` is): the shortest
/// representation, in exponent form when the exponent is below -4 or at least 6.
pub fn format_g(d: f64) -> String {
    if let Some(s) = non_finite(d) {
        return s;
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{d:e}");
    let exp: i32 = e.split_once('e').map_or(0, |(_, x)| x.parse().unwrap_or(0));
    if (-4..6).contains(&exp) {
        format!("{d}")
    } else {
        go_exponent(&e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_follow_go() {
        assert_eq!(parse_int("+5"), Some(5));
        assert_eq!(parse_int("-0"), Some(0));
        assert_eq!(parse_int("007"), Some(7));
        assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int("9223372036854775808"), None);
        assert_eq!(parse_int("1_000"), None);
        assert_eq!(parse_int(" 5"), None);
        assert_eq!(parse_int("0x10"), None);
        assert_eq!(parse_int(""), None);
        assert_eq!(parse_int("+"), None);
        assert_eq!(parse_uint("+5"), None);
        assert_eq!(parse_uint("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_uint("18446744073709551616"), None);
        assert_eq!(parse_uint("-0"), None);
    }

    #[test]
    fn floats_follow_go() {
        assert_eq!(parse_float("1_000"), Some(1000.0));
        assert_eq!(parse_float("1__000"), None);
        assert_eq!(parse_float("_1000"), None);
        assert_eq!(parse_float("1000_"), None);
        assert_eq!(parse_float("0x1p3"), Some(8.0));
        assert_eq!(parse_float("0x_1p3"), Some(8.0));
        assert_eq!(parse_float("0x.8p1"), Some(1.0));
        assert_eq!(parse_float("0X1P-2"), Some(0.25));
        assert_eq!(parse_float("0x1"), None);
        assert_eq!(parse_float("0x1p1024"), None);
        assert_eq!(parse_float("0x1.fffffffffffffp1023"), Some(f64::MAX));
        assert_eq!(parse_float("0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(parse_float("0x1p-1075"), Some(0.0));
        assert_eq!(parse_float("0x1.8p-1075"), Some(f64::from_bits(1)));
        assert_eq!(
            parse_float("0x10000000000000001p0"),
            Some(18446744073709551616.0)
        );
        assert_eq!(parse_float("1e309"), None);
        assert_eq!(parse_float("-1e309"), None);
        assert_eq!(parse_float("1e-400"), Some(0.0));
        assert_eq!(parse_float("5."), Some(5.0));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("."), None);
        assert_eq!(parse_float("1e"), None);
        assert_eq!(parse_float("+1.5E+2"), Some(150.0));
        assert_eq!(parse_float("Inf"), Some(f64::INFINITY));
        assert_eq!(parse_float("-infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_float("+INF"), Some(f64::INFINITY));
        assert_eq!(parse_float("infin"), None);
        assert!(parse_float("NaN").unwrap().is_nan());
        assert!(parse_float("nan").unwrap().is_nan());
        assert_eq!(parse_float("+nan"), None);
        assert_eq!(parse_float("-nan"), None);
        assert_eq!(parse_float(" 1"), None);
        assert_eq!(parse_float("1e1_0"), Some(1e10));
    }

    #[test]
    fn formats_follow_go() {
        assert_eq!(format_g(1e21), "1e+21");
        assert_eq!(format_g(1e6), "1e+06");
        assert_eq!(format_g(123456.0), "123456");
        assert_eq!(format_g(0.0001), "0.0001");
        assert_eq!(format_g(0.00001), "1e-05");
        assert_eq!(format_g(-0.0), "-0");
        assert_eq!(format_float_f(1e21), "1000000000000000000000");
        assert_eq!(format_float_f(-0.0), "-0");
        assert_eq!(format_scientific(2.5, 6), "2.500000e+00");
        assert_eq!(format_scientific(1e-300, 2), "1.00e-300");
        assert_eq!(format_fixed(3.25, 6), "3.250000");
    }
}
