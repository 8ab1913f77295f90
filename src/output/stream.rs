//! A report of diagnostics (lint's; doctor's findings as SARIF) written as they come, in any
//! of the formats, a file's worth at a time: a run over many files holds one file's
//! diagnostics, never the whole report. A [`Renderer`] renders a file's diagnostics where the
//! file was linted (any thread); the [`Stream`] writes them in input order.

use std::io::{self, Write};

use super::pretty::{Document, Pretty};
use super::{github, human, json, sarif};
use crate::diag::{CodeInfo, Diagnostic, Severity};

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

/// The formats of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human { color: bool, width: usize },
    Json,
    Sarif,
    Github,
}

/// A report written as its diagnostics come. JSON and SARIF are one pretty-printed document,
/// byte for byte as if serialized whole: the envelope is written as the report begins, each
/// diagnostic as it comes, the keys after them (the summary) as it ends.
pub struct Stream<'w> {
    out: Out<'w>,
    format: Format,
    /// The codes of the SARIF run's tool.
    rules: &'w [&'w CodeInfo],
}

/// Where a report writes: text as it is, or a JSON document.
enum Out<'w> {
    Text(&'w mut dyn Write),
    Document(Document<'w>),
}

/// Renders a file's diagnostics as its [`Stream`] writes them: the report's work that does not
/// depend on the files before, so that it can run where the file was linted.
#[derive(Clone)]
pub struct Renderer<'a> {
    format: Format,
    rules: &'a [&'a CodeInfo],
    /// The depth of the document's list of diagnostics (JSON and SARIF).
    depth: usize,
}

/// A file's diagnostics, rendered: one run of them, or several rendered apart (written in
/// order, never copied together).
pub struct Rendered {
    runs: Vec<Run>,
}

/// A run of diagnostics, rendered.
struct Run {
    bytes: Vec<u8>,
    /// Where each diagnostic's value ends in `bytes` (JSON and SARIF, whose stream writes
    /// the separators between them); empty for text.
    ends: Vec<usize>,
}

/// Diagnostics fewer than this are rendered on one thread whatever the threads.
const PARALLEL_RENDER_MIN: usize = 256;

impl Renderer<'_> {
    /// [`Renderer::render`] on `threads` threads, each a run of the diagnostics: every format
    /// renders a diagnostic on its own, so the runs written in order are the same bytes.
    pub fn render_on(&self, diags: &[Diagnostic], threads: usize) -> io::Result<Rendered> {
        if threads <= 1 || diags.len() < PARALLEL_RENDER_MIN {
            return self.render(diags);
        }
        let run = diags.len().div_ceil(threads);
        let runs: io::Result<Vec<Run>> = std::thread::scope(|scope| {
            let others: Vec<_> = diags[run..]
                .chunks(run)
                .map(|part| scope.spawn(move || self.run(part)))
                .collect();
            let first = self.run(&diags[..run]);
            std::iter::once(first)
                .chain(others.into_iter().map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                }))
                .collect()
        });
        Ok(Rendered { runs: runs? })
    }

    pub fn render(&self, diags: &[Diagnostic]) -> io::Result<Rendered> {
        Ok(Rendered {
            runs: vec![self.run(diags)?],
        })
    }

    fn run(&self, diags: &[Diagnostic]) -> io::Result<Run> {
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        match self.format {
            Format::Human { color, width } => human::render(&mut bytes, diags, color, width)?,
            Format::Github => github::render(&mut bytes, diags)?,
            Format::Json | Format::Sarif => {
                ends.reserve(diags.len());
                let item = Pretty::at(self.depth);
                for d in diags {
                    match self.format {
                        Format::Sarif => {
                            item.write(&mut bytes, &sarif::Item::new(d, self.rules))?
                        }
                        _ => item.write(&mut bytes, &json::Item::new(d))?,
                    }
                    ends.push(bytes.len());
                }
            }
        }
        Ok(Run { bytes, ends })
    }
}

