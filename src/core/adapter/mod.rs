//! The adapter's decisions, pure: given a ServiceSet, its templates, the Flux objects that
//! exist for it and what the provider (the StateManagementProvider) says, what to apply, what
//! to delete, what the status becomes and whether the finalizer goes on or off.
//!
//! `kubectl ksm run` (src/controller/) gathers the inputs from its watch caches and carries the
//! plan out; `kubectl ksm render` shows the same objects, because both call
//! [`crate::core::render::render`].
//!
//! What follows kcm (internal/controller/adapters/sveltos/serviceset_controller.go):
//! - the finalizer `k0rdent.mirantis.com/service-set`, added before anything else;
//! - `status.provider` from the SMP (`status.ready`, `spec.suspend`); while the SMP is not
//!   ready or is suspended nothing else changes (here: no Flux object is written or deleted);
//! - on deletion every service goes to Deleting, then the objects go, then the finalizer;
//! - `status.services[]` rebuilt from the spec in spec order; `lastStateTransitionTime`
//!   moves only when the state does; `version` is stamped when the service is Deployed (kcm
//!   releases a dependent service only when its dependency is Deployed at the spec version);
//! - `deployed` is true when every service is Deployed;
//! - the `ServicesInReadyState` condition with message `<deployed>/<total>`.

pub mod sync;

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};

use crate::core::render::{self, Outcome, Rendered, ServiceType};
use crate::core::selector;
use crate::core::state::{self, COND_READY, CondStatus, Observed, ServiceState};

/// kcm's ServiceSet finalizer; the adapter owns the ServiceSet's lifecycle as kcm's does.
pub const FINALIZER: &str = "k0rdent.mirantis.com/service-set";
/// The field manager of every write.
pub const FIELD_MANAGER: &str = "kubectl-ksm";
/// kcm's ServiceSet condition that counts the deployed services.
pub const SERVICES_READY_CONDITION: &str = "ServicesInReadyState";
/// The per-service condition: a mirror of the Flux object's Ready condition.
pub const SERVICE_READY_CONDITION: &str = "Ready";

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// What the StateManagementProvider says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Provider {
    pub ready: bool,
    pub suspended: bool,
}

impl Provider {
    pub fn of(smp: Option<&Value>) -> Provider {
        match smp {
            None => Provider::default(),
            Some(smp) => Provider {
                ready: smp.pointer("/status/ready").and_then(Value::as_bool) == Some(true),
                suspended: smp.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true),
            },
        }
    }

    /// Flux objects may be written.
    pub fn active(self) -> bool {
        self.ready && !self.suspended
    }
}

/// Whether the adapter serving `provider_name` (whose SMP is `smp`) reconciles `set`: the
/// ServiceSet names the provider and its labels match the SMP's selector (a missing selector
/// matches nothing: kcm refuses such an SMP).
pub fn serves(provider_name: &str, smp: Option<&Value>, set: &Value) -> bool {
    if s(set, "/spec/provider/name") != provider_name {
        return false;
    }
    let Some(smp) = smp else { return false };
    let selector = smp.pointer("/spec/selector").unwrap_or(&Value::Null);
    let labels = set.pointer("/metadata/labels").unwrap_or(&Value::Null);
    selector::matches(selector, labels)
}

/// The source of a Flux object as the state mapping wants it (see
/// [`state::Observed::source`]): `(kind, namespace, name)`. For a `chart.spec` HelmRelease it
/// is the HelmChart helm-controller generates, `<namespace>-<name>` in the source's namespace.
pub fn source_ref(flux: &Value) -> Option<(String, String, String)> {
    let ns = s(flux, "/metadata/namespace");
    let within = |r: &Value| match s(r, "/namespace") {
        "" => ns.to_string(),
        n => n.to_string(),
    };
    if let Some(r) = flux.pointer("/spec/chartRef") {
        return Some((s(r, "/kind").into(), within(r), s(r, "/name").into()));
    }
    if let Some(r) = flux.pointer("/spec/chart/spec/sourceRef") {
        let chart = format!("{ns}-{}", s(flux, "/metadata/name"));
        return Some(("HelmChart".into(), within(r), chart));
    }
    let r = flux.pointer("/spec/sourceRef")?;
    Some((s(r, "/kind").into(), within(r), s(r, "/name").into()))
}

/// Whether the state of a Flux object depends on its source (Ready=False waiting on it): only
/// then is the source worth reading.
pub fn needs_source(flux: &Value) -> bool {
    state::condition(flux, COND_READY).is_some_and(|c| {
        c.status == CondStatus::False && state::SOURCE_WAIT_REASONS.contains(&c.reason)
    })
}

