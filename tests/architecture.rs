//! ARCHITECTURE.md's rule "no room reads an object's fields by JSON pointer except through
//! `api`", kept by a test: src/ is scanned, outside `api/`, the allowed files and the test
//! code, for a JSON pointer read (`.pointer(`) and for a named read of an object's `spec`,
//! `status`, `metadata` or `data` (`.get("spec")`, `["status"]`, ...). The pointer helpers
//! of `api::meta` are private to `api`: the compiler keeps those.

use std::path::{Path, PathBuf};

/// Files (or folders, ending in `/`) under src/ that may read objects by pointer, and why.
const ALLOWED: &[(&str, &str)] = &[
    ("api/", "the views: the home of every field read"),
    (
        "core/cel/",
        "CEL evaluates user expressions over arbitrary objects",
    ),
    (
        "core/drift.rs",
        "compares a rendered object with its live copy, field by field, whatever they are",
    ),
];

/// The field reads the rule forbids outside `api`, as they appear in the source.
const FORBIDDEN: &[&str] = &[
    ".pointer(",
    ".get(\"spec\")",
    ".get(\"status\")",
    ".get(\"metadata\")",
    ".get(\"data\")",
    "[\"spec\"]",
    "[\"status\"]",
    "[\"metadata\"]",
    "[\"data\"]",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The path under src/, with `/` separators.
fn relative(path: &Path) -> String {
    let rel = path.strip_prefix(src()).unwrap();
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn allowed(rel: &str) -> bool {
    ALLOWED.iter().any(|(entry, _)| {
        if entry.ends_with('/') {
            rel.starts_with(entry)
        } else {
            rel == *entry
        }
    })
}

/// A test module's file: `tests.rs`, or a file under a `tests/` folder.
fn test_file(rel: &str) -> bool {
    rel.ends_with("/tests.rs") || rel.contains("/tests/")
}

/// How far the braces of `line` move the depth, ignoring those in string and char literals
/// (`in_raw` carries a raw string's closing across lines; `in_str` an ordinary one's).
fn brace_delta(line: &str, in_str: &mut bool, in_raw: &mut Option<String>) -> i64 {
    let bytes = line.as_bytes();
    let mut delta = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(close) = in_raw {
            match line[i..].find(close.as_str()) {
                Some(at) => {
                    i += at + close.len();
                    *in_raw = None;
                    continue;
                }
                None => return delta,
            }
        }
        let c = bytes[i];
        if *in_str {
            match c {
                b'\\' => i += 1,
                b'"' => *in_str = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'/' if bytes.get(i + 1) == Some(&b'/') => return delta,
            b'r' if matches!(bytes.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) =>
            {
                let hashes = bytes[i + 1..].iter().take_while(|b| **b == b'#').count();
                if bytes.get(i + 1 + hashes) == Some(&b'"') {
                    *in_raw = Some(format!("\"{}", "#".repeat(hashes)));
                    i += hashes + 2;
                    continue;
                }
            }
            b'"' => *in_str = true,
            b'\'' if bytes.get(i + 2) == Some(&b'\'') => {
                i += 3;
                continue;
            }
            b'\'' if bytes.get(i + 1) == Some(&b'\\') => {
                let end = line[i + 2..].find('\'').map_or(bytes.len(), |e| i + 3 + e);
                i = end;
                continue;
            }
            b'{' => delta += 1,
            b'}' => delta -= 1,
            _ => {}
        }
        i += 1;
    }
    delta
}

/// The lines of `text` outside `#[cfg(test)]` items, with their numbers, comments left out.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    let (mut in_str, mut in_raw) = (false, None);
    while let Some((n, line)) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            // Skip the item: up to its `;`, or to the brace that closes the one it opens.
            let mut depth = 0;
            let mut opened = false;
            for (_, item) in lines.by_ref() {
                let d = brace_delta(item, &mut in_str, &mut in_raw);
                opened |= item.contains('{');
                depth += d;
                if (opened && depth <= 0) || (!opened && item.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        brace_delta(line, &mut in_str, &mut in_raw);
        let code = line.trim_start();
        if !code.starts_with("//") {
            out.push((n + 1, line));
        }
    }
    out
}

/// A forbidden read in `line`. An index (`["spec"]`) counts after a value (`v["spec"]`,
/// `f()["spec"]`), not as an array literal (`&["data"]`, a list of paths).
fn reads(line: &str) -> bool {
    FORBIDDEN.iter().any(|f| {
        line.match_indices(f).any(|(at, _)| {
            !f.starts_with('[')
                || line[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | ')' | ']'))
        })
    })
}

fn violations_in(rel: &str, text: &str) -> Vec<String> {
    code_lines(text)
        .into_iter()
        .filter(|(_, line)| reads(line))
        .map(|(n, line)| format!("src/{rel}:{n}: {}", line.trim()))
        .collect()
}

#[test]
fn object_fields_are_read_through_api_views() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut found = Vec::new();
    for path in &files {
        let rel = relative(path);
        if allowed(&rel) || test_file(&rel) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        found.extend(violations_in(&rel, &text));
    }
    assert!(
        found.is_empty(),
        "ARCHITECTURE.md: no room reads an object's fields by JSON pointer or by name except \
         through a view of `api` (add a method to the object's view in src/api/ and call it):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_allowed_file_exists() {
    for (entry, why) in ALLOWED {
        let path = src().join(entry.trim_end_matches('/'));
        assert!(
            path.exists(),
            "ALLOWED names src/{entry} ({why}), which is gone"
        );
    }
}

#[test]
fn the_scan_sees_a_read_and_skips_tests_and_comments() {
    let text = r#"
fn a(v: &Value) -> bool {
    // v.pointer("/spec/x") in a comment
    let s = "}{";
    v.pointer("/spec/x").is_some()
}
fn b(v: &Value) -> Option<&Value> {
    v.get("status")
}

#[cfg(test)]
mod tests {
    fn c(v: &Value) {
        let _ = v["spec"]["x"];
        let _ = '}';
    }
}

fn d(v: &Value) -> &Value {
    &v["metadata"]
}
const PATHS: &[&[&str]] = &[&["data"]];
"#;
    let found = violations_in("core/x.rs", text);
    assert_eq!(
        found,
        [
            r#"src/core/x.rs:5: v.pointer("/spec/x").is_some()"#,
            r#"src/core/x.rs:8: v.get("status")"#,
            r#"src/core/x.rs:20: &v["metadata"]"#,
        ]
    );
}
