//! Hostile input, as an attacker would write it: every subcommand ends with a clear error (or
//! a correct result) within bounded memory and time, and never shows a Secret's data.
//!
//! Each command runs as a child process with its address space limited (RLIMIT_AS, so a
//! memory bomb fails inside the child instead of taking the machine) and a watchdog that
//! kills it if it hangs; its own peak RSS is read with wait4 and held to 256 MiB.
//!
//! A child's peak RSS as the kernel reports it includes the parent's peak at the time of the
//! spawn (the parent's memory is the child's until exec), so these tests keep their own
//! memory small: big inputs are written to files as they are generated, and big outputs are
//! read into a bounded prefix and counted, never kept.

#![cfg(unix)]

mod fakeapi;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The address space a child may map: room for its threads' stacks and allocator arenas,
/// far less than a memory bomb wants.
const ADDRESS_SPACE: u64 = 2 << 30;
/// The peak resident memory every command must stay under.
const PEAK_RSS_KIB: i64 = 256 * 1024;

struct Run {
    args: Vec<String>,
    code: Option<i32>,
    /// The first [`KEPT`] bytes of the output, and the last ones.
    stdout: String,
    stdout_tail: String,
    stdout_len: usize,
    /// Lines of the output that are exactly `    {` (the diagnostics of a JSON lint report).
    stdout_items: usize,
    stderr: String,
    max_rss_kib: i64,
    elapsed: Duration,
}

/// How much of an output a test keeps.
const KEPT: usize = 1 << 20;

impl Run {
    fn text(&self) -> String {
        format!("{}{}{}", self.stdout, self.stdout_tail, self.stderr)
    }

    /// Exited by itself (no signal, no panic, no allocation failure), within 256 MiB.
    fn clean(&self) -> &Self {
        let text = self.text();
        assert!(
            self.code.is_some() && self.code != Some(101),
            "{:?} died: code {:?}\n{text}",
            self.args,
            self.code
        );
        for crash in ["panicked", "memory allocation of", "stack overflow"] {
            assert!(!text.contains(crash), "{:?}: {crash}\n{text}", self.args);
        }
        assert!(
            self.max_rss_kib < PEAK_RSS_KIB,
            "{:?} peaked at {} KiB",
            self.args,
            self.max_rss_kib
        );
        self
    }

    fn exits(&self, code: i32) -> &Self {
        self.clean();
        assert_eq!(
            self.code,
            Some(code),
            "{:?}: {}",
            self.args,
            truncated(&self.text())
        );
        self
    }

    fn says(&self, needle: &str) -> &Self {
        assert!(
            self.text().contains(needle),
            "{:?} does not say {needle:?}:\n{}",
            self.args,
            truncated(&self.text())
        );
        self
    }

    fn never_says(&self, needle: &str) -> &Self {
        assert!(
            !self.text().contains(needle),
            "{:?} says {needle:?}:\n{}",
            self.args,
            truncated(&self.text())
        );
        self
    }
}

fn truncated(s: &str) -> &str {
    let mut end = s.len().min(4000);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The CPU time a process has used so far (user and system), from /proc; None once it is
/// gone.
fn cpu_time(pid: libc::pid_t) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command name in parentheses: state, then 10 fields, then utime and stime.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(Duration::from_millis(ticks * 1000 / hz))
}

/// Runs the binary with `args` under the address-space limit, killing it when it hangs: when
/// it has used `timeout` of CPU time (a loop), or has used none for `timeout` (blocked). A
/// slow machine makes neither happen sooner: a run that is only starved still gains CPU
/// time, and needs no more of it than on an idle machine.
fn ksm_with(args: &[&str], stdin: &[u8], timeout: Duration) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"));
    cmd.args(args)
        .env_clear()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches nothing but the child's limits.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0
                || libc::setrlimit(libc::RLIMIT_CORE, &none) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut child_stdin = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = child_stdin.write_all(&input);
    });
    let reader = |r: Box<dyn Read + Send>| std::thread::spawn(move || Output::read(r));
    let out = reader(Box::new(child.stdout.take().unwrap()));
    let err = reader(Box::new(child.stderr.take().unwrap()));
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let (mut used, mut since) = (Duration::ZERO, Instant::now());
            loop {
                if done.load(Ordering::SeqCst) {
                    return None;
                }
                if let Some(now) = cpu_time(pid)
                    && now > used
                {
                    (used, since) = (now, Instant::now());
                }
                if used >= timeout || since.elapsed() >= timeout {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let why = if used >= timeout {
                format!("{used:?} of CPU time")
            } else {
                format!("no CPU time for {timeout:?} (at {used:?} in all)")
            };
            // SAFETY: the child has not been reaped (wait4 below has not returned), so
            // the pid is still ours.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            Some(why)
        })
    };
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 writes the status and the child's resource usage into our variables.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid);
    done.store(true, Ordering::SeqCst);
    let elapsed = start.elapsed();
    let hung = watchdog.join().unwrap();
    let _ = writer.join();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    if let Some(why) = hung {
        panic!(
            "{args:?} hung: killed after {why}, {:?} after it started",
            start.elapsed()
        );
    }
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    // The child was reaped with wait4: keep std from waiting for it again.
    std::mem::forget(child);
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    Run {
        args,
        code,
        stdout: out.kept,
        stdout_tail: out.tail,
        stdout_len: out.len,
        stdout_items: out.items,
        stderr: err.kept,
        max_rss_kib: usage.ru_maxrss,
        elapsed,
    }
}

