//! `kubectl ksm lint PATH...`

use std::path::PathBuf;

use clap::Args;

use super::input::{self, InputError};
use super::{CliResult, EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, GlobalArgs, Io, OutputFormat, formats};
use crate::core::lint::{self, Linter};
use crate::diag::{Diagnostic, Severity, Source};
use crate::output::stream::{self as render, Rendered, Renderer, Summary};

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
    /// Files linted at once (default: the CPUs this process may use); the report is the same
    /// whatever the number, in input order
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
}

/// The formats of `lint -o`.
pub const FORMATS: &[OutputFormat] = &[
    OutputFormat::Human,
    OutputFormat::Json,
    OutputFormat::Sarif,
    OutputFormat::Github,
];

/// One input, read, linted and its findings rendered for the report (or why it could not be
/// read: `report` is None).
struct Linted {
    name: String,
    report: Option<lint::SourceReport>,
    diagnostics: Vec<Diagnostic>,
    rendered: Rendered,
}

/// Lints one input and renders its findings, on `threads` threads when it is large (the
/// files of a run linted one at a time: [`lint::lint_source_on`], [`Renderer::render_on`]).
fn lint_input(
    input: &Result<PathBuf, InputError>,
    linter: &Linter,
    renderer: &Renderer,
    stdin: &mut dyn std::io::Read,
    threads: usize,
) -> std::io::Result<Linted> {
    let (name, report, diagnostics) =
        match input.clone().and_then(|p| input::read_source(&p, stdin)) {
            Ok(source) => {
                let mut report = lint::lint_source_on(&source, linter, threads);
                let diagnostics = std::mem::take(&mut report.diagnostics);
                (source.name().to_string(), Some(report), diagnostics)
            }
            Err(InputError { path, message }) => {
                let d =
                    Diagnostic::error(UNREADABLE, message).in_file(&Source::new(path.clone(), ""));
                (path, None, vec![d])
            }
        };
    let rendered = renderer.render_on(&diagnostics, threads)?;
    Ok(Linted {
        name,
        report,
        diagnostics,
        rendered,
    })
}

