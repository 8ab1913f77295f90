use super::*;
use crate::api::naming::{LABEL_SERVICE, LABEL_SERVICESET};
use crate::core::doctor;
use serde_json::json;

const NS: &str = "kcm-system";

fn obj(kind: &Kind, ns: &str, name: &str, rest: Value) -> Value {
    let mut o = json!({"apiVersion": kind.api_version, "kind": kind.kind,
        "metadata": {"name": name}});
    if !ns.is_empty() {
        o["metadata"]["namespace"] = json!(ns);
    }
    if let (Some(o), Some(rest)) = (o.as_object_mut(), rest.as_object()) {
        for (k, v) in rest {
            if k == "metadata" {
                for (mk, mv) in v.as_object().into_iter().flatten() {
                    o["metadata"][mk] = mv.clone();
                }
            } else {
                o.insert(k.clone(), v.clone());
            }
        }
    }
    o
}

fn set(name: &str, provider: &str, cluster: &str, extra: Value) -> Value {
    let mut spec = json!({"cluster": cluster, "provider": {"name": provider},
        "services": [{"name": "web", "namespace": "apps", "template": "web-1"},
                     {"name": "db", "namespace": "data", "template": "db-1"}]});
    for (k, v) in extra.as_object().into_iter().flatten() {
        spec[k] = v.clone();
    }
    obj(
        &kinds::SERVICE_SET,
        NS,
        name,
        json!({"spec": spec,
        "status": {"services": [{"name": "web", "namespace": "apps", "state": "Deployed",
            "lastStateTransitionTime": "2026-11-21T11:00:00Z"}]}}),
    )
}

fn templates() -> Vec<Value> {
    vec![
        obj(
            &kinds::SERVICE_TEMPLATE,
            NS,
            "web-1",
            json!({
            "spec": {"helm": {"chartSpec": {"chart": "web", "version": "1.0.0",
                "sourceRef": {"kind": "HelmRepository", "name": "charts"}}}},
            "status": {"valid": true}}),
        ),
        obj(
            &kinds::SERVICE_TEMPLATE,
            NS,
            "db-1",
            json!({
            "spec": {"kustomize": {"remoteSourceSpec": {"git": {"url": "https://git.example/db"}},
                "path": "./deploy"}},
            "status": {"valid": false, "validationError": "no source"}}),
        ),
        obj(
            &kinds::SERVICE_TEMPLATE_CHAIN,
            NS,
            "web",
            json!({"spec": {"supportedTemplates": [
            {"name": "web-1", "availableUpgrades": [{"name": "web-2"}]}, {"name": "web-2"}]}}),
        ),
    ]
}

fn run(objects: &[Value], start: Start, options: Options) -> Result<Trace, String> {
    let report = doctor::diagnose(objects, &doctor::Options::for_tests(options.now));
    trace(objects, &report, &start, &options)
}

fn options() -> Options {
    Options {
        now: "2026-11-21T12:00:00Z".parse().unwrap(),
        namespace: None,
        release: None,
        cluster: None,
    }
}

fn fact<'a>(h: &'a Hop, key: &str) -> &'a str {
    h.facts
        .0
        .iter()
        .find(|(k, _)| *k == key)
        .map_or("", |(_, v)| v.as_str())
}

fn kinds_of(t: &ServiceTrace) -> Vec<(&str, &str, bool)> {
    t.hops
        .iter()
        .map(|h| (h.kind.as_str(), h.name.as_str(), h.missing))
        .collect()
}