/// An output read to its end, keeping a bounded prefix.
struct Output {
    kept: String,
    /// The last bytes (after the kept ones).
    tail: String,
    len: usize,
    items: usize,
}

impl Output {
    fn read(r: Box<dyn Read + Send>) -> Output {
        let (mut kept, mut tail) = (Vec::new(), Vec::new());
        let (mut len, mut items) = (0, 0);
        let mut line = Vec::new();
        for byte in std::io::BufReader::new(r).bytes() {
            let Ok(b) = byte else { break };
            len += 1;
            if kept.len() < KEPT {
                kept.push(b);
            } else {
                tail.push(b);
                if tail.len() >= 2 * KEPT {
                    tail.drain(..KEPT);
                }
            }
            if b == b'\n' {
                items += usize::from(line == b"    {");
                line.clear();
            } else if line.len() < 8 {
                line.push(b);
            } else {
                line.push(b'?');
                line.truncate(8);
            }
        }
        Output {
            kept: String::from_utf8_lossy(&kept).into_owned(),
            tail: String::from_utf8_lossy(&tail).into_owned(),
            len,
            items,
        }
    }
}

fn ksm(args: &[&str]) -> Run {
    ksm_with(args, b"", Duration::from_secs(120))
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("ksm-hostile-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, name: &str, text: impl AsRef<[u8]>) -> String {
        let p = self.0.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }

    /// Writes a file as it is generated (the test process never holds it).
    fn write_with(&self, name: &str, f: impl FnOnce(&mut dyn Write)) -> String {
        let p = self.0.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        let mut w = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        f(&mut w);
        w.flush().unwrap();
        p.display().to_string()
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SMP_HEAD: &str = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n  name: deep\n";

/// Where nesting hides: (name, the nested text, an object holding it).
fn deep_documents() -> Vec<(&'static str, String)> {
    let block_seq = format!("{}x", "- ".repeat(7_000));
    let block_map: String = (0..1_000)
        .map(|i| format!("{}k:\n", " ".repeat(i + 2)))
        .collect();
    let flow = format!("{}x{}", "[".repeat(5_000), "]".repeat(5_000));
    let mut chain = String::from("a0: &a0 x\n");
    for i in 1..100_000 {
        chain.push_str(&format!("a{i}: &a{i} [*a{}]\n", i - 1));
    }
    vec![
        (
            "block sequences",
            format!("{SMP_HEAD}spec:\n  deep:\n  {block_seq}\n"),
        ),
        (
            "block mappings",
            format!("{SMP_HEAD}spec:\n  deep:\n{block_map}"),
        ),
        ("flow", format!("{SMP_HEAD}spec:\n  deep: {flow}\n")),
        (
            "a chain of 100,000 anchors",
            format!("{SMP_HEAD}spec:\n  deep:\n{}", indent(&chain, 4)),
        ),
    ]
}

fn indent(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    text.lines().map(|l| format!("{pad}{l}\n")).collect()
}

#[test]
fn deep_nesting_is_a_located_error_in_every_subcommand() {
    let dir = Scratch::new("deep");
    let crds = "testdata/check/crds.yaml";
    for (what, text) in deep_documents() {
        let file = dir.write("deep.yaml", &text);
        let located = format!("{file}:");
        // (The human report wraps its message.)
        ksm(&["lint", &file])
            .exits(2)
            .says("levels deep")
            .says(&format!("{file}:"));
        ksm(&["lint", &file, "-o", "json"])
            .exits(2)
            .says("more than 128 levels deep");
        for args in [
            vec!["eval", "true", "-f", &file],
            vec!["check", &file, "--objects", crds],
            vec!["doctor", "--from", &file],
            vec!["render", &file],
        ] {
            let run = ksm(&args);
            run.exits(2)
                .says("more than 128 levels deep")
                .says(&located);
            println!("{what}: {:?} {:?}", args[0], run.elapsed);
        }
        // From standard input too.
        ksm_with(&["lint", "-"], text.as_bytes(), Duration::from_secs(120))
            .exits(2)
            .says("more than 128 levels deep");
    }
}

/// A ServiceSet of the render fixtures with its first service's values replaced.
fn service_set_with_values(values: &str) -> String {
    let input = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/render/values-and-valuesfrom/input.yaml"),
    )
    .unwrap();
    let start = input.find("    values: |\n").unwrap();
    let end = input[start..].find("    valuesFrom:").unwrap() + start;
    format!(
        "{}    values: {}\n{}",
        &input[..start],
        serde_json::to_string(values).unwrap(),
        &input[end..]
    )
}

#[test]
fn deep_helm_values_are_a_located_error_of_their_service() {
    let dir = Scratch::new("values");
    let block: String = (0..1_000)
        .map(|i| format!("{}k:\n", " ".repeat(i)))
        .collect();
    for values in [
        format!("{}x", "- ".repeat(7_000)),
        block,
        format!("a: {}1{}", "{b: ".repeat(3_000), "}".repeat(3_000)),
    ] {
        let file = dir.write("ss.yaml", service_set_with_values(&values));
        ksm(&["render", &file])
            .exits(1)
            .says("values are not valid YAML at line ")
            .says("more than 128 levels deep");
    }
    // Values at the limit render, and come out whole.
    let values = format!("{}1{}", "{a: ".repeat(120), "}".repeat(120));
    let file = dir.write("ss.yaml", service_set_with_values(&values));
    let run = ksm(&["render", &file, "-o", "json"]);
    run.exits(0);
    let out: Value = serde_json::from_str(&run.stdout).unwrap();
    let mut v = &out["items"][0]["spec"]["values"];
    for _ in 0..120 {
        v = &v["a"];
    }
    assert_eq!(v, &json!(1));
}

#[test]
fn alias_bombs_of_strings_and_nested_anchors_stay_small() {
    let dir = Scratch::new("aliases");
    // 10 KB of aliases over a 1 KB string: 9^5 copies, 60 GB if expanded.
    let mut bomb = format!("{SMP_HEAD}spec:\n  s: &s \"{}\"\n", "x".repeat(1000));
    bomb.push_str("  l0: &l0 [*s, *s, *s, *s, *s, *s, *s, *s, *s]\n");
    for i in 1..6 {
        bomb.push_str(&format!(
            "  l{i}: &l{i} [{}]\n",
            vec![format!("*l{}", i - 1); 9].join(", ")
        ));
    }
    let file = dir.write("bomb.yaml", &bomb);
    ksm(&["lint", &file])
        .exits(2)
        .says("copy more than 16 MiB of text through this alias");
    for args in [
        vec!["eval", "true", "-f", &file],
        vec!["doctor", "--from", &file],
        vec!["render", &file],
    ] {
        ksm(&args)
            .exits(2)
            .says("alias bomb?")
            .says(&format!("{file}:11:"));
    }
    // The same bomb in Helm values.
    let values = bomb.trim_start_matches(SMP_HEAD);
    let ss = dir.write("ss.yaml", service_set_with_values(values));
    ksm(&["render", &ss])
        .exits(1)
        .says("values at line 7, column 17")
        .says("alias bomb?");

    // 127 anchors one inside another around 200,000 scalars: loads (each anchored node is
    // shared, not copied into the tree once per enclosing anchor).
    let nested = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: nested}}\nx: {}[{}]{}\n",
        (0..126).map(|i| format!("&a{i} [")).collect::<String>(),
        vec!["x"; 200_000].join(", "),
        "]".repeat(126)
    );
    let file = dir.write("nested.yaml", nested);
    ksm(&["lint", &file]).exits(0).says("1 skipped");
    ksm(&["eval", "true", "-f", &file]).exits(0);
}

