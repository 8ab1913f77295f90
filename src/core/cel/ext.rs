//! cel-go's string extension (`ext.Strings()` at its latest version), as kcm's health-rule
//! environment has it: charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split,
//! substring, trim, join, strings.quote, format and reverse, with cel-go's edge cases
//! (indices in code points, Go's `strings.Replace`/`SplitN` limits, `format` clauses).

use std::fmt::Write as _;
use std::sync::Arc;

use super::strconv;
use super::types::CelType;
use super::value::Value;

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

/// What a format clause asks of its argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clause {
    String,
    Decimal,
    Fixed(usize),
    Scientific(usize),
    Binary,
    Hex(bool),
    Octal,
}

const MAX_PRECISION: usize = 100;
const DEFAULT_PRECISION: usize = 6;

/// Parses the clause after a `%`: `(.precision)?[sdfebxXo]`, returning it and the bytes read.
fn parse_clause(s: &[u8]) -> Result<(Clause, usize), String> {
    let mut i = 0;
    let mut precision = DEFAULT_PRECISION;
    if s.first() == Some(&b'.') {
        i = 1;
        let start = i;
        loop {
            if i >= s.len() {
                return Err(
                    "error while parsing precision: could not find end of precision specifier"
                        .into(),
                );
            }
            if !s[i].is_ascii_digit() {
                break;
            }
            i += 1;
        }
        let digits = std::str::from_utf8(&s[start..i]).unwrap_or("");
        let p = strconv::atoi(digits).ok_or_else(|| {
            format!(
                "error while parsing precision: error while converting precision to integer: \
                 strconv.Atoi: parsing {}: invalid syntax",
                super::time::go_quote(digits)
            )
        })?;
        if p as usize > MAX_PRECISION {
            return Err(format!(
                "error while parsing precision: precision {p} exceeds maximum allowed precision {MAX_PRECISION}"
            ));
        }
        precision = p as usize;
    }
    let Some(&c) = s.get(i) else {
        return Err("unexpected end of string".into());
    };
    i += 1;
    let clause = match c {
        b's' => Clause::String,
        b'd' => Clause::Decimal,
        b'f' => Clause::Fixed(precision),
        b'e' => Clause::Scientific(precision),
        b'b' => Clause::Binary,
        b'x' => Clause::Hex(false),
        b'X' => Clause::Hex(true),
        b'o' => Clause::Octal,
        other => {
            return Err(format!(
                "unrecognized formatting clause \"{}\"",
                char::from(other)
            ));
        }
    };
    Ok((clause, i))
}

/// Walks a format string, calling `arg(index, clause)` for each clause; `Err` with cel-go's
/// message on a malformed string.
fn walk_format(
    fmt: &str,
    nargs: usize,
    out: &mut String,
    mut arg: impl FnMut(usize, Clause, &mut String) -> Result<(), String>,
) -> Result<usize, String> {
    let b = fmt.as_bytes();
    let mut i = 0;
    let mut index = 0;
    let mut literal_start = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        out.push_str(&fmt[literal_start..i]);
        if i + 1 < b.len() && b[i + 1] == b'%' {
            out.push('%');
            i += 2;
            literal_start = i;
            continue;
        }
        if index >= nargs {
            return Err(format!("index {index} out of range"));
        }
        if i + 1 >= b.len() {
            return Err("unexpected end of string".into());
        }
        let (clause, read) = parse_clause(&b[i + 1..])
            .map_err(|e| format!("could not parse formatting clause: {e}"))?;
        arg(index, clause, out).map_err(|e| format!("error during formatting: {e}"))?;
        i += 1 + read;
        literal_start = i;
        index += 1;
    }
    out.push_str(&fmt[literal_start..]);
    Ok(index)
}

fn clause_error(clause: Clause, type_name: &str) -> String {
    match clause {
        Clause::String => format!(
            "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {type_name}"
        ),
        Clause::Decimal => format!(
            "decimal clause can only be used on ints, uints, and doubles, was given {type_name}"
        ),
        Clause::Fixed(_) => format!(
            "fixed-point clause can only be used on ints, uints, and doubles, was given {type_name}"
        ),
        Clause::Scientific(_) => format!(
            "scientific clause can only be used on ints, uints, and doubles, was given {type_name}"
        ),
        Clause::Binary => {
            format!("only ints, uints, and bools can be formatted as binary, was given {type_name}")
        }
        Clause::Hex(_) => format!(
            "only ints, uints, bytes, and strings can be formatted as hex, was given {type_name}"
        ),
        Clause::Octal => {
            format!("octal clause can only be used on ints and uints, was given {type_name}")
        }
    }
}

/// `<string>.format(<list>)` at run time.
pub fn format(fmt: &str, args: &[Value]) -> ExtResult<String> {
    let mut out = String::with_capacity(fmt.len());
    walk_format(fmt, args.len(), &mut out, |i, clause, out| {
        format_arg(&args[i], clause, out)
    })?;
    Ok(out)
}

fn non_finite(d: f64) -> Option<&'static str> {
    if d.is_nan() {
        Some("NaN")
    } else if d.is_infinite() {
        Some(if d > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        None
    }
}

