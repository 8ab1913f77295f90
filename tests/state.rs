//! Tests of the service-state mapping: one per rule and per reason, on the example objects of
//! testdata/objects (JSON copies in testdata/) and small json! objects.

use std::time::Duration;

use chrono::{DateTime, Utc};
use kubectl_ksm::core::state::*;
use serde_json::{Value, json};

fn fixture(name: &str) -> Value {
    let text = match name {
        "hr-ready" => include_str!("../testdata/state/helmrelease-v2-ready.json"),
        "hr-stalled" => include_str!("../testdata/state/helmrelease-v2-installfailed-stalled.json"),
        "hr-remediated" => {
            include_str!("../testdata/state/helmrelease-v2-remediated-retrying.json")
        }
        "ks-buildfailed" => include_str!("../testdata/state/kustomization-v1-buildfailed.json"),
        "ks-healthcheckfailed" => {
            include_str!("../testdata/state/kustomization-v1-healthcheckfailed.json")
        }
        "ks-progressing" => include_str!("../testdata/state/kustomization-v1-progressing.json"),
        "ks-ready" => include_str!("../testdata/state/kustomization-v1-ready.json"),
        "gr-failed" => include_str!("../testdata/state/gitrepository-failed.json"),
        "gr-unknown" => include_str!("../testdata/state/gitrepository-unknown.json"),
        _ => panic!("no fixture {name}"),
    };
    serde_json::from_str(text).unwrap()
}

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

const NOW: &str = "2025-08-15T10:15:00Z";
const TIMEOUT: Duration = Duration::from_secs(600);

fn observe(obj: Option<&Value>) -> Observed<'_> {
    Observed {
        object: obj,
        source: None,
        source_missing: false,
        in_spec: true,
        now: t(NOW),
        source_timeout: TIMEOUT,
    }
}

fn state_of(obj: &Value) -> StateOutcome {
    service_state(&observe(Some(obj)))
}

fn set(obj: &mut Value, ptr: &str, v: Value) {
    let (parent, key) = ptr.rsplit_once('/').unwrap();
    obj.pointer_mut(parent)
        .unwrap()
        .as_object_mut()
        .unwrap()
        .insert(key.to_string(), v);
}

/// A HelmRelease at `generation` with the given status.
fn hr(generation: i64, status: Value) -> Value {
    json!({
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "podinfo", "namespace": "podinfo", "generation": generation},
        "spec": {"interval": "10m", "chartRef": {"kind": "HelmChart", "name": "podinfo", "namespace": "kcm-system"}},
        "status": status
    })
}

/// A Kustomization at `generation` with the given status.
fn ks(generation: i64, status: Value) -> Value {
    json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": {"name": "app", "namespace": "kcm-system", "generation": generation},
        "spec": {"interval": "10m", "prune": true, "sourceRef": {"kind": "GitRepository", "name": "app"}},
        "status": status
    })
}

fn cond(type_: &str, status: &str, reason: &str, message: &str, og: i64, ltt: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": message,
           "observedGeneration": og, "lastTransitionTime": ltt})
}

fn ready_false(reason: &str, message: &str) -> Value {
    cond("Ready", "False", reason, message, 1, "2025-08-15T10:14:00Z")
}

fn retrying() -> Value {
    cond(
        "Reconciling",
        "True",
        "ProgressingWithRetry",
        "retrying",
        1,
        "2025-08-15T10:14:00Z",
    )
}

fn helmchart(conditions: Value) -> Value {
    json!({
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmChart",
        "metadata": {"name": "podinfo", "namespace": "kcm-system", "generation": 1},
        "status": {"observedGeneration": 1, "conditions": conditions}
    })
}

fn assert_outcome(o: &StateOutcome, state: ServiceState, reason: &str) {
    assert_eq!((o.state, o.reason), (state, reason), "{o:#?}");
}

// ---------------------------------------------------------------------------------------------
// ServiceState and kstatus
// ---------------------------------------------------------------------------------------------

#[test]
fn service_state_strings_are_kcm_strings() {
    use ServiceState::*;
    for (s, name) in [
        (Deployed, "Deployed"),
        (Provisioning, "Provisioning"),
        (Failed, "Failed"),
        (Pending, "Pending"),
        (Deleting, "Deleting"),
        (Deleted, "Deleted"),
    ] {
        assert_eq!(s.as_str(), name);
        assert_eq!(s.to_string(), name);
        assert_eq!(serde_json::to_value(s).unwrap(), json!(name));
    }
}

