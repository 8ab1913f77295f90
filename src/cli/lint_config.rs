//! The lint configuration of a repository, `.kubectl-ksm.yaml`, and the directory walk that
//! follows it and `.gitignore`.
//!
//! ```yaml
//! lint:
//!   exclude:            # .gitignore patterns, relative to this file's directory
//!   - charts/*/templates/
//!   - docs/snippets/
//!   disable:            # codes or names, for the whole repository
//!   - KSM204
//!   placeholders: ignore   # error | warning | ignore (the --placeholders default)
//! ```
//!
//! The file is `--config PATH`, or the first `.kubectl-ksm.yaml` in the current directory or
//! one of its parents (as ruff and yamllint find theirs). Files named on the command line are
//! linted even when excluded; directories are walked with `.gitignore` (and `.ignore`)
//! honoured, hidden entries skipped, `*.yaml`, `*.yml` and `*.json` in any case.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::CliError;
use super::input::InputError;
use crate::core::lint::find_rule;
use crate::diag::yaml;

/// The file name looked for.
pub const FILE_NAME: &str = ".kubectl-ksm.yaml";

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    lint: LintSection,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LintSection {
    #[serde(default)]
    exclude: Vec<String>,
    #[serde(default)]
    disable: Vec<String>,
    placeholders: Option<String>,
}

/// A loaded configuration.
#[derive(Debug, Default)]
pub struct LintConfig {
    /// Where it was read from (None: no file).
    pub path: Option<PathBuf>,
    pub exclude: Vec<String>,
    pub disabled: Vec<&'static str>,
    pub placeholders: Option<String>,
}

fn fatal(path: &Path, what: impl std::fmt::Display) -> CliError {
    CliError::Fatal(format!("{}: {what}", path.display()))
}

impl LintConfig {
    /// `--config PATH`, or the nearest `.kubectl-ksm.yaml` from the current directory up.
    pub fn find(explicit: Option<&Path>) -> Result<LintConfig, CliError> {
        let path = match explicit {
            Some(p) => Some(p.to_path_buf()),
            None => std::env::current_dir().ok().and_then(|cwd| {
                cwd.ancestors()
                    .map(|d| d.join(FILE_NAME))
                    .find(|p| p.is_file())
            }),
        };
        match path {
            Some(p) => Self::load(&p),
            None => Ok(LintConfig::default()),
        }
    }

    pub fn load(path: &Path) -> Result<LintConfig, CliError> {
        let bytes = std::fs::read(path).map_err(|e| fatal(path, e))?;
        let source = super::input::source_from_bytes(path.display().to_string(), bytes)
            .map_err(|e| fatal(path, e.message))?;
        let (docs, err) = yaml::parse_documents(&source);
        if let Some(e) = err {
            let at = source.line_col(e.offset);
            return Err(fatal(
                path,
                format!("line {}, column {}: {}", at.line, at.column, e.message),
            ));
        }
        let json = match docs.first().and_then(|d| d.root.as_ref()) {
            Some(root) => root
                .to_json(&yaml::Limits::default())
                .map_err(|e| fatal(path, e))?,
            None => serde_json::Value::Null,
        };
        let file: File = if json.is_null() {
            File::default()
        } else {
            serde_json::from_value(json).map_err(|e| fatal(path, e))?
        };
        let mut disabled = Vec::new();
        for c in &file.lint.disable {
            match find_rule(c) {
                Some(r) => disabled.push(r.code),
                None => {
                    return Err(fatal(
                        path,
                        format!(
                            "lint.disable: no lint code {c:?} (`kubectl ksm lint --list-rules`)"
                        ),
                    ));
                }
            }
        }
        if let Some(p) = &file.lint.placeholders
            && !["error", "warning", "ignore"].contains(&p.as_str())
        {
            return Err(fatal(
                path,
                format!("lint.placeholders: {p:?} is not error, warning or ignore"),
            ));
        }
        Ok(LintConfig {
            path: Some(path.to_path_buf()),
            exclude: file.lint.exclude,
            disabled,
            placeholders: file.lint.placeholders,
        })
    }

