//! Validation against the real k0rdent (KCM) and Flux CRDs in testdata.

mod common;

use common::*;
use kubectl_ksm::core::schema::{Crd, NoRules, PathSeg, RuleEvaluator, Violation, ViolationKind};
use serde_json::{Value, json};

fn crd<'c>(crds: &'c [Crd], kind: &str) -> &'c Crd {
    crds.iter()
        .find(|c| c.kind == kind)
        .unwrap_or_else(|| panic!("no CRD {kind}"))
}

fn check(crds: &[Crd], doc: &str, rules: &dyn RuleEvaluator) -> Vec<Violation> {
    let v = yaml(doc);
    let c = crd_for(crds, &v).expect("CRD for document");
    c.validate(&v, rules)
}

fn messages(vs: &[Violation]) -> Vec<String> {
    vs.iter().map(|v| v.message.clone()).collect()
}

fn key_path(s: &str) -> Vec<PathSeg> {
    s.split('.').map(|k| PathSeg::Key(k.to_string())).collect()
}

#[test]
fn all_crds_compile() {
    let crds = load_crds();
    assert_eq!(crds.len(), 29, "21 kcm + 8 flux CRDs");
    for c in &crds {
        assert!(!c.group.is_empty() && !c.kind.is_empty() && !c.plural.is_empty());
        assert!(
            c.versions.iter().any(|v| v.storage),
            "{} has a storage version",
            c.kind
        );
        for v in &c.versions {
            assert!(
                v.schema.warnings().is_empty(),
                "{} {}: {:?}",
                c.kind,
                v.name,
                v.schema.warnings()
            );
        }
    }
    let ss = crd(&crds, "ServiceSet");
    assert_eq!(ss.group, "k0rdent.mirantis.com");
    assert_eq!(ss.plural, "servicesets");
    assert!(ss.scope_namespaced);
    let hr = crd(&crds, "HelmRelease");
    assert!(
        hr.version("v2")
            .is_some_and(|v| v.served && v.storage && v.status_subresource)
    );
}

#[test]
fn examples_validate() {
    let crds = load_crds();
    let mut checked = 0;
    let mut found = Vec::new();
    for p in yaml_files(EXAMPLES_DIR) {
        for d in yaml_docs(&p) {
            let c = crd_for(&crds, &d).unwrap_or_else(|| panic!("{}: no CRD", p.display()));
            checked += 1;
            for v in c.validate(&d, &MiniCel) {
                found.push(format!(
                    "{}: {}",
                    p.file_name().unwrap().to_string_lossy(),
                    v.message
                ));
            }
            // as the API server sees a create: status is dropped
            assert_eq!(
                c.validate_as_create(&d, &MiniCel),
                vec![],
                "{}",
                p.display()
            );
        }
    }
    assert!(checked >= 10);
    // The only genuinely invalid example: its status block (copied from the
    // k0rdent docs) abbreviates sourceStatus; the schema requires more.
    let f = "servicetemplate-kustomize-gitrepository-status.yaml";
    assert_eq!(
        found,
        vec![
            format!("{f}: status.sourceStatus.artifact.digest: Required value"),
            format!("{f}: status.sourceStatus.artifact.lastUpdateTime: Required value"),
            format!("{f}: status.sourceStatus.artifact.path: Required value"),
            format!("{f}: status.sourceStatus.conditions[0].lastTransitionTime: Required value"),
            format!("{f}: status.sourceStatus.conditions[0].message: Required value"),
        ]
    );
}

const SMP: &str = r#"
apiVersion: k0rdent.mirantis.com/v1beta1
kind: StateManagementProvider
metadata:
  name: ksm-projectsveltos
spec:
  adapter:
    apiVersion: apps/v1
    kind: Deployment
    name: ksm-adapter
    namespace: kcm-system
    readinesRule: self.status.availableReplicas == self.status.replicas
  provisioner: []
  provisionerCRDs: []
  selector:
    matchLabels: {k0rdent.mirantis.com/provider: ksm}
"#;

