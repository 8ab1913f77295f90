//! Renderers, each writing into a passed-in `&mut dyn Write`: diagnostics in one file per
//! format (`human`, `json`, `sarif`, `github`, streamed by `stream`), and each subcommand's
//! own report.
//!
//! Every JSON (and YAML) report is a versioned envelope with one key style, camelCase as
//! Kubernetes writes its objects: `{"kind": "LintReport", "version": 1, "tool": {...}, ...}`.
//! `render -o json` is the exception by nature: a Kubernetes `List` of the rendered objects.

pub mod check;
pub mod diff;
pub mod doctor;
pub mod doctor_html;
pub mod eval;
pub mod github;
pub mod human;
pub mod json;
pub mod pretty;
pub mod render;
pub mod sarif;
pub mod stream;
pub mod trace;
pub mod tree;
pub mod wait;
pub mod wrap;
pub mod yaml;

use serde_json::{Map, Value, json};

/// Width of human output when the terminal's is unknown (a pipe, a file).
pub const DEFAULT_WIDTH: usize = 100;

/// The version of every report's shape; it changes only when a key is renamed or removed.
pub const REPORT_VERSION: u32 = 1;

/// A report: `kind`, `version` and `tool`, then the report's own keys in their order.
pub fn envelope(kind: &str, body: Value) -> Value {
    let mut m = Map::new();
    m.insert("kind".into(), kind.into());
    m.insert("version".into(), REPORT_VERSION.into());
    m.insert(
        "tool".into(),
        json!({"name": "kubectl-ksm", "version": env!("CARGO_PKG_VERSION")}),
    );
    if let Value::Object(b) = body {
        m.extend(b);
    }
    Value::Object(m)
}

/// A report (`envelope` of `kind` around `report`'s keys) written as pretty JSON or YAML, as
/// `-o json` and `-o yaml` print the documents of tree and trace.
pub fn write_report(
    out: &mut dyn std::io::Write,
    kind: &str,
    report: &impl serde::Serialize,
    yaml: bool,
) -> std::io::Result<()> {
    let doc = envelope(kind, serde_json::to_value(report).unwrap_or(Value::Null));
    if yaml {
        let mut text = String::new();
        self::yaml::write_document(&doc, &mut text);
        out.write_all(text.as_bytes())
    } else {
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)
    }
}

/// `1 object`, `2 objects`: a count with its noun, singular or plural as English wants.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {}", plural(noun))
    }
}

/// The plural of a noun of this tool's output (`ServiceSet` → `ServiceSets`,
/// `dependency` → `dependencies`, `match` → `matches`).
pub fn plural(noun: &str) -> String {
    if let Some(stem) = noun.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if noun.ends_with("ss") || noun.ends_with("sh") || noun.ends_with("ch") || noun.ends_with('x') {
        return format!("{noun}es");
    }
    format!("{noun}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_plurals() {
        assert_eq!(count(1, "object"), "1 object");
        assert_eq!(count(0, "object"), "0 objects");
        assert_eq!(count(2, "ServiceSet"), "2 ServiceSets");
        assert_eq!(count(3, "dependency"), "3 dependencies");
        assert_eq!(count(2, "key"), "2 keys");
        assert_eq!(count(2, "match"), "2 matches");
        assert_eq!(count(1, "error"), "1 error");
    }

    #[test]
    fn envelopes_lead_with_kind_and_version() {
        let v = envelope("LintReport", json!({"summary": {"errors": 0}}));
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["kind", "version", "tool", "summary"]);
        assert_eq!(v["version"], 1);
    }
}