fn secret(name: &str, value: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": "kcm-system", "annotations": {
            "kubectl.kubernetes.io/last-applied-configuration":
                format!("{{\"data\":{{\"password\":\"{value}\"}}}}")}},
        "data": {"password": value}, "stringData": {"token": format!("{value}-token")}})
}

#[test]
fn secret_data_never_reaches_a_bundle_or_an_excerpt() {
    let dir = Scratch::new("secrets");
    let healthy = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/doctor/healthy/dump.yaml"),
    )
    .unwrap();
    // Secrets in every kind of list: a List in a List, a SecretList (items without a kind)
    // in a List, a SecretList in a List in a List.
    let mut bare = secret("bare", "QkFSRS1TRUNSRVQ=");
    bare.as_object_mut().unwrap().remove("kind");
    bare.as_object_mut().unwrap().remove("apiVersion");
    let lists = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "List", "items": [secret("in-list-in-list", "TElTVC1TRUNSRVQ=")]},
        {"apiVersion": "v1", "kind": "SecretList", "items": [bare]},
        {"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "SecretList", "items": [secret("deeper", "REVFUC1TRUNSRVQ=")]}]},
    ]});
    let dump = format!(
        "{healthy}\n---\n{}",
        serde_json::to_string_pretty(&lists).unwrap()
    );
    let file = dir.write("dump.yaml", dump);
    let bundle = dir.path("bundle.yaml");
    let run = ksm(&[
        "doctor",
        "--from",
        &file,
        "--now",
        "2026-11-21T12:00:00Z",
        "--save",
        &bundle,
    ]);
    run.clean().says("Secret data removed");
    let saved = std::fs::read_to_string(&bundle).unwrap();
    for (name, value) in [
        ("in-list-in-list", "TElTVC1TRUNSRVQ="),
        ("bare", "QkFSRS1TRUNSRVQ="),
        ("deeper", "REVFUC1TRUNSRVQ="),
    ] {
        assert!(saved.contains(name), "{name} is not in the bundle");
        assert!(!saved.contains(value), "{name}'s data is in the bundle");
    }
    assert!(!saved.contains("-token") && !saved.contains("last-applied-configuration"));

    // A syntax error inside a Secret, and one in the document after a Secret: the excerpts
    // show the structure, never the values.
    let broken = "apiVersion: v1\ndata:\n  password: SU5TSURFLUJST0tFTg==\n  other: [unclosed\nkind: Secret\nmetadata: {name: broken}\n";
    let file = dir.write("broken.yaml", broken);
    ksm(&["lint", &file])
        .exits(2)
        .never_says("SU5TSURF")
        .says("other:");
    for format in ["json", "sarif", "github"] {
        ksm(&["lint", &file, "-o", format])
            .exits(2)
            .never_says("SU5TSURF");
    }
    let after = "apiVersion: v1\nkind: Secret\nmetadata: {name: fine}\nstringData:\n  token: |\n    QUZURVItU0VDUkVU\n---\nkey: [\n";
    let file = dir.write("after.yaml", after);
    ksm(&["lint", &file])
        .exits(2)
        .never_says("QUZURVIt")
        .says("invalid YAML");
    // A lint finding whose excerpt reaches into a Secret's data (a line of context).
    let near = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ndata: {password: TkVBUi1TRUNSRVQ=}\n---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceSet\n";
    let file = dir.write("near.yaml", near);
    ksm(&["lint", &file]).clean().never_says("TkVBUi1T");
    for args in [
        vec!["eval", "true", "-f", &file],
        vec!["render", &file],
        vec!["doctor", "--from", &file],
    ] {
        ksm(&args).clean().never_says("TkVBUi1T");
    }
}