#[test]
fn kstatus_of_the_examples() {
    assert_eq!(kstatus(&fixture("hr-ready")), KStatus::Current);
    assert_eq!(kstatus(&fixture("hr-stalled")), KStatus::Failed);
    assert_eq!(kstatus(&fixture("hr-remediated")), KStatus::InProgress);
    assert_eq!(kstatus(&fixture("ks-buildfailed")), KStatus::InProgress);
    assert_eq!(
        kstatus(&fixture("ks-healthcheckfailed")),
        KStatus::InProgress
    );
    assert_eq!(kstatus(&fixture("ks-progressing")), KStatus::InProgress);
    assert_eq!(kstatus(&fixture("ks-ready")), KStatus::Current);
    assert_eq!(kstatus(&Value::Null), KStatus::NotFound);
}

#[test]
fn kstatus_order() {
    let mut o = fixture("hr-ready");
    set(
        &mut o,
        "/metadata/deletionTimestamp",
        json!("2025-08-15T10:00:00Z"),
    );
    assert_eq!(kstatus(&o), KStatus::Terminating);

    let mut o = fixture("hr-stalled");
    set(&mut o, "/metadata/generation", json!(2));
    assert_eq!(
        kstatus(&o),
        KStatus::InProgress,
        "observedGeneration before Stalled"
    );

    let o = hr(
        1,
        json!({"conditions": [retrying(), cond("Stalled", "True", "RetriesExceeded", "x", 1, NOW)]}),
    );
    assert_eq!(
        kstatus(&o),
        KStatus::InProgress,
        "Reconciling before Stalled"
    );

    let o = hr(
        1,
        json!({"conditions": [ready_false("InstallFailed", "x")]}),
    );
    assert_eq!(
        kstatus(&o),
        KStatus::InProgress,
        "Ready=False is InProgress"
    );

    let o = hr(1, json!({}));
    assert_eq!(
        kstatus(&o),
        KStatus::InProgress,
        "no Ready is InProgress (domain.md)"
    );

    let o = hr(
        1,
        json!({"conditions": [cond("Ready", "True", "InstallSucceeded", "", 1, NOW)]}),
    );
    assert_eq!(
        kstatus(&o),
        KStatus::Current,
        "no status.observedGeneration: check skipped"
    );
}

// ---------------------------------------------------------------------------------------------
// Rule 1-2: deletion, existence, nothing attempted
// ---------------------------------------------------------------------------------------------

#[test]
fn deleting() {
    let mut o = fixture("hr-ready");
    set(
        &mut o,
        "/metadata/deletionTimestamp",
        json!("2025-08-15T10:00:00Z"),
    );
    assert_outcome(&state_of(&o), ServiceState::Deleting, "deleting");
    // Deleting wins even when the service is no longer in the spec.
    let out = service_state(&Observed {
        in_spec: false,
        ..observe(Some(&o))
    });
    assert_outcome(&out, ServiceState::Deleting, "deleting");
}

#[test]
fn present_but_removed_from_spec_is_deleting() {
    let o = fixture("hr-ready");
    let out = service_state(&Observed {
        in_spec: false,
        ..observe(Some(&o))
    });
    assert_outcome(&out, ServiceState::Deleting, "not-in-spec");
}

#[test]
fn missing_in_spec_is_pending() {
    let out = service_state(&observe(None));
    assert_outcome(&out, ServiceState::Pending, "missing");
    assert_eq!(out.failure_message, None);
}

#[test]
fn missing_not_in_spec_is_deleted() {
    let out = service_state(&Observed {
        in_spec: false,
        ..observe(None)
    });
    assert_outcome(&out, ServiceState::Deleted, "deleted");
}

#[test]
fn nothing_attempted_is_pending() {
    let o = hr(1, json!({}));
    assert_outcome(&state_of(&o), ServiceState::Pending, "not-attempted");
    let mut o = hr(1, json!({}));
    o.as_object_mut().unwrap().remove("status");
    assert_outcome(&state_of(&o), ServiceState::Pending, "not-attempted");
    // Kustomization default status: observedGeneration -1 only.
    let o = ks(1, json!({"observedGeneration": -1}));
    assert_outcome(&state_of(&o), ServiceState::Pending, "not-attempted");
}

