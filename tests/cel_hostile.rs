//! Hostile CEL: rules built to exhaust time or memory. Every evaluation is bounded by one cost
//! model (time and memory) and a rule that runs out of it is the distinct budget outcome, in
//! every subcommand that evaluates rules, never a crash, a hang or an ordinary error. The
//! child processes run with their address space limited (RLIMIT_AS), so a rule that tried to
//! allocate what the issue's examples allocated (2 GiB strings) would abort the process.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

/// Address space of each child: the compiler thread reserves a 256 MiB stack, the binary
/// and its allocator the rest of what a run needs.
const ADDRESS_SPACE: u64 = 1 << 30;

fn ksm() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"));
    cmd.env_clear().current_dir(env!("CARGO_MANIFEST_DIR"));
    // SAFETY: setrlimit is async-signal-safe and touches nothing shared with the parent.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.code().is_some(),
        "killed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("memory allocation"),
        "{stderr}"
    );
    out
}

/// A fresh directory for each call (the tests run in parallel).
fn scratch(name: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!(
        "kubectl-ksm-cel-hostile-{}-{name}-{n}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// `eval -o json` of one rule on one object: the single result.
fn eval(rule: &str, object: &Value, extra: &[&str]) -> Value {
    let dir = scratch("eval");
    let obj = write(&dir, "object.json", object.to_string());
    let rule_file = write(&dir, "rule.cel", rule);
    let out = run(ksm()
        .args(["eval", "-o", "json", "--rule-file"])
        .arg(&rule_file)
        .arg("-f")
        .arg(&obj)
        .args(extra));
    std::fs::remove_dir_all(&dir).ok();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    v["results"][0].clone()
}

fn configmap(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "spec": spec})
}

