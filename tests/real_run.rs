//! `kubectl ksm run` on a real kube-apiserver, deployed as deploy/ says (`kubectl apply -k
//! deploy/`) and running as its ServiceAccount (tests/realrun): the whole lifecycle of a
//! ServiceSet (create, Flux status, update, a service removed, field ownership as the server
//! computes it, priority hand-over, deletion behind the finalizer, the SMP gone), then the
//! proof, from the server's audit log, that deploy/'s RBAC is enough and that each verb it
//! grants is there for a reason this test names. Once more with the adapter installed by
//! `helm install` of charts/kubectl-ksm instead.

mod realapi;
mod realrun;

use std::collections::{BTreeMap, BTreeSet};

use kubectl_ksm::api::kinds::{self, HELM_RELEASE, KUSTOMIZATION, SERVICE_SET};
use realrun::*;
use serde_json::{Value, json};

/// The field manager the adapter applies as (src/api/naming.rs).
const MANAGER: &str = "kubectl-ksm";
const FINALIZER: &str = "k0rdent.mirantis.com/service-set";
const CERT_MANAGER: &str = "dev-cluster-cert-manager";
const RIVAL: &str = "mcs-dev";

#[test]
fn the_whole_lifecycle_as_deployed_by_kubectl_apply_k_under_the_service_accounts_rbac() {
    let Some(c) = Cluster::start("lifecycle", &[]) else {
        return;
    };
    let deployment = c
        .apply_kustomization("deploy/")
        .into_iter()
        .find(|d| s(d, "/metadata/name") == NAME)
        .expect("deploy/ has the adapter's Deployment");
    lifecycle(&c, &deployment);
}

/// The same, the adapter installed by `helm install` of charts/kubectl-ksm (generated from
/// deploy/base/), which `helm uninstall` then removes.
#[test]
fn the_whole_lifecycle_as_installed_by_the_helm_chart_under_the_service_accounts_rbac() {
    let Some(helm) = realapi::helm() else {
        return;
    };
    let Some(c) = Cluster::start("lifecycle-helm", &[]) else {
        return;
    };
    let deployment = c.install_chart(&helm);
    assert_eq!(
        deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "Helm"
    );
    lifecycle(&c, &deployment);
    helm.run(
        Some(c.api.admin()),
        &["uninstall", NAME, "--namespace", NS, "--wait"],
    );
    assert!(c.kube.get(&kinds::DEPLOYMENT, NS, NAME).is_none());
    assert!(c.api.get("clusterrole", None, NAME).is_none());
    assert!(
        c.api
            .get("role", Some(NS), "kubectl-ksm-leader-election")
            .is_none()
    );
}

/// The whole lifecycle with the adapter run as `deployment` (as the server stored it) says,
/// then the RBAC proof.
fn lifecycle(c: &Cluster, deployment: &Value) {
    c.seed();
    let sa = c.service_account();
    // Resyncs every 2 s: the steady states below span some.
    let mut a = c.adapter(deployment, "0", &sa, &["--resync", "2s"]);

    created(c, &a);
    flux_status_gives_the_states(c, &a);
    updated_and_a_service_removed(c, &a);
    field_ownership_as_the_server_computes_it(c, &a);
    priority_hand_over(c, &a);
    deleted_behind_the_finalizer(c, &a);
    provider_gone(c, &a);

    c.wait_answered(&a);
    assert_eq!(a.stop(), Some(0), "{}", a.log_text());
    rbac_is_enough_and_every_verb_is_used(c, &sa);
}