fn format_arg(v: &Value, clause: Clause, out: &mut String) -> Result<(), String> {
    let bad = || Err(clause_error(clause, v.type_of().name()));
    match clause {
        Clause::String => format_string(v, out),
        Clause::Decimal => match v {
            Value::Int(i) => {
                let _ = write!(out, "{i}");
                Ok(())
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u}");
                Ok(())
            }
            Value::Double(d) => {
                out.push_str(
                    non_finite(*d)
                        .map_or_else(|| strconv::format_float_f(*d), String::from)
                        .as_str(),
                );
                Ok(())
            }
            _ => bad(),
        },
        Clause::Fixed(p) | Clause::Scientific(p) => {
            let d = match v {
                Value::Int(i) => *i as f64,
                Value::Uint(u) => *u as f64,
                Value::Double(d) => {
                    if let Some(s) = non_finite(*d) {
                        out.push_str(s);
                        return Ok(());
                    }
                    *d
                }
                _ => return bad(),
            };
            out.push_str(&if matches!(clause, Clause::Fixed(_)) {
                strconv::format_fixed(d, p)
            } else {
                strconv::format_scientific(d, p)
            });
            Ok(())
        }
        Clause::Binary => match v {
            Value::Bool(b) => {
                out.push(if *b { '1' } else { '0' });
                Ok(())
            }
            Value::Int(i) => {
                write_signed(out, *i, 2);
                Ok(())
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u:b}");
                Ok(())
            }
            _ => bad(),
        },
        Clause::Hex(upper) => {
            let s = match v {
                Value::Int(i) => {
                    let mut s = String::new();
                    write_signed(&mut s, *i, 16);
                    s
                }
                Value::Uint(u) => format!("{u:x}"),
                Value::String(s) => hex_bytes(s.as_bytes()),
                Value::Bytes(b) => hex_bytes(b),
                _ => return bad(),
            };
            out.push_str(&if upper { s.to_uppercase() } else { s });
            Ok(())
        }
        Clause::Octal => match v {
            Value::Int(i) => {
                write_signed(out, *i, 8);
                Ok(())
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u:o}");
                Ok(())
            }
            _ => bad(),
        },
    }
}

fn write_signed(out: &mut String, i: i64, radix: u32) {
    if i < 0 {
        out.push('-');
    }
    let u = i.unsigned_abs();
    let _ = match radix {
        2 => write!(out, "{u:b}"),
        8 => write!(out, "{u:o}"),
        _ => write!(out, "{u:x}"),
    };
}

fn hex_bytes(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for byte in b {
        let _ = write!(s, "{byte:02x}");
    }
    s
}

/// The `%s` rendering of cel-go's formatter.
fn format_string(v: &Value, out: &mut String) -> Result<(), String> {
    match v {
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Uint(u) => {
            let _ = write!(out, "{u}");
        }
        Value::Double(d) => {
            out.push_str(&non_finite(*d).map_or_else(|| strconv::format_float_f(*d), String::from));
        }
        Value::Bytes(b) => out.push_str(&String::from_utf8_lossy(b)),
        Value::String(s) => out.push_str(s),
        Value::Duration(d) => {
            out.push_str(&strconv::format_float_f(d.seconds_f64()));
            out.push('s');
        }
        Value::Timestamp(t) => out.push_str(&t.utc().to_rfc3339()),
        Value::Null => out.push_str("null"),
        Value::Type(t) => out.push_str(t.name()),
        Value::List(l) => {
            out.push('[');
            for (i, e) in l.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                format_string(e, out)?;
            }
            out.push(']');
        }
        Value::Map(m) => {
            let mut entries = Vec::with_capacity(m.len());
            for (k, val) in m.entries() {
                let mut ks = String::new();
                format_string(k.value(), &mut ks)?;
                let mut vs = String::new();
                format_string(val, &mut vs)?;
                entries.push((ks, vs));
            }
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            for (i, (k, val)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                out.push_str(val);
            }
            out.push('}');
        }
    }
    Ok(())
}

/// cel-go's compile-time check of `'<constant>'.format([<list literal>])`: each clause
/// against the static type of its argument, and no argument left over. `Err` with the index
/// of the argument at fault (None: the call) and the message.
pub fn check_format(fmt: &str, arg_types: &[CelType]) -> Result<(), (Option<usize>, String)> {
    let mut at_fault = None;
    let mut scratch = String::new();
    let used = walk_format(fmt, arg_types.len(), &mut scratch, |i, clause, _| {
        if type_fits(&arg_types[i], clause) {
            Ok(())
        } else {
            at_fault = Some(i);
            Err(clause_error(clause, &static_type_name(&arg_types[i])))
        }
    })
    .map_err(|e| (at_fault, e))?;
    if arg_types.len() > used {
        return Err((
            None,
            format!(
                "too many arguments supplied to string.format (expected {used}, got {})",
                arg_types.len()
            ),
        ));
    }
    Ok(())
}

fn type_fits(t: &CelType, clause: Clause) -> bool {
    use CelType as T;
    if matches!(t, T::Dyn | T::Param(_)) {
        return true;
    }
    match clause {
        Clause::String => !matches!(t, T::Error),
        Clause::Decimal | Clause::Fixed(_) | Clause::Scientific(_) => {
            matches!(t, T::Int | T::Uint | T::Double)
        }
        Clause::Binary => matches!(t, T::Bool | T::Int | T::Uint),
        Clause::Hex(_) => matches!(t, T::Int | T::Uint | T::String | T::Bytes),
        Clause::Octal => matches!(t, T::Int | T::Uint),
    }
}

fn static_type_name(t: &CelType) -> String {
    match t {
        CelType::List(_) => "list".into(),
        CelType::Map(..) => "map".into(),
        CelType::Type(_) => "type".into(),
        other => other.to_string(),
    }
}

/// A list of strings as a CEL value.
pub fn string_list(v: Vec<String>) -> Value {
    Value::list(v.into_iter().map(|s| Value::String(Arc::from(s))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

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