#[test]
fn misspelled_readiness_rule_is_an_unknown_field() {
    let crds = load_crds();
    let vs = check(&crds, SMP, &NoRules);
    let unknown: Vec<_> = vs
        .iter()
        .filter(|v| v.kind == ViolationKind::UnknownField)
        .collect();
    assert_eq!(unknown.len(), 1, "{vs:#?}");
    assert_eq!(unknown[0].path, key_path("spec.adapter.readinesRule"));
    assert_eq!(
        unknown[0].message,
        r#"spec.adapter.readinesRule: unknown field "readinesRule""#
    );
    assert_eq!(unknown[0].path_string(), "spec.adapter.readinesRule");
    // and the real field is then missing
    assert!(vs.iter().any(|v| v.kind == ViolationKind::Required
        && v.message == "spec.adapter.readinessRule: Required value"));
    // fixed spelling: valid
    let fixed = SMP.replace("readinesRule", "readinessRule");
    assert_eq!(
        messages(&check(&crds, &fixed, &NoRules)),
        Vec::<String>::new()
    );
}

const SERVICE_SET: &str = r#"
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceSet
metadata:
  name: ss
  namespace: kcm-system
spec:
  cluster: dev
  provider:
    name: ksm-projectsveltos
  services:
  - name: ingress
    namespace: ingress
    template: ingress-nginx-4-11-3
    helmAction: Install
"#;

#[test]
fn service_set_valid_then_broken() {
    let crds = load_crds();
    assert_eq!(
        messages(&check(&crds, SERVICE_SET, &NoRules)),
        Vec::<String>::new()
    );

    let bad_enum = SERVICE_SET.replace("helmAction: Install", "helmAction: Remove");
    let vs = check(&crds, &bad_enum, &NoRules);
    assert_eq!(vs.len(), 1, "{vs:#?}");
    assert_eq!(vs[0].kind, ViolationKind::Enum);
    assert_eq!(
        vs[0].path,
        vec![
            PathSeg::Key("spec".into()),
            PathSeg::Key("services".into()),
            PathSeg::Index(0),
            PathSeg::Key("helmAction".into())
        ]
    );
    assert_eq!(
        vs[0].message,
        r#"spec.services[0].helmAction: Unsupported value: "Remove": supported values: "Install", "Uninstall""#
    );

    let wrong_type = SERVICE_SET.replace("name: ingress\n", "name: 42\n");
    let vs = check(&crds, &wrong_type, &NoRules);
    assert_eq!(
        messages(&vs),
        vec![
            r#"spec.services[0].name: Invalid value: "integer": spec.services[0].name in body must be of type string: "integer""#
        ]
    );
    assert_eq!(vs[0].kind, ViolationKind::Type);

    let missing = SERVICE_SET.replace("  provider:\n    name: ksm-projectsveltos\n", "");
    let vs = check(&crds, &missing, &NoRules);
    assert_eq!(messages(&vs), vec!["spec.provider: Required value"]);
    assert_eq!(vs[0].kind, ViolationKind::Required);
    assert_eq!(vs[0].path, key_path("spec.provider"));
}

#[test]
fn all_violations_in_document_order() {
    let crds = load_crds();
    let doc = r#"
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceSet
metadata:
  name: ss
  colour: blue
spec:
  cluster: 7
  provider:
    name: p
    extra: 1
  services:
  - name: a
    namespace: ns
    template: t
    helmAction: Remove
  - name: b
    template: t
    bogus: true
"#;
    let vs = check(&crds, doc, &NoRules);
    assert_eq!(
        messages(&vs),
        vec![
            r#"metadata.colour: unknown field "colour""#,
            r#"spec.cluster: Invalid value: "integer": spec.cluster in body must be of type string: "integer""#,
            r#"spec.provider.extra: unknown field "extra""#,
            r#"spec.services[0].helmAction: Unsupported value: "Remove": supported values: "Install", "Uninstall""#,
            "spec.services[1].namespace: Required value",
            r#"spec.services[1].bogus: unknown field "bogus""#,
        ]
    );
}