/// `n` SMP documents with two findings each (an unguarded rule, an unknown field).
fn write_smps(w: &mut dyn Write, n: usize) {
    for i in 0..n {
        write!(
            w,
            "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n  name: smp-{i}\nspec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: a-{i}\n    namespace: kcm-system\n    readinessRule: self.status.availableReplicas == self.status.replicas\n  provisioner: []\n  provisionerCRDs: []\n  selector:\n    matchLabels: {{a: b}}\n  suspend: false\n  unknownField: {i}\n"
        )
        .unwrap();
    }
}

#[test]
fn lint_memory_is_bounded_by_the_largest_file_not_the_sum() {
    let dir = Scratch::new("lint-memory");
    const SMPS: usize = 4_000;
    let file = dir.write_with("one/a.yaml", |w| write_smps(w, SMPS));
    let size = std::fs::metadata(&file).unwrap().len();
    std::fs::create_dir_all(dir.path("four")).unwrap();
    for name in ["a", "b", "c", "d"] {
        std::fs::copy(&file, dir.path(&format!("four/{name}.yaml"))).unwrap();
    }
    for format in ["json", "sarif"] {
        let single = ksm(&["lint", &file, "-o", format]);
        single.exits(1);
        // One job: the files one after the other, the largest bounds the memory. Two jobs:
        // at most three files held at a time (two linted, one of slack).
        let four = ksm(&["lint", "-j", "1", &dir.path("four"), "-o", format]);
        four.exits(1);
        let two_jobs = ksm(&["lint", "-j", "2", &dir.path("four"), "-o", format]);
        two_jobs.exits(1);
        assert_eq!(two_jobs.stdout_len, four.stdout_len);
        // A child's reported peak is at least this process's own peak when it was spawned
        // (see the module docs): the other tests of this binary run alongside.
        let floor = own_peak_kib();
        println!(
            "lint -o {format}: one file of {size} bytes: {} KiB, {} bytes out; four of them: {} KiB, {} bytes out",
            single.max_rss_kib, single.stdout_len, four.max_rss_kib, four.stdout_len
        );
        assert!(four.stdout_len > 4 * single.stdout_len * 9 / 10);
        assert!(
            four.max_rss_kib < single.max_rss_kib.max(floor) + 16 * 1024,
            "-o {format}: four files took {} KiB, one {} KiB",
            four.max_rss_kib,
            single.max_rss_kib
        );
        assert!(
            two_jobs.max_rss_kib < 3 * single.max_rss_kib.max(floor) + 16 * 1024,
            "-o {format} -j 2: four files took {} KiB, one {} KiB",
            two_jobs.max_rss_kib,
            single.max_rss_kib
        );
        if format == "json" {
            assert_eq!(four.stdout_items, 4 * 2 * SMPS);
            four.says("\"files\": 4");
        }
    }
}

