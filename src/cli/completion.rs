//! `kubectl ksm completion SHELL`: the completion script for a shell, on stdout, as
//! `kubectl completion` and `flux completion` print theirs. The scripts complete
//! `kubectl-ksm`; `kubectl ksm <TAB>` completes through the `kubectl_complete-ksm` script
//! (kubectl 1.26 or later), which `generate` writes beside them.

use clap::{Args, ValueEnum};
use clap_complete::Shell;

use super::{CliResult, EXIT_OK, Io};

#[derive(Debug, Args)]
#[command(after_help = "\
Install:
  bash:        source <(kubectl-ksm completion bash)          # in ~/.bashrc
  zsh:         kubectl-ksm completion zsh > \"${fpath[1]}/_kubectl-ksm\"
  fish:        kubectl-ksm completion fish > ~/.config/fish/completions/kubectl-ksm.fish
  powershell:  kubectl-ksm completion powershell | Out-String | Invoke-Expression

`kubectl ksm <TAB>` is completed by kubectl itself (1.26 or later) through an executable named
kubectl_complete-ksm on PATH; the release archive ships it next to the binary.")]
pub struct CompletionArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

impl CompletionShell {
    pub fn shell(self) -> Shell {
        match self {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
            CompletionShell::Powershell => Shell::PowerShell,
        }
    }
}

/// The completion script of a shell (the same text `generate` writes into completions/).
pub fn script(shell: Shell) -> Vec<u8> {
    let mut cmd = super::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "kubectl-ksm", &mut buf);
    buf
}

pub fn run(args: &CompletionArgs, io: &mut Io) -> CliResult {
    io.stdout.write_all(&script(args.shell.shell()))?;
    Ok(EXIT_OK)
}