#[test]
fn no_ready_but_reconciling_is_provisioning() {
    let o = hr(
        1,
        json!({"conditions": [cond("Reconciling", "True", "Progressing", "Fulfilling prerequisites", 1, NOW)]}),
    );
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Provisioning, "reconciling");
    assert_eq!(out.condition_type, Some("Reconciling"));
}

#[test]
fn no_ready_but_attempted_is_provisioning() {
    let o = hr(
        1,
        json!({"lastAttemptedRevision": "6.6.1", "lastAttemptedGeneration": 1}),
    );
    assert_outcome(&state_of(&o), ServiceState::Provisioning, "no-ready");
}

// ---------------------------------------------------------------------------------------------
// Rule 3: suspended
// ---------------------------------------------------------------------------------------------

#[test]
fn suspended_ready_is_deployed() {
    let mut o = fixture("hr-ready");
    set(&mut o, "/spec/suspend", json!(true));
    assert_outcome(&state_of(&o), ServiceState::Deployed, "suspended-ready");
}

#[test]
fn suspended_ready_at_older_generation_is_pending() {
    let mut o = fixture("hr-ready");
    set(&mut o, "/spec/suspend", json!(true));
    set(&mut o, "/metadata/generation", json!(2));
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Pending, "suspended-not-ready");
    assert!(out.failure_message.unwrap().contains("suspend"));
}

/// Suspending is itself a spec change: generation 2, recorded in status.observedGeneration,
/// while Ready keeps generation 1 (helm-controller and kustomize-controller do exactly this).
#[test]
fn suspending_a_ready_object_keeps_it_deployed() {
    let mut o = fixture("hr-ready");
    set(&mut o, "/spec/suspend", json!(true));
    set(&mut o, "/metadata/generation", json!(2));
    set(&mut o, "/status/observedGeneration", json!(2));
    assert_outcome(&state_of(&o), ServiceState::Deployed, "suspended-ready");
}

#[test]
fn suspended_not_ready_is_pending() {
    // Even a stalled object: suspension comes first.
    let mut o = fixture("hr-stalled");
    set(&mut o, "/spec/suspend", json!(true));
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Pending, "suspended-not-ready");
    assert_eq!(out.condition.unwrap().0, "InstallFailed");

    let mut o = hr(1, json!({"lastAttemptedRevision": "1.0.0"}));
    set(&mut o, "/spec/suspend", json!(true));
    assert_outcome(&state_of(&o), ServiceState::Pending, "suspended-not-ready");
}

// ---------------------------------------------------------------------------------------------
// Rule 4: stalled
// ---------------------------------------------------------------------------------------------

#[test]
fn stalled_retries_exceeded_is_failed_with_ready_message() {
    let out = state_of(&fixture("hr-stalled"));
    assert_outcome(&out, ServiceState::Failed, "stalled");
    assert_eq!(
        out.failure_message.as_deref(),
        Some(
            "Helm install failed for release podinfo/podinfo with chart podinfo@6.6.1: \
             timeout waiting for: [Deployment/podinfo/podinfo status: 'InProgress']"
        )
    );
    assert_eq!(out.condition_type, Some("Stalled"));
    assert_eq!(
        out.condition,
        Some((
            "RetriesExceeded".into(),
            "Failed to install after 1 attempt(s)".into()
        ))
    );
}

#[test]
fn stalled_without_ready_false_uses_stalled_message() {
    let o = hr(
        1,
        json!({"conditions": [cond("Stalled", "True", "MissingRollbackTarget",
        "Failed to perform remediation: no previous release", 1, NOW)]}),
    );
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "stalled");
    assert_eq!(
        out.failure_message.as_deref(),
        Some("Failed to perform remediation: no previous release")
    );
}

#[test]
fn stalled_access_denied_is_failed() {
    let msg = "cross-namespace references are not allowed";
    let o = ks(
        1,
        json!({"conditions": [
        cond("Ready", "False", "AccessDenied", msg, 1, NOW),
        cond("Stalled", "True", "AccessDenied", msg, 1, NOW)]}),
    );
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "stalled");
    assert_eq!(out.failure_message.as_deref(), Some(msg));
}