/// `n` ServiceSets naming a provider no earlier input defines (`ksm-flux`), one in 16 a near
/// miss of it (`ksm-flx`).
fn write_service_sets(w: &mut dyn Write, n: usize) {
    for i in 0..n {
        let provider = if i % 16 == 0 { "ksm-flx" } else { "ksm-flux" };
        write!(
            w,
            "---\napiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceSet\nmetadata:\n  name: set-{i}\n  namespace: team-{i}\nspec:\n  cluster: cluster-{i}\n  provider:\n    name: {provider}\n  services: []\n"
        )
        .unwrap();
    }
}

#[test]
fn lint_memory_across_files_is_not_the_sum_of_the_files() {
    // KSM406 checks provider references against the SMPs of every input, so references are
    // kept until the last file is read: they must not keep their files' text alive.
    let dir = Scratch::new("lint-refs");
    const SETS: usize = 20_000;
    let file = dir.write_with("one/a.yaml", |w| write_service_sets(w, SETS));
    let size = std::fs::metadata(&file).unwrap().len();
    std::fs::create_dir_all(dir.path("eight")).unwrap();
    for i in 0..8 {
        std::fs::copy(&file, dir.path(&format!("eight/{i}.yaml"))).unwrap();
    }
    let smp = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n  name: ksm-flux\nspec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: a\n    namespace: kcm-system\n    readinessRule: has(self.status) && has(self.status.conditions)\n  provisioner: []\n  provisionerCRDs: []\n  selector:\n    matchLabels: {a: b}\n  suspend: false\n";
    std::fs::write(dir.path("one/z-smp.yaml"), smp).unwrap();
    std::fs::write(dir.path("eight/z-smp.yaml"), smp).unwrap();
    let single = ksm(&["lint", "-j", "1", &dir.path("one"), "-o", "github"]);
    let eight = ksm(&["lint", "-j", "1", &dir.path("eight"), "-o", "github"]);
    let floor = own_peak_kib();
    println!(
        "lint of ServiceSets: one file of {size} bytes: {} KiB; eight of them: {} KiB",
        single.max_rss_kib, eight.max_rss_kib
    );
    // The near misses of the SMP defined last are found in every file.
    let near_misses = SETS.div_ceil(16);
    single
        .exits(0)
        .says("did you mean")
        .says(&format!("{near_misses} warnings"));
    eight
        .exits(0)
        .says(&format!("{} warnings", 8 * near_misses));
    // Eight files' text is 8 x {size} bytes (keeping it took 61 MiB more than one file);
    // what stays of each is its 20,000 references' positions, tens of bytes each.
    assert!(
        eight.max_rss_kib < single.max_rss_kib.max(floor) + 16 * 1024,
        "eight files took {} KiB, one {} KiB",
        eight.max_rss_kib,
        single.max_rss_kib
    );
}

/// Writes about `bytes` of SMPs with findings (two each).
fn write_smps_of_size(w: &mut dyn Write, bytes: usize) -> usize {
    let mut counted = CountingWriter(w, 0);
    let mut n = 0;
    while counted.1 < bytes {
        write_smps(&mut counted, 1);
        n += 1;
    }
    n
}

struct CountingWriter<'a>(&'a mut dyn Write, usize);

