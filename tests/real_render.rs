//! `render` and `diff` against a real kube-apiserver with the real kcm, Flux, Sveltos and
//! Cluster API CRDs (the server evaluates their schemas and CEL validation rules):
//! - every object every case of testdata/render renders is accepted by a server-side apply
//!   as the adapter makes it (field manager kubectl-ksm, forced), and `diff FILE` then finds
//!   no drift;
//! - with a case's inputs loaded into the server, `render --live` gives the objects `render`
//!   gives from the file (the owner's uid aside: the server's), and right after they are
//!   applied `diff --live` finds no drift: the server's defaults and managedFields are not
//!   drift;
//! - an edit by another field manager is drift (exit 1), a field the adapter does not set is
//!   not; a ServiceSet that is not there or may not be read is an error (exit 2), as
//!   `kubectl diff` exits.

mod realapi;

use std::path::PathBuf;
use std::process::Output;
use std::sync::Mutex;

use realapi::RealApi;
use realapi::dump::{self, AdminClient};
use serde_json::{Value, json};

/// The tests of this binary write the same objects (kcm-system/dev-cluster-...): one at a
/// time.
static SERVER: Mutex<()> = Mutex::new(());

fn cases() -> Vec<PathBuf> {
    dump::cases("render", "input.yaml")
}

fn case_name(case: &std::path::Path) -> String {
    case.file_name().unwrap().to_string_lossy().into_owned()
}

fn ksm(api: &RealApi, args: &[&str]) -> Output {
    api.admin().ksm().args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The objects of `render ARGS -o json`, and its exit code.
fn render(api: &RealApi, args: &[&str]) -> (Vec<Value>, Option<i32>) {
    let out = ksm(api, &[&["render", "-o", "json"], args].concat());
    let list: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("render {args:?}: {e}: {}", text(&out)));
    (list["items"].as_array().unwrap().clone(), out.status.code())
}

/// Objects applied by `adapter_apply`; dropping them deletes them (no finalizers: no Flux or
/// Sveltos controller runs here), also while a failed test unwinds.
struct Applied<'a> {
    api: &'a RealApi,
    objects: Vec<Value>,
}

impl Drop for Applied<'_> {
    fn drop(&mut self) {
        if self.objects.is_empty() {
            return;
        }
        let list = json!({"apiVersion": "v1", "kind": "List", "items": self.objects});
        let mut cmd = self.api.admin().kubectl();
        cmd.args(["delete", "--ignore-not-found", "-f", "-"]);
        let out = realapi::run_with_stdin(&mut cmd, &serde_json::to_vec(&list).unwrap());
        assert!(
            out.status.success() || std::thread::panicking(),
            "{}",
            text(&out)
        );
    }
}

/// Server-side apply as the adapter applies: field manager kubectl-ksm, conflicts forced.
fn adapter_apply<'a>(api: &'a RealApi, what: &str, objects: &[Value]) -> Applied<'a> {
    let applied = Applied {
        api,
        objects: objects.to_vec(),
    };
    if objects.is_empty() {
        return applied;
    }
    for ns in objects
        .iter()
        .filter_map(|o| o["metadata"]["namespace"].as_str())
    {
        api.ensure_namespace(ns);
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    let mut cmd = api.admin().kubectl();
    cmd.args([
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager",
        "kubectl-ksm",
        "-f",
        "-",
    ]);
    let out = realapi::run_with_stdin(&mut cmd, &serde_json::to_vec(&list).unwrap());
    assert!(
        out.status.success(),
        "{what}: the server refuses rendered objects: {}",
        text(&out)
    );
    applied
}

