//! `kubectl ksm render` over every case of testdata/render/<case>/input.yaml:
//! - the output (objects on stdout, findings on stderr, exit code) is the case's snapshot,
//!   testdata/render/<case>/output.snap;
//! - every rendered object validates against its real CRD (crds/flux, crds/sveltos), and a
//!   ServiceSet gets only its provider's kinds (Profile/ClusterProfile for kcm's default
//!   provider, HelmRelease/Kustomization for the Flux adapter);
//! - `-o json` and `-o yaml` carry the same objects.

use std::path::{Path, PathBuf};
use std::process::Command;

use kubectl_ksm::core::crds;
use kubectl_ksm::diag::{Source, yaml};
use serde_json::Value;

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/render");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("input.yaml").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn render(case: &Path, format: &str) -> (Option<i32>, String, String) {
    let rel = case
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .join("input.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["render", "-o", format])
        .arg(&rel)
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

#[test]
fn every_case_renders_as_its_snapshot() {
    let cases = cases();
    assert!(cases.len() >= 15, "only {} render cases", cases.len());
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let (code, stdout, stderr) = render(&case, "yaml");
        let text = format!(
            "exit code: {code:?}\n----- stdout -----\n{stdout}----- stderr -----\n{stderr}"
        );
        insta::with_settings!({
            snapshot_path => case.clone(),
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => format!("kubectl ksm render testdata/render/{name}/input.yaml"),
        }, {
            insta::assert_snapshot!("output", text);
        });
    }
}

#[test]
fn every_rendered_object_is_valid_for_its_crd() {
    let mut checked = 0;
    let mut profiles = 0;
    for case in cases() {
        let sveltos = case
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("sveltos-");
        let (_, stdout, _) = render(&case, "json");
        let list: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(list["kind"], "List");
        for item in list["items"].as_array().unwrap() {
            let kind = item["kind"].as_str().unwrap();
            if sveltos {
                assert!(matches!(kind, "Profile" | "ClusterProfile"), "{kind}");
                profiles += 1;
            } else {
                assert!(matches!(kind, "HelmRelease" | "Kustomization"), "{kind}");
            }
            let violations = crds::validate(item).expect("an embedded CRD");
            assert!(
                violations.is_empty(),
                "{}: {} {} fails its CRD: {:?}",
                case.display(),
                kind,
                item["metadata"]["name"],
                violations.iter().map(|v| v.to_string()).collect::<Vec<_>>()
            );
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} objects checked");
    assert!(profiles >= 8, "only {profiles} Profiles checked");
}

#[test]
fn yaml_and_json_outputs_carry_the_same_objects() {
    for case in cases() {
        let (_, json_out, _) = render(&case, "json");
        let (_, yaml_out, _) = render(&case, "yaml");
        let list: Value = serde_json::from_str(&json_out).unwrap();
        let source = Source::new("render.yaml", yaml_out.clone());
        let (docs, err) = yaml::parse_documents(&source);
        assert!(err.is_none(), "{}: {err:?}\n{yaml_out}", case.display());
        let from_yaml: Vec<Value> = docs
            .into_iter()
            .filter_map(|d| d.root)
            .map(|r| r.to_json_exact(&yaml::Limits::default()).unwrap())
            .collect();
        assert_eq!(
            &from_yaml,
            list["items"].as_array().unwrap(),
            "{}",
            case.display()
        );
    }
}

#[test]
fn secret_data_never_reaches_the_output() {
    let dir = std::env::temp_dir().join(format!("ksm-render-secret-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/render/values-and-valuesfrom/input.yaml"),
    )
    .unwrap();
    let with_secret = format!(
        "{input}\n---\napiVersion: v1\nkind: Secret\nmetadata: {{name: ingress-secret-values, namespace: kcm-system}}\n\
         data:\n  values.yaml: c2VjcmV0LXBhc3N3b3JkLTEyMzQ=\nstringData:\n  token: secret-password-1234\n"
    );
    let file = dir.join("input.yaml");
    std::fs::write(&file, with_secret).unwrap();
    for format in ["yaml", "json"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .args(["render", "-o", format])
            .arg(&file)
            .env_clear()
            .output()
            .unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.code().is_some_and(|c| c < 2), "{all}");
        assert!(!all.contains("c2VjcmV0LXBhc3N3b3JkLTEyMzQ="), "{all}");
        assert!(!all.contains("secret-password-1234"), "{all}");
        // The reference is there; the data is not.
        assert!(all.contains("valuesFrom"), "{all}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
