//! Renderers of diagnostics: human (miette), JSON (versioned report), SARIF 2.1.0 and GitHub
//! Actions workflow annotations. Each writes into a `&mut dyn Write`.

use std::io::{self, Write};
use std::sync::Arc;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};
use serde_json::{Value, json};

use crate::core::codes;
use crate::diag::CodeInfo;
use crate::diag::{Diagnostic, MAX_SHOWN_LINE, Severity, Source};

/// Totals of a lint run.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub files: usize,
    pub documents: usize,
    /// Objects checked.
    pub objects: usize,
    pub errors: usize,
    pub warnings: usize,
    /// Notes: files not linted and why (a Helm template, not Kubernetes YAML).
    pub notes: usize,
    /// Objects of kinds lint does not check.
    pub skipped: usize,
    /// Findings silenced by an inline suppression or the configuration.
    pub suppressed: usize,
}

impl Summary {
    pub fn count(&mut self, diags: &[Diagnostic]) {
        for d in diags {
            match d.severity {
                Severity::Error => self.errors += 1,
                Severity::Warning => self.warnings += 1,
                Severity::Info => self.notes += 1,
            }
        }
    }

    /// `2 files, 3 documents: 1 error, 2 warnings, 1 skipped` (then notes and suppressed
    /// findings, when there are any)
    pub fn line(&self) -> String {
        let mut line = format!(
            "{}, {}: {}, {}, {} skipped",
            super::count(self.files, "file"),
            super::count(self.documents, "document"),
            super::count(self.errors, "error"),
            super::count(self.warnings, "warning"),
            self.skipped
        );
        if self.notes > 0 {
            line.push_str(&format!(", {}", super::count(self.notes, "note")));
        }
        if self.suppressed > 0 {
            line.push_str(&format!(", {} suppressed", self.suppressed));
        }
        line
    }
}

/// Adapter that lets miette read our sources without copying them.
///
/// miette finds the lines of a span by scanning its text from the start; on the whole file
/// that is linear in the offset, so a file with thousands of findings rendered in quadratic
/// time. Each read hands miette only the lines around the span, found through the source's
/// line index.
///
/// Excerpts come from the masked text when the source hides anything (Secret values).
struct Src(Arc<Source>, Option<Arc<str>>);

impl Src {
    fn new(source: &Arc<Source>) -> Src {
        Src(Arc::clone(source), source.masked_text())
    }
}

impl SourceCode for Src {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let (offset, window) = line_window(
            &self.0,
            span.offset()..span.offset() + span.len(),
            context_lines_before,
            context_lines_after,
        );
        let whole: &str = self.1.as_deref().unwrap_or(self.0.text());
        let text = &whole[window.clone()];
        let local = SourceSpan::new((span.offset() - offset).into(), span.len());
        let inner = text.read_span(&local, context_lines_before, context_lines_after)?;
        // miette's line and line count are counted from the start of the text it scanned:
        // shift them by the lines before the window, as if it had scanned the whole file.
        let lines_before = self.0.line_col(offset).line - 1;
        Ok(Box::new(MietteSpanContents::new_named(
            self.0.name().to_string(),
            inner.data(),
            SourceSpan::new((offset + inner.span().offset()).into(), inner.span().len()),
            lines_before + inner.line(),
            inner.column(),
            lines_before + inner.line_count(),
        )))
    }
}

/// The byte range of the whole lines around `span` (one more line of context each way than
/// asked, so that miette's own choice of context stays inside it), and its start.
fn line_window(
    source: &Source,
    span: std::ops::Range<usize>,
    before: usize,
    after: usize,
) -> (usize, std::ops::Range<usize>) {
    let first = source.line_col(span.start).line;
    let last = source.line_col(span.end).line;
    let start = source.offset_of(first.saturating_sub(before + 1).max(1), 0);
    let end = source.offset_of(last + after + 2, 0);
    (start, start..end.max(start))
}

/// A diagnostic as miette sees it.
struct Report<'a> {
    d: &'a Diagnostic,
    src: Option<Src>,
}

impl std::fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.d.message)
    }
}

impl std::fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.d.message)
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        let name = codes::find(self.d.code).map_or("", |r| r.name);
        if name.is_empty() {
            Some(Box::new(self.d.code))
        } else {
            Some(Box::new(format!("{}({name})", self.d.code)))
        }
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn std::fmt::Display + 'b>> {
        self.d
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.src.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.src.as_ref()?;
        Some(Box::new(self.d.labels.iter().enumerate().map(|(i, l)| {
            let span = SourceSpan::new(l.span.start.into(), l.span.len());
            if i == 0 {
                LabeledSpan::new_primary_with_span(l.message.clone(), span)
            } else {
                LabeledSpan::new_with_span(l.message.clone(), span)
            }
        })))
    }
}

