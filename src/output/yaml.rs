//! A YAML emitter for JSON values, for objects that `kubectl apply -f -` must read back exactly.
//!
//! kubectl reads YAML 1.1 (sigs.k8s.io/yaml, go-yaml v2), other tools YAML 1.2: a string is
//! written plain only when both read it back as that string; otherwise it is double-quoted
//! (JSON escapes are valid YAML), or a block literal when it spans lines. Keys keep their order.

use serde_json::Value;

use crate::diag::yaml::{ScalarValue, resolve_plain_scalar};

/// The tricky strings the tests (and tests/yaml_oracle.rs) round-trip.
#[doc(hidden)]
pub const TRICKY_STRINGS: &[&str] = &[
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "Y",
    "N",
    "true",
    "False",
    "TRUE",
    "null",
    "Null",
    "~",
    "",
    "1",
    "1.0",
    "0x1F",
    "010",
    "0o17",
    "1e3",
    "1_000",
    ".inf",
    "-.inf",
    ".nan",
    "+1",
    "-1",
    "2024-01-01",
    "12:30",
    "1:20",
    "a: b",
    "a #b",
    "#c",
    "- item",
    "?x",
    ":x",
    "x:",
    "{a}",
    "[a]",
    "a,b",
    "*ref",
    "&anchor",
    "!tag",
    "|",
    ">",
    "'q'",
    "\"q\"",
    "%d",
    "@x",
    "`x`",
    " lead",
    "trail ",
    "tab\there",
    "line\nbreak",
    "two\n\nlines\n",
    "cr\rx",
    "nul\u{0}x",
    "bell\u{7}",
    "é ü 字",
    "=",
    "<<",
    "x\n",
    "x\n\n\n",
    "  indented\nnext",
    "\nleading newline",
    "a\u{2028}b",
    "a\u{2029}b",
    "nel\u{85}x",
    "del\u{7f}c1\u{9f}",
    "\u{feff}bom",
    "{{ .Cluster.metadata.name }}",
    "http://x:80/a#b",
    "key=value",
    "5m",
    "v1",
    "-",
    "---",
    "...",
    "10m",
    "1h30m",
    "5m0s",
    "4.11.0",
    "1e5",
    "1E5",
    "2e",
    "0b101",
    "12h",
    "1.5h",
    "\ta\nb",
    "\n\ta",
    "\t\n",
    "a\n\tb",
    "0.5",
    "-0",
    "1e+20",
    "0777",
    "0b1",
    "NO",
    "Off",
    ".Inf",
    "true\n",
    "- a\n- b\n",
    "key: value\nother: 1\n",
];

/// Appends `value` as a YAML document (no `---`) written as its JSON on one line, ending
/// with a newline. JSON text is YAML once the characters YAML 1.1 readers (kubectl's) take
/// for line breaks or byte-order marks, or refuse as not printable, are escaped: JSON leaves
/// them as they are, and they can only be inside strings, where `\uXXXX` means the same to
/// both. (Lines of JSON between `---` lines: `grep '^{' | jq` reads them too.)
pub fn write_json_document(value: &Value, out: &mut String) {
    // A JSON value always serialises: its keys are strings.
    let json = serde_json::to_string(value).expect("a JSON value");
    let escaped = |c: char| c.is_control() || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}');
    if json.contains(escaped) {
        for c in json.chars() {
            if escaped(c) {
                out.push_str(&format!("\\u{:04X}", c as u32));
            } else {
                out.push(c);
            }
        }
    } else {
        out.push_str(&json);
    }
    out.push('\n');
}

/// Appends `value` as a YAML document (no `---`), ending with a newline.
pub fn write_document(value: &Value, out: &mut String) {
    match value {
        Value::Object(m) if !m.is_empty() => write_map(m, 0, out),
        Value::Array(a) if !a.is_empty() => write_seq(a, 0, out),
        other => {
            write_scalar(other, 0, out);
            out.push('\n');
        }
    }
}

fn indent(n: usize, out: &mut String) {
    for _ in 0..n {
        out.push(' ');
    }
}

fn write_map(m: &serde_json::Map<String, Value>, level: usize, out: &mut String) {
    for (i, (k, v)) in m.iter().enumerate() {
        // The first key of a mapping that is a sequence item continues the `- ` line.
        if i > 0 || !out.ends_with("- ") {
            indent(level, out);
        }
        write_string(k, level, true, out);
        out.push(':');
        write_value_after_key(v, level, out);
    }
}

fn write_value_after_key(v: &Value, level: usize, out: &mut String) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_map(m, level + 2, out);
        }
        // kubectl's style: a sequence under a key is not indented further.
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            write_seq(a, level, out);
        }
        scalar => {
            out.push(' ');
            write_scalar(scalar, level + 2, out);
            out.push('\n');
        }
    }
}

fn write_seq(items: &[Value], level: usize, out: &mut String) {
    for item in items {
        indent(level, out);
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => write_map(m, level + 2, out),
            Value::Array(a) if !a.is_empty() => {
                out.push('\n');
                write_seq(a, level + 2, out);
            }
            scalar => {
                write_scalar(scalar, level + 2, out);
                out.push('\n');
            }
        }
    }
}

