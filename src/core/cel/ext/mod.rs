//! cel-go's string extension (`ext.Strings()` at its latest version), as kcm's health-rule
//! environment has it: charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split,
//! substring, trim, join, strings.quote, format and reverse, with cel-go's edge cases
//! (indices in code points, Go's `strings.Replace`/`SplitN` limits, `format` clauses).

use std::sync::Arc;

use super::strconv;
use super::value::Value;

mod format;

pub use format::{check_format, format};

/// An error of a string function (the message cel-go gives).
pub type ExtResult<T> = Result<T, String>;

fn index_error(i: i64) -> String {
    format!("index out of range: {i}")
}

pub fn char_at(s: &str, i: i64) -> ExtResult<String> {
    let len = s.chars().count() as i64;
    if i < 0 || i > len {
        return Err(index_error(i));
    }
    Ok(s.chars()
        .nth(i as usize)
        .map(String::from)
        .unwrap_or_default())
}

/// The byte offset of the code point at index `i` (the end of the string for its length).
fn byte_at(s: &str, i: usize) -> usize {
    s.char_indices().nth(i).map_or(s.len(), |(b, _)| b)
}

/// `indexOf`: in code points, from `offset`. A match of valid UTF-8 in valid UTF-8 starts on
/// a character boundary, so the search runs on bytes (linear time).
pub fn index_of(s: &str, sub: &str, offset: i64) -> ExtResult<i64> {
    if offset < 0 {
        return Err(index_error(offset));
    }
    let len = s.chars().count() as i64;
    if sub.is_empty() {
        return Ok(offset.min(len));
    }
    if offset >= len {
        return Ok(-1);
    }
    let from = byte_at(s, offset as usize);
    Ok(match s[from..].find(sub) {
        Some(p) => offset + s[from..from + p].chars().count() as i64,
        None => -1,
    })
}

pub fn last_index_of(s: &str, sub: &str) -> ExtResult<i64> {
    let len = s.chars().count() as i64;
    if sub.is_empty() {
        return Ok(len);
    }
    // cel-go compares the lengths in bytes here.
    if s.len() < sub.len() {
        return Ok(-1);
    }
    last_index_of_offset(s, sub, len - 1)
}

/// `lastIndexOf` with the last code point index a match may start at.
pub fn last_index_of_offset(s: &str, sub: &str, offset: i64) -> ExtResult<i64> {
    if offset < 0 {
        return Err(index_error(offset));
    }
    let len = s.chars().count() as i64;
    if sub.is_empty() {
        return Ok(offset.min(len));
    }
    if offset >= len {
        return Ok(-1);
    }
    let m = sub.chars().count() as i64;
    let off = offset.min(len - m);
    if off < 0 {
        return Ok(-1);
    }
    let end = byte_at(s, (off + m) as usize);
    Ok(match s[..end].rfind(sub) {
        Some(p) => s[..p].chars().count() as i64,
        None => -1,
    })
}

pub fn lower_ascii(s: &str) -> String {
    s.to_ascii_lowercase()
}

pub fn upper_ascii(s: &str) -> String {
    s.to_ascii_uppercase()
}

/// Go's `strings.Replace(s, old, new, n)`: `n < 0` replaces all; an empty `old` matches at
/// the start and after every character.
pub fn replace(s: &str, old: &str, new: &str, n: i64) -> String {
    if n == 0 || (old == new && !old.is_empty()) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut replaced: i64 = 0;
    if old.is_empty() {
        let mut chars = s.char_indices().peekable();
        // before the first character, and after each one
        loop {
            if n >= 0 && replaced >= n {
                if let Some(&(i, _)) = chars.peek() {
                    out.push_str(&s[i..]);
                }
                break;
            }
            out.push_str(new);
            replaced += 1;
            match chars.next() {
                Some((_, c)) => out.push(c),
                None => break,
            }
        }
        return out;
    }
    let mut rest = s;
    while let Some(i) = rest.find(old) {
        if n >= 0 && replaced >= n {
            break;
        }
        out.push_str(&rest[..i]);
        out.push_str(new);
        rest = &rest[i + old.len()..];
        replaced += 1;
    }
    out.push_str(rest);
    out
}

/// Go's `strings.SplitN(s, sep, n)`: `n == 0` gives no strings, `n < 0` all of them; an empty
/// separator splits after each character.
pub fn split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        let chars: Vec<&str> = s
            .char_indices()
            .map(|(i, c)| &s[i..i + c.len_utf8()])
            .collect();
        let total = chars.len() as i64;
        let n = if n < 0 || n > total { total } else { n };
        let mut out: Vec<String> = Vec::with_capacity(n as usize);
        for c in chars.iter().take((n - 1).max(0) as usize) {
            out.push((*c).to_string());
        }
        if n > 0 {
            let consumed: usize = chars.iter().take((n - 1) as usize).map(|c| c.len()).sum();
            out.push(s[consumed..].to_string());
        }
        return out;
    }
    let mut out = Vec::new();
    let mut rest = s;
    while n < 0 || (out.len() as i64) < n - 1 {
        match rest.find(sep) {
            Some(i) => {
                out.push(rest[..i].to_string());
                rest = &rest[i + sep.len()..];
            }
            None => break,
        }
    }
    out.push(rest.to_string());
    out
}