const HELM_RELEASE: &str = r#"
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: podinfo
spec:
  interval: 10m
  chartRef:
    kind: OCIRepository
    name: podinfo
  values:
    replicaCount: 2
    anything:
      goes: [1, "two", {three: null}]
"#;

#[test]
fn helm_release_interval_pattern() {
    let crds = load_crds();
    assert_eq!(
        messages(&check(&crds, HELM_RELEASE, &MiniCel)),
        Vec::<String>::new()
    );
    let bad = HELM_RELEASE.replace("interval: 10m", "interval: 5 minutes");
    let vs = check(&crds, &bad, &MiniCel);
    assert_eq!(vs.len(), 1);
    assert_eq!(vs[0].kind, ViolationKind::Pattern);
    assert_eq!(vs[0].path, key_path("spec.interval"));
    assert_eq!(
        vs[0].message,
        r#"spec.interval: Invalid value: "5 minutes": spec.interval in body should match '^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$'"#
    );
}

#[test]
fn helm_release_values_preserve_unknown_fields() {
    let crds = load_crds();
    let doc = HELM_RELEASE.replace(
        "    replicaCount: 2\n",
        "    replicaCount: 2\n    deeply: {nested: {whatever: [x, {y: z}]}}\n    nothing: null\n",
    );
    assert_eq!(
        messages(&check(&crds, &doc, &NoRules)),
        Vec::<String>::new()
    );
}

#[test]
fn helm_release_chart_and_chart_ref_rule() {
    let crds = load_crds();
    let both = HELM_RELEASE.replace(
        "  chartRef:\n",
        "  chart:\n    spec:\n      chart: podinfo\n      sourceRef:\n        kind: HelmRepository\n        name: podinfo\n  chartRef:\n",
    );
    // NoRules: the rule is skipped
    assert_eq!(
        messages(&check(&crds, &both, &NoRules)),
        Vec::<String>::new()
    );
    // a real (tiny) evaluator
    let vs = check(&crds, &both, &MiniCel);
    assert_eq!(
        messages(&vs),
        vec!["spec: Invalid value: either chart or chartRef must be set"]
    );
    assert_eq!(vs[0].kind, ViolationKind::Rule);
    assert_eq!(vs[0].path, key_path("spec"));
    // neither
    let neither = HELM_RELEASE.replace(
        "  chartRef:\n    kind: OCIRepository\n    name: podinfo\n",
        "",
    );
    assert_eq!(
        messages(&check(&crds, &neither, &MiniCel)),
        vec!["spec: Invalid value: either chart or chartRef must be set"]
    );

    // the evaluator gets the rule text and the spec object as `self`
    let rec = Recorder::default();
    check(&crds, &both, &rec);
    let calls = rec.calls.borrow();
    let spec_call = calls
        .iter()
        .find(|(r, _)| r.contains("has(self.chartRef)"))
        .expect("spec rule evaluated");
    assert_eq!(
        spec_call.0,
        "(has(self.chart) && !has(self.chartRef)) || (!has(self.chart) && has(self.chartRef))"
    );
    assert_eq!(spec_call.1["interval"], json!("10m"));
    assert!(spec_call.1.get("chart").is_some() && spec_call.1.get("chartRef").is_some());
    // nested rules are called with their own node as `self`
    drop(calls);
    let rec = Recorder::default();
    let kc = HELM_RELEASE.replace(
        "  values:\n",
        "  kubeConfig:\n    secretRef: {name: kc}\n  values:\n",
    );
    assert_eq!(messages(&check(&crds, &kc, &MiniCel)), Vec::<String>::new());
    check(&crds, &kc, &rec);
    assert!(rec.calls.borrow().iter().any(|(r, v)| r
        == "has(self.configMapRef) || has(self.secretRef)"
        && *v == json!({"secretRef": {"name": "kc"}})));
    let kc_both = kc.replace(
        "secretRef: {name: kc}",
        "secretRef: {name: kc}\n    configMapRef: {name: kc}",
    );
    assert_eq!(
        messages(&check(&crds, &kc_both, &MiniCel)),
        vec![
            "spec.kubeConfig: Invalid value: exactly one of spec.kubeConfig.configMapRef or spec.kubeConfig.secretRef must be specified"
        ]
    );
    let calls = rec.calls.borrow();
    // transition rules (oldSelf) are never evaluated
    assert!(calls.iter().all(|(r, _)| !r.contains("oldSelf")));
}