/// The first reconcile: five objects applied, the finalizer and the status written, through
/// the ServiceSet's status subresource, each write once; nothing more over resyncs.
fn created(c: &Cluster, a: &Adapter) {
    c.converged(SET, 5, a);
    c.assert_matches_render(SET);
    let set = c.set(SET).unwrap();
    assert_eq!(set["metadata"]["finalizers"], json!([FINALIZER]));
    assert_eq!(set["status"]["provider"], json!({"ready": true}));
    assert_eq!(set["status"]["deployed"], false);
    assert_eq!(
        set["status"]["conditions"][0]["type"],
        "ServicesInReadyState"
    );
    assert_eq!(set["status"]["conditions"][0]["message"], "0/5");

    // Field ownership as the server recorded it: the Flux objects applied by kubectl-ksm
    // alone; on the ServiceSet, kubectl-ksm owns the finalizer (a patch of the object) and the
    // status (a patch of the status subresource), nothing else.
    for o in c.flux_of(SET) {
        assert_eq!(
            managers(&o),
            [(MANAGER.to_string(), "Apply".to_string(), String::new())],
            "{}",
            name_of(&o)
        );
    }
    let entries = managed_fields(&set, MANAGER);
    assert_eq!(entries.len(), 2, "{:#}", set["metadata"]["managedFields"]);
    let main = entries
        .iter()
        .find(|e| s(e, "/subresource").is_empty())
        .unwrap();
    assert_eq!(main["operation"], "Update");
    assert_eq!(
        main["fieldsV1"],
        json!({"f:metadata": {"f:finalizers": {".": {}, format!("v:\"{FINALIZER}\""): {}}}})
    );
    let status = entries
        .iter()
        .find(|e| s(e, "/subresource") == "status")
        .unwrap();
    assert_eq!(status["operation"], "Update");
    assert!(status["fieldsV1"]["f:status"].is_object());

    // The minimum: one finalizer patch, five applies (each creating its object), one status
    // patch. Two reconciles more (the events of its own writes, then a resync) saw it all and
    // wrote nothing.
    let seen = a.reconciled_versions(SET).len();
    c.wait("two more reconciles", a, Delays::default(), || {
        a.reconciled_versions(SET).len() >= seen + 2
    });
    c.wait_answered(a);
    let mut writes = c.writes_of(a);
    writes.sort();
    assert_eq!(
        writes,
        [
            "patch helmreleases kcm-system/dev-cluster-cert-manager 201",
            "patch helmreleases kcm-system/dev-cluster-podinfo-git 201",
            "patch helmreleases kcm-system/dev-cluster-podinfo-oci 201",
            "patch kustomizations kcm-system/dev-cluster-baseline-policies 201",
            "patch kustomizations kcm-system/dev-cluster-podinfo 201",
            "patch servicesets kcm-system/dev-cluster 200",
            "patch servicesets/status kcm-system/dev-cluster 200",
        ],
        "{}",
        a.log_text()
    );
    assert_steady(c, a, SET);

    // The probes and the metrics of the Deployment's port.
    assert_eq!(a.get("/healthz").0, 200);
    assert_eq!(a.get("/readyz").0, 200);
    let (code, metrics) = a.get("/metrics");
    assert_eq!(code, 200);
    assert!(
        metrics.contains("kubectl_ksm_writes_total{verb=\"apply\"} 5"),
        "{metrics}"
    );
}

/// Over two more reconciles of `set` (resyncs), the adapter writes nothing and the ServiceSet
/// does not change.
fn assert_steady(c: &Cluster, a: &Adapter, set: &str) {
    c.wait_answered(a);
    let before = c.writes_of(a).len();
    let rv = rv_of(&c.set(set).unwrap());
    let seen = a.reconciled_versions(set).len();
    c.wait("two resyncs", a, Delays::default(), || {
        a.reconciled_versions(set).len() >= seen + 2
    });
    c.wait_answered(a);
    let writes = c.writes_of(a);
    assert_eq!(
        writes[before..],
        [] as [String; 0],
        "writes at steady state\n{}",
        a.log_text()
    );
    assert_eq!(
        rv_of(&c.set(set).unwrap()),
        rv,
        "the ServiceSet did not change"
    );
}

/// `(manager, operation, subresource)` of every managedFields entry.
fn managers(o: &Value) -> Vec<(String, String, String)> {
    o["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                s(m, "/manager").to_string(),
                s(m, "/operation").to_string(),
                s(m, "/subresource").to_string(),
            )
        })
        .collect()
}

