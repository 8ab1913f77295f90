//! `check` and `eval` live against a real kube-apiserver, with the verdicts of the same
//! commands offline on the same objects as `kubectl get -o yaml` saves them:
//! - a CRD serving two versions (v1 preferred and stored, v1beta1 served), named by an SMP's
//!   references and by `eval` at the version it does not prefer: the object is read at that
//!   version, as kcm's REST mapping reads it (its apiVersion is that version's);
//! - a kind its group serves only at a version the group does not prefer (the group's other
//!   kind has v1): `eval KIND/NAME` finds it there, as kubectl does; an SMP reference at a
//!   version not served has no REST mapping, and kcm's ensureRBAC stops there (RBACReady
//!   False, nothing else evaluated), live (discovery) as offline (the saved CRD).
//!
//! The CRDs carry a CEL validation rule, which the server evaluates on every write.

mod realapi;

use std::path::PathBuf;
use std::process::Output;
use std::sync::OnceLock;

use realapi::RealApi;
use serde_json::{Value, json};

const GROUP: &str = "ksm-test.example.com";

fn crd(plural: &str, kind: &str, versions: &[&str], storage: &str) -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object",
                 "properties": {"size": {"type": "integer"}},
                 "x-kubernetes-validations": [
                     {"rule": "!has(self.size) || self.size >= 0",
                      "message": "size must not be negative"}]},
        "status": {"type": "object", "properties": {
            "ready": {"type": "boolean"}, "phase": {"type": "string"}}}}}});
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"name": v, "served": true, "storage": *v == storage, "schema": schema}))
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{GROUP}")},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(),
                           "listKind": format!("{kind}List")},
                 "versions": versions},
    })
}

fn reference(version: &str, kind: &str, name: &str, ns: &str, rule: &str) -> Value {
    json!({"apiVersion": format!("{GROUP}/{version}"), "kind": kind, "name": name,
           "namespace": ns, "readinessRule": rule})
}

fn smp(name: &str, adapter: Value, provisioner: Vec<Value>, crds: Value) -> Value {
    json!({
        "apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "StateManagementProvider",
        "metadata": {"name": name},
        "spec": {"adapter": adapter, "provisioner": provisioner, "provisionerCRDs": crds,
                 "selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": name}},
                 "suspend": false},
    })
}

/// The server with the Widget and Gadget CRDs, a Widget and a Gadget in a namespace of their
/// own, and the SMPs that reference them (once for this binary's tests); the namespace.
fn setup(api: &RealApi) -> &'static str {
    static NAMESPACE: OnceLock<String> = OnceLock::new();
    NAMESPACE.get_or_init(|| write_objects(api))
}

fn write_objects(api: &RealApi) -> String {
    let file = api.dir().join("ksm-test-crds.json");
    let crds = json!({"apiVersion": "v1", "kind": "List", "items": [
        crd("widgets", "Widget", &["v1", "v1beta1"], "v1"),
        crd("gadgets", "Gadget", &["v1beta1"], "v1beta1"),
    ]});
    std::fs::write(&file, crds.to_string()).unwrap();
    api.install_crds(&[file]);
    let ns = api.namespace("check-eval");
    // Written at the versions the CRDs do not prefer: the server stores the Widget at v1.
    api.apply(&json!([
        {"apiVersion": format!("{GROUP}/v1beta1"), "kind": "Widget",
         "metadata": {"name": "w", "namespace": ns},
         "spec": {"size": 3}, "status": {"ready": true}},
        {"apiVersion": format!("{GROUP}/v1beta1"), "kind": "Gadget",
         "metadata": {"name": "g", "namespace": ns},
         "spec": {"size": 1}, "status": {"phase": "Running"}},
    ]));
    let v1beta1 = format!("'{GROUP}/v1beta1'");
    let v1 = format!("'{GROUP}/v1'");
    api.apply(&json!([
        // Ready: every reference is read at the version it names.
        smp(
            "ksm-widgets",
            reference(
                "v1beta1",
                "Widget",
                "w",
                &ns,
                &format!("self.apiVersion == {v1beta1} && self.status.ready")
            ),
            vec![
                reference(
                    "v1beta1",
                    "Gadget",
                    "g",
                    &ns,
                    "self.status.phase == 'Running'"
                ),
                reference(
                    "v1",
                    "Widget",
                    "w",
                    &ns,
                    &format!("self.apiVersion == {v1} && self.spec.size == 3")
                ),
            ],
            json!([{"group": GROUP, "version": "v1beta1", "resources": ["widgets", "gadgets"]}]),
        ),
        // Not ready: a Gadget version its CRD does not serve, which kcm's REST mapper does
        // not map (RBACReady False; kcm evaluates nothing else).
        smp(
            "ksm-widgets-unserved",
            reference("v1beta1", "Widget", "w", &ns, "true"),
            vec![reference("v1", "Gadget", "g", &ns, "true")],
            // Not the Gadget CRD: checked alone, live, only discovery says v1 is not served.
            json!([{"group": GROUP, "version": "v1beta1", "resources": ["widgets"]}]),
        ),
    ]));
    ns
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn json_of(what: &str, out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}: {}", text(out)))
}