/// Renders diagnostics for people: source excerpts with labels, help, and the file position.
pub fn human(out: &mut dyn Write, diags: &[Diagnostic], color: bool) -> io::Result<()> {
    human_width(out, diags, color, super::DEFAULT_WIDTH)
}

/// [`human`], laid out for `width` columns (the terminal's).
pub fn human_width(
    out: &mut dyn Write,
    diags: &[Diagnostic],
    color: bool,
    width: usize,
) -> io::Result<()> {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(width)
        .with_links(false);
    for d in diags {
        // A diagnostic without a position names its file in the message.
        let unpositioned;
        let d = match (d.labels.is_empty(), d.file()) {
            (true, Some(file)) => {
                unpositioned = Diagnostic {
                    message: format!("{file}: {}", d.message),
                    ..d.clone()
                };
                &unpositioned
            }
            _ => d,
        };
        // An excerpt of a very long line (minified JSON) is unreadable, and miette cannot pad
        // a label past column 65,535: name the position instead.
        let long_line;
        let d = match d.source.as_ref().zip(d.position()) {
            Some((source, (start, end))) if excerpt_too_wide(source, start.line, end.line) => {
                long_line = Diagnostic {
                    message: format!(
                        "{}:{}:{}: {}",
                        source.name(),
                        start.line,
                        start.column,
                        d.message
                    ),
                    labels: Vec::new(),
                    ..d.clone()
                };
                &long_line
            }
            _ => d,
        };
        let report = Report {
            d,
            src: d
                .source
                .as_ref()
                .filter(|_| !d.labels.is_empty())
                .map(Src::new),
        };
        let mut text = String::new();
        if handler.render_report(&mut text, &report).is_err() {
            text = format!("{}: {}\n", d.code, d.message);
        }
        writeln!(out, "{}", text.trim_end())?;
        writeln!(out)?;
    }
    Ok(())
}

/// Whether a line of the excerpt around `first..=last` (one line of context each side) is
/// too long to show.
fn excerpt_too_wide(source: &Source, first: usize, last: usize) -> bool {
    source.is_partial()
        || (first.saturating_sub(1).max(1)..=last + 1)
            .any(|line| source.line_text(line).len() > MAX_SHOWN_LINE)
}

fn location(d: &Diagnostic) -> Value {
    match d.position() {
        Some((start, end)) => json!({
            "line": start.line, "column": start.column, "endLine": end.line, "endColumn": end.column,
        }),
        None => Value::Null,
    }
}

fn diagnostic_json(d: &Diagnostic) -> Value {
    let labels: Vec<Value> = d
        .labels
        .iter()
        .skip(1)
        .filter_map(|l| {
            let s = d.source.as_ref()?;
            let (a, b) = (s.line_col(l.span.start), s.line_col(l.span.end));
            Some(json!({"message": l.message, "line": a.line, "column": a.column, "endLine": b.line, "endColumn": b.column}))
        })
        .collect();
    json!({
        "code": d.code,
        "name": codes::find(d.code).map(|r| r.name),
        "severity": d.severity,
        "message": d.message,
        "file": d.file(),
        "location": location(d),
        "related": labels,
        "help": d.help,
    })
}

/// The versioned JSON report of a lint run.
pub fn json_report(out: &mut dyn Write, diags: &[Diagnostic], summary: &Summary) -> io::Result<()> {
    let mut report = Stream::begin(out, Format::Json)?;
    report.write(diags)?;
    report.finish(summary)
}

/// The JSON report around its diagnostics (an empty list of them).
fn json_skeleton(summary: &Summary) -> Value {
    super::envelope(
        "LintReport",
        json!({
            "diagnostics": [],
            "summary": summary,
        }),
    )
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn sarif_rule(r: &CodeInfo) -> Value {
    json!({
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": r.title},
        "help": {"text": r.docs, "markdown": r.docs},
        "defaultConfiguration": {"level": sarif_level(r.severity)},
    })
}

/// SARIF 2.1.0 of lint's diagnostics, for code scanning (GitHub, GitLab, Azure DevOps).
pub fn sarif(out: &mut dyn Write, diags: &[Diagnostic]) -> io::Result<()> {
    sarif_with_rules(out, diags, crate::core::lint::all_rules())
}

/// SARIF 2.1.0 with `rules` as the codes of the run's tool component (lint's checks,
/// doctor's findings). A diagnostic about an object rather than a place in a file is located
/// by the object's name (a logical location).
pub fn sarif_with_rules(
    out: &mut dyn Write,
    diags: &[Diagnostic],
    rules: &[&CodeInfo],
) -> io::Result<()> {
    let mut report = Stream::begin_with_rules(out, Format::Sarif, rules)?;
    report.write(diags)?;
    report.finish(&Summary::default())
}

/// The SARIF log around its results (an empty list of them).
fn sarif_skeleton(rules: &[&CodeInfo]) -> Value {
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kubectl-ksm",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": "https://github.com/k0rdent/kcm",
                "rules": rules.iter().map(|r| sarif_rule(r)).collect::<Vec<_>>(),
            }},
            "results": [],
        }],
    })
}

