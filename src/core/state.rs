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

// ---------------------------------------------------------------------------------------------
// Condition types and reasons (checked against the controllers' sources).
// ---------------------------------------------------------------------------------------------

/// fluxcd/pkg apis/meta/conditions.go.
pub const COND_READY: &str = "Ready";
pub const COND_STALLED: &str = "Stalled";
pub const COND_RECONCILING: &str = "Reconciling";
/// helm-controller api/v2/condition_types.go.
pub const COND_RELEASED: &str = "Released";
pub const COND_TEST_SUCCESS: &str = "TestSuccess";
pub const COND_REMEDIATED: &str = "Remediated";

/// `DependencyNotReady`: helm-controller api/v2/condition_types.go `DependencyNotReadyReason`,
/// fluxcd/pkg apis/meta/conditions.go `DependencyNotReadyReason` (kustomize-controller).
/// Message: `dependency '<namespace>/<name>' is not ready` (both controllers' `checkDependencies`),
/// or `unable to get '<ns>/<name>' dependency: ...` (helm) / `dependency '<ns>/<name>' not found: ...`
/// (kustomize) / `dependency '<ns>/<name>' revision is not up to date` (kustomize).
pub const REASON_DEPENDENCY_NOT_READY: &str = "DependencyNotReady";

/// Ready=False reasons that mean "waiting for the source":
/// - `ArtifactFailed`: helm-controller api/v2/condition_types.go `ArtifactFailedReason`
///   (internal/controller/helmrelease_controller.go: "could not get Source object: ...",
///   "Source not ready: artifact not found. Retrying in ...", "Could not load chart: ...");
///   fluxcd/pkg apis/meta/conditions.go `ArtifactFailedReason` for kustomize-controller
///   (internal/controller/kustomization_controller.go: the getSource error, "Source artifact not
///   found, retrying in ...", "Source is not ready, artifact not found, retrying in ...", fetch and
///   path errors).
/// - `SourceNotReady`: a string literal in helm-controller internal/controller/helmrelease_controller.go
///   (`isSourceReady`: the source is at an unobserved generation, Stalled, or has no artifact;
///   the message is `<Kind> '<ns>/<name>' is not ready: <why>`). Kustomization never uses it.
pub const SOURCE_WAIT_REASONS: &[&str] = &["ArtifactFailed", "SourceNotReady"];

/// HelmRelease Ready=False reasons that are failures (Failed even while retrying).
///
/// - Release outcomes copied into Ready by `summarize()` (internal/reconcile/release.go) from
///   `Released`, `TestSuccess` and `Remediated` (api/v2/condition_types.go):
///   `InstallFailed`, `UpgradeFailed`, `TestFailed`, `RollbackSucceeded`, `RollbackFailed`,
///   `UninstallSucceeded`, `UninstallFailed`. "Any remediated state is considered an error":
///   a Remediated condition forces Ready=False even for the *Succeeded reasons.
/// - `ValuesError` (string literal, helmrelease_controller.go: valuesFrom could not be composed).
/// - `AccessDenied` (fluxcd/pkg apis/acl/conditions.go, cross-namespace ref refused; also Stalled).
/// - `InvalidCELExpression` (fluxcd/pkg apis/meta, healthCheckExprs / dependsOn readyExpr; also Stalled).
/// - `ReconcileError` (string literal, internal/reconcile/atomic_release.go: an action failed while
///   Ready was True).
///
/// Not here although domain.md §3 lists it: `HealthCheckCanceled` (fluxcd/pkg apis/meta) is written
/// when a new reconciliation request (e.g. a new source revision) cancels the running health
/// checks, followed by an immediate requeue; it is transient (see [`HELMRELEASE_TRANSIENT_REASONS`]).
pub const HELMRELEASE_FAILURE_REASONS: &[&str] = &[
    "InstallFailed",
    "UpgradeFailed",
    "TestFailed",
    "RollbackSucceeded",
    "RollbackFailed",
    "UninstallSucceeded",
    "UninstallFailed",
    "ValuesError",
    "AccessDenied",
    "InvalidCELExpression",
    "ReconcileError",
];