#[test]
fn stalled_at_older_generation_is_provisioning() {
    // The spec changed after the terminal failure: helm-controller will try the new generation.
    let mut o = fixture("hr-stalled");
    set(&mut o, "/metadata/generation", json!(2));
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Provisioning, "older-generation");
    assert_eq!(out.condition_type, Some("Stalled"));
}

#[test]
fn stalled_remediated_uses_the_release_failure() {
    let o = hr(
        1,
        json!({"observedGeneration": 1, "conditions": [
        cond("Stalled", "True", "RetriesExceeded", "Failed to upgrade after 3 attempt(s)", 1, NOW),
        cond("Ready", "False", "RollbackSucceeded", "Helm rollback to previous release podinfo/podinfo.v1 with chart podinfo@6.6.0 succeeded", 1, NOW),
        cond("Remediated", "True", "RollbackSucceeded", "Helm rollback to previous release podinfo/podinfo.v1 with chart podinfo@6.6.0 succeeded", 1, NOW),
        cond("Released", "False", "UpgradeFailed", "Helm upgrade failed for release podinfo/podinfo with chart podinfo@6.6.1: boom", 1, NOW)]}),
    );
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "stalled");
    assert!(out.failure_message.unwrap().starts_with("Helm upgrade failed for release podinfo/podinfo with chart podinfo@6.6.1: boom; Helm rollback"));
}

// ---------------------------------------------------------------------------------------------
// Rule 5: ready
// ---------------------------------------------------------------------------------------------

#[test]
fn ready_is_deployed() {
    let out = state_of(&fixture("hr-ready"));
    assert_outcome(&out, ServiceState::Deployed, "ready");
    assert_eq!(out.failure_message, None);
    assert_eq!(out.condition_type, Some("Ready"));
    assert_eq!(out.condition.unwrap().0, "InstallSucceeded");
    assert_outcome(
        &state_of(&fixture("ks-ready")),
        ServiceState::Deployed,
        "ready",
    );
}

#[test]
fn ready_while_a_periodic_reconcile_runs_stays_deployed() {
    // helm-controller sets Reconciling=True at every reconcile; Ready stays True until an action runs.
    let mut o = fixture("hr-ready");
    o["status"]["conditions"].as_array_mut().unwrap().push(cond(
        "Reconciling",
        "True",
        "Progressing",
        "Fulfilling prerequisites",
        1,
        NOW,
    ));
    assert_outcome(&state_of(&o), ServiceState::Deployed, "ready");
}

#[test]
fn installed_at_older_generation_is_provisioning() {
    // The spec changed (generation 2); the controller has not written anything for it yet.
    let mut o = fixture("hr-ready");
    set(&mut o, "/metadata/generation", json!(2));
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Provisioning, "older-generation");
    assert_eq!(
        out.failure_message.as_deref(),
        Some("generation 2 not reconciled yet (status is for generation 1)")
    );

    // Ready written for generation 2, status.observedGeneration still 1.
    let mut o = fixture("hr-ready");
    set(&mut o, "/metadata/generation", json!(2));
    set(&mut o, "/status/conditions/0/observedGeneration", json!(2));
    assert_outcome(
        &state_of(&o),
        ServiceState::Provisioning,
        "older-generation",
    );
}

#[test]
fn kustomization_ready_at_new_generation_is_provisioning() {
    // ready-and-progressing, document 2, after a spec change (generation 3).
    let mut o = fixture("ks-ready");
    set(&mut o, "/metadata/generation", json!(3));
    assert_outcome(
        &state_of(&o),
        ServiceState::Provisioning,
        "older-generation",
    );
}

#[test]
fn kustomization_progressing_is_provisioning() {
    // ready-and-progressing, document 1: Ready=Unknown Progressing + Reconciling=True at generation 2.
    let out = state_of(&fixture("ks-progressing"));
    assert_outcome(&out, ServiceState::Provisioning, "progressing");
    assert_eq!(
        out.condition,
        Some(("Progressing".into(), "Reconciliation in progress".into()))
    );
    assert_eq!(out.failure_message, None);
}

// ---------------------------------------------------------------------------------------------
// Rule 6: Ready=False
// ---------------------------------------------------------------------------------------------

