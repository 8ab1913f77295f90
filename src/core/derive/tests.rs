//! Tests of the derivation, against kcm's behaviour.

use super::*;
use serde_json::json;

fn smp_default() -> Value {
    json!({
        "apiVersion": "k0rdent.mirantis.com/v1beta1",
        "kind": "StateManagementProvider",
        "metadata": {"name": "ksm-projectsveltos"},
        "spec": {"selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": "kcm-controller-manager"}}}
    })
}

fn cd(services: Value) -> Value {
    json!({
        "apiVersion": "k0rdent.mirantis.com/v1beta1",
        "kind": "ClusterDeployment",
        "metadata": {"name": "dev-cluster", "namespace": "kcm-system", "uid": "cd-uid",
                     "labels": {"env": "dev", "region": "eu"}},
        "spec": {"template": "aws-standalone", "serviceSpec": {"services": services}}
    })
}

fn mcs(name: &str, service_spec: Value) -> Value {
    json!({
        "apiVersion": "k0rdent.mirantis.com/v1beta1",
        "kind": "MultiClusterService",
        "metadata": {"name": name, "uid": "mcs-uid"},
        "spec": {"clusterSelector": {"matchLabels": {"env": "dev"}}, "serviceSpec": service_spec}
    })
}

fn tpl(name: &str, ns: &str, spec: Value) -> Value {
    json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceTemplate",
           "metadata": {"name": name, "namespace": ns}, "spec": spec})
}

#[test]
fn hash_examples() {
    let hash = |name: &str| object_key(None, &json!({"metadata": {"name": name}}), "ns").1;
    assert_eq!(hash("my-mcs"), "management-6b91ac17");
    assert_eq!(hash("global-ingress"), "management-bb74fe23");
}

#[test]
fn cluster_deployment_full() {
    let c = cd(json!([
        {"name": "ingress", "namespace": "ingress-nginx", "template": "ingress-nginx-4-11-0", "version": "4.11.0"}
    ]));
    let d = from_cluster_deployment(&c, Some(&smp_default()), &[]).unwrap();
    assert_eq!(
        d.service_set,
        json!({
            "apiVersion": "k0rdent.mirantis.com/v1beta1",
            "kind": "ServiceSet",
            "metadata": {
                "name": "dev-cluster",
                "namespace": "kcm-system",
                "labels": {"ksm.k0rdent.mirantis.com/adapter": "kcm-controller-manager"},
                "ownerReferences": [{
                    "apiVersion": "k0rdent.mirantis.com/v1beta1",
                    "kind": "ClusterDeployment",
                    "name": "dev-cluster",
                    "uid": "cd-uid",
                    "controller": true,
                    "blockOwnerDeletion": true
                }]
            },
            "spec": {
                "cluster": "dev-cluster",
                "provider": {"config": {"syncMode": "Continuous", "priority": 100}, "name": "ksm-projectsveltos"},
                "services": [{"version": "4.11.0", "name": "ingress", "namespace": "ingress-nginx", "template": "ingress-nginx-4-11-0"}]
            }
        })
    );
    assert!(d.explanation.starts_with(
        "derived ServiceSet kcm-system/dev-cluster from ClusterDeployment kcm-system/dev-cluster (provider ksm-projectsveltos, labels from its selector"
    ), "{}", d.explanation);
    assert!(d.service_set["spec"].get("multiClusterService").is_none());
    assert!(
        d.service_set["spec"]["provider"]
            .get("selfManagement")
            .is_none()
    );
}

#[test]
fn cd_self_management_flag_is_ignored() {
    let mut c = cd(json!([]));
    c["spec"]["serviceSpec"]["provider"] = json!({"selfManagement": true});
    let d = from_cluster_deployment(&c, None, &[]).unwrap();
    assert!(
        d.service_set["spec"]["provider"]
            .get("selfManagement")
            .is_none()
    );
    assert!(d.service_set["spec"].get("services").is_none());
    assert!(d.service_set["metadata"].get("labels").is_none());
    assert!(
        d.explanation.contains("selector labels unknown"),
        "{}",
        d.explanation
    );
}

