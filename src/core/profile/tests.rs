use super::*;
use crate::core::objects;
use serde_json::json;

const INPUTS: &str = include_str!("../../../testdata/sveltos/examples/00-inputs.yaml");
const SERVICE_SET: &str = include_str!("../../../testdata/sveltos/examples/01-serviceset.yaml");
const PROFILE: &str = include_str!("../../../testdata/sveltos/examples/02-profile.yaml");
const SELF_MANAGEMENT: &str =
    include_str!("../../../testdata/sveltos/examples/07-multiclusterservice-selfmanagement.yaml");

fn load(text: &str) -> Vec<Value> {
    let source = crate::diag::source::Source::new("input.yaml", text);
    objects::load(&source, &Default::default())
        .objects
        .into_iter()
        .map(|o| o.json)
        .collect()
}

fn of_kind(objs: &[Value], kind: &str) -> Value {
    objs.iter()
        .find(|o| Object(o).kind() == kind)
        .cloned()
        .unwrap_or_else(|| panic!("no {kind}"))
}

fn run(service_set: &Value, objects: &[Value]) -> Translation {
    let index = Index::new(objects);
    translate(&Inputs {
        service_set,
        objects: &index,
    })
}

/// The example ServiceSet with a uid, and the inputs of 00-inputs.yaml.
fn example() -> (Value, Vec<Value>) {
    let mut ss = of_kind(&load(SERVICE_SET), "ServiceSet");
    ss["metadata"]["uid"] = json!("0b6a3d55-1f2e-4c7a-8d90-2e4f6a8b0c1d");
    (ss, load(INPUTS))
}

fn codes_of(t: &Translation) -> Vec<&'static str> {
    t.diagnostics.iter().map(|d| d.code).collect()
}

#[test]
fn the_example_profile_is_what_kcm_writes() {
    let (ss, inputs) = example();
    let t = run(&ss, &inputs);
    assert!(!t.has_errors(), "{:?}", t.diagnostics);
    assert!(t.condition.ready);
    let got = t.profile.expect("a Profile");
    let want = of_kind(&load(PROFILE), "Profile");
    assert_eq!(got["spec"], want["spec"]);
    assert_eq!(got["metadata"]["labels"], want["metadata"]["labels"]);
    assert_eq!(
        got["metadata"]["ownerReferences"],
        want["metadata"]["ownerReferences"]
    );
    assert_eq!(got["metadata"]["name"], "dev-cluster");
    assert_eq!(got["metadata"]["namespace"], "kcm-system");
    assert!(got["metadata"].get("annotations").is_none());
    assert_eq!(crds::validate(&got), Some(vec![]));
}

#[test]
fn self_management_is_a_cluster_profile_on_the_management_sveltos_cluster() {
    let objs = load(SELF_MANAGEMENT);
    let ss = of_kind(&objs, "ServiceSet");
    let mut all = load(INPUTS);
    all.extend(objs.iter().cloned());
    // The template and chart of the example's service, from the OCI catalog.
    let mut template = all
        .iter()
        .find(|o| {
            Object(o).name() == "ingress-nginx-4-13-0" && Object(o).kind() == "ServiceTemplate"
        })
        .cloned()
        .unwrap();
    template["metadata"]["name"] = json!("kube-prometheus-stack-75-15-1");
    template["status"]["chartRef"]["name"] = json!("kube-prometheus-stack-75-15-1");
    let mut chart = of_kind(&all, "HelmChart");
    chart["metadata"]["name"] = json!("kube-prometheus-stack-75-15-1");
    chart["spec"]["chart"] = json!("kube-prometheus-stack");
    chart["spec"]["version"] = json!("75.15.1");
    chart["status"]["artifact"]["revision"] = json!("75.15.1");
    all.extend([template, chart]);
    let t = run(&ss, &all);
    assert!(!t.has_errors(), "{:?}", t.diagnostics);
    assert_eq!(t.kind, ProfileKind::ClusterProfile);
    let got = t.profile.expect("a ClusterProfile");
    let want = of_kind(&objs, "ClusterProfile");
    for field in [
        "clusterSelector",
        "clusterRefs",
        "syncMode",
        "tier",
        "continueOnConflict",
        "continueOnError",
        "reloader",
        "stopMatchingBehavior",
        "patches",
    ] {
        assert_eq!(got["spec"][field], want["spec"][field], "{field}");
    }
    for field in [
        "repositoryURL",
        "repositoryName",
        "chartName",
        "chartVersion",
        "releaseName",
        "releaseNamespace",
        "helmChartAction",
    ] {
        assert_eq!(
            got["spec"]["helmCharts"][0][field], want["spec"]["helmCharts"][0][field],
            "{field}"
        );
    }
    assert_eq!(got["spec"]["helmCharts"][0]["options"]["atomic"], true);
    assert_eq!(
        got["metadata"]["ownerReferences"],
        want["metadata"]["ownerReferences"]
    );
    assert!(got["metadata"].get("namespace").is_none());
    assert_eq!(
        got["spec"]["clusterRefs"],
        json!([{"apiVersion": "lib.projectsveltos.io/v1beta1", "kind": "SveltosCluster",
            "name": "mgmt", "namespace": "mgmt"}])
    );
}