#[test]
fn transition_rules_are_skipped() {
    let crds = load_crds();
    let rec = Recorder::default();
    let doc = r#"
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ClusterDeployment
metadata: {name: c, namespace: kcm-system}
spec:
  template: aws-standalone-cp-1-0-0
  credential: aws-cred
  config: {region: us-east-2, anything: {goes: true}}
"#;
    let vs = check(&crds, doc, &rec);
    assert_eq!(messages(&vs), Vec::<String>::new());
    assert!(
        rec.calls
            .borrow()
            .iter()
            .all(|(r, _)| !r.contains("oldSelf"))
    );
}

#[test]
fn null_handling() {
    let crds = load_crds();
    // a null optional field is pruned by the API server: no error
    let doc = HELM_RELEASE.replace(
        "    name: podinfo\n  values",
        "    name: podinfo\n    namespace: null\n  values",
    );
    assert_eq!(
        messages(&check(&crds, &doc, &NoRules)),
        Vec::<String>::new()
    );
    // a null required field is pruned, then missing
    let doc = HELM_RELEASE.replace("interval: 10m", "interval: null");
    assert_eq!(
        messages(&check(&crds, &doc, &NoRules)),
        vec!["spec.interval: Required value"]
    );
    // a null array item is not pruned: type error
    let doc = SERVICE_SET.replace("  services:\n", "  services:\n  - null\n");
    let vs = check(&crds, &doc, &NoRules);
    assert_eq!(
        messages(&vs),
        vec![
            r#"spec.services[0]: Invalid value: "null": spec.services[0] in body must be of type object: "null""#
        ]
    );
}

#[test]
fn metadata_is_checked_as_object_meta() {
    let crds = load_crds();
    let doc = r#"
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceSet
metadata:
  namespace: Not_A_Namespace
  labels: {app: 5, "bad key!": x}
  annotations: {note: hi}
  finalizers: [k0rdent.mirantis.com/finalizer]
  creationTimestamp: null
  nmae: typo
spec: {cluster: c, provider: {name: p}}
"#;
    let vs = check(&crds, doc, &NoRules);
    let got: Vec<_> = vs.iter().map(|v| (v.kind, v.path_string())).collect();
    assert_eq!(
        got,
        vec![
            (ViolationKind::Required, "metadata.name".to_string()),
            (ViolationKind::Pattern, "metadata.namespace".to_string()),
            (ViolationKind::Type, "metadata.labels.app".to_string()),
            (
                ViolationKind::Pattern,
                "metadata.labels.bad key!".to_string()
            ),
            (ViolationKind::UnknownField, "metadata.nmae".to_string()),
        ],
        "{vs:#?}"
    );
    assert_eq!(
        vs[0].message,
        "metadata.name: Required value: name or generateName is required"
    );
}

