//! The command line: clap definitions, one file per subcommand, and the exit-code contract.
//!
//! Exit codes everywhere: 0 clean, 1 findings (lint errors, a rule false or failing, not
//! ready), 2 usage, input or tool error. A closed stdout (`| head`) is not an error.

pub mod check;
pub mod complete;
pub mod completion;
pub mod diff;
pub mod doctor;
mod doctor_watch;
pub mod eval;
pub mod generate;
pub mod input;
pub mod lint;
pub mod lint_config;
pub mod logs;
pub mod mcp;
pub mod render;
pub mod run;
pub mod trace;
pub mod tree;
pub mod version;
pub mod wait;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

use crate::cluster::ConnectOptions;

pub const EXIT_OK: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_ERROR: u8 = 2;
/// `wait`: the timeout passed first.
pub const EXIT_TIMEOUT: u8 = 3;

const AFTER_HELP: &str = "\
Exit codes: 0 clean, 1 findings (lint errors, a rule false or failing, not ready, drift), 2 usage, input or tool error.

Examples:
  kubectl ksm lint manifests/
  kubectl ksm eval 'has(self.status.readyReplicas)' -f deployment.yaml
  kubectl ksm check smp.yaml --objects cluster-dump.yaml
  kubectl ksm --context prod doctor -A";

#[derive(Debug, Parser)]
#[command(
    name = "kubectl-ksm",
    bin_name = "kubectl ksm",
    version,
    about = "Lint, evaluate, render and diagnose k0rdent Service Management (KSM) objects",
    long_about = "kubectl-ksm is a kubectl plugin for k0rdent Service Management (KSM). It lints \
StateManagementProvider, ServiceSet, ServiceTemplate, ClusterDeployment and MultiClusterService \
manifests against the real kcm CRDs, compiles and type-checks readiness rules exactly as kcm \
does and evaluates them with the verdict kcm's controller would reach, renders the objects a \
ServiceSet's adapter creates (the Sveltos Profile or ClusterProfile of kcm's default provider, the \
Flux HelmReleases and Kustomizations of the Flux adapter) and compares them with the cluster \
(`diff`), diagnoses stuck services of either provider live or from a dump, and runs the Flux \
adapter (`run`) on the same translation as `render`.",
    after_help = AFTER_HELP,
    propagate_version = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every subcommand takes, before or after its name (as kubectl's global flags).
#[derive(Debug, Args, Clone)]
pub struct GlobalArgs {
    /// When to use colour; NO_COLOR, TERM=dumb and a non-terminal output turn `auto` off
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Log level, as kubectl's -v: 1 more detail (per-file counts, explanations of true
    /// results), 4 debug logs, 6 every HTTP request, 7 with its headers
    #[arg(
        short = 'v',
        long = "v",
        global = true,
        value_name = "LEVEL",
        default_value_t = 0,
        value_parser = clap::value_parser!(u8).range(0..=10)
    )]
    pub verbosity: u8,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// kubectl's connection flags, taken before or after the subcommand.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Cluster options (live reads)")]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: KUBECONFIG, which may list several files, then
    /// ~/.kube/config, then the in-cluster service account)
    #[arg(long, value_name = "PATH", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use
    #[arg(long, value_name = "NAME", global = true)]
    pub context: Option<String>,
    /// The namespace (default: the context's)
    #[arg(short = 'n', long, value_name = "NAMESPACE", global = true)]
    pub namespace: Option<String>,
    /// How long to wait for one request: seconds, or a duration (30, 30s, 1m); 0 waits forever
    /// [default: 60s, the API server's own limit for a get or a list]
    #[arg(long, value_name = "DURATION", global = true, value_parser = crate::api::duration::request_timeout)]
    pub request_timeout: Option<std::time::Duration>,
    /// User to impersonate for the requests (e.g. the SMP's service account,
    /// system:serviceaccount:kcm-system:ksm-flux-sa, as kcm evaluates its rules)
    #[arg(long = "as", value_name = "USER", global = true)]
    pub as_user: Option<String>,
    /// Group to impersonate (repeat for several); needs --as
    #[arg(long = "as-group", value_name = "GROUP", global = true)]
    pub as_group: Vec<String>,
}

impl From<&ClusterArgs> for ConnectOptions {
    fn from(a: &ClusterArgs) -> ConnectOptions {
        ConnectOptions {
            kubeconfig: a.kubeconfig.clone(),
            context: a.context.clone(),
            namespace: a.namespace.clone(),
            request_timeout: a.request_timeout,
            as_user: a.as_user.clone(),
            as_group: a.as_group.clone(),
        }
    }
}