#[test]
fn cd_without_service_spec_gets_empty_config() {
    let c = json!({"kind": "ClusterDeployment",
        "metadata": {"name": "a", "namespace": "ns", "uid": "u"}, "spec": {"template": "t"}});
    let d = from_cluster_deployment(&c, None, &[]).unwrap();
    assert_eq!(
        d.service_set["spec"]["provider"],
        json!({"config": {}, "name": "ksm-projectsveltos"})
    );
    assert_eq!(d.service_set["spec"]["cluster"], "a");
}

#[test]
fn mcs_with_cd() {
    let m = mcs(
        "my-mcs",
        json!({"services": [{"name": "a", "template": "t-a", "version": "1.0.0"}]}),
    );
    let c = cd(json!([]));
    let d =
        from_multi_cluster_service(&m, Some(&c), Some(&smp_default()), &[], "kcm-system").unwrap();
    let ss = &d.service_set;
    assert_eq!(ss["metadata"]["name"], "dev-cluster-6b91ac17");
    assert_eq!(ss["metadata"]["namespace"], "kcm-system");
    assert_eq!(
        ss["metadata"]["ownerReferences"][0]["kind"],
        "ClusterDeployment"
    );
    assert_eq!(ss["metadata"]["ownerReferences"][0]["uid"], "cd-uid");
    assert_eq!(ss["spec"]["cluster"], "dev-cluster");
    assert_eq!(ss["spec"]["multiClusterService"], "my-mcs");
    assert!(ss["spec"]["provider"].get("selfManagement").is_none());
    assert_eq!(ss["spec"]["services"][0]["namespace"], "default");
    assert_eq!(
        object_key(Some(&c), &m, "kcm-system"),
        ("kcm-system".to_string(), "dev-cluster-6b91ac17".to_string())
    );
    assert!(
        d.explanation.contains(
            "from MultiClusterService my-mcs for ClusterDeployment kcm-system/dev-cluster"
        ),
        "{}",
        d.explanation
    );
}

#[test]
fn mcs_self_management() {
    let m = mcs(
        "global-ingress",
        json!({"provider": {"selfManagement": true}, "services": [{"name": "a", "template": "t-a", "version": "1"}]}),
    );
    let d = from_multi_cluster_service(&m, None, Some(&smp_default()), &[], "kcm-system").unwrap();
    let ss = &d.service_set;
    assert_eq!(ss["metadata"]["name"], "management-bb74fe23");
    assert_eq!(ss["metadata"]["namespace"], "kcm-system");
    assert_eq!(
        ss["metadata"]["ownerReferences"][0]["kind"],
        "MultiClusterService"
    );
    assert_eq!(
        ss["metadata"]["ownerReferences"][0]["name"],
        "global-ingress"
    );
    assert_eq!(ss["metadata"]["ownerReferences"][0]["uid"], "mcs-uid");
    assert_eq!(ss["spec"]["cluster"], "");
    assert_eq!(ss["spec"]["provider"]["selfManagement"], true);
    assert_eq!(
        object_key(None, &m, "sys"),
        ("sys".to_string(), "management-bb74fe23".to_string())
    );
}

#[test]
fn mcs_without_cd_needs_self_management() {
    let m = mcs("my-mcs", json!({"services": []}));
    let e = from_multi_cluster_service(&m, None, None, &[], "kcm-system")
        .unwrap_err()
        .to_string();
    assert!(e.contains("per matching ClusterDeployment"), "{e}");
}