/// The budget outcome, with the resource that ran out.
fn budget(result: &Value) -> &str {
    assert_eq!(result["result"], Value::Null, "{result}");
    assert_eq!(result["error"], Value::Null, "{result}");
    let b = &result["budgetExceeded"];
    assert!(
        b["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("kcm would keep evaluating")),
        "{result}"
    );
    b["resource"].as_str().unwrap()
}

#[test]
fn doubling_a_string_stops_at_the_memory_ceiling() {
    // 31 doublings of a two-byte string would be 4 GiB.
    let rule = format!("[self.spec.s]{}.size() > 0", ".map(s, s + s)".repeat(31));
    let r = eval(&rule, &configmap(json!({"s": "ab"})), &[]);
    assert_eq!(budget(&r), "memory");
}

#[test]
fn doubling_a_list_stops_at_the_memory_ceiling() {
    let rule = format!("[[1]]{}.size() > 0", ".map(l, l + l)".repeat(31));
    let r = eval(&rule, &configmap(json!({})), &[]);
    assert_eq!(budget(&r), "memory");
}

#[test]
fn scanning_a_large_string_costs_by_its_bytes() {
    // 10,000 scans of a 4 MiB string: each contains(), size() or == costs its bytes.
    let big = "a".repeat(4 << 20);
    let items: Vec<u32> = (0..10_000).collect();
    let obj = configmap(json!({"big": big, "items": items}));
    for rule in [
        "self.spec.items.all(i, !self.spec.big.contains('b'))",
        "self.spec.items.all(i, size(self.spec.big) > 0)",
        "self.spec.items.all(i, self.spec.big.startsWith(self.spec.big))",
        "self.spec.items.all(i, !self.spec.big.matches('b'))",
        "self.spec.items.all(i, self.spec.big in [self.spec.big])",
    ] {
        let r = eval(rule, &obj, &[]);
        assert_eq!(budget(&r), "cost", "{rule}");
    }
    // comparing two different copies walks their bytes, and copying them fills memory
    let r = eval(
        "self.spec.items.all(i, self.spec.big + '' == self.spec.big + '')",
        &obj,
        &[],
    );
    assert_eq!(budget(&r), "memory");
}

#[test]
fn patterns_built_at_run_time_cost_their_compilation() {
    // 1,000 distinct patterns, each compiled once: the rule finishes
    let items: Vec<u32> = (0..1000).collect();
    let obj = configmap(json!({"items": items}));
    let r = eval(
        "self.spec.items.all(i, !'abc'.matches('^x' + string(i) + '$'))",
        &obj,
        &[],
    );
    assert_eq!(r["result"], true, "{r}");
    // heavy Unicode patterns cost what compiling them takes
    let r = eval(
        r"self.spec.items.all(i, !'x'.matches('\\pL{100}' + string(i)))",
        &obj,
        &[],
    );
    budget(&r);
}

#[test]
fn nested_comprehensions_stop_at_the_cost_budget() {
    let items: Vec<u32> = (0..500).collect();
    let r = eval(
        "self.spec.items.all(x, self.spec.items.all(y, self.spec.items.all(z, x + y + z >= 0)))",
        &configmap(json!({"items": items})),
        &[],
    );
    assert_eq!(budget(&r), "cost");
}

#[test]
fn building_maps_and_lists_costs_their_elements() {
    let items: Vec<u32> = (0..2000).collect();
    let obj = configmap(json!({"items": items}));
    let r = eval(
        "self.spec.items.all(x, self.spec.items.map(y, {'k': y, 'v': [y, y]}).size() > 0)",
        &obj,
        &[],
    );
    budget(&r);
    // within the budget the same shapes give their verdict
    let r = eval(
        "self.spec.items.map(y, {'k': y, 'v': [y, y]}).size() == 2000",
        &obj,
        &[],
    );
    assert_eq!(r["result"], true, "{r}");
}

#[test]
fn the_memory_ceiling_and_cost_limit_are_flags() {
    let rule = format!("[self.spec.s]{}.size() > 0", ".map(s, s + s)".repeat(20));
    // 2 MiB of doubled string: under the default ceiling...
    let r = eval(&rule, &configmap(json!({"s": "ab"})), &[]);
    assert_eq!(r["result"], true, "{r}");
    // ... and over a ceiling of 1 MiB
    let r = eval(
        &rule,
        &configmap(json!({"s": "ab"})),
        &["--memory-limit", "1048576"],
    );
    assert_eq!(budget(&r), "memory");
}

/// The rule of an SMP in a copy of a testdata file, replaced by `rule`.
fn with_rule(path: &str, old: &str, rule: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    assert!(text.contains(old), "{path}");
    text.replacen(old, &format!("{rule:?}"), 1)
}

#[test]
fn check_reports_a_rule_over_the_budget_as_unknown_in_every_format() {
    let dir = scratch("check");
    let rule = format!(
        "[self.metadata.name]{}.size() > 0",
        ".map(s, s + s)".repeat(31)
    );
    let smp = with_rule(
        "testdata/examples/smp-flux.yaml",
        "has(self.status.readyReplicas) && self.status.readyReplicas > 0",
        &rule,
    );
    let smp = write(&dir, "smp.yaml", smp);
    let base = || {
        let mut c = ksm();
        c.arg("check")
            .arg(&smp)
            .args(["--objects", "testdata/check"]);
        c
    };
    let out = run(base().args(["-o", "json"]));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["providers"][0]["ready"], Value::Null, "{v}");
    assert_eq!(v["summary"]["undetermined"], 1, "{v}");
    assert_eq!(v["summary"]["notReady"], 0, "{v}");
    let provisioner = v["providers"][0]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "ProvisionerReady")
        .unwrap();
    assert_eq!(provisioner["status"], "Unknown", "{v}");
    assert_eq!(provisioner["reason"], "NotEvaluatedBudgetExceeded", "{v}");
    let evaluation = v["providers"][0]["evaluations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| !e["budgetExceeded"].is_null())
        .expect("an evaluation over the budget");
    assert_eq!(evaluation["error"], Value::Null);
    let out = run(&mut base());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("UNKNOWN (a rule exceeds the evaluation budget; kcm would keep evaluating)")
            && text.contains("no verdict: exceeds the evaluation budget"),
        "{text}"
    );
}

#[test]
fn doctor_reports_a_rule_over_the_budget_in_every_format() {
    let dir = scratch("doctor");
    let rule = format!(
        "[self.metadata.name]{}.size() > 0",
        ".map(s, s + s)".repeat(31)
    );
    let dump = with_rule(
        "testdata/doctor/smp-not-ready/dump.yaml",
        "has(self.status.readyReplicas) && self.status.readyReplicas > 0",
        &rule,
    );
    let dump = write(&dir, "dump.yaml", dump);
    for format in ["human", "json", "sarif", "github", "yaml"] {
        let out = run(ksm()
            .args([
                "doctor",
                "--now",
                "2026-11-21T12:00:00Z",
                "-o",
                format,
                "--from",
            ])
            .arg(&dump));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("no verdict: exceeds the evaluation budget"),
            "{format}: {text}"
        );
    }
}