/// Kustomization Ready=False reasons that are failures (fluxcd/pkg apis/meta/conditions.go,
/// used by kustomize-controller internal/controller/kustomization_controller.go):
/// `BuildFailed`, `ReconciliationFailed` (apply / decryption / post-build errors),
/// `PruneFailed`, `HealthCheckFailed`, `InvalidCELExpression` (Stalled too),
/// `FeatureGateDisabled` (Stalled too), and `AccessDenied` (fluxcd/pkg apis/acl, Stalled too).
pub const KUSTOMIZATION_FAILURE_REASONS: &[&str] = &[
    "BuildFailed",
    "ReconciliationFailed",
    "PruneFailed",
    "HealthCheckFailed",
    "AccessDenied",
    "InvalidCELExpression",
    "FeatureGateDisabled",
];

/// HelmRelease Ready=False reasons that are transient or controller-side errors: Provisioning,
/// Failed once Ready has been False with them for longer than the timeout.
/// String literals in helm-controller internal/controller/helmrelease_controller.go
/// (`ChartMutateError`, `RESTClientError` — e.g. the kubeconfig Secret is missing or the cluster
/// unreachable —, `ResourceManagerError`, `FactoryError`, `ConfigFactoryErr` (deletion)),
/// internal/reconcile/atomic_release.go (`StateError`: "Could not determine release state"),
/// internal/reconcile/unlock.go (`PendingRelease`, copied from Released by summarize), and
/// `HealthCheckCanceled` (fluxcd/pkg apis/meta; "New reconciliation triggered by ...").
/// Any reason not listed anywhere in this module is handled the same way.
pub const HELMRELEASE_TRANSIENT_REASONS: &[&str] = &[
    "ChartMutateError",
    "RESTClientError",
    "ResourceManagerError",
    "FactoryError",
    "ConfigFactoryErr",
    "StateError",
    "PendingRelease",
    "HealthCheckCanceled",
];

/// Kustomization Ready=False reasons that are transient: `HealthCheckCanceled` (fluxcd/pkg
/// apis/meta) and `DirectoryCreationFailed` (source-controller api/v1 `DirCreationFailedReason`,
/// the controller's temp dir).
pub const KUSTOMIZATION_TRANSIENT_REASONS: &[&str] =
    &["HealthCheckCanceled", "DirectoryCreationFailed"];

/// Ready=Unknown / in-progress reasons: `Progressing`, `ProgressingWithRetry` (fluxcd/pkg
/// apis/meta), `AwaitingTests` (helm-controller internal/reconcile/install.go and upgrade.go,
/// TestSuccess=Unknown copied into Ready by summarize).
pub const PROGRESS_REASONS: &[&str] = &["Progressing", "ProgressingWithRetry", "AwaitingTests"];

/// Ready=True reasons: `InstallSucceeded`, `UpgradeSucceeded`, `TestSucceeded`
/// (helm-controller api/v2/condition_types.go), `ReconciliationSucceeded` (fluxcd/pkg apis/meta,
/// kustomize-controller). Informational: any Ready=True counts.
pub const SUCCESS_REASONS: &[&str] = &[
    "InstallSucceeded",
    "UpgradeSucceeded",
    "TestSucceeded",
    "ReconciliationSucceeded",
];

/// Stalled=True reasons. HelmRelease: `RetriesExceeded` ("Failed to <action> after <n> attempt(s)"),
/// `MissingRollbackTarget` (internal/reconcile/atomic_release.go), `AccessDenied`,
/// `InvalidCELExpression` (helmrelease_controller.go). Kustomization: `InvalidCELExpression`,
/// `FeatureGateDisabled`, `AccessDenied` (kustomization_controller.go). Informational: any
/// Stalled=True counts.
pub const STALLED_REASONS: &[&str] = &[
    "RetriesExceeded",
    "MissingRollbackTarget",
    "AccessDenied",
    "InvalidCELExpression",
    "FeatureGateDisabled",
];

