//! Service state of one ServiceSet service, read from its Flux object.
//!
//! This is the mapping from a Flux `HelmRelease` (helm.toolkit.fluxcd.io/v2) or `Kustomization`
//! (kustomize.toolkit.fluxcd.io/v1), and the Flux source it consumes, to the k0rdent ServiceSet
//! service state (`status.services[].state`, `failureMessage`). `kubectl ksm doctor` prints it and
//! the `run` adapter writes it, so it follows the controllers' code, not their documentation.
//!
//! PURE: no clock and no I/O. The caller passes the objects it read and the current time
//! ([`Observed::now`], a `chrono::DateTime<Utc>`).
//!
//! # Rules, in order ([`service_state`])
//!
//! | # | situation | state | `reason` code |
//! |---|-----------|-------|---------------|
//! | 1 | `metadata.deletionTimestamp` set | Deleting | `deleting` |
//! | 1 | object present, service no longer in the ServiceSet spec | Deleting | `not-in-spec` |
//! | 1 | object gone, service not in spec | Deleted | `deleted` |
//! | 2 | object gone, service in spec | Pending | `missing` |
//! | 2 | no `Ready`, `Stalled` nor `Reconciling` condition and no attempt recorded | Pending | `not-attempted` |
//! | 3 | `spec.suspend: true` | Deployed if Ready=True and `status.observedGeneration` is current (suspending bumps the generation but not Ready's), else Pending | `suspended-ready` / `suspended-not-ready` |
//! | 4 | `Stalled=True` at the current generation | Failed (message from Ready, else Stalled) | `stalled` |
//! | 4 | `Stalled=True` or `Ready` recorded for an older generation | Provisioning | `older-generation` |
//! | 5 | Ready=True at the current generation | Deployed | `ready` |
//! | 5 | Ready=True, `status.observedGeneration` older than `metadata.generation` | Provisioning | `older-generation` |
//! | 6 | Ready=False [`REASON_DEPENDENCY_NOT_READY`] | Pending (message names the dependency) | `dependency-not-ready` |
//! | 6 | Ready=False, a failure reason ([`HELMRELEASE_FAILURE_REASONS`], [`KUSTOMIZATION_FAILURE_REASONS`]) | Failed, even while `Reconciling=True ProgressingWithRetry` | `install-failed`, `upgrade-failed`, `test-failed`, `remediated`, `remediation-failed`, `uninstall-failed`, `values-error`, `access-denied`, `invalid-cel`, `reconcile-error`, `build-failed`, `reconciliation-failed`, `prune-failed`, `health-check-failed`, `feature-gate-disabled`, `path-not-found` |
//! | 6 | Ready=False [`SOURCE_WAIT_REASONS`] (`ArtifactFailed`, `SourceNotReady`) | Failed if the source is stalled, failed or missing (`source-failed`), or Ready has been False longer than [`Observed::source_timeout`] (`source-timeout`); else Provisioning (`source-not-ready`) | |
//! | 6 | Ready=False, any other reason ([`HELMRELEASE_TRANSIENT_REASONS`], [`KUSTOMIZATION_TRANSIENT_REASONS`], unknown) | Provisioning (`not-ready`), Failed once False longer than the timeout (`not-ready-timeout`) | |
//! | 7 | Ready=Unknown ([`PROGRESS_REASONS`]) | Provisioning | `progressing` |
//! | 7 | no Ready, `Reconciling=True` | Provisioning | `reconciling` |
//! | 7 | no Ready, something attempted | Provisioning | `no-ready` |
//!
//! # Generations
//!
//! kstatus ([`kstatus`]) treats `status.observedGeneration != metadata.generation` as InProgress.
//! That is right for kstatus but wrong for a service state: Flux writes `status.observedGeneration`
//! only on success (kustomize-controller `finalizeStatus`: only when Ready=True) or, for
//! helm-controller, on success and terminal errors (the deferred patch with
//! `WithStatusObservedGeneration`). A retrying failure (BuildFailed, HealthCheckFailed,
//! InstallFailed with retries left, remediated) keeps the old value (`-1` before the first success),
//! so the object-level check would hide every retrying failure as Provisioning.
//! Every condition, though, carries the generation it was written for (fluxcd/pkg
//! runtime/conditions `Set` always stamps `observedGeneration = metadata.generation`). So:
//! the Ready (or Stalled) condition's own `observedGeneration` decides whether the status is
//! stale; `status.observedGeneration` is required to match only for Ready=True (Deployed).
//! Missing generations (older objects, conditions without `observedGeneration`) are not stale,
//! as in kstatus `checkGeneration`.
//!
//! # Time
//!
//! `lastTransitionTime` changes only when a condition's status, reason or message changes
//! (fluxcd/pkg runtime/conditions `hasSameState`), so "Ready has been False for longer than the
//! timeout" measures how long the same failure has been reported. kustomize-controller marks Ready
//! Unknown at the start of every `reconcile()` pass, so for Kustomization failures that happen after
//! the source was fetched (ArtifactFailed from fetching or extracting the artifact) the time restarts
//! at every retry; those stay Provisioning unless the source itself is failed
//! (the `kustomization path not found` error is recognised and is Failed at once).

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::api::duration::format_coarse;
use crate::api::meta::Object;

