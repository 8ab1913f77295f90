//! The one diagnostic model and the sources it points into. PURE: no I/O.
//!
//! Every finding of every subcommand is a [`Diagnostic`]: a stable code, a severity, a
//! message, labelled byte spans in a [`Source`], and help. Renderers live in `output/`.

pub mod json;
pub mod source;
pub mod yaml;

use std::ops::Range;
use std::sync::Arc;

pub use source::{LineCol, MAX_SHOWN_LINE, Source};

use crate::api::ObjectId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    /// Something the user should know that is not a problem (e.g. a service that renders no
    /// object because it is being uninstalled).
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// A code's identity and documentation.
#[derive(Debug)]
pub struct CodeInfo {
    /// Stable code, e.g. `KSM204`.
    pub code: &'static str,
    /// Kebab-case name.
    pub name: &'static str,
    /// Default severity.
    pub severity: Severity,
    /// One line.
    pub title: &'static str,
    /// Markdown: what it finds, why it matters, (an example,) the fix.
    pub docs: &'static str,
}

/// A labelled range of a source.
#[derive(Debug, Clone)]
pub struct Label {
    pub span: Range<usize>,
    pub message: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    /// The source the labels point into (None for a diagnostic about no particular file).
    pub source: Option<Arc<Source>>,
    /// The primary label first.
    pub labels: Vec<Label>,
    pub help: Option<String>,
    /// The Kubernetes object the diagnostic is about, when it is about one rather than a
    /// place in a file (doctor's findings).
    pub subject: Option<Subject>,
}

/// The object a diagnostic is about, and the chain of objects that leads to it (from the
/// provider down, as `Kind/namespace/name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub object: ObjectId,
    pub chain: Vec<String>,
}

impl Diagnostic {
    pub fn new(code: &'static str, severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity,
            message: message.into(),
            source: None,
            labels: Vec::new(),
            help: None,
            subject: None,
        }
    }

    pub fn info(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Info, message)
    }

    /// Says which object the diagnostic is about, and the chain that leads to it.
    pub fn about(mut self, object: ObjectId, chain: Vec<String>) -> Self {
        self.subject = Some(Subject { object, chain });
        self
    }

    pub fn error(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, message)
    }

    pub fn warning(code: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Warning, message)
    }

    /// Names the file without pointing at a position in it (e.g. an unreadable file).
    pub fn in_file(mut self, source: &Arc<Source>) -> Self {
        self.source = Some(Arc::clone(source));
        self
    }

    /// Points the diagnostic at `span` of `source` (the primary label). An empty span is
    /// widened to the character at that position so that every renderer shows a column range.
    pub fn at(mut self, source: &Arc<Source>, span: Range<usize>) -> Self {
        let mut span = source.clamp(span);
        if span.is_empty() {
            let text = source.text();
            if let Some(c) = text[span.start..].chars().next().filter(|c| *c != '\n') {
                span.end = span.start + c.len_utf8();
            } else if let Some(c) = text[..span.start]
                .chars()
                .next_back()
                .filter(|c| *c != '\n')
            {
                span.start -= c.len_utf8();
            }
        }
        self.source = Some(Arc::clone(source));
        self.labels.insert(
            0,
            Label {
                span,
                message: None,
            },
        );
        self
    }

    /// Sets the text of the primary label.
    pub fn label(mut self, message: impl Into<String>) -> Self {
        if let Some(l) = self.labels.first_mut() {
            l.message = Some(message.into());
        }
        self
    }

    /// Adds a secondary label in the same source.
    pub fn secondary(mut self, span: Range<usize>, message: impl Into<String>) -> Self {
        let span = match &self.source {
            Some(s) => s.clamp(span),
            None => span,
        };
        self.labels.push(Label {
            span,
            message: Some(message.into()),
        });
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Start and end (exclusive) positions of the primary label.
    pub fn position(&self) -> Option<(LineCol, LineCol)> {
        let source = self.source.as_ref()?;
        let span = &self.labels.first()?.span;
        Some((source.line_col(span.start), source.line_col(span.end)))
    }

    pub fn file(&self) -> Option<&str> {
        self.source.as_ref().map(|s| s.name())
    }
}

/// Orders the diagnostics of one source by position, then code, so output is deterministic.
pub fn sort_by_position(diags: &mut [Diagnostic]) {
    diags.sort_by_key(|d| (d.labels.first().map_or(0, |l| l.span.start), d.code));
}