#[test]
fn a_flux_object_leads_by_its_labels_to_its_service_and_up_to_the_template() {
    let mut objects = templates();
    objects.push(set(
        "prod-1",
        "ksm-flux",
        "prod-1",
        json!({"multiClusterService": "web"}),
    ));
    objects.push(obj(
        &kinds::MULTI_CLUSTER_SERVICE,
        "",
        "web",
        json!({
        "spec": {"dependsOn": ["base"]},
        "status": {"matchingClusters": [{"kind": "ClusterDeployment", "namespace": NS,
            "name": "prod-1", "deployed": false, "reason": "Waiting", "message": "base first"}]}}),
    ));
    objects.push(obj(
        &kinds::CLUSTER_DEPLOYMENT,
        NS,
        "prod-1",
        json!({
        "spec": {"template": "aws-1", "credential": "aws"}}),
    ));
    // Named unlike the adapter names it: the labels decide.
    objects.push(obj(&kinds::HELM_RELEASE, NS, "renamed", json!({"metadata": {"labels": {
        LABEL_SERVICESET: "prod-1", LABEL_SERVICE: "web"}},
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "InstallSucceeded"}]}})));
    let t = run(
        &objects,
        Start::Flux {
            kind: &kinds::HELM_RELEASE,
            name: "renamed".into(),
        },
        options(),
    )
    .unwrap();
    assert_eq!(t.services.len(), 1, "only the service the labels name");
    let s = &t.services[0];
    assert_eq!(s.service, "apps/web");
    assert_eq!(
        kinds_of(s),
        [
            ("HelmRelease", "kcm-system/renamed", false),
            ("ServiceSet", "kcm-system/prod-1", false),
            ("MultiClusterService", "web", false),
            ("ClusterDeployment", "kcm-system/prod-1", false),
            ("ServiceTemplate", "kcm-system/web-1", false),
        ]
    );
    assert_eq!(fact(&s.hops[0], "ready"), "True (InstallSucceeded)");
    assert_eq!(
        fact(&s.hops[1], "state"),
        "Deployed since 2026-11-21T11:00:00Z (60m)"
    );
    assert_eq!(
        fact(&s.hops[2], "matched"),
        "not deployed (Waiting): base first"
    );
    assert_eq!(fact(&s.hops[2], "dependsOn"), "base");
    assert_eq!(fact(&s.hops[3], "template"), "aws-1");
    let tpl = &s.hops[4];
    assert_eq!(
        (fact(tpl, "type"), fact(tpl, "version"), fact(tpl, "valid")),
        ("Helm", "1.0.0", "true")
    );
    assert_eq!(
        fact(tpl, "source"),
        "chart web 1.0.0 from HelmRepository/kcm-system/charts"
    );
    assert_eq!(fact(tpl, "chain"), "web (upgrades to web-2)");
}

#[test]
fn a_release_on_a_cluster_is_found_among_every_servicesets_services() {
    let mut objects = templates();
    objects.push(set("a", "ksm-flux", "prod-1", json!({})));
    objects.push(set("b", "ksm-flux", "prod-2", json!({})));
    let mut o = options();
    o.release = Some((Some("data".into()), "db".into()));
    let t = run(&objects, Start::Everything, o.clone()).unwrap();
    let sets: Vec<&str> = t.services.iter().map(|s| s.hops[1].name.as_str()).collect();
    assert_eq!(sets, ["kcm-system/a", "kcm-system/b"]);
    // The adapter's Flux object is not there: it would be a Kustomization (the template
    // is a Kustomize one).
    assert_eq!(
        kinds_of(&t.services[0])[0],
        ("Kustomization", "kcm-system/a-db", true)
    );
    let tpl = t.services[0].hops.last().unwrap();
    assert_eq!(
        fact(tpl, "source"),
        "git https://git.example/db path ./deploy"
    );
    assert_eq!(fact(tpl, "valid"), "false: no source");
    assert_eq!(fact(tpl, "chain"), "");
    o.cluster = Some(ClusterFilter::Deployment {
        namespace: Some(NS.into()),
        name: "prod-2".into(),
    });
    let t = run(&objects, Start::Everything, o.clone()).unwrap();
    assert_eq!(t.services.len(), 1);
    assert_eq!(t.services[0].hops[1].name, "kcm-system/b");
    assert_eq!(
        t.start,
        "every ServiceSet, release data/db, on ClusterDeployment kcm-system/prod-2"
    );
    o.cluster = Some(ClusterFilter::Management);
    assert_eq!(
        run(&objects, Start::Everything, o).unwrap_err(),
        "release data/db on the management cluster: no ServiceSet deploys it"
    );
}