#[test]
fn nil_config_gives_tier_100_and_stops_on_conflict() {
    let (mut ss, inputs) = example();
    ss["spec"]["provider"]
        .as_object_mut()
        .unwrap()
        .remove("config");
    let t = run(&ss, &inputs);
    let p = t.profile.as_ref().expect("written");
    assert_eq!(p["spec"]["tier"], 100);
    assert_eq!(p["spec"]["continueOnConflict"], false);
    assert!(codes_of(&t).contains(&codes::NIL_CONFIG));
    assert!(!t.has_errors());
}

#[test]
fn provider_config_maps_to_the_spec() {
    let (mut ss, inputs) = example();
    ss["spec"]["provider"]["config"] = json!({"priority": 1000, "stopOnConflict": true,
        "continueOnError": true, "syncMode": "ContinuousWithDriftDetection",
        "driftIgnore": [{"kind": "Secret", "name": "s"}],
        "driftExclusions": [{"paths": ["/spec/replicas"]}],
        "stopMatchingBehavior": "LeavePolicies", "SyncMode": "DryRun"});
    let t = run(&ss, &inputs);
    let spec = &t.profile.as_ref().expect("written")["spec"];
    assert_eq!(spec["tier"], 2147483647i64 - 1000);
    assert_eq!(spec["continueOnConflict"], false);
    assert_eq!(spec["continueOnError"], true);
    assert_eq!(spec["syncMode"], "ContinuousWithDriftDetection");
    assert_eq!(spec["stopMatchingBehavior"], "LeavePolicies");
    assert_eq!(
        spec["driftExclusions"],
        json!([{"paths": ["/spec/replicas"]}])
    );
    assert_eq!(spec["patches"][0]["target"]["kind"], "Secret");
    assert_eq!(
        spec["patches"][0]["patch"],
        crate::api::sveltos::DRIFT_IGNORE_PATCH
    );
    assert!(codes_of(&t).contains(&codes::CONFIG_KEY_IGNORED));
}

#[test]
fn a_bad_priority_is_a_profile_build_failure() {
    let (mut ss, inputs) = example();
    ss["spec"]["provider"]["config"] = json!({"priority": 0});
    let t = run(&ss, &inputs);
    assert!(t.profile.is_none());
    assert_eq!(t.condition.reason, REASON_PROFILE_BUILD_FAILED);
    assert!(
        t.condition
            .message
            .starts_with("Failed to build Profile from ServiceSet dev-cluster configuration:"),
        "{}",
        t.condition.message
    );
    assert!(codes_of(&t).contains(&codes::PROFILE_NOT_WRITTEN));
    assert!(
        t.services
            .iter()
            .all(|s| matches!(s.outcome, Outcome::Failed { .. }))
    );
}

#[test]
fn a_sync_mode_outside_the_enum_is_rejected_by_the_crd() {
    let (mut ss, inputs) = example();
    ss["spec"]["provider"]["config"] = json!({"syncMode": "Sometimes"});
    let t = run(&ss, &inputs);
    assert!(t.profile.is_none());
    assert_eq!(t.condition.reason, REASON_PROFILE_NOT_READY);
    assert_eq!(t.condition.message, "Profile is not ready");
    assert!(t.condition.error.as_deref().unwrap().contains("syncMode"));
    assert!(codes_of(&t).contains(&codes::PROFILE_REJECTED));
}

