//! The ServiceSet status the adapter writes: one entry per service (state, version, type,
//! a mirror of the Flux object's Ready condition), kcm's `ServicesInReadyState` condition,
//! `deployed` and `provider`; and the merge patch that writes it.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use super::{Inputs, Provider, SERVICE_READY_CONDITION, SERVICES_READY_CONDITION};
use crate::api::kcm::{ServiceSet, ServiceStatus};
use crate::api::kinds;
use crate::api::meta::{Condition, Object};
use crate::core::render::{self, ServiceType};
use crate::core::state::{self, COND_READY, CondStatus, ServiceState};

pub(super) fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

pub(super) fn provider_json(p: Provider) -> Value {
    // Go's `omitempty` drops false booleans; the object stays.
    let mut m = Map::new();
    if p.ready {
        m.insert("ready".into(), true.into());
    }
    if p.suspended {
        m.insert("suspended".into(), true.into());
    }
    Value::Object(m)
}

pub(super) fn service_status(
    svc: &render::ServiceResult,
    set: &Value,
    deployed_version: Option<&str>,
    outcome: &state::StateOutcome,
    object: Option<&Value>,
    prev: Option<&Value>,
    now: DateTime<Utc>,
) -> Value {
    let state = outcome.state.as_str();
    let mut m = Map::new();
    // Transition time: kept unless the state really changed.
    let prev = prev.map(ServiceStatus);
    let since = match prev {
        Some(p) if p.state() == state && !p.last_state_transition_time().is_empty() => {
            p.last_state_transition_time().to_string()
        }
        _ => rfc3339(now),
    };
    m.insert("lastStateTransitionTime".into(), since.into());
    // Version: what was last confirmed Deployed.
    let version = if outcome.state == ServiceState::Deployed {
        deployed_version.map(str::to_string)
    } else {
        prev.map(|p| p.version().to_string())
            .filter(|v| !v.is_empty())
    };
    if let Some(v) = version {
        m.insert("version".into(), v.into());
    }
    let ty = match svc.service_type {
        Some(ServiceType::Helm) => "Helm",
        Some(ServiceType::Kustomize) => "Kustomize",
        Some(ServiceType::Resource) => "Resource",
        // The type is required by the CRD; without a template, keep what was known, else
        // Helm (kcm's default service kind).
        None => prev
            .map(|p| p.type_())
            .filter(|t| matches!(*t, "Helm" | "Kustomize" | "Resource"))
            .unwrap_or("Helm"),
    };
    m.insert("type".into(), ty.into());
    m.insert("name".into(), svc.name.clone().into());
    m.insert("namespace".into(), svc.namespace.clone().into());
    m.insert("template".into(), svc.template.clone().into());
    m.insert("state".into(), state.into());
    if let Some(msg) = &outcome.failure_message {
        m.insert("failureMessage".into(), msg.clone().into());
    }
    if let Some(c) = object.and_then(|o| mirror_ready(o, prev, set, now)) {
        m.insert("conditions".into(), json!([c]));
    }
    Value::Object(m)
}

/// The Flux object's Ready condition, as the service's `Ready` condition.
fn mirror_ready(
    obj: &Value,
    prev: Option<ServiceStatus>,
    set: &Value,
    now: DateTime<Utc>,
) -> Option<Value> {
    let c = state::condition(obj, COND_READY)?;
    let status = match c.status {
        CondStatus::True => "True",
        CondStatus::False => "False",
        CondStatus::Unknown => "Unknown",
    };
    let reason = if valid_reason(c.reason) {
        c.reason.to_string()
    } else {
        "Unknown".to_string()
    };
    let message: String = c.message.chars().take(32768).collect();
    let prev_cond = prev.and_then(|p| {
        p.conditions()
            .find(|x| x.type_() == SERVICE_READY_CONDITION)
    });
    let since = match prev_cond {
        Some(p) if p.status() == status && p.reason() == reason && p.message() == message => {
            p.last_transition_time().to_string()
        }
        _ => c
            .last_transition_time
            .map(rfc3339)
            .unwrap_or_else(|| rfc3339(now)),
    };
    let mut cond = json!({
        "type": SERVICE_READY_CONDITION,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": since,
    });
    if let Some(g) = Object(set).generation() {
        cond["observedGeneration"] = g.into();
    }
    Some(cond)
}

/// metav1.Condition's reason pattern.
fn valid_reason(r: &str) -> bool {
    let b = r.as_bytes();
    !b.is_empty()
        && b.len() <= 1024
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'))
        && !matches!(b[b.len() - 1], b',' | b':')
}

pub(super) fn build_status(set: &Value, services: Vec<Value>, inputs: &Inputs) -> Value {
    let total = services.len();
    let deployed = services
        .iter()
        .filter(|x| ServiceStatus(x).state() == ServiceState::Deployed.as_str())
        .count();
    let mut st = Map::new();
    // kcm's reference to the target cluster (self-management has no ClusterDeployment).
    let ss = ServiceSet(set);
    if !ss.self_management() {
        st.insert(
            "cluster".into(),
            json!({"apiVersion": kinds::CLUSTER_DEPLOYMENT.api_version,
                "kind": kinds::CLUSTER_DEPLOYMENT.kind,
                "name": ss.cluster(), "namespace": ss.namespace()}),
        );
    }
    // Conditions: ours replaced, others' kept.
    let mut conditions: Vec<Value> = inputs
        .previous_status
        .and_then(|p| p.get("conditions"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let status = if deployed == total { "True" } else { "False" };
    let message = format!("{deployed}/{total}");
    let mut cond = json!({
        "type": SERVICES_READY_CONDITION,
        "status": status,
        "reason": SERVICES_READY_CONDITION,
        "message": message,
        "lastTransitionTime": rfc3339(inputs.now),
    });
    if let Some(g) = Object(set).generation() {
        cond["observedGeneration"] = g.into();
    }
    match conditions
        .iter_mut()
        .find(|c| Condition(c).type_() == SERVICES_READY_CONDITION)
    {
        Some(old) => {
            let was = Condition(&*old);
            if was.status() == status && was.message() == message {
                cond["lastTransitionTime"] = old["lastTransitionTime"].clone();
            }
            *old = cond;
        }
        None => conditions.push(cond),
    }
    st.insert("conditions".into(), Value::Array(conditions));
    if !services.is_empty() {
        st.insert("services".into(), Value::Array(services));
    }
    st.insert("deployed".into(), (deployed == total).into());
    st.insert("provider".into(), provider_json(inputs.provider));
    Value::Object(st)
}

/// The JSON merge patch (RFC 7386) that turns `old` into `new`: changed keys, `null` for
/// removed ones, arrays whole.
pub fn merge_diff(old: &Value, new: &Value) -> Value {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let mut patch = Map::new();
            for (k, nv) in n {
                match o.get(k) {
                    Some(ov) if ov == nv => {}
                    Some(ov @ Value::Object(_)) if nv.is_object() => {
                        patch.insert(k.clone(), merge_diff(ov, nv));
                    }
                    _ => {
                        patch.insert(k.clone(), nv.clone());
                    }
                }
            }
            for k in o.keys() {
                if !n.contains_key(k) {
                    patch.insert(k.clone(), Value::Null);
                }
            }
            Value::Object(patch)
        }
        _ => new.clone(),
    }
}