#[test]
fn mcs_cluster_selector_must_match() {
    let mut m = mcs("my-mcs", json!({}));
    m["spec"]["clusterSelector"] = json!({"matchLabels": {"env": "prod"}});
    let e = from_multi_cluster_service(&m, Some(&cd(json!([]))), None, &[], "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not select"), "{e}");
    m["spec"]["clusterSelector"] = json!({});
    let e = from_multi_cluster_service(&m, Some(&cd(json!([]))), None, &[], "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("empty spec.clusterSelector"), "{e}");
    m["spec"]["clusterSelector"] = json!({"matchExpressions": [
        {"key": "region", "operator": "In", "values": ["eu", "us"]},
        {"key": "gone", "operator": "DoesNotExist"}]});
    assert!(from_multi_cluster_service(&m, Some(&cd(json!([]))), None, &[], "x").is_ok());
}

#[test]
fn provider_table() {
    let base = |provider: Value| {
        let mut c = cd(json!([]));
        c["spec"]["serviceSpec"]["provider"] = provider;
        c["spec"]["serviceSpec"]["reload"] = json!(true);
        c["spec"]["serviceSpec"]["priority"] = json!(5);
        c["spec"]["serviceSpec"]["policyRefs"] =
            json!([{"kind": "ConfigMap", "name": "p", "namespace": "ns", "optional": false}]);
        c["spec"]["serviceSpec"]["driftExclusions"] = json!([{"paths": ["/spec/x"]}]);
        from_cluster_deployment(&c, None, &[]).unwrap().service_set["spec"]["provider"].clone()
    };
    // "" / nil: default provider, config from the deprecated fields.
    assert_eq!(
        base(json!({})),
        json!({"config": {
            "syncMode": "Continuous",
            "policyRefs": [{"namespace": "ns", "name": "p", "kind": "ConfigMap", "deploymentType": "Remote", "tier": 100}],
            "driftExclusions": [{"paths": ["/spec/x"]}],
            "priority": 5, "reloader": true}, "name": "ksm-projectsveltos"})
    );
    // "" / set
    assert_eq!(
        base(json!({"config": {"a": 1}})),
        json!({"config": {"a": 1}, "name": "ksm-projectsveltos"})
    );
    // set / nil
    assert_eq!(
        base(json!({"name": "ksm-flux"})),
        json!({"name": "ksm-flux"})
    );
    // set / set
    assert_eq!(
        base(json!({"name": "ksm-flux", "config": {"b": [1]}})),
        json!({"config": {"b": [1]}, "name": "ksm-flux"})
    );
    // config: null is no config
    assert_eq!(
        base(json!({"name": "ksm-flux", "config": null})),
        json!({"name": "ksm-flux"})
    );
}

#[test]
fn provider_name_in_explanation_and_smp_mismatch() {
    let mut c = cd(json!([]));
    c["spec"]["serviceSpec"]["provider"] = json!({"name": "ksm-flux"});
    let smp = json!({"metadata": {"name": "ksm-flux"}, "spec": {"selector": {"matchLabels": {"a": "b"}}}});
    let d = from_cluster_deployment(&c, Some(&smp), &[]).unwrap();
    assert_eq!(
        d.explanation,
        "derived ServiceSet kcm-system/dev-cluster from ClusterDeployment kcm-system/dev-cluster (provider ksm-flux, labels from its selector; 0 service(s))"
    );
    assert_eq!(d.service_set["metadata"]["labels"], json!({"a": "b"}));
    let e = from_cluster_deployment(&c, Some(&smp_default()), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("ksm-flux"), "{e}");
    let no_sel = json!({"metadata": {"name": "ksm-flux"}, "spec": {}});
    let e = from_cluster_deployment(&c, Some(&no_sel), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("selector cannot be nil"), "{e}");
}