/// `diff` after an apply: its exit code must be 0, or 2 where some service could not be
/// rendered (`render` exits 1), with no object drifted or missing.
fn assert_no_drift(what: &str, out: &Output, render_code: Option<i32>, n: usize) {
    let want = if render_code == Some(1) { 2 } else { 0 };
    assert_eq!(out.status.code(), Some(want), "{what}: {}", text(out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = format!(": 0 drifted, 0 missing, {n} unchanged\n");
    assert!(stdout.ends_with(&summary), "{what}: {stdout}");
}

#[test]
fn every_rendered_object_is_accepted_and_then_not_drift() {
    let Some(api) = realapi::gomod::shared_with_capi() else {
        return;
    };
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let (mut total, mut defaulted) = (0, 0);
    for case in cases() {
        let name = case_name(&case);
        let input = format!("testdata/render/{name}/input.yaml");
        let (objects, code) = render(api, &[&input]);
        let applied = adapter_apply(api, &name, &objects);
        for o in &objects {
            let resource = format!(
                "{}.{}",
                o["kind"].as_str().unwrap().to_lowercase(),
                o["apiVersion"].as_str().unwrap().split('/').next().unwrap()
            );
            let ns = o["metadata"]["namespace"].as_str();
            let name_of = o["metadata"]["name"].as_str().unwrap();
            let stored = api
                .get(&resource, ns, name_of)
                .unwrap_or_else(|| panic!("{name}: {resource} {name_of} not stored"));
            let rendered = o["spec"].as_object().unwrap();
            if stored["spec"]
                .as_object()
                .unwrap()
                .keys()
                .any(|k| !rendered.contains_key(k))
            {
                defaulted += 1;
            }
        }
        let out = ksm(api, &["diff", &input]);
        assert_no_drift(&name, &out, code, objects.len());
        total += objects.len();
        drop(applied);
    }
    assert!(total >= 30, "only {total} objects applied");
    // The server added defaults of the CRDs (a Kustomization's spec.force, ...) to some:
    // `diff` found no drift in them all the same.
    assert!(defaulted > 0, "no object got a server default");
}

/// Replaces the uid of every ownerReference (the file's ServiceSet uid against the server's).
fn without_owner_uids(objects: &[Value]) -> Vec<Value> {
    objects
        .iter()
        .cloned()
        .map(|mut o| {
            if let Some(Value::Array(refs)) = o["metadata"].get_mut("ownerReferences") {
                for r in refs {
                    r["uid"] = "UID".into();
                }
            }
            o
        })
        .collect()
}

#[test]
fn right_after_an_apply_of_what_render_live_gives_diff_live_finds_no_drift() {
    let Some(api) = realapi::gomod::shared_with_capi() else {
        return;
    };
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let mut client = AdminClient::new(api);
    let mut compared = 0;
    for case in cases() {
        let name = case_name(&case);
        let input = format!("testdata/render/{name}/input.yaml");
        let text_in = std::fs::read_to_string(case.join("input.yaml")).unwrap();
        let inputs = dump::objects(&text_in);
        // render --live reads ServiceSets: the cases of ClusterDeployments and
        // MultiClusterServices (kcm derives their ServiceSets) are the file's only.
        if !inputs.iter().any(|o| o["kind"] == "ServiceSet") {
            continue;
        }
        let ns = inputs
            .iter()
            .find(|o| o["kind"] == "ServiceSet")
            .and_then(|o| o["metadata"]["namespace"].as_str())
            .unwrap()
            .to_string();
        let loaded = client.load(&name, &text_in);
        let (live, code) = render(api, &["--live", "-n", &ns]);
        let (from_file, file_code) = render(api, &[&input]);
        assert_eq!(code, file_code, "{name}: render --live and render FILE");
        assert_eq!(
            without_owner_uids(&live),
            without_owner_uids(&from_file),
            "{name}: render --live (left) and render FILE (right)"
        );
        let applied = adapter_apply(api, &name, &live);
        let out = ksm(api, &["diff", "--live", "-n", &ns]);
        assert_no_drift(&name, &out, code, live.len());
        compared += live.len();
        drop(applied);
        client.unload(loaded);
    }
    assert!(compared >= 25, "only {compared} objects compared");
}

#[test]
fn an_edit_by_another_field_manager_is_drift_and_exit_codes_are_kubectls() {
    let Some(api) = realapi::gomod::shared_with_capi() else {
        return;
    };
    let _one = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let mut client = AdminClient::new(api);
    // (case, resource, object, a field the adapter sets: its path, another value and the
    // rendered one, a field it does not set and a value for it)
    for (case, resource, object, path, live_value, rendered_value, extra, extra_value) in [
        (
            "helm-chartref",
            "helmreleases.helm.toolkit.fluxcd.io",
            "dev-cluster-ingress-nginx",
            "/spec/interval",
            "1h",
            "10m",
            "suspend",
            json!(true),
        ),
        (
            "sveltos-profile",
            "profiles.config.projectsveltos.io",
            "dev-cluster",
            "/spec/syncMode",
            "OneTime",
            "Continuous",
            "maxUpdate",
            json!("50%"),
        ),
    ] {
        let text_in = std::fs::read_to_string(
            realapi::root().join(format!("testdata/render/{case}/input.yaml")),
        )
        .unwrap();
        let loaded = client.load(case, &text_in);
        let (live, _) = render(api, &["--live", "-n", "kcm-system"]);
        let applied = adapter_apply(api, case, &live);
        let before = api.get(resource, Some("kcm-system"), object).unwrap();
        assert_eq!(before.pointer(path).unwrap(), rendered_value, "{case}");

        // Another field manager (kubectl's own, kubectl-patch) changes a field the adapter
        // sets and adds one it does not set: the first is drift, the second is not.
        let field = path.rsplit('/').next().unwrap();
        let patch = json!({"spec": {field: live_value, extra: extra_value}}).to_string();
        api.kubectl(&[
            "patch",
            resource,
            object,
            "-n",
            "kcm-system",
            "--type",
            "merge",
            "-p",
            &patch,
        ]);
        let after = api.get(resource, Some("kcm-system"), object).unwrap();
        let managers: Vec<&str> = after["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["manager"].as_str().unwrap())
            .collect();
        assert!(
            managers.contains(&"kubectl-ksm") && managers.contains(&"kubectl-patch"),
            "{managers:?}"
        );
        let out = ksm(api, &["diff", "--live", "-n", "kcm-system"]);
        assert_eq!(out.status.code(), Some(1), "{case}: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let kind = before["kind"].as_str().unwrap();
        let shown = format!(
            "► {kind}/kcm-system/{object} drifted\n    spec.{field}\n      - {live_value}  (live)\n      + {rendered_value}  (rendered)\n"
        );
        assert!(stdout.contains(&shown), "{case}: {stdout}");
        assert!(!stdout.contains(extra), "{case}: {stdout}");
        let out = ksm(api, &["diff", "--live", "-n", "kcm-system", "-o", "json"]);
        assert_eq!(out.status.code(), Some(1));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["summary"]["drifted"], 1, "{report:#}");

        // Gone: missing is drift too.
        api.kubectl(&["delete", resource, object, "-n", "kcm-system"]);
        let out = ksm(api, &["diff", "--live", "-n", "kcm-system"]);
        assert_eq!(out.status.code(), Some(1), "{case}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("missing: not in the cluster"),
            "{}",
            text(&out)
        );
        drop(applied);
        client.unload(loaded);
    }

    // Errors are exit 2: a ServiceSet that is not there, and one the user may not read.
    let out = ksm(api, &["diff", "--live", "nope", "-n", "kcm-system"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("ServiceSet kcm-system/nope not found"),
        "{}",
        text(&out)
    );
    let user = api.fresh_user();
    let out = user
        .ksm()
        .args(["diff", "--live", "-n", "kcm-system"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "User \"{}\" cannot list resource \"servicesets\"",
            user.name
        )),
        "{}",
        text(&out)
    );
}