#[test]
fn remediated_uninstall_is_failed_with_the_real_message() {
    let out = state_of(&fixture("hr-remediated"));
    assert_outcome(&out, ServiceState::Failed, "remediated");
    assert_eq!(
        out.failure_message.as_deref(),
        Some(
            "Helm install failed for release podinfo/podinfo with chart podinfo@6.6.1+0cc9a8446c95: \
             context deadline exceeded; Helm uninstall remediation for release podinfo/podinfo.v1 \
             with chart podinfo@6.6.1+0cc9a8446c95 succeeded"
        )
    );
    assert_eq!(out.condition.unwrap().0, "UninstallSucceeded");
}

#[test]
fn remediated_rollback_is_failed_with_the_real_message() {
    let rb =
        "Helm rollback to previous release podinfo/podinfo.v1 with chart podinfo@6.6.0 succeeded";
    let o = hr(
        2,
        json!({"observedGeneration": 1, "conditions": [
        cond("Reconciling", "True", "ProgressingWithRetry", rb, 2, NOW),
        cond("Ready", "False", "RollbackSucceeded", rb, 2, NOW),
        cond("Remediated", "True", "RollbackSucceeded", rb, 2, NOW),
        cond("Released", "False", "UpgradeFailed", "Helm upgrade failed for release podinfo/podinfo with chart podinfo@6.6.1: boom", 2, NOW)]}),
    );
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "remediated");
    assert_eq!(
        out.failure_message.as_deref(),
        Some(&*format!(
            "Helm upgrade failed for release podinfo/podinfo with chart podinfo@6.6.1: boom; {rb}"
        ))
    );
}

#[test]
fn remediated_after_failed_tests_names_the_tests() {
    let rb =
        "Helm rollback to previous release podinfo/podinfo.v1 with chart podinfo@6.6.0 succeeded";
    let tf = "Helm test failed for release podinfo/podinfo.v2 with chart podinfo@6.6.1: pod podinfo-grpc-test failed";
    let o = hr(
        1,
        json!({"conditions": [
        cond("Ready", "False", "RollbackSucceeded", rb, 1, NOW),
        cond("Remediated", "True", "RollbackSucceeded", rb, 1, NOW),
        cond("TestSuccess", "False", "TestFailed", tf, 1, NOW),
        cond("Released", "True", "UpgradeSucceeded", "Helm upgrade succeeded", 1, NOW)]}),
    );
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "remediated");
    assert_eq!(
        out.failure_message.as_deref(),
        Some(&*format!("{tf}; {rb}"))
    );
}

#[test]
fn install_failed_retrying_is_failed() {
    let msg = "Helm install failed for release podinfo/podinfo with chart podinfo@6.6.1: context deadline exceeded";
    let o = hr(
        1,
        json!({"observedGeneration": -1, "lastAttemptedRevision": "6.6.1", "conditions": [
        cond("Reconciling", "True", "ProgressingWithRetry", msg, 1, NOW),
        cond("Ready", "False", "InstallFailed", msg, 1, NOW),
        cond("Released", "False", "InstallFailed", msg, 1, NOW)]}),
    );
    assert_eq!(kstatus(&o), KStatus::InProgress);
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "install-failed");
    assert_eq!(out.failure_message.as_deref(), Some(msg));
    assert_eq!(out.condition, Some(("InstallFailed".into(), msg.into())));
}

#[test]
fn upgrade_failed_is_failed() {
    let msg = "Helm upgrade failed for release podinfo/podinfo with chart podinfo@6.6.2: boom";
    let o = hr(
        2,
        json!({"observedGeneration": 1, "conditions": [retrying(), ready_false("UpgradeFailed", msg)]}),
    );
    // Ready written at generation 1 here, generation 2 in the object: make it current.
    let mut o = o;
    set(&mut o, "/status/conditions/1/observedGeneration", json!(2));
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "upgrade-failed");
    assert_eq!(out.failure_message.as_deref(), Some(msg));
}

#[test]
fn test_failed_is_failed() {
    let msg = "Helm test failed for release podinfo/podinfo.v1 with chart podinfo@6.6.1: pod podinfo-grpc-test failed";
    let o = hr(
        1,
        json!({"observedGeneration": 1, "conditions": [
        ready_false("TestFailed", msg),
        cond("TestSuccess", "False", "TestFailed", msg, 1, NOW),
        cond("Released", "True", "InstallSucceeded", "Helm install succeeded", 1, NOW)]}),
    );
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "test-failed");
    assert_eq!(out.failure_message.as_deref(), Some(msg));
}

