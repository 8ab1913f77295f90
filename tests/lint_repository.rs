//! `lint` on a repository-shaped directory (testdata/repo/): a Helm chart (Chart.yaml,
//! values.yaml, templates/), examples, docs snippets with placeholders, a `.YAML` file and
//! misspellings. Every finding is the expected one; nothing is exit 2.

use std::process::Command;

use serde_json::Value;

fn lint(args: &[&str]) -> (Option<i32>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["lint", "testdata/repo", "-o", "json"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), report)
}

/// `CODE file:line` of every finding.
fn findings(report: &Value) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let file = d["file"]
                .as_str()
                .unwrap()
                .trim_start_matches("testdata/repo/");
            match d["location"]["line"].as_u64() {
                Some(line) => format!("{} {file}:{line}", d["code"].as_str().unwrap()),
                None => format!("{} {file}", d["code"].as_str().unwrap()),
            }
        })
        .collect()
}

#[test]
fn a_repository_is_linted_quietly_and_strictly() {
    let (code, report) = lint(&[]);
    assert_eq!(code, Some(1));
    let chart = "apps/ingress-nginx/charts/ingress-nginx-service-template";
    assert_eq!(
        findings(&report),
        [
            format!("KSM405 {chart}/Chart.yaml"),
            format!("KSM404 {chart}/templates/service-template.yaml:15"),
            format!("KSM405 {chart}/values.yaml"),
            "KSM403 clusters/dev/services.yaml:2".into(),
            "KSM402 docs/clusterdeployment-aws.yaml:4".into(),
            "KSM402 docs/clusterdeployment-aws.yaml:8".into(),
            "KSM402 docs/clusterdeployment-aws.yaml:11".into(),
            "KSM402 docs/clusterdeployment-aws.yaml:12".into(),
            "KSM401 docs/servicetemplate-kyverno.YAML:4".into(),
            "KSM406 apps/ingress-nginx/examples/mcs.yaml:12".into(),
        ]
    );
    let s = &report["summary"];
    assert_eq!(
        (s["files"].as_u64(), s["errors"].as_u64()),
        (Some(7), Some(2))
    );
    assert_eq!(
        (s["warnings"].as_u64(), s["notes"].as_u64()),
        (Some(5), Some(3))
    );
}

#[test]
fn placeholders_are_errors_warnings_or_ignored_as_asked() {
    let count = |r: &Value, sev: &str| {
        r["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == "KSM402" && d["severity"] == sev)
            .count()
    };
    let (_, r) = lint(&["--placeholders", "error"]);
    assert_eq!(count(&r, "error"), 4);
    let (_, r) = lint(&["--placeholders", "ignore"]);
    assert_eq!(count(&r, "error") + count(&r, "warning"), 0);
}

/// A repository with `.kubectl-ksm.yaml`, a `.gitignore` and an inline suppression.
#[test]
fn the_configuration_gitignore_and_suppressions_are_followed() {
    let dir = std::env::temp_dir().join(format!("ksm-lint-config-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let bad = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceTemplate\nmetadata:\n  name: Bad_Name\n  namespace: x\nspec:\n  helm:\n    chartSpec:\n      chart: c\n      version: 1.0.0\n      interval: 10m\n      sourceRef: {kind: HelmRepository, name: r}\n";
    let files = [
        (
            ".kubectl-ksm.yaml",
            "lint:\n  exclude:\n  - generated/\n  disable:\n  - not-kubernetes-yaml\n  placeholders: error\n",
        ),
        (".gitignore", "build/\n"),
        ("build/out.yaml", bad),
        ("generated/out.yaml", bad),
        (
            "chart/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        ),
        (
            "docs/cd.yaml",
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata:\n  name: ${NAME}\n  namespace: kcm-system\nspec:\n  template: t\n  config: {}\n",
        ),
        (
            "st.yaml",
            &format!("# kubectl-ksm: ignore KSM401 -- a name kept for the demo\n{bad}"),
        ),
    ];
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["lint", ".", "-o", "json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let found: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| format!("{} {} {}", d["code"], d["severity"], d["file"]))
        .collect();
    assert_eq!(
        found,
        [r#""KSM402" "error" "./docs/cd.yaml""#],
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(report["summary"]["files"], 3);
    assert_eq!(report["summary"]["suppressed"], 2);
    // A bad configuration is a clear error.
    std::fs::write(
        dir.join(".kubectl-ksm.yaml"),
        "lint:\n  disable: [KSM999]\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["lint", "."])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no lint code \"KSM999\""));
    let _ = std::fs::remove_dir_all(&dir);
}