#[test]
fn version_resolution() {
    let c = cd(json!([
        {"name": "a", "template": "t-spec-version"},
        {"name": "b", "template": "t-chart-version"},
        {"name": "c", "template": "t-chart-default"},
        {"name": "d", "template": "t-kustomize"},
        {"name": "e", "template": "t-spec-version", "version": "9.9.9"}
    ]));
    let templates = vec![
        tpl(
            "t-spec-version",
            "kcm-system",
            json!({"version": "1.2.3", "helm": {"chartSpec": {"version": "0.0.1"}}}),
        ),
        tpl(
            "t-spec-version",
            "other",
            json!({"version": "wrong-namespace"}),
        ),
        tpl(
            "t-chart-version",
            "kcm-system",
            json!({"helm": {"chartSpec": {"chart": "x", "version": "4.5.6"}}}),
        ),
        tpl(
            "t-chart-default",
            "kcm-system",
            json!({"helm": {"chartSpec": {"chart": "x"}}}),
        ),
        json!({"kind": "ServiceTemplate", "metadata": {"name": "t-kustomize"}, "spec": {"kustomize": {"path": "."}}}),
    ];
    let d = from_cluster_deployment(&c, None, &templates).unwrap();
    let versions: Vec<&str> = d.service_set["spec"]["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["1.2.3", "4.5.6", "*", "t-kustomize", "9.9.9"]);
    // A missing template is an error, as the Get fails in kcm.
    let e = from_cluster_deployment(&c, None, &templates[1..])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("failed to fetch template kcm-system/t-spec-version"),
        "{e}"
    );
}