fn managed_fields(o: &Value, manager: &str) -> Vec<Value> {
    o["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| s(m, "/manager") == manager)
        .cloned()
        .collect()
}

/// Whether `manager` owns the field at `path` (f: segments) by operation `op`.
fn owns(o: &Value, manager: &str, op: &str, path: &[&str]) -> bool {
    managed_fields(o, manager)
        .iter()
        .filter(|e| s(e, "/operation") == op)
        .any(|e| {
            let mut at = &e["fieldsV1"];
            for p in path {
                at = &at[format!("f:{p}")];
            }
            !at.is_null()
        })
}

/// Flux status written as helm- and kustomize-controller would: the service states follow,
/// and a HelmRelease waiting on a failing source makes the adapter read the source.
fn flux_status_gives_the_states(c: &Cluster, a: &Adapter) {
    let state = |svc: &str, want: &str| {
        c.wait(&format!("{svc} {want}"), a, Delays::default(), || {
            c.state(SET, svc).is_some_and(|x| s(&x, "/state") == want)
        });
        c.state(SET, svc).unwrap()
    };
    c.flux_status(
        &HELM_RELEASE,
        CERT_MANAGER,
        ("True", "InstallSucceeded", "Helm install succeeded"),
        false,
    );
    let deployed = state("cert-manager", "Deployed");
    assert_eq!(deployed["version"], "v1.18.2");
    assert_eq!(deployed["type"], "Helm");

    c.flux_status(
        &KUSTOMIZATION,
        "dev-cluster-podinfo",
        ("False", "HealthCheckFailed", "health check failed after 5m"),
        false,
    );
    let failed = state("podinfo", "Failed");
    assert_eq!(failed["type"], "Kustomize");

    // Waiting on their sources, the adapter reads them (get): the OCIRepository of a
    // chartRef, the GitRepository of a Kustomization (neither exists: Failed, source missing).
    for (kind, name, svc) in [
        (&HELM_RELEASE, "dev-cluster-podinfo-oci", "podinfo-oci"),
        (&KUSTOMIZATION, "dev-cluster-podinfo", "podinfo"),
    ] {
        c.flux_status(
            kind,
            name,
            ("False", "ArtifactFailed", "the source is not ready"),
            false,
        );
        c.wait(
            &format!("{svc}: its source missing"),
            a,
            Delays::default(),
            || {
                c.state(SET, svc).is_some_and(|x| {
                    s(&x, "/state") == "Failed"
                        && s(&x, "/failureMessage").contains("the source does not exist")
                })
            },
        );
    }
    c.wait_answered(a);
    for source in ["ocirepositories", "gitrepositories"] {
        assert!(
            c.requests_of(a)
                .iter()
                .any(|r| r.verb == "get" && r.resource == source && r.code == Some(404)),
            "{source} read"
        );
    }

    // The chart's source fails: the adapter reads the HelmChart (get) and says why.
    let chart = json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart",
        "metadata": {"name": "cert-manager-1-18-2", "namespace": NS},
        "spec": {"chart": "cert-manager", "interval": "10m",
            "sourceRef": {"kind": "HelmRepository", "name": "k0rdent-catalog"}}});
    c.kube.apply(&kinds::HELM_CHART, &chart, "manager");
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    c.kube.merge_status(
        &kinds::HELM_CHART,
        NS,
        "cert-manager-1-18-2",
        &json!({"observedGeneration": 1, "conditions": [
            {"type": "Ready", "status": "False", "reason": "ChartPullError",
             "message": "chart pull error: 404 Not Found", "lastTransitionTime": now},
            {"type": "Stalled", "status": "True", "reason": "ChartPullError",
             "message": "chart pull error: 404 Not Found", "lastTransitionTime": now}]}),
        "source-controller",
    );
    c.flux_status(
        &HELM_RELEASE,
        CERT_MANAGER,
        (
            "False",
            "ArtifactFailed",
            "HelmChart 'kcm-system/cert-manager-1-18-2' is not ready",
        ),
        false,
    );
    let failed = state("cert-manager", "Failed");
    assert!(
        s(&failed, "/failureMessage").contains("404 Not Found"),
        "{failed:#}"
    );
    // Ready again, for what follows.
    c.flux_status(
        &HELM_RELEASE,
        CERT_MANAGER,
        ("True", "UpgradeSucceeded", "Helm upgrade succeeded"),
        false,
    );
    state("cert-manager", "Deployed");
}

/// A template points at a new chart, values change and lose a key, a service leaves the
/// spec: the objects follow, the dropped key and the removed service's object go.
fn updated_and_a_service_removed(c: &Cluster, a: &Adapter) {
    let hr = || c.kube.get(&HELM_RELEASE, NS, CERT_MANAGER).unwrap();
    c.kube.merge_status(
        &kinds::SERVICE_TEMPLATE,
        NS,
        "cert-manager-1-18-2",
        &json!({"chartRef": {"name": "cert-manager-1-18-3"}}),
        "manager",
    );
    c.wait("the new chartRef", a, Delays::default(), || {
        hr()["spec"]["chartRef"]["name"] == "cert-manager-1-18-3"
    });

    let values = |v: &str| {
        let mut set = c.set(SET).unwrap();
        set["spec"]["services"][0]["values"] = v.into();
        c.kube.merge(
            &SERVICE_SET,
            NS,
            SET,
            &json!({"spec": {"services": set["spec"]["services"]}}),
            "manager",
        )
    };
    values("replicaCount: 2\nextra: {a: 1}\n");
    c.wait("values applied", a, Delays::default(), || {
        hr()["spec"]["values"]["extra"]["a"] == 1
    });
    // The server removes what the adapter's apply no longer sets, as it owned it.
    let written = values("replicaCount: 2\n");
    c.wait_reconciled(a, SET, rv_of(&written));
    let live = hr();
    assert_eq!(
        live["spec"]["values"],
        json!({"replicaCount": 2}),
        "{live:#}"
    );

    let mut set = c.set(SET).unwrap();
    set["spec"]["services"]
        .as_array_mut()
        .unwrap()
        .retain(|x| s(x, "/name") != "podinfo");
    c.kube.merge(
        &SERVICE_SET,
        NS,
        SET,
        &json!({"spec": {"services": set["spec"]["services"]}}),
        "manager",
    );
    c.wait("podinfo pruned", a, Delays::default(), || {
        c.kube
            .get(&KUSTOMIZATION, NS, "dev-cluster-podinfo")
            .is_none()
            && c.state(SET, "podinfo").is_none()
    });
    c.assert_matches_render(SET);
    assert_steady(c, a, SET);
}

