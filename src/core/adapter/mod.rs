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

pub mod memo;
pub mod ownership;
mod status;
pub mod sync;

pub use status::merge_diff;
use status::{build_status, provider_json, rfc3339, service_status};

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::api::flux::FluxObject;
use crate::api::kcm::{ServiceSet, ServiceStatus, ServiceTemplate, StateManagementProvider};
use crate::api::meta::Object;
use crate::api::{kinds, naming, selector};
use crate::core::render::{self, Outcome, Rendered};
use crate::core::state::{self, COND_READY, CondStatus, Observed, ServiceState};
use ownership::Target;

pub use crate::api::naming::{FIELD_MANAGER, FINALIZER};
/// kcm's ServiceSet condition that counts the deployed services.
pub const SERVICES_READY_CONDITION: &str = "ServicesInReadyState";
/// The per-service condition: a mirror of the Flux object's Ready condition.
pub const SERVICE_READY_CONDITION: &str = "Ready";

/// What the StateManagementProvider says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Provider {
    pub ready: bool,
    pub suspended: bool,
    /// The SMP does not exist (deleted): nothing holds a ServiceSet's deletion any more.
    pub gone: bool,
}

impl Provider {
    pub fn of(smp: Option<&Value>) -> Provider {
        match smp {
            None => Provider {
                gone: true,
                ..Provider::default()
            },
            Some(smp) => Provider {
                ready: StateManagementProvider(smp).ready(),
                suspended: StateManagementProvider(smp).suspended(),
                gone: false,
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
    if ServiceSet(set).provider_name() != provider_name {
        return false;
    }
    let Some(smp) = smp else { return false };
    selector::matches(
        StateManagementProvider(smp).selector(),
        Object(set).labels(),
    )
}

/// Whether the adapter serving `provider_name` reconciles `set` now: those it [`serves`], and,
/// once the SMP is gone (so its selector is unknown), a ServiceSet that names the provider and
/// is being deleted with kcm's finalizer on: its deletion must still complete (its own Flux
/// objects removed, the finalizer released), or it would stay forever.
pub fn reconciles(provider_name: &str, smp: Option<&Value>, set: &Value) -> bool {
    serves(provider_name, smp, set)
        || (smp.is_none()
            && ServiceSet(set).provider_name() == provider_name
            && is_deleting(set)
            && has_finalizer(set))
}

/// The source of a Flux object as the state mapping wants it (see
/// [`state::Observed::source`]): `(kind, namespace, name)`. For a `chart.spec` HelmRelease it
/// is the HelmChart helm-controller generates, `<namespace>-<name>` in the source's namespace.
pub fn source_ref(flux: &Value) -> Option<(String, String, String)> {
    FluxObject(flux)
        .source()
        .map(|r| (r.kind, r.namespace, r.name))
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

/// What the adapter wants of a ServiceSet, from its spec and its templates alone: the
/// render (objects, each service's outcome, diagnostics) and the version each service reports
/// once deployed. Made once per reconcile, before the plan (and by the claims index), or
/// recalled from what an earlier reconcile of the same ServiceSet kept ([`memo`]).
#[derive(Debug)]
pub struct Desired {
    pub rendered: Rendered,
    /// Each service's version once deployed ([`service_version`]), in the order of
    /// `rendered.services`.
    pub versions: Vec<Option<String>>,
    /// Recalled ([`memo::Remembered::recall`]): each object is its kind and name alone, its
    /// live copy known in sync.
    pub recalled: bool,
    /// What each object claims ([`ownership::target_of`], or as recalled), found once.
    targets: std::sync::OnceLock<Vec<Option<Target>>>,
}

impl Desired {
    /// The ServiceSet rendered with these ServiceTemplates (the ServiceSet's namespace is
    /// enough; others are ignored).
    pub fn of(set: &Value, templates: &[Value]) -> Desired {
        let rendered = render::render(&render::Inputs {
            service_set: set,
            templates,
        });
        let versions = rendered
            .services
            .iter()
            .map(|svc| service_version(set, &svc.name, templates))
            .collect();
        Desired {
            rendered,
            versions,
            recalled: false,
            targets: std::sync::OnceLock::new(),
        }
    }

    /// A render recalled ([`memo`]): its objects are their kind and name, each claiming its
    /// target of `targets`.
    fn recalled(
        rendered: Rendered,
        versions: Vec<Option<String>>,
        targets: Vec<Option<Target>>,
    ) -> Desired {
        Desired {
            rendered,
            versions,
            recalled: true,
            targets: targets.into(),
        }
    }

    /// What the object `index` claims ([`ownership::target_of`]).
    pub fn target(&self, index: usize) -> Option<Target> {
        let targets = self.targets.get_or_init(|| {
            let objects = &self.rendered.objects;
            objects.iter().map(ownership::target_of).collect()
        });
        targets.get(index).cloned().flatten()
    }
}

/// Everything one reconcile of one ServiceSet decides from.
pub struct Inputs<'a> {
    pub service_set: &'a Value,
    /// What the ServiceSet wants ([`Desired::of`] of it and its templates).
    pub desired: &'a Desired,
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
    /// The claims of the other ServiceSets this adapter serves (every shard's) on the targets
    /// this one deploys to ([`ownership`]): a service whose target another ServiceSet owns
    /// writes nothing. Claims on other targets, and this ServiceSet's own, are ignored.
    pub rivals: &'a [ownership::Claim],
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
    /// The ServiceSet is being deleted.
    pub deleting: bool,
    /// The ServiceSet is being deleted after its SMP was: the finalizer's release says so.
    pub provider_gone: bool,
    pub add_finalizer: bool,
    /// Remove the finalizer: the ServiceSet is being deleted and none of its objects remain
    /// in the caller's cache (the caller confirms with a fresh list first).
    pub remove_finalizer: bool,
    pub delete: Vec<Delete>,
    /// Objects to hand over to another ServiceSet's object for the same release or path:
    /// suspended first, then deleted, so that Flux neither uninstalls the release nor prunes
    /// what the new owner goes on applying.
    pub release: Vec<Delete>,
    /// The whole status the ServiceSet should have.
    pub status: Value,
    /// `status` differs from the previous one.
    pub status_changed: bool,
    /// Look again after this long even if nothing changes (a time-based state transition).
    pub requeue_after: Option<Duration>,
    /// The desired objects (in sync or not).
    pub desired: usize,
    /// The objects to server-side apply (only those not already in sync), by their index in
    /// the render's objects ([`Plan::to_apply`]).
    pub applied: Vec<usize>,
    /// The render's objects whose live copy was found in sync (by index), with that copy's
    /// resourceVersion.
    pub in_sync: Vec<(usize, String)>,
}

fn is_deleting(v: &Value) -> bool {
    Object(v).is_deleting()
}

fn has_finalizer(set: &Value) -> bool {
    Object(set).has_finalizer(FINALIZER)
}

/// The ServiceSet controls `obj` (controller ownerReference with its uid).
pub fn controlled_by(obj: &Value, set: &Value) -> bool {
    Object(obj).is_controlled_by(Object(set).uid())
}

fn key(obj: &Value) -> (&str, &str) {
    (Object(obj).kind(), Object(obj).name())
}

/// When to reconcile the ServiceSet again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Only when something it depends on changes.
    AwaitChange,
    /// After this long, whatever happens.
    After(Duration),
}

/// How long to wait before confirming again that a deleted ServiceSet's objects are gone.
pub const DELETION_RECHECK: Duration = Duration::from_secs(2);

/// What to do with the finalizer once the plan's writes are done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalizerRelease {
    /// The plan does not remove it.
    Keep,
    /// Remove it now: nothing of the ServiceSet remains.
    Remove,
    /// The API server still lists objects of the ServiceSet (a cache was behind): look again.
    Recheck(Duration),
}

impl Plan {
    /// When to reconcile again once every write of the plan has succeeded: at the earliest
    /// time-based state transition, at least every `resync` (zero: never), and soon while a
    /// deletion waits for the objects to go.
    pub fn next(&self, resync: Duration) -> Next {
        let mut next = self.requeue_after;
        if !resync.is_zero() {
            next = Some(next.map_or(resync, |n| n.min(resync)));
        }
        if self.deleting && !(self.delete.is_empty() && self.release.is_empty()) {
            // The objects' deletion events bring the ServiceSet back; look again regardless.
            next = Some(DELETION_RECHECK);
        }
        next.map_or(Next::AwaitChange, Next::After)
    }