mod conditions;
mod reasons;
pub mod sveltos;

pub use conditions::*;
pub use reasons::*;

/// The state of one service in ServiceSet `status.services[]`, with kcm's strings
/// (k0rdent/kcm api/v1beta1 serviceset_types.go; `ServiceStateNotDeployed` is "Pending").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum ServiceState {
    Deployed,
    Provisioning,
    Failed,
    Pending,
    Deleting,
    Deleted,
}

impl ServiceState {
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceState::Deployed => "Deployed",
            ServiceState::Provisioning => "Provisioning",
            ServiceState::Failed => "Failed",
            ServiceState::Pending => "Pending",
            ServiceState::Deleting => "Deleting",
            ServiceState::Deleted => "Deleted",
        }
    }
}

impl std::fmt::Display for ServiceState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the caller observed for one service.
#[derive(Clone, Debug)]
pub struct Observed<'a> {
    /// The Flux object (HelmRelease or Kustomization). None: it does not exist.
    pub object: Option<&'a Value>,
    /// Its source, if the caller read it: for a HelmRelease the HelmChart it uses (from
    /// `status.helmChart` or `spec.chartRef`) or the OCIRepository/ExternalArtifact of
    /// `spec.chartRef`; for a Kustomization `spec.sourceRef` (GitRepository, OCIRepository,
    /// Bucket, ExternalArtifact). None: unknown or missing (see `source_missing`).
    pub source: Option<&'a Value>,
    /// The caller looked the source up and it does not exist (HTTP 404). Only read when
    /// `source` is None.
    pub source_missing: bool,
    /// The service is still in the ServiceSet spec (false: it is being removed).
    pub in_spec: bool,
    /// The current time (the function never reads a clock).
    pub now: DateTime<Utc>,
    /// How long Ready may stay False with a source-wait reason (ArtifactFailed/SourceNotReady) or
    /// an unclassified/transient reason before the service counts as Failed. Measured from the
    /// Ready condition's `lastTransitionTime` (strictly longer than the timeout → Failed).
    pub source_timeout: Duration,
}

/// The service state and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateOutcome {
    pub state: ServiceState,
    /// For Failed; also for Pending/Provisioning when something specific blocks (a dependency, the
    /// source, a transient error, suspension).
    pub failure_message: Option<String>,
    /// A short stable code of the rule that decided (see the module table).
    pub reason: &'static str,
    /// The type of the Flux condition that decided (`Ready` or `Stalled`), if one did.
    pub condition_type: Option<&'static str>,
    /// `(reason, message)` of that condition.
    pub condition: Option<(String, String)>,
}

impl StateOutcome {
    fn new(state: ServiceState, reason: &'static str) -> StateOutcome {
        StateOutcome {
            state,
            failure_message: None,
            reason,
            condition_type: None,
            condition: None,
        }
    }

    fn message(mut self, msg: impl Into<String>) -> StateOutcome {
        let msg = msg.into();
        self.failure_message = if msg.is_empty() { None } else { Some(msg) };
        self
    }

    fn cond(mut self, type_: &'static str, c: &Condition) -> StateOutcome {
        self.condition_type = Some(type_);
        self.condition = Some(c.pair());
        self
    }
}