/// Every output format; each subcommand accepts (and its help lists) only those it supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// For people: colours, source excerpts, tables
    Human,
    /// A versioned JSON report
    Json,
    /// YAML
    Yaml,
    /// SARIF 2.1.0 (code scanning)
    Sarif,
    /// GitHub Actions workflow annotations
    Github,
    /// One self-contained HTML page (no external assets; opens offline)
    Html,
}

/// The value parser of a subcommand's `-o`: only the formats it supports, in its help too.
pub fn formats(supported: &'static [OutputFormat]) -> impl TypedValueParser<Value = OutputFormat> {
    PossibleValuesParser::new(
        supported
            .iter()
            .filter_map(OutputFormat::to_possible_value)
            .collect::<Vec<PossibleValue>>(),
    )
    .map(|s| OutputFormat::from_str(&s, true).expect("a possible value of OutputFormat"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lint StateManagementProvider, ServiceSet, ServiceTemplate, ClusterDeployment and
    /// MultiClusterService manifests
    Lint(lint::LintArgs),
    /// Evaluate a readiness rule against saved objects, with an explanation
    Eval(eval::EvalArgs),
    /// Check a StateManagementProvider against saved objects: the conditions kcm would set
    Check(check::CheckArgs),
    /// Render the objects a ServiceSet's adapter creates: Sveltos Profile/ClusterProfile (kcm's
    /// default provider) or Flux HelmRelease/Kustomization
    Render(render::RenderArgs),
    /// Compare the rendered objects with the live ones: exit 1 on drift, as `flux diff`
    Diff(diff::DiffArgs),
    /// Diagnose stuck or failed services: SMP → ServiceSet → Profile or Flux object → source
    Doctor(doctor::DoctorArgs),
    /// The fleet as a tree: MultiClusterServices and the clusters they match, each cluster's
    /// ServiceSets and their services
    Tree(tree::TreeArgs),
    /// Who deployed a release or Flux object, from which template, and why it is in its
    /// state: provider object → ServiceSet → ClusterDeployment or MultiClusterService →
    /// ServiceTemplate
    Trace(trace::TraceArgs),
    /// Wait until every service of a ClusterDeployment, MultiClusterService or ServiceSet is
    /// deployed: exit 0, 1 on a failure that will not heal, 3 on timeout
    Wait(wait::WaitArgs),
    /// Run the Flux adapter controller: ServiceSets in, HelmReleases and Kustomizations out
    Run(run::RunArgs),
    /// Serve the Model Context Protocol on stdio: the verbs as read-only tools for assistants
    Mcp(mcp::McpArgs),
    /// Print the version, git commit and build date
    Version(version::VersionArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell)
    Completion(completion::CompletionArgs),
    /// Write shell completions and man pages (for packagers and the repository)
    #[command(hide = true)]
    Generate(generate::GenerateArgs),
    /// Completion protocol used by the kubectl_complete-ksm script
    #[command(name = "__complete", hide = true)]
    Complete(complete::CompleteArgs),
}

/// Everything a subcommand needs from the process, so tests can run it in-process.
pub struct Io<'a> {
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
    pub stdin: &'a mut dyn Read,
    /// Colour decided from --color, NO_COLOR, TERM and whether stdout is a terminal.
    pub color: bool,
    /// stderr is a terminal that takes cursor movements (progress lines go there only then).
    pub stderr_tty: bool,
    /// stdout is a terminal that takes cursor movements (`wait` redraws its lines there).
    pub stdout_tty: bool,
    /// Columns of human output: the terminal's, COLUMNS, or 100.
    pub width: usize,
}

/// The clap command, for completions, man pages and help.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Runs the CLI with the process's streams and returns the exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> u8 {
    let stdout = io::stdout();
    let stdout_tty = stdout.is_terminal();
    // The standard stdout flushes at every line break: a report of 20 MB written line by line
    // would spend most of its time in write calls. A terminal keeps that (lines appear as they
    // come); a pipe or a file gets a buffer, flushed at the end.
    // The streams are not locked for the whole run: `mcp` serves the protocol on them from
    // other threads, and logs go to stderr from any thread.
    let mut out: Box<dyn Write> = if stdout_tty {
        Box::new(stdout)
    } else {
        Box::new(io::BufWriter::with_capacity(1 << 16, stdout))
    };
    let mut err = io::stderr();
    let mut stdin = io::stdin();
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let width = if stdout_tty {
        terminal_size::terminal_size().map(|(w, _)| usize::from(w.0))
    } else {
        None
    };
    let code = run(
        args,
        &mut out,
        &mut err,
        &mut stdin,
        Terminal {
            stdout_tty,
            stderr_tty: io::stderr().is_terminal(),
            no_color_env: env("NO_COLOR").is_some(),
            dumb: env("TERM").is_some_and(|t| t == "dumb"),
            width: width.or_else(|| {
                env("COLUMNS")
                    .and_then(|c| c.to_str().and_then(|c| c.trim().parse().ok()))
                    .filter(|&c: &usize| c > 0)
            }),
        },
    );
    match out.flush() {
        Ok(()) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => code,
        Err(e) => {
            let _ = writeln!(err, "error: cannot write output: {e}");
            EXIT_ERROR
        }
    }
}

