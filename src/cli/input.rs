//! Reading inputs: files, directories (recursively, *.yaml/*.yml/*.json in any case, hidden
//! entries skipped) and `-` for stdin.
//!
//! Every input is checked before parsing: size limit, binary content, UTF-8. Failures carry
//! the path and, for encoding errors, the line and column of the first bad byte.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{CliError, Io};
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

/// The inputs of a command line, and what was skipped on the way.
#[derive(Debug, Default)]
pub struct Expanded {
    /// In command-line order; directory contents sorted by path.
    pub inputs: Vec<Result<PathBuf, InputError>>,
    /// Files found in directories that were not read (FIFOs, sockets, devices), for stderr.
    pub notes: Vec<String>,
}

/// What a path is, following symbolic links.
enum Kind {
    File,
    Dir,
    /// Not a regular file: a FIFO, socket or device, named for messages.
    Special(&'static str),
}

fn kind_of(meta: &fs::Metadata) -> Kind {
    let ft = meta.file_type();
    if ft.is_file() {
        return Kind::File;
    }
    if ft.is_dir() {
        return Kind::Dir;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return Kind::Special("a named pipe (FIFO)");
        }
        if ft.is_socket() {
            return Kind::Special("a socket");
        }
        if ft.is_char_device() {
            return Kind::Special("a character device");
        }
        if ft.is_block_device() {
            return Kind::Special("a block device");
        }
    }
    Kind::Special("not a regular file")
}

/// A descriptor the shell handed over, as `<(command)` does: its writer exists, so reading
/// it cannot wait forever for one.
fn is_inherited_descriptor(path: &Path) -> bool {
    path.starts_with("/dev/fd") || path.starts_with("/proc/self/fd")
}

fn special_file(path: &Path, what: &str) -> InputError {
    InputError::new(
        path.display().to_string(),
        format!(
            "{what}, not a regular file: only files are read (reading it could wait forever); \
             to read a stream, pipe it to standard input and give `-`"
        ),
    )
}

/// Expands the paths given on the command line into inputs. Files named on the command line
/// must be regular files (or `-`, or a pipe the shell passes as `/dev/fd/N`); in
/// directories, only regular files are read, and anything else is skipped with a note.
pub fn expand_paths(paths: &[PathBuf]) -> Expanded {
    let mut out = Expanded::default();
    for p in paths {
        if p.as_os_str() == "-" {
            out.inputs.push(Ok(p.clone()));
            continue;
        }
        match fs::metadata(p).map(|m| kind_of(&m)) {
            Ok(Kind::Dir) => {
                let mut found = Vec::new();
                walk(p, &mut found, &mut out);
                if found.is_empty() {
                    out.inputs.push(Err(InputError::new(
                        p.display().to_string(),
                        "no *.yaml, *.yml or *.json files in this directory",
                    )));
                }
                found.sort();
                out.inputs.extend(found.into_iter().map(Ok));
            }
            Ok(Kind::File) => out.inputs.push(Ok(p.clone())),
            Ok(Kind::Special(_)) if is_inherited_descriptor(p) => out.inputs.push(Ok(p.clone())),
            Ok(Kind::Special(what)) => out.inputs.push(Err(special_file(p, what))),
            Err(e) => out.inputs.push(Err(InputError::new(
                p.display().to_string(),
                io_message(&e),
            ))),
        }
    }
    out
}

/// The manifests under `dir` (iteratively; symbolic links to directories are not followed,
/// so a link cycle cannot loop).
fn walk(dir: &Path, found: &mut Vec<PathBuf>, out: &mut Expanded) {
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                out.inputs.push(Err(InputError::new(
                    dir.display().to_string(),
                    io_message(&e),
                )));
                continue;
            }
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                dirs.push(path);
                continue;
            }
            let manifest = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                ["yaml", "yml", "json"]
                    .iter()
                    .any(|x| e.eq_ignore_ascii_case(x))
            });
            if manifest {
                found.extend(found_in_directory(path, Some(ft), &mut out.notes));
            }
        }
    }
}