fn sarif_result(d: &Diagnostic, rules: &[&CodeInfo]) -> Value {
    let region = match d.position() {
        Some((s, e)) => {
            json!({"startLine": s.line, "startColumn": s.column, "endLine": e.line, "endColumn": e.column})
        }
        None => json!({"startLine": 1}),
    };
    let uri = d.file().unwrap_or("");
    let related: Vec<Value> = d
        .labels
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, l)| {
            let s = d.source.as_ref()?;
            let (a, b) = (s.line_col(l.span.start), s.line_col(l.span.end));
            Some(json!({
                "id": i,
                "message": {"text": l.message.clone().unwrap_or_default()},
                "physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": a.line, "startColumn": a.column, "endLine": b.line, "endColumn": b.column}},
            }))
        })
        .collect();
    let text = match &d.help {
        Some(h) => format!("{}\nhelp: {h}", d.message),
        None => d.message.clone(),
    };
    let location = match (&d.subject, d.file()) {
        (Some(subject), None) => json!({"logicalLocations": [{
            "fullyQualifiedName": subject.object.to_string(),
            "kind": "resource",
        }]}),
        _ => json!({"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}),
    };
    let mut result = json!({
        "ruleId": d.code,
        "level": sarif_level(d.severity),
        "message": {"text": text},
        "locations": [location],
    });
    if let Some(idx) = rules.iter().position(|r| r.code == d.code) {
        result["ruleIndex"] = json!(idx);
    }
    if !related.is_empty() {
        result["relatedLocations"] = json!(related);
    }
    result
}

/// The formats of a lint report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human { color: bool, width: usize },
    Json,
    Sarif,
    Github,
}

/// A lint report written as its diagnostics come, a file's worth at a time, so that a run
/// over many files holds one file's diagnostics, never the whole report. The JSON and SARIF
/// documents come out exactly as if built whole: their list of diagnostics is spliced into
/// the pretty-printed document around it.
pub struct Stream<'w> {
    out: &'w mut dyn Write,
    format: Format,
    /// The codes of the SARIF run's tool.
    rules: &'w [&'w CodeInfo],
    /// Indentation of the list's items (JSON and SARIF).
    indent: String,
    written: usize,
}

/// Renders a file's diagnostics as its [`Stream`] writes them: the report's work that does not
/// depend on the files before, so that it can run where the file was linted.
#[derive(Clone)]
pub struct Renderer<'a> {
    format: Format,
    rules: &'a [&'a CodeInfo],
    indent: String,
}

/// A file's diagnostics, rendered.
pub struct Rendered {
    bytes: Vec<u8>,
    items: usize,
}

impl Renderer<'_> {
    pub fn render(&self, diags: &[Diagnostic]) -> io::Result<Rendered> {
        let mut out = Vec::new();
        match self.format {
            Format::Human { color, width } => human_width(&mut out, diags, color, width)?,
            Format::Github => github(&mut out, diags)?,
            Format::Json | Format::Sarif => {
                for (n, d) in diags.iter().enumerate() {
                    let value = match self.format {
                        Format::Sarif => sarif_result(d, self.rules),
                        _ => diagnostic_json(d),
                    };
                    let text = serde_json::to_string_pretty(&value).map_err(io::Error::other)?;
                    if n > 0 {
                        out.extend_from_slice(b",\n");
                    }
                    // JSON strings hold no raw line breaks: every line is the document's.
                    for (i, line) in text.split('\n').enumerate() {
                        if i > 0 {
                            out.push(b'\n');
                        }
                        out.extend_from_slice(self.indent.as_bytes());
                        out.extend_from_slice(line.as_bytes());
                    }
                }
            }
        }
        Ok(Rendered {
            bytes: out,
            items: diags.len(),
        })
    }
}

/// The key of the list that diagnostics are spliced into.
fn list_key(format: Format) -> &'static str {
    match format {
        Format::Sarif => "\"results\": [",
        _ => "\"diagnostics\": [",
    }
}

