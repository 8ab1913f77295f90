//! `kubectl ksm lint PATH...`

use std::path::PathBuf;

use clap::Args;

use super::input::{self, InputError};
use super::{CliResult, EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat, formats};
use crate::core::lint::{self, Linter};
use crate::diag::{Diagnostic, Severity, Source};
use crate::output::diagnostics::{self as render, Summary};

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  kubectl ksm lint smp.yaml
  kubectl ksm lint manifests/ -o sarif > lint.sarif
  kubectl ksm lint --explain KSM204

Exit codes: 0 no errors, 1 errors (or warnings with --strict), 2 unreadable input.")]
pub struct LintArgs {
    /// Files or directories (searched recursively for *.yaml, *.yml, *.json); `-` reads stdin
    #[arg(value_name = "PATH", required_unless_present_any = ["explain", "list_rules"])]
    pub paths: Vec<PathBuf>,
    /// Fail (exit 1) on warnings too
    #[arg(long)]
    pub strict: bool,
    /// The lint configuration (default: the nearest .kubectl-ksm.yaml from the current
    /// directory up): excluded paths, disabled codes, the placeholders' severity
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Template placeholders (`${VAR}`, `$VAR`, `<name>`, KSM402): report them as errors, as
    /// warnings, or not at all (a repository of templates)
    /// [default: warning, or the configuration's lint.placeholders]
    #[arg(long, value_name = "SEVERITY", value_parser = ["error", "warning", "ignore"])]
    pub placeholders: Option<String>,
    /// Print the documentation of a code (lint, render or doctor: KSM204, KSM609, or its name)
    #[arg(long, value_name = "CODE")]
    pub explain: Option<String>,
    /// List every check with its code and title
    #[arg(long)]
    pub list_rules: bool,
    /// Output format
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "human", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
}

/// The formats of `lint -o`.
pub const FORMATS: &[OutputFormat] = &[
    OutputFormat::Human,
    OutputFormat::Json,
    OutputFormat::Sarif,
    OutputFormat::Github,
];

/// The problems of unreadable inputs get this code (documented with KSM001).
const UNREADABLE: &str = "KSM000"; // documented in core::lint::rules::load

pub fn run(args: &LintArgs, global: &GlobalArgs, io: &mut Io) -> CliResult {
    if let Some(code) = &args.explain {
        return super::explain(code, io);
    }
    if args.list_rules {
        for r in lint::all_rules() {
            writeln!(
                io.stdout,
                "{}  {:<8} {:<32} {}",
                r.code,
                r.severity.as_str(),
                r.name,
                r.title
            )?;
        }
        return Ok(EXIT_OK);
    }
    let config = super::lint_config::LintConfig::find(args.config.as_deref())?;
    let placeholders = args
        .placeholders
        .as_deref()
        .or(config.placeholders.as_deref())
        .unwrap_or("warning");
    let linter = Linter {
        disabled: config.disabled.clone(),
        placeholders: match placeholders {
            "error" => Some(Severity::Error),
            "ignore" => None,
            _ => Some(Severity::Warning),
        },
        ..Linter::default()
    };
    let mut summary = Summary::default();
    let mut warnings = false;
    let mut unreadable = false;
    let format = match args.output {
        OutputFormat::Json => render::Format::Json,
        OutputFormat::Sarif => render::Format::Sarif,
        OutputFormat::Github => render::Format::Github,
        _ => render::Format::Human {
            color: io.color,
            width: io.width,
        },
    };
    // Each file's diagnostics are written once it is linted, and dropped with its source:
    // memory is bounded by the largest file, not by the sum of them.
    let mut report = render::Stream::begin(io.stdout, format)?;
    let expanded = config.expand(&args.paths)?;
    for note in &expanded.notes {
        writeln!(io.stderr, "note: {note}")?;
    }
    // The SMPs and provider references of every input, checked together at the end.
    let mut providers = lint::rules::provider_name::Providers::default();
    for path in expanded.inputs {
        let source = path.and_then(|p| input::read_source(&p, io.stdin));
        let diagnostics = match source {
            Ok(source) => {
                let linted = lint::lint_source(&source, &linter);
                if global.verbosity > 0 {
                    use crate::output::count;
                    writeln!(
                        io.stderr,
                        "{}: {}, {} checked, {} skipped, {}",
                        source.name(),
                        count(linted.documents, "document"),
                        count(linted.linted, "object"),
                        linted.skipped,
                        count(linted.diagnostics.len(), "finding")
                    )?;
                }
                summary.documents += linted.documents;
                summary.objects += linted.linted;
                summary.skipped += linted.skipped;
                summary.suppressed += linted.suppressed;
                unreadable |= linted.unreadable;
                providers.absorb(linted.providers);
                linted.diagnostics
            }
            Err(InputError { path, message }) => {
                unreadable = true;
                vec![Diagnostic::error(UNREADABLE, message).in_file(&Source::new(path, ""))]
            }
        };
        summary.files += 1;
        summary.count(&diagnostics);
        warnings |= diagnostics.iter().any(|d| d.severity == Severity::Warning);
        report.write(&diagnostics)?;
    }
    let across = providers.findings();
    summary.count(&across);
    warnings |= across.iter().any(|d| d.severity == Severity::Warning);
    report.write(&across)?;
    report.finish(&summary)?;
    Ok(if unreadable {
        EXIT_ERROR
    } else if summary.errors > 0 || (args.strict && warnings) {
        EXIT_FINDINGS
    } else {
        EXIT_OK
    })
}