/// A source the caller looked up for a Flux object.
#[derive(Debug, Clone)]
pub enum SourceLookup {
    Found(Value),
    Missing,
}

/// Everything one reconcile of one ServiceSet decides from.
pub struct Inputs<'a> {
    pub service_set: &'a Value,
    /// ServiceTemplates (the ServiceSet's namespace is enough; others are ignored).
    pub templates: &'a [Value],
    /// HelmReleases and Kustomizations of the ServiceSet's namespace that the ServiceSet
    /// controls (controller ownerReference with its uid) or that have the name of an object it
    /// wants; others may be passed and are ignored.
    pub live: &'a [&'a Value],
    /// Sources read for the live objects that [`needs_source`]: `(flux object name, lookup)`.
    pub sources: &'a [(String, SourceLookup)],
    pub provider: Provider,
    /// The status the ServiceSet has (or the caller last wrote, when that is newer).
    pub previous_status: Option<&'a Value>,
    pub now: DateTime<Utc>,
    pub source_timeout: Duration,
}

/// A Flux object to delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delete {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// Precondition: delete only this incarnation.
    pub uid: String,
}

/// What to do.
#[derive(Debug, Default)]
pub struct Plan {
    pub add_finalizer: bool,
    /// Remove the finalizer: the ServiceSet is being deleted and none of its objects remain
    /// in the caller's cache (the caller confirms with a fresh list first).
    pub remove_finalizer: bool,
    /// Objects to server-side apply (only those not already in sync).
    pub apply: Vec<Value>,
    pub delete: Vec<Delete>,
    /// The whole status the ServiceSet should have.
    pub status: Value,
    /// `status` differs from the previous one.
    pub status_changed: bool,
    /// Look again after this long even if nothing changes (a time-based state transition).
    pub requeue_after: Option<Duration>,
    /// The desired objects (in sync or not).
    pub desired: usize,
    /// The translation's output (diagnostics for the logs).
    pub rendered: Rendered,
}

fn is_deleting(v: &Value) -> bool {
    !s(v, "/metadata/deletionTimestamp").is_empty()
}

fn has_finalizer(set: &Value) -> bool {
    set.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|x| x.as_str() == Some(FINALIZER)))
}

/// The ServiceSet controls `obj` (controller ownerReference with its uid).
pub fn controlled_by(obj: &Value, set: &Value) -> bool {
    let uid = s(set, "/metadata/uid");
    !uid.is_empty()
        && obj
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|refs| {
                refs.iter().any(|r| {
                    r.get("controller").and_then(Value::as_bool) == Some(true)
                        && s(r, "/uid") == uid
                })
            })
}