#[test]
fn services_copy_sort_and_disable() {
    let c = cd(json!([
        {"name": "z", "namespace": "b", "template": "t", "version": "1",
         "values": "x: 1", "valuesFrom": [{"kind": "ConfigMap", "name": "v"}],
         "helmAction": "Install", "templateChain": "chain", "dependsOn": [],
         "helmOptions": {"timeout": "5m", "wait": false, "labels": {},
                         "installOptions": {"createNamespace": false},
                         "upgradeOptions": {"maxHistory": 0},
                         "uninstallOptions": {"keepHistory": false}}},
        {"name": "a", "namespace": "b", "template": "t", "version": "1"},
        {"name": "m", "template": "t", "version": "1", "namespace": ""},
        {"name": "off", "template": "t", "version": "1", "disable": true}
    ]));
    let d = from_cluster_deployment(&c, None, &[]).unwrap();
    let svcs = d.service_set["spec"]["services"].as_array().unwrap();
    let keys: Vec<String> = svcs
        .iter()
        .map(|s| {
            format!(
                "{}/{}",
                s["namespace"].as_str().unwrap(),
                s["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(keys, ["b/a", "b/z", "default/m"]);
    assert_eq!(
        svcs[1],
        json!({
            "helmOptions": {
                "wait": false, "timeout": "5m0s", "labels": {},
                "uninstallOptions": {"disableHooks": false},
                "upgradeOptions": {"maxHistory": 2, "cleanupOnFail": false, "disableHooks": false,
                    "force": false, "recreate": false, "resetThenReuseValues": false,
                    "resetValues": false, "reuseValues": false, "subNotes": false,
                    "takeOwnership": false, "upgradeCRDs": false},
                "installOptions": {"createNamespace": false, "replace": true,
                    "disableHooks": false, "takeOwnership": false}
            },
            "version": "1", "helmAction": "Install", "name": "z", "namespace": "b",
            "template": "t", "values": "x: 1", "valuesFrom": [{"kind": "ConfigMap", "name": "v"}]
        })
    );
    assert!(
        d.explanation.contains("disabled, left out: default/off"),
        "{}",
        d.explanation
    );
}

#[test]
fn dependencies() {
    let c = cd(json!([
        {"name": "app", "template": "t", "version": "1", "dependsOn": [{"name": "db"}]},
        {"name": "db", "template": "t", "version": "1"},
        {"name": "x", "template": "t", "version": "1", "dependsOn": [{"name": "off"}]},
        {"name": "off", "template": "t", "version": "1", "disable": true},
        {"name": "c1", "template": "t", "version": "1", "dependsOn": [{"name": "c2"}]},
        {"name": "c2", "template": "t", "version": "1", "dependsOn": [{"name": "c1"}]}
    ]));
    let d = from_cluster_deployment(&c, None, &[]).unwrap();
    let names: Vec<&str> = d.service_set["spec"]["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["app", "db"]);
    assert!(
        d.service_set["spec"]["services"][0]
            .get("dependsOn")
            .is_none()
    );
    assert!(
        d.explanation.contains("default/c1, default/c2, default/x"),
        "{}",
        d.explanation
    );
    let bad = cd(
        json!([{"name": "app", "template": "t", "version": "1", "dependsOn": [{"name": "nope", "namespace": "x"}]}]),
    );
    let e = from_cluster_deployment(&bad, None, &[])
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "service default/app depends on x/nope which is not present in the desired services list"
    );
}

#[test]
fn selector_extraction() {
    let sel = json!({
        "matchLabels": {"a": "1"},
        "matchExpressions": [
            {"key": "b", "operator": "In", "values": ["zeta", "alpha", "mid"]},
            {"key": "c", "operator": "Exists"},
            {"key": "a", "operator": "Exists"},
            {"key": "d", "operator": "NotIn", "values": ["x"]},
            {"key": "e", "operator": "DoesNotExist"}
        ]
    });
    let l = selector_labels(&sel).unwrap();
    let want: BTreeMap<String, String> = [("a", "1"), ("b", "alpha"), ("c", "")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(l, want);
    // In overrides a matchLabels entry of the same key (Equals sorts first).
    let l = selector_labels(&json!({"matchLabels": {"k": "v"},
        "matchExpressions": [{"key": "k", "operator": "In", "values": ["w", "u"]}]}))
    .unwrap();
    assert_eq!(l["k"], "u");
    assert!(selector_labels(&json!({})).unwrap().is_empty());
}

#[test]
fn selector_errors() {
    assert_eq!(
        selector_labels(&Value::Null).unwrap_err(),
        "selector cannot be nil"
    );
    for bad in [
        json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}),
        json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
        json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
        json!({"matchLabels": {"bad key": "v"}}),
        json!({"matchLabels": {"k": "bad value!"}}),
        json!({"matchLabels": {"Upper.Prefix/k": "v"}}),
    ] {
        assert!(selector_labels(&bad).is_err(), "{bad}");
    }
    assert!(selector_labels(&json!({"matchLabels": {"example.com/k-1.x_y": "V-1"}})).is_ok());
}

#[test]
fn missing_uid_omits_owner_reference() {
    let mut c = cd(json!([]));
    c["metadata"].as_object_mut().unwrap().remove("uid");
    let d = from_cluster_deployment(&c, None, &[]).unwrap();
    assert!(d.service_set["metadata"].get("ownerReferences").is_none());
    assert!(
        d.explanation.contains(
            "no ownerReference: ClusterDeployment kcm-system/dev-cluster has no metadata.uid"
        ),
        "{}",
        d.explanation
    );
}

#[test]
fn errors() {
    let e = from_cluster_deployment(
        &json!({"kind": "MultiClusterService", "metadata": {"name": "x"}}),
        None,
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("expected a ClusterDeployment"), "{e}");
    let e = from_cluster_deployment(&json!({"metadata": {"name": "x"}}), None, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no metadata.namespace"), "{e}");
    let e = from_cluster_deployment(&cd(json!([{"name": "a"}])), None, &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("template is required"), "{e}");
    let e = from_cluster_deployment(
        &cd(json!([{"name": "a", "template": "t", "version": "1", "helmOptions": {"timeout": "5 minutes"}}])),
        None,
        &[],
    )
    .unwrap_err()
        .to_string();
    assert!(e.contains("helmOptions.timeout: time: unknown unit"), "{e}");
    let mut deleting = cd(json!([]));
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    let m = mcs("my-mcs", json!({}));
    let e = from_multi_cluster_service(&m, Some(&deleting), None, &[], "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("being deleted"), "{e}");
}