impl Write for CountingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        self.1 += n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// `testdata/doctor/healthy/dump.yaml` with its namespaced objects copied into as many
/// namespaces as fit in `bytes`, one List document (as `kubectl get -A -o yaml` saves it).
fn write_large_dump(w: &mut dyn Write, bytes: usize) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/doctor/healthy/dump.yaml"),
    )
    .unwrap();
    let dump: Value = serde_saphyr::from_str(&text).unwrap();
    let items = dump["items"].as_array().unwrap();
    let shared = |o: &Value| o["metadata"].get("namespace").is_none() || o["kind"] == "Deployment";
    let mut w = CountingWriter(w, 0);
    writeln!(w, "apiVersion: v1\nkind: List\nitems:").unwrap();
    for o in items.iter().filter(|o| shared(o)) {
        writeln!(w, "- {o}").unwrap();
    }
    let namespaced: Vec<String> = items
        .iter()
        .filter(|o| !shared(o))
        .map(Value::to_string)
        .collect();
    let mut i = 0;
    while w.1 < bytes {
        for o in &namespaced {
            writeln!(
                w,
                "- {}",
                o.replace("\"kcm-system\"", &format!("\"team-{i}\""))
            )
            .unwrap();
        }
        i += 1;
    }
}

/// The values-and-valuesfrom render case with `services` services of about 40 KB of Helm
/// values each.
fn write_large_service_set(w: &mut dyn Write, services: usize) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/render/values-and-valuesfrom/input.yaml"),
    )
    .unwrap();
    let start = text.find("  - name: ingress-nginx\n").unwrap();
    let end = start + text[start..].find("\nstatus:\n").unwrap() + 1;
    let service = &text[start..end];
    let values = "    values: |\n";
    let at = service.find(values).unwrap() + values.len();
    let mut extra = String::new();
    for j in 0..60 {
        extra.push_str(&format!("      k{j}:\n        list:\n"));
        for k in 0..40 {
            extra.push_str(&format!("        - item-{j}-{k}\n"));
        }
        extra.push_str(&format!("        nested: {{a: {{b: {{c: {j}}}}}}}\n"));
    }
    w.write_all(&text.as_bytes()[..start]).unwrap();
    for n in 0..services {
        let named = service[..at].replacen("name: ingress-nginx", &format!("name: svc-{n}"), 1);
        write!(w, "{named}{extra}{}", &service[at..]).unwrap();
    }
    w.write_all(&text.as_bytes()[end..]).unwrap();
}

/// Issue 10's budget: inputs under 10 MB stay under 256 MiB (`clean`) on every path that
/// reads them whole. Their time is measured in release builds (BENCHMARKS.md), not here.
#[test]
fn inputs_under_ten_megabytes_stay_under_256_mib() {
    const SIZE: usize = 9_500_000;
    let dir = Scratch::new("ten-mb");
    let mut smps = 0;
    let lint = dir.write_with("smps.yaml", |w| smps = write_smps_of_size(w, SIZE));
    let dump = dir.write_with("dump.yaml", |w| write_large_dump(w, SIZE - 500_000));
    let render = dir.write_with("render.yaml", |w| write_large_service_set(w, 170));
    for file in [&lint, &dump, &render] {
        let len = std::fs::metadata(file).unwrap().len();
        assert!(
            (8_000_000..10_000_000).contains(&len),
            "{file}: {len} bytes"
        );
    }
    let floor = own_peak_kib();
    let runs = [
        ksm(&["lint", &lint, "-o", "json"]),
        ksm(&["lint", &lint, "-o", "sarif"]),
        ksm(&["lint", &lint, "-o", "github"]),
        ksm(&["eval", "true", "-f", &lint, "-o", "json"]),
        ksm(&["render", &render]),
        ksm(&["doctor", "--from", &dump, "--now", "2026-11-21T12:00:00Z"]),
    ];
    for run in &runs {
        println!(
            "{}: {} KiB peak, {:.1} s (debug build), {} bytes out",
            run.args[..2].join(" "),
            run.max_rss_kib,
            run.elapsed.as_secs_f64(),
            run.stdout_len
        );
    }
    assert_eq!(runs[0].exits(1).says("\"files\": 1").stdout_items, 2 * smps);
    runs[1].exits(1).says("\"ruleId\": \"KSM");
    runs[2].exits(1).says("::warning file=");
    // Every object evaluated (about 230 bytes of result each).
    assert!(runs[3].exits(0).says("\"result\": true").stdout_len > 200 * smps);
    runs[4].exits(0).says("name: dev-cluster-svc-169\n");
    runs[5].exits(0).says("team-1 ").never_says("unhealthy");
    assert!(
        floor < PEAK_RSS_KIB / 2,
        "the test process itself peaked at {floor} KiB"
    );
}