/// The CPUs this process may run on (its affinity, cgroup quota), as the standard library
/// reads them; 1 when unknown.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Lints `inputs` on `jobs` threads, this one and `jobs - 1` helpers, each with its own
/// [`Linter`] (its memos are per thread), renders each file's findings there, and hands the
/// results to `each` in input order, on this thread: between two files of its own it takes
/// in what the helpers sent and hands over what is next in order (no thread waits for
/// every file's result, which cost a wake-up and a switch per file). A thread takes the next
/// input only while it is at most `jobs` ahead of the last one handed over (one of slack, so
/// a thread done early does not wait for a slower one; this thread, instead of waiting,
/// takes in the helpers' results), so at most `jobs + 1` sources and reports are held at
/// once: memory stays bounded by that many times the largest file, not by the sum of the
/// files. A failing `each` (stdout closed) stops the helpers after their current file.
fn lint_parallel(
    inputs: &[Result<PathBuf, InputError>],
    jobs: usize,
    make_linter: &(dyn Fn() -> Linter + Sync),
    renderer: &Renderer,
    each: &mut dyn FnMut(Linted) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex, mpsc};

    let window = jobs + 1;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // How many results were handed over, and a wake-up for helpers waiting on the window.
    let handed = (Mutex::new(0usize), Condvar::new());
    let (tx, rx) = mpsc::channel::<(usize, std::io::Result<Linted>)>();
    std::thread::scope(|scope| {
        for _ in 1..jobs.min(inputs.len()) {
            let tx = tx.clone();
            let (next, stop, handed) = (&next, &stop, &handed);
            scope.spawn(move || {
                let linter = make_linter();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= inputs.len() {
                        return;
                    }
                    {
                        let (lock, wake) = handed;
                        let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
                        while i >= *done + window && !stop.load(Ordering::Relaxed) {
                            done = wake.wait(done).unwrap_or_else(|e| e.into_inner());
                        }
                    }
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let linted =
                        lint_input(&inputs[i], &linter, renderer, &mut std::io::empty(), 1);
                    if tx.send((i, linted)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, std::io::Result<Linted>> = BTreeMap::new();
        let mut written = 0;
        // Hands over the results that are next in order; how many are handed over by now.
        let mut hand_over =
            |waiting: &mut BTreeMap<usize, std::io::Result<Linted>>| -> std::io::Result<usize> {
                let before = written;
                while let Some(linted) = waiting.remove(&written) {
                    linted.and_then(&mut *each)?;
                    written += 1;
                }
                if written != before {
                    let (lock, wake) = &handed;
                    *lock.lock().unwrap_or_else(|e| e.into_inner()) = written;
                    wake.notify_all();
                }
                Ok(written)
            };
        let linter = make_linter();
        let result = (|| -> std::io::Result<()> {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= inputs.len() {
                    break;
                }
                // Past the window: an earlier input is still on a helper; take in results
                // until this one is within it.
                loop {
                    waiting.extend(rx.try_iter());
                    if i < hand_over(&mut waiting)? + window {
                        break;
                    }
                    match rx.recv() {
                        Ok((j, linted)) => {
                            waiting.insert(j, linted);
                        }
                        Err(_) => break,
                    }
                }
                let linted = lint_input(&inputs[i], &linter, renderer, &mut std::io::empty(), 1);
                waiting.insert(i, linted);
                waiting.extend(rx.try_iter());
                hand_over(&mut waiting)?;
            }
            for (i, linted) in rx.iter() {
                waiting.insert(i, linted);
                hand_over(&mut waiting)?;
            }
            hand_over(&mut waiting).map(|_| ())
        })();
        if result.is_err() {
            stop.store(true, Ordering::Relaxed);
            handed.1.notify_all();
        }
        result
    })
}

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
    let disabled = config.disabled.clone();
    let placeholders = match placeholders {
        "error" => Some(Severity::Error),
        "ignore" => None,
        _ => Some(Severity::Warning),
    };
    let make_linter = || Linter {
        disabled: disabled.clone(),
        placeholders,
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
    let mut across_inputs = lint::Across::default();
    let verbose = global.verbosity > 0;
    let renderer = report.renderer();
    let mut each = |linted: Linted| -> std::io::Result<()> {
        match linted.report {
            Some(r) => {
                if verbose {
                    use crate::output::count;
                    writeln!(
                        io.stderr,
                        "{}: {}, {} checked, {} skipped, {}",
                        linted.name,
                        count(r.documents, "document"),
                        count(r.linted, "object"),
                        r.skipped,
                        count(linted.diagnostics.len(), "finding")
                    )?;
                }
                summary.documents += r.documents;
                summary.objects += r.linted;
                summary.skipped += r.skipped;
                summary.suppressed += r.suppressed;
                unreadable |= r.unreadable;
                providers.absorb(r.providers);
                across_inputs.absorb(r.across);
            }
            None => unreadable = true,
        }
        summary.files += 1;
        summary.count(&linted.diagnostics);
        warnings |= linted
            .diagnostics
            .iter()
            .any(|d| d.severity == Severity::Warning);
        report.write_rendered(&linted.rendered)
    };
    let inputs = expanded.inputs;
    let jobs = usize::from(args.jobs.unwrap_or(0));
    let jobs = if jobs == 0 { default_jobs() } else { jobs };
    // Standard input is read by this thread; one file or one job needs no other thread per
    // file (a large file is linted on every job: `lint_input`).
    let stdin = inputs
        .iter()
        .any(|p| p.as_ref().is_ok_and(|p| p.as_os_str() == "-"));
    if jobs <= 1 || inputs.len() < 2 || stdin {
        let linter = make_linter();
        // One file at a time: each large one is linted on every job.
        for input in &inputs {
            each(lint_input(input, &linter, &renderer, io.stdin, jobs)?)?;
        }
    } else {
        lint_parallel(&inputs, jobs, &make_linter, &renderer, &mut each)?;
    }
    let mut across = providers.findings();
    across.extend(across_inputs.findings());
    // The configuration's disabled codes hold across inputs too.
    across.retain(|d| !disabled.contains(&d.code));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Files to lint: the first large (slow), the others small, and one unreadable.
    fn inputs(dir: &std::path::Path) -> Vec<Result<PathBuf, InputError>> {
        std::fs::create_dir_all(dir).unwrap();
        let smp = |i: usize| {
            format!(
                "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\n\
                 metadata:\n  name: p{i}\nspec:\n  selector: {{}}\n  unknownField: {i}\n"
            )
        };
        (0..120)
            .map(|i| {
                if i == 7 {
                    return Err(InputError {
                        path: "gone.yaml".into(),
                        message: "no such file".into(),
                    });
                }
                let path = dir.join(format!("f{i:03}.yaml"));
                let text = if i == 0 {
                    (0..2_000).map(smp).collect()
                } else {
                    smp(i)
                };
                std::fs::write(&path, text).unwrap();
                Ok(path)
            })
            .collect()
    }

    #[test]
    fn results_are_handed_over_in_input_order_and_a_failure_stops_the_run() {
        let dir = std::env::temp_dir().join(format!("ksm-parallel-{}", std::process::id()));
        let inputs = inputs(&dir);
        let mut out = Vec::new();
        let stream = render::Stream::begin(&mut out, render::Format::Github).unwrap();
        let renderer = stream.renderer();
        for jobs in [2, 3, 8] {
            let mut names = Vec::new();
            lint_parallel(&inputs, jobs, &Linter::default, &renderer, &mut |l| {
                names.push(l.name);
                Ok(())
            })
            .unwrap();
            let want: Vec<String> = inputs
                .iter()
                .map(|i| match i {
                    Ok(p) => p.display().to_string(),
                    Err(e) => e.path.clone(),
                })
                .collect();
            assert_eq!(names, want, "{jobs} jobs");
            // A failure (stdout closed) is returned, and nothing is handed over after it.
            let mut handed = 0;
            let err = lint_parallel(&inputs, jobs, &Linter::default, &renderer, &mut |_| {
                handed += 1;
                if handed == 50 {
                    Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
                } else {
                    Ok(())
                }
            })
            .unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe);
            assert_eq!(handed, 50, "{jobs} jobs");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