#[test]
fn duplicate_template_resource_identifiers_are_rejected() {
    let (mut ss, inputs) = example();
    let r =
        json!({"identifier": "a", "resource": {"kind": "Secret", "name": "s", "namespace": "x"}});
    ss["spec"]["provider"]["config"] = json!({"templateResourceRefs": [r.clone(), r]});
    let t = run(&ss, &inputs);
    assert!(t.profile.is_none(), "{:?}", t.profile);
    assert!(codes_of(&t).contains(&codes::PROFILE_REJECTED));
}

#[test]
fn pause_annotation_is_carried() {
    let (mut ss, inputs) = example();
    ss["metadata"]["annotations"] = json!({"k0rdent.mirantis.com/service-set-paused": ""});
    let p = run(&ss, &inputs).profile.expect("written");
    assert_eq!(
        p["metadata"]["annotations"],
        json!({"profile.projectsveltos.io/paused": "true"})
    );
}

#[test]
fn the_cluster_deployment_decides_target_and_credentials() {
    let (ss, mut inputs) = example();
    // The CAPI Cluster is gone, a SveltosCluster of the same name is there (adopted).
    inputs.retain(|o| Object(o).kind() != "Cluster");
    inputs.push(
        json!({"apiVersion": "lib.projectsveltos.io/v1beta1", "kind": "SveltosCluster",
        "metadata": {"name": "dev-cluster", "namespace": "kcm-system"}}),
    );
    inputs.push(
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
        "metadata": {"name": "dev-cluster", "namespace": "kcm-system"},
        "spec": {"credential": "aws", "propagateCredentials": true}}),
    );
    inputs.push(
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "Credential",
        "metadata": {"name": "aws", "namespace": "kcm-system"},
        "spec": {"identityRef": {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
            "kind": "AWSClusterStaticIdentity", "name": "aws-id", "namespace": "kcm-system"}}}),
    );
    let t = run(&ss, &inputs);
    assert!(!t.has_errors(), "{:?}", t.diagnostics);
    let spec = &t.profile.as_ref().unwrap()["spec"];
    assert_eq!(spec["clusterRefs"][0]["kind"], "SveltosCluster");
    let ids: Vec<&str> = spec["templateResourceRefs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["identifier"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "InfrastructureProviderIdentity",
            "InfrastructureProviderIdentitySecret"
        ]
    );
    assert_eq!(
        spec["templateResourceRefs"][1]["resource"]["name"],
        "aws-id-secret"
    );
    assert_eq!(
        spec["policyRefs"],
        json!([{"deploymentType": "Remote", "kind": "ConfigMap",
            "name": "aws-id-resource-template", "namespace": "kcm-system",
            "optional": false, "skipNamespaceCreation": false, "tier": 100}]),
        "with the CRD's defaults"
    );

    // Neither cluster object: kcm cannot build the Profile.
    inputs.retain(|o| Object(o).kind() != "SveltosCluster");
    inputs.push(
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "other", "namespace": "kcm-system"}}),
    );
    let t = run(&ss, &inputs);
    assert!(t.profile.is_none());
    assert!(codes_of(&t).contains(&codes::CLUSTER_MISSING));
    assert_eq!(t.condition.reason, REASON_PROFILE_NOT_READY);
}

#[test]
fn a_regional_credential_drops_owner_references() {
    let (ss, mut inputs) = example();
    inputs.push(
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
        "metadata": {"name": "dev-cluster", "namespace": "kcm-system"},
        "spec": {"credential": "c"}}),
    );
    inputs.push(
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "Credential",
        "metadata": {"name": "c", "namespace": "kcm-system"}, "spec": {"region": "eu"}}),
    );
    let p = run(&ss, &inputs).profile.expect("written");
    assert!(p["metadata"].get("ownerReferences").is_none());
}