/// Source Ready=False reasons that are progress, not failure. Source-controller summarizes Ready
/// from negative-polarity conditions that include `ArtifactOutdated` (reasons `NewRevision`,
/// `NewChart`) and `Reconciling` (`Progressing`, `ProgressingWithRetry`), so Ready=False with these
/// reasons is a normal revision update.
pub const SOURCE_PROGRESS_REASONS: &[&str] = &[
    "Progressing",
    "ProgressingWithRetry",
    "NewRevision",
    "NewChart",
];

/// Source-controller "abnormal-true" failure conditions (api/v1/condition_types.go):
/// a source with one of these True has failed, whatever its Ready says.
pub const SOURCE_FAILURE_CONDITIONS: &[&str] = &[
    "FetchFailed",
    "BuildFailed",
    "StorageOperationFailed",
    "IncludeUnavailable",
];

/// kustomize-controller internal/controller/kustomization_controller.go: `spec.path` does not exist
/// in the artifact (`fmt.Errorf("kustomization path not found: %w", err)`, reason ArtifactFailed).
/// A configuration error, not a source problem.
pub const KUSTOMIZATION_PATH_NOT_FOUND_PREFIX: &str = "kustomization path not found";

// ---------------------------------------------------------------------------------------------
// Conditions
// ---------------------------------------------------------------------------------------------

/// A condition's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CondStatus {
    True,
    False,
    /// "Unknown", and any other string.
    Unknown,
}

/// One `status.conditions[]` entry, borrowed from the object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition<'a> {
    pub type_: &'a str,
    pub status: CondStatus,
    pub reason: &'a str,
    pub message: &'a str,
    pub observed_generation: Option<i64>,
    pub last_transition_time: Option<DateTime<Utc>>,
}

impl Condition<'_> {
    fn pair(&self) -> (String, String) {
        (self.reason.to_string(), self.message.to_string())
    }
}

/// The first condition of the given type in `status.conditions`.
pub fn condition<'a>(obj: &'a Value, type_: &str) -> Option<Condition<'a>> {
    let conds = obj.pointer("/status/conditions")?.as_array()?;
    conds.iter().find_map(|c| {
        if c.get("type")?.as_str()? != type_ {
            return None;
        }
        let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
        let status = match s("status") {
            "True" => CondStatus::True,
            "False" => CondStatus::False,
            _ => CondStatus::Unknown,
        };
        Some(Condition {
            type_: c.get("type")?.as_str()?,
            status,
            reason: s("reason"),
            message: s("message"),
            observed_generation: c.get("observedGeneration").and_then(Value::as_i64),
            last_transition_time: c
                .get("lastTransitionTime")
                .and_then(Value::as_str)
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc)),
        })
    })
}

fn is_true(obj: &Value, type_: &str) -> bool {
    condition(obj, type_).is_some_and(|c| c.status == CondStatus::True)
}

fn generation(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/generation").and_then(Value::as_i64)
}

fn status_observed_generation(obj: &Value) -> Option<i64> {
    obj.pointer("/status/observedGeneration")
        .and_then(Value::as_i64)
}

fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

fn is_suspended(obj: &Value) -> bool {
    obj.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true)
}

/// The condition was written for an older generation than `metadata.generation`.
fn cond_is_stale(obj: &Value, c: &Condition) -> bool {
    matches!((c.observed_generation, generation(obj)), (Some(og), Some(g)) if og < g)
}

/// Ready=True that is current: the condition and `status.observedGeneration` both at
/// `metadata.generation` (each check skipped when a value is absent).
fn ready_at_current_generation(obj: &Value, ready: &Condition) -> bool {
    if ready.status != CondStatus::True || cond_is_stale(obj, ready) {
        return false;
    }
    match (status_observed_generation(obj), generation(obj)) {
        (Some(og), Some(g)) => og == g,
        _ => true,
    }
}