/// `kubectl get ARGS -o yaml` saved to a file of the server's directory.
fn saved(api: &RealApi, args: &[&str]) -> PathBuf {
    let file = api.dir().join(format!("{}.yaml", api.unique("saved")));
    let yaml = api.kubectl(&[args, &["-o", "yaml"]].concat());
    std::fs::write(&file, yaml).unwrap();
    file
}

#[test]
fn check_live_reads_each_reference_at_its_version_and_agrees_with_offline() {
    let Some(api) = realapi::shared() else { return };
    let ns = setup(api);
    let live = |names: &[&str]| {
        let out = api
            .admin()
            .ksm()
            .args([&["check", "-o", "json"], names].concat())
            .output()
            .unwrap();
        (out.status.code(), json_of("check live", &out))
    };
    let (code, report) = live(&["ksm-widgets"]);
    assert_eq!(code, Some(0), "{report:#}");
    let evaluations = report["providers"][0]["evaluations"].as_array().unwrap();
    assert_eq!(evaluations.len(), 3, "{report:#}");
    assert!(
        evaluations.iter().all(|e| e["result"] == true),
        "{report:#}"
    );
    let (code, unserved) = live(&["ksm-widgets-unserved"]);
    assert_eq!(code, Some(1), "{unserved:#}");
    let conditions: Vec<String> = unserved["providers"][0]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let f = |k: &str| c[k].as_str().unwrap();
            format!(
                "{} {} {}: {}",
                f("type"),
                f("status"),
                f("reason"),
                f("message")
            )
        })
        .collect();
    assert_eq!(
        conditions,
        [
            format!(
                "RBACReady False FailedToGetGVKForProvisioner: Failed to ensure RBAC: failed to get REST mapping for {GROUP}/v1, Kind=Gadget: no matches for kind \"Gadget\" in version \"{GROUP}/v1\""
            ),
            "AdapterReady Unknown AdapterUnknown: ".into(),
            "ProvisionerReady Unknown ProvisionerUnknown: ".into(),
            "ProvisionerCRDsReady Unknown ProvisionerCRDsUnknown: ".into(),
        ],
        "{unserved:#}"
    );
    assert_eq!(unserved["providers"][0]["evaluations"], json!([]));

    // Offline, from what `kubectl get` saves: every object at its preferred version (the
    // Widget at v1), the SMPs and the CRDs. The same report, evaluation by evaluation.
    let widgets = format!("widgets.{GROUP}");
    let gadgets = format!("gadgets.{GROUP}");
    let objects = saved(
        api,
        &[
            "get",
            &format!("statemanagementproviders,{widgets},{gadgets}"),
            "-n",
            ns,
        ],
    );
    let crds = saved(api, &["get", "crd", &widgets, &gadgets]);
    let saved_widget = std::fs::read_to_string(&objects).unwrap();
    assert!(
        saved_widget.contains(&format!("apiVersion: {GROUP}/v1\n")),
        "kubectl saves the Widget at v1: {saved_widget}"
    );
    let (code, both) = live(&["ksm-widgets", "ksm-widgets-unserved"]);
    assert_eq!(code, Some(1));
    assert_eq!(both["providers"][0], report["providers"][0]);
    assert_eq!(both["providers"][1], unserved["providers"][0]);
    let out = api
        .admin()
        .ksm()
        .args(["check", "-o", "json"])
        .arg(&objects)
        .arg("--objects")
        .arg(&objects)
        .arg(&crds)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let offline = json_of("check offline", &out);
    // Live alone compares the conditions with those kcm recorded (none here: no kcm runs).
    let mut live_providers = both["providers"].clone();
    for p in live_providers.as_array_mut().unwrap() {
        let recorded = p["statusDisagreements"].as_array().unwrap();
        assert!(
            recorded.iter().all(|d| d["recorded"] == "(not written)"),
            "{p:#}"
        );
        p["statusDisagreements"] = json!([]);
    }
    assert_eq!(
        offline["providers"], live_providers,
        "offline (left) and live (right)"
    );
}