#[test]
fn only_regular_files_are_read() {
    let dir = Scratch::new("special");
    dir.write(
        "tree/ok.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n",
    );
    let fifo = dir.path("tree/fifo.yaml");
    let c = std::ffi::CString::new(fifo.clone()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    std::os::unix::fs::symlink("/dev/zero", dir.path("tree/zero.yaml")).unwrap();
    let socket = dir.path("tree/socket.yaml");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let tree = dir.path("tree");
    ksm_with(&["lint", &tree], b"", Duration::from_secs(30))
        .exits(0)
        .says("1 file, 1 document")
        .says(&format!(
            "note: {fifo}: skipped: a named pipe (FIFO), not a regular file"
        ))
        .says("zero.yaml: skipped: a character device")
        .says("socket.yaml: skipped: a socket");
    ksm_with(&["doctor", "--from", &tree], b"", Duration::from_secs(30))
        .clean()
        .says("fifo.yaml: skipped");
    // Named on the command line: a clear error, at once.
    for (path, what) in [
        (fifo.as_str(), "a named pipe (FIFO), not a regular file"),
        ("/dev/zero", "a character device, not a regular file"),
    ] {
        for args in [
            vec!["lint", path],
            vec!["eval", "true", "-f", path],
            vec!["doctor", "--from", path],
            vec!["render", path],
            vec!["check", path, "--objects", path],
        ] {
            ksm_with(&args, b"", Duration::from_secs(30))
                .exits(2)
                .says(what)
                .says(path);
        }
    }
    // Standard input and the shell's `<(...)` still work.
    ksm_with(
        &["lint", "-"],
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n",
        Duration::from_secs(30),
    )
    .exits(0)
    .says("1 file, 1 document");
    let ok = dir.path("tree/ok.yaml");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "\"$0\" lint <(cat '{ok}') && \"$0\" eval true -f <(cat '{ok}')"
        ))
        .arg(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("1 file, 1 document"), "{text}");
}

/// A server that accepts connections and never answers.
fn silent_server() -> (String, Arc<Mutex<Vec<std::net::TcpStream>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let held = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&held);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            keep.lock().unwrap().push(conn);
        }
    });
    (format!("http://{addr}"), held)
}

fn kubeconfig(dir: &Scratch, server: &str) -> String {
    dir.write(
        "kubeconfig",
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"{server}\"}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u, namespace: kcm-system}}\ncurrent-context: c\nusers:\n- name: u\n  user: {{token: t}}\n"
        ),
    )
}

#[test]
fn a_server_that_never_answers_times_out_with_a_clear_error() {
    let dir = Scratch::new("silent");
    let (url, held) = silent_server();
    let kc = kubeconfig(&dir, &url);
    for args in [
        vec!["doctor"],
        vec!["eval", "true", "deployment/x"],
        vec!["check", "ksm-flux"],
        vec!["render", "--live", "dev-cluster"],
    ] {
        let mut args = args.clone();
        args.extend(["--kubeconfig", &kc, "--request-timeout", "1s"]);
        // Ended by itself (the harness kills a hung one and fails), after the timeout.
        let run = ksm_with(&args, b"", Duration::from_secs(60));
        run.exits(2)
            .says(": timed out after 1s")
            .says(url.trim_start_matches("http://").trim_end_matches('/'))
            .never_says("SendRequest");
        assert!(
            run.elapsed >= Duration::from_secs(1),
            "{args:?}: {:?}",
            run.elapsed
        );
    }
    assert!(!held.lock().unwrap().is_empty());
}

#[test]
fn live_objects_nested_too_deep_are_a_clear_error() {
    let server = fakeapi::FakeApiServer::start();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    server.load_crds_dir(root.join("crds/flux"));
    let mut values = json!(1);
    for _ in 0..200 {
        values = json!({"a": values});
    }
    server.create(json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": "deep", "namespace": "kcm-system"},
        "spec": {"interval": "10m", "chartRef": {"kind": "OCIRepository", "name": "x"}, "values": values}}));
    let dir = Scratch::new("live-deep");
    let kc = dir.path("kubeconfig");
    server.write_kubeconfig(&kc);
    ksm_with(
        &[
            "eval",
            "true",
            "helmrelease/deep",
            "-n",
            "kcm-system",
            "--kubeconfig",
            &kc,
        ],
        b"",
        Duration::from_secs(30),
    )
    .exits(2)
    .says("nests more than 128 levels deep");
}

