//! The human report against miette, which drew it until our own renderer replaced it: every
//! diagnostic of every testdata file, and generated ones (multi-line, empty and out-of-range
//! spans, tabs, CRLF and lone CR, wide and combining characters, masked values, labels
//! with line breaks, many labels on a line), with and without colour and at several widths,
//! must come out byte for byte as miette's graphical handler writes it with the settings
//! the tool used (unicode theme, links off, the terminal's width).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use kubectl_ksm::core::codes;
use kubectl_ksm::core::lint::{Linter, lint_source};
use kubectl_ksm::diag::{Diagnostic, Label, Severity, Source};
use kubectl_ksm::output::human;
use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};

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

fn miette_render(
    out: &mut Vec<u8>,
    diags: &[Diagnostic],
    color: bool,
    width: usize,
) -> std::io::Result<()> {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(width)
        .with_links(false);
    for d in diags {
        // What is drawn is the tool's own choice (a file named in the message, a long line
        // not shown), not miette's.
        let d = human::displayed(d);
        let report = Report {
            d: &d,
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

fn ours(diags: &[Diagnostic], color: bool, width: usize) -> String {
    let mut out = Vec::new();
    human::render(&mut out, diags, color, width).unwrap();
    String::from_utf8(out).unwrap()
}

fn theirs(diags: &[Diagnostic], color: bool, width: usize) -> String {
    let mut out = Vec::new();
    miette_render(&mut out, diags, color, width).unwrap();
    String::from_utf8(out).unwrap()
}

fn assert_same(d: &Diagnostic, what: &str) {
    for color in [false, true] {
        for width in [30, 80, 100, 160] {
            let one = std::slice::from_ref(d);
            let (a, b) = (ours(one, color, width), theirs(one, color, width));
            assert!(
                a == b,
                "{what}: colour {color}, width {width}: {d:#?}\n--- ours\n{a}\n--- miette\n{b}"
            );
        }
    }
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            files(&path, out);
        } else if path
            .extension()
            .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
        {
            out.push(path);
        }
    }
}

#[test]
fn every_testdata_finding_is_drawn_as_miette_draws_it() {
    let mut paths = Vec::new();
    files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata"),
        &mut paths,
    );
    paths.sort();
    let linter = Linter::default();
    let mut drawn = 0;
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let source = Source::new(path.display().to_string(), text);
        for d in lint_source(&source, &linter).diagnostics {
            assert_same(&d, &path.display().to_string());
            drawn += 1;
        }
    }
    assert!(drawn > 80, "only {drawn} findings in testdata");
}

/// A seeded generator: the cases are the same on every run.
struct Gen(fastrand::Rng);

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        self.0.usize(..n.max(1))
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const PIECES: &[&str] = &[
    "spec",
    ":",
    " ",
    "  ",
    "readinessRule",
    "self.status.ready",
    "- name: x",
    "\t",
    "é",
    "字段",
    "e\u{301}",
    "😀",
    "\"quoted\"",
    "#",
    "0",
    "12345",
    "{",
    "}",
    "[a, b]",
    "\u{1b}[31mred\u{1b}[0m",
    "ingress-nginx/ingress-nginx",
    "x-y-z",
];
const BREAKS: &[&str] = &["\n", "\n", "\n", "\n", "\r\n", "\r"];
const MESSAGES: &[&str] = &[
    "unknown field \"x\"",
    "`self.status.availableReplicas` is read without a has() guard: Kubernetes omits this field when it is zero and the rule then fails with \"no such key\" instead of returning false",
    "a very-long-hyphenated-identifier-that-must-be-split-somewhere-in-the-middle/of/a/path and more",
    "Größe: 字段 ist nicht erlaubt, entferne es bitte und versuche es noch einmal mit weniger",
    "line one\nline two\n\nline four after an empty one",
    "",
];
const LABELS: &[&str] = &[
    "may be missing",
    "here",
    "first\nsecond",
    "",
    "a label that is rather long for one line of output",
];

fn generated(g: &mut Gen) -> Diagnostic {
    let mut text = String::new();
    for _ in 0..1 + g.below(12) {
        for _ in 0..g.below(8) {
            text.push_str(g.pick(PIECES));
        }
        text.push_str(g.pick(BREAKS));
    }
    if g.below(4) == 0 {
        text.pop();
    }
    let source = Source::new(format!("gen-{}.yaml", g.below(1000)), text.clone());
    let boundaries: Vec<usize> = (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    if g.below(5) == 0 && text.len() > 4 {
        let a = boundaries[g.below(boundaries.len())];
        let b = boundaries[g.below(boundaries.len())];
        source.hide(a.min(b)..a.max(b));
    }
    let mut labels = Vec::new();
    let most = if g.below(10) == 0 { 25 } else { 4 };
    for _ in 0..1 + g.below(most) {
        let a = boundaries[g.below(boundaries.len())];
        let b = match g.below(4) {
            0 => a,
            1 => boundaries[g.below(boundaries.len())].max(a),
            _ => (a + 1 + g.below(12)).min(text.len()),
        };
        let b = if text.is_char_boundary(b) { b } else { a };
        let message = match g.below(6) {
            0 => None,
            _ => Some(g.pick(LABELS).to_string()),
        };
        labels.push(Label {
            span: a..b,
            message,
        });
    }
    Diagnostic {
        code: ["KSM101", "KSM204", "KSM999", "KSM402"][g.below(4)],
        severity: [Severity::Error, Severity::Warning, Severity::Info][g.below(3)],
        message: g.pick(MESSAGES).to_string(),
        source: Some(source),
        labels,
        help: match g.below(3) {
            0 => None,
            _ => Some(g.pick(MESSAGES).to_string()),
        },
        subject: None,
    }
}

#[test]
fn generated_findings_are_drawn_as_miette_draws_them() {
    let mut g = Gen(fastrand::Rng::with_seed(0x2545_f491_4f6c_dd1d));
    for case in 0..3_000 {
        let d = generated(&mut g);
        assert_same(&d, &format!("generated case {case}"));
    }
}

#[test]
fn findings_without_a_source_are_drawn_as_miette_draws_them() {
    for message in MESSAGES {
        let d = Diagnostic::new("KSM101", Severity::Error, *message);
        assert_same(&d, "no source");
    }
}

#[test]
fn a_label_past_the_end_of_its_source_is_reported_as_miette_reports_it() {
    let source = Source::new("short.yaml", "a: 1\n");
    let d = Diagnostic {
        labels: vec![Label {
            span: 40..44,
            message: Some("beyond".into()),
        }],
        source: Some(Arc::clone(&source)),
        ..Diagnostic::new("KSM101", Severity::Error, "out of range")
    };
    assert_same(&d, "out of range");
}

#[test]
fn a_report_whose_findings_repeat_their_words_is_drawn_as_miette_draws_it() {
    // The report fills a text once and draws it again from memory: the same message under
    // another severity has another mark, and help follows its own indents.
    let mut g = Gen(fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15));
    let firsts: Vec<Diagnostic> = (0..200).map(|_| generated(&mut g)).collect();
    let mut diags = firsts.clone();
    for d in &firsts {
        for severity in [Severity::Error, Severity::Warning, Severity::Info] {
            diags.push(Diagnostic {
                severity,
                ..d.clone()
            });
        }
    }
    for color in [false, true] {
        for width in [30, 80, 160] {
            let (a, b) = (ours(&diags, color, width), theirs(&diags, color, width));
            assert!(a == b, "colour {color}, width {width}");
        }
    }
}
