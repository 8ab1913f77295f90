//! `kubectl ksm doctor --from` over every case of testdata/doctor/<case>/dump.yaml, judged at
//! a fixed time:
//! - the human report is the case's snapshot (testdata/doctor/<case>/output.snap);
//! - the finding code the case's README names is among the JSON findings, and a healthy dump
//!   has none (exit code 0, else 1);
//! - `--save` writes a bundle without Secret data that diagnoses the same.

use std::path::{Path, PathBuf};
use std::process::Command;

use kubectl_ksm::diag::{Source, yaml};
use serde_json::Value;

const NOW: &str = "2026-11-21T12:00:00Z";

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/doctor");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("dump.yaml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn doctor(dump: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["doctor", "--now", NOW, "--from"])
        .arg(dump)
        .args(extra)
        .env_clear()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn relative(case: &Path) -> PathBuf {
    case.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .join("dump.yaml")
}

/// The finding code a case's README names (`KSM6xx`), or None for the healthy case.
fn expected_code(case: &Path) -> Option<String> {
    let readme = std::fs::read_to_string(case.join("README")).unwrap_or_default();
    let i = readme.find("KSM6")?;
    Some(readme[i..i + 6].to_string())
}

#[test]
fn every_case_reports_as_its_snapshot() {
    let cases = cases();
    assert!(cases.len() >= 20, "only {} doctor cases", cases.len());
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let (code, stdout, stderr) = doctor(&relative(&case), &[]);
        let text = format!(
            "exit code: {code:?}\n----- stdout -----\n{stdout}----- stderr -----\n{stderr}"
        );
        insta::with_settings!({
            snapshot_path => case.clone(),
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => format!("kubectl ksm doctor --now {NOW} --from testdata/doctor/{name}/dump.yaml"),
        }, {
            insta::assert_snapshot!("output", text);
        });
    }
}

#[test]
fn every_case_finds_what_its_readme_names() {
    for case in cases() {
        let (code, stdout, stderr) = doctor(&relative(&case), &["-o", "json"]);
        let report: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{}: {e}\n{stdout}{stderr}", case.display()));
        assert_eq!(report["version"], 1);
        let codes: Vec<&str> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["severity"] != "info")
            .map(|f| f["code"].as_str().unwrap())
            .collect();
        match expected_code(&case) {
            None => {
                assert!(codes.is_empty(), "{}: {codes:?}", case.display());
                assert_eq!(code, Some(0), "{}", case.display());
            }
            Some(want) => {
                assert!(
                    codes.contains(&want.as_str()),
                    "{}: wanted {want}, found {codes:?}",
                    case.display()
                );
                assert_eq!(code, Some(1), "{}", case.display());
            }
        }
        for f in report["findings"].as_array().unwrap() {
            for key in ["severity", "code", "object", "chain", "message", "hint"] {
                assert!(
                    f.get(key).is_some(),
                    "{}: finding without {key}",
                    case.display()
                );
            }
        }
    }
}