/// Another field manager on the adapter's objects, as the real server computes ownership: a
/// field the adapter does not set stays and costs no write; a field the adapter owns cannot
/// be taken by a plain apply (the server's conflict names kubectl-ksm); taken by a forced
/// apply or by an update, it is applied back once, and kubectl-ksm owns it again.
fn field_ownership_as_the_server_computes_it(c: &Cluster, a: &Adapter) {
    let hr = || c.kube.get(&HELM_RELEASE, NS, CERT_MANAGER).unwrap();
    let rendered_interval = hr()["spec"]["interval"].clone();
    assert!(owns(&hr(), MANAGER, "Apply", &["spec", "interval"]));

    // Fields the adapter does not set, by another manager (an update, as `kubectl edit`
    // makes): they stay, and the adapter writes nothing for them.
    assert!(hr()["spec"].get("maxHistory").is_none());
    c.wait_answered(a);
    let before = c.writes_of(a).len();
    c.kube.merge(
        &HELM_RELEASE,
        NS,
        CERT_MANAGER,
        &json!({"metadata": {"annotations": {"team": "platform"}}, "spec": {"maxHistory": 3}}),
        "kubectl-edit",
    );
    // A new generation, which helm-controller reconciles; then nothing moves.
    helm_controller_caught_up(c, a);
    assert_steady(c, a, SET);
    assert_eq!(
        hr_writes(c, a, before),
        [] as [String; 0],
        "{}",
        a.log_text()
    );
    let live = hr();
    assert_eq!(live["spec"]["maxHistory"], 3);
    assert_eq!(live["metadata"]["annotations"]["team"], "platform");
    assert!(owns(
        &live,
        "kubectl-edit",
        "Update",
        &["spec", "maxHistory"]
    ));

    // A plain apply of a field the adapter owns: the server refuses it, naming the owner.
    let other = json!({"apiVersion": HELM_RELEASE.api_version, "kind": "HelmRelease",
        "metadata": {"name": CERT_MANAGER, "namespace": NS},
        "spec": {"interval": "42m"}});
    let refused = c
        .kube
        .try_apply(&HELM_RELEASE, &other, "platform-team", false)
        .expect_err("a conflict");
    let kube::Error::Api(status) = refused else {
        panic!("{refused}")
    };
    assert_eq!(status.code, 409, "{status:?}");
    assert!(
        status.message.contains("conflict with \"kubectl-ksm\"")
            && status.message.contains(".spec.interval"),
        "{}",
        status.message
    );

    // Forced, it takes the field; the adapter applies it back, once.
    let before = c.writes_of(a).len();
    c.kube
        .try_apply(&HELM_RELEASE, &other, "platform-team", true)
        .unwrap();
    c.wait("the interval applied back", a, Delays::default(), || {
        let live = hr();
        live["spec"]["interval"] == rendered_interval
            && owns(&live, MANAGER, "Apply", &["spec", "interval"])
    });
    let live = hr();
    assert!(!owns(
        &live,
        "platform-team",
        "Apply",
        &["spec", "interval"]
    ));
    c.wait_answered(a);
    assert_eq!(
        hr_writes(c, a, before),
        [format!("patch helmreleases {NS}/{CERT_MANAGER} 200")]
    );

    // An update of the same field moves its ownership to the updater: applied back, once.
    let before = c.writes_of(a).len();
    c.kube.merge(
        &HELM_RELEASE,
        NS,
        CERT_MANAGER,
        &json!({"spec": {"interval": "13m"}}),
        "kubectl-edit",
    );
    c.wait(
        "the interval applied back again",
        a,
        Delays::default(),
        || {
            let live = hr();
            live["spec"]["interval"] == rendered_interval
                && owns(&live, MANAGER, "Apply", &["spec", "interval"])
        },
    );
    c.wait_answered(a);
    assert_eq!(
        hr_writes(c, a, before),
        [format!("patch helmreleases {NS}/{CERT_MANAGER} 200")]
    );
    // The other manager's own fields are still there.
    assert_eq!(hr()["spec"]["maxHistory"], 3);
    helm_controller_caught_up(c, a);
    assert_steady(c, a, SET);
}