#[test]
fn api_version_and_kind_must_match_the_crd() {
    let crds = load_crds();
    let ss = crd(&crds, "ServiceSet");
    let doc = yaml(&SERVICE_SET.replace("k0rdent.mirantis.com/v1beta1", "k0rdent.mirantis.com/v9"));
    let vs = ss.validate(&doc, &NoRules);
    assert_eq!(vs.len(), 1, "{vs:#?}");
    assert_eq!(vs[0].kind, ViolationKind::TypeMeta);
    assert!(
        vs[0].message.starts_with(
            r#"apiVersion: Invalid value: "k0rdent.mirantis.com/v9": no version "v9""#
        ),
        "{}",
        vs[0].message
    );
    let doc = yaml(&SERVICE_SET.replace("kind: ServiceSet", "kind: ServiceSets"));
    let vs = ss.validate(&doc, &NoRules);
    assert_eq!(
        messages(&vs),
        vec![r#"kind: Invalid value: "ServiceSets": kind must be "ServiceSet""#]
    );
}

#[test]
fn list_map_keys_must_be_unique() {
    let crds = load_crds();
    let doc = r#"
apiVersion: k0rdent.mirantis.com/v1beta1
kind: ServiceSet
metadata: {name: ss}
spec: {cluster: c, provider: {name: p}}
status:
  conditions:
  - {type: Ready, status: "True", reason: R, message: m, lastTransitionTime: "2024-05-07T04:54:21Z"}
  - {type: Ready, status: "False", reason: R, message: m, lastTransitionTime: "2024-05-07T04:54:21Z"}
"#;
    let vs = check(&crds, doc, &NoRules);
    assert_eq!(
        messages(&vs),
        vec![r#"status.conditions[1]: Duplicate value: {"type":"Ready"}"#]
    );
    assert_eq!(vs[0].kind, ViolationKind::ListMapKeyDuplicate);
    let bad_time = doc.replace(
        "lastTransitionTime: \"2024-05-07T04:54:21Z\"}\n  - {type: Ready",
        "lastTransitionTime: yesterday}\n  - {type: Other",
    );
    let vs = check(&crds, &bad_time, &NoRules);
    assert_eq!(
        messages(&vs),
        vec![
            r#"status.conditions[0].lastTransitionTime: Invalid value: "yesterday": status.conditions[0].lastTransitionTime in body must be of type date-time: "yesterday""#
        ]
    );
}

#[test]
fn flux_sources_and_kustomization() {
    let crds = load_crds();
    let git = r#"
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: repo, namespace: flux-system}
spec:
  interval: 1m
  url: https://github.com/stefanprodan/podinfo
  ref: {branch: master}
"#;
    assert_eq!(messages(&check(&crds, git, &MiniCel)), Vec::<String>::new());
    let bad_url = git.replace("https://github.com", "ftp://github.com");
    let vs = check(&crds, &bad_url, &MiniCel);
    assert_eq!(vs.len(), 1);
    assert_eq!(vs[0].kind, ViolationKind::Pattern);
    let ks = r#"
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system}
spec:
  interval: 10m
  prune: true
  path: ./kustomize
  sourceRef: {kind: GitRepository, name: repo}
  timeout: 2m
"#;
    assert_eq!(messages(&check(&crds, ks, &MiniCel)), Vec::<String>::new());
    let bad = ks
        .replace("kind: GitRepository", "kind: HelmRepository")
        .replace("prune: true", "prune: \"yes\"");
    let vs = check(&crds, &bad, &MiniCel);
    let kinds: Vec<_> = vs.iter().map(|v| v.kind).collect();
    assert_eq!(
        kinds,
        vec![ViolationKind::Type, ViolationKind::Enum],
        "{vs:#?}"
    );
}

#[test]
fn many_documents_quickly() {
    // Not a benchmark: a sanity bound that validation is cheap.
    let crds = load_crds();
    let doc = yaml(HELM_RELEASE);
    let c = crd_for(&crds, &doc).unwrap();
    let start = std::time::Instant::now();
    for _ in 0..2000 {
        assert!(c.validate(&doc, &NoRules).is_empty());
    }
    let per_sec = 2000.0 / start.elapsed().as_secs_f64();
    println!("{per_sec:.0} HelmRelease docs/s");
    assert!(per_sec > 2000.0, "{per_sec} docs/s");
}

#[test]
fn values_are_not_required_to_be_objects() {
    // `Value` at the root that is not an object
    let crds = load_crds();
    let ss = crd(&crds, "ServiceSet");
    let vs = ss.validate(&Value::String("x".into()), &NoRules);
    assert_eq!(vs.len(), 1);
    assert_eq!(vs[0].kind, ViolationKind::Type);
    assert_eq!(
        vs[0].message,
        r#"<root>: Invalid value: "string": <root> in body must be of type object: "string""#
    );
}
