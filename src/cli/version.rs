//! `kubectl ksm version`: the version, git commit and build date (taken by build.rs at build
//! time), as `kubectl version --client` and `flux version --client` print them.

use clap::Args;
use serde_json::json;

use super::{CliResult, EXIT_OK, Io, OutputFormat, formats};

#[derive(Debug, Args)]
pub struct VersionArgs {
    /// Output format
    #[arg(short = 'o', long = "output", value_name = "FORMAT", default_value = "human", value_parser = formats(FORMATS))]
    pub output: OutputFormat,
}

/// The formats of `version -o`.
pub const FORMATS: &[OutputFormat] = &[OutputFormat::Human, OutputFormat::Json, OutputFormat::Yaml];

/// What the binary knows of its build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildInfo {
    /// `v0.1.0`
    pub git_version: String,
    /// The full commit hash, or `unknown` outside a git checkout.
    pub git_commit: &'static str,
    /// `clean`, `dirty` or `unknown`.
    pub git_tree_state: &'static str,
    /// RFC 3339, UTC.
    pub build_date: &'static str,
    /// `linux/amd64`, as kubectl names platforms.
    pub platform: String,
}

/// This binary's build.
pub fn build_info() -> BuildInfo {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    BuildInfo {
        git_version: format!("v{}", env!("CARGO_PKG_VERSION")),
        git_commit: env!("KSM_GIT_COMMIT"),
        git_tree_state: env!("KSM_GIT_TREE_STATE"),
        build_date: env!("KSM_BUILD_DATE"),
        platform: format!("{}/{arch}", std::env::consts::OS),
    }
}

pub fn run(args: &VersionArgs, io: &mut Io) -> CliResult {
    let b = build_info();
    let report = crate::output::envelope(
        "Version",
        json!({"clientVersion": {
            "gitVersion": b.git_version,
            "gitCommit": b.git_commit,
            "gitTreeState": b.git_tree_state,
            "buildDate": b.build_date,
            "platform": b.platform,
        }}),
    );
    match args.output {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *io.stdout, &report).map_err(std::io::Error::from)?;
            writeln!(io.stdout)?;
        }
        OutputFormat::Yaml => {
            let mut text = String::new();
            crate::output::yaml::write_document(&report, &mut text);
            io.stdout.write_all(text.as_bytes())?;
        }
        _ => {
            let commit = if b.git_tree_state == "dirty" {
                format!("{} (dirty)", b.git_commit)
            } else {
                b.git_commit.to_string()
            };
            writeln!(io.stdout, "kubectl-ksm: {}", b.git_version)?;
            writeln!(io.stdout, "commit: {commit}")?;
            writeln!(io.stdout, "built: {}", b.build_date)?;
            writeln!(io.stdout, "platform: {}", b.platform)?;
        }
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_info_is_filled_in() {
        let b = build_info();
        assert_eq!(b.git_version, concat!("v", env!("CARGO_PKG_VERSION")));
        assert!(
            b.git_commit == "unknown"
                || (b.git_commit.len() == 40
                    && b.git_commit.bytes().all(|c| c.is_ascii_hexdigit())),
            "{}",
            b.git_commit
        );
        assert!(["clean", "dirty", "unknown"].contains(&b.git_tree_state));
        assert!(
            chrono::DateTime::parse_from_rfc3339(b.build_date).is_ok(),
            "{}",
            b.build_date
        );
        assert!(b.platform.contains('/'));
    }
}
