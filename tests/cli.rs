//! Process-level tests of the `kubectl-ksm` binary: every subcommand, output format and exit
//! code, as snapshots of the real process (arguments, exit code, stdout, stderr).

use std::process::Command;

use std::io::Write;
use std::process::{Output, Stdio};

use insta_cmd::{assert_cmd_snapshot, get_cargo_bin};

/// The binary with a clean environment, run from the repository root so paths in snapshots
/// are relative and stable.
fn ksm() -> Command {
    let mut cmd = Command::new(get_cargo_bin("kubectl-ksm"));
    cmd.env_clear().current_dir(env!("CARGO_MANIFEST_DIR"));
    cmd
}

#[test]
fn version_prints_name_and_version() {
    let out = ksm().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("kubectl-ksm {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn version_subcommand_prints_commit_and_build_date() {
    let out = ksm().arg("version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!("kubectl-ksm: v{}", env!("CARGO_PKG_VERSION"))
    );
    assert!(lines[1].starts_with("commit: "), "{text}");
    assert!(lines[2].starts_with("built: 20"), "{text}");
    assert!(lines[3].starts_with("platform: "), "{text}");
    for format in ["json", "yaml"] {
        let out = ksm().args(["version", "-o", format]).output().unwrap();
        assert!(out.status.success());
        let v: serde_json::Value = if format == "json" {
            serde_json::from_slice(&out.stdout).unwrap()
        } else {
            serde_saphyr::from_slice(&out.stdout).unwrap()
        };
        assert_eq!(v["kind"], "Version");
        assert_eq!(v["version"], 1);
        let c = &v["clientVersion"];
        assert_eq!(
            c["gitVersion"],
            format!("v{}", env!("CARGO_PKG_VERSION")).as_str()
        );
        for key in ["gitCommit", "gitTreeState", "buildDate", "platform"] {
            assert!(c[key].as_str().is_some_and(|s| !s.is_empty()), "{key}: {v}");
        }
    }
    let out = ksm().args(["version", "-o", "sarif"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn completion_scripts_for_every_shell() {
    for (shell, generated, marker) in [
        ("bash", "kubectl-ksm.bash", "complete -F"),
        ("zsh", "_kubectl-ksm", "#compdef kubectl-ksm"),
        ("fish", "kubectl-ksm.fish", "complete -c kubectl-ksm"),
        (
            "powershell",
            "_kubectl-ksm.ps1",
            "Register-ArgumentCompleter",
        ),
    ] {
        let out = ksm().args(["completion", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(marker), "{shell}: {text}");
        // The same script as the committed one.
        let committed = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("completions")
                .join(generated),
        )
        .unwrap();
        assert_eq!(text, committed, "{shell}");
    }
    let out = ksm().args(["completion", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Each subcommand's `-o` help lists only the formats it supports, and each of them works.
#[test]
fn every_listed_output_format_works() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["lint", "testdata/examples/smp-flux.yaml"],
            &["human", "json", "sarif", "github"],
        ),
        (
            &["eval", "true", "-f", "testdata/check/flux-system.yaml"],
            &["human", "json"],
        ),
        (
            &[
                "check",
                "testdata/examples/smp-flux.yaml",
                "--objects",
                "testdata/check",
            ],
            &["human", "json"],
        ),
        (
            &["render", "testdata/render/helm-chartref/input.yaml"],
            &["yaml", "json"],
        ),
        (
            &[
                "doctor",
                "--from",
                "testdata/doctor/healthy/dump.yaml",
                "--now",
                "2026-11-21T12:00:00Z",
            ],
            &["human", "json", "yaml", "sarif", "github"],
        ),
        (&["version"], &["human", "json", "yaml"]),
    ];
    for (args, formats) in cases {
        let help = ksm().args([args[0], "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&help.stdout).to_string();
        let listed: Vec<&str> = ["human", "json", "yaml", "sarif", "github"]
            .into_iter()
            .filter(|f| {
                let section = help.split("-o, --output").nth(1).unwrap_or("");
                let section = section.split("[default:").next().unwrap_or(section);
                section.contains(&format!("- {f}:"))
            })
            .collect();
        let mut want = formats.to_vec();
        want.sort_unstable();
        let mut got = listed.clone();
        got.sort_unstable();
        assert_eq!(got, want, "{} -o lists {listed:?}", args[0]);
        for f in *formats {
            let out = ksm().args(*args).args(["-o", f]).output().unwrap();
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{args:?} -o {f}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!out.stdout.is_empty(), "{args:?} -o {f}");
            if *f == "json" {
                let v: serde_json::Value = serde_json::from_slice(&out.stdout)
                    .unwrap_or_else(|e| panic!("{args:?} -o json: {e}"));
                if args[0] != "render" {
                    assert_eq!(v["version"], 1, "{args:?}");
                    assert!(v["kind"].as_str().is_some(), "{args:?}");
                    assert_camel_case(&v, &format!("{args:?}"));
                }
            }
        }
    }
}

/// Every key of a report is camelCase (object contents quoted from the input aside).
fn assert_camel_case(v: &serde_json::Value, what: &str) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                assert!(
                    !k.contains('_')
                        && !k.contains('-')
                        && k.chars()
                            .next()
                            .is_some_and(|c| c.is_ascii_lowercase() || c == '$'),
                    "{what}: key {k:?} is not camelCase"
                );
                assert_camel_case(x, what);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| assert_camel_case(x, what)),
        _ => {}
    }
}

/// `| head`: a reader that goes away early does not change the exit code.
#[test]
fn closed_stdout_keeps_the_exit_code() {
    for (args, code) in [
        (&["lint", "testdata/lint/smp-problems.yaml"][..], 1),
        (&["lint", "testdata/examples/smp-flux.yaml"][..], 0),
        (
            &[
                "eval",
                "has(self.status.readyReplicas)",
                "-f",
                "testdata/check/flux-system.yaml",
            ][..],
            1,
        ),
    ] {
        let mut child = ksm()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end before the child writes: every write gets EPIPE.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {out:?}");
        assert!(
            out.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn global_flags_before_the_subcommand() {
    let out = ksm()
        .args([
            "-v",
            "1",
            "--color",
            "never",
            "eval",
            "true",
            "-f",
            "testdata/check/flux-system.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // -o belongs to the subcommand, as kubectl's.
    let out = ksm()
        .args(["-o", "json", "lint", "testdata/examples/smp-flux.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn dumb_terminal_and_width() {
    // Narrow output wraps the diagnostics to the width given by COLUMNS.
    let out = ksm()
        .args(["lint", "testdata/examples/smp-flux-from-guide.yaml"])
        .env("COLUMNS", "60")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // Prose wraps; quoted source lines (`16 │ ...`, `· ──`) cannot.
    let excerpt = |l: &str| {
        let t = l.trim_start();
        t.starts_with('·')
            || t.split_once(" │")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
    };
    assert!(
        text.lines()
            .filter(|l| !excerpt(l))
            .all(|l| l.chars().count() <= 60),
        "{text}"
    );
    let wide = ksm()
        .args(["lint", "testdata/examples/smp-flux-from-guide.yaml"])
        .env("COLUMNS", "200")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&wide.stdout)
            .lines()
            .any(|l| l.chars().count() > 100)
    );
}

#[test]
fn help_shows_kubectl_ksm_usage() {
    assert_cmd_snapshot!(ksm().arg("--help"));
}

#[test]
fn unknown_flag_is_a_usage_error() {
    assert_cmd_snapshot!(ksm().args(["lint", "--no-such-flag", "x.yaml"]));
}

#[test]
fn unsupported_output_format_is_a_usage_error() {
    assert_cmd_snapshot!(ksm().args([
        "eval",
        "true",
        "-f",
        "testdata/check/flux-system.yaml",
        "-o",
        "sarif"
    ]));
}

// ---- lint ----

#[test]
fn lint_guide_smp_warns_and_exits_zero() {
    assert_cmd_snapshot!(ksm().args(["lint", "testdata/examples/smp-flux-from-guide.yaml"]));
}

#[test]
fn lint_guide_smp_with_strict_fails_on_warnings() {
    let out = ksm()
        .args([
            "lint",
            "--strict",
            "-o",
            "json",
            "testdata/examples/smp-flux-from-guide.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn lint_fixed_smp_is_clean() {
    assert_cmd_snapshot!(ksm().args(["lint", "--strict", "testdata/examples/smp-flux.yaml"]));
}

#[test]
fn lint_problems_human() {
    assert_cmd_snapshot!(ksm().args(["lint", "testdata/lint/smp-problems.yaml"]));
}

#[test]
fn lint_problems_json() {
    assert_cmd_snapshot!(ksm().args(["lint", "-o", "json", "testdata/lint/smp-problems.yaml"]));
}

#[test]
fn lint_problems_sarif() {
    assert_cmd_snapshot!(ksm().args(["lint", "-o", "sarif", "testdata/lint/smp-problems.yaml"]));
}

#[test]
fn lint_problems_github() {
    assert_cmd_snapshot!(ksm().args(["lint", "-o", "github", "testdata/lint/smp-problems.yaml"]));
}

/// kcm's health-rule ConfigMaps: load errors at their line:col inside the embedded `rules`.
#[test]
fn lint_health_rule_config_maps() {
    assert_cmd_snapshot!(ksm().args([
        "lint",
        "--color",
        "never",
        "testdata/lint/health-rules.yaml"
    ]));
}

#[test]
fn lint_reads_directories_recursively() {
    assert_cmd_snapshot!(ksm().args(["lint", "testdata/examples"]));
}

#[test]
fn lint_reads_stdin() {
    let input = std::fs::read("testdata/examples/smp-flux.yaml").unwrap();
    assert_cmd_snapshot!(ksm().args(["lint", "-"]).pass_stdin(input));
}

#[test]
fn lint_explain_prints_the_docs_of_a_check() {
    assert_cmd_snapshot!(ksm().args(["lint", "--explain", "KSM204"]));
}

#[test]
fn lint_explain_accepts_names_and_refuses_unknown_codes() {
    let out = ksm()
        .args(["lint", "--explain", "unknown-field"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("KSM101 (unknown-field)"));
    assert_cmd_snapshot!(ksm().args(["lint", "--explain", "KSM999"]));
}

#[test]
fn lint_list_rules() {
    assert_cmd_snapshot!(ksm().args(["lint", "--list-rules"]));
}

#[test]
fn lint_colour_is_off_without_a_terminal_and_on_when_forced() {
    let plain = ksm()
        .args(["lint", "testdata/lint/smp-problems.yaml"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&plain.stdout).contains('\x1b'));
    let forced = ksm()
        .args([
            "lint",
            "--color",
            "always",
            "testdata/lint/smp-problems.yaml",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&forced.stdout).contains('\x1b'));
}

// ---- bad input: a clear error naming the file and position, exit 2 ----

#[test]
fn lint_invalid_yaml() {
    assert_cmd_snapshot!(ksm().args(["lint", "testdata/lint/invalid-yaml.yaml"]));
}

#[test]
fn lint_binary_file() {
    assert_cmd_snapshot!(ksm().args(["lint", "testdata/lint/binary.yaml"]));
}

#[test]
fn lint_non_utf8_file() {
    assert_cmd_snapshot!(ksm().args(["lint", "testdata/lint/latin1.yaml"]));
}

#[test]
fn lint_missing_file() {
    assert_cmd_snapshot!(ksm().args(["lint", "testdata/lint/does-not-exist.yaml"]));
}

#[test]
fn lint_documents_that_are_not_objects() {
    assert_cmd_snapshot!(ksm().args(["lint", "testdata/lint/not-objects.yaml"]));
}

#[test]
fn lint_alias_bomb() {
    assert_cmd_snapshot!(ksm().args(["lint", "testdata/lint/alias-bomb.yaml"]));
}

// ---- eval ----

#[test]
fn eval_true_on_every_object_exits_zero() {
    assert_cmd_snapshot!(ksm().args([
        "eval",
        "has(self.status.observedGeneration)",
        "-f",
        "testdata/check/flux-system.yaml"
    ]));
}

#[test]
fn eval_explains_false_and_failing_objects() {
    assert_cmd_snapshot!(ksm().args([
        "eval",
        "self.status.availableReplicas == self.status.replicas && self.status.readyReplicas > 0",
        "-f",
        "testdata/check/flux-system.yaml"
    ]));
}

#[test]
fn eval_json() {
    assert_cmd_snapshot!(ksm().args([
        "eval",
        "self.status.availableReplicas == self.status.replicas",
        "-f",
        "testdata/check/flux-system.yaml",
        "-o",
        "json"
    ]));
}

#[test]
fn eval_compile_error_is_reported_for_every_object() {
    assert_cmd_snapshot!(ksm().args([
        "eval",
        "status.replicas == 1",
        "-f",
        "testdata/check/flux-system.yaml",
        "-o",
        "json"
    ]));
}

#[test]
fn eval_rule_file_and_objects_from_stdin() {
    let input = std::fs::read("testdata/check/flux-system.yaml").unwrap();
    let dir = tempdir();
    let rule = dir.join("rule.cel");
    std::fs::write(&rule, "has(self.status.readyReplicas)\n").unwrap();
    let mut cmd = ksm();
    cmd.args(["eval", "--rule-file"])
        .arg(&rule)
        .args(["-f", "-", "-o", "json"]);
    let out = run_with_stdin(cmd, &input);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "EvalReport");
    let results: Vec<_> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["result"].clone())
        .collect();
    assert_eq!(results, [true, false, false, true]);
}

#[test]
fn eval_unreadable_input_exits_two() {
    assert_cmd_snapshot!(ksm().args(["eval", "true", "-f", "testdata/lint/invalid-yaml.yaml"]));
}

#[test]
fn eval_budget_is_enforced_and_configurable() {
    let dir = tempdir();
    let obj = dir.join("big.json");
    let items: Vec<u32> = (0..2000).collect();
    std::fs::write(&obj, serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "items": items}).to_string()).unwrap();
    let rule = "self.items.all(x, self.items.all(y, x + y >= 0))";
    let out = ksm()
        .args(["eval", rule, "--cost-limit", "1000000", "-o", "json", "-f"])
        .arg(&obj)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Not a verdict, and not an ordinary error: kcm has no budget.
    assert_eq!(v["results"][0]["result"], serde_json::Value::Null, "{v}");
    assert_eq!(v["results"][0]["error"], serde_json::Value::Null, "{v}");
    assert_eq!(v["results"][0]["budgetExceeded"]["resource"], "cost", "{v}");
    assert_eq!(
        v["results"][0]["budgetExceeded"]["message"],
        "exceeds the evaluation budget (1000000 cost units); kcm would keep evaluating",
        "{v}"
    );
    let human = ksm()
        .args(["eval", rule, "--cost-limit", "1000000", "-f"])
        .arg(&obj)
        .output()
        .unwrap();
    assert_eq!(human.status.code(), Some(1));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.contains("no verdict: exceeds the evaluation budget (1000000 cost units); kcm would keep evaluating")
            && text.contains("1 over the evaluation budget (no verdict)"),
        "{text}"
    );
    // The default budget lets 4,000,000 iterations finish.
    let out = ksm().args(["eval", rule, "-f"]).arg(&obj).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

// ---- check ----

#[test]
fn check_guide_smp_is_not_ready() {
    assert_cmd_snapshot!(ksm().args([
        "check",
        "testdata/examples/smp-flux-from-guide.yaml",
        "--objects",
        "testdata/check"
    ]));
}

#[test]
fn check_fixed_smp_json() {
    assert_cmd_snapshot!(ksm().args([
        "check",
        "testdata/examples/smp-flux.yaml",
        "--objects",
        "testdata/check",
        "-o",
        "json"
    ]));
}

#[test]
fn check_ready_provider_exits_zero() {
    let dir = tempdir();
    let smp = std::fs::read_to_string("testdata/examples/smp-flux.yaml").unwrap();
    // Only the controllers that are ready.
    let smp = smp
        .replace("name: helm-controller", "name: source-controller")
        .replace("name: kustomize-controller", "name: source-controller");
    let path = dir.join("smp.yaml");
    std::fs::write(&path, smp).unwrap();
    let out = ksm()
        .arg("check")
        .arg(&path)
        .args(["--objects", "testdata/check"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ksm-flux: READY"));
}

/// kcm's own default SMP: its rules read Deployment status fields without has(), so a
/// provisioner scaled to 0 fails to evaluate instead of being not ready; lint says so first.
#[test]
fn check_kcm_default_smp_reads_omitted_fields() {
    assert_cmd_snapshot!(ksm().args([
        "check",
        "testdata/examples/smp-ksm-projectsveltos.yaml",
        "--objects",
        "testdata/check-sveltos"
    ]));
    let lint = ksm()
        .args([
            "lint",
            "-o",
            "json",
            "testdata/examples/smp-ksm-projectsveltos.yaml",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&lint.stdout);
    assert_eq!(text.matches("\"KSM204\"").count(), 2, "{text}");
}

#[test]
fn check_without_smp_is_an_error() {
    assert_cmd_snapshot!(ksm().args(["check", "testdata/check/crds.yaml"]));
}

// ---- completion protocol used by kubectl_complete-ksm ----

#[test]
fn kubectl_completion_protocol() {
    assert_cmd_snapshot!(ksm().args(["__complete", "lint", "-o", ""]));
}

fn run_with_stdin(mut cmd: Command, input: &[u8]) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kubectl-ksm-test-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn verbose_explains_true_results_and_counts_files() {
    let out = ksm()
        .args([
            "-v",
            "1",
            "eval",
            "has(self.status.readyReplicas)",
            "-f",
            "testdata/check/flux-system.yaml",
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("  ✓ has(self.status.readyReplicas) → true")
    );
    let quiet = ksm()
        .args([
            "eval",
            "has(self.status.readyReplicas)",
            "-f",
            "testdata/check/flux-system.yaml",
        ])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&quiet.stdout).contains("✓"));
    let out = ksm()
        .args(["lint", "-v", "1", "testdata/examples"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "testdata/examples/smp-flux-from-guide.yaml: 1 document, 1 object checked, 0 skipped, 4 findings\n\
         testdata/examples/smp-flux.yaml: 1 document, 1 object checked, 0 skipped, 0 findings\n\
         testdata/examples/smp-ksm-projectsveltos.yaml: 1 document, 1 object checked, 0 skipped, 2 findings\n"
    );
}

/// kubectl finds the binary as a plugin: `kubectl ksm` runs `kubectl-ksm` from PATH.
#[test]
fn runs_as_a_kubectl_plugin() {
    let Some(kubectl) = which("kubectl") else {
        // The CI machine has kubectl: there a missing one is a failure, not a skip.
        assert!(
            !std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0"),
            "kubectl is not on PATH, and CI is set: this test must run on CI"
        );
        // Straight to stderr, past the test harness's capture: a skip is seen.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED runs_as_a_kubectl_plugin: kubectl not found on PATH\n",
        );
        return;
    };
    let bin_dir = get_cargo_bin("kubectl-ksm").parent().unwrap().to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let out = Command::new(kubectl)
        .args(["ksm", "lint", "testdata/examples/smp-flux.yaml"])
        .env("PATH", path)
        .env("KUBECONFIG", "/dev/null")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "1 file, 1 document: 0 errors, 0 warnings, 0 skipped\n"
    );
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[test]
fn doctor_report_as_one_html_page() {
    // The page (the picture, the findings, escaping); tests/html_report.rs renders it in
    // headless Chromium.
    assert_cmd_snapshot!(ksm().args([
        "doctor",
        "--from",
        "testdata/doctor/multi-problem",
        "--now",
        "2026-11-21T12:00:00Z",
        "-o",
        "html"
    ]));
}

#[test]
fn doctor_findings_as_sarif() {
    assert_cmd_snapshot!(ksm().args([
        "doctor",
        "--from",
        "testdata/doctor/dependency-not-ready/dump.yaml",
        "--now",
        "2026-11-21T12:00:00Z",
        "-o",
        "sarif"
    ]));
}

#[test]
fn doctor_findings_as_github_annotations() {
    assert_cmd_snapshot!(ksm().args([
        "doctor",
        "--from",
        "testdata/doctor/helmrelease-stalled/dump.yaml",
        "--now",
        "2026-11-21T12:00:00Z",
        "-o",
        "github"
    ]));
}

#[test]
fn every_family_of_codes_is_explained() {
    for (sub, code) in [
        ("lint", "KSM609"),
        ("doctor", "KSM609"),
        ("render", "KSM505"),
        ("lint", "KSM204"),
        ("doctor", "flux-object-missing"),
    ] {
        let out = ksm().args([sub, "--explain", code]).output().unwrap();
        assert!(out.status.success(), "{sub} --explain {code}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("## What it finds"), "{text}");
    }
    let out = ksm()
        .args(["doctor", "--explain", "KSM999"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Counts of one read in the singular, in every subcommand's summary.
#[test]
fn counts_of_one_are_singular() {
    let dir = std::env::temp_dir().join(format!("ksm-singular-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let one = dir.join("one.yaml");
    std::fs::write(
        &one,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: n\nstringData:\n  k: a\n",
    )
    .unwrap();
    let text = |o: Output| {
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
    };
    let out = text(
        ksm()
            .args(["eval", "self.stringData.k == 'b'", "-f"])
            .arg(&one)
            .output()
            .unwrap(),
    );
    assert!(out.contains("1 object: 0 true, 1 false, 0 failed"), "{out}");
    assert!(out.contains("<redacted: 1 byte>"), "{out}");
    let saved = dir.join("saved.yaml");
    let out = text(
        ksm()
            .args(["doctor", "--from"])
            .arg(&one)
            .arg("--save")
            .arg(&saved)
            .output()
            .unwrap(),
    );
    assert!(out.contains("saved 1 object to "), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `lint -j N` gives the report of `-j 1`, byte for byte, in every format, with the same exit
/// code: on the repository's test data, on a generated directory of files with findings,
/// syntax errors, an unreadable file and cross-file provider references, and on one large
/// file of such documents.
#[test]
fn lint_on_several_threads_reports_as_on_one() {
    let dir = std::env::temp_dir().join(format!("ksm-jobs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..120 {
        let text = match i % 6 {
            0 => format!(
                "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: StateManagementProvider\nmetadata:\n  name: ksm-flux{i}\nspec:\n  adapter:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: a\n    namespace: kcm-system\n    readinessRule: self.status.readyReplicas > 0\n  provisioner: []\n  provisionerCRDs: []\n  selector:\n    matchLabels: {{a: b}}\n  suspend: false\n  typo{i}: 1\n"
            ),
            1 => format!(
                "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceSet\nmetadata:\n  name: s{i}\n  namespace: team\nspec:\n  cluster: c\n  provider:\n    name: ksm-flux{}\n  services: []\n",
                i + 5
            ),
            2 => "a: [unclosed\n".to_string(),
            3 => format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n"),
            4 => "kind: StateManagementProvider\n".to_string(),
            _ => "\u{0}binary".to_string(),
        };
        std::fs::write(dir.join(format!("f{i:03}.yaml")), text).unwrap();
    }
    // One large file of the same documents (the syntax errors and binary left out, one
    // syntax error at its end): its objects are checked, and its report rendered, on
    // several threads.
    let mut big = String::new();
    while big.len() < 200 * 1024 {
        for i in (0..120).filter(|i| ![2, 5].contains(&(i % 6))) {
            big.push_str("---\n");
            big.push_str(&std::fs::read_to_string(dir.join(format!("f{i:03}.yaml"))).unwrap());
        }
    }
    big.push_str("---\na: [unclosed\n");
    let big_path = std::env::temp_dir().join(format!("ksm-jobs-big-{}.yaml", std::process::id()));
    std::fs::write(&big_path, big).unwrap();
    for path in [
        dir.to_str().unwrap(),
        big_path.to_str().unwrap(),
        "testdata/",
    ] {
        for format in ["human", "json", "sarif", "github"] {
            let run = |jobs: &str| {
                ksm()
                    .args(["lint", "-o", format, "-j", jobs, path])
                    .current_dir(env!("CARGO_MANIFEST_DIR"))
                    .output()
                    .unwrap()
            };
            let one = run("1");
            assert!(!one.stdout.is_empty(), "{path} -o {format}");
            for jobs in ["2", "7"] {
                let many = run(jobs);
                assert_eq!(
                    many.status.code(),
                    one.status.code(),
                    "{path} -o {format} -j {jobs}"
                );
                assert!(
                    many.stdout == one.stdout,
                    "{path} -o {format} -j {jobs}: the report differs"
                );
                assert_eq!(many.stderr, one.stderr, "{path} -o {format} -j {jobs}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    std::fs::remove_file(&big_path).ok();
}

/// `tree` on a doctor fixture (two MultiClusterServices on dev-cluster, one waiting on the
/// other) with two ClusterDeployments neither selector matches.
fn tree_of_mcs_fixture(extra: &[&str]) -> Command {
    let mut cmd = ksm();
    cmd.args(["tree"]).args(extra).args([
        "--now",
        "2026-11-21T12:00:00Z",
        "--from",
        "testdata/doctor/sveltos-mcs-dependency-waiting/dump.yaml",
        "testdata/tree/more-clusters.yaml",
    ]);
    cmd
}

#[test]
fn tree_draws_multi_cluster_services_and_their_clusters() {
    assert_cmd_snapshot!(tree_of_mcs_fixture(&[]));
}

#[test]
fn tree_rooted_at_a_cluster_says_why_a_selector_passes_it_over() {
    assert_cmd_snapshot!(tree_of_mcs_fixture(&[
        "clusterdeployment/staging",
        "-o",
        "json"
    ]));
}

#[test]
fn tree_names_the_owner_of_a_release_two_servicesets_claim() {
    assert_cmd_snapshot!(ksm().args([
        "tree",
        "--now",
        "2026-11-21T12:00:00Z",
        "-o",
        "yaml",
        "--from",
        "testdata/doctor/flux-priority-conflict/dump.yaml",
    ]));
}

#[test]
fn tree_of_the_management_cluster_and_of_a_missing_object() {
    assert_cmd_snapshot!(ksm().args([
        "tree",
        "--now",
        "2026-11-21T12:00:00Z",
        "--from",
        "testdata/doctor/sveltos-healthy-self-management/dump.yaml",
    ]));
    assert_cmd_snapshot!(tree_of_mcs_fixture(&["mcs/nope"]));
    assert_cmd_snapshot!(tree_of_mcs_fixture(&["helmrelease/x"]));
}

/// `trace` on a doctor fixture, judged at the fixtures' time.
fn trace_of(case: &str, extra: &[&str]) -> Command {
    let mut cmd = ksm();
    cmd.args(["trace"]).args(extra).args([
        "--now",
        "2026-11-21T12:00:00Z",
        "--from",
        &format!("testdata/doctor/{case}/dump.yaml"),
    ]);
    cmd
}

#[test]
fn trace_follows_a_flux_object_up_to_its_template() {
    assert_cmd_snapshot!(trace_of(
        "helmrelease-stalled",
        &["helmrelease/dev-cluster-cert-manager", "-n", "kcm-system"]
    ));
}

#[test]
fn trace_finds_a_release_on_a_cluster_in_every_serviceset_that_claims_it() {
    assert_cmd_snapshot!(trace_of(
        "sveltos-conflict",
        &[
            "--release",
            "ingress-nginx/ingress-nginx",
            "--cluster",
            "cld/kcm-system/dev-cluster"
        ]
    ));
}

#[test]
fn trace_of_a_cluster_summary_as_json_and_a_serviceset_as_yaml() {
    assert_cmd_snapshot!(trace_of(
        "sveltos-healthy-mcs-on-cd",
        &[
            "clustersummary/p--dev-cluster-1a2b3c4d-capi-dev-cluster",
            "--release",
            "ingress-nginx",
            "-o",
            "json"
        ]
    ));
    assert_cmd_snapshot!(trace_of(
        "kustomization-build-failed",
        &["serviceset/dev-cluster", "-o", "yaml"]
    ));
}

#[test]
fn trace_says_why_it_cannot_start() {
    assert_cmd_snapshot!(trace_of("healthy", &["hr/nope"]));
    assert_cmd_snapshot!(trace_of("healthy", &["cld/dev-cluster"]));
    assert_cmd_snapshot!(trace_of("healthy", &["--release", "x/y"]));
    assert_cmd_snapshot!(trace_of("healthy", &[]));
}

/// `wait` on a doctor fixture, judged once (a dump does not change).
fn wait_on(case: &str, target: &str) -> Command {
    let mut cmd = ksm();
    cmd.args([
        "wait",
        target,
        "-n",
        "kcm-system",
        "--now",
        "2026-11-21T12:00:00Z",
        "--from",
    ])
    .arg(format!("testdata/doctor/{case}/dump.yaml"));
    cmd
}

#[test]
fn wait_on_a_dump_gives_each_outcome_its_exit_code() {
    // Deployed (0); a failure that will not heal (1); not deployed (3); not there (2).
    assert_cmd_snapshot!(wait_on("healthy", "serviceset/dev-cluster"));
    assert_cmd_snapshot!(wait_on("sveltos-conflict", "serviceset/dev-cluster"));
    assert_cmd_snapshot!(wait_on(
        "service-stuck-provisioning",
        "serviceset/dev-cluster"
    ));
    assert_cmd_snapshot!(wait_on("healthy", "cld/nope"));
}

#[test]
fn wait_on_a_cluster_and_a_multiclusterservice_names_what_kcm_has_not_written() {
    let mut cmd = wait_on("sveltos-mcs-dependency-waiting", "cld/dev-cluster");
    cmd.arg("testdata/tree/more-clusters.yaml");
    assert_cmd_snapshot!(cmd);
    assert_cmd_snapshot!(wait_on("sveltos-mcs-dependency-waiting", "mcs/apps"));
}

/// `check`, `eval KIND/NAME` and `render NAME` read a dump with --from as they read the
/// cluster live.
#[test]
fn check_eval_and_render_read_a_dump_by_name() {
    let dump = "testdata/doctor/multi-problem/dump.yaml";
    let json = |args: &[&str]| -> (Option<i32>, serde_json::Value, String) {
        let out = ksm().args(args).args(["-o", "json"]).output().unwrap();
        (
            out.status.code(),
            serde_json::from_slice(&out.stdout).unwrap_or_default(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, v, err) = json(&["check", "smp/ksm-flux", "--from", dump]);
    assert!(code.is_some_and(|c| c < 2), "{err}");
    let names: Vec<_> = v["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["smp"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ksm-flux"]);
    let (code, _, err) = json(&["check", "nope", "--from", dump]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("StateManagementProvider \"nope\" not found"),
        "{err}"
    );

    let (code, v, err) = json(&[
        "eval",
        "has(self.status.readyReplicas)",
        "deploy/helm-controller",
        "--from",
        dump,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["results"][0]["object"]["name"], "helm-controller");
    assert_eq!(v["results"][0]["object"]["namespace"], "flux-system");
    // A name in several namespaces needs -n; with it, the one of that namespace.
    let (code, _, err) = json(&[
        "eval",
        "true",
        "servicetemplate/cert-manager-1-18-2",
        "--from",
        dump,
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("several namespaces") && err.contains("kcm-system, team-a"),
        "{err}"
    );
    let (code, v, _) = json(&[
        "eval",
        "true",
        "servicetemplates/cert-manager-1-18-2",
        "-n",
        "team-a",
        "--from",
        dump,
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(v["results"][0]["object"]["namespace"], "team-a");
    let (code, _, err) = json(&["eval", "true", "deploy/nope", "--from", dump]);
    assert_eq!(code, Some(2));
    assert!(err.contains("deploy/nope not found in"), "{err}");

    let (code, v, err) = json(&["render", "prod-eu", "-n", "team-a", "--from", dump]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(v["kind"], "List");
    let items = v["items"].as_array().unwrap();
    assert!(!items.is_empty());
    assert!(
        items.iter().all(|o| o["metadata"]["namespace"] == "team-a"),
        "{v}"
    );
    let (code, _, err) = json(&["render", "prod-eu", "--from", dump, "-l", "a=b"]);
    assert_eq!(code, Some(0), "a selector is for lists, a name wins: {err}");
    let (code, _, err) = json(&["render", "nope", "--from", dump]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("ServiceSet nope not found in the saved objects"),
        "{err}"
    );
}

/// With --rule-file, the one positional argument is the object.
#[test]
fn eval_rule_file_with_an_object_by_name() {
    let dir = tempdir();
    let rule = dir.join("rule.cel");
    std::fs::write(&rule, "has(self.status.readyReplicas)\n").unwrap();
    let out = ksm()
        .args(["eval", "--rule-file"])
        .arg(&rule)
        .args([
            "deploy/helm-controller",
            "-n",
            "flux-system",
            "-o",
            "json",
            "--from",
        ])
        .arg("testdata/doctor/multi-problem/dump.yaml")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = ksm()
        .args(["eval", "true", "--rule-file"])
        .arg(&rule)
        .args(["deploy/x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the rule is given twice"));
}
