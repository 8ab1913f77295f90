//! Scalars: how kubectl (sigs.k8s.io/yaml, go-yaml v2, YAML 1.1 types) resolves their text to
//! a type, and where a position inside a scalar's value is in the file.

use std::ops::Range;

use saphyr_parser::Tag;

use super::{ScalarValue, Style};

/// Resolves a plain scalar like sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 types).
pub fn resolve_plain_scalar(text: &str) -> ScalarValue {
    resolve_plain(text)
}

fn resolve_plain(text: &str) -> ScalarValue {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarValue::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return ScalarValue::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return ScalarValue::Bool(false);
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return ScalarValue::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return ScalarValue::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return ScalarValue::Float(f64::NAN),
        _ => {}
    }
    let first = text.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return ScalarValue::String;
    }
    let cleaned: String = text.chars().filter(|&c| c != '_').collect();
    if let Some(v) = parse_int(&cleaned) {
        return v;
    }
    if is_yaml_float(&cleaned)
        && let Ok(f) = cleaned.parse::<f64>()
    {
        return ScalarValue::Float(f);
    }
    ScalarValue::String
}

/// Integers as Go's strconv.ParseInt/ParseUint with base 0 read them.
fn parse_int(s: &str) -> Option<ScalarValue> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let (radix, body) = if let Some(r) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, r)
    } else if let Some(r) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        (2, r)
    } else if let Some(r) = digits
        .strip_prefix("0o")
        .or_else(|| digits.strip_prefix("0O"))
    {
        (8, r)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(body, radix).ok()?;
    if neg {
        if magnitude <= i64::MAX as u128 + 1 {
            return Some(ScalarValue::Int((-(magnitude as i128)) as i64));
        }
        return Some(ScalarValue::Float(-(magnitude as f64)));
    }
    if magnitude <= i64::MAX as u128 {
        Some(ScalarValue::Int(magnitude as i64))
    } else if magnitude <= u64::MAX as u128 {
        Some(ScalarValue::Uint(magnitude as u64))
    } else {
        Some(ScalarValue::Float(magnitude as f64))
    }
}

/// go-yaml v2's float pattern: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'-' | b'+')) {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if int_digits == 0 && i == frac_start {
            return false;
        }
    } else if int_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return false;
        }
    }
    i == b.len()
}

/// The type of a scalar given its style and explicit tag (`!!str`, `!!int`, ...).
pub(super) fn resolve_tagged(text: &str, style: Style, tag: Option<&Tag>) -> ScalarValue {
    if let Some(tag) = tag
        && (tag.handle == "tag:yaml.org,2002:" || tag.handle == "!!")
    {
        return match tag.suffix.as_str() {
            "str" | "binary" | "timestamp" => ScalarValue::String,
            "null" => ScalarValue::Null,
            "bool" | "int" | "float" => resolve_plain(text),
            _ => ScalarValue::String,
        };
    }
    if style == Style::Plain {
        resolve_plain(text)
    } else {
        ScalarValue::String
    }
}

/// Aligns a position in a scalar's value with the source by walking both texts: the value
/// is the source minus indentation, quotes, escapes and line folding, so every value
/// character can be found in order in the source.
pub(super) fn align_offset(
    value: &str,
    style: Style,
    src: &str,
    span: Range<usize>,
    value_offset: usize,
) -> usize {
    let span = span.start.min(src.len())..span.end.min(src.len());
    let Some(region) = src.get(span.clone()) else {
        return span.start;
    };
    let mut src_iter = region.char_indices().peekable();
    // Skip the opening quote.
    if matches!(style, Style::SingleQuoted | Style::DoubleQuoted) {
        src_iter.next();
    }
    for (vi, vc) in value.char_indices() {
        loop {
            let Some(&(si, sc)) = src_iter.peek() else {
                return span.start;
            };
            let matches_here = sc == vc || (vc == ' ' && (sc == '\n' || sc == '\r'));
            if matches_here {
                if vi >= value_offset {
                    return span.start + si;
                }
                src_iter.next();
                break;
            }
            src_iter.next();
        }
    }
    // The offset is at (or past) the end of the value: point after the last character.
    src_iter
        .peek()
        .map_or(span.end, |&(si, _)| span.start + si)
        .min(span.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_scalars_resolve_like_go_yaml_v2() {
        assert_eq!(resolve_plain("0x1F"), ScalarValue::Int(31));
        assert_eq!(resolve_plain("010"), ScalarValue::Int(8));
        assert_eq!(resolve_plain("1_000"), ScalarValue::Int(1000));
        assert_eq!(
            resolve_plain("18446744073709551615"),
            ScalarValue::Uint(u64::MAX)
        );
        assert_eq!(resolve_plain("-9223372036854775809"), {
            ScalarValue::Float(-9_223_372_036_854_775_809.0)
        });
        assert_eq!(resolve_plain("1e3"), ScalarValue::Float(1000.0));
        assert_eq!(resolve_plain(".5"), ScalarValue::Float(0.5));
        assert_eq!(resolve_plain("1.2.3"), ScalarValue::String);
        assert_eq!(resolve_plain("e3"), ScalarValue::String);
        assert_eq!(resolve_plain("Off"), ScalarValue::Bool(false));
    }
}
