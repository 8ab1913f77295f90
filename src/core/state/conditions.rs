//! The conditions of a Flux object as the state mapping reads them, and kstatus.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::reasons::{COND_READY, COND_RECONCILING, COND_STALLED};
use crate::api::flux::FluxObject;
use crate::api::meta::Object;

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
    pub(super) fn pair(&self) -> (String, String) {
        (self.reason.to_string(), self.message.to_string())
    }
}

/// The first condition of the given type in `status.conditions`.
pub fn condition<'a>(obj: &'a Value, type_: &str) -> Option<Condition<'a>> {
    let c = Object(obj).condition(type_)?;
    Some(Condition {
        type_: c.type_(),
        status: match c.status() {
            "True" => CondStatus::True,
            "False" => CondStatus::False,
            _ => CondStatus::Unknown,
        },
        reason: c.reason(),
        message: c.message(),
        observed_generation: c.observed_generation(),
        last_transition_time: DateTime::parse_from_rfc3339(c.last_transition_time())
            .ok()
            .map(|t| t.with_timezone(&Utc)),
    })
}

pub(super) fn is_true(obj: &Value, type_: &str) -> bool {
    condition(obj, type_).is_some_and(|c| c.status == CondStatus::True)
}

pub(super) fn generation(obj: &Value) -> Option<i64> {
    Object(obj).generation()
}

pub(super) fn status_observed_generation(obj: &Value) -> Option<i64> {
    Object(obj).observed_generation()
}

pub(super) fn is_deleting(obj: &Value) -> bool {
    Object(obj).is_deleting()
}

pub(super) fn is_suspended(obj: &Value) -> bool {
    FluxObject(obj).suspended()
}

/// The condition was written for an older generation than `metadata.generation`.
pub(super) fn cond_is_stale(obj: &Value, c: &Condition) -> bool {
    matches!((c.observed_generation, generation(obj)), (Some(og), Some(g)) if og < g)
}

/// Ready=True that is current: the condition and `status.observedGeneration` both at
/// `metadata.generation` (each check skipped when a value is absent).
pub(super) fn ready_at_current_generation(obj: &Value, ready: &Condition) -> bool {
    if ready.status != CondStatus::True || cond_is_stale(obj, ready) {
        return false;
    }
    match (status_observed_generation(obj), generation(obj)) {
        (Some(og), Some(g)) => og == g,
        _ => true,
    }
}

/// Something was tried: a reconcile recorded an attempt, a release or an applied revision.
pub(super) fn attempted(obj: &Value) -> bool {
    FluxObject(obj).attempted()
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