/// helm-controller reconciles cert-manager's HelmRelease at its generation (Ready), and the
/// adapter says Deployed: every new generation's state change is written.
fn helm_controller_caught_up(c: &Cluster, a: &Adapter) {
    c.flux_status(
        &HELM_RELEASE,
        CERT_MANAGER,
        ("True", "UpgradeSucceeded", "Helm upgrade succeeded"),
        false,
    );
    let generation =
        c.kube.get(&HELM_RELEASE, NS, CERT_MANAGER).unwrap()["metadata"]["generation"].clone();
    c.wait(
        "cert-manager Deployed at its generation",
        a,
        Delays::default(),
        || {
            c.state(SET, "cert-manager")
                .is_some_and(|x| s(&x, "/state") == "Deployed")
                && c.kube.get(&HELM_RELEASE, NS, CERT_MANAGER).unwrap()["metadata"]["generation"]
                    == generation
        },
    );
    // The reconcile that wrote it is done: the next one sees its own status.
    c.wait_reconciled(a, SET, rv_of(&c.set(SET).unwrap()));
}

/// The adapter's writes to the HelmRelease of cert-manager since its `before`-th write (a new
/// generation of it may change the service's state too: status writes are not counted).
fn hr_writes(c: &Cluster, a: &Adapter, before: usize) -> Vec<String> {
    c.writes_of(a)[before..]
        .iter()
        .filter(|w| w.contains(CERT_MANAGER))
        .cloned()
        .collect()
}

/// A MultiClusterService's ServiceSet with a higher priority deploys the same releases: it
/// owns them, the first hands them over (suspended, then deleted: never uninstalled); when it
/// goes, it hands them back.
fn priority_hand_over(c: &Cluster, a: &Adapter) {
    let (mut rival, _) = realrun::fixture();
    rival["metadata"]["name"] = RIVAL.into();
    rival["spec"]["provider"]["config"] = json!({"priority": 500});
    rival["spec"]["services"] = c.set(SET).unwrap()["spec"]["services"].clone();
    let n = rival["spec"]["services"].as_array().unwrap().len();
    let before = c.requests_of(a).len();
    c.kube.apply(&SERVICE_SET, &rival, "manager");
    c.wait(
        "the rival owns the releases and the first handed them over",
        a,
        Delays::default(),
        || c.flux_of(RIVAL).len() == n && c.flux_of(SET).is_empty(),
    );
    c.wait(
        "the first says who owns its releases",
        a,
        Delays::default(),
        || {
            let st = c.states(SET);
            st.len() == n
                && st.iter().all(|x| {
                    s(x, "/state") == "Failed"
                        && s(x, "/failureMessage").contains(&format!("ServiceSet {NS}/{RIVAL}"))
                        && s(x, "/failureMessage")
                            .contains("its priority 500 against this one's 100")
                })
        },
    );
    c.wait_answered(a);
    assert_eq!(hand_overs(&c.requests_of(a)[before..], SET), n);

    let before = c.requests_of(a).len();
    c.kube.delete(&SERVICE_SET, NS, RIVAL);
    c.wait(
        "the rival gone, its releases handed back",
        a,
        Delays::default(),
        || c.set(RIVAL).is_none() && c.flux_of(SET).len() == n && c.flux_of(RIVAL).is_empty(),
    );
    c.wait(
        "no service of the first is Failed any more",
        a,
        Delays::default(),
        || {
            let st = c.states(SET);
            st.len() == n && st.iter().all(|x| s(x, "/state") != "Failed")
        },
    );
    c.wait_answered(a);
    assert_eq!(hand_overs(&c.requests_of(a)[before..], RIVAL), n);
    c.assert_matches_render(SET);
}

/// How many of `set`'s Flux objects the requests deleted, asserting that each was suspended
/// (a successful merge patch) before its deletion.
fn hand_overs(requests: &[Request], set: &str) -> usize {
    let prefix = format!("{set}-");
    let mut deleted = 0;
    for (i, r) in requests.iter().enumerate() {
        if r.verb != "delete"
            || !matches!(r.resource.as_str(), "helmreleases" | "kustomizations")
            || !r.name.starts_with(&prefix)
        {
            continue;
        }
        assert_eq!(r.code, Some(200), "{}", r.describe());
        let suspended = requests[..i]
            .iter()
            .any(|p| p.verb == "patch" && p.name == r.name && p.code == Some(200));
        assert!(
            suspended,
            "{} deleted without being suspended first",
            r.name
        );
        deleted += 1;
    }
    deleted
}