#[test]
fn eval_live_finds_a_kind_at_the_version_named_or_served_and_agrees_with_offline() {
    let Some(api) = realapi::shared() else { return };
    let ns = setup(api);
    let eval = |rule: &str, target: &str| {
        let out = api
            .admin()
            .ksm()
            .args(["eval", rule, target, "-n", ns, "-o", "json"])
            .output()
            .unwrap();
        let code = out.status.code();
        (code, out)
    };
    let v1beta1 = format!("self.apiVersion == '{GROUP}/v1beta1'");
    let v1 = format!("self.apiVersion == '{GROUP}/v1'");
    let cases = [
        // The version named, though the CRD prefers v1.
        (
            v1beta1.as_str(),
            format!("widgets.v1beta1.{GROUP}/w"),
            "v1beta1",
        ),
        (v1.as_str(), format!("widgets.v1.{GROUP}/w"), "v1"),
        // No version named: the preferred one, as kubectl reads it.
        (v1.as_str(), "widget/w".to_string(), "v1"),
        (v1.as_str(), format!("widgets.{GROUP}/w"), "v1"),
        // Gadget is served at v1beta1 only, while its group prefers v1.
        (v1beta1.as_str(), "gadget/g".to_string(), "v1beta1"),
        (v1beta1.as_str(), "Gadget/g".to_string(), "v1beta1"),
        (v1beta1.as_str(), "gadgets/g".to_string(), "v1beta1"),
        (v1beta1.as_str(), format!("gadgets.{GROUP}/g"), "v1beta1"),
        (
            v1beta1.as_str(),
            format!("gadgets.v1beta1.{GROUP}/g"),
            "v1beta1",
        ),
    ];
    for (rule, target, version) in &cases {
        let (code, out) = eval(rule, target);
        assert_eq!(code, Some(0), "{target}: {}", text(&out));
        let live = json_of(target, &out);
        assert_eq!(
            live["results"][0]["object"]["apiVersion"],
            format!("{GROUP}/{version}"),
            "{target}: {live:#}"
        );
        // Offline, on the object `kubectl get` saves for the same name: the same result.
        let file = saved(api, &["get", target, "-n", ns]);
        let out = api
            .admin()
            .ksm()
            .args(["eval", rule, "-o", "json", "-f"])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{target}: {}", text(&out));
        assert_eq!(
            json_of(target, &out),
            live,
            "{target}: offline (left), live"
        );
    }
    // A false verdict is exit 1 live as offline.
    let (code, out) = eval("self.status.phase == 'Pending'", "gadget/g");
    assert_eq!(code, Some(1), "{}", text(&out));
    assert_eq!(json_of("gadget/g", &out)["results"][0]["result"], false);

    // A version the kind is not served at is no resource type, in kubectl's words.
    for target in [
        format!("gadgets.v1.{GROUP}/g"),
        format!("widgets.v2.{GROUP}/w"),
    ] {
        let (code, out) = eval("true", &target);
        assert_eq!(code, Some(2), "{target}: {}", text(&out));
        let kubectl = api
            .admin()
            .kubectl()
            .args(["get", &target, "-n", ns])
            .output()
            .unwrap();
        assert!(!kubectl.status.success());
        let resource = target.split('.').next().unwrap();
        let words = format!("the server doesn't have a resource type \"{resource}\"");
        assert!(text(&kubectl).contains(&words), "{}", text(&kubectl));
        assert!(text(&out).contains(&words), "{target}: {}", text(&out));
    }
}