/// A scalar, or an empty collection in flow style. `level` is the indentation of block
/// scalar content.
fn write_scalar(v: &Value, level: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(s, level, false, out),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

fn write_string(s: &str, level: usize, key: bool, out: &mut String) {
    if is_plain_safe(s) {
        out.push_str(s);
    } else if !key && block_literal_ok(s) {
        write_block_literal(s, level, out);
    } else {
        write_double_quoted(s, out);
    }
}

/// A double-quoted scalar. JSON's escapes are YAML's, plus the characters YAML (unlike JSON)
/// takes for line breaks or byte-order marks, which must be escaped too.
fn write_double_quoted(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if c.is_control() || c == '\u{feff}' => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Whether `s` can be written without quotes and read back as the same string by YAML 1.1
/// and 1.2 readers.
fn is_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.starts_with(' ') || s.ends_with(' ') || s.contains(['\n', '\r', '\t']) {
        return false;
    }
    if s.chars()
        .any(|c| c.is_control() || c == '\u{feff}' || c == '\u{2028}' || c == '\u{2029}')
    {
        return false;
    }
    // Indicators that cannot start a plain scalar (or change its meaning).
    if matches!(
        first,
        '-' | '?'
            | ':'
            | ','
            | '['
            | ']'
            | '{'
            | '}'
            | '#'
            | '&'
            | '*'
            | '!'
            | '|'
            | '>'
            | '\''
            | '"'
            | '%'
            | '@'
            | '`'
            | '.'
            | '~'
            | '='
            | '<'
    ) {
        return false;
    }
    if s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || s.contains(['{', '}', '[', ']', ','])
    {
        return false;
    }
    // Anything that resolves to a non-string in YAML 1.1 (a superset of 1.2's core schema
    // here), and anything that looks like a number or date to any reader.
    if resolve_plain_scalar(s) != ScalarValue::String {
        return false;
    }
    // A leading digit is plain only for duration- and version-like words (`5m`, `1h30m`):
    // letters and dots, nothing a reader could take for a number, date or time.
    if first.is_ascii_digit() {
        return s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.')
            && s.bytes().any(|b| b.is_ascii_alphabetic())
            && !s.bytes().any(|b| b == b'e' || b == b'E');
    }
    if first == '+' {
        return false;
    }
    !s.eq_ignore_ascii_case("null") && !s.eq_ignore_ascii_case(".nan")
}

/// Block literals carry multi-line text that has no characters YAML cannot hold in them.
fn block_literal_ok(s: &str) -> bool {
    s.contains('\n')
        && !s.contains('\r')
        && !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
        && !s.contains(['\u{feff}', '\u{2028}', '\u{2029}'])
        // Trailing spaces on a line survive a block literal, but a line of only spaces before
        // the first content line would change the indentation detection.
        && !s.lines().next().is_some_and(|l| l.trim().is_empty())
        // libyaml, and so go-yaml v2 (kubectl), refuses a tab where indentation may continue.
        && !s.split('\n').any(|l| l.starts_with('\t'))
}

fn write_block_literal(s: &str, level: usize, out: &mut String) {
    let trailing = s.len() - s.trim_end_matches('\n').len();
    let chomp = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    out.push('|');
    // An indentation indicator when the content starts with a space.
    if s.starts_with(' ') {
        out.push('2');
    }
    out.push_str(chomp);
    let body = s.trim_end_matches('\n');
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            indent(level.max(2), out);
            out.push_str(line);
        }
    }
    // Keep the extra trailing newlines (`|+`) as empty lines.
    for _ in 1..trailing {
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Source;
    use crate::diag::yaml::{Limits, parse_documents};
    use serde_json::json;

    fn round_trip(v: &Value) -> Value {
        let mut text = String::new();
        write_document(v, &mut text);
        let source = Source::new("t", text.clone());
        let (docs, err) = parse_documents(&source);
        assert!(err.is_none(), "{err:?}\n{text}");
        docs[0]
            .root
            .as_ref()
            .unwrap()
            .to_json_exact(&Limits::default())
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn tricky_strings_come_back_as_strings() {
        let tricky = TRICKY_STRINGS;
        let obj = Value::Object(
            tricky
                .iter()
                .enumerate()
                .map(|(i, s)| (format!("k{i}"), json!(s)))
                .collect(),
        );
        assert_eq!(round_trip(&obj), obj);
        // As keys too.
        let keys = Value::Object(tricky.iter().map(|s| (s.to_string(), json!(1))).collect());
        assert_eq!(round_trip(&keys), keys);
    }

    #[test]
    fn structures_numbers_and_empty_collections() {
        let v = json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2",
            "metadata": {"name": "x", "labels": {"a.b/c": "true"}, "ownerReferences": [{"name": "o", "controller": true}]},
            "spec": {"values": {"n": 1, "f": 1.5, "whole": 2.0, "big": 9.3e20, "neg": -3, "nested": [[1, 2], [], {}],
                     "list": [{"a": 1, "b": [true, null]}, "s"], "empty": {}, "none": null}},
        });
        assert_eq!(round_trip(&v), v);
        let mut text = String::new();
        write_document(&v, &mut text);
        assert!(
            text.starts_with("apiVersion: helm.toolkit.fluxcd.io/v2\nmetadata:\n  name: x\n"),
            "{text}"
        );
        assert!(
            text.contains("  ownerReferences:\n  - name: o\n    controller: true\n"),
            "{text}"
        );
    }

    #[test]
    fn multi_line_strings_use_block_literals() {
        let v = json!({"values": "a: 1\nb:\n  c: 2\n"});
        let mut text = String::new();
        write_document(&v, &mut text);
        assert_eq!(text, "values: |\n  a: 1\n  b:\n    c: 2\n");
        assert_eq!(round_trip(&v), v);
    }
}