#[test]
fn awaiting_tests_is_provisioning() {
    let o = hr(
        1,
        json!({"conditions": [
        cond("Ready", "Unknown", "AwaitingTests", "Release podinfo/podinfo.v1 with chart podinfo@6.6.1 is not tested", 1, NOW)]}),
    );
    assert_outcome(&state_of(&o), ServiceState::Provisioning, "progressing");
}

#[test]
fn every_helmrelease_failure_reason_is_failed() {
    let expected = [
        ("InstallFailed", "install-failed"),
        ("UpgradeFailed", "upgrade-failed"),
        ("TestFailed", "test-failed"),
        ("RollbackSucceeded", "remediated"),
        ("RollbackFailed", "remediation-failed"),
        ("UninstallSucceeded", "remediated"),
        ("UninstallFailed", "uninstall-failed"),
        ("ValuesError", "values-error"),
        ("AccessDenied", "access-denied"),
        ("InvalidCELExpression", "invalid-cel"),
        ("ReconcileError", "reconcile-error"),
    ];
    assert_eq!(expected.len(), HELMRELEASE_FAILURE_REASONS.len());
    for (reason, code) in expected {
        assert!(HELMRELEASE_FAILURE_REASONS.contains(&reason));
        let o = hr(
            1,
            json!({"observedGeneration": -1, "conditions": [retrying(), ready_false(reason, "it broke")]}),
        );
        let out = state_of(&o);
        assert_outcome(&out, ServiceState::Failed, code);
        assert_eq!(out.failure_message.as_deref(), Some("it broke"), "{reason}");
    }
}

#[test]
fn every_kustomization_failure_reason_is_failed() {
    let expected = [
        ("BuildFailed", "build-failed"),
        ("ReconciliationFailed", "reconciliation-failed"),
        ("PruneFailed", "prune-failed"),
        ("HealthCheckFailed", "health-check-failed"),
        ("AccessDenied", "access-denied"),
        ("InvalidCELExpression", "invalid-cel"),
        ("FeatureGateDisabled", "feature-gate-disabled"),
    ];
    assert_eq!(expected.len(), KUSTOMIZATION_FAILURE_REASONS.len());
    for (reason, code) in expected {
        let o = ks(
            1,
            json!({"observedGeneration": -1, "conditions": [retrying(), ready_false(reason, "it broke")]}),
        );
        assert_outcome(&state_of(&o), ServiceState::Failed, code);
    }
}

#[test]
fn kustomization_build_failed_is_failed() {
    let o = fixture("ks-buildfailed");
    assert_eq!(kstatus(&o), KStatus::InProgress);
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "build-failed");
    assert_eq!(
        out.failure_message.as_deref(),
        Some(
            "kustomize build failed: accumulating resources: accumulation err='accumulating resources \
             from 'deployment.yaml': missing Resource metadata'"
        )
    );
}

#[test]
fn kustomization_health_check_failed_is_failed() {
    let o = fixture("ks-healthcheckfailed");
    assert_eq!(kstatus(&o), KStatus::InProgress);
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "health-check-failed");
    assert_eq!(
        out.failure_message.as_deref(),
        Some("timeout waiting for: [Deployment/default/podinfo status: 'InProgress']")
    );
}

#[test]
fn failure_at_older_generation_is_provisioning() {
    // build-failed written for generation 2; the spec moved on to generation 3.
    let mut o = fixture("ks-buildfailed");
    set(&mut o, "/metadata/generation", json!(3));
    assert_outcome(
        &state_of(&o),
        ServiceState::Provisioning,
        "older-generation",
    );
}

