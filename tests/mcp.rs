//! `kubectl ksm mcp` end to end. The sessions are driven by a client this project did not
//! write: the reference Python SDK's (PyPI `mcp`, pinned), installed into a virtual
//! environment on first use. Each tool is called from a dump (in the protocol's current
//! revision, 2026-07-28) and against the fake API server (in 2025-11-25, with its initialize
//! handshake), and its result compared with the CLI's JSON for the same question. Without a registry to
//! install the SDK from, those tests are skipped with a notice (and fail when CI=true). The
//! framing (unreadable lines) and the call timeout are checked with raw JSON-RPC lines.

mod fakeapi;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use fakeapi::{FakeApiServer, Fault};
use serde_json::{Value, json};

/// The reference SDK, at the version these tests were written against.
const SDK: &str = "mcp==2.3.0";
const NOW: &str = "2026-11-21T12:00:00Z";
/// A bound on waiting for the server's next line: only a hung server reaches it.
const HANG: Duration = Duration::from_secs(300);
/// What the dump's Secrets hold (decoded, and as saved); no result may show it.
const SECRET_MARKS: [&str; 4] = [
    "DOCTOR-MUST-NEVER-PRINT-THIS",
    "RkFLRSBLRVkg",
    "YXBpVmVyc2lvbjog",
    "RkFLRS1UT0tFTi",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_kubectl-ksm")
}

fn dump() -> PathBuf {
    root().join("testdata/doctor/multi-problem/dump.yaml")
}