/// Something was tried: a reconcile recorded an attempt, a release or an applied revision.
fn attempted(obj: &Value) -> bool {
    let st = match obj.get("status") {
        Some(s) => s,
        None => return false,
    };
    let nonempty_str = |k: &str| {
        st.get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    let nonempty_arr = |k: &str| {
        st.get(k)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    };
    nonempty_str("lastAttemptedRevision")
        || nonempty_str("lastAppliedRevision")
        || nonempty_str("lastAttemptedReleaseAction")
        || st
            .get("lastAttemptedGeneration")
            .and_then(Value::as_i64)
            .is_some_and(|g| g > 0)
        || nonempty_arr("history")
        || st
            .pointer("/inventory/entries")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
}

/// The Flux kind of an object, from `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FluxKind {
    HelmRelease,
    Kustomization,
    Other,
}

pub fn flux_kind(obj: &Value) -> FluxKind {
    match obj.get("kind").and_then(Value::as_str) {
        Some("HelmRelease") => FluxKind::HelmRelease,
        Some("Kustomization") => FluxKind::Kustomization,
        _ => FluxKind::Other,
    }
}

// ---------------------------------------------------------------------------------------------
// kstatus
// ---------------------------------------------------------------------------------------------

/// kstatus of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KStatus {
    InProgress,
    Failed,
    Current,
    Terminating,
    NotFound,
}

impl KStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            KStatus::InProgress => "InProgress",
            KStatus::Failed => "Failed",
            KStatus::Current => "Current",
            KStatus::Terminating => "Terminating",
            KStatus::NotFound => "NotFound",
        }
    }
}

/// kstatus in the order of domain.md §3, which is fluxcd/cli-utils pkg/kstatus/status
/// (`checkGenericProperties`, then `checkReadyCondition`):
/// not an object (e.g. `Value::Null`) → NotFound; `metadata.deletionTimestamp` → Terminating;
/// `status.observedGeneration` present and != `metadata.generation` → InProgress;
/// `Reconciling=True` → InProgress; `Stalled=True` → Failed; Ready=True → Current; otherwise
/// InProgress.
///
/// Two details differ from cli-utils: it walks the condition list and takes whichever of
/// Reconciling=True / Stalled=True comes first (Flux deletes Reconciling when it marks Stalled, and
/// sorts Reconciling before Stalled, so it is the same for Flux objects); and an object without a
/// Ready condition is Current there ("absence of any known conditions means the resource is
/// current") but InProgress here, as domain.md says, since a Flux object without Ready has not been
/// reconciled yet.
pub fn kstatus(obj: &Value) -> KStatus {
    if !obj.is_object() {
        return KStatus::NotFound;
    }
    if is_deleting(obj) {
        return KStatus::Terminating;
    }
    if let (Some(og), Some(g)) = (status_observed_generation(obj), generation(obj))
        && og != g
    {
        return KStatus::InProgress;
    }
    if is_true(obj, COND_RECONCILING) {
        return KStatus::InProgress;
    }
    if is_true(obj, COND_STALLED) {
        return KStatus::Failed;
    }
    if is_true(obj, COND_READY) {
        return KStatus::Current;
    }
    KStatus::InProgress
}

// ---------------------------------------------------------------------------------------------
// Service state
// ---------------------------------------------------------------------------------------------

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
                    fmt_duration(observed.source_timeout)
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
                fmt_duration(observed.source_timeout)
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
    let s = |p: &str| src.pointer(p).and_then(Value::as_str).unwrap_or("");
    let (kind, ns, name) = (s("/kind"), s("/metadata/namespace"), s("/metadata/name"));
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

/// A Go-style duration (`1h2m3s`, `5m0s`, `300ms`) for messages.
fn fmt_duration(d: Duration) -> String {
    let total = d.as_secs();
    if total == 0 {
        return format!("{}ms", d.subsec_millis());
    }
    let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else if m > 0 {
        format!("{m}m{s}s")
    } else {
        format!("{s}s")
    }
}