/// The service state of one service (rules in the module documentation).
pub fn service_state(observed: &Observed) -> StateOutcome {
    use ServiceState::*;

    // 1-2. Existence and deletion.
    let obj = match observed.object {
        None if observed.in_spec => return StateOutcome::new(Pending, "missing"),
        None => return StateOutcome::new(Deleted, "deleted"),
        Some(o) => o,
    };
    if is_deleting(obj) {
        return StateOutcome::new(Deleting, "deleting");
    }
    if !observed.in_spec {
        return StateOutcome::new(Deleting, "not-in-spec");
    }

    let kind = flux_kind(obj);
    let ready = condition(obj, COND_READY);
    let stalled = condition(obj, COND_STALLED).filter(|c| c.status == CondStatus::True);
    let reconciling = condition(obj, COND_RECONCILING).filter(|c| c.status == CondStatus::True);

    // 2. Nothing attempted yet.
    if ready.is_none() && stalled.is_none() && reconciling.is_none() && !attempted(obj) {
        return StateOutcome::new(Pending, "not-attempted");
    }

    // 3. Suspended: the controller does nothing, the last status stays.
    if is_suspended(obj) {
        let out = match &ready {
            // Suspending bumps metadata.generation; helm- and kustomize-controller record it in
            // status.observedGeneration and leave the Ready condition (and its generation) as
            // it was. So status.observedGeneration decides here, not the condition's.
            Some(r)
                if r.status == CondStatus::True
                    && match (status_observed_generation(obj), generation(obj)) {
                        (Some(og), Some(g)) => og == g,
                        _ => true,
                    } =>
            {
                return StateOutcome::new(Deployed, "suspended-ready").cond(COND_READY, r);
            }
            Some(r) => StateOutcome::new(Pending, "suspended-not-ready").cond(COND_READY, r),
            None => StateOutcome::new(Pending, "suspended-not-ready"),
        };
        return out.message("reconciliation is suspended (spec.suspend: true)");
    }

    // 4. Stalled: terminal, the controller will not retry this generation.
    if let Some(s) = &stalled {
        if cond_is_stale(obj, s) {
            return older_generation(obj, COND_STALLED, s);
        }
        let msg = match &ready {
            Some(r) if r.status == CondStatus::False && !r.message.is_empty() => {
                failure_message(obj, kind, r)
            }
            _ => s.message.to_string(),
        };
        return StateOutcome::new(Failed, "stalled")
            .message(msg)
            .cond(COND_STALLED, s);
    }

    let Some(ready) = ready else {
        // 7. No Ready yet, but something was attempted (or is running).
        return match &reconciling {
            Some(r) => StateOutcome::new(Provisioning, "reconciling").cond(COND_RECONCILING, r),
            None => StateOutcome::new(Provisioning, "no-ready"),
        };
    };

    if cond_is_stale(obj, &ready) {
        return older_generation(obj, COND_READY, &ready);
    }

    match ready.status {
        // 5.
        CondStatus::True => {
            if ready_at_current_generation(obj, &ready) {
                StateOutcome::new(Deployed, "ready").cond(COND_READY, &ready)
            } else {
                older_generation(obj, COND_READY, &ready)
            }
        }
        // 6.
        CondStatus::False => ready_false(observed, obj, kind, &ready),
        // 7.
        CondStatus::Unknown => {
            StateOutcome::new(Provisioning, "progressing").cond(COND_READY, &ready)
        }
    }
}

fn older_generation(obj: &Value, type_: &'static str, c: &Condition) -> StateOutcome {
    let g = generation(obj).unwrap_or_default();
    let og = c
        .observed_generation
        .filter(|og| *og < g)
        .or(status_observed_generation(obj))
        .unwrap_or_default();
    StateOutcome::new(ServiceState::Provisioning, "older-generation")
        .message(format!(
            "generation {g} not reconciled yet (status is for generation {og})"
        ))
        .cond(type_, c)
}

fn ready_false(
    observed: &Observed,
    obj: &Value,
    kind: FluxKind,
    ready: &Condition,
) -> StateOutcome {
    use ServiceState::*;
    let reason = ready.reason;
    let out = |state, code| StateOutcome::new(state, code).cond(COND_READY, ready);

    if reason == REASON_DEPENDENCY_NOT_READY {
        return out(Pending, "dependency-not-ready").message(ready.message);
    }

    let failure_reasons: &[&str] = match kind {
        FluxKind::HelmRelease => HELMRELEASE_FAILURE_REASONS,
        FluxKind::Kustomization => KUSTOMIZATION_FAILURE_REASONS,
        FluxKind::Other => &[],
    };
    let is_failure = match kind {
        FluxKind::Other => {
            HELMRELEASE_FAILURE_REASONS.contains(&reason)
                || KUSTOMIZATION_FAILURE_REASONS.contains(&reason)
        }
        _ => failure_reasons.contains(&reason),
    };
    if is_failure {
        return out(Failed, failure_code(reason)).message(failure_message(obj, kind, ready));
    }

    if SOURCE_WAIT_REASONS.contains(&reason) {
        if kind != FluxKind::HelmRelease
            && ready
                .message
                .starts_with(KUSTOMIZATION_PATH_NOT_FOUND_PREFIX)
        {
            return out(Failed, "path-not-found").message(ready.message);
        }
        if let Some(why) = source_failure(observed) {
            return out(Failed, "source-failed").message(join(ready.message, &why));
        }
        if older_than(ready, observed.now, observed.source_timeout) {
            return out(Failed, "source-timeout").message(join(
                ready.message,
                &format!(
                    "not ready for longer than {}",
                    format_coarse(observed.source_timeout)
                ),
            ));
        }
        return out(Provisioning, "source-not-ready").message(ready.message);
    }

    // Transient, controller-side or unknown reasons.
    if older_than(ready, observed.now, observed.source_timeout) {
        return out(Failed, "not-ready-timeout").message(join(
            ready.message,
            &format!(
                "not ready for longer than {}",
                format_coarse(observed.source_timeout)
            ),
        ));
    }
    out(Provisioning, "not-ready").message(ready.message)
}

