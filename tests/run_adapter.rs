//! `kubectl ksm run` end to end: the adapter binary against the stateful fake API server.
//!
//! Each test starts its own server with the real kcm and Flux CRDs, seeds a provider, templates
//! and a ServiceSet, runs the adapter as a child process and watches what it does through the
//! server: the objects it writes, the status it reports and every request it sends.

mod fakeapi;
mod run_env;

use std::process::Command;
use std::time::Duration;

use fakeapi::{FakeApiServer, Fault};
use run_env::*;
use serde_json::{Value, json};

#[test]
fn converges_to_what_render_gives_then_writes_nothing() {
    let mut env = Env::seeded("converge");
    // Resyncs every 2 s: the steady state below spans some.
    env.start(&["--resync", "2s"]);
    env.converged();
    assert_matches_render(&env);
    let set = env.set().unwrap();
    assert_eq!(
        set["metadata"]["finalizers"],
        json!(["k0rdent.mirantis.com/service-set"])
    );
    assert_eq!(set["status"]["provider"], json!({"ready": true}));
    assert_eq!(set["status"]["deployed"], false);
    assert_eq!(
        set["status"]["conditions"][0]["type"],
        "ServicesInReadyState"
    );
    assert_eq!(set["status"]["conditions"][0]["message"], "0/5");
    assert_eq!(
        set["status"]["cluster"],
        json!({"apiVersion": SS, "kind": "ClusterDeployment", "name": SET, "namespace": NS})
    );
    // Every object is applied under the adapter's field manager.
    for o in env.flux() {
        let managers: Vec<&str> = o["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| s(m, "/manager"))
            .collect();
        assert_eq!(managers, ["kubectl-ksm"], "{}", name_of(&o));
    }
    // The minimum: one finalizer patch, five applies, one status patch. Two reconciles more
    // (the events of its own writes, then a resync) have seen all of it and written nothing.
    let seen = env.reconciled_versions(SET).len();
    env.wait("two more reconciles", |e| {
        e.reconciled_versions(SET).len() >= seen + 2
    });
    let writes = env.writes();
    assert_eq!(writes.len(), 7, "{writes:#?}\n{}", env.log());
    // Steady state: nothing more is written over resyncs and bookmarks (the fake server
    // sends one a second).
    env.server.clear_requests();
    let rv = s(&env.set().unwrap(), "/metadata/resourceVersion").to_string();
    let desired = |e: &Env, from: &str| {
        counter(
            &e.get("/metrics").1,
            &format!("kubectl_ksm_desired_total{{from=\"{from}\"}}"),
        )
    };
    let (rendered, recalled) = (desired(&env, "rendered"), desired(&env, "recalled"));
    let seen = env.reconciled_versions(SET).len();
    env.wait("two resyncs", |e| {
        e.reconciled_versions(SET).len() >= seen + 2
    });
    assert_eq!(env.writes(), Vec::<String>::new());
    assert_eq!(
        s(&env.set().unwrap(), "/metadata/resourceVersion"),
        rv,
        "the ServiceSet did not change"
    );
    // Nothing changed: the resyncs planned from what an earlier reconcile rendered.
    assert_eq!(desired(&env, "rendered"), rendered, "{}", env.log());
    assert!(desired(&env, "recalled") >= recalled + 2, "{}", env.log());

    // The probes and the metrics.
    assert_eq!(env.get("/healthz").0, 200);
    assert_eq!(env.get("/readyz").0, 200);
    let (code, metrics) = env.get("/metrics");
    assert_eq!(code, 200);
    for m in [
        "kubectl_ksm_reconciles_total{result=\"success\"}",
        "kubectl_ksm_reconcile_duration_seconds_count",
        "kubectl_ksm_writes_total{verb=\"apply\"} 5",
        "kubectl_ksm_managed_objects{kind=\"HelmRelease\"}",
    ] {
        assert!(metrics.contains(m), "{m} not in\n{metrics}");
    }
    assert_eq!(env.get("/nope").0, 404);

    // Someone edits an object: its version moves, the next reconcile renders again and
    // applies it back.
    let mut hr = env
        .server
        .get(HR, "HelmRelease", NS, "dev-cluster-cert-manager")
        .unwrap();
    let interval = hr["spec"]["interval"].clone();
    hr["spec"]["interval"] = "99m".into();
    env.server.update(hr).unwrap();
    env.wait("the edit undone", |e| {
        e.server
            .get(HR, "HelmRelease", NS, "dev-cluster-cert-manager")
            .is_some_and(|o| o["spec"]["interval"] == interval)
    });
    assert!(desired(&env, "rendered") > rendered);

    assert_eq!(env.stop(), Some(0));
    let log = env.log();
    assert!(log.contains("stopped"), "{:?}: {log}", env.last_log);
}

#[test]
fn flux_status_changes_give_the_service_states() {
    let mut env = Env::seeded("states");
    env.start(&[]);
    env.converged();
    let hr = "dev-cluster-cert-manager";

    env.flux_status(
        "HelmRelease",
        hr,
        ("True", "InstallSucceeded", "Helm install succeeded"),
        false,
    );
    let deployed = env.wait_state("cert-manager", "Deployed");
    assert_eq!(deployed["version"], "v1.18.2");
    assert_eq!(deployed["type"], "Helm");
    assert_eq!(deployed["conditions"][0]["reason"], "InstallSucceeded");
    let since = s(&deployed, "/lastStateTransitionTime").to_string();
    env.wait("1/5", |e| {
        e.set()
            .is_some_and(|x| x["status"]["conditions"][0]["message"] == "1/5")
    });

    // Same state, another message: the transition time stays.
    std::thread::sleep(Duration::from_millis(1100));
    env.flux_status(
        "HelmRelease",
        hr,
        ("True", "UpgradeSucceeded", "Helm upgrade succeeded"),
        false,
    );
    env.wait("the new reason", |e| {
        e.state("cert-manager")
            .is_some_and(|x| x["conditions"][0]["reason"] == "UpgradeSucceeded")
    });
    assert_eq!(
        s(
            &env.state("cert-manager").unwrap(),
            "/lastStateTransitionTime"
        ),
        since
    );

    // Install failed and retries exhausted (Stalled): Failed, with Flux's message.
    env.flux_status(
        "HelmRelease",
        hr,
        ("False", "InstallFailed", "install retries exhausted"),
        true,
    );
    let failed = env.wait_state("cert-manager", "Failed");
    assert_eq!(failed["failureMessage"], "install retries exhausted");
    assert_ne!(s(&failed, "/lastStateTransitionTime"), since);
    assert_eq!(
        failed["version"], "v1.18.2",
        "the version last deployed stays"
    );

    // Remediated (rolled back): Failed too, not Provisioning.
    env.flux_status(
        "HelmRelease",
        hr,
        (
            "False",
            "RollbackSucceeded",
            "rolled back after upgrade failure",
        ),
        false,
    );
    env.wait("remediated", |e| {
        e.state("cert-manager")
            .is_some_and(|x| x["failureMessage"] == "rolled back after upgrade failure")
    });
    assert_eq!(env.state("cert-manager").unwrap()["state"], "Failed");

    // A dependency not ready: Pending.
    env.flux_status(
        "HelmRelease",
        hr,
        (
            "False",
            "DependencyNotReady",
            "dependency 'kcm-system/x' is not ready",
        ),
        false,
    );
    env.wait_state("cert-manager", "Pending");

    // In progress: Provisioning.
    env.flux_status(
        "HelmRelease",
        hr,
        ("Unknown", "Progressing", "Fresh install in progress"),
        false,
    );
    env.wait_state("cert-manager", "Provisioning");

    // The source fails: the adapter reads the HelmChart (Stalled) and says Failed.
    env.server.create(json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "HelmChart",
        "metadata": {"name": "cert-manager-1-18-2", "namespace": NS},
        "spec": {"chart": "cert-manager", "interval": "10m",
            "sourceRef": {"kind": "HelmRepository", "name": "k0rdent-catalog"}},
        "status": {"conditions": [
            {"type": "Ready", "status": "False", "reason": "ChartPullError",
             "message": "chart pull error: 404 Not Found", "lastTransitionTime": "2026-11-21T12:00:00Z"},
            {"type": "Stalled", "status": "True", "reason": "ChartPullError",
             "message": "chart pull error: 404 Not Found", "lastTransitionTime": "2026-11-21T12:00:00Z"}]}}));
    env.flux_status(
        "HelmRelease",
        hr,
        (
            "False",
            "ArtifactFailed",
            "HelmChart 'kcm-system/cert-manager-1-18-2' is not ready",
        ),
        false,
    );
    let failed = env.wait_state("cert-manager", "Failed");
    assert!(
        s(&failed, "/failureMessage").contains("404 Not Found"),
        "{failed:#}"
    );

    // A Kustomization that health-checks wrong: Failed.
    env.flux_status(
        "Kustomization",
        "dev-cluster-podinfo",
        ("False", "HealthCheckFailed", "health check failed after 5m"),
        false,
    );
    let k = env.wait_state("podinfo", "Failed");
    assert_eq!(k["type"], "Kustomize");
    env.stop();
}

