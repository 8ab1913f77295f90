//! The command line: clap definitions, one file per subcommand, and the exit-code contract.
//!
//! Exit codes everywhere: 0 clean, 1 findings (lint errors, a rule false or failing, not
//! ready), 2 usage, input or tool error. A closed stdout (`| head`) is not an error.

pub mod check;
pub mod complete;
pub mod doctor;
pub mod eval;
pub mod generate;
pub mod input;
pub mod lint;
pub mod render;
pub mod run;

use std::ffi::OsString;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

pub const EXIT_OK: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

const AFTER_HELP: &str = "\
Exit codes: 0 clean, 1 findings (lint errors, a rule false or failing, not ready), 2 usage, input or tool error.

Examples:
  kubectl ksm lint manifests/
  kubectl ksm eval 'has(self.status.readyReplicas)' -f deployment.yaml
  kubectl ksm check smp.yaml --objects cluster-dump.yaml";

#[derive(Debug, Parser)]
#[command(
    name = "kubectl-ksm",
    bin_name = "kubectl ksm",
    version,
    about = "Lint, evaluate, render and diagnose k0rdent Service Management (KSM) objects",
    long_about = "kubectl-ksm is a kubectl plugin for k0rdent Service Management (KSM). It lints \
StateManagementProvider, ServiceSet, ServiceTemplate, ClusterDeployment and MultiClusterService \
manifests against the real kcm CRDs, compiles and type-checks readiness rules exactly as kcm \
does and evaluates them with the verdict kcm's controller would reach, renders the Flux objects \
a ServiceSet produces, diagnoses stuck services live or from a dump, and runs the Flux adapter \
(`run`) on the same translation as `render`.",
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

#[derive(Debug, Args, Clone)]
pub struct GlobalArgs {
    /// Output format (each subcommand lists the formats it supports)
    #[arg(short = 'o', long = "output", global = true, value_enum)]
    pub output: Option<OutputFormat>,
    /// When to use colour; NO_COLOR and a non-terminal output turn `auto` off
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Print more detail: per-file counts (lint), explanations of true results too (eval, check)
    #[arg(short = 'v', long = "verbose", global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// For people: colours, source excerpts, tables
    Human,
    /// Machine-readable JSON
    Json,
    /// SARIF 2.1.0 (code scanning)
    Sarif,
    /// GitHub Actions workflow annotations
    Github,
    /// YAML (multi-document, ready for `kubectl apply -f -`)
    Yaml,
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
    /// Render the Flux objects (HelmRelease, Kustomization) a ServiceSet produces
    Render(render::RenderArgs),
    /// Diagnose stuck or failed services: SMP → ServiceSet → Flux object → source
    Doctor(doctor::DoctorArgs),
    /// Run the Flux adapter controller: ServiceSets in, HelmReleases and Kustomizations out
    Run(run::RunArgs),
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
    /// Colour decided from --color, NO_COLOR and whether stdout is a terminal.
    pub color: bool,
    /// stderr is a terminal (progress indicators go there only then).
    pub stderr_tty: bool,
}

/// The clap command, for completions, man pages and help.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Runs the CLI with the process's streams and returns the exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> u8 {
    let stdout = io::stdout();
    let stdout_tty = stdout.is_terminal();
    let mut out = stdout.lock();
    let mut err = io::stderr().lock();
    let mut stdin = io::stdin().lock();
    let env_no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let stderr_tty = io::stderr().is_terminal();
    run(
        args,
        &mut out,
        &mut err,
        &mut stdin,
        Terminal {
            stdout_tty,
            stderr_tty,
            no_color_env: env_no_color,
        },
    )
}

/// What the process knows of its terminal and environment.
#[derive(Debug, Clone, Copy)]
pub struct Terminal {
    pub stdout_tty: bool,
    pub stderr_tty: bool,
    pub no_color_env: bool,
}

/// Runs the CLI against the given streams.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    stdin: &mut dyn Read,
    terminal: Terminal,
) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    EXIT_OK
                }
                _ => EXIT_ERROR,
            };
            let text = if terminal.stdout_tty && !terminal.no_color_env {
                e.render().ansi().to_string()
            } else {
                e.render().to_string()
            };
            let target: &mut dyn Write = if code == EXIT_OK { stdout } else { stderr };
            let _ = target.write_all(text.as_bytes());
            return code;
        }
    };
    let color = match cli.global.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal.stdout_tty && !terminal.no_color_env,
    };
    let mut io = Io {
        stdout,
        stderr,
        stdin,
        color,
        stderr_tty: terminal.stderr_tty,
    };
    let result = match &cli.command {
        Command::Lint(a) => lint::run(a, &cli.global, &mut io),
        Command::Eval(a) => eval::run(a, &cli.global, &mut io),
        Command::Check(a) => check::run(a, &cli.global, &mut io),
        Command::Render(a) => render::run(a, &cli.global, &mut io),
        Command::Doctor(a) => doctor::run(a, &cli.global, &mut io),
        Command::Run(a) => run::run(a, &cli.global, &mut io),
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

pub type CliResult = Result<u8, CliError>;

/// The output format a subcommand uses, refusing the ones it does not support.
pub fn output_format(
    global: &GlobalArgs,
    command: &str,
    supported: &[OutputFormat],
) -> Result<OutputFormat, CliError> {
    let chosen = global.output.unwrap_or(supported[0]);
    if supported.contains(&chosen) {
        Ok(chosen)
    } else {
        let names: Vec<_> = supported
            .iter()
            .filter_map(|f| f.to_possible_value())
            .map(|v| v.get_name().to_string())
            .collect();
        Err(CliError::Fatal(format!(
            "`kubectl ksm {command}` supports -o {}",
            names.join("|")
        )))
    }
}

/// `--explain CODE`: the documentation of any KSM code (lint, render, doctor), from the one
/// registry.
pub fn explain(code: &str, io: &mut Io) -> CliResult {
    let Some(info) = crate::core::codes::find(code) else {
        return Err(CliError::Fatal(format!(
            "no check named {code:?}; `kubectl ksm lint --list-rules` lists them"
        )));
    };
    writeln!(io.stdout, "{}", crate::core::codes::explain(info))?;
    Ok(EXIT_OK)
}

/// Paths given on the command line, as owned `PathBuf`s.
pub type Paths = Vec<PathBuf>;
