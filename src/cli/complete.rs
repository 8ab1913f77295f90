//! `kubectl-ksm __complete ARGS... WORD`: Cobra's completion protocol, which kubectl uses for
//! plugins through the `kubectl_complete-ksm` script. Prints one candidate per line
//! (`candidate\tdescription`), then `:<directive>`: 4 = no file completion, 0 = default
//! (files).

use clap::Args;

use super::{CliResult, EXIT_OK, Io};

#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// The words after `kubectl ksm`; the last one is the word being completed
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

const DIRECTIVE_DEFAULT: u8 = 0;
const DIRECTIVE_NO_FILE: u8 = 4;

pub fn run(args: &CompleteArgs, io: &mut Io) -> CliResult {
    let (candidates, directive) = complete(&args.words);
    for (value, help) in candidates {
        if help.is_empty() {
            writeln!(io.stdout, "{value}")?;
        } else {
            writeln!(io.stdout, "{value}\t{help}")?;
        }
    }
    writeln!(io.stdout, ":{directive}")?;
    Ok(EXIT_OK)
}

/// Candidates for the last word, given the words before it.
pub fn complete(words: &[String]) -> (Vec<(String, String)>, u8) {
    let root = super::command();
    let (current, before) = match words.split_last() {
        Some((last, rest)) => (last.as_str(), rest),
        None => ("", &[][..]),
    };
    // Walk down the subcommands named so far.
    let mut cmd = &root;
    let mut expecting_value_of: Option<&clap::Arg> = None;
    for w in before {
        if let Some(arg) = expecting_value_of.take() {
            let _ = arg;
            continue;
        }
        if let Some(sub) = cmd
            .get_subcommands()
            .find(|s| !s.is_hide_set() && s.get_name() == w)
        {
            cmd = sub;
            continue;
        }
        if let Some(arg) = find_flag(&root, cmd, w)
            && arg.get_action().takes_values()
            && !w.contains('=')
        {
            expecting_value_of = Some(arg);
        }
    }
    if let Some(arg) = expecting_value_of {
        let values: Vec<_> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set() && v.get_name().starts_with(current))
            .map(|v| (v.get_name().to_string(), help_text(v.get_help())))
            .collect();
        return if values.is_empty() {
            (values, DIRECTIVE_DEFAULT)
        } else {
            (values, DIRECTIVE_NO_FILE)
        };
    }
    if current.starts_with('-') {
        let mut out = Vec::new();
        for arg in cmd
            .get_arguments()
            .chain(root.get_arguments().filter(|a| a.is_global_set()))
        {
            if arg.is_hide_set() {
                continue;
            }
            if let Some(long) = arg.get_long() {
                let flag = format!("--{long}");
                if flag.starts_with(current) && !out.iter().any(|(f, _)| f == &flag) {
                    out.push((flag, help_text(arg.get_help())));
                }
            }
        }
        return (out, DIRECTIVE_NO_FILE);
    }
    let subs: Vec<_> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name().starts_with(current))
        .map(|s| (s.get_name().to_string(), help_text(s.get_about())))
        .collect();
    if !subs.is_empty() || cmd.get_name() == root.get_name() {
        return (subs, DIRECTIVE_NO_FILE);
    }
    (Vec::new(), DIRECTIVE_DEFAULT)
}

fn find_flag<'a>(
    root: &'a clap::Command,
    cmd: &'a clap::Command,
    word: &str,
) -> Option<&'a clap::Arg> {
    let name = word.split('=').next().unwrap_or(word);
    let matches = |a: &&clap::Arg| {
        name.strip_prefix("--")
            .is_some_and(|l| a.get_long() == Some(l))
            || (name.len() == 2 && name.starts_with('-') && a.get_short() == name.chars().nth(1))
    };
    cmd.get_arguments()
        .find(matches)
        .or_else(|| root.get_arguments().find(matches))
}

fn help_text(s: Option<&clap::builder::StyledStr>) -> String {
    s.map(|s| s.to_string().lines().next().unwrap_or("").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn completes_subcommands() {
        let (c, d) = complete(&words(&[""]));
        let names: Vec<_> = c.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "lint",
                "eval",
                "check",
                "render",
                "diff",
                "doctor",
                "tree",
                "trace",
                "wait",
                "run",
                "mcp",
                "version",
                "completion"
            ]
        );
        assert_eq!(d, DIRECTIVE_NO_FILE);
        let (c, _) = complete(&words(&["ch"]));
        assert_eq!(c[0].0, "check");
    }

    #[test]
    fn completes_flag_values_and_files() {
        let (c, d) = complete(&words(&["lint", "-o", ""]));
        let names: Vec<_> = c.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"sarif"), "{names:?}");
        assert_eq!(d, DIRECTIVE_NO_FILE);
        let (c, d) = complete(&words(&["lint", ""]));
        assert!(c.is_empty());
        assert_eq!(d, DIRECTIVE_DEFAULT);
        let (c, _) = complete(&words(&["lint", "--st"]));
        assert_eq!(c[0].0, "--strict");
    }
}