/// The ServiceSet deleted: kcm's finalizer holds it while the adapter says Deleting (status
/// first), deletes its objects, then releases the finalizer, and the server removes it. An
/// Event says so.
fn deleted_behind_the_finalizer(c: &Cluster, a: &Adapter) {
    let before = c.requests_of(a).len();
    let uid = s(&c.set(SET).unwrap(), "/metadata/uid").to_string();
    c.kube.delete(&SERVICE_SET, NS, SET);
    c.wait("the ServiceSet gone", a, Delays::default(), || {
        c.set(SET).is_none()
    });
    assert!(c.flux_of(SET).is_empty(), "{:#?}", c.flux_of(SET));
    c.wait("the removal logged", a, Delays::default(), || {
        a.logged("finalizer removed")
    });
    c.wait_answered(a);
    let reqs = &c.requests_of(a)[before..];
    let status_at = reqs
        .iter()
        .rposition(|r| r.resource_path() == "servicesets/status" && r.code == Some(200))
        .expect("Deleting written");
    let first_delete = reqs.iter().position(|r| r.verb == "delete").unwrap();
    assert!(
        status_at < first_delete,
        "Deleting is written before deleting"
    );
    let finalizer = reqs
        .iter()
        .rposition(|r| r.resource_path() == "servicesets" && r.verb == "patch")
        .unwrap();
    assert!(first_delete < finalizer, "the finalizer goes last");
    assert_eq!(event_reasons(c, &uid), ["Deleted"]);
}

