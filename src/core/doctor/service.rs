//! A ServiceSet of the Flux adapter: its set-level links (paused, the target cluster's
//! kubeconfig), then each service followed down its chain, ServiceTemplate → the release's
//! owner → Flux object → source, to its first failing link, and what the ServiceSet's status
//! says against it.

use std::collections::HashMap;
use std::ops::ControlFlow::{Break, Continue};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::findings::{self, Absent, Deployer, Failed, FluxRef, Paused, Stuck, Words};
use super::{Doctor, Finding, Link, ServiceView, SetLink, Severity, Stop};
use crate::api::flux::{FluxObject, SourceRef};
use crate::api::kcm::{Service, ServiceSet, ServiceStatus, ServiceTemplate};
use crate::api::meta::Object;
use crate::api::naming::{self, label_value};
use crate::api::{ObjectId, kinds};
use crate::core::adapter::ownership;
use crate::core::state::{self, Observed, ServiceState, StateOutcome};

/// What the set-level links give the services: their statuses by (name, namespace).
pub(super) struct FluxSet<'a> {
    reported: HashMap<(&'a str, &'a str), ServiceStatus<'a>>,
}

/// A service on its way down the chain.
struct FluxService<'a> {
    ss: ServiceSet<'a>,
    svc: Service<'a>,
    status: Option<ServiceStatus<'a>>,
    provider_blocks: bool,
    /// "service <name> of ServiceSet <namespace>/<name>".
    label: String,
    /// The links passed so far, as `Kind/namespace/name`.
    chain: Vec<String>,
}

impl FluxService<'_> {
    /// The finding `words` about `object`, at the end of the chain so far.
    fn at(&self, words: Words, object: ObjectId) -> Finding {
        words.about(object, self.chain.clone())
    }
}

/// What the Flux object and its source say, mapped as the adapter maps them.
struct Seen<'a> {
    flux: &'a Value,
    named: FluxRef<'a>,
    source: Option<&'a Value>,
    outcome: StateOutcome,
    /// The Ready (or Stalled) condition's reason and message.
    reason: String,
    message: String,
}

