//! Reading inputs: files, directories (recursively, *.yaml/*.yml/*.json in any case, hidden
//! entries skipped) and `-` for stdin.
//!
//! Every input is checked before parsing: size limit, binary content, UTF-8. Failures carry
//! the path and, for encoding errors, the line and column of the first bad byte.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diag::Source;

/// Largest input accepted: Kubernetes objects are limited to about 1.5 MiB each, so this
/// leaves room for large multi-document manifests while bounding memory.
pub const MAX_INPUT_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct InputError {
    pub path: String,
    pub message: String,
}

impl InputError {
    fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Expands the paths given on the command line into inputs, in command-line order;
/// directory contents are sorted by path.
pub fn expand_paths(paths: &[PathBuf]) -> Vec<Result<PathBuf, InputError>> {
    let mut out = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            out.push(Ok(p.clone()));
            continue;
        }
        match fs::metadata(p) {
            Ok(m) if m.is_dir() => {
                let mut found = Vec::new();
                if let Err(e) = walk(p, &mut found) {
                    out.push(Err(e));
                }
                if found.is_empty() {
                    out.push(Err(InputError::new(
                        p.display().to_string(),
                        "no *.yaml, *.yml or *.json files in this directory",
                    )));
                }
                found.sort();
                out.extend(found.into_iter().map(Ok));
            }
            Ok(_) => out.push(Ok(p.clone())),
            Err(e) => out.push(Err(InputError::new(
                p.display().to_string(),
                io_message(&e),
            ))),
        }
    }
    out
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let entries = fs::read_dir(dir)
        .map_err(|e| InputError::new(dir.display().to_string(), io_message(&e)))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            walk(&path, found)?;
        } else if path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
            ["yaml", "yml", "json"]
                .iter()
                .any(|x| e.eq_ignore_ascii_case(x))
        }) {
            found.push(path);
        }
    }
    Ok(())
}

/// Reads one input ("-" is standard input) into a [`Source`].
pub fn read_source(path: &Path, stdin: &mut dyn Read) -> Result<Arc<Source>, InputError> {
    let (name, bytes) = if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        stdin
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(|e| InputError::new("<stdin>", io_message(&e)))?;
        ("<stdin>".to_string(), buf)
    } else {
        let name = path.display().to_string();
        let file = fs::File::open(path).map_err(|e| InputError::new(&name, io_message(&e)))?;
        if let Ok(meta) = file.metadata()
            && meta.len() > MAX_INPUT_BYTES
        {
            return Err(too_large(&name, meta.len()));
        }
        let mut buf = Vec::new();
        file.take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(|e| InputError::new(&name, io_message(&e)))?;
        (name, buf)
    };
    source_from_bytes(name, bytes)
}

/// Checks size, binary content and encoding.
pub fn source_from_bytes(name: String, bytes: Vec<u8>) -> Result<Arc<Source>, InputError> {
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large(&name, bytes.len() as u64));
    }
    if let Some(pos) = bytes.iter().position(|&b| b == 0) {
        return Err(InputError::new(
            name,
            format!("binary file (NUL byte at offset {pos}): expected YAML or JSON text"),
        ));
    }
    // A UTF-8 byte order mark is allowed (editors on Windows write one); kubectl accepts it.
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    match std::str::from_utf8(body) {
        Ok(text) => Ok(Source::new(name, text)),
        Err(e) => {
            let good = &body[..e.valid_up_to()];
            let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            // valid_up_to ends on a character boundary.
            let column =
                std::str::from_utf8(&good[line_start..]).map_or(0, |s| s.chars().count()) + 1;
            Err(InputError::new(
                name,
                format!(
                    "not valid UTF-8 at line {line}, column {column} (byte offset {}): YAML and \
                     JSON manifests must be UTF-8",
                    e.valid_up_to()
                ),
            ))
        }
    }
}

/// Reads the objects of every path (files, directories, `-`) for evaluation. The first
/// problem of a source (invalid YAML, a document that is not an object) is an error naming
/// the file, line and column: evaluating part of a file would give a misleading verdict.
pub fn load_objects(
    paths: &[PathBuf],
    stdin: &mut dyn Read,
) -> Result<Vec<crate::core::objects::LoadedObject>, InputError> {
    let mut out = Vec::new();
    for path in expand_paths(paths) {
        let source = read_source(&path?, stdin)?;
        let loaded = crate::core::objects::load_values(&source);
        if let Some(d) = loaded.diagnostics.first() {
            let (pos, _) = d.position().unwrap_or_default();
            return Err(InputError::new(
                format!("{}:{}:{}", source.name(), pos.line, pos.column),
                d.message.clone(),
            ));
        }
        out.extend(loaded.objects);
    }
    Ok(out)
}

fn too_large(name: &str, len: u64) -> InputError {
    InputError::new(
        name,
        format!(
            "file is too large ({:.1} MiB; the limit is {} MiB): split it into smaller manifests",
            len as f64 / (1024.0 * 1024.0),
            MAX_INPUT_BYTES / (1024 * 1024)
        ),
    )
}

fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => {
            if e.raw_os_error() == Some(21) {
                "is a directory".into()
            } else {
                e.to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_input_is_refused_with_offset() {
        let e = source_from_bytes("x.yaml".into(), b"a: 1\n\0\0".to_vec()).unwrap_err();
        assert_eq!(e.path, "x.yaml");
        assert!(e.message.contains("binary file (NUL byte at offset 5)"));
    }

    #[test]
    fn invalid_utf8_reports_line_and_column() {
        let e = source_from_bytes("x.yaml".into(), b"a: 1\nbb: \xff\n".to_vec()).unwrap_err();
        assert!(e.message.contains("line 2, column 5"), "{}", e.message);
    }

    #[test]
    fn bom_is_accepted() {
        let s = source_from_bytes("x.yaml".into(), b"\xEF\xBB\xBFa: 1\n".to_vec()).unwrap();
        assert_eq!(s.text(), "a: 1\n");
    }

    #[test]
    fn oversized_input_is_refused() {
        let e =
            source_from_bytes("big".into(), vec![b'a'; MAX_INPUT_BYTES as usize + 1]).unwrap_err();
        assert!(e.message.contains("too large"));
    }
}