fn failure_code(reason: &str) -> &'static str {
    match reason {
        "InstallFailed" => "install-failed",
        "UpgradeFailed" => "upgrade-failed",
        "TestFailed" => "test-failed",
        "RollbackSucceeded" | "UninstallSucceeded" => "remediated",
        "RollbackFailed" => "remediation-failed",
        "UninstallFailed" => "uninstall-failed",
        "ValuesError" => "values-error",
        "AccessDenied" => "access-denied",
        "InvalidCELExpression" => "invalid-cel",
        "ReconcileError" => "reconcile-error",
        "BuildFailed" => "build-failed",
        "ReconciliationFailed" => "reconciliation-failed",
        "PruneFailed" => "prune-failed",
        "HealthCheckFailed" => "health-check-failed",
        "FeatureGateDisabled" => "feature-gate-disabled",
        _ => "failed",
    }
}

/// The failure message of a Ready=False condition. For a remediated HelmRelease (Ready copies the
/// Remediated condition: RollbackSucceeded/Failed, UninstallSucceeded/Failed) the message says only
/// that the remediation ran; the failure itself is in `TestSuccess=False` (tests failed) or
/// `Released=False`, so it comes first: `<failure>; <remediation>`.
fn failure_message(obj: &Value, kind: FluxKind, ready: &Condition) -> String {
    let remediation = matches!(
        ready.reason,
        "RollbackSucceeded" | "RollbackFailed" | "UninstallSucceeded" | "UninstallFailed"
    );
    if kind == FluxKind::HelmRelease && remediation {
        let released = condition(obj, COND_RELEASED);
        let test = condition(obj, COND_TEST_SUCCESS);
        let cause = match (&released, &test) {
            (Some(r), _) if r.status == CondStatus::False && r.reason != ready.reason => Some(r),
            (_, Some(t)) if t.status == CondStatus::False => Some(t),
            _ => None,
        };
        if let Some(c) = cause.filter(|c| !c.message.is_empty() && c.message != ready.message) {
            return join(c.message, ready.message);
        }
    }
    ready.message.to_string()
}

/// Why the source counts as failed, or None (healthy, progressing, or unknown).
/// Failed: missing (`source_missing`); `Stalled=True`; a True source-controller failure condition
/// ([`SOURCE_FAILURE_CONDITIONS`]) or `SourceVerified=False`; Ready=False with a reason that is not
/// progress ([`SOURCE_PROGRESS_REASONS`]).
pub fn source_failure(observed: &Observed) -> Option<String> {
    let Some(src) = observed.source else {
        return observed
            .source_missing
            .then(|| "the source does not exist".to_string());
    };
    let name = source_name(src);
    let said = |c: &Condition| {
        if c.message.is_empty() {
            format!("source {name} is not ready: {}", c.reason)
        } else {
            format!("source {name} is not ready: {}: {}", c.reason, c.message)
        }
    };
    if let Some(c) = condition(src, COND_STALLED).filter(|c| c.status == CondStatus::True) {
        return Some(said(&c));
    }
    for t in SOURCE_FAILURE_CONDITIONS {
        if let Some(c) = condition(src, t).filter(|c| c.status == CondStatus::True) {
            return Some(said(&c));
        }
    }
    if let Some(c) = condition(src, "SourceVerified").filter(|c| c.status == CondStatus::False) {
        return Some(said(&c));
    }
    if let Some(c) = condition(src, COND_READY)
        && c.status == CondStatus::False
        && !SOURCE_PROGRESS_REASONS.contains(&c.reason)
    {
        return Some(said(&c));
    }
    None
}

fn source_name(src: &Value) -> String {
    let o = Object(src);
    let (kind, ns, name) = (o.kind(), o.namespace(), o.name());
    let obj = if ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    };
    if kind.is_empty() {
        obj
    } else {
        format!("{kind} {obj}")
    }
}

/// The dependency named in a DependencyNotReady message (`dependency '<ns>/<name>' ...` or
/// `unable to get '<ns>/<name>' dependency: ...`).
pub fn dependency_name(message: &str) -> Option<&str> {
    let start = message.find('\'')? + 1;
    let len = message[start..].find('\'')?;
    Some(&message[start..start + len])
}

/// Ready has been in its current state for strictly longer than `timeout`.
fn older_than(c: &Condition, now: DateTime<Utc>, timeout: Duration) -> bool {
    let Some(ltt) = c.last_transition_time else {
        return false;
    };
    let timeout = TimeDelta::from_std(timeout).unwrap_or(TimeDelta::MAX);
    now.signed_duration_since(ltt) > timeout
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}; {b}"),
    }
}