impl<'a> Doctor<'a, '_> {
    /// The set-level links of a ServiceSet of the Flux adapter.
    pub(super) fn flux_set(&mut self, set: &SetLink<'a>, found: &mut Vec<usize>) -> FluxSet<'a> {
        let ss = set.ss;
        if ss.paused() {
            let words = findings::serviceset_paused(ss.namespace(), ss.name(), Paused::Flux);
            found.push(self.push(words.about(ss.meta().id(), vec![set.display.clone()])));
        }
        let kubeconfig = self.kubeconfig(set);
        self.note(kubeconfig, found);
        FluxSet {
            reported: ss
                .service_statuses()
                .map(|st| ((st.name(), st.namespace()), st))
                .collect(),
        }
    }

    /// The target cluster's kubeconfig, by name (Secrets are never read).
    fn kubeconfig(&self, set: &SetLink) -> Option<Finding> {
        let ss = set.ss;
        if !self.options.secrets_collected || ss.self_management() {
            return None;
        }
        let (ns, cluster) = (ss.namespace(), ss.cluster());
        let secret = naming::kubeconfig_secret(cluster);
        self.snap
            .find(kinds::SECRET.kind, ns, &secret)
            .is_none()
            .then(|| {
                findings::kubeconfig_missing(ns, &secret, cluster).about(
                    ObjectId::new(&kinds::SECRET, ns, &secret),
                    vec![set.display.clone(), format!("Secret/{ns}/{secret}")],
                )
            })
    }

    /// One service of a ServiceSet of the Flux adapter, down its chain.
    pub(super) fn flux_service(
        &mut self,
        set: &SetLink<'a>,
        found: &FluxSet<'a>,
        svc: Service<'a>,
    ) -> ServiceView {
        let ss = set.ss;
        let status = found.reported.get(&(svc.name(), svc.namespace())).copied();
        let mut view = ServiceView::new(svc, status);
        let mut s = FluxService {
            ss,
            svc,
            status,
            provider_blocks: set.provider_blocks,
            label: format!(
                "service {} of ServiceSet {}/{}",
                svc.name(),
                ss.namespace(),
                ss.name()
            ),
            chain: vec![set.display.clone()],
        };
        if let Break(stop) = self.flux_links(&mut s, &mut view) {
            self.stop(stop, &mut view.findings);
        }
        view
    }

    /// The links of a service, in order.
    fn flux_links(&mut self, s: &mut FluxService<'a>, view: &mut ServiceView) -> Link {
        self.template(s)?;
        self.release_owner(s, view)?;
        let flux = self.flux_object(s, view)?;
        let seen = self.seen(s, flux, view);
        let duplicate = self.duplicate(s, flux);
        self.note(duplicate, &mut view.findings);
        let failing = self.first_failing(s, &seen);
        self.note(failing, &mut view.findings);
        self.reported(s, &seen, view);
        Continue(())
    }

    /// The service's ServiceTemplate: it exists and kcm did not mark it invalid.
    fn template(&self, s: &mut FluxService) -> Link {
        let ns = s.ss.namespace();
        let name = s.svc.template();
        s.chain.push(format!("ServiceTemplate/{ns}/{name}"));
        let invalid = |why, object| {
            let words = findings::template_invalid(&s.label, ns, name, why);
            Break(Stop::At(s.at(words, object)))
        };
        match self
            .snap
            .find(kinds::SERVICE_TEMPLATE.kind, ns, name)
            .map(ServiceTemplate)
        {
            Some(t) if t.valid() == Some(false) => {
                invalid(Some(t.validation_error()), t.meta().id())
            }
            None if self.snap.has_kind(kinds::SERVICE_TEMPLATE.kind) => {
                invalid(None, ObjectId::new(&kinds::SERVICE_TEMPLATE, ns, name))
            }
            _ => Continue(()),
        }
    }

    /// Another ServiceSet of the provider owns the release: the adapter writes nothing.
    fn release_owner(&self, s: &FluxService, view: &mut ServiceView) -> Link {
        let key = (
            s.ss.namespace().to_string(),
            s.ss.name().to_string(),
            s.svc.name().to_string(),
        );
        let Some(c) = self.flux_conflicts.get(&key) else {
            return Continue(());
        };
        let owner = format!("ServiceSet/{}/{}", c.owner.namespace, c.owner.service_set);
        view.owner = Some(owner.clone());
        let mut chain = s.chain.clone();
        chain.push(owner);
        let words = findings::flux_conflict(&s.label, c);
        Break(Stop::At(words.about(s.ss.meta().id(), chain)))
    }

    /// The Flux object: labelled by the adapter, or named `<serviceset>-<service>`. When
    /// there is none, the service is Pending (unless it is being removed) and the chain
    /// stops: at the kind that could not be read, at the failure the adapter reports, or at
    /// the missing object.
    fn flux_object(&self, s: &mut FluxService<'a>, view: &mut ServiceView) -> Link<&'a Value> {
        let (ns, set_name, name) = (s.ss.namespace(), s.ss.name(), s.svc.name());
        let object_name = naming::flux_object_name(set_name, name);
        let (set_label, svc_label) = (label_value(set_name), label_value(name));
        let flux = self
            .snap
            .flux_by_labels(ns, &set_label, &svc_label)
            .or_else(|| self.snap.find(kinds::HELM_RELEASE.kind, ns, &object_name))
            .or_else(|| self.snap.find(kinds::KUSTOMIZATION.kind, ns, &object_name));
        if let Some(flux) = flux {
            return Continue(flux);
        }
        if let Some(i) = self.unread(&[kinds::HELM_RELEASE.kind, kinds::KUSTOMIZATION.kind]) {
            return Break(Stop::Cited(i));
        }
        // The adapter marked it Failed without creating an object: a configuration error
        // (bad provider config, template, values) in its failureMessage.
        if let Some(st) = s.status.filter(|st| st.state() == "Failed") {
            let failed = Failed::NotRendered {
                failure_message: st.failure_message(),
            };
            let words = findings::service_failed(&s.label, ns, set_name, failed);
            return Break(Stop::At(s.at(words, s.ss.meta().id())));
        }
        if s.svc.uninstall() {
            return Break(Stop::Quiet);
        }
        view.observed = Some(ServiceState::Pending.as_str().into());
        let since = s.status.and_then(|st| transition_age(st, self.options.now));
        let stuck = since.is_some_and(|age| age > self.options.stuck_after);
        let reported = view.reported.as_deref();
        let absent = if s.provider_blocks {
            Absent::Expected
        } else if reported == Some("Deployed") || stuck {
            Absent::Overdue
        } else {
            Absent::NotYet
        };
        let words = findings::flux_missing(&s.label, ns, set_name, &object_name, reported, absent);
        let object = ObjectId {
            api_version: String::new(),
            kind: "HelmRelease|Kustomization".into(),
            namespace: ns.into(),
            name: object_name.clone(),
        };
        s.chain
            .push(format!("HelmRelease|Kustomization/{ns}/{object_name}"));
        Break(Stop::At(s.at(words, object)))
    }

    /// The Flux object and its source, mapped to a state as the adapter maps them; the view
    /// records them.
    fn seen(&self, s: &mut FluxService, flux: &'a Value, view: &mut ServiceView) -> Seen<'a> {
        let named = FluxRef {
            display: Object(flux).display(),
            kind: Object(flux).kind(),
            namespace: Object(flux).namespace(),
            name: Object(flux).name(),
        };
        view.flux_object = Some(named.display.clone());
        view.provider_object = Some(Object(flux).id());
        s.chain.push(named.display.clone());
        let source = self.source_of(flux);
        view.source = source.map(|x| Object(x).display());
        let outcome = state::service_state(&Observed {
            object: Some(flux),
            source,
            source_missing: source.is_none() && self.source_kind_collected(flux),
            in_spec: true,
            now: self.options.now,
            source_timeout: self.options.stuck_after,
        });
        view.observed = Some(outcome.state.as_str().into());
        let (reason, message) = outcome.condition.clone().unwrap_or_default();
        Seen {
            flux,
            named,
            source,
            outcome,
            reason,
            message,
        }
    }

    /// Other Flux objects deploying the same release fight with this one.
    fn duplicate(&self, s: &FluxService, flux: &Value) -> Option<Finding> {
        let target = ownership::target_of(flux)?;
        let all = self.releases.get(&target).filter(|a| a.len() > 1)?;
        let deployers: Vec<Deployer> = all
            .iter()
            .map(|o| {
                let m = Object(o);
                let service_set = m
                    .controller()
                    .filter(|r| {
                        r.get("kind").and_then(Value::as_str) == Some(kinds::SERVICE_SET.kind)
                    })
                    .and_then(|r| r.get("name").and_then(Value::as_str))
                    .or_else(|| Some(m.label(naming::LABEL_SERVICESET)).filter(|l| !l.is_empty()));
                Deployer {
                    display: m.display(),
                    namespace: m.namespace(),
                    service_set,
                }
            })
            .collect();
        let words = findings::flux_duplicate(&s.label, &target, Object(flux).kind(), &deployers);
        Some(s.at(words, ObjectId::of(flux)))
    }

    /// The first failing link below the ServiceSet: the source, or the Flux object itself.
    fn first_failing(&self, s: &FluxService, seen: &Seen) -> Option<Finding> {
        let (label, flux, outcome) = (&s.label, &seen.named, &seen.outcome);
        let source_failing = seen.source.filter(|src| source_failing(src));
        if let (Some(src), true) = (
            source_failing,
            matches!(seen.reason.as_str(), "ArtifactFailed" | "SourceNotReady")
                || outcome.state != ServiceState::Deployed,
        ) {
            let mut chain = s.chain.clone();
            chain.push(Object(src).display());
            return Some(findings::source_failing(label, src).about(ObjectId::of(src), chain));
        }
        let words = if FluxObject(seen.flux).suspended() {
            findings::flux_suspended(label, flux)
        } else {
            match outcome.reason {
                "stalled" => findings::flux_stalled(label, flux, &seen.reason, &seen.message),
                "dependency-not-ready" => {
                    findings::dependency_not_ready(label, flux, &seen.message)
                }
                "older-generation" => findings::flux_old_generation(
                    label,
                    flux,
                    Object(seen.flux).generation().unwrap_or(0),
                    Object(seen.flux).observed_generation().unwrap_or(0),
                ),
                _ if outcome.state == ServiceState::Failed => {
                    let message = outcome.failure_message.as_deref();
                    findings::flux_failing(
                        label,
                        flux,
                        &seen.reason,
                        message.unwrap_or(&seen.message),
                    )
                }
                _ => return None,
            }
        };
        Some(s.at(words, ObjectId::of(seen.flux)))
    }

    /// What the ServiceSet's status says against what Flux says: Failed with nothing found
    /// below, a disagreement, or Pending or Provisioning too long.
    fn reported(&mut self, s: &FluxService, seen: &Seen, view: &mut ServiceView) {
        let Some(st) = s.status else { return };
        let (ns, set_name) = (s.ss.namespace(), s.ss.name());
        let (reported, state) = (st.state(), seen.outcome.state);
        if reported == "Failed" && state == ServiceState::Failed && view.findings.is_empty() {
            let failed = Failed::Flux {
                failure_message: st.failure_message(),
                flux: &seen.named,
            };
            let words = findings::service_failed(&s.label, ns, set_name, failed);
            let f = s.at(words, s.ss.meta().id());
            view.findings.push(self.push(f));
        }
        if !reported.is_empty() && reported != state.as_str() {
            let words =
                findings::status_disagrees(&s.label, reported, &seen.named, state, &seen.reason);
            let f = s.at(words, s.ss.meta().id());
            view.findings.push(self.push(f));
        }
        let age = transition_age(st, self.options.now).filter(|a| *a > self.options.stuck_after);
        let errors = view
            .findings
            .iter()
            .any(|i| self.findings[*i].severity == Severity::Error);
        if let (ServiceState::Pending | ServiceState::Provisioning, Some(age), false) =
            (state, age, errors)
        {
            let stuck = Stuck::Flux {
                state,
                age,
                stuck_after: self.options.stuck_after,
                reason: &seen.reason,
                message: &seen.message,
                flux: &seen.named,
            };
            let words = findings::service_stuck(&s.label, ns, set_name, stuck);
            let f = s.at(words, ObjectId::of(seen.flux));
            view.findings.push(self.push(f));
        }
    }

    /// Whether the snapshot holds objects of the kind of the Flux object's source (so that a
    /// source not found is really missing, not just not collected).
    fn source_kind_collected(&self, flux: &Value) -> bool {
        self.snap.has_kind(FluxObject(flux).source_kind())
    }

    /// The source a Flux object reads from: the chartRef'd HelmChart or OCIRepository, the
    /// HelmChart helm-controller generates for a chart.spec (`<ns>-<name>`), or the
    /// Kustomization's sourceRef.
    fn source_of(&self, flux: &Value) -> Option<&'a Value> {
        let f = FluxObject(flux);
        let find = |r: &SourceRef| self.snap.find(&r.kind, &r.namespace, &r.name);
        if let Some(r) = f.chart_ref() {
            return find(&r);
        }
        if let (Some(repo), Some(chart)) = (f.chart_repository(), f.generated_chart()) {
            let (repo, hc) = (find(&repo), find(&chart));
            // A failing repository is the root cause of its HelmChart's failure; otherwise
            // the HelmChart carries the chart's own failures (pull, package, values files).
            return match (repo, hc) {
                (Some(repo), _) if source_failing(repo) => Some(repo),
                (_, Some(hc)) if source_failing(hc) => Some(hc),
                (repo, hc) => repo.or(hc),
            };
        }
        f.source().as_ref().and_then(find)
    }
}

/// A source is failing when it is Stalled, or Ready=False with a reason other than progress.
fn source_failing(src: &Value) -> bool {
    let src = Object(src);
    if src
        .condition("Stalled")
        .is_some_and(|c| c.status() == "True")
    {
        return true;
    }
    src.condition("Ready").is_some_and(|c| {
        c.status() == "False" && !matches!(c.reason(), "Progressing" | "ProgressingWithRetry" | "")
    })
}

/// How long ago a service's lastStateTransitionTime was.
fn transition_age(status: ServiceStatus, now: DateTime<Utc>) -> Option<Duration> {
    super::age_of(status.last_state_transition_time(), now)
}