#[test]
fn a_missing_template_fails_the_helm_charts() {
    let (ss, mut inputs) = example();
    inputs.retain(|o| {
        Object(o).name() != "cert-manager-1-18-2" || Object(o).kind() != "ServiceTemplate"
    });
    let t = run(&ss, &inputs);
    assert!(t.profile.is_none());
    assert_eq!(t.condition.reason, REASON_HELM_CHARTS_BUILD_FAILED);
    assert!(codes_of(&t).contains(&codes::TEMPLATE_MISSING));
    // The service with the problem gets it, the other the condition's message.
    let cm = t
        .services
        .iter()
        .find(|s| s.name == "cert-manager")
        .unwrap();
    match &cm.outcome {
        Outcome::Failed { message } => {
            assert!(message.contains("cert-manager-1-18-2"), "{message}")
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn kustomize_and_resources_services_become_refs() {
    let (mut ss, mut inputs) = example();
    ss["spec"]["services"] = json!([
        {"name": "k", "namespace": "apps", "template": "kust", "values": "x: 1"},
        {"name": "r", "namespace": "apps", "template": "res"}
    ]);
    inputs.push(json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
        "metadata": {"name": "kust", "namespace": "kcm-system"},
        "spec": {"kustomize": {"path": "./overlays/dev", "deploymentType": "Local",
            "remoteSourceSpec": {"git": {"url": "https://x"}}}},
        "status": {"valid": true, "sourceStatus": {"kind": "GitRepository", "name": "kust", "namespace": "kcm-system"}}}));
    inputs.push(json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
        "metadata": {"name": "res", "namespace": "kcm-system"},
        "spec": {"resources": {"path": "manifests", "localSourceRef": {"kind": "ConfigMap", "name": "m"}}},
        "status": {"valid": true, "sourceStatus": {"kind": "ConfigMap", "name": "m", "namespace": "kcm-system"}}}));
    let t = run(&ss, &inputs);
    assert!(!t.has_errors(), "{:?}", t.diagnostics);
    let spec = &t.profile.as_ref().unwrap()["spec"];
    assert!(spec.get("helmCharts").is_none());
    assert_eq!(spec["kustomizationRefs"][0]["targetNamespace"], "apps");
    assert_eq!(spec["kustomizationRefs"][0]["deploymentType"], "Local");
    assert_eq!(spec["kustomizationRefs"][0]["path"], "./overlays/dev");
    assert_eq!(spec["policyRefs"][0]["kind"], "ConfigMap");
    assert_eq!(spec["policyRefs"][0]["deploymentType"], "Remote");
    assert!(
        codes_of(&t).contains(&codes::NO_EQUIVALENT),
        "values ignored"
    );
}

#[test]
fn chart_sources_as_kcm_reads_them() {
    let (ss, inputs) = example();
    let with = |kind: &str, repo: Value| {
        let mut objs: Vec<Value> = inputs
            .iter()
            .filter(|o| Object(o).name() != "jetstack")
            .cloned()
            .collect();
        for o in &mut objs {
            if Object(o).kind() == "HelmChart" && Object(o).name() == "cert-manager-1-18-2" {
                o["spec"]["sourceRef"] = json!({"kind": kind, "name": "jetstack"});
            }
        }
        objs.push(repo);
        run(&ss, &objs)
    };
    // A chart in a GitRepository: gitrepository://<chart ns>/<repo>/<chart path>.
    let t = with(
        "GitRepository",
        json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
            "metadata": {"name": "jetstack", "namespace": "kcm-system"},
            "spec": {"url": "https://example.invalid/charts.git", "secretRef": {"name": "git-auth"}}}),
    );
    let c = &t.profile.as_ref().expect("written")["spec"]["helmCharts"][1];
    assert_eq!(
        c["repositoryURL"],
        "gitrepository://kcm-system/jetstack/cert-manager"
    );
    assert_eq!(c["chartName"], "cert-manager");
    assert_eq!(
        c["registryCredentialsConfig"]["credentials"],
        json!({"name": "git-auth", "namespace": "kcm-system"})
    );
    // An insecure HTTP repository: plain HTTP, chartName <chart>/<chart>.
    let t = with(
        "HelmRepository",
        json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmRepository",
            "metadata": {"name": "jetstack", "namespace": "kcm-system"},
            "spec": {"url": "http://charts.internal", "insecure": true}}),
    );
    let c = &t.profile.as_ref().expect("written")["spec"]["helmCharts"][1];
    assert_eq!(c["chartName"], "cert-manager/cert-manager");
    assert_eq!(c["registryCredentialsConfig"]["plainHTTP"], true);
    // Another source kind: kcm refuses it and writes no Profile.
    let t = with(
        "Bucket",
        json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "Bucket",
            "metadata": {"name": "jetstack", "namespace": "kcm-system"}, "spec": {}}),
    );
    assert!(t.profile.is_none());
    assert_eq!(t.condition.reason, REASON_HELM_CHARTS_BUILD_FAILED);
    assert!(
        t.condition
            .message
            .contains("unsupported HelmChart source kind kcm-system/jetstack"),
        "{}",
        t.condition.message
    );
}