#[test]
fn dependency_not_ready_is_pending_and_names_it() {
    let msg = "dependency 'kcm-system/cert-manager' is not ready";
    let o = hr(
        1,
        json!({"conditions": [
        cond("Reconciling", "True", "Progressing", "Fulfilling prerequisites", 1, NOW),
        ready_false("DependencyNotReady", msg)]}),
    );
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Pending, "dependency-not-ready");
    assert_eq!(out.failure_message.as_deref(), Some(msg));
    assert_eq!(dependency_name(msg), Some("kcm-system/cert-manager"));
    assert_eq!(
        dependency_name("unable to get 'ns/a' dependency: not found"),
        Some("ns/a")
    );
    assert_eq!(dependency_name("no quotes"), None);

    let o = ks(
        1,
        json!({"conditions": [ready_false("DependencyNotReady", "dependency 'kcm-system/infra' revision is not up to date")]}),
    );
    assert_outcome(&state_of(&o), ServiceState::Pending, "dependency-not-ready");
}

// ---------------------------------------------------------------------------------------------
// Rule 6: waiting for the source
// ---------------------------------------------------------------------------------------------

const SOURCE_NOT_READY: &str =
    "HelmChart 'kcm-system/podinfo' is not ready: does not have an artifact";

fn hr_source_not_ready(ltt: &str) -> Value {
    hr(
        1,
        json!({"conditions": [
        cond("Reconciling", "True", "Progressing", "Fulfilling prerequisites", 1, ltt),
        cond("Ready", "False", "SourceNotReady", SOURCE_NOT_READY, 1, ltt)]}),
    )
}

#[test]
fn source_not_ready_young_is_provisioning() {
    let o = hr_source_not_ready("2025-08-15T10:10:00Z"); // 5 minutes before NOW, timeout 10
    let src = helmchart(json!([cond(
        "Ready",
        "Unknown",
        "Progressing",
        "reconciliation in progress",
        1,
        NOW
    )]));
    let out = service_state(&Observed {
        source: Some(&src),
        ..observe(Some(&o))
    });
    assert_outcome(&out, ServiceState::Provisioning, "source-not-ready");
    assert_eq!(out.failure_message.as_deref(), Some(SOURCE_NOT_READY));
    // Source unknown to the caller: same.
    assert_outcome(
        &state_of(&o),
        ServiceState::Provisioning,
        "source-not-ready",
    );
}

#[test]
fn source_not_ready_old_is_failed() {
    let o = hr_source_not_ready("2025-08-15T10:04:59Z"); // 10m1s before NOW
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "source-timeout");
    assert_eq!(
        out.failure_message.as_deref(),
        Some(&*format!(
            "{SOURCE_NOT_READY}; not ready for longer than 10m0s"
        ))
    );
    // Exactly the timeout is not yet "older than".
    let o = hr_source_not_ready("2025-08-15T10:05:00Z");
    assert_outcome(
        &state_of(&o),
        ServiceState::Provisioning,
        "source-not-ready",
    );
}

#[test]
fn source_object_stalled_is_failed() {
    let o = hr_source_not_ready("2025-08-15T10:14:00Z");
    let src = helmchart(json!([
        cond(
            "Stalled",
            "True",
            "InvalidChartReference",
            "invalid chart reference: chart 'nope' not found",
            1,
            NOW
        ),
        cond(
            "Ready",
            "False",
            "InvalidChartReference",
            "invalid chart reference: chart 'nope' not found",
            1,
            NOW
        )
    ]));
    let out = service_state(&Observed {
        source: Some(&src),
        ..observe(Some(&o))
    });
    assert_outcome(&out, ServiceState::Failed, "source-failed");
    assert_eq!(
        out.failure_message.as_deref(),
        Some(&*format!(
            "{SOURCE_NOT_READY}; source HelmChart kcm-system/podinfo is not ready: InvalidChartReference: \
             invalid chart reference: chart 'nope' not found"
        ))
    );
}

#[test]
fn source_failure_condition_is_failed() {
    let o = hr_source_not_ready("2025-08-15T10:14:00Z");
    let src = helmchart(json!([
        cond("FetchFailed", "True", "AuthenticationFailed", "401", 1, NOW),
        cond("Ready", "Unknown", "Progressing", "", 1, NOW)
    ]));
    let out = service_state(&Observed {
        source: Some(&src),
        ..observe(Some(&o))
    });
    assert_outcome(&out, ServiceState::Failed, "source-failed");
}