#[test]
fn a_cluster_summary_leads_to_its_profile_and_servicesets_of_either_kind() {
    let mut objects = templates();
    objects.push(set(
        "mgmt-set",
        "ksm-projectsveltos",
        "",
        json!({"provider": {
        "name": "ksm-projectsveltos", "selfManagement": true}}),
    ));
    objects.push(obj(
        &kinds::CLUSTER_PROFILE,
        "",
        "mgmt-set",
        json!({
        "metadata": {"ownerReferences": [{"kind": "ServiceSet", "name": "mgmt-set"}]},
        "spec": {"tier": 100}}),
    ));
    objects.push(obj(
        &kinds::CLUSTER_SUMMARY,
        "mgmt",
        "mgmt-set-sveltos-mgmt",
        json!({
        "metadata": {"labels": {"projectsveltos.io/cluster-profile-name": "mgmt-set"}},
        "spec": {"clusterNamespace": "mgmt", "clusterName": "mgmt", "clusterType": "Sveltos"},
        "status": {"helmReleaseSummaries": [{"releaseName": "web", "releaseNamespace": "apps",
            "status": "Managing"}]}}),
    ));
    let mut o = options();
    o.release = Some((None, "web".into()));
    let t = run(
        &objects,
        Start::ClusterSummary("mgmt-set-sveltos-mgmt".into()),
        o,
    )
    .unwrap();
    let s = &t.services[0];
    assert_eq!(
        kinds_of(s),
        [
            ("ClusterSummary", "mgmt/mgmt-set-sveltos-mgmt", false),
            ("ClusterProfile", "mgmt-set", false),
            ("ServiceSet", "kcm-system/mgmt-set", false),
            ("Cluster", "management", false),
            ("ServiceTemplate", "kcm-system/web-1", false),
        ]
    );
    assert_eq!(fact(&s.hops[0], "release"), "apps/web: Managing");
    assert_eq!(fact(&s.hops[0], "cluster"), "Sveltos mgmt/mgmt");
    assert_eq!(fact(&s.hops[1], "tier"), "100 (priority 2147483547)");
    // Both services from the Profile itself.
    let t = run(
        &objects,
        Start::Profile {
            cluster_scoped: true,
            name: "mgmt-set".into(),
        },
        options(),
    )
    .unwrap();
    assert_eq!(t.services.len(), 2);
}

#[test]
fn what_cannot_be_traced_says_why() {
    let mut objects = templates();
    objects.push(set("a", "ksm-flux", "prod-1", json!({})));
    objects.push(obj(&kinds::KUSTOMIZATION, NS, "hand-made", json!({})));
    let err = |start| run(&objects, start, options()).unwrap_err();
    assert_eq!(
        err(Start::Flux {
            kind: &kinds::KUSTOMIZATION,
            name: "hand-made".into()
        }),
        "Kustomization/kcm-system/hand-made was not written by the Flux adapter: it has no ksm.k0rdent.mirantis.com/serviceset and ksm.k0rdent.mirantis.com/service labels"
    );
    assert_eq!(
        err(Start::Flux {
            kind: &kinds::HELM_RELEASE,
            name: "x".into()
        }),
        "HelmRelease \"x\" not found"
    );
    assert!(
        err(Start::Profile {
            cluster_scoped: false,
            name: "x".into()
        })
        .contains("no ServiceSet \"x\" wrote it")
    );
    assert_eq!(
        err(Start::ClusterSummary("x".into())),
        "ClusterSummary \"x\" not found"
    );
    let mut o = options();
    o.namespace = Some("other".into());
    assert_eq!(
        run(&objects, Start::ServiceSet("a".into()), o).unwrap_err(),
        "ServiceSet \"a\" not found in namespace other"
    );
}