fn key(obj: &Value) -> (&str, &str) {
    (s(obj, "/kind"), s(obj, "/metadata/name"))
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Decides one reconcile.
pub fn plan(inputs: &Inputs) -> Plan {
    let set = inputs.service_set;
    let mut plan = Plan::default();
    let owned: Vec<&Value> = inputs
        .live
        .iter()
        .copied()
        .filter(|o| controlled_by(o, set))
        .collect();
    let previous_services: Vec<&Value> = inputs
        .previous_status
        .and_then(|st| st.pointer("/services"))
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let previous = |name: &str, ns: &str| {
        previous_services
            .iter()
            .copied()
            .find(|p| s(p, "/name") == name && s(p, "/namespace") == ns)
    };

    if is_deleting(set) {
        if !has_finalizer(set) {
            // Not ours to hold: nothing to do.
            plan.status = inputs.previous_status.cloned().unwrap_or(json!({}));
            return plan;
        }
        // Every service goes to Deleting first (kcm does the same before removing anything).
        let services: Vec<Value> = previous_services
            .iter()
            .map(|p| {
                let mut p = (*p).clone();
                if s(&p, "/state") != ServiceState::Deleting.as_str() {
                    p["state"] = ServiceState::Deleting.as_str().into();
                    p["lastStateTransitionTime"] = rfc3339(inputs.now).into();
                    if let Some(m) = p.as_object_mut() {
                        m.remove("failureMessage");
                    }
                }
                p
            })
            .collect();
        let mut status = inputs.previous_status.cloned().unwrap_or(json!({}));
        status["services"] = Value::Array(services);
        status["provider"] = provider_json(inputs.provider);
        if let Some(m) = status.as_object_mut()
            && m.get("services")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
        {
            m.remove("services");
        }
        plan.status_changed = Some(&status) != inputs.previous_status;
        plan.status = status;
        if inputs.provider.active() {
            plan.delete = owned
                .iter()
                .filter(|o| !is_deleting(o))
                .map(|o| delete_of(o))
                .collect();
            plan.remove_finalizer = owned.is_empty();
        }
        return plan;
    }

    plan.add_finalizer = !has_finalizer(set);
    let rendered = render::render(&render::Inputs {
        service_set: set,
        templates: inputs.templates,
    });
    plan.desired = rendered.objects.len();

    // Objects wanted, and which of them may be written.
    let mut services = Vec::new();
    let mut wanted: Vec<(&str, &str)> = Vec::new();
    for svc in &rendered.services {
        let prev = previous(&svc.name, &svc.namespace);
        let (outcome, object) = match &svc.outcome {
            Outcome::Failed { message } => (
                state::StateOutcome {
                    state: ServiceState::Failed,
                    failure_message: Some(message.clone()),
                    reason: "render-failed",
                    condition_type: None,
                    condition: None,
                },
                None,
            ),
            Outcome::Uninstall => {
                // No object is wanted: the HelmRelease's deletion uninstalls the release.
                let name = format!("{}-{}", s(set, "/metadata/name"), svc.name);
                let live = owned
                    .iter()
                    .copied()
                    .find(|o| s(o, "/kind") == "HelmRelease" && s(o, "/metadata/name") == name);
                let st = if live.is_some() {
                    ServiceState::Deleting
                } else {
                    ServiceState::Deleted
                };
                (outcome_of(st, "uninstall"), live)
            }
            Outcome::Rendered { index } => {
                let desired = &rendered.objects[*index];
                let (kind, name) = key(desired);
                wanted.push((kind, name));
                let live = inputs.live.iter().copied().find(|o| key(o) == (kind, name));
                match live {
                    Some(l) if !controlled_by(l, set) => (
                        state::StateOutcome {
                            state: ServiceState::Failed,
                            failure_message: Some(format!(
                                "{kind} {}/{name} exists and is not controlled by this ServiceSet; \
                                 kubectl-ksm does not modify objects it does not own \
                                 (delete it or rename the service)",
                                s(l, "/metadata/namespace")
                            )),
                            reason: "not-owned",
                            condition_type: None,
                            condition: None,
                        },
                        None,
                    ),
                    _ => {
                        if inputs.provider.active()
                            && live.is_none_or(|l| !sync::in_sync(desired, l, FIELD_MANAGER))
                        {
                            plan.apply.push(desired.clone());
                        }
                        let source = live.and_then(|l| {
                            inputs
                                .sources
                                .iter()
                                .find(|(n, _)| n == s(l, "/metadata/name"))
                        });
                        let observed = Observed {
                            object: live,
                            source: match source {
                                Some((_, SourceLookup::Found(v))) => Some(v),
                                _ => None,
                            },
                            source_missing: matches!(source, Some((_, SourceLookup::Missing))),
                            in_spec: true,
                            now: inputs.now,
                            source_timeout: inputs.source_timeout,
                        };
                        let outcome = state::service_state(&observed);
                        if let Some(l) = live {
                            plan.requeue_after = min_opt(
                                plan.requeue_after,
                                timed_transition(l, &observed, outcome.state),
                            );
                        }
                        (outcome, live)
                    }
                }
            }
        };
        services.push(service_status(
            svc,
            set,
            inputs.templates,
            &outcome,
            object,
            prev,
            inputs.now,
        ));
    }

    // Owned objects no longer wanted are pruned. Their services left the spec and, as in
    // kcm, leave the status too.
    for o in &owned {
        if wanted.contains(&key(o)) {
            continue;
        }
        if inputs.provider.active() && !is_deleting(o) {
            plan.delete.push(delete_of(o));
        }
    }

    plan.status = build_status(set, services, inputs);
    plan.status_changed = Some(&plan.status) != inputs.previous_status;
    plan.rendered = rendered;
    plan
}

fn min_opt(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// When Ready=False waits on something the mapping times out (a source, a transient reason),
/// how long until the timeout passes, so that the state is looked at again then.
fn timed_transition(obj: &Value, observed: &Observed, outcome: ServiceState) -> Option<Duration> {
    // Only Ready=False that the mapping still calls Provisioning turns Failed with time.
    let ready = state::condition(obj, COND_READY)?;
    if ready.status != CondStatus::False || outcome != ServiceState::Provisioning {
        return None;
    }
    let since = ready.last_transition_time?;
    let timeout = chrono::Duration::from_std(observed.source_timeout).ok()?;
    let due = since + timeout;
    let left = (due - observed.now).to_std().ok()?;
    // Strictly later than the timeout counts (see state::Observed::source_timeout).
    Some(left + Duration::from_secs(1))
}

fn outcome_of(st: ServiceState, reason: &'static str) -> state::StateOutcome {
    state::StateOutcome {
        state: st,
        failure_message: None,
        reason,
        condition_type: None,
        condition: None,
    }
}

fn delete_of(o: &Value) -> Delete {
    Delete {
        api_version: s(o, "/apiVersion").into(),
        kind: s(o, "/kind").into(),
        namespace: s(o, "/metadata/namespace").into(),
        name: s(o, "/metadata/name").into(),
        uid: s(o, "/metadata/uid").into(),
    }
}

fn provider_json(p: Provider) -> Value {
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

/// The version kcm compares with the spec's to release dependents: `version`, then the
/// template's `spec.version`, then its `helm.chartSpec.version`, then the template name.
pub fn service_version(set: &Value, svc_name: &str, templates: &[Value]) -> Option<String> {
    let svc = set
        .pointer("/spec/services")
        .and_then(Value::as_array)?
        .iter()
        .find(|x| s(x, "/name") == svc_name)?;
    let v = s(svc, "/version");
    if !v.is_empty() {
        return Some(v.into());
    }
    let ns = match s(set, "/metadata/namespace") {
        "" => "default",
        n => n,
    };
    let template = s(svc, "/template");
    let t = templates
        .iter()
        .find(|t| s(t, "/metadata/name") == template && s(t, "/metadata/namespace") == ns)?;
    for p in ["/spec/version", "/spec/helm/chartSpec/version"] {
        let v = s(t, p);
        if !v.is_empty() {
            return Some(v.into());
        }
    }
    Some(template.into())
}

fn service_status(
    svc: &render::ServiceResult,
    set: &Value,
    templates: &[Value],
    outcome: &state::StateOutcome,
    object: Option<&Value>,
    prev: Option<&Value>,
    now: DateTime<Utc>,
) -> Value {
    let state = outcome.state.as_str();
    let mut m = Map::new();
    // Transition time: kept unless the state really changed.
    let since = match prev {
        Some(p) if s(p, "/state") == state && !s(p, "/lastStateTransitionTime").is_empty() => {
            s(p, "/lastStateTransitionTime").to_string()
        }
        _ => rfc3339(now),
    };
    m.insert("lastStateTransitionTime".into(), since.into());
    // Version: what was last confirmed Deployed.
    let version = if outcome.state == ServiceState::Deployed {
        service_version(set, &svc.name, templates)
    } else {
        prev.map(|p| s(p, "/version").to_string())
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
            .map(|p| s(p, "/type"))
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
    prev: Option<&Value>,
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
    let prev_cond = prev
        .and_then(|p| p.pointer("/conditions"))
        .and_then(Value::as_array)
        .and_then(|a| a.iter().find(|x| s(x, "/type") == SERVICE_READY_CONDITION));
    let since = match prev_cond {
        Some(p)
            if s(p, "/status") == status
                && s(p, "/reason") == reason
                && s(p, "/message") == message =>
        {
            s(p, "/lastTransitionTime").to_string()
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
    if let Some(g) = set.pointer("/metadata/generation").and_then(Value::as_i64) {
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

fn build_status(set: &Value, services: Vec<Value>, inputs: &Inputs) -> Value {
    let total = services.len();
    let deployed = services
        .iter()
        .filter(|x| s(x, "/state") == ServiceState::Deployed.as_str())
        .count();
    let mut st = Map::new();
    // kcm's reference to the target cluster (self-management has no ClusterDeployment).
    let self_managed = set
        .pointer("/spec/provider/selfManagement")
        .and_then(Value::as_bool)
        == Some(true);
    let cluster = s(set, "/spec/cluster");
    if !self_managed && !cluster.is_empty() {
        st.insert(
            "cluster".into(),
            json!({"apiVersion": render::KCM_API_VERSION, "kind": "ClusterDeployment",
                "name": cluster, "namespace": s(set, "/metadata/namespace")}),
        );
    }
    // Conditions: ours replaced, others' kept.
    let mut conditions: Vec<Value> = inputs
        .previous_status
        .and_then(|p| p.pointer("/conditions"))
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
    if let Some(g) = set.pointer("/metadata/generation").and_then(Value::as_i64) {
        cond["observedGeneration"] = g.into();
    }
    match conditions
        .iter_mut()
        .find(|c| s(c, "/type") == SERVICES_READY_CONDITION)
    {
        Some(old) => {
            if s(old, "/status") == status && s(old, "/message") == message {
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

#[cfg(test)]
mod tests;