/// The reasons of the events.k8s.io Events about the object of this uid.
fn event_reasons(c: &Cluster, uid: &str) -> Vec<String> {
    let events: Value = serde_json::from_str(&c.api.kubectl(&[
        "get",
        "events.events.k8s.io",
        "-n",
        NS,
        "-o",
        "json",
    ]))
    .unwrap();
    events["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| s(e, "/regarding/uid") == uid)
        .map(|e| {
            assert_eq!(e["reportingController"], "kubectl-ksm");
            s(e, "/reason").to_string()
        })
        .collect()
}

/// The SMP deleted: the adapter stops writing to the ServiceSets it served, and one deleted
/// afterwards still goes (its objects removed, the finalizer released: it would stay forever
/// otherwise), with an Event that says the provider is gone.
fn provider_gone(c: &Cluster, a: &Adapter) {
    const GONE: &str = "gone-cluster";
    let set = another_set(GONE, GONE);
    c.kube.apply(&SERVICE_SET, &set, "manager");
    c.converged(GONE, 5, a);
    c.kube
        .delete(&kinds::STATE_MANAGEMENT_PROVIDER, "", PROVIDER);
    // Not served any more: a change is not acted on.
    c.wait_answered(a);
    let before = c.writes_of(a).len();
    let mut changed = c.set(GONE).unwrap();
    changed["spec"]["services"].as_array_mut().unwrap().pop();
    let written = c.kube.merge(
        &SERVICE_SET,
        NS,
        GONE,
        &json!({"spec": {"services": changed["spec"]["services"]}}),
        "manager",
    );
    c.wait_reconciled(a, GONE, rv_of(&written));
    c.wait_answered(a);
    assert_eq!(c.writes_of(a)[before..], [] as [String; 0]);
    assert_eq!(c.flux_of(GONE).len(), 5);

    let uid = s(&written, "/metadata/uid").to_string();
    c.kube.delete(&SERVICE_SET, NS, GONE);
    c.wait("the ServiceSet gone", a, Delays::default(), || {
        c.set(GONE).is_none()
    });
    assert!(c.flux_of(GONE).is_empty(), "{:#?}", c.flux_of(GONE));
    c.wait("the event", a, Delays::default(), || {
        event_reasons(c, &uid) == ["ProviderGone"]
    });
}

/// Why the adapter holds each verb of deploy/'s ClusterRole and leader-election Role, and how
/// the lifecycle above shows it used.
#[derive(Debug, Clone, Copy)]
enum Need {
    /// The adapter sends requests with this verb: the audit log has them, authorized.
    Request,
    /// A server-side apply that creates its object is authorized as `create` as well: the
    /// adapter's first apply of each object (answered 201 Created).
    CreateByApply,
    /// OwnerReferencesPermissionEnforcement: setting blockOwnerDeletion on an owner reference
    /// (every rendered object's, to its ServiceSet) needs `update` on the owner's finalizers.
    OwnerFinalizers,
    /// Not exercised on the real server; the reason.
    Justified(&'static str),
}

/// Every (group, resource, verb) that deploy/ grants the adapter, with its need.
const GRANTS: &[(&str, &str, &str, Need)] = &[
    // The ServiceSets: the watch cache, and the finalizer as a merge patch.
    ("k0rdent.mirantis.com", "servicesets", "list", Need::Request),
    (
        "k0rdent.mirantis.com",
        "servicesets",
        "watch",
        Need::Request,
    ),
    (
        "k0rdent.mirantis.com",
        "servicesets",
        "patch",
        Need::Request,
    ),
    (
        "k0rdent.mirantis.com",
        "servicesets",
        "get",
        Need::Justified(
            "after a conflict on its own write the adapter reads the ServiceSet fresh \
             (controller/apply.rs conflict_refresh); a real server gives a conflict only to a \
             cache that lags behind, which no test can time: tests/run_faults.rs injects them",
        ),
    ),
    // The service states, through the status subresource.
    (
        "k0rdent.mirantis.com",
        "servicesets/status",
        "patch",
        Need::Request,
    ),
    (
        "k0rdent.mirantis.com",
        "servicesets/finalizers",
        "update",
        Need::OwnerFinalizers,
    ),
    // Templates and the provider's SMP: the watch caches.
    (
        "k0rdent.mirantis.com",
        "servicetemplates",
        "list",
        Need::Request,
    ),
    (
        "k0rdent.mirantis.com",
        "servicetemplates",
        "watch",
        Need::Request,
    ),
    (
        "k0rdent.mirantis.com",
        "statemanagementproviders",
        "list",
        Need::Request,
    ),
    (
        "k0rdent.mirantis.com",
        "statemanagementproviders",
        "watch",
        Need::Request,
    ),
    // The Flux objects: watch caches, server-side applies (and merge patches to suspend),
    // deletions, and the list that confirms none is left before the finalizer goes.
    (
        "helm.toolkit.fluxcd.io",
        "helmreleases",
        "list",
        Need::Request,
    ),
    (
        "helm.toolkit.fluxcd.io",
        "helmreleases",
        "watch",
        Need::Request,
    ),
    (
        "helm.toolkit.fluxcd.io",
        "helmreleases",
        "patch",
        Need::Request,
    ),
    (
        "helm.toolkit.fluxcd.io",
        "helmreleases",
        "create",
        Need::CreateByApply,
    ),
    (
        "helm.toolkit.fluxcd.io",
        "helmreleases",
        "delete",
        Need::Request,
    ),
    (
        "kustomize.toolkit.fluxcd.io",
        "kustomizations",
        "list",
        Need::Request,
    ),
    (
        "kustomize.toolkit.fluxcd.io",
        "kustomizations",
        "watch",
        Need::Request,
    ),
    (
        "kustomize.toolkit.fluxcd.io",
        "kustomizations",
        "patch",
        Need::Request,
    ),
    (
        "kustomize.toolkit.fluxcd.io",
        "kustomizations",
        "create",
        Need::CreateByApply,
    ),
    (
        "kustomize.toolkit.fluxcd.io",
        "kustomizations",
        "delete",
        Need::Request,
    ),
    // A source is read when its Flux object waits on it; the lifecycle makes each of
    // cert-manager (HelmChart), podinfo-oci (OCIRepository) and podinfo (GitRepository) wait.
    (
        "source.toolkit.fluxcd.io",
        "helmcharts",
        "get",
        Need::Request,
    ),
    (
        "source.toolkit.fluxcd.io",
        "ocirepositories",
        "get",
        Need::Request,
    ),
    (
        "source.toolkit.fluxcd.io",
        "gitrepositories",
        "get",
        Need::Request,
    ),
    (
        "source.toolkit.fluxcd.io",
        "buckets",
        "get",
        Need::Justified(
            "a Kustomization of a template whose source is a Bucket waits on it: the same rule \
             and the same code path (controller/gather.rs sources) as the kinds above",
        ),
    ),
    // The Event of a completed deletion (one per ServiceSet: never a repeat to patch).
    ("events.k8s.io", "events", "create", Need::Request),
    // Leader election (the leader-election Role): read, take, renew and release the Lease.
    ("coordination.k8s.io", "leases", "get", Need::Request),
    ("coordination.k8s.io", "leases", "create", Need::Request),
    ("coordination.k8s.io", "leases", "update", Need::Request),
];

/// deploy/'s roles as the server stored them: (group, resource, verb).
fn granted(c: &Cluster) -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    for (kind, ns, name) in [
        ("clusterrole", None, NAME),
        ("role", Some(NS), "kubectl-ksm-leader-election"),
    ] {
        let role = c.api.get(kind, ns, name).expect("deploy/'s role");
        for rule in role["rules"].as_array().unwrap() {
            for g in rule["apiGroups"].as_array().unwrap() {
                for r in rule["resources"].as_array().unwrap() {
                    for v in rule["verbs"].as_array().unwrap() {
                        out.insert((
                            g.as_str().unwrap().to_string(),
                            r.as_str().unwrap().to_string(),
                            v.as_str().unwrap().to_string(),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// The whole lifecycle ran as the ServiceAccount with no request refused: deploy/'s RBAC is
/// enough. Every verb it grants is in the table above, and the table's reason holds: the
/// requests are in the audit log, and a derived verb is shown needed by the server refusing
/// the same write to a user who has every other permission.
fn rbac_is_enough_and_every_verb_is_used(c: &Cluster, sa: &realapi::User) {
    let reqs: Vec<Request> = requests(&c.api)
        .into_iter()
        .filter(|r| r.user == sa.name)
        .collect();
    let refused: Vec<String> = reqs
        .iter()
        .filter(|r| r.code == Some(403))
        .map(Request::describe)
        .collect();
    assert!(refused.is_empty(), "refused: {refused:#?}");

    let table: BTreeSet<(String, String, String)> = GRANTS
        .iter()
        .map(|(g, r, v, _)| (g.to_string(), r.to_string(), v.to_string()))
        .collect();
    assert_eq!(
        granted(c),
        table,
        "deploy/'s roles against the table of needs"
    );

    let mut used: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    // Authorized: answered with anything but 403 (a source that does not exist is a 404).
    for r in reqs.iter().filter(|r| r.code.is_some_and(|c| c != 403)) {
        *used
            .entry((r.group.clone(), r.resource_path(), r.verb.clone()))
            .or_default() += 1;
    }
    for (g, r, v, need) in GRANTS {
        let key = (g.to_string(), r.to_string(), v.to_string());
        match need {
            Need::Request => assert!(
                used.contains_key(&key),
                "{v} {r}.{g} is granted for requests the adapter sends, and it sent none: {used:#?}"
            ),
            Need::CreateByApply => {
                let applied = (g.to_string(), r.to_string(), "patch".to_string());
                let created = reqs.iter().any(|q| {
                    q.group == *g && q.resource == *r && q.verb == "patch" && q.code == Some(201)
                });
                assert!(
                    created && used.contains_key(&applied),
                    "{r}: no apply created one"
                );
            }
            Need::OwnerFinalizers => {}
            Need::Justified(why) => assert!(!why.is_empty()),
        }
    }
    derived_verbs_are_needed(c);
}

/// A user with every permission of deploy/'s ClusterRole applies an object as the adapter
/// does (a new one, with its controller reference to a ServiceSet): accepted. Without
/// `create` on its kind, or without `update` on servicesets/finalizers, the server refuses
/// the same apply, saying why.
fn derived_verbs_are_needed(c: &Cluster) {
    let owner = another_set("rbac-owner", "rbac-owner");
    let owner = c.kube.apply(&SERVICE_SET, &owner, "manager");
    let object = |name: &str| {
        json!({"apiVersion": HELM_RELEASE.api_version, "kind": "HelmRelease",
            "metadata": {"name": name, "namespace": NS,
                "ownerReferences": [{"apiVersion": SERVICE_SET.api_version, "kind": "ServiceSet",
                    "name": "rbac-owner", "uid": s(&owner, "/metadata/uid"),
                    "controller": true, "blockOwnerDeletion": true}]},
            "spec": {"interval": "10m", "chartRef": {"kind": "OCIRepository", "name": "x"}}})
    };
    let rules = |without: Option<(&str, &str)>| -> Value {
        let role = c.api.get("clusterrole", None, NAME).unwrap();
        let mut rules = Vec::new();
        for rule in role["rules"].as_array().unwrap() {
            for r in rule["resources"].as_array().unwrap() {
                let verbs: Vec<&Value> = rule["verbs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|v| without != Some((r.as_str().unwrap(), v.as_str().unwrap())))
                    .collect();
                if !verbs.is_empty() {
                    rules.push(
                        json!({"apiGroups": rule["apiGroups"], "resources": [r], "verbs": verbs}),
                    );
                }
            }
        }
        Value::Array(rules)
    };
    let attempt = |name: &str, without: Option<(&str, &str)>| {
        let user = c.api.fresh_user();
        c.api.grant_cluster(&user, rules(without));
        c.api.try_apply_as(&user, &object(name))
    };
    let out = attempt("rbac-all", None);
    assert!(
        out.status.success(),
        "with the whole ClusterRole: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = attempt("rbac-no-create", Some(("helmreleases", "create")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot create resource \"helmreleases\""),
        "{err}"
    );
    let out = attempt(
        "rbac-no-finalizers",
        Some(("servicesets/finalizers", "update")),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on"),
        "{err}"
    );
}