    /// The objects to server-side apply, from the render the plan was made from (in the order
    /// of [`Plan::applied`]).
    pub fn to_apply<'a>(&'a self, rendered: &'a Rendered) -> impl Iterator<Item = &'a Value> {
        self.applied.iter().filter_map(|&i| rendered.objects.get(i))
    }

    /// Whether the finalizer may be removed, given how many objects the ServiceSet controls
    /// that a fresh list from the API server still shows (the caches the plan was made from
    /// may lag behind). Never while a write of this reconcile failed.
    pub fn release_finalizer(&self, writes_failed: bool, remaining: usize) -> FinalizerRelease {
        if !self.remove_finalizer || writes_failed {
            FinalizerRelease::Keep
        } else if remaining > 0 {
            FinalizerRelease::Recheck(DELETION_RECHECK)
        } else {
            FinalizerRelease::Remove
        }
    }
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
        .and_then(|st| st.get("services"))
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let previous = |name: &str, ns: &str| {
        previous_services.iter().copied().find(|p| {
            let p = ServiceStatus(p);
            p.name() == name && p.namespace() == ns
        })
    };

    if is_deleting(set) {
        plan.deleting = true;
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
                if ServiceStatus(&p).state() != ServiceState::Deleting.as_str() {
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
        // A provider that is suspended or not ready holds the deletion; one that is gone
        // cannot hold it any more.
        plan.provider_gone = inputs.provider.gone;
        if inputs.provider.active() || inputs.provider.gone {
            for o in owned.iter().filter(|o| !is_deleting(o)) {
                // A service of another ServiceSet waits for this release: it takes it over.
                let waiting = ownership::target_of(o)
                    .is_some_and(|t| inputs.rivals.iter().any(|r| r.target == t && !r.deleting));
                if waiting {
                    plan.release.push(delete_of(o));
                } else {
                    plan.delete.push(delete_of(o));
                }
            }
            plan.remove_finalizer = owned.is_empty();
        }
        return plan;
    }

    plan.add_finalizer = !has_finalizer(set);
    let rendered = &inputs.desired.rendered;
    plan.desired = rendered.objects.len();
    let claims = ownership::claims_with(set, &rendered.services, |i| inputs.desired.target(i));

    let version_of = |i: usize| inputs.desired.versions.get(i).and_then(|v| v.as_deref());
    // Objects wanted, and which of them may be written.
    let mut services = Vec::new();
    let mut wanted: Vec<(&str, &str)> = Vec::new();
    for (svc_index, svc) in rendered.services.iter().enumerate() {
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
                let name = naming::flux_object_name(Object(set).name(), &svc.name);
                let live = owned
                    .iter()
                    .copied()
                    .find(|o| key(o) == (kinds::HELM_RELEASE.kind, name.as_str()));
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
                let lost = claims
                    .iter()
                    .find(|(i, _)| *i == svc_index)
                    .and_then(|(_, mine)| {
                        ownership::verdict(mine, inputs.rivals)
                            .map(|(owner, pending)| (mine, owner, pending))
                    });
                if let Some((mine, owner, pending)) = lost {
                    // Another ServiceSet owns the release: write nothing for it, and hand over
                    // an object of ours that exists (from before the owner came).
                    if let Some(l) = live.filter(|l| controlled_by(l, set))
                        && inputs.provider.active()
                        && !is_deleting(l)
                    {
                        plan.release.push(delete_of(l));
                    }
                    let st = if pending {
                        ServiceState::Pending
                    } else {
                        ServiceState::Failed
                    };
                    let outcome = state::StateOutcome {
                        state: st,
                        failure_message: Some(ownership::loser_message(mine, owner)),
                        reason: "conflict",
                        condition_type: None,
                        condition: None,
                    };
                    services.push(service_status(
                        svc,
                        set,
                        version_of(svc_index),
                        &outcome,
                        None,
                        prev,
                        inputs.now,
                    ));
                    continue;
                }
                match live {
                    Some(l) if !controlled_by(l, set) => (
                        state::StateOutcome {
                            state: ServiceState::Failed,
                            failure_message: Some(format!(
                                "{kind} {}/{name} exists and is not controlled by this ServiceSet; \
                                 kubectl-ksm does not modify objects it does not own \
                                 (delete it or rename the service)",
                                Object(l).namespace()
                            )),
                            reason: "not-owned",
                            condition_type: None,
                            condition: None,
                        },
                        None,
                    ),
                    _ => {
                        if inputs.provider.active() {
                            // A recalled object is known in sync with its live copy.
                            match live.filter(|l| {
                                inputs.desired.recalled || sync::in_sync(desired, l, FIELD_MANAGER)
                            }) {
                                Some(l) => plan
                                    .in_sync
                                    .push((*index, Object(l).resource_version().to_string())),
                                None => plan.applied.push(*index),
                            }
                        }
                        let source = live.and_then(|l| {
                            inputs.sources.iter().find(|(n, _)| n == Object(l).name())
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
            version_of(svc_index),
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
    let o = Object(o);
    Delete {
        api_version: o.api_version().into(),
        kind: o.kind().into(),
        namespace: o.namespace().into(),
        name: o.name().into(),
        uid: o.uid().into(),
    }
}

/// The version kcm compares with the spec's to release dependents: `version`, then the
/// template's `spec.version`, then its `helm.chartSpec.version`, then the template name.
pub fn service_version(set: &Value, svc_name: &str, templates: &[Value]) -> Option<String> {
    let set = ServiceSet(set);
    let svc = set.service(svc_name)?;
    if !svc.version().is_empty() {
        return Some(svc.version().into());
    }
    let ns = set.meta().namespace_or_default();
    let template = svc.template();
    let t = templates
        .iter()
        .map(ServiceTemplate)
        .find(|t| t.name() == template && t.namespace() == ns)?;
    let chart_version = t.chart_spec_version();
    for v in [t.version(), chart_version] {
        if !v.is_empty() {
            return Some(v.into());
        }
    }
    Some(template.into())
}

#[cfg(test)]
mod tests;