#[test]
fn template_change_updates_and_removed_service_is_pruned() {
    let mut env = Env::seeded("update");
    env.start(&[]);
    env.converged();

    // kcm points the template at a new chart: the HelmRelease follows.
    let mut t = env
        .server
        .get(SS, "ServiceTemplate", NS, "cert-manager-1-18-2")
        .unwrap();
    t["status"]["chartRef"]["name"] = "cert-manager-1-18-3".into();
    env.server.update_status(t);
    env.wait("the new chartRef", |e| {
        e.server
            .get(HR, "HelmRelease", NS, "dev-cluster-cert-manager")
            .is_some_and(|o| o["spec"]["chartRef"]["name"] == "cert-manager-1-18-3")
    });

    // A service leaves the spec: its object goes, and so does its status entry.
    let mut set = env.set().unwrap();
    set["spec"]["services"]
        .as_array_mut()
        .unwrap()
        .retain(|x| s(x, "/name") != "podinfo");
    env.server.update(set).unwrap();
    env.wait("podinfo pruned", |e| {
        e.server
            .get(KS, "Kustomization", NS, "dev-cluster-podinfo")
            .is_none()
            && e.state("podinfo").is_none()
    });
    assert_matches_render(&env);

    // Values change: the spec follows, and a key dropped from values is dropped live too.
    let mut set = env.set().unwrap();
    set["spec"]["services"][0]["values"] = "replicaCount: 2\nextra: {a: 1}\n".into();
    env.server.update(set).unwrap();
    env.wait("values applied", |e| {
        e.server
            .get(HR, "HelmRelease", NS, "dev-cluster-cert-manager")
            .is_some_and(|o| o["spec"]["values"]["extra"]["a"] == 1)
    });
    let mut set = env.set().unwrap();
    set["spec"]["services"][0]["values"] = "replicaCount: 2\n".into();
    env.server.update(set).unwrap();
    env.wait("values key removed", |e| {
        e.server
            .get(HR, "HelmRelease", NS, "dev-cluster-cert-manager")
            .is_some_and(|o| o["spec"]["values"].get("extra").is_none())
    });
    assert_matches_render(&env);

    // Paused: every object is suspended.
    let mut set = env.set().unwrap();
    set["metadata"]["annotations"] = json!({"k0rdent.mirantis.com/service-set-paused": "true"});
    env.server.update(set).unwrap();
    env.wait("suspended", |e| {
        e.flux().iter().all(|o| o["spec"]["suspend"] == true)
    });
    assert_matches_render(&env);
    env.stop();
}