#[test]
fn explanations_share_the_budget_and_are_shortened() {
    // A 64 KiB string in a rule of 41 nested negations (false, so explained): every clause
    // reuses the value of the expensive core, computed once within the rule's budget.
    let big = "x".repeat(64 << 10);
    let core = "self.spec.items.all(i, self.spec.big + string(i) != self.spec.big)";
    let rule = format!("{}{core}{}", "!(".repeat(41), ")".repeat(41));
    let items: Vec<u32> = (0..200).collect();
    let obj = configmap(json!({"big": big, "items": items}));
    // the core alone takes most of the budget: evaluating it once per clause would not fit
    let r = eval(core, &obj, &["--cost-limit", "600000", "-v", "1"]);
    assert_eq!(r["result"], true, "{r}");
    let r = eval(
        &format!("[{}].all(b, b)", [core; 3].join(", ")),
        &obj,
        &["--cost-limit", "600000"],
    );
    assert_eq!(budget(&r), "cost");
    let r = eval(&rule, &obj, &["--cost-limit", "600000"]);
    assert_eq!(r["result"], false, "{r}");
    let explanation = r["explanation"].as_array().unwrap();
    assert_eq!(explanation.len(), 42);
    for (depth, c) in explanation.iter().enumerate() {
        assert_eq!(c["depth"], depth, "{c}");
        assert!(c["error"].is_null(), "{c}");
        assert_eq!(c["value"], depth % 2 == 1, "{c}");
        // each clause's text is its whole sub-expression, shortened
        let text = c["text"].as_str().unwrap();
        assert!(
            text.ends_with('…') || text.matches('(').count() == text.matches(')').count(),
            "{text}"
        );
    }
    let printed = r.to_string();
    assert!(printed.len() < 64 << 10, "{} bytes", printed.len());
    // values are cut with a marker
    let r = eval(
        "self.spec.big == 'y'",
        &configmap(json!({"big": "x".repeat(100_000)})),
        &[],
    );
    let lhs = r["explanation"][0]["operands"][0]["value"]
        .as_str()
        .unwrap();
    assert!(lhs.len() < 400 && lhs.ends_with('…'), "{lhs}");
}

#[test]
fn a_secrets_data_never_shows_in_any_output_of_eval() {
    let dir = scratch("secret");
    let secret = write(
        &dir,
        "secret.json",
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "creds", "namespace": "default", "annotations": {
                "kubectl.kubernetes.io/last-applied-configuration":
                    "{\"data\":{\"password\":\"c3VwZXJzZWNyZXQ=\"}}"}},
            "data": {"password": "c3VwZXJzZWNyZXQ="},
            "stringData": {"token": "hunter2-token"}
        })
        .to_string(),
    );
    for rule in [
        "self == {}",
        "self.data.password == 'x'",
        "self.data.password + 'x' == 'y'",
        "[self.data].all(d, d.password == 'q')",
        "self.stringData.token.startsWith('zz')",
        "self.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] == ''",
        // errors whose message would quote the value
        "self.data[self.stringData.token] == 'x'",
        "{'a': 1}[self.stringData.token] == 1",
        "self.stringData.token.matches(self.stringData.token + '(')",
        "self.stringData.token",
    ] {
        for format in ["human", "json"] {
            let out = run(ksm()
                .args(["eval", "-v", "1", "-o", format, rule, "-f"])
                .arg(&secret));
            assert!(out.status.code().is_some_and(|c| c < 2), "{rule}: {out:?}");
            let text = String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr);
            for hidden in ["c3VwZXJz", "hunter2"] {
                assert!(!text.contains(hidden), "{rule} ({format}): {text}");
            }
        }
    }
    let out = run(ksm().args(["eval", "self == {}", "-f"]).arg(&secret));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\"password\": <redacted: 16 bytes>")
            && text.contains("\"token\": <redacted: 13 bytes>"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