/// A manifest found in a directory (not a directory itself): read if it is a regular file,
/// through symbolic links (a dangling link is read, so that it is an error); anything else
/// is skipped with a note. A regular file by its directory entry (`entry`) is not looked up
/// again.
pub fn found_in_directory(
    path: PathBuf,
    entry: Option<fs::FileType>,
    notes: &mut Vec<String>,
) -> Option<PathBuf> {
    if entry.is_some_and(|t| t.is_file()) {
        return Some(path);
    }
    match fs::metadata(&path).map(|m| kind_of(&m)) {
        Ok(Kind::File) | Err(_) => return Some(path),
        Ok(Kind::Dir) => notes.push(format!(
            "{}: skipped: a link to a directory (links to directories are not followed)",
            path.display()
        )),
        Ok(Kind::Special(what)) => notes.push(format!(
            "{}: skipped: {what}, not a regular file",
            path.display()
        )),
    }
    None
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
        let (file, meta) = open_input(path, &name)?;
        let size = meta.len();
        if size > MAX_INPUT_BYTES {
            return Err(too_large(&name, size));
        }
        // Room for the whole file at once (and one byte to see its end), rather than a
        // buffer that doubles and is copied as it is read; a file that grew since is still
        // read to its end or the bound.
        let mut buf = Vec::with_capacity(size as usize + 1);
        file.take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(|e| InputError::new(&name, io_message(&e)))?;
        (name, buf)
    };
    source_from_bytes(name, bytes)
}

/// Opens a named input and reads what it is, refusing what is not a regular file (unless the
/// shell passed it as `/dev/fd/N`). On Unix it is opened without waiting (opening a FIFO
/// otherwise waits for a writer) and then looked at, one path lookup rather than two; a pipe
/// the shell passed is opened again to be read as usual.
fn open_input(path: &Path, name: &str) -> Result<(fs::File, fs::Metadata), InputError> {
    let fail = |e: std::io::Error| InputError::new(name, io_message(&e));
    #[cfg(unix)]
    let opened = {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY;
        fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags.bits() as i32)
            .open(path)
    };
    #[cfg(not(unix))]
    let opened = {
        // Looked at before opening, which could wait.
        let meta = fs::metadata(path).map_err(fail)?;
        if let Kind::Special(what) = kind_of(&meta)
            && !is_inherited_descriptor(path)
        {
            return Err(special_file(path, what));
        }
        fs::File::open(path)
    };
    let file = match opened {
        Ok(file) => file,
        // A socket cannot be opened: say what it is rather than the system's error.
        Err(e) => {
            return Err(match fs::metadata(path).map(|m| kind_of(&m)) {
                Ok(Kind::Special(what)) => special_file(path, what),
                _ => fail(e),
            });
        }
    };
    let meta = file.metadata().map_err(fail)?;
    match kind_of(&meta) {
        Kind::Special(_) if is_inherited_descriptor(path) => {
            drop(file);
            let file = fs::File::open(path).map_err(fail)?;
            Ok((file, meta))
        }
        Kind::Special(what) => Err(special_file(path, what)),
        Kind::File | Kind::Dir => Ok((file, meta)),
    }
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
    let mut bytes = bytes;
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    // The text is the bytes read, not a copy of them (a dump can be tens of megabytes).
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Source::new(name, text)),
        Err(e) => {
            let body = e.as_bytes();
            let e = e.utf8_error();
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
/// Skipped files are noted on stderr.
pub fn load_objects(
    paths: &[PathBuf],
    io: &mut Io,
) -> Result<Vec<crate::core::objects::LoadedObject>, CliError> {
    let mut out = Vec::new();
    let expanded = expand_paths(paths);
    for note in &expanded.notes {
        writeln!(io.stderr, "note: {note}")?;
    }
    for path in expanded.inputs {
        let source = read_source(&path?, io.stdin)?;
        out.extend(objects_of(&source)?);
    }
    Ok(out)
}

/// Reads the objects of a dump (what doctor, tree, trace and wait read `--from`): as
/// [`load_objects`], but values only, read without positions when the files allow it
/// ([`objects::load_dump_values`](crate::core::objects::load_dump_values)); a file that does
/// not is read with positions, which name the file, line and column of its first problem.
pub fn load_dump(paths: &[PathBuf], io: &mut Io) -> Result<Vec<serde_json::Value>, CliError> {
    let mut out = Vec::new();
    let expanded = expand_paths(paths);
    for note in &expanded.notes {
        writeln!(io.stderr, "note: {note}")?;
    }
    let mut sources = Vec::new();
    for path in expanded.inputs {
        sources.push(read_source(&path?, io.stdin)?);
    }
    // The files are read at once, as many as there are cores; in their order after.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(sources.len());
    // This thread reads too, beside `threads - 1` helpers.
    let work = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(source) = sources.get(i) else {
                return mine;
            };
            mine.push((i, crate::core::objects::load_dump_values(source)));
        }
    };
    let mut read: Vec<(usize, Option<Vec<serde_json::Value>>)> =
        crate::core::threads::beside(work, (1..threads).map(|_| work))
            .into_iter()
            .flatten()
            .collect();
    read.sort_by_key(|(i, _)| *i);
    for (i, values) in read {
        match values {
            Some(values) => out.extend(values),
            None => out.extend(objects_of(&sources[i])?.into_iter().map(|o| o.json)),
        }
    }
    Ok(out)
}