/// What the process knows of its terminal and environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal {
    pub stdout_tty: bool,
    pub stderr_tty: bool,
    /// NO_COLOR is set.
    pub no_color_env: bool,
    /// TERM=dumb: no colour, no cursor movements.
    pub dumb: bool,
    /// The terminal's width (or COLUMNS), when known.
    pub width: Option<usize>,
}

pub use crate::output::DEFAULT_WIDTH;
/// Narrowest width human output is laid out for.
const MIN_WIDTH: usize = 40;

/// Runs the CLI against the given streams.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    stdin: &mut dyn Read,
    terminal: Terminal,
) -> u8 {
    // A reader that goes away (`| head`) ends the output, not the run: the exit code still
    // says what was found.
    let mut stdout = PipeGuard::new(stdout);
    let mut stderr = PipeGuard::new(stderr);
    let color_possible = !terminal.no_color_env && !terminal.dumb;
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    EXIT_OK
                }
                _ => EXIT_ERROR,
            };
            let text = if terminal.stdout_tty && color_possible {
                e.render().ansi().to_string()
            } else {
                e.render().to_string()
            };
            let target: &mut dyn Write = if code == EXIT_OK {
                &mut stdout
            } else {
                &mut stderr
            };
            let _ = target.write_all(text.as_bytes());
            return code;
        }
    };
    let color = match cli.global.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal.stdout_tty && color_possible,
    };
    if !matches!(cli.command, Command::Run(_)) {
        // `run` sets up its own logs (JSON lines for the cluster's log pipeline).
        logs::init(cli.global.verbosity, terminal.stderr_tty && color_possible);
    }
    let mut io = Io {
        stdout: &mut stdout,
        stderr: &mut stderr,
        stdin,
        color,
        stderr_tty: terminal.stderr_tty && !terminal.dumb,
        stdout_tty: terminal.stdout_tty && !terminal.dumb,
        width: terminal.width.unwrap_or(DEFAULT_WIDTH).max(MIN_WIDTH),
    };
    let g = &cli.global;
    let result = match &cli.command {
        Command::Lint(a) => lint::run(a, g, &mut io),
        Command::Eval(a) => eval::run(a, g, &mut io),
        Command::Check(a) => check::run(a, g, &mut io),
        Command::Render(a) => render::run(a, g, &mut io),
        Command::Diff(a) => diff::run(a, g, &mut io),
        Command::Doctor(a) => doctor::run(a, g, &mut io),
        Command::Tree(a) => tree::run(a, g, &mut io),
        Command::Trace(a) => trace::run(a, g, &mut io),
        Command::Wait(a) => wait::run(a, g, &mut io),
        Command::Run(a) => run::run(a, g, &mut io),
        Command::Mcp(a) => mcp::run(a, g, &mut io),
        Command::Version(a) => version::run(a, &mut io),
        Command::Completion(a) => completion::run(a, &mut io),
        Command::Generate(a) => generate::run(a, &mut io),
        Command::Complete(a) => complete::run(a, &mut io),
    };
    match result {
        Ok(code) => code,
        Err(CliError::BrokenPipe) => EXIT_OK,
        Err(CliError::Fatal(msg)) => {
            let _ = writeln!(io.stderr, "error: {msg}");
            EXIT_ERROR
        }
    }
}

/// A writer that turns a closed pipe into the end of the output: once the reader has gone,
/// every write succeeds without writing, so a subcommand finishes and returns its exit code.
pub struct PipeGuard<'a> {
    inner: &'a mut dyn Write,
    closed: bool,
}

impl<'a> PipeGuard<'a> {
    pub fn new(inner: &'a mut dyn Write) -> Self {
        PipeGuard {
            inner,
            closed: false,
        }
    }

    /// Whether the reader went away.
    pub fn closed(&self) -> bool {
        self.closed
    }
}

impl Write for PipeGuard<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            r => r,
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => r,
        }
    }
}

/// A failure that ends a subcommand with exit code 2 (or 0 for a closed pipe).
#[derive(Debug)]
pub enum CliError {
    BrokenPipe,
    Fatal(String),
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            CliError::BrokenPipe
        } else {
            CliError::Fatal(format!("cannot write output: {e}"))
        }
    }
}

