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
        let list = docs[0]
            .root
            .as_ref()
            .unwrap()
            .to_json(&yaml::Limits::default())
            .unwrap();
        for item in list["items"].as_array().unwrap() {
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