/// Saved files named for people: `a.yaml, dump/`.
pub fn paths_text(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one saved object among `found` (those of a dump matching what the command line named,
/// `what`, in `namespace` when one is given): none is an error saying where it was looked
/// for (`place`), several (the name in several namespaces) an error asking for -n.
pub fn the_one_saved(
    mut found: Vec<serde_json::Value>,
    what: &str,
    namespace: Option<&str>,
    place: &str,
) -> Result<serde_json::Value, CliError> {
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(CliError::Fatal(match namespace {
            Some(n) => format!("{what} not found in namespace {n} of {place}"),
            None => format!("{what} not found in {place}"),
        })),
        _ => {
            let namespaces: Vec<&str> = found
                .iter()
                .map(|o| crate::api::meta::Object(o).namespace())
                .collect();
            Err(CliError::Fatal(format!(
                "{what} is in several namespaces of {place} ({}): name one with -n",
                namespaces.join(", ")
            )))
        }
    }
}

/// The objects of one source, or its first problem as an error at file:line:column.
fn objects_of(source: &Arc<Source>) -> Result<Vec<crate::core::objects::LoadedObject>, CliError> {
    let loaded = crate::core::objects::load_values(source);
    if let Some(d) = loaded.diagnostics.first() {
        let (pos, _) = d.position().unwrap_or_default();
        return Err(InputError::new(
            format!("{}:{}:{}", source.name(), pos.line, pos.column),
            d.message.clone(),
        )
        .into());
    }
    Ok(loaded.objects)
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

    /// A fresh directory of this test process.
    #[cfg(unix)]
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ksm-input-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_socket_is_refused_without_waiting_and_a_file_is_read() {
        let dir = scratch("special");
        let fifo = dir.join("fifo.yaml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        // No writer: an open that waited would wait for one. A watchdog (only a failing run
        // meets it) becomes that writer, so the test fails rather than hangs.
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        let reader = std::thread::spawn(move || {
            let _ = tx.send(read_source(&path, &mut std::io::empty()));
        });
        let Ok(read) = rx.recv_timeout(std::time::Duration::from_secs(60)) else {
            let _ = fs::OpenOptions::new().write(true).open(&fifo);
            panic!("opening a FIFO waited for a writer");
        };
        reader.join().unwrap();
        let e = read.unwrap_err();
        assert!(
            e.message
                .starts_with("a named pipe (FIFO), not a regular file"),
            "{}",
            e.message
        );
        let socket = dir.join("socket.yaml");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let e = read_source(&socket, &mut std::io::empty()).unwrap_err();
        assert!(
            e.message.starts_with("a socket, not a regular file"),
            "{}",
            e.message
        );
        let file = dir.join("file.yaml");
        fs::write(&file, "a: 1\n").unwrap();
        assert_eq!(
            read_source(&file, &mut std::io::empty()).unwrap().text(),
            "a: 1\n"
        );
        let e = read_source(&dir.join("missing.yaml"), &mut std::io::empty()).unwrap_err();
        assert!(e.message.contains("no such file"), "{}", e.message);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pipe_the_shell_passes_as_dev_fd_is_read() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer.write_all(b"a: 1\n").unwrap();
        drop(writer);
        let path = std::path::PathBuf::from(format!("/dev/fd/{}", reader.as_raw_fd()));
        assert_eq!(
            read_source(&path, &mut std::io::empty()).unwrap().text(),
            "a: 1\n"
        );
    }

    #[test]
    fn oversized_input_is_refused() {
        let e =
            source_from_bytes("big".into(), vec![b'a'; MAX_INPUT_BYTES as usize + 1]).unwrap_err();
        assert!(e.message.contains("too large"));
    }
}