#[test]
fn deleting_the_serviceset_cleans_up_then_drops_the_finalizer() {
    let mut env = Env::seeded("delete");
    env.start(&[]);
    env.converged();
    // kcm would not block the deletion; the fake server's garbage collector is off for
    // ServiceSets with a finalizer until it is removed.
    env.server.delete(SS, "ServiceSet", NS, SET).unwrap();
    env.wait("the ServiceSet gone", |e| e.set().is_none());
    assert!(env.flux().is_empty(), "{:?}", env.flux());
    // It went through Deleting: the status write before the deletes. (The adapter logs the
    // removal after the server's reply, which may come after the ServiceSet is seen gone.)
    env.wait("the removal logged", |e| {
        e.log().contains("finalizer removed")
    });
    let log = env.log();
    assert!(log.contains("finalizer removed"), "{log}");
    let reqs = env.server.requests();
    let status_at = reqs
        .iter()
        .rposition(|r| r.subresource.as_deref() == Some("status") && r.verb == "patch")
        .unwrap();
    let first_delete = reqs.iter().position(|r| r.verb == "delete").unwrap();
    assert!(
        status_at < first_delete,
        "status (Deleting) is written before deleting"
    );
    env.stop();
}

#[test]
fn a_provider_not_ready_or_suspended_changes_no_flux_object() {
    let mut env = Env::seeded("suspend");
    env.start(&[]);
    env.converged();
    let before: Vec<Value> = env.flux();

    let mut p = env
        .server
        .get(SS, "StateManagementProvider", "", "ksm-flux")
        .unwrap();
    p["spec"]["suspend"] = true.into();
    let p = env.server.update(p).unwrap();
    env.wait("provider suspended in status", |e| {
        e.set()
            .is_some_and(|x| x["status"]["provider"]["suspended"] == true)
    });
    // Changes meanwhile: a service removed, values changed. Nothing moves.
    let mut set = env.set().unwrap();
    set["spec"]["services"].as_array_mut().unwrap().pop();
    set["spec"]["services"][0]["values"] = "x: 1\n".into();
    env.update_set_and_wait(set);
    let strip = |v: &[Value]| -> Vec<(String, String)> {
        v.iter()
            .map(|o| (name_of(o), s(o, "/metadata/resourceVersion").to_string()))
            .collect()
    };
    assert_eq!(strip(&env.flux()), strip(&before));

    // Not ready instead of suspended: same. (Status first: the provider never looks active.)
    let mut p = p;
    p["status"] = json!({"ready": false});
    let mut p = env.server.update_status(p);
    p["spec"]["suspend"] = false.into();
    let p = env.server.update(p).unwrap();
    env.wait("provider not ready in status", |e| {
        e.set()
            .is_some_and(|x| x["status"]["provider"] == json!({}))
    });
    // The reconcile that wrote it applied nothing before; the next one, which saw it,
    // applies nothing either.
    env.wait_reconciled(SET, s(&env.set().unwrap(), "/metadata/resourceVersion"));
    assert_eq!(strip(&env.flux()), strip(&before));

    // Ready again: it catches up.
    let mut p3 = p;
    p3["status"] = json!({"ready": true});
    env.server.update_status(p3);
    env.wait("caught up", |e| e.flux().len() == 4);
    assert_matches_render(&env);
    env.stop();
}

