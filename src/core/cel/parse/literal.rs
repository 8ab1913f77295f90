//! The values of literal tokens, decoded as the `cel` crate decodes them: `None` where it
//! reports an invalid literal.

/// A `STRING` or `BYTES` token (prefixes and quotes included) as bytes. Line breaks in the
/// source (`\r\n`, `\r`) are `\n`; a raw literal keeps its backslashes; in bytes, `\x` and
/// octal escapes are byte values and `\u`/`\U` are refused; in strings, every escape is a
/// code point.
pub(super) fn unquote(token: &str, is_bytes: bool) -> Option<Vec<u8>> {
    let mut text = token;
    if is_bytes {
        text = &text[1..];
    }
    let raw = matches!(text.as_bytes().first(), Some(b'r' | b'R'));
    if raw {
        text = &text[1..];
    }
    let quote = *text.as_bytes().first()?;
    let triple = text.len() >= 6 && text.as_bytes()[1] == quote && text.as_bytes()[2] == quote;
    let body = if triple {
        &text[3..text.len() - 3]
    } else {
        &text[1..text.len() - 1]
    };
    let mut out = Vec::with_capacity(body.len());
    let b = body.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\r' => {
                out.push(b'\n');
                i += if b.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                continue;
            }
            b'\\' if !raw => {}
            _ => {
                out.push(c);
                i += 1;
                continue;
            }
        }
        let esc = *b.get(i + 1)?;
        i += 2;
        let simple = match esc {
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'\\' | b'\'' | b'"' | b'`' | b'?' => Some(esc),
            _ => None,
        };
        if let Some(v) = simple {
            out.push(v);
            continue;
        }
        let (width, radix) = match esc {
            b'x' | b'X' => (2, 16),
            b'u' if !is_bytes => (4, 16),
            b'U' if !is_bytes => (8, 16),
            b'0'..=b'3' => {
                i -= 1;
                (3, 8)
            }
            _ => return None,
        };
        let digits = body.get(i..i + width)?;
        let value = u32::from_str_radix(digits, radix).ok()?;
        i += width;
        let is_byte_value = is_bytes && matches!(esc, b'x' | b'X' | b'0'..=b'3');
        if is_byte_value {
            out.push(value as u8);
        } else {
            let ch = char::from_u32(value)?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        }
    }
    Some(out)
}

/// A `NUM_INT` token, negated with `negative`.
pub(super) fn int(token: &str, negative: bool) -> Option<i64> {
    let (radix, digits) = match token.strip_prefix("0x") {
        Some(rest) => (16, rest),
        None => (10, token),
    };
    // The magnitude, then the sign: the most negative value is in range.
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// A `NUM_UINT` token.
pub(super) fn uint(token: &str) -> Option<u64> {
    let digits = &token[..token.len() - 1];
    match digits.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => digits.parse::<u64>().ok(),
    }
}

/// A `NUM_FLOAT` token, negated with `negative`: finite values only.
pub(super) fn double(token: &str, negative: bool) -> Option<f64> {
    // Parsing is correctly rounded, and rounding is symmetric: the negated magnitude is the
    // parse of the negative text.
    let d = token.parse::<f64>().ok()?;
    let d = if negative { -d } else { d };
    d.is_finite().then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(token: &str) -> Option<String> {
        unquote(token, false).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn strings_decode_every_escape() {
        assert_eq!(
            s(r"'\a\b\f\n\r\t\v\\\?\`\'\x41\X42\u00e9\U0001F600\101\377'").as_deref(),
            Some("\u{7}\u{8}\u{c}\n\r\t\u{b}\\?`'AB\u{e9}\u{1F600}A\u{ff}")
        );
        assert_eq!(s(r#""\"""#).as_deref(), Some("\""));
        assert_eq!(s("'''a\r\nb\rc'''").as_deref(), Some("a\nb\nc"));
        assert_eq!(s(r#""""a"b""""#).as_deref(), Some("a\"b"));
        assert_eq!(s(r"r'\n\x'").as_deref(), Some(r"\n\x"));
        assert_eq!(s("R'''\\\r\n'''").as_deref(), Some("\\\n"));
        assert_eq!(s("''").as_deref(), Some(""));
        assert_eq!(s("''''''").as_deref(), Some(""));
        assert_eq!(s("'é'").as_deref(), Some("é"));
        // Surrogates and values past U+10FFFF are not code points.
        assert_eq!(s(r"'\ud800'"), None);
        assert_eq!(s(r"'\U00110000'"), None);
    }

    #[test]
    fn bytes_take_byte_values_and_refuse_code_points() {
        assert_eq!(
            unquote(r"b'\xff\377\101é'", true),
            Some(vec![0xff, 0xff, b'A', 0xc3, 0xa9])
        );
        assert_eq!(unquote(r"BR'\xff'", true), Some(br"\xff".to_vec()));
        assert_eq!(unquote(r"b'\u0041'", true), None);
        assert_eq!(unquote(r"b'\U00000041'", true), None);
        assert_eq!(unquote(r#"b"""\n""""#, true), Some(b"\n".to_vec()));
    }

    #[test]
    fn numbers() {
        assert_eq!(int("9223372036854775807", false), Some(i64::MAX));
        assert_eq!(int("9223372036854775808", false), None);
        assert_eq!(int("9223372036854775808", true), Some(i64::MIN));
        assert_eq!(int("0x8000000000000000", true), Some(i64::MIN));
        assert_eq!(int("0x8000000000000000", false), None);
        assert_eq!(int("007", false), Some(7));
        assert_eq!(uint("18446744073709551615u"), Some(u64::MAX));
        assert_eq!(uint("18446744073709551616u"), None);
        assert_eq!(uint("0xFFU"), Some(255));
        assert_eq!(double("1.5e3", true), Some(-1500.0));
        assert_eq!(double(".5", false), Some(0.5));
        assert_eq!(double("1e309", false), None);
        assert_eq!(double("1e-400", false), Some(0.0));
    }
}
