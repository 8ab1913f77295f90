//! Diagnostics for people (miette): source excerpts with labels, help, and the file
//! position.

use std::io::{self, Write};
use std::sync::Arc;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};

use crate::core::codes;
use crate::diag::{Diagnostic, MAX_SHOWN_LINE, Severity, Source};

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

/// Renders diagnostics for people, laid out for `width` columns (the terminal's, or
/// [`super::DEFAULT_WIDTH`]): source excerpts with labels, help, and the file position.
pub fn render(
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