    /// The walk of `lint`'s inputs (the excludes read: a bad pattern is an error here, before
    /// any input is found).
    pub fn walker(&self) -> Result<Walker, CliError> {
        Ok(Walker {
            excludes: self.overrides()?,
        })
    }

    /// The excludes as .gitignore rules rooted at the configuration's directory (absolute,
    /// matched against absolute paths).
    fn overrides(&self) -> Result<Option<ignore::gitignore::Gitignore>, CliError> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        if self.exclude.is_empty() {
            return Ok(None);
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        let root = cwd.join(path.parent().unwrap_or(Path::new("")));
        let mut b = ignore::gitignore::GitignoreBuilder::new(&root);
        for pattern in &self.exclude {
            b.add_line(None, pattern)
                .map_err(|e| fatal(path, format!("lint.exclude: {pattern:?}: {e}")))?;
        }
        b.build().map(Some).map_err(|e| fatal(path, e))
    }
}

/// The walk of `lint`'s inputs: files as given, directories walked with `.gitignore` and the
/// configuration's excludes (each directory's entries sorted by path; only regular files are
/// read, the others skipped with a note).
pub struct Walker {
    excludes: Option<ignore::gitignore::Gitignore>,
}

impl Walker {
    /// Hands the inputs under `paths` to `push` in order, as they are found (a run lints the
    /// first while the walk goes on); the files skipped go to `notes`.
    pub fn walk(
        &self,
        paths: &[PathBuf],
        push: &mut dyn FnMut(Result<PathBuf, InputError>),
        notes: &mut Vec<String>,
    ) {
        for p in paths {
            if p.as_os_str() == "-" || !p.is_dir() {
                // Files named on the command line (and errors for missing ones) as before.
                let named = super::input::expand_paths(std::slice::from_ref(p));
                named.inputs.into_iter().for_each(&mut *push);
                notes.extend(named.notes);
                continue;
            }
            let mut walk = ignore::WalkBuilder::new(p);
            walk.hidden(true)
                .git_ignore(true)
                .git_exclude(true)
                .git_global(false)
                .require_git(false)
                .parents(true)
                // A directory's entries by name: as by path (they share the directory) at a
                // fraction of the cost (a path is compared component by component).
                .sort_by_file_name(|a, b| a.cmp(b));
            if let Some(gi) = self.excludes.clone() {
                let cwd = std::env::current_dir().unwrap_or_default();
                walk.filter_entry(move |e| {
                    let dir = e.file_type().is_some_and(|t| t.is_dir());
                    !gi.matched_path_or_any_parents(cwd.join(e.path()), dir)
                        .is_ignore()
                });
            }
            let mut found = false;
            for entry in walk.build() {
                match entry {
                    Ok(e) if !e.file_type().is_some_and(|t| t.is_dir()) => {
                        let yaml = e
                            .path()
                            .extension()
                            .and_then(|x| x.to_str())
                            .is_some_and(|x| {
                                ["yaml", "yml", "json"]
                                    .iter()
                                    .any(|y| x.eq_ignore_ascii_case(y))
                            });
                        if yaml {
                            // Only regular files are read (a FIFO would hang the run).
                            let entry = e.file_type();
                            let path = e.into_path();
                            if let Some(file) = super::input::found_in_directory(path, entry, notes)
                            {
                                found = true;
                                push(Ok(file));
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(e) => push(Err(InputError {
                        path: p.display().to_string(),
                        message: e.to_string(),
                    })),
                }
            }
            if !found {
                push(Err(InputError {
                    path: p.display().to_string(),
                    message: "no *.yaml, *.yml or *.json files in this directory (after .gitignore and the lint configuration's excludes)".into(),
                }));
            }
        }
    }
}
