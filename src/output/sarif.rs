//! SARIF 2.1.0 of diagnostics, for code scanning (GitHub, GitLab, Azure DevOps): one run of
//! the tool, its codes as the tool's rules, then its results (one each, serialized as the
//! report streams them).

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Serialize;

use super::pretty::Document;
use super::stream::{Format, Stream, Summary};
use crate::diag::{CodeInfo, Diagnostic, Severity};

/// SARIF 2.1.0 of `diags`, with `rules` as the codes of the run's tool (lint's checks,
/// doctor's findings). A diagnostic about an object rather than a place in a file is located
/// by the object's name (a logical location).
pub fn render(out: &mut dyn Write, diags: &[Diagnostic], rules: &[&CodeInfo]) -> io::Result<()> {
    let mut report = Stream::begin_with_rules(out, Format::Sarif, rules)?;
    report.write(diags)?;
    report.finish(&Summary::default())
}

/// Writes the log up to its run's results, left open.
pub(super) fn begin(doc: &mut Document, rules: &[&CodeInfo]) -> io::Result<()> {
    doc.begin_object()?;
    doc.entry("$schema", "https://json.schemastore.org/sarif-2.1.0.json")?;
    doc.entry("version", "2.1.0")?;
    doc.key("runs")?;
    doc.begin_array()?;
    doc.begin_object()?;
    doc.entry("tool", &Tool::new(rules))?;
    doc.key("results")?;
    doc.begin_array()
}

/// Closes the results, the run and the log.
pub(super) fn finish(doc: &mut Document) -> io::Result<()> {
    for _ in 0..4 {
        doc.end()?;
    }
    Ok(())
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The tool of the run: this one, with its codes.
#[derive(Serialize)]
pub(super) struct Tool<'a> {
    driver: Driver<'a>,
}

impl<'a> Tool<'a> {
    pub(super) fn new(rules: &[&'a CodeInfo]) -> Tool<'a> {
        Tool {
            driver: Driver {
                name: "kubectl-ksm",
                version: env!("CARGO_PKG_VERSION"),
                information_uri: "https://github.com/k0rdent/kcm",
                rules: rules.iter().map(|r| Rule::new(r)).collect(),
            },
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'a str,
    version: &'a str,
    information_uri: &'a str,
    rules: Vec<Rule<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule<'a> {
    id: &'a str,
    name: &'a str,
    short_description: Text<'a>,
    full_description: Text<'a>,
    help: Help<'a>,
    default_configuration: Level,
}

impl<'a> Rule<'a> {
    fn new(r: &'a CodeInfo) -> Rule<'a> {
        Rule {
            id: r.code,
            name: r.name,
            short_description: Text::from(r.title),
            full_description: Text::from(r.title),
            help: Help {
                text: r.docs,
                markdown: r.docs,
            },
            default_configuration: Level {
                level: level(r.severity),
            },
        }
    }
}

#[derive(Serialize)]
struct Text<'a> {
    text: Cow<'a, str>,
}

impl<'a> From<&'a str> for Text<'a> {
    fn from(text: &'a str) -> Text<'a> {
        Text {
            text: Cow::Borrowed(text),
        }
    }
}

#[derive(Serialize)]
struct Help<'a> {
    text: &'a str,
    markdown: &'a str,
}

#[derive(Serialize)]
struct Level {
    level: &'static str,
}

/// A diagnostic as a result of the run.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Item<'a> {
    rule_id: &'a str,
    level: &'static str,
    message: Text<'a>,
    locations: [Location<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_index: Option<usize>,
    /// The labels after the first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Related<'a>>,
}

/// A place in a file, or (for a diagnostic about an object) the object.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum Location<'a> {
    PhysicalLocation(Physical<'a>),
    LogicalLocations([Logical; 1]),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Physical<'a> {
    artifact_location: Artifact<'a>,
    region: Region,
}

#[derive(Serialize)]
struct Artifact<'a> {
    uri: &'a str,
}

/// Lines and columns; a diagnostic without a position is on the first line.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_column: Option<usize>,
}

impl Region {
    fn new(start: crate::diag::LineCol, end: crate::diag::LineCol) -> Region {
        Region {
            start_line: start.line,
            start_column: Some(start.column),
            end_line: Some(end.line),
            end_column: Some(end.column),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Logical {
    fully_qualified_name: String,
    kind: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Related<'a> {
    id: usize,
    message: Text<'a>,
    physical_location: Physical<'a>,
}

impl<'a> Item<'a> {
    pub(super) fn new(d: &'a Diagnostic, rules: &[&CodeInfo]) -> Item<'a> {
        let uri = d.file().unwrap_or("");
        let related = match &d.source {
            Some(s) => d
                .labels
                .iter()
                .enumerate()
                .skip(1)
                .map(|(id, l)| Related {
                    id,
                    message: Text::from(l.message.as_deref().unwrap_or_default()),
                    physical_location: Physical {
                        artifact_location: Artifact { uri },
                        region: Region::new(s.line_col(l.span.start), s.line_col(l.span.end)),
                    },
                })
                .collect(),
            None => Vec::new(),
        };
        let text = match &d.help {
            Some(h) => Cow::Owned(format!("{}\nhelp: {h}", d.message)),
            None => Cow::Borrowed(d.message.as_str()),
        };
        let location = match (&d.subject, d.file()) {
            (Some(subject), None) => Location::LogicalLocations([Logical {
                fully_qualified_name: subject.object.to_string(),
                kind: "resource",
            }]),
            _ => Location::PhysicalLocation(Physical {
                artifact_location: Artifact { uri },
                region: match d.position() {
                    Some((start, end)) => Region::new(start, end),
                    None => Region {
                        start_line: 1,
                        start_column: None,
                        end_line: None,
                        end_column: None,
                    },
                },
            }),
        };
        Item {
            rule_id: d.code,
            level: level(d.severity),
            message: Text { text },
            locations: [location],
            rule_index: rules.iter().position(|r| r.code == d.code),
            related_locations: related,
        }
    }
}