/// The virtual environment's Python with the SDK, made once for all the tests; None (with a
/// notice) when it cannot be installed here, a failure under CI.
fn python() -> Option<PathBuf> {
    static MADE: OnceLock<Mutex<Option<Option<PathBuf>>>> = OnceLock::new();
    let mut made = MADE.get_or_init(|| Mutex::new(None)).lock().unwrap();
    if let Some(p) = &*made {
        return p.clone();
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-sdk-{}", &SDK[5..]));
    let python = venv.join("bin/python");
    let works = |p: &Path| {
        Command::new(p)
            .args(["-c", "import mcp.client.stdio"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let result = if works(&python) {
        Some(python)
    } else {
        let partial = venv.with_extension("partial");
        let _ = std::fs::remove_dir_all(&partial);
        let _ = std::fs::remove_dir_all(&venv);
        let step = |cmd: &mut Command| -> Result<(), String> {
            let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!(
                    "{cmd:?}: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
        };
        let installed = step(Command::new("python3").arg("-m").arg("venv").arg(&partial))
            .and_then(|()| {
                step(Command::new(partial.join("bin/pip")).args([
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    SDK,
                ]))
            })
            .and_then(|()| std::fs::rename(&partial, &venv).map_err(|e| e.to_string()));
        match installed {
            Ok(()) if works(&python) => Some(python),
            outcome => {
                let why = outcome
                    .err()
                    .unwrap_or_else(|| "the SDK does not import".into());
                assert!(
                    std::env::var("CI").as_deref() != Ok("true"),
                    "CI: the MCP client SDK ({SDK}) could not be installed: {why}"
                );
                eprintln!(
                    "note: skipping the MCP client tests: {SDK} could not be installed from PyPI: {why}"
                );
                None
            }
        }
    };
    *made = Some(result.clone());
    result
}

/// One session of the SDK's client with `kubectl-ksm ARGS`, making `calls` (tool, arguments);
/// `mode` is the client's: "auto" (the newest revision, found with server/discover) or
/// "legacy" (the initialize handshake).
fn session(python: &Path, mode: &str, args: &[&str], calls: &[(&str, Value)]) -> Value {
    let plan = json!({
        "command": bin(),
        "args": args,
        "mode": mode,
        "cwd": root(),
        "env": {"PATH": std::env::var("PATH").unwrap_or_default()},
        "calls": calls.iter().map(|(t, a)| json!({"tool": t, "arguments": a})).collect::<Vec<_>>(),
    });
    let dir = tempdir("plan");
    let path = dir.join("plan.json");
    std::fs::write(&path, plan.to_string()).unwrap();
    let out = Command::new(python)
        .arg(root().join("tests/mcp/client.py"))
        .arg(&path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the client failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn tempdir(what: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("ksm-mcp-{what}-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The CLI's JSON for the same question (stdin given to it when some).
fn cli_json(args: &[&str], stdin: Option<&str>) -> Value {
    let mut child = Command::new(bin())
        .args(args)
        .args(["-o", "json"])
        .current_dir(root())
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input
        .write_all(stdin.unwrap_or_default().as_bytes())
        .unwrap();
    drop(input);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"))
}

fn smp_manifest() -> String {
    std::fs::read_to_string(root().join("testdata/examples/smp-flux.yaml")).unwrap()
}

/// The questions asked of every source, each as a tool call and as the CLI's arguments
/// (without the source's flags).
fn questions() -> Vec<(&'static str, Value, Vec<&'static str>, Option<String>)> {
    vec![
        (
            "doctor",
            json!({"allNamespaces": true}),
            vec!["doctor", "-A", "--now", NOW],
            None,
        ),
        (
            "doctor",
            json!({"target": "serviceset/prod-eu", "namespace": "team-a"}),
            vec!["doctor", "serviceset/prod-eu", "-n", "team-a", "--now", NOW],
            None,
        ),
        (
            "tree",
            json!({"allNamespaces": true}),
            vec!["tree", "-A", "--now", NOW],
            None,
        ),
        (
            "trace",
            json!({"start": "hr/prod-eu-cert-manager", "namespace": "team-a"}),
            vec![
                "trace",
                "hr/prod-eu-cert-manager",
                "-n",
                "team-a",
                "--now",
                NOW,
            ],
            None,
        ),
        (
            "check",
            json!({"smps": ["ksm-flux"]}),
            vec!["check", "ksm-flux"],
            None,
        ),
        (
            "eval",
            json!({"rule": "has(self.status.readyReplicas)", "object": "deploy/helm-controller", "namespace": "flux-system"}),
            vec![
                "eval",
                "has(self.status.readyReplicas)",
                "deploy/helm-controller",
                "-n",
                "flux-system",
            ],
            None,
        ),
        (
            "eval",
            json!({"rule": "self.data[\"tls.key\"] == \"x\"", "object": "secret/prod-eu-ca", "namespace": "team-a"}),
            vec![
                "eval",
                "self.data[\"tls.key\"] == \"x\"",
                "secret/prod-eu-ca",
                "-n",
                "team-a",
            ],
            None,
        ),
        (
            "render",
            json!({"serviceset": "prod-eu", "namespace": "team-a"}),
            vec!["render", "prod-eu", "-n", "team-a"],
            None,
        ),
        (
            "lint",
            json!({"manifests": smp_manifest()}),
            vec!["lint", "-"],
            Some(smp_manifest()),
        ),
    ]
}

/// Asks every question of a server run with `server_args` in the protocol's revision
/// `revision` (2026-07-28, the current one; or 2025-11-25 and its initialize handshake), and
/// of the CLI with `cli_source` (and `--live` for render when live); the answers must be the
/// same.
fn tools_answer_as_the_cli(
    python: &Path,
    revision: &str,
    server_args: &[&str],
    cli_source: &[&str],
    live: bool,
) {
    let questions = questions();
    let mut calls: Vec<(&str, Value)> = questions
        .iter()
        .map(|(t, a, _, _)| (*t, a.clone()))
        .collect();
    calls.extend([
        ("explain", json!({"code": "KSM204"})),
        (
            "doctor",
            json!({"target": "serviceset/nope", "namespace": "team-a"}),
        ),
        ("doctor", json!({"target": 5})),
        ("eval", json!({"rule": "true"})),
        ("no-such-tool", json!({})),
    ]);
    let mode = if revision == "2026-07-28" {
        "auto"
    } else {
        "legacy"
    };
    let s = session(python, mode, server_args, &calls);
    let text = s.to_string();
    for mark in SECRET_MARKS {
        assert!(!text.contains(mark), "Secret data left the server: {mark}");
    }
    assert_eq!(s["serverInfo"]["name"], "kubectl-ksm");
    assert_eq!(s["protocolVersion"], revision);
    let tools: Vec<&str> = s["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "doctor", "tree", "trace", "check", "eval", "lint", "render", "explain"
        ]
    );
    for t in s["tools"].as_array().unwrap() {
        assert_eq!(t["annotations"]["readOnlyHint"], true, "{t}");
        assert_eq!(t["annotations"]["destructiveHint"], false, "{t}");
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
    }
    let results = s["calls"].as_array().unwrap();
    for (i, (tool, args, cli, stdin)) in questions.iter().enumerate() {
        let r = &results[i];
        assert_eq!(r["isError"], false, "{tool} {args}: {r}");
        let mut cli_args: Vec<&str> = cli.clone();
        if *tool != "lint" {
            cli_args.extend(cli_source);
            if live && *tool == "render" {
                cli_args.push("--live");
            }
        }
        let expected = cli_json(&cli_args, stdin.as_deref());
        assert_eq!(
            r["structured"], expected,
            "{tool} {args} differs from {cli_args:?}"
        );
        let content: Value = serde_json::from_str(r["texts"][0].as_str().unwrap()).unwrap();
        assert_eq!(
            content, expected,
            "{tool}: the text content is the report too"
        );
    }
    let rest = &results[questions.len()..];
    let explained = Command::new(bin())
        .args(["lint", "--explain", "KSM204"])
        .output()
        .unwrap();
    assert_eq!(rest[0]["isError"], false);
    assert_eq!(
        rest[0]["texts"][0].as_str().unwrap(),
        String::from_utf8_lossy(&explained.stdout).trim_end()
    );
    assert_eq!(rest[1]["isError"], true, "{}", rest[1]);
    assert!(
        rest[1]["texts"][0]
            .as_str()
            .unwrap()
            .contains("no ServiceSet \"nope\""),
        "{}",
        rest[1]
    );
    for (r, what) in [
        (&rest[2], "must be a string"),
        (&rest[3], "`object` is required"),
        (&rest[4], "no tool named"),
    ] {
        assert_eq!(r["protocolError"]["code"], -32602, "{r}");
        assert!(
            r["protocolError"]["message"]
                .as_str()
                .unwrap()
                .contains(what),
            "{r}"
        );
    }
}

#[test]
fn every_tool_answers_from_a_dump_as_the_cli_does() {
    let Some(python) = python() else { return };
    let d = dump();
    let d = d.to_str().unwrap();
    tools_answer_as_the_cli(
        &python,
        "2026-07-28",
        &["mcp", "--from", d, "--now", NOW],
        &["--from", d],
        false,
    );
}

#[test]
fn every_tool_answers_from_the_api_server_as_the_cli_does_and_only_reads() {
    let Some(python) = python() else { return };
    let server = FakeApiServer::start();
    for dir in ["crds/kcm", "crds/flux", "crds/sveltos"] {
        server.load_crds_dir(root().join(dir));
    }
    server.load_objects_yaml(&std::fs::read_to_string(dump()).unwrap());
    let dir = tempdir("live");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig);
    let k = kubeconfig.to_str().unwrap();
    tools_answer_as_the_cli(
        &python,
        "2025-11-25",
        &["mcp", "--kubeconfig", k, "--now", NOW],
        &["--kubeconfig", k],
        true,
    );
    for r in server.requests() {
        assert!(
            matches!(r.verb.as_str(), "get" | "list" | "watch"),
            "a tool sent {} {}",
            r.verb,
            r.path
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server spoken to with raw lines.
struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Raw {
    fn start(args: &[&str]) -> Raw {
        let mut child = Command::new(bin())
            .args(args)
            .current_dir(root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Raw {
            stdin: child.stdin.take(),
            child,
            lines: rx,
        }
    }

    fn send(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a line in pieces, pausing between them, as a client's writes may reach the
    /// server.
    fn send_in_pieces(&mut self, line: &[u8], pieces: usize) {
        let stdin = self.stdin.as_mut().unwrap();
        let size = line.len().div_ceil(pieces);
        for piece in line.chunks(size) {
            stdin.write_all(piece).unwrap();
            stdin.flush().unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(HANG)
            .expect("the server answers (or it hung)");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    fn initialize(&mut self) {
        self.send(br#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
        let r = self.next();
        assert_eq!(r["id"], "init", "{r}");
        assert_eq!(r["result"]["serverInfo"]["name"], "kubectl-ksm");
        self.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    fn call(&mut self, id: u32, tool: &str, arguments: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        self.send(request.to_string().as_bytes());
        let r = self.next();
        assert_eq!(r["id"], id, "{r}");
        r
    }

    /// Ends the input; the server must end by itself, with its exit code.
    fn close(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let _ = tx.send(self.child.wait().map(|s| s.code()));
        });
        rx.recv_timeout(HANG)
            .expect("the server ends when its input ends")
            .unwrap()
    }
}

#[test]
fn unreadable_lines_get_protocol_errors_and_the_server_keeps_serving() {
    let d = dump();
    let mut raw = Raw::start(&["mcp", "--from", d.to_str().unwrap()]);
    raw.send(b"this is not json");
    let r = raw.next();
    assert_eq!(
        (r["error"]["code"].as_i64(), r["id"].is_null()),
        (Some(-32700), true),
        "{r}"
    );
    raw.initialize();
    for line in [
        &b"{oops"[..],
        b"\xff\xfe not utf-8",
        b"[1,2]",
        br#"{"jsonrpc":"2.0","id":9}"#,
    ] {
        raw.send(line);
        let r = raw.next();
        let code = r["error"]["code"].as_i64().unwrap_or_default();
        assert!(
            [-32700, -32600].contains(&code) && r["id"].is_null() && r["jsonrpc"] == "2.0",
            "{}: {r}",
            String::from_utf8_lossy(line)
        );
    }
    let r = raw.call(2, "tree", json!({}));
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(r["result"]["structuredContent"]["kind"], "Tree");
    let r = raw.call(3, "explain", json!({"code": 204}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(raw.close(), Some(0));
}

#[test]
fn a_cluster_that_does_not_answer_gives_a_timeout_error_and_the_server_goes_on() {
    let server = FakeApiServer::start();
    for dir in ["crds/kcm", "crds/flux", "crds/sveltos"] {
        server.load_crds_dir(root().join(dir));
    }
    // Every request waits longer than the call may take (and the verbs' own request
    // timeout, set longer still, does not end the call first).
    server.inject(Fault::Delay {
        verb: None,
        resource: None,
        delay: Duration::from_secs(600),
        times: 10_000,
    });
    let dir = tempdir("slow");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig);
    let mut raw = Raw::start(&[
        "mcp",
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "--call-timeout",
        "1s",
        "--request-timeout",
        "10m",
    ]);
    raw.initialize();
    let r = raw.call(1, "doctor", json!({}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    let message = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(message.starts_with("timed out after 1s"), "{message}");
    let r = raw.call(2, "explain", json!({"code": "KSM204"}));
    assert_eq!(r["result"]["isError"], false, "{r}");
    // The verb still waiting on the cluster does not keep the server from ending.
    assert_eq!(raw.close(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether `actual` holds everything `expected` says: the same scalars, each key of an
/// object, and each element of a list in some element of the actual list.
fn holds(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|av| holds(av, v))),
        (Value::Array(a), Value::Array(e)) => e.iter().all(|v| a.iter().any(|av| holds(av, v))),
        _ => actual == expected,
    }
}

#[test]
fn the_readmes_example_conversation_is_what_the_server_answers() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (_, after) = readme
        .split_once("<!-- mcp-example: ")
        .expect("the README's MCP example");
    let (args, block) = after.split_once(" -->").unwrap();
    let block = block
        .split_once("```text\n")
        .unwrap()
        .1
        .split_once("```")
        .unwrap()
        .0;
    let args: Vec<&str> = args.split_whitespace().collect();
    let mut raw = Raw::start(&args);
    raw.initialize();
    let mut last: Option<Value> = None;
    let mut id = 0;
    for line in block.lines() {
        if let Some(call) = line.strip_prefix("→ ") {
            let (tool, arguments) = call.split_once(' ').unwrap();
            id += 1;
            let r = raw.call(id, tool, serde_json::from_str(arguments).unwrap());
            assert_eq!(r["result"]["isError"], false, "{line}: {r}");
            last = Some(r["result"].clone());
        } else if let Some(expected) = line.strip_prefix("← ") {
            let expected: Value = serde_json::from_str(expected).unwrap();
            let result = last.take().expect("a result follows a call");
            assert!(
                holds(&result["structuredContent"], &expected),
                "the README says {expected}\nthe server answered {}",
                result["structuredContent"]
            );
        }
    }
    assert!(id >= 3, "the example makes its calls");
    assert_eq!(raw.close(), Some(0));
}

/// The server reads a message whose line comes in several writes, while it is busy sending
/// the answer to the one before (its read is then dropped and taken up again).
#[test]
fn a_message_written_in_pieces_is_read_whole_while_answers_go_out() {
    let d = dump();
    let mut raw = Raw::start(&["mcp", "--from", d.to_str().unwrap()]);
    raw.initialize();
    for id in 1..=30u32 {
        let (tool, arguments) = if id % 2 == 0 {
            ("explain", json!({"code": "KSM629"}))
        } else {
            ("tree", json!({}))
        };
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}});
        raw.send_in_pieces(request.to_string().as_bytes(), 3);
        let r = raw.next();
        assert_eq!(r["id"], id, "{r}");
        assert_eq!(r["result"]["isError"], false, "{r}");
    }
    assert_eq!(raw.close(), Some(0));
}

#[test]
fn holds_compares_what_the_readme_shows_with_a_result() {
    let actual = json!({"a": 1, "b": [{"c": 2, "d": 3}, {"c": 4}], "e": "x"});
    assert!(holds(&actual, &json!({"a": 1, "b": [{"c": 4}]})));
    assert!(!holds(&actual, &json!({"a": 2})));
    assert!(!holds(&actual, &json!({"b": [{"c": 5}]})));
    assert!(!holds(&actual, &json!({"f": null})));
}