impl<'w> Stream<'w> {
    /// A report of lint's diagnostics (its SARIF run describes lint's checks).
    pub fn begin(out: &'w mut dyn Write, format: Format) -> io::Result<Stream<'w>> {
        Self::begin_with_rules(out, format, crate::core::lint::all_rules())
    }

    /// A report whose SARIF run describes `rules` (lint's checks, doctor's findings).
    pub fn begin_with_rules(
        out: &'w mut dyn Write,
        format: Format,
        rules: &'w [&'w CodeInfo],
    ) -> io::Result<Stream<'w>> {
        let out = match format {
            Format::Human { .. } | Format::Github => Out::Text(out),
            Format::Json => {
                let mut doc = Document::new(out);
                json::begin(&mut doc)?;
                Out::Document(doc)
            }
            Format::Sarif => {
                let mut doc = Document::new(out);
                sarif::begin(&mut doc, rules)?;
                Out::Document(doc)
            }
        };
        Ok(Stream { out, format, rules })
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
            depth: match &self.out {
                Out::Document(doc) => doc.depth(),
                Out::Text(_) => 0,
            },
        }
    }

    /// Writes diagnostics rendered by [`Stream::renderer`], in the order they are given.
    pub fn write_rendered(&mut self, r: &Rendered) -> io::Result<()> {
        for run in &r.runs {
            match &mut self.out {
                Out::Text(out) => out.write_all(&run.bytes)?,
                Out::Document(doc) => {
                    let mut start = 0;
                    for &end in &run.ends {
                        doc.serialized(&run.bytes[start..end])?;
                        start = end;
                    }
                }
            }
        }
        Ok(())
    }

    /// Ends the report with the totals (the human and GitHub formats print its line).
    pub fn finish(self, summary: &Summary) -> io::Result<()> {
        match self.out {
            Out::Text(out) => writeln!(out, "{}", summary.line()),
            Out::Document(mut doc) => {
                match self.format {
                    Format::Sarif => sarif::finish(&mut doc)?,
                    _ => json::finish(&mut doc, summary)?,
                }
                doc.finish()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::*;
    use crate::api::ObjectId;
    use crate::diag::Source;

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

    /// Diagnostics of every shape, in two files: positioned with labels and help, naming a
    /// file only, about an object, about nothing, with an unknown code.
    fn diagnostics() -> Vec<Vec<Diagnostic>> {
        let a = Source::new(
            "a.yaml",
            "kind: X\nspec:\n  rule: \"a \\\"b\\\"\"\n  é: 1\n",
        );
        let b: Arc<Source> = Source::new("dir/b \"quoted\".yaml", "x: 1\n");
        let object = ObjectId {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: "ns".into(),
            name: "cm".into(),
        };
        vec![
            vec![
                Diagnostic::error("KSM204", "unguarded \"field\"\nsecond line")
                    .at(&a, 14..27)
                    .label("here")
                    .secondary(0..4, "and there")
                    .secondary(30..32, "é")
                    .help("guard it: has(self.x)"),
                Diagnostic::warning("KSM402", "placeholder").at(&a, 0..4),
            ],
            vec![],
            vec![
                Diagnostic::error("KSM001", "unreadable").in_file(&b),
                Diagnostic::warning("KSM609", "not ready").about(object, vec!["chain".into()]),
                Diagnostic::info("NOPE999", "no such code, no place"),
            ],
        ]
    }

    /// The report written by a stream, each file's diagnostics rendered by its renderer.
    fn streamed(format: Format, files: &[Vec<Diagnostic>], rules: &[&CodeInfo]) -> String {
        let summary = Summary {
            files: files.len(),
            errors: 3,
            ..Summary::default()
        };
        let mut out = Vec::new();
        let mut report = Stream::begin_with_rules(&mut out, format, rules).unwrap();
        let renderer = report.renderer();
        for (i, diags) in files.iter().enumerate() {
            if i % 2 == 0 {
                report
                    .write_rendered(&renderer.render(diags).unwrap())
                    .unwrap();
            } else {
                report.write(diags).unwrap();
            }
        }
        report.finish(&summary).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The report built whole as a value, pretty-printed in one go.
    fn whole(format: Format, files: &[Vec<Diagnostic>], rules: &[&CodeInfo]) -> String {
        let diags = files.iter().flatten();
        let doc = match format {
            Format::Json => super::super::envelope(
                "LintReport",
                json!({
                    "diagnostics": diags
                        .map(|d| serde_json::to_value(json::Item::new(d)).unwrap())
                        .collect::<Vec<Value>>(),
                    "summary": Summary { files: files.len(), errors: 3, ..Summary::default() },
                }),
            ),
            _ => json!({
                "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
                "version": "2.1.0",
                "runs": [{
                    "tool": sarif::Tool::new(rules),
                    "results": diags
                        .map(|d| serde_json::to_value(sarif::Item::new(d, rules)).unwrap())
                        .collect::<Vec<Value>>(),
                }],
            }),
        };
        serde_json::to_string_pretty(&doc).unwrap() + "\n"
    }

    #[test]
    fn json_and_sarif_stream_exactly_the_whole_pretty_printed_document() {
        let files = diagnostics();
        let lint = crate::core::lint::all_rules();
        let one = [vec![files[0][0].clone()]];
        for format in [Format::Json, Format::Sarif] {
            for rules in [lint, &[][..]] {
                for case in [&[][..], &[vec![]][..], &one[..], &files[..]] {
                    assert_eq!(
                        streamed(format, case, rules),
                        whole(format, case, rules),
                        "{format:?}, {} files, {} rules",
                        case.len(),
                        rules.len()
                    );
                }
            }
        }
    }

    #[test]
    fn text_formats_write_each_file_then_the_summary_line() {
        let files = diagnostics();
        for format in [
            Format::Github,
            Format::Human {
                color: false,
                width: 80,
            },
        ] {
            let mut want = Vec::new();
            for diags in &files {
                match format {
                    Format::Github => github::render(&mut want, diags).unwrap(),
                    _ => human::render(&mut want, diags, false, 80).unwrap(),
                }
            }
            want.extend_from_slice(b"3 files, 0 documents: 3 errors, 0 warnings, 0 skipped\n");
            assert_eq!(
                streamed(format, &files, &[]),
                String::from_utf8(want).unwrap()
            );
        }
    }
}