pub fn substring(s: &str, start: i64, end: Option<i64>) -> ExtResult<String> {
    let len = s.chars().count() as i64;
    if let Some(end) = end
        && start > end
    {
        return Err(format!(
            "invalid substring range. start: {start}, end: {end}"
        ));
    }
    if start < 0 || start > len {
        return Err(index_error(start));
    }
    let end = end.unwrap_or(len);
    if end < 0 || end > len {
        return Err(index_error(end));
    }
    Ok(s.chars()
        .skip(start as usize)
        .take((end - start) as usize)
        .collect())
}

/// Go's `strings.TrimSpace`: Unicode white space at both ends.
pub fn trim(s: &str) -> String {
    s.trim_matches(char::is_whitespace).to_string()
}

pub fn reverse(s: &str) -> String {
    s.chars().rev().collect()
}

/// cel-go's `quote`: double quotes around the string, with `\a \b \f \n \r \t \v \\ \"`
/// escaped and every other character as it is.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `join`: the elements must be strings ("join: invalid input: <value>" otherwise).
pub fn join(list: &[Value], sep: &str) -> ExtResult<String> {
    let mut out = String::new();
    for (i, v) in list.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        match v {
            Value::String(s) => out.push_str(s),
            other => return Err(format!("join: invalid input: {}", go_value_text(other))),
        }
    }
    Ok(out)
}

/// A value as Go's `%v` prints a CEL value (for messages).
pub fn go_value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Double(d) => strconv::format_g(*d),
        Value::Uint(u) => u.to_string(),
        Value::Null => "NULL_VALUE".into(),
        other => other.render(),
    }
}