#[test]
fn saved_bundles_have_no_secret_data_and_diagnose_the_same() {
    let dir = std::env::temp_dir().join(format!("ksm-doctor-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for case in cases() {
        let bundle = dir.join(format!(
            "{}.yaml",
            case.file_name().unwrap().to_string_lossy()
        ));
        let (code, first, stderr) = doctor(
            &relative(&case),
            &["-o", "json", "--save", bundle.to_str().unwrap()],
        );
        assert!(stderr.contains("Secret data removed"), "{stderr}");
        let saved = std::fs::read_to_string(&bundle).unwrap();
        let source = Source::new("bundle", saved);
        let (docs, err) = yaml::parse_documents(&source);
        assert!(err.is_none(), "{err:?}");
        // One document per object.
        let items: Vec<serde_json::Value> = docs
            .iter()
            .map(|d| {
                d.root
                    .as_ref()
                    .unwrap()
                    .to_json(&yaml::Limits::default())
                    .unwrap()
            })
            .collect();
        assert!(
            items
                .iter()
                .all(|i| i["kind"] != "List" && i["metadata"].is_object())
        );
        for item in &items {
            if item["kind"] == "Secret" {
                assert!(
                    item.get("data").is_none() && item.get("stringData").is_none(),
                    "{}: the bundle carries Secret data: {item}",
                    case.display()
                );
            }
        }
        let (code2, second, _) = doctor(&bundle, &["-o", "json"]);
        assert_eq!(code, code2, "{}", case.display());
        assert_eq!(
            first,
            second,
            "{}: the bundle diagnoses differently",
            case.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a user meets first: a ServiceSet named as the argument, a bundle judged at the time it
/// was captured, a name that matches nothing, and states in the JSON report.
#[test]
fn doctor_as_a_user_meets_it() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/doctor/sveltos-conflict");
    let dump = relative(&case);
    let (_, by_flag, _) = doctor(&dump, &["--serviceset", "edge-ingress"]);
    let named = |name: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .args(["doctor", name, "--now", NOW, "--from"])
            .arg(&dump)
            .env_clear()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, by_arg, _) = named("edge-ingress");
    assert_eq!(code, Some(0), "{by_arg}");
    assert_eq!(by_arg, by_flag);
    assert!(
        by_arg.contains("1 ServiceSet, 1 service: 1 healthy"),
        "{by_arg}"
    );

    let (code, stdout, stderr) = named("no-such-set");
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stderr.contains("no ServiceSet \"no-such-set\""), "{stderr}");

    // JSON: per-ServiceSet and per-service states.
    let (_, json, _) = doctor(&dump, &["-o", "json"]);
    let report: Value = serde_json::from_str(&json).unwrap();
    let sets = report["serviceSets"].as_array().unwrap();
    let dev = sets.iter().find(|s| s["name"] == "dev-cluster").unwrap();
    assert_eq!(dev["status"], "problems");
    assert_eq!(dev["translation"], "Sveltos");
    let svc = |n: &str| {
        dev["services"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(svc("ingress-nginx")["reported"], "Failed");
    assert_eq!(svc("ingress-nginx")["status"], "problems");
    assert_eq!(svc("cert-manager")["observed"], "Deployed");
    assert_eq!(svc("cert-manager")["status"], "healthy");

    // --save records the capture time; --from judges ages against it unless --now is given.
    let dir = std::env::temp_dir().join(format!("ksm-doctor-captured-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bundle = dir.join("bundle.yaml");
    let stuck = relative(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/doctor/sveltos-stuck-provisioning"),
    );
    let (_, at_capture, _) = doctor(&stuck, &["--save", bundle.to_str().unwrap()]);
    let text = std::fs::read_to_string(&bundle).unwrap();
    assert!(
        text.starts_with(&format!("# kubectl ksm doctor --save; captured at {NOW}\n")),
        "{}",
        &text[..100]
    );
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["doctor", "--from"])
        .arg(&bundle)
        .env_clear()
        .output()
        .unwrap();
    let later = String::from_utf8(out.stdout).unwrap();
    assert_eq!(later, at_capture, "ages judged at the capture time");
    assert!(later.contains("Provisioning for 3h0m0s"), "{later}");

    // Into a directory (for a fleet larger than one file --from reads): files in it, each
    // with the capture time, read back as the one file is.
    let saved = dir.join("bundle");
    let (_, _, stderr) = doctor(&stuck, &["--save", &format!("{}/", saved.display())]);
    assert!(stderr.contains("to 1 file in"), "{stderr}");
    let first = std::fs::read_to_string(saved.join("objects-000.yaml")).unwrap();
    assert_eq!(first, text, "the same bundle, in a directory");
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["doctor", "--from"])
        .arg(&saved)
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), at_capture);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn doctor_of_a_cluster_deployment_or_a_multi_cluster_service_keeps_their_service_sets() {
    let dump = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/doctor/flux-priority-conflict/dump.yaml");
    let names = |target: &str| -> (Option<i32>, Vec<String>, String) {
        // After `--`: --from takes every path up to the next flag.
        let (code, stdout, stderr) = doctor(&dump, &["-o", "json", "--", target]);
        let sets = serde_json::from_str::<serde_json::Value>(&stdout)
            .map(|v| {
                v["serviceSets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default();
        (code, sets, stderr)
    };
    // The ClusterDeployment's own ServiceSet and the one a MultiClusterService deploys to it.
    let (_, sets, _) = names("clusterdeployment/dev-cluster");
    assert_eq!(sets, ["dev-cluster", "dev-cluster-bb74fe23"]);
    let (_, sets, _) = names("cld/dev-cluster");
    assert_eq!(sets, ["dev-cluster", "dev-cluster-bb74fe23"]);
    let (_, sets, _) = names("mcs/global-ingress");
    assert_eq!(sets, ["dev-cluster-bb74fe23"]);
    let (_, sets, _) = names("serviceset/dev-cluster");
    assert_eq!(sets, ["dev-cluster"]);
    let (code, _, stderr) = names("mcs/nope");
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("no ServiceSet of MultiClusterService \"nope\""),
        "{stderr}"
    );
    let (code, _, stderr) = names("deploy/x");
    assert_eq!(code, Some(2));
    assert!(stderr.contains("clusterdeployment (cld)"), "{stderr}");
}