#[test]
fn source_new_revision_is_not_a_failure() {
    let o = hr_source_not_ready("2025-08-15T10:14:00Z");
    let src = helmchart(json!([cond(
        "Ready",
        "False",
        "NewChart",
        "pulled 'podinfo' chart with version '6.6.2'",
        1,
        NOW
    )]));
    let out = service_state(&Observed {
        source: Some(&src),
        ..observe(Some(&o))
    });
    assert_outcome(&out, ServiceState::Provisioning, "source-not-ready");
}

#[test]
fn source_missing_is_failed() {
    let msg = "Source 'GitRepository/kcm-system/app' not found";
    let o = ks(
        1,
        json!({"conditions": [ready_false("ArtifactFailed", msg)]}),
    );
    let out = service_state(&Observed {
        source_missing: true,
        ..observe(Some(&o))
    });
    assert_outcome(&out, ServiceState::Failed, "source-failed");
    assert_eq!(
        out.failure_message.as_deref(),
        Some(&*format!("{msg}; the source does not exist"))
    );
}

#[test]
fn kustomization_artifact_failed_with_failed_gitrepository_is_failed() {
    let msg = "Source artifact not found, retrying in 30s";
    let o = ks(
        1,
        json!({"conditions": [ready_false("ArtifactFailed", msg)]}),
    );
    let src = fixture("gr-failed");
    let out = service_state(&Observed {
        source: Some(&src),
        ..observe(Some(&o))
    });
    assert_outcome(&out, ServiceState::Failed, "source-failed");
    assert_eq!(
        out.failure_message.as_deref(),
        Some(
            "Source artifact not found, retrying in 30s; source GitRepository flux-system/gr-failed is not ready: \
             GitOperationFailed: failed to checkout and determine revision"
        )
    );
    // The same with a source that is still progressing.
    let src = fixture("gr-unknown");
    let out = service_state(&Observed {
        source: Some(&src),
        ..observe(Some(&o))
    });
    assert_outcome(&out, ServiceState::Provisioning, "source-not-ready");
}

#[test]
fn kustomization_path_not_found_is_failed() {
    let msg =
        "kustomization path not found: stat /tmp/kustomization-1/deploy: no such file or directory";
    let o = ks(
        1,
        json!({"conditions": [retrying(), ready_false("ArtifactFailed", msg)]}),
    );
    let out = state_of(&o);
    assert_outcome(&out, ServiceState::Failed, "path-not-found");
    assert_eq!(out.failure_message.as_deref(), Some(msg));
}

// ---------------------------------------------------------------------------------------------
// Rule 6: transient and unknown reasons
// ---------------------------------------------------------------------------------------------

#[test]
fn transient_reasons_are_provisioning_then_failed() {
    for reason in HELMRELEASE_TRANSIENT_REASONS
        .iter()
        .chain(["SomethingNew"].iter())
    {
        let o = hr(
            1,
            json!({"conditions": [retrying(), ready_false(reason, "hiccup")]}),
        );
        let out = state_of(&o);
        assert_outcome(&out, ServiceState::Provisioning, "not-ready");
        assert_eq!(out.failure_message.as_deref(), Some("hiccup"));

        let o = hr(
            1,
            json!({"conditions": [cond("Ready", "False", reason, "hiccup", 1, "2025-08-15T09:00:00Z")]}),
        );
        let out = state_of(&o);
        assert_outcome(&out, ServiceState::Failed, "not-ready-timeout");
        assert_eq!(
            out.failure_message.as_deref(),
            Some("hiccup; not ready for longer than 10m0s")
        );
    }
    for reason in KUSTOMIZATION_TRANSIENT_REASONS {
        let o = ks(1, json!({"conditions": [ready_false(reason, "hiccup")]}));
        assert_outcome(&state_of(&o), ServiceState::Provisioning, "not-ready");
    }
}

#[test]
fn health_check_canceled_is_provisioning() {
    let o = ks(
        1,
        json!({"conditions": [retrying(),
        ready_false("HealthCheckCanceled", "New reconciliation triggered by GitRepository/kcm-system/app")]}),
    );
    assert_outcome(&state_of(&o), ServiceState::Provisioning, "not-ready");
}

#[test]
fn outcome_serializes() {
    let out = state_of(&fixture("hr-remediated"));
    let v = serde_json::to_value(&out).unwrap();
    assert_eq!(v["state"], json!("Failed"));
    assert_eq!(v["reason"], json!("remediated"));
    assert_eq!(v["condition_type"], json!("Ready"));
}
