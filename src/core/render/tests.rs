//! Unit tests of the Flux translation.

use serde_json::json;

use super::*;
use crate::api::kinds::KCM_API_VERSION;
use crate::api::naming::ANNOTATION_PAUSED;

fn template(name: &str, spec: Value, status: Value) -> Value {
    json!({"apiVersion": KCM_API_VERSION, "kind": "ServiceTemplate",
           "metadata": {"name": name, "namespace": "kcm-system"}, "spec": spec, "status": status})
}

fn chart_template() -> Value {
    template(
        "nginx-4-11-0",
        json!({"helm": {"chartSpec": {"chart": "ingress-nginx", "version": "4.11.0",
               "interval": "10m", "sourceRef": {"kind": "HelmRepository", "name": "k0rdent-catalog"}}}}),
        json!({"valid": true, "chartRef": {"kind": "HelmChart", "name": "nginx-4-11-0", "namespace": "kcm-system"}}),
    )
}

fn set(services: Value) -> Value {
    json!({"apiVersion": KCM_API_VERSION, "kind": "ServiceSet",
           "metadata": {"name": "dev", "namespace": "kcm-system", "uid": "u-1"},
           "spec": {"cluster": "dev", "provider": {"name": "ksm-flux"}, "services": services}})
}

fn run(set: &Value, templates: &[Value]) -> Rendered {
    render(&Inputs {
        service_set: set,
        templates,
    })
}

fn messages(r: &Rendered) -> Vec<String> {
    r.diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect()
}

#[test]
fn helm_chart_ref_release() {
    let r = run(
        &set(
            json!([{"name": "ingress", "namespace": "ingress", "template": "nginx-4-11-0",
                     "values": "controller:\n  replicaCount: 2\n"}]),
        ),
        &[chart_template()],
    );
    assert!(r.diagnostics.is_empty(), "{:?}", messages(&r));
    let hr = &r.objects[0];
    assert_eq!(hr["metadata"]["name"], "dev-ingress");
    assert_eq!(hr["metadata"]["ownerReferences"][0]["uid"], "u-1");
    assert_eq!(
        hr["spec"]["chartRef"],
        json!({"kind": "HelmChart", "name": "nginx-4-11-0", "namespace": "kcm-system"})
    );
    assert_eq!(
        hr["spec"]["values"],
        json!({"controller": {"replicaCount": 2}})
    );
    assert_eq!(
        hr["spec"]["kubeConfig"],
        json!({"secretRef": {"name": "dev-kubeconfig", "key": "value"}})
    );
    assert_eq!(hr["spec"]["releaseName"], "ingress");
    assert_eq!(hr["spec"]["storageNamespace"], "ingress");
    assert_eq!(r.services[0].outcome, Outcome::Rendered { index: 0 });
    assert_eq!(r.services[0].service_type, Some(ServiceType::Helm));
}

#[test]
fn values_errors_point_inside_the_values_text() {
    let r = run(
        &set(
            json!([{"name": "a", "namespace": "x", "template": "nginx-4-11-0", "values": "a: 1\nb: [\n"},
                     {"name": "b", "namespace": "x", "template": "nginx-4-11-0", "values": "- 1\n- 2\n"}]),
        ),
        &[chart_template()],
    );
    let m = messages(&r);
    assert!(
        m[0].starts_with("KSM503 service \"a\": values are not valid YAML at line 3, column 1"),
        "{m:?}"
    );
    assert_eq!(
        m[1],
        "KSM503 service \"b\": values are a YAML sequence, not a mapping (Helm values are key: value pairs)"
    );
    assert!(r.objects.is_empty());
    assert!(
        matches!(&r.services[1].outcome, Outcome::Failed { message } if message.contains("not a mapping"))
    );
}

#[test]
fn missing_invalid_and_elsewhere_templates() {
    let mut elsewhere = chart_template();
    elsewhere["metadata"]["namespace"] = json!("other");
    let mut invalid = chart_template();
    invalid["metadata"]["name"] = json!("broken");
    invalid["status"] = json!({"valid": false, "validationError": "chart not found"});
    let r = run(
        &set(
            json!([{"name": "a", "namespace": "x", "template": "nginx-4-11-0"},
                     {"name": "b", "namespace": "x", "template": "broken"}]),
        ),
        &[elsewhere, invalid],
    );
    let m = messages(&r);
    assert_eq!(
        m[0],
        "KSM501 service \"a\": ServiceTemplate kcm-system/nginx-4-11-0 not found"
    );
    assert!(
        r.diagnostics[0]
            .help
            .as_deref()
            .unwrap()
            .contains("namespace other")
    );
    assert_eq!(
        m[1],
        "KSM502 service \"b\": ServiceTemplate kcm-system/broken is not valid: chart not found"
    );
}

#[test]
fn uninstall_paused_self_management_and_collisions() {
    let mut s = set(json!([
        {"name": "a", "namespace": "x", "template": "nginx-4-11-0", "helmAction": "Uninstall"},
        {"name": "b", "namespace": "x", "template": "nginx-4-11-0"},
        {"name": "b", "namespace": "y", "template": "nginx-4-11-0"}]));
    s["metadata"]["annotations"] = json!({ANNOTATION_PAUSED: ""});
    s["spec"]["cluster"] = json!("");
    s["spec"]["provider"]["selfManagement"] = json!(true);
    let r = run(&s, &[chart_template()]);
    assert_eq!(r.services[0].outcome, Outcome::Uninstall);
    assert_eq!(r.objects.len(), 1);
    assert_eq!(r.objects[0]["spec"]["suspend"], true);
    assert!(r.objects[0]["spec"].get("kubeConfig").is_none());
    let m = messages(&r);
    assert!(
        m.iter()
            .any(|m| m.starts_with("KSM508 service \"a\": helmAction is Uninstall")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|m| m
                == "KSM507 service \"b\": object name \"dev-b\" is already used by service \"b\""),
        "{m:?}"
    );
}

