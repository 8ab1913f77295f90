//! The versioned JSON report of lint's diagnostics: the envelope, `diagnostics` (one object
//! each, serialized as the report streams them) and the run's `summary`.

use std::io::{self, Write};

use serde::Serialize;

use super::pretty::Document;
use super::stream::{Format, Stream, Summary};
use crate::core::codes;
use crate::diag::{Diagnostic, LineCol, Severity};

/// The report's kind.
const KIND: &str = "LintReport";

/// The whole JSON report of `diags`.
pub fn render(out: &mut dyn Write, diags: &[Diagnostic], summary: &Summary) -> io::Result<()> {
    let mut report = Stream::begin(out, Format::Json)?;
    report.write(diags)?;
    report.finish(summary)
}

/// Writes the report up to its list of diagnostics, left open.
pub(super) fn begin(doc: &mut Document) -> io::Result<()> {
    doc.begin_object()?;
    if let serde_json::Value::Object(head) = super::envelope(KIND, serde_json::json!({})) {
        for (key, value) in &head {
            doc.entry(key, value)?;
        }
    }
    doc.key("diagnostics")?;
    doc.begin_array()
}

/// Closes the list of diagnostics and ends the report with the run's totals.
pub(super) fn finish(doc: &mut Document, summary: &Summary) -> io::Result<()> {
    doc.end()?;
    doc.entry("summary", summary)?;
    doc.end()
}

/// A diagnostic of the report.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Item<'a> {
    code: &'a str,
    name: Option<&'a str>,
    severity: Severity,
    message: &'a str,
    file: Option<&'a str>,
    location: Option<Region>,
    /// The labels after the first.
    related: Vec<Related<'a>>,
    help: Option<&'a str>,
}

/// Where a diagnostic or one of its labels is, from its first line and column to its last.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
}

impl Region {
    fn new((start, end): (LineCol, LineCol)) -> Region {
        Region {
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Related<'a> {
    message: Option<&'a str>,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
}

impl<'a> Item<'a> {
    pub(super) fn new(d: &'a Diagnostic) -> Item<'a> {
        let related = match &d.source {
            Some(s) => d
                .labels
                .iter()
                .skip(1)
                .map(|l| {
                    let (a, b) = (s.line_col(l.span.start), s.line_col(l.span.end));
                    Related {
                        message: l.message.as_deref(),
                        line: a.line,
                        column: a.column,
                        end_line: b.line,
                        end_column: b.column,
                    }
                })
                .collect(),
            None => Vec::new(),
        };
        Item {
            code: d.code,
            name: codes::find(d.code).map(|r| r.name),
            severity: d.severity,
            message: &d.message,
            file: d.file(),
            location: d.position().map(Region::new),
            related,
            help: d.help.as_deref(),
        }
    }
}