#[test]
fn an_object_it_does_not_own_is_left_alone() {
    let env0 = Env::seeded("foreign");
    let mut env = env0;
    let foreign = env
        .server
        .create(json!({"apiVersion": HR, "kind": "HelmRelease",
        "metadata": {"name": "dev-cluster-cert-manager", "namespace": NS},
        "spec": {"interval": "1h", "chartRef": {"kind": "OCIRepository", "name": "mine"}}}));
    env.start(&[]);
    let st = env.wait_state("cert-manager", "Failed");
    assert!(
        s(&st, "/failureMessage").contains("not controlled by this ServiceSet"),
        "{st:#}"
    );
    env.wait("the other four", |e| e.flux().len() == 5);
    let now = env
        .server
        .get(HR, "HelmRelease", NS, "dev-cluster-cert-manager")
        .unwrap();
    assert_eq!(
        now["metadata"]["resourceVersion"],
        foreign["metadata"]["resourceVersion"]
    );
    // Not pruned either when the service leaves the spec.
    let mut set = env.set().unwrap();
    set["spec"]["services"].as_array_mut().unwrap().remove(0);
    env.server.update(set).unwrap();
    env.wait("status without cert-manager", |e| {
        e.state("cert-manager").is_none()
    });
    assert!(
        env.server
            .get(HR, "HelmRelease", NS, "dev-cluster-cert-manager")
            .is_some()
    );
    env.stop();
}

#[test]
fn configuration_errors_fail_the_service_without_looping() {
    let mut env = Env::seeded("config");
    let mut set = env.set().unwrap();
    set["spec"]["services"][1]["template"] = "missing-template".into();
    env.server.update(set).unwrap();
    // No resync: a reconcile that asks for no retry is then the last one until a change.
    env.start(&["--resync", "0"]);
    let st = env.wait_state("baseline-policies", "Failed");
    assert!(
        s(&st, "/failureMessage").contains("missing-template not found"),
        "{st:#}"
    );
    env.wait("the other four", |e| e.flux().len() == 4);
    // The reconcile that saw its own status waits for a change: no retry loop on a
    // configuration error (an error would be retried, and logged with its delay).
    env.wait_reconciled(SET, s(&env.set().unwrap(), "/metadata/resourceVersion"));
    let log = env.log();
    let last = log
        .lines()
        .rfind(|l| l.contains(" reconciled "))
        .unwrap_or_default();
    assert!(last.contains("next=on change"), "{last}\n{log}");
    assert!(!log.contains("retry_in_ms"), "{log}");
    let applies = env
        .writes()
        .into_iter()
        .filter(|w| w.contains("/helmreleases/") || w.contains("/kustomizations/"))
        .count();
    assert_eq!(applies, 4, "each object applied once: {:#?}", env.writes());
    env.stop();
}