impl From<input::InputError> for CliError {
    fn from(e: input::InputError) -> Self {
        CliError::Fatal(e.to_string())
    }
}

impl From<crate::cluster::ClusterError> for CliError {
    fn from(e: crate::cluster::ClusterError) -> Self {
        CliError::Fatal(e.message)
    }
}

pub type CliResult = Result<u8, CliError>;

/// `--explain CODE`: the documentation of any KSM code (lint, render, doctor), from the one
/// registry.
/// Leaves what a one-shot command read to the end of the process instead of freeing it map
/// by map: freeing the objects of a fleet's dump takes a fifth of `tree --from` (perf, 2,000
/// ServiceSets), and the process exits right after. Never in a loop: a watch frees each
/// snapshot it replaces.
pub(crate) fn leave_to_exit<T>(read: T) {
    if !SERVING.load(std::sync::atomic::Ordering::Relaxed) {
        std::mem::forget(read);
    }
}

/// This process serves requests (`mcp`): a command's objects are freed after it, not left
/// to the exit.
pub(crate) static SERVING: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

pub fn explain(code: &str, io: &mut Io) -> CliResult {
    let Some(info) = crate::core::codes::find(code) else {
        return Err(CliError::Fatal(format!(
            "no check named {code:?}; `kubectl ksm lint --list-rules` lists them"
        )));
    };
    writeln!(io.stdout, "{}", crate::core::codes::explain(info))?;
    Ok(EXIT_OK)
}

/// A label selector given with `-l`: its text (sent to the API server) and its parsed form
/// (for saved objects).
#[derive(Debug, Clone)]
pub struct SelectorArg {
    pub text: String,
    pub selector: crate::api::selector::Selector,
}

/// Parses `-l` as kubectl does (`a=b,c!=d,e in (x,y),!f`).
pub fn selector_flag(s: &str) -> Result<SelectorArg, String> {
    Ok(SelectorArg {
        text: s.to_string(),
        selector: crate::api::selector::Selector::parse_string(s)?,
    })
}

/// Paths given on the command line, as owned `PathBuf`s.
pub type Paths = Vec<PathBuf>;

#[cfg(test)]
mod tests {
    use super::*;

    fn run_in(args: &[&str], terminal: Terminal) -> (u8, String) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let argv = std::iter::once("kubectl-ksm")
            .chain(args.iter().copied())
            .map(OsString::from);
        let code = run(argv, &mut out, &mut err, &mut io::empty(), terminal);
        (code, String::from_utf8_lossy(&out).into_owned())
    }

    const GUIDE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/examples/smp-flux-from-guide.yaml"
    );

    #[test]
    fn a_terminal_gets_colour_unless_dumb_or_no_color() {
        let tty = Terminal {
            stdout_tty: true,
            stderr_tty: true,
            ..Terminal::default()
        };
        let (code, text) = run_in(&["lint", GUIDE], tty);
        assert_eq!(code, EXIT_OK);
        assert!(text.contains('\x1b'), "colour on a terminal");
        for t in [
            Terminal { dumb: true, ..tty },
            Terminal {
                no_color_env: true,
                ..tty
            },
        ] {
            let (_, text) = run_in(&["lint", GUIDE], t);
            assert!(!text.contains('\x1b'), "{t:?}: {text}");
        }
        // --color always is a request, even on a dumb terminal.
        let (_, text) = run_in(
            &["--color", "always", "lint", GUIDE],
            Terminal { dumb: true, ..tty },
        );
        assert!(text.contains('\x1b'));
    }

    #[test]
    fn human_output_follows_the_terminal_width() {
        for width in [60, 140] {
            let (_, text) = run_in(
                &["lint", GUIDE],
                Terminal {
                    width: Some(width),
                    ..Terminal::default()
                },
            );
            // Prose wraps; quoted source lines and the file position cannot.
            let excerpt = |l: &str| {
                let t = l.trim_start();
                t.starts_with('·')
                    || t.starts_with("╭─[")
                    || t.split_once(" │")
                        .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
            };
            let widest = text
                .lines()
                .filter(|l| !excerpt(l))
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(0);
            assert!(widest <= width, "{width}: {widest}\n{text}");
            assert!(widest > width - 25, "{width}: {widest}\n{text}");
        }
    }

    #[test]
    fn a_closed_pipe_ends_the_output_not_the_run() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let problems = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/lint/smp-problems.yaml"
        );
        let argv = ["kubectl-ksm", "lint", problems].map(OsString::from);
        let code = run(
            argv,
            &mut Closed,
            &mut Vec::new(),
            &mut io::empty(),
            Terminal::default(),
        );
        assert_eq!(code, EXIT_FINDINGS);
    }
}