#[test]
fn a_finding_far_into_a_long_line_is_reported_without_an_excerpt() {
    // Minified JSON: one line of 200 KB, the syntax error at its end. miette panicked
    // padding a label past column 65,535 (found by the yaml_lint fuzz target).
    let dir = Scratch::new("long-line");
    let json = format!(
        "{{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {{\"name\": \"x\"}}, \"data\": {{\"a\": \"{}\"}}, ]",
        "x".repeat(200_000)
    );
    let file = dir.write("long.json", json);
    for format in ["human", "json", "sarif", "github"] {
        ksm(&["lint", &file, "-o", format]).exits(2).says("200");
    }
    ksm(&["lint", &file])
        .says(&format!("{file}:1:2000"))
        .never_says("xxxxxxxxxx");
}

/// This process's peak resident memory so far (VmHWM), in KiB.
fn own_peak_kib() -> i64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

#[test]
fn a_long_rule_is_parsed_once_at_a_time_in_lint() {
    // The `cel` crate's parser takes about 4.5 KB per item of a list literal; lint parsed a
    // rule twice (compile, then the unguarded-field analysis on the main thread), holding
    // both: a 98 KB rule took 490 MiB where eval takes 250.
    let dir = Scratch::new("long-rule");
    let rule = format!("size([{}]) > 0", vec!["1"; 40_000].join(","));
    let rule_file = dir.write("rule.cel", &rule);
    let object = dir.write(
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: team\nstatus: {}\n",
    );
    let smp = dir.write(
        "smp.yaml",
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n  name: s\nspec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: d\n    namespace: team\n    readinessRule: \"{rule}\"\n  provisioner: []\n  provisionerCRDs: []\n  selector:\n    matchLabels: {{a: b}}\n  suspend: false\n"
        ),
    );
    // A process's peak moves by an allocator segment (about 4 MiB) from one run to the next
    // as its threads happen to allocate: the least of three runs of each is compared. Two
    // parses held at once would take about half as much again as eval.
    let (mut eval_kib, mut lint_kib) = (i64::MAX, i64::MAX);
    for _ in 0..3 {
        let eval = ksm(&["eval", "--rule-file", &rule_file, "-f", &object]);
        let lint = ksm(&["lint", &smp]);
        println!(
            "eval: {} KiB, lint: {} KiB",
            eval.max_rss_kib, lint.max_rss_kib
        );
        eval.exits(0);
        assert_eq!(lint.code, Some(0), "{}", truncated(&lint.text()));
        eval_kib = eval_kib.min(eval.max_rss_kib);
        lint_kib = lint_kib.min(lint.max_rss_kib);
    }
    assert!(
        lint_kib < eval_kib * 6 / 5,
        "lint {lint_kib} KiB, eval {eval_kib} KiB"
    );
}

#[test]
fn a_list_rule_of_100000_code_points_compiles_well_under_the_budget() {
    // The longest rule kcm takes, a list literal: the `cel` crate's parser took about 4.5 KB
    // per item (257 MiB for this rule, in eval and in lint); ours is a small part of that.
    let dir = Scratch::new("list-rule");
    let rule = format!("[ {}]==[]", vec!["1"; 49_997].join(","));
    assert_eq!(rule.chars().count(), 100_000);
    let rule_file = dir.write("rule.cel", &rule);
    let object = dir.write(
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: team\nstatus: {}\n",
    );
    let smp = dir.write(
        "smp.yaml",
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n  name: s\nspec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: d\n    namespace: team\n    readinessRule: \"{rule}\"\n  provisioner: []\n  provisionerCRDs: []\n  selector:\n    matchLabels: {{a: b}}\n  suspend: false\n"
        ),
    );
    let eval = ksm(&["eval", "--rule-file", &rule_file, "-f", &object]);
    let lint = ksm(&["lint", &smp]);
    println!(
        "eval: {} KiB, lint: {} KiB",
        eval.max_rss_kib, lint.max_rss_kib
    );
    eval.exits(1).says("1 false");
    assert_eq!(lint.code, Some(0), "{}", truncated(&lint.text()));
    // The same rule with a syntax error: the crate's parser (for cel-go's message) is not run
    // on a rule this long; the error says where ours stopped.
    let broken = dir.write("broken.cel", format!("{})", &rule[..rule.len() - 1]));
    let bad = ksm(&["eval", "--rule-file", &broken, "-f", &object]);
    bad.exits(1)
        .says("syntax error at \")\" (the rule is 100000 bytes long");
    for run in [&eval, &lint, &bad] {
        assert!(
            run.max_rss_kib < 64 * 1024,
            "{}: {} KiB",
            run.args[0],
            run.max_rss_kib
        );
    }
}
