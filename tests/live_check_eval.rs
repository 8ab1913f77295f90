//! Live `check` and `eval` against the stateful fake API server, and the one-line errors for
//! rejected credentials and missing RBAC.

mod fakeapi;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fakeapi::{FakeApiServer, Fault};
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Live {
    server: FakeApiServer,
    kubeconfig: PathBuf,
    dir: PathBuf,
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn live(case: &str) -> Live {
    let server = FakeApiServer::start();
    server.load_crds_dir(root().join("crds/kcm"));
    server.load_crds_dir(root().join("crds/flux"));
    let dump = root().join("testdata/doctor").join(case).join("dump.yaml");
    server.load_objects_yaml(&std::fs::read_to_string(dump).unwrap());
    let dir = std::env::temp_dir().join(format!(
        "ksm-live-{case}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig);
    Live {
        server,
        kubeconfig,
        dir,
    }
}

fn ksm(l: &Live, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(args)
        .arg("--kubeconfig")
        .arg(&l.kubeconfig)
        .env_clear()
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn only_reads(l: &Live) {
    for r in l.server.requests() {
        assert!(
            matches!(r.verb.as_str(), "get" | "list"),
            "sent {} {}",
            r.verb,
            r.path
        );
    }
}

#[test]
fn check_reads_every_provider_and_evaluates_like_kcm() {
    let l = live("healthy");
    let out = ksm(&l, &["check", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "CheckReport");
    let p = &v["providers"][0];
    assert_eq!(p["smp"]["name"], "ksm-flux");
    assert_eq!(p["ready"], true);
    assert_eq!(p["statusDisagreements"], serde_json::json!([]));
    // RBACReady is what kcm wrote, live.
    assert_eq!(p["conditions"][0]["reason"], "RBACEnsuredSuccessfully");
    assert_eq!(v["summary"]["ready"], 1);
    only_reads(&l);
}

#[test]
fn check_explains_a_provider_that_is_not_ready() {
    let l = live("smp-not-ready");
    let out = ksm(&l, &["check", "ksm-flux"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("StateManagementProvider ksm-flux: NOT READY"),
        "{t}"
    );
    assert!(t.contains("ProvisionerReady      False"), "{t}");
    assert!(
        t.contains("provisioner[1] Deployment/flux-system/kustomize-controller: false"),
        "{t}"
    );
    let out = ksm(&l, &["check", "no-such-smp"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("StateManagementProvider \"no-such-smp\" not found"));
}

#[test]
fn check_flags_a_status_kcm_wrote_that_the_rules_no_longer_give() {
    let l = live("smp-status-stale");
    let out = ksm(&l, &["check", "-o", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !v["providers"][0]["statusDisagreements"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{v}"
    );
    let out = ksm(&l, &["check"]);
    assert!(text(&out).contains("status differs:"), "{}", text(&out));
}

#[test]
fn eval_on_a_live_object() {
    let l = live("smp-not-ready");
    let rule = "has(self.status.readyReplicas) && self.status.readyReplicas > 0";
    let out = ksm(
        &l,
        &[
            "eval",
            rule,
            "deployment/kustomize-controller",
            "-n",
            "flux-system",
            "-o",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"][0]["object"]["name"], "kustomize-controller");
    assert_eq!(v["results"][0]["result"], false);
    for form in [
        "deployments/helm-controller",
        "Deployment/helm-controller",
        "deployments.apps/helm-controller",
        "deployments.v1.apps/helm-controller",
        "deploy/helm-controller",
        "deployment/helm-controller",
    ] {
        let out = ksm(&l, &["eval", rule, form, "-n", "flux-system"]);
        assert_eq!(out.status.code(), Some(0), "{form}: {}", text(&out));
    }
    let out = ksm(&l, &["eval", rule, "deployment/nope", "-n", "flux-system"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("Deployment/nope not found in namespace flux-system"),
        "{}",
        text(&out)
    );
    let out = ksm(&l, &["eval", rule, "widgets/x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("the server doesn't have a resource type \"widgets\""),
        "{}",
        text(&out)
    );
    only_reads(&l);
}

#[test]
fn rejected_credentials_and_missing_rbac_are_one_line_each() {
    let l = live("healthy");
    l.server.inject(Fault::Status {
        verb: None,
        resource: None,
        code: 401,
        times: 1000,
    });
    let out = ksm(&l, &["doctor", "-A"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rejected the credentials"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    l.server.clear_faults();
    l.server.inject(Fault::Status {
        verb: Some("list".into()),
        resource: Some("servicesets".into()),
        code: 403,
        times: 1000,
    });
    let out = ksm(&l, &["doctor", "-A"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: forbidden to list servicesets"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn live_render_matches_the_render_of_the_same_objects_from_files() {
    for case in ["helm-chartref", "multi-service", "paused", "uninstall"] {
        let input = root().join("testdata/render").join(case).join("input.yaml");
        let server = FakeApiServer::start();
        server.load_crds_dir(root().join("crds/kcm"));
        server.load_objects_yaml(&std::fs::read_to_string(&input).unwrap());
        let dir =
            std::env::temp_dir().join(format!("ksm-live-render-{case}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let kubeconfig = dir.join("kubeconfig");
        server.write_kubeconfig(&kubeconfig);
        let run = |args: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
                .args(args)
                .env_clear()
                .output()
                .unwrap()
        };
        let from_file = run(&["render", input.to_str().unwrap()]);
        let live = run(&[
            "render",
            "--live",
            "-n",
            "kcm-system",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
        ]);
        assert_eq!(
            live.status.code(),
            from_file.status.code(),
            "{case}: {}",
            text(&live)
        );
        assert_eq!(
            String::from_utf8_lossy(&live.stdout),
            String::from_utf8_lossy(&from_file.stdout),
            "{case}"
        );
        for r in server.requests() {
            assert!(
                matches!(r.verb.as_str(), "get" | "list"),
                "{case}: sent {} {}",
                r.verb,
                r.path
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// KUBECONFIG may list several files, merged as kubectl merges them: here the cluster and
/// user in one, the context in another.
#[test]
fn kubeconfig_files_listed_in_kubeconfig_are_merged() {
    let l = live("healthy");
    let full = std::fs::read_to_string(&l.kubeconfig).unwrap();
    let (head, contexts) = full
        .split_once("contexts:")
        .expect("a kubeconfig with contexts");
    let first = l.dir.join("clusters-and-users");
    std::fs::write(&first, head.replace("current-context:", "#")).unwrap();
    let second = l.dir.join("contexts");
    std::fs::write(
        &second,
        format!("apiVersion: v1\nkind: Config\ncontexts:{contexts}"),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["check", "-o", "json"])
        .env_clear()
        .env(
            "KUBECONFIG",
            format!("{}:{}", first.display(), second.display()),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}\n{full}", text(&out));
}

#[test]
fn a_cluster_without_sveltos_or_flux_says_so() {
    let server = FakeApiServer::start();
    server.load_crds_dir(root().join("crds/kcm"));
    let dir = std::env::temp_dir().join(format!("ksm-live-noflux-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig);
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["doctor", "-A", "--kubeconfig"])
        .arg(&kubeconfig)
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("serves neither Sveltos Profiles (config.projectsveltos.io, kcm's default provider) nor Flux HelmReleases/Kustomizations"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// kubectl's habits on live reads: global flags before the subcommand, short names and
/// plurals, `--as`/`--as-group` impersonation, `-l`, `--request-timeout` in plain seconds and
/// `-v 6` request lines.
#[test]
fn kubectl_habits_on_live_reads() {
    let l = live("smp-not-ready");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
            .arg("--kubeconfig")
            .arg(&l.kubeconfig)
            .args(args)
            .env_clear()
            .output()
            .unwrap()
    };
    // Global flags before the subcommand, and a short name of an SMP.
    let out = run(&[
        "-n",
        "flux-system",
        "--request-timeout",
        "30",
        "check",
        "smp/ksm-flux",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("StateManagementProvider ksm-flux: NOT READY"));
    // Short names of Flux and kcm kinds.
    let rule = "has(self.metadata.name)";
    for (target, ns) in [
        ("hr/dev-cluster-ingress-nginx", "kcm-system"),
        ("svctmpl/ingress-nginx-4-13-0", "kcm-system"),
        ("smp/ksm-flux", "default"),
        (
            "statemanagementproviders.k0rdent.mirantis.com/ksm-flux",
            "default",
        ),
        ("ks/dev-cluster-podinfo", "kcm-system"),
    ] {
        let out = run(&["eval", rule, target, "-n", ns]);
        assert_eq!(out.status.code(), Some(0), "{target}: {}", text(&out));
    }
    // Impersonation: every request carries the headers.
    l.server.clear_requests();
    let out = run(&[
        "--as",
        "system:serviceaccount:kcm-system:ksm-flux-sa",
        "--as-group",
        "system:serviceaccounts",
        "--as-group",
        "kcm",
        "check",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let reqs = l.server.requests();
    assert!(!reqs.is_empty());
    for r in &reqs {
        assert_eq!(
            r.impersonate_user.as_deref(),
            Some("system:serviceaccount:kcm-system:ksm-flux-sa"),
            "{} {}",
            r.method,
            r.path
        );
        assert_eq!(r.impersonate_groups, ["system:serviceaccounts", "kcm"]);
    }
    let out = run(&["--as-group", "kcm", "check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("without impersonating a user"),
        "{}",
        text(&out)
    );
    // -l goes to the API server as a label selector.
    l.server.clear_requests();
    let out = run(&["check", "-l", "no-such-label=x", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["providers"], 0);
    assert!(
        l.server
            .requests()
            .iter()
            .any(|r| r.verb == "list" && r.query.contains("labelSelector=no-such-label%3Dx")),
        "{:?}",
        l.server.requests()
    );
    let out = run(&["check", "-l", "bad key=x"]);
    assert_eq!(out.status.code(), Some(2));
    // -v 6: one line per request, with method, URL, status and time.
    let out = run(&["-v", "6", "check", "ksm-flux"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines().any(|l| l.contains("GET http://127.0.0.1:")
            && l.contains("/apis/k0rdent.mirantis.com/v1beta1/statemanagementproviders")
            && l.contains("200 OK in ")),
        "{err}"
    );
    let quiet = run(&["check", "ksm-flux"]);
    assert!(!String::from_utf8_lossy(&quiet.stderr).contains("GET "));
    // -v 7: the request headers too, credentials masked.
    let out = run(&["--v=7", "--as", "someone", "check", "ksm-flux"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("request headers:"), "{err}");
    only_reads(&l);
}

#[test]
fn a_secrets_data_never_shows_in_live_explanations() {
    let l = live("smp-not-ready");
    l.server.load_objects_yaml(
        r#"
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: flux-system
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"password":"c3VwZXJzZWNyZXQ="}}'
data:
  password: c3VwZXJzZWNyZXQ=
stringData:
  token: hunter2-token
---
apiVersion: k0rdent.mirantis.com/v1beta1
kind: StateManagementProvider
metadata:
  name: ksm-secretive
spec:
  adapter:
    apiVersion: v1
    kind: Secret
    name: creds
    namespace: flux-system
    readinessRule: self.data.password == 'x' || self.stringData.token.startsWith('zz')
  provisioner: []
  provisionerCRDs: []
  selector: {}
  suspend: false
"#,
    );
    let leaks = |what: &str, out: &Output| {
        let t = text(out);
        for hidden in ["c3VwZXJz", "hunter2"] {
            assert!(!t.contains(hidden), "{what}: {t}");
        }
        t
    };
    for format in ["human", "json"] {
        let out = ksm(&l, &["check", "ksm-secretive", "-o", format]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let t = leaks(&format!("check -o {format}"), &out);
        assert!(t.contains("redacted: 16 bytes"), "check -o {format}: {t}");
        for rule in [
            "self == {}",
            "self.data.password == 'x'",
            "self.stringData.token + 'x' == 'y'",
            "self.data[self.stringData.token] == 'x'",
        ] {
            let out = ksm(
                &l,
                &[
                    "eval",
                    rule,
                    "secret/creds",
                    "-n",
                    "flux-system",
                    "-o",
                    format,
                ],
            );
            assert!(
                out.status.code().is_some_and(|c| c < 2),
                "{rule}: {}",
                text(&out)
            );
            leaks(&format!("eval {rule} -o {format}"), &out);
        }
    }
    let rule = "self.data == {} || self.stringData == {}";
    let out = ksm(&l, &["eval", rule, "secret/creds", "-n", "flux-system"]);
    let t = leaks(rule, &out);
    assert!(
        t.contains("\"password\": <redacted: 16 bytes>")
            && t.contains("\"token\": <redacted: 13 bytes>"),
        "{t}"
    );
    for format in ["human", "json"] {
        let out = ksm(&l, &["doctor", "-A", "-o", format]);
        leaks(&format!("doctor -o {format}"), &out);
    }
    only_reads(&l);
}

#[test]
fn an_smp_reference_is_read_at_the_version_it_names() {
    // A CRD serving v1 (preferred, stored) and v1beta1; the SMP's adapter names v1beta1.
    // kcm's REST mapping reads the object at v1beta1; so do check and doctor, live, and
    // they reach the verdict the offline check reaches from the same objects.
    let l = live("healthy");
    let crd = serde_json::json!({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
        "versions": [
            {"name": "v1beta1", "served": true, "storage": false,
             "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
            {"name": "v1", "served": true, "storage": true,
             "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}
        ]}});
    l.server.load_crd(&crd);
    let objects = r#"
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
  namespace: flux-system
status:
  ready: true
---
apiVersion: k0rdent.mirantis.com/v1beta1
kind: StateManagementProvider
metadata:
  name: ksm-widgets
spec:
  adapter:
    apiVersion: example.com/v1beta1
    kind: Widget
    name: w
    namespace: flux-system
    readinessRule: has(self.status) && has(self.status.ready) && self.status.ready
  provisioner: []
  provisionerCRDs: []
  selector:
    matchLabels:
      ksm.k0rdent.mirantis.com/adapter: widgets
  suspend: false
"#;
    l.server.load_objects_yaml(objects);
    let out = ksm(&l, &["check", "ksm-widgets", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["providers"][0]["ready"], true, "{v:#}");
    assert!(
        l.server.requests().iter().any(|r| r.verb == "get"
            && r.path == "/apis/example.com/v1beta1/namespaces/flux-system/widgets/w"),
        "the adapter was not read at v1beta1"
    );
    only_reads(&l);

    // Offline, from the same objects (the SMP's reference at v1beta1, the Widget saved at v1
    // as `kubectl get` returns it at the preferred version): the same verdict.
    let file = l.dir.join("objects.yaml");
    std::fs::write(&file, objects).unwrap();
    let crd_file = l.dir.join("crd.json");
    std::fs::write(&crd_file, crd.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args(["check", "-o", "json"])
        .arg(&file)
        .arg("--objects")
        .arg(&file)
        .arg(&crd_file)
        .env_clear()
        .output()
        .unwrap();
    let offline: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    // Offline, kcm's RBAC cannot be known; the adapter's condition is the same as live.
    let adapter = |v: &Value| {
        v["providers"][0]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "AdapterReady")
            .map(|c| (c["status"].clone(), c["reason"].clone()))
            .unwrap()
    };
    assert_eq!(adapter(&offline), adapter(&v), "{offline:#}");
    assert_eq!(adapter(&v).0, "True");
}

#[test]
fn eval_finds_a_kind_its_group_serves_only_below_the_preferred_version() {
    // Widget serves v1 (preferred for the group) and v1beta1; Gadget, in the same group,
    // v1beta1 only. kubectl finds gadget/g at v1beta1; so does eval (the real server's case
    // is in tests/real_check_eval.rs).
    let l = live("healthy");
    let crd = |kind: &str, plural: &str, versions: &[(&str, bool)]| {
        serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": kind, "plural": plural, "singular": kind.to_lowercase(),
                      "listKind": format!("{kind}List")},
            "versions": versions.iter().map(|(v, storage)| serde_json::json!(
                {"name": v, "served": true, "storage": storage,
                 "schema": {"openAPIV3Schema": {"type": "object",
                            "x-kubernetes-preserve-unknown-fields": true}}})).collect::<Vec<_>>()}})
    };
    l.server.load_crd(&crd(
        "Widget",
        "widgets",
        &[("v1beta1", false), ("v1", true)],
    ));
    l.server
        .load_crd(&crd("Gadget", "gadgets", &[("v1beta1", true)]));
    l.server.load_objects_yaml(
        "apiVersion: example.com/v1beta1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: flux-system\nstatus:\n  phase: Running\n",
    );
    for form in ["gadget/g", "gadgets/g", "gadgets.example.com/g"] {
        let out = ksm(
            &l,
            &[
                "eval",
                "self.status.phase == 'Running'",
                form,
                "-n",
                "flux-system",
                "-o",
                "json",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{form}: {}", text(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["results"][0]["object"]["apiVersion"],
            "example.com/v1beta1"
        );
    }
    let out = ksm(
        &l,
        &[
            "eval",
            "true",
            "gadgets.v1.example.com/g",
            "-n",
            "flux-system",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains("the server doesn't have a resource type \"gadgets\""),
        "{}",
        text(&out)
    );
    only_reads(&l);
}
