//! Tests of the readiness of an SMP, against kcm's behaviour.

use super::*;
use serde_json::json;

fn deployment(name: &str, ns: &str, status: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns}, "status": status})
}

fn crd(plural: &str, group: &str, kind: &str, versions: &[&str]) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "names": {"kind": kind, "plural": plural},
                 "versions": versions.iter().map(|v| json!({"name": v})).collect::<Vec<_>>()}})
}

fn smp(adapter_rule: &str, prov_rule: &str) -> Value {
    json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "StateManagementProvider",
        "metadata": {"name": "ksm-flux"},
        "spec": {
            "adapter": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "flux-adapter", "namespace": "kcm-system", "readinessRule": adapter_rule},
            "provisioner": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "helm-controller", "namespace": "flux-system", "readinessRule": prov_rule}],
            "provisionerCRDs": [{"group": "helm.toolkit.fluxcd.io", "version": "v2", "resources": ["helmreleases"]}],
            "selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": "flux-adapter"}},
            "suspend": false}})
}

fn set() -> ObjectSet {
    ObjectSet::new(vec![
        deployment(
            "flux-adapter",
            "kcm-system",
            json!({"replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 1}),
        ),
        deployment(
            "helm-controller",
            "flux-system",
            json!({"observedGeneration": 1}),
        ),
        crd(
            "helmreleases",
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            &["v2"],
        ),
    ])
}

fn conds(c: &SmpCheck) -> Vec<String> {
    c.conditions
        .iter()
        .map(|c| format!("{} {:?} {}: {}", c.type_, c.status, c.reason, c.message))
        .collect()
}

#[test]
fn ready_provider() {
    let c = check_smp(
        &smp("self.status.readyReplicas == self.status.replicas", ""),
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert!(c.ready, "{:?}", conds(&c));
    assert_eq!(
        conds(&c)[1],
        "AdapterReady True AdapterEnsuredSuccessfully: Successfully ensured adapter"
    );
}

#[test]
fn scaled_to_zero_provisioner_fails_to_evaluate_like_kcm() {
    let c = check_smp(
        &smp("", "self.status.availableReplicas > 0"),
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert!(!c.ready);
    assert_eq!(
        conds(&c)[2],
        "ProvisionerReady False FailedToEvaluateReadiness: Failed to evaluate provisioner readiness: failed to evaluate CEL expression: no such key: availableReplicas"
    );
}

#[test]
fn false_rule_and_compile_errors() {
    let c = check_smp(
        &smp(
            "self.status.readyReplicas == 2",
            "has(self.status.readyReplicas)",
        ),
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert_eq!(
        conds(&c)[1],
        "AdapterReady False AdapterNotReady: adapter not ready"
    );
    assert_eq!(
        conds(&c)[2],
        "ProvisionerReady False ProvisionerNotReady: provisioner not ready"
    );
    assert!(
        !c.evaluations[0]
            .outcome
            .as_ref()
            .unwrap()
            .explanation
            .is_empty()
    );
    let c = check_smp(
        &smp("status.ready", ""),
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert!(conds(&c)[1].starts_with("AdapterReady False FailedToEvaluateReadiness: Failed to evaluate adapter readiness: failed to compile CEL expression: ERROR: <input>:1:1: undeclared reference to 'status'"), "{:?}", conds(&c));
}

#[test]
fn missing_objects_and_crds() {
    let mut s = smp("", "");
    s["spec"]["adapter"]["name"] = json!("nope");
    s["spec"]["provisionerCRDs"][0]["version"] = json!("v2beta1");
    let c = check_smp(
        &s,
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert_eq!(
        conds(&c)[1],
        "AdapterReady False FailedToGetAdapter: Failed to get adapter object: deployments.apps \"nope\" not found"
    );
    assert_eq!(
        conds(&c)[3],
        "ProvisionerCRDsReady False ProvisionerCRDsNotReady: Failed to validate provisioner CRDs: version v2beta1 not found in CRD helmreleases.helm.toolkit.fluxcd.io"
    );
    s["spec"]["provisionerCRDs"][0]["resources"] = json!(["kustomizations"]);
    let c = check_smp(
        &s,
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert!(conds(&c)[3].ends_with("failed to get CRD kustomizations.helm.toolkit.fluxcd.io: customresourcedefinitions.apiextensions.k8s.io \"kustomizations.helm.toolkit.fluxcd.io\" not found"));
    s["spec"]["provisionerCRDs"][0]["group"] = json!("");
    let c = check_smp(
        &s,
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert!(conds(&c)[3].ends_with("invalid GVR"));
}

#[test]
fn skipped_providers() {
    let mut s = smp("", "");
    s["spec"]["suspend"] = json!(true);
    assert_eq!(
        check_smp(
            &s,
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue
        )
        .skipped,
        Some(Skipped::Suspended)
    );
    s["spec"].as_object_mut().unwrap().remove("selector");
    assert_eq!(
        check_smp(
            &s,
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue
        )
        .skipped,
        Some(Skipped::SelectorNotDefined)
    );
}

#[test]
fn invalid_api_version_message_matches_kcm() {
    let mut s = smp("", "");
    s["spec"]["adapter"]["apiVersion"] = json!("a/b/c");
    let c = check_smp(
        &s,
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    // kcm's ensureRBAC parses it first and stops there: the other conditions are not
    // evaluated (Unknown, with no message, on an SMP kcm never wrote).
    assert_eq!(
        conds(&c),
        [
            "RBACReady False FailedToGetGVKForAdapter: Failed to ensure RBAC: invalid API version a/b/c for resource reference {a/b/c Deployment flux-adapter kcm-system }",
            "AdapterReady Unknown AdapterUnknown: ",
            "ProvisionerReady Unknown ProvisionerUnknown: ",
            "ProvisionerCRDsReady Unknown ProvisionerCRDsUnknown: ",
        ]
    );
    assert!(!c.ready && c.evaluations.is_empty());
}

#[test]
fn a_kind_not_served_at_the_version_named_fails_rbac_as_kcm_maps_it() {
    // The HelmRelease CRD serves v2 only; a provisioner names v2beta1. Conditions kcm wrote
    // before stay as they were.
    let mut s = smp("", "");
    s["spec"]["provisioner"] = json!([{"apiVersion": "helm.toolkit.fluxcd.io/v2beta1",
        "kind": "HelmRelease", "name": "x", "namespace": "flux-system", "readinessRule": ""}]);
    s["status"] = json!({"conditions": [{"type": "AdapterReady", "status": "True",
        "reason": "AdapterEnsuredSuccessfully", "message": "Successfully ensured adapter"}]});
    let c = check_smp(
        &s,
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert_eq!(
        conds(&c)[..2],
        [
            "RBACReady False FailedToGetGVKForProvisioner: Failed to ensure RBAC: failed to get REST mapping for helm.toolkit.fluxcd.io/v2beta1, Kind=HelmRelease: no matches for kind \"HelmRelease\" in version \"helm.toolkit.fluxcd.io/v2beta1\"",
            "AdapterReady True AdapterEnsuredSuccessfully: Successfully ensured adapter",
        ]
    );
    assert!(!c.ready);
    // Live, discovery says so without the CRD.
    let live = ObjectSet::new(Vec::new()).with_not_served(vec![(
        "helm.toolkit.fluxcd.io/v2beta1".into(),
        "HelmRelease".into(),
    )]);
    let c = check_smp(
        &s,
        &live,
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert_eq!(c.conditions[0].reason, "FailedToGetGVKForProvisioner");
}

#[test]
fn recorded_status_is_compared_with_the_evaluation() {
    let mut s = smp("self.status.readyReplicas == 2", "");
    s["status"] = json!({"ready": true, "conditions": [
        {"type": "AdapterReady", "status": "True", "reason": "AdapterEnsuredSuccessfully"},
        {"type": "ProvisionerReady", "status": "True", "reason": "ProvisionerEnsuredSuccessfully"}]});
    let c = check_smp(
        &s,
        &set(),
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::Never,
    );
    let d = disagreements(&s, &c);
    assert_eq!(
        d[0],
        (
            "AdapterReady".into(),
            "True AdapterEnsuredSuccessfully".into(),
            "False AdapterNotReady".into()
        )
    );
    assert_eq!(d[1].0, "ProvisionerCRDsReady");
    assert_eq!(d[1].1, "(not written)");
    assert_eq!(d.len(), 2);
}

#[test]
fn resource_guessing() {
    assert_eq!(guess_resource("Deployment"), "deployments");
    assert_eq!(guess_resource("Policy"), "policies");
    assert_eq!(guess_resource("Ingress"), "ingresses");
    assert_eq!(guess_resource("Gateway"), "gateways");
}

#[test]
fn compile_errors_read_as_cel_go_prints_them_and_stay_short() {
    let rule = |text: &str| Rule::new(text, &Limits::default());
    let kcm = |r: &Rule| {
        let out = r.evaluate(&json!({}), Explain::Never);
        let e = out.error.unwrap();
        (e.kcm_message, e.message)
    };
    // One error per item of a 100,000-character list: cel-go reports 100 of them, and
    // leaves out a source line longer than 16,384 bytes.
    let text = format!("[{}] == []", vec!["x"; 49_990].join(","));
    let (issues, message) = kcm(&rule(&text));
    assert!(issues.len() < 10_000, "{} bytes", issues.len());
    assert_eq!(issues.matches("ERROR: <input>:1:").count(), 100);
    assert!(issues.starts_with(
        "failed to compile CEL expression: ERROR: <input>:1:2: undeclared reference to 'x' (in container '')\nERROR: <input>:1:4: "
    ));
    assert!(
        issues.ends_with("\n49890 more errors were truncated"),
        "{}",
        &issues[issues.len() - 200..]
    );
    assert!(message.ends_with("; 49890 more errors were truncated"));
    assert_eq!(message.matches("undeclared reference").count(), 100);
    // A short line is shown, tabs as spaces, a full-width dot under each wide character.
    let (issues, _) = kcm(&rule("'é'\t== y"));
    assert_eq!(
        issues,
        "failed to compile CEL expression: ERROR: <input>:1:8: undeclared reference to 'y' (in container '')\n | 'é' == y\n | .\u{ff0e}.....^"
    );
}

#[test]
fn a_reference_at_another_served_version_reads_the_object_under_that_version() {
    // The Widget saved at v1 (the CRD's preferred version), the adapter named at v1beta1: kcm
    // reads it at v1beta1, so its apiVersion there is v1beta1.
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "w", "namespace": "n"}, "status": {"ready": true}});
    let set = ObjectSet::new(vec![
        widget,
        crd("widgets", "example.com", "Widget", &["v1", "v1beta1"]),
    ]);
    let mut smp = smp("", "");
    smp["spec"]["adapter"] = json!({"apiVersion": "example.com/v1beta1", "kind": "Widget",
        "name": "w", "namespace": "n",
        "readinessRule": "self.apiVersion == 'example.com/v1beta1' && self.status.ready"});
    smp["spec"]["provisioner"] = json!([{"apiVersion": "example.com/v1", "kind": "Widget",
        "name": "w", "namespace": "n", "readinessRule": "self.apiVersion == 'example.com/v1'"}]);
    smp["spec"]["provisionerCRDs"] = json!([]);
    let c = check_smp(
        &smp,
        &set,
        Rbac::NotEvaluated,
        &Limits::default(),
        Explain::WhenNotTrue,
    );
    assert!(c.ready, "{:?}", conds(&c));
}