#[test]
fn converges_through_conflicts_server_errors_dropped_watches_and_a_restart() {
    let mut env = Env::seeded("faults");
    env.inject(Fault::Status {
        verb: Some("patch".into()),
        resource: Some("helmreleases".into()),
        code: 409,
        times: 2,
    });
    env.inject(Fault::Status {
        verb: Some("patch".into()),
        resource: Some("kustomizations".into()),
        code: 500,
        times: 3,
    });
    env.inject(Fault::Status {
        verb: Some("patch".into()),
        resource: Some("servicesets".into()),
        code: 409,
        times: 1,
    });
    env.inject(Fault::DropWatch {
        resource: Some("helmreleases".into()),
        after_events: 1,
    });
    env.inject(Fault::DropWatch {
        resource: Some("servicesets".into()),
        after_events: 1,
    });
    env.start(&[]);
    // Killed mid-reconcile: as soon as the first object exists.
    env.wait("a first object", |e| !e.flux().is_empty());
    env.kill();
    env.start(&[]);
    env.converged();
    assert_matches_render(&env);
    // No duplicates and no orphans: exactly the wanted objects, each controlled by the set.
    let uid = s(&env.set().unwrap(), "/metadata/uid").to_string();
    for o in env.flux() {
        assert_eq!(s(&o, "/metadata/ownerReferences/0/uid"), uid);
    }
    // And it keeps working after the dropped watches: a change still arrives.
    env.still_serves();
    env.stop();
}

#[test]
fn only_the_leader_writes_and_a_standby_takes_over() {
    let mut env = Env::seeded("leader");
    env.start(&["--leader-elect", "--leader-election-namespace", NS]);
    env.converged();
    let lease = env
        .server
        .get(
            "coordination.k8s.io/v1",
            "Lease",
            NS,
            "kubectl-ksm-ksm-flux",
        )
        .expect("a lease");
    let first = s(&lease, "/spec/holderIdentity").to_string();
    assert!(!first.is_empty());

    // A second replica waits.
    let mut standby = Env {
        server: FakeApiServer::start(),
        dir: env.dir.join("standby"),
        adapter: None,
        last_log: None,
        delays: Delays::default(),
    };
    std::fs::create_dir_all(&standby.dir).unwrap();
    std::fs::copy(env.dir.join("kubeconfig"), standby.dir.join("kubeconfig")).unwrap();
    standby.start(&["--leader-elect", "--leader-election-namespace", NS]);
    standby.wait("the standby waiting", |e| {
        e.log().contains("waiting for leadership")
    });
    assert!(!standby.log().contains("leading"), "{}", standby.log());

    // The leader stops and releases the lease: the standby takes it at its next try and serves.
    assert_eq!(env.stop(), Some(0));
    standby.wait("the standby leading", |e| e.log().contains("leading"));
    let lease = env
        .server
        .get(
            "coordination.k8s.io/v1",
            "Lease",
            NS,
            "kubectl-ksm-ksm-flux",
        )
        .unwrap();
    assert_ne!(s(&lease, "/spec/holderIdentity"), first);
    env.still_serves();
    standby.stop();
}

#[test]
fn missing_flux_is_one_line_and_exit_2() {
    let server = FakeApiServer::start();
    server.load_crds_dir(root().join("crds/kcm"));
    let dir = std::env::temp_dir().join(format!("ksm-run-noflux-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    server.write_kubeconfig(dir.join("kubeconfig"));
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-ksm"))
        .args([
            "run",
            "--provider",
            "ksm-flux",
            "--bind-address",
            "127.0.0.1:0",
        ])
        .arg("--kubeconfig")
        .arg(dir.join("kubeconfig"))
        .env_clear()
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("helm-controller is not installed"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn managed_service_sets_are_only_this_providers() {
    let mut env = Env::seeded("managed-count");
    // Another provider's ServiceSet, and one naming ours without the SMP's selector label:
    // neither is this adapter's.
    let (mut other, _) = fixture();
    other["metadata"]["name"] = json!("sveltos-set");
    other["spec"]["provider"]["name"] = json!("ksm-projectsveltos");
    env.server.create(other);
    let (mut unlabelled, _) = fixture();
    unlabelled["metadata"]["name"] = json!("unlabelled-set");
    unlabelled["metadata"]["labels"] = json!({});
    env.server.create(unlabelled);
    env.start(&[]);
    env.converged();
    let line = "kubectl_ksm_managed_objects{kind=\"ServiceSet\"} ";
    // The gauges are set from the caches every few seconds: once they show the Flux objects,
    // they show the ServiceSets too.
    env.wait("the gauges", |e| {
        e.get("/metrics")
            .1
            .contains("kubectl_ksm_managed_objects{kind=\"HelmRelease\"} 3")
    });
    let metrics = env.get("/metrics").1;
    let value: Vec<&str> = metrics
        .lines()
        .filter_map(|l| l.strip_prefix(line))
        .collect();
    assert_eq!(value, ["1"], "{metrics}");
    assert_eq!(env.flux().len(), 5, "the others' objects are not written");
    env.stop();
}

/// The value of a counter line `name value` of the metrics, 0 when it is not there.
fn counter(metrics: &str, name: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0)
}
