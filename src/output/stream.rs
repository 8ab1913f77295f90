//! A report of diagnostics (lint's; doctor's findings as SARIF) written as they come, in any
//! of the formats, a file's worth at a time: a run over many files holds one file's
//! diagnostics, never the whole report. A [`Renderer`] renders a file's diagnostics where the
//! file was linted (any thread); the [`Stream`] writes them in input order.

use std::io::{self, Write};

use super::pretty::{Document, Pretty};
use super::{github, human, json, sarif};
use crate::core::threads::beside;
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

    /// Adds another's totals.
    pub fn add(&mut self, other: &Summary) {
        self.files += other.files;
        self.documents += other.documents;
        self.objects += other.objects;
        self.errors += other.errors;
        self.warnings += other.warnings;
        self.notes += other.notes;
        self.skipped += other.skipped;
        self.suppressed += other.suppressed;
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

impl Rendered {
    /// The bytes it holds.
    pub fn size(&self) -> usize {
        self.runs
            .iter()
            .map(|r| match r {
                Run::Text(t) => t.iter().map(<[u8]>::len).sum(),
                Run::Items { bytes, ends } => bytes.len() + ends.len() * size_of::<usize>(),
            })
            .sum()
    }
}

/// A run of diagnostics, rendered.
enum Run {
    /// Text (human, GitHub), in pieces.
    Text(Pieces),
    /// JSON or SARIF values, one after another, and where each ends in `bytes` (the stream
    /// writes the separators between them).
    Items { bytes: Vec<u8>, ends: Vec<usize> },
}

/// Text written in pieces of about [`PIECE`] bytes: a large report grows by a new piece,
/// never by copying all it holds into a buffer twice as large (which touched about three
/// times the report's size in fresh memory: a tenth of a large file's lint).
#[derive(Default)]
struct Pieces {
    full: Vec<Vec<u8>>,
    last: Vec<u8>,
}

/// The size of a piece of [`Pieces`].
const PIECE: usize = 64 << 10;

impl Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.last.len() + buf.len() > PIECE && !self.last.is_empty() {
            let full = std::mem::replace(&mut self.last, Vec::with_capacity(PIECE.max(buf.len())));
            self.full.push(full);
        }
        self.last.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Pieces {
    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.full.iter().chain([&self.last]).map(Vec::as_slice)
    }
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
        let runs: io::Result<Vec<Run>> = beside(
            || self.run(&diags[..run]),
            diags[run..].chunks(run).map(|part| move || self.run(part)),
        )
        .into_iter()
        .collect();
        Ok(Rendered { runs: runs? })
    }

    pub fn render(&self, diags: &[Diagnostic]) -> io::Result<Rendered> {
        Ok(Rendered {
            runs: vec![self.run(diags)?],
        })
    }

    fn run(&self, diags: &[Diagnostic]) -> io::Result<Run> {
        let mut text = Pieces::default();
        match self.format {
            Format::Human { color, width } => human::render(&mut text, diags, color, width)?,
            Format::Github => github::render(&mut text, diags)?,
            Format::Json | Format::Sarif => {
                let mut bytes = Vec::new();
                let mut ends = Vec::with_capacity(diags.len());
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
                return Ok(Run::Items { bytes, ends });
            }
        }
        Ok(Run::Text(text))
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
            match (&mut self.out, run) {
                (Out::Text(out), Run::Text(text)) => {
                    for piece in text.iter() {
                        out.write_all(piece)?;
                    }
                }
                (Out::Document(doc), Run::Items { bytes, ends }) => {
                    let mut start = 0;
                    for &end in ends {
                        doc.serialized(&bytes[start..end])?;
                        start = end;
                    }
                }
                // Rendered by the renderer of a stream of another format.
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "diagnostics rendered for a report of another format",
                    ));
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

    #[test]
    fn a_report_of_many_pieces_is_written_whole_and_in_order() {
        // Several pieces' worth of findings, one of them longer than a piece alone.
        let long = "word ".repeat(PIECE / 4);
        let source = Source::new("a.yaml", "a: 1\n");
        let diags: Vec<Diagnostic> = (0..2_000)
            .map(|i| {
                let message = if i == 700 {
                    long.clone()
                } else {
                    format!("finding {i}")
                };
                Diagnostic::warning("KSM402", message).at(&source, 0..1)
            })
            .collect();
        let format = Format::Human {
            color: false,
            width: 80,
        };
        let mut want = Vec::new();
        human::render(&mut want, &diags, false, 80).unwrap();
        assert!(want.len() > 4 * PIECE);
        for threads in [1, 3] {
            let mut out = Vec::new();
            let mut report = Stream::begin(&mut out, format).unwrap();
            let rendered = report.renderer().render_on(&diags, threads).unwrap();
            let pieces: usize = rendered
                .runs
                .iter()
                .map(|r| match r {
                    Run::Text(p) => p.iter().count(),
                    Run::Items { .. } => 0,
                })
                .sum();
            assert!(pieces > 4, "{pieces} pieces");
            report.write_rendered(&rendered).unwrap();
            assert!(out == want, "{threads} threads");
        }
    }

    #[test]
    fn a_run_of_another_format_is_refused() {
        let diags = &diagnostics()[0];
        let mut out = Vec::new();
        let human = Stream::begin(&mut out, Format::Json)
            .unwrap()
            .renderer()
            .render(diags)
            .unwrap();
        let mut out = Vec::new();
        let mut report = Stream::begin(&mut out, Format::Sarif).unwrap();
        assert!(report.write_rendered(&human).is_ok());
        let text = Stream::begin(&mut Vec::new(), Format::Github)
            .unwrap()
            .renderer()
            .render(diags)
            .unwrap();
        let err = report.write_rendered(&text).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