/// A list of strings as a CEL value.
pub fn string_list(v: Vec<String>) -> Value {
    Value::list(v.into_iter().map(|s| Value::String(Arc::from(s))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::cel::types::CelType;

    #[test]
    fn indices_are_code_points() {
        assert_eq!(char_at("héllo", 1).unwrap(), "é");
        assert_eq!(char_at("hello", 5).unwrap(), "");
        assert_eq!(char_at("hello", 6).unwrap_err(), "index out of range: 6");
        assert!(char_at("hello", -1).is_err());
        assert_eq!(index_of("hello mellow", "", 0), Ok(0));
        assert_eq!(index_of("hello mellow", "ello", 0), Ok(1));
        assert_eq!(index_of("hello mellow", "ello", 2), Ok(7));
        assert_eq!(index_of("hello mellow", "ello", 20), Ok(-1));
        assert_eq!(index_of("hello mellow", "", 20), Ok(12));
        assert!(index_of("hello mellow", "ello", -1).is_err());
        assert_eq!(index_of("héllo", "llo", 0), Ok(2));
        assert_eq!(last_index_of("hello mellow", ""), Ok(12));
        assert_eq!(last_index_of("hello mellow", "ello"), Ok(7));
        assert_eq!(last_index_of_offset("hello mellow", "ello", 6), Ok(1));
        assert_eq!(last_index_of_offset("hello mellow", "ello", 20), Ok(-1));
        assert!(last_index_of_offset("hello mellow", "ello", -1).is_err());
        // cel-go compares byte lengths: 'é' (2 bytes) vs 'ab' (2 bytes) searches
        assert_eq!(last_index_of("é", "ab"), Ok(-1));
        assert_eq!(substring("tacocat", 4, None).unwrap(), "cat");
        assert_eq!(substring("tacocat", 0, Some(4)).unwrap(), "taco");
        assert_eq!(
            substring("tacocat", 2, Some(1)).unwrap_err(),
            "invalid substring range. start: 2, end: 1"
        );
        assert_eq!(
            substring("tacocat", -1, None).unwrap_err(),
            "index out of range: -1"
        );
        assert_eq!(
            substring("tacocat", 0, Some(8)).unwrap_err(),
            "index out of range: 8"
        );
    }

    #[test]
    fn replace_and_split_follow_go() {
        assert_eq!(replace("hello hello", "he", "we", -1), "wello wello");
        assert_eq!(replace("hello hello", "he", "we", 1), "wello hello");
        assert_eq!(replace("hello hello", "he", "we", 0), "hello hello");
        assert_eq!(replace("héllo", "", "_", -1), "_h_é_l_l_o_");
        assert_eq!(replace("hello", "", "_", 2), "_h_ello");
        assert_eq!(replace("hello hello", "h", "", -1), "ello ello");
        assert_eq!(
            split("hello hello hello", " ", -1),
            ["hello", "hello", "hello"]
        );
        assert!(split("hello hello hello", " ", 0).is_empty());
        assert_eq!(split("hello hello hello", " ", 1), ["hello hello hello"]);
        assert_eq!(split("hello hello hello", " ", 2), ["hello", "hello hello"]);
        assert_eq!(split("héy", "", -1), ["h", "é", "y"]);
        assert_eq!(split("héy", "", 2), ["h", "éy"]);
        assert_eq!(split("", ",", -1), [""]);
        assert!(split("", "", -1).is_empty());
        assert_eq!(split("a,b", ",", 5), ["a", "b"]);
    }

    #[test]
    fn quote_trim_case() {
        assert_eq!(
            quote("two escape sequences \u{7}\n"),
            "\"two escape sequences \\a\\n\""
        );
        assert_eq!(quote("say \"hi\""), "\"say \\\"hi\\\"\"");
        assert_eq!(quote("\u{1}"), "\"\u{1}\"");
        assert_eq!(trim("  \ttrim\n    "), "trim");
        assert_eq!(trim("\u{a0}x\u{3000}"), "x");
        assert_eq!(trim("\u{200b}x"), "\u{200b}x");
        assert_eq!(lower_ascii("TacoCÆt Xii"), "tacocÆt xii");
        assert_eq!(upper_ascii("TacoCÆt Xii"), "TACOCÆT XII");
        assert_eq!(reverse("John Smith"), "htimS nhoJ");
    }

    #[test]
    fn format_follows_cel_go() {
        let f = |s: &str, args: Vec<Value>| format(s, &args);
        assert_eq!(
            f("%s and %d", vec![Value::string("str"), Value::Int(42)]).unwrap(),
            "str and 42"
        );
        assert_eq!(f("%%s: %s", vec![Value::Double(64.2)]).unwrap(), "%s: 64.2");
        assert_eq!(f("%f", vec![Value::Double(3.25)]).unwrap(), "3.250000");
        assert_eq!(f("%.2f", vec![Value::Int(2)]).unwrap(), "2.00");
        assert_eq!(f("%e", vec![Value::Double(2.5)]).unwrap(), "2.500000e+00");
        assert_eq!(f("%b", vec![Value::Int(5)]).unwrap(), "101");
        assert_eq!(f("%b", vec![Value::Int(-5)]).unwrap(), "-101");
        assert_eq!(f("%b", vec![Value::Bool(true)]).unwrap(), "1");
        assert_eq!(
            f("%x %X", vec![Value::Int(26), Value::Int(26)]).unwrap(),
            "1a 1A"
        );
        assert_eq!(f("%x", vec![Value::string("hi")]).unwrap(), "6869");
        assert_eq!(f("%o", vec![Value::Int(30)]).unwrap(), "36");
        assert_eq!(f("%d", vec![Value::Double(f64::NAN)]).unwrap(), "NaN");
        assert_eq!(f("%s", vec![Value::Null]).unwrap(), "null");
        assert_eq!(f("%d", vec![]).unwrap_err(), "index 0 out of range");
        assert_eq!(
            f("%", vec![Value::Int(1)]).unwrap_err(),
            "unexpected end of string"
        );
        assert_eq!(
            f("%y", vec![Value::Int(1)]).unwrap_err(),
            "could not parse formatting clause: unrecognized formatting clause \"y\""
        );
        assert_eq!(
            f("%d", vec![Value::string("a")]).unwrap_err(),
            "error during formatting: decimal clause can only be used on ints, uints, and doubles, was given string"
        );
        assert_eq!(
            f("%.101f", vec![Value::Int(1)]).unwrap_err(),
            "could not parse formatting clause: error while parsing precision: precision 101 exceeds maximum allowed precision 100"
        );
        assert_eq!(
            f(
                "%s",
                vec![Value::list(vec![Value::Int(1), Value::string("a")])]
            )
            .unwrap(),
            "[1, a]"
        );
    }

    #[test]
    fn format_is_checked_at_compile_time() {
        assert!(check_format("%d", &[CelType::Int]).is_ok());
        assert!(check_format("%d", &[CelType::Dyn]).is_ok());
        assert_eq!(
            check_format("%d", &[CelType::String]).unwrap_err().0,
            Some(0)
        );
        assert_eq!(
            check_format("%d", &[CelType::Int, CelType::Int])
                .unwrap_err()
                .1,
            "too many arguments supplied to string.format (expected 1, got 2)"
        );
    }
}