/// A skeleton document split around its empty list: (before and including `"key": [`,
/// from the closing `]` on, indentation of the list's items).
fn split_skeleton(
    format: Format,
    rules: &[&CodeInfo],
    summary: &Summary,
) -> (String, String, String) {
    let skeleton = match format {
        Format::Sarif => sarif_skeleton(rules),
        _ => json_skeleton(summary),
    };
    let text = serde_json::to_string_pretty(&skeleton).unwrap_or_default();
    let key = list_key(format);
    // The only unescaped `"key": [` in the document is the key itself.
    let at = text.find(key).map_or(text.len(), |i| i + key.len());
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let key_indent = text[line_start..].len() - text[line_start..].trim_start().len();
    (
        text[..at].to_string(),
        text[at..].to_string(),
        " ".repeat(key_indent + 2),
    )
}

impl<'w> Stream<'w> {
    pub fn begin(out: &'w mut dyn Write, format: Format) -> io::Result<Stream<'w>> {
        Self::begin_with_rules(out, format, crate::core::lint::all_rules())
    }

    /// A report whose SARIF run describes `rules` (lint's checks, doctor's findings).
    pub fn begin_with_rules(
        out: &'w mut dyn Write,
        format: Format,
        rules: &'w [&'w CodeInfo],
    ) -> io::Result<Stream<'w>> {
        let mut indent = String::new();
        if matches!(format, Format::Json | Format::Sarif) {
            let (before, _, items) = split_skeleton(format, rules, &Summary::default());
            out.write_all(before.as_bytes())?;
            indent = items;
        }
        Ok(Stream {
            out,
            format,
            rules,
            indent,
            written: 0,
        })
    }

    pub fn write(&mut self, diags: &[Diagnostic]) -> io::Result<()> {
        let rendered = self.renderer().render(diags)?;
        self.write_rendered(&rendered)
    }

    /// What renders a file's diagnostics for this report, on any thread.
    pub fn renderer(&self) -> Renderer<'w> {
        Renderer {
            format: self.format,
            rules: self.rules,
            indent: self.indent.clone(),
        }
    }

    /// Writes diagnostics rendered by [`Stream::renderer`], in the order they are given.
    pub fn write_rendered(&mut self, r: &Rendered) -> io::Result<()> {
        if r.items == 0 {
            return Ok(());
        }
        if matches!(self.format, Format::Json | Format::Sarif) {
            self.out
                .write_all(if self.written == 0 { b"\n" } else { b",\n" })?;
        }
        self.out.write_all(&r.bytes)?;
        self.written += r.items;
        Ok(())
    }

    /// Ends the report with the totals (the human and GitHub formats print its line).
    pub fn finish(self, summary: &Summary) -> io::Result<()> {
        match self.format {
            Format::Human { .. } | Format::Github => writeln!(self.out, "{}", summary.line()),
            Format::Json | Format::Sarif => {
                let (_, after, _) = split_skeleton(self.format, self.rules, summary);
                if self.written > 0 {
                    let outer = &self.indent[2..];
                    write!(self.out, "\n{outer}")?;
                }
                self.out.write_all(after.as_bytes())?;
                writeln!(self.out)
            }
        }
    }
}

/// GitHub Actions workflow commands (`::error file=...::message`).
pub fn github(out: &mut dyn Write, diags: &[Diagnostic]) -> io::Result<()> {
    for d in diags {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut props = Vec::new();
        if let Some(f) = d.file() {
            props.push(format!("file={}", escape_property(f)));
        }
        if let Some((s, e)) = d.position() {
            props.push(format!("line={}", s.line));
            props.push(format!("col={}", s.column));
            props.push(format!("endLine={}", e.line));
            props.push(format!("endColumn={}", e.column));
        }
        let name = codes::find(d.code).map_or("", |r| r.name);
        props.push(format!(
            "title={}",
            escape_property(format!("{} {name}", d.code).trim())
        ));
        let mut message = d.message.clone();
        if let (None, Some(subject)) = (d.file(), &d.subject) {
            message = format!("{}: {message}", subject.object);
        }
        if let Some(h) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(h);
        }
        writeln!(
            out,
            "::{level} {}::{}",
            props.join(","),
            escape_data(&message)
        )?;
    }
    Ok(())
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escapes_workflow_command_syntax() {
        assert_eq!(escape_data("50%\nx"), "50%25%0Ax");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn summary_line_pluralises() {
        let s = Summary {
            files: 1,
            documents: 2,
            objects: 2,
            errors: 1,
            warnings: 0,
            skipped: 3,
            ..Summary::default()
        };
        assert_eq!(
            s.line(),
            "1 file, 2 documents: 1 error, 0 warnings, 3 skipped"
        );
        let s = Summary {
            notes: 1,
            suppressed: 2,
            ..s
        };
        assert_eq!(
            s.line(),
            "1 file, 2 documents: 1 error, 0 warnings, 3 skipped, 1 note, 2 suppressed"
        );
    }
}