#[test]
fn release_name_limit_and_bad_provider_config() {
    let long = "a".repeat(54);
    let r = run(
        &set(json!([{"name": long, "namespace": "x", "template": "nginx-4-11-0"}])),
        &[chart_template()],
    );
    assert!(messages(&r)[0].contains("has 54 characters; Helm allows at most 53"));
    let mut s = set(json!([{"name": "a", "namespace": "x", "template": "nginx-4-11-0"}]));
    s["spec"]["provider"]["config"] = json!({"interval": "5 minutes"});
    let r = run(&s, &[chart_template()]);
    assert!(r.objects.is_empty());
    assert!(
        matches!(&r.services[0].outcome, Outcome::Failed { message } if message.starts_with("invalid provider config: spec.provider.config.interval"))
    );
}

#[test]
fn helm_options_merge_and_map() {
    let mut t = chart_template();
    t["spec"]["helmOptions"] = json!({"atomic": true, "timeout": "10m", "labels": {"a": "1"}});
    let r = run(
        &set(
            json!([{"name": "a", "namespace": "x", "template": "nginx-4-11-0",
            "helmOptions": {"atomic": false, "wait": true, "skipCRDs": true, "labels": {"b": "2"},
                            "upgradeOptions": {"maxHistory": 3, "upgradeCRDs": true}}}]),
        ),
        &[t],
    );
    let spec = &r.objects[0]["spec"];
    assert_eq!(spec["timeout"], "10m");
    assert_eq!(
        spec["install"],
        json!({"disableWait": false, "remediation": {"remediateLastFailure": false},
                                      "crds": "Skip", "createNamespace": true})
    );
    assert_eq!(spec["upgrade"]["crds"], "CreateReplace");
    assert_eq!(spec["maxHistory"], 3);
    assert!(
        messages(&r)
            .iter()
            .any(|m| m.contains("helmOptions.labels has no HelmRelease equivalent"))
    );
}

#[test]
fn kustomize_sources() {
    let git = template(
        "app",
        json!({"kustomize": {"deploymentType": "Remote", "path": "./deploy",
               "localSourceRef": {"kind": "GitRepository", "name": "apps"}}}),
        json!({"valid": true}),
    );
    let cm = template(
        "cm",
        json!({"resources": {"deploymentType": "Local", "localSourceRef": {"kind": "ConfigMap", "name": "m"}}}),
        json!({"valid": true}),
    );
    let r = run(
        &set(
            json!([{"name": "a", "namespace": "apps", "template": "app"},
                     {"name": "b", "namespace": "apps", "template": "cm"}]),
        ),
        &[git, cm],
    );
    let k = &r.objects[0];
    assert_eq!(k["kind"], "Kustomization");
    assert_eq!(
        k["spec"]["sourceRef"],
        json!({"kind": "GitRepository", "name": "apps", "namespace": "kcm-system"})
    );
    assert_eq!(k["spec"]["prune"], true);
    assert_eq!(r.services[0].service_type, Some(ServiceType::Kustomize));
    assert!(messages(&r)[0].starts_with("KSM506 service \"b\": ServiceTemplate kcm-system/cm: a Flux Kustomization cannot use a ConfigMap"));
    assert_eq!(r.services[1].service_type, Some(ServiceType::Resource));
}

#[test]
fn the_cluster_of_a_set_is_that_of_its_rendered_targets() {
    use crate::core::adapter::ownership::{cluster_of, target_of};
    let services = json!([{"name": "a", "namespace": "x", "template": "nginx-4-11-0"}]);
    let mut cases = vec![set(services.clone())];
    let mut no_ns = set(services.clone());
    no_ns["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("namespace");
    cases.push(no_ns);
    let mut named_like_a_secret = set(services.clone());
    named_like_a_secret["spec"]["cluster"] = json!("edge-kubeconfig");
    cases.push(named_like_a_secret);
    let mut management = set(services.clone());
    management["spec"]["provider"]["selfManagement"] = json!(true);
    cases.push(management);
    let mut no_cluster = set(services);
    no_cluster["spec"]["cluster"] = json!("");
    cases.push(no_cluster);
    let clusters: Vec<String> = cases
        .iter()
        .map(|s| {
            // The template in the ServiceSet's namespace.
            let mut template = chart_template();
            template["metadata"]["namespace"] = s["metadata"]
                .get("namespace")
                .cloned()
                .unwrap_or(json!("default"));
            let r = run(s, &[template]);
            let target = target_of(&r.objects[0]).expect("a target");
            assert_eq!(cluster_of(s), target.cluster(), "{s}");
            cluster_of(s)
        })
        .collect();
    assert_eq!(
        clusters,
        [
            "kcm-system/dev",
            "default/dev",
            "kcm-system/edge-kubeconfig",
            "the management cluster",
            "the management cluster"
        ]
    );
}
