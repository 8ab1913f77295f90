//! `doctor`: from a stuck service to its root cause. PURE: a snapshot of objects (from a live
//! cluster or a saved dump, the same either way) and the time come in; findings come out.
//!
//! Each ServiceSet is followed down its chain, StateManagementProvider → ServiceSet →
//! ServiceTemplate → Flux object → source, and each service's first failing link is named,
//! with a stable code, the failing object's own message and a runnable next step.

pub mod codes;
mod dependents;
mod mcs;
mod service;
mod snapshot;
mod sveltos;
mod sveltos_service;

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::api::kcm::{Reference, ServiceSet, StateManagementProvider};
use crate::api::naming::{self, ANNOTATION_PAUSED};
use crate::api::{ObjectId, kinds, selector};
use crate::core::adapter::ownership;
use crate::core::cel::Limits;
use crate::core::provider::{self, Translator};
use crate::core::readiness::{self, Explain, Rbac};
use crate::diag::Diagnostic;
pub use crate::diag::Severity;
pub use mcs::McsView;
pub use snapshot::Snapshot;

/// A finding as the diagnosis builds it; it becomes a [`Diagnostic`] about `object`.
struct Finding {
    severity: Severity,
    code: &'static str,
    /// The failing object.
    object: ObjectId,
    /// The chain from the provider down to the failing object, as `Kind/namespace/name`.
    chain: Vec<String>,
    message: String,
    /// A runnable next step.
    hint: String,
}

impl From<Finding> for Diagnostic {
    fn from(f: Finding) -> Diagnostic {
        Diagnostic::new(f.code, f.severity, f.message)
            .help(f.hint)
            .about(f.object, f.chain)
    }
}

/// One service as doctor sees it (for the tree).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceView {
    pub name: String,
    pub namespace: String,
    /// What the ServiceSet's status says.
    pub reported: Option<String>,
    /// What the Flux object says, through the same mapping the adapter uses.
    pub observed: Option<String>,
    pub flux_object: Option<String>,
    pub source: Option<String>,
    /// Indexes into `Report::findings`.
    pub findings: Vec<usize>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSetView {
    pub service_set: ObjectId,
    pub provider: String,
    /// Which chain doctor followed: "Sveltos" for kcm's own adapter, "Flux" otherwise.
    pub translation: &'static str,
    pub services: Vec<ServiceView>,
    /// Findings about the ServiceSet or its provider.
    pub findings: Vec<usize>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub service_sets: usize,
    pub services: usize,
    pub healthy_services: usize,
    pub errors: usize,
    pub warnings: usize,
}

#[derive(Debug, Clone)]
pub struct Report {
    pub version: u32,
    /// Every finding, a diagnostic about an object (its help is a runnable next step).
    pub findings: Vec<Diagnostic>,
    pub summary: Summary,
    pub service_sets: Vec<ServiceSetView>,
    /// The MultiClusterServices (their findings: blocked targets, failed validations).
    pub multi_cluster_services: Vec<McsView>,
    /// Findings about the diagnosis as a whole (a kind it could not read), not about one
    /// ServiceSet: indexes into `findings`.
    pub general: Vec<usize>,
}

impl Report {
    pub fn healthy(&self) -> bool {
        !self
            .findings
            .iter()
            .any(|f| matches!(f.severity, Severity::Error | Severity::Warning))
    }
}

#[derive(Debug, Clone)]
pub struct Options {
    pub now: DateTime<Utc>,
    /// A service Pending or Provisioning longer than this is stuck.
    pub stuck_after: Duration,
    /// Only ServiceSets in this namespace (None: all).
    pub namespace: Option<String>,
    /// Only the ServiceSet of this name.
    pub service_set: Option<String>,
    /// Whether Secrets were collected (their names); if not, the kubeconfig check is skipped.
    pub secrets_collected: bool,
    /// Kinds the snapshot could not read (live: the API server refused to list them). None of
    /// their objects is in the snapshot, and none is concluded missing.
    pub unread: Vec<Unread>,
}

/// A kind the snapshot lacks because it could not be read, and why.
#[derive(Debug, Clone)]
pub struct Unread {
    pub kind: &'static crate::api::Kind,
    /// The reader's own words (e.g. the API server's refusal).
    pub reason: String,
}

impl Options {
    /// Why the kind could not be read, if it could not.
    fn unread(&self, kind: &str) -> Option<&Unread> {
        self.unread.iter().find(|u| u.kind.kind == kind)
    }
}

/// Diagnoses every ServiceSet of the snapshot (within the options' filters).
pub fn diagnose(objects: &[Value], options: &Options) -> Report {
    let snap = Snapshot::new(objects);
    let kcm_adapter = provider::kcm_adapter(
        snap.all(kinds::STATE_MANAGEMENT_PROVIDER.kind)
            .iter()
            .map(|s| StateManagementProvider(s)),
    );
    let flux_conflicts = flux_conflicts(&snap, kcm_adapter.as_ref());
    let releases = releases(&snap);
    let mut d = Doctor {
        snap: &snap,
        options,
        findings: Vec::new(),
        smp_checked: HashMap::new(),
        kcm_adapter,
        flux_conflicts,
        releases,
        unread: HashMap::new(),
    };
    let general: Vec<usize> = options
        .unread
        .iter()
        .map(|u| {
            let i = d.push(unread_finding(u));
            d.unread.insert(u.kind.kind, i);
            i
        })
        .collect();
    let mut views = Vec::new();
    let mut sets: Vec<ServiceSet> = snap
        .all(kinds::SERVICE_SET.kind)
        .iter()
        .map(|ss| ServiceSet(ss))
        .filter(|ss| {
            options
                .namespace
                .as_deref()
                .is_none_or(|ns| ss.namespace() == ns)
                && options
                    .service_set
                    .as_deref()
                    .is_none_or(|n| ss.name() == n)
        })
        .collect();
    sets.sort_by_key(|ss| (ss.namespace(), ss.name()));
    for ss in sets {
        views.push(d.service_set(ss));
    }
    let mcs_views = d.multi_cluster_services();
    let mut summary = Summary {
        service_sets: views.len(),
        ..Summary::default()
    };
    let only_info = |ids: &[usize]| {
        ids.iter()
            .all(|i| d.findings[*i].severity == Severity::Info)
    };
    for v in &views {
        summary.services += v.services.len();
        if only_info(&v.findings) {
            summary.healthy_services +=
                v.services.iter().filter(|s| only_info(&s.findings)).count();
        }
    }
    summary.errors = d
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    summary.warnings = d
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    Report {
        version: 1,
        findings: d.findings,
        summary,
        service_sets: views,
        multi_cluster_services: mcs_views,
        general,
    }
}

/// A kind that could not be read: nothing of it is judged, the chains stop before it.
fn unread_finding(u: &Unread) -> Finding {
    let k = u.kind;
    let resource = if k.group.is_empty() {
        k.plural.to_string()
    } else {
        format!("{}.{}", k.plural, k.group)
    };
    Finding {
        severity: Severity::Warning,
        code: codes::KIND_UNREAD,
        object: ObjectId::new(k, "", ""),
        chain: vec![k.kind.to_string()],
        message: format!(
            "{} could not be read ({}): none is judged or reported missing, and every chain that leads to one stops there",
            k.kind, u.reason
        ),
        hint: format!(
            "kubectl auth can-i list {resource} -A  # grant get and list on it (README: the RBAC doctor needs)"
        ),
    }
}

/// How long ago an RFC 3339 time was (None when it does not parse or is in the future).
fn age_of(time: &str, now: DateTime<Utc>) -> Option<Duration> {
    let t = DateTime::parse_from_rfc3339(time).ok()?;
    (now - t.with_timezone(&Utc)).to_std().ok()
}

struct Doctor<'a, 'o> {
    snap: &'a Snapshot<'a>,
    options: &'o Options,
    findings: Vec<Diagnostic>,
    /// SMP name → the indexes of its findings (an SMP is diagnosed once, cited by every
    /// ServiceSet that uses it).
    smp_checked: HashMap<String, Vec<usize>>,
    /// The adapter of kcm's default provider, when its SMP is in the snapshot.
    kcm_adapter: Option<Reference>,
    /// (namespace, ServiceSet, service) → the release or path another ServiceSet of the same
    /// Flux provider owns, as the adapter decides it.
    flux_conflicts: HashMap<(String, String, String), ownership::Conflict>,
    /// Every HelmRelease and Kustomization of the snapshot, by what it deploys where.
    releases: HashMap<ownership::Target, Vec<&'a Value>>,
    /// Kinds that could not be read → the finding that says so (cited by every chain that
    /// stops there).
    unread: HashMap<&'static str, usize>,
}

/// The conflicts among the snapshot's ServiceSets of each Flux provider (those its SMP's
/// selector admits), rendered with the snapshot's templates as the adapter renders them.
fn flux_conflicts(
    snap: &Snapshot,
    kcm_adapter: Option<&Reference>,
) -> HashMap<(String, String, String), ownership::Conflict> {
    let templates: Vec<Value> = snap
        .all(kinds::SERVICE_TEMPLATE.kind)
        .iter()
        .map(|t| (*t).clone())
        .collect();
    let mut by_provider: HashMap<&str, Vec<&Value>> = HashMap::new();
    for set in snap.all(kinds::SERVICE_SET.kind) {
        let provider = ServiceSet(set).provider_name();
        let smp = snap.smp(provider);
        if provider::translator(provider, smp, kcm_adapter) != Ok(Translator::Flux) {
            continue;
        }
        if smp
            .is_some_and(|smp| !selector::matches(smp.selector(), ServiceSet(set).meta().labels()))
        {
            continue;
        }
        by_provider.entry(provider).or_default().push(set);
    }
    let mut out = HashMap::new();
    for sets in by_provider.values().filter(|s| s.len() > 1) {
        let rendered: Vec<_> = sets
            .iter()
            .map(|set| {
                crate::core::render::render(&crate::core::render::Inputs {
                    service_set: set,
                    templates: &templates,
                })
            })
            .collect();
        let pairs: Vec<(&Value, &crate::core::render::Rendered)> =
            sets.iter().copied().zip(rendered.iter()).collect();
        for c in ownership::conflicts(&pairs) {
            let set = ServiceSet(sets[c.set]);
            let svc = rendered[c.set].services[c.service].name.clone();
            out.insert(
                (set.namespace().to_string(), set.name().to_string(), svc),
                c,
            );
        }
    }
    out
}

/// The snapshot's HelmReleases and Kustomizations by what they deploy where.
fn releases<'a>(snap: &Snapshot<'a>) -> HashMap<ownership::Target, Vec<&'a Value>> {
    let mut out: HashMap<ownership::Target, Vec<&'a Value>> = HashMap::new();
    for kind in [kinds::HELM_RELEASE.kind, kinds::KUSTOMIZATION.kind] {
        for o in snap.all(kind) {
            if let Some(t) = ownership::target_of(o) {
                out.entry(t).or_default().push(o);
            }
        }
    }
    out
}

impl<'a> Doctor<'a, '_> {
    fn push(&mut self, f: Finding) -> usize {
        self.findings.push(f.into());
        self.findings.len() - 1
    }

    /// The finding about the first of `kinds` that could not be read, if one could not: a
    /// chain that needs it stops there and cites it (it is not healthy, nor missing).
    fn unread(&self, kinds: &[&str]) -> Option<usize> {
        kinds.iter().find_map(|k| self.unread.get(k).copied())
    }

    fn service_set(&mut self, ss: ServiceSet<'a>) -> ServiceSetView {
        let (ns, name) = (ss.namespace(), ss.name());
        let provider = ss.provider_name().to_string();
        let ss_disp = ss.meta().display();
        let mut set_findings = Vec::new();
        // An index, not a scan: a run stays linear in the ServiceSets.
        let smp = self.snap.smp(&provider);
        let mut provider_blocks: bool;
        match smp {
            // Not read: the finding about the kind says so; the chain goes on without it.
            None if self
                .options
                .unread(kinds::STATE_MANAGEMENT_PROVIDER.kind)
                .is_some() =>
            {
                provider_blocks = false;
            }
            None => {
                let f = self.push(Finding {
                    severity: Severity::Error,
                    code: codes::SMP_MISSING,
                    object: ss.meta().id(),
                    chain: vec![format!("StateManagementProvider/{provider}"), ss_disp.clone()],
                    message: format!(
                        "ServiceSet {ns}/{name} names provider {provider:?}, but there is no StateManagementProvider {provider:?}: no adapter will deploy its services"
                    ),
                    hint: "kubectl get statemanagementproviders  # then fix spec.provider.name or install the provider".into(),
                });
                set_findings.push(f);
                provider_blocks = true;
            }
            Some(smp) => {
                set_findings.extend(self.smp(smp));
                provider_blocks = set_findings
                    .iter()
                    .any(|i| self.findings[*i].severity == Severity::Error);
                let selector = smp.selector();
                if !selector.is_null() && !selector::matches(selector, ss.meta().labels()) {
                    let f = self.push(Finding {
                        severity: Severity::Error,
                        code: codes::SELECTOR_MISMATCH,
                        object: ss.meta().id(),
                        chain: vec![smp.meta().display(), ss_disp.clone()],
                        message: format!(
                            "the labels of ServiceSet {ns}/{name} do not match the selector of StateManagementProvider {provider} ({}): its adapter ignores this ServiceSet",
                            selector::to_string(selector)
                        ),
                        hint: format!("kubectl get serviceset -n {ns} {name} --show-labels; kubectl get statemanagementprovider {provider} -o jsonpath='{{.spec.selector}}'"),
                    });
                    set_findings.push(f);
                    provider_blocks = true;
                }
            }
        }
        let translation = provider::translator(&provider, smp, self.kcm_adapter.as_ref()).ok();
        if translation == Some(Translator::Sveltos) {
            let ctx = self.sveltos_set(ss, provider_blocks, &mut set_findings, &ss_disp);
            if !provider_blocks {
                self.blocked_dependents(ss, &mut set_findings, &ss_disp);
            }
            let services = ss
                .services()
                .map(|svc| self.sveltos_service(ss, svc, &ctx, &ss_disp))
                .collect();
            return ServiceSetView {
                service_set: ss.meta().id(),
                provider,
                translation: Translator::Sveltos.as_str(),
                services,
                findings: set_findings,
            };
        }
        if ss.paused() {
            let f = self.push(Finding {
                severity: Severity::Warning,
                code: codes::SERVICESET_PAUSED,
                object: ss.meta().id(),
                chain: vec![ss_disp.clone()],
                message: format!("ServiceSet {ns}/{name} is paused ({}): its Flux objects are suspended and nothing changes", ANNOTATION_PAUSED),
                hint: format!("kubectl annotate serviceset -n {ns} {name} {}-", ANNOTATION_PAUSED),
            });
            set_findings.push(f);
        }
        // The target cluster's kubeconfig, by name (Secrets are never read).
        let cluster = ss.cluster();
        if self.options.secrets_collected && !ss.self_management() {
            let secret = naming::kubeconfig_secret(cluster);
            if self.snap.find(kinds::SECRET.kind, ns, &secret).is_none() {
                let f = self.push(Finding {
                    severity: Severity::Error,
                    code: codes::KUBECONFIG_MISSING,
                    object: ObjectId::new(&kinds::SECRET, ns, &secret),
                    chain: vec![ss_disp.clone(), format!("Secret/{ns}/{secret}")],
                    message: format!("the kubeconfig Secret {ns}/{secret} of cluster {cluster} does not exist: Flux cannot reach the cluster"),
                    hint: format!("kubectl get clusterdeployment -n {ns} {cluster}; kubectl get secret -n {ns} {secret}"),
                });
                set_findings.push(f);
            }
        }
        if !provider_blocks {
            self.blocked_dependents(ss, &mut set_findings, &ss_disp);
        }
        let reported: HashMap<(&str, &str), _> = ss
            .service_statuses()
            .map(|st| ((st.name(), st.namespace()), st))
            .collect();
        let mut services = Vec::new();
        for svc in ss.services() {
            let status = reported.get(&(svc.name(), svc.namespace())).copied();
            services.push(self.service(ss, svc, status, provider_blocks, &ss_disp));
        }
        ServiceSetView {
            service_set: ss.meta().id(),
            provider,
            translation: Translator::Flux.as_str(),
            services,
            findings: set_findings,
        }
    }

    /// Findings about an SMP (once per SMP).
    fn smp(&mut self, view: StateManagementProvider) -> Vec<usize> {
        let smp = view.0;
        let name = view.name().to_string();
        if let Some(found) = self.smp_checked.get(&name) {
            return found.clone();
        }
        let mut out = Vec::new();
        let disp = view.meta().display();
        if view.suspended() {
            out.push(self.push(Finding {
                severity: Severity::Warning,
                code: codes::SMP_SUSPENDED,
                object: view.meta().id(),
                chain: vec![disp.clone()],
                message: format!("StateManagementProvider {name} is suspended: adapters skip its ServiceSets"),
                hint: format!("kubectl patch statemanagementprovider {name} --type merge -p '{{\"spec\":{{\"suspend\":false}}}}'"),
            }));
        }
        let ready = view.ready();
        // Re-evaluate what kcm evaluates, on the objects of the snapshot.
        let rbac = readiness::recorded_condition(smp, readiness::COND_RBAC)
            .map_or(Rbac::NotEvaluated, Rbac::Known);
        let now = readiness::check_smp(
            smp,
            self.snap,
            rbac,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        if !ready {
            let failing: Vec<String> = view
                .meta()
                .conditions()
                .filter(|c| c.status() != "True")
                .map(|c| {
                    format!(
                        "{}={} {}: {}",
                        c.type_(),
                        c.status(),
                        c.reason(),
                        c.message()
                    )
                })
                .collect();
            let explained: Vec<String> = now
                .evaluations
                .iter()
                .filter_map(|e| {
                    let o = e.outcome.as_ref()?;
                    (o.result != Some(true)).then(|| {
                        let first = o
                            .explanation
                            .iter()
                            .find(|c| c.value.as_deref() != Ok("true"));
                        let why = match (&o.error, first) {
                            (Some(err), _) => err.message.clone(),
                            (None, _) if o.budget_exceeded.is_some() => o
                                .budget_exceeded
                                .as_ref()
                                .map(|b| format!("no verdict: {}", b.message()))
                                .unwrap_or_default(),
                            (None, Some(c)) => {
                                format!("{} is {}", c.text, c.value.clone().unwrap_or_else(|e| e))
                            }
                            (None, None) => "false".into(),
                        };
                        format!(
                            "{} {}/{}: {why}",
                            e.role, e.reference.kind, e.reference.name
                        )
                    })
                })
                .collect();
            let mut message = format!("StateManagementProvider {name} is not ready");
            if failing.is_empty() {
                message.push_str(" (kcm has not written its conditions yet)");
            } else {
                message.push_str(&format!(": {}", failing.join("; ")));
            }
            if !explained.is_empty() {
                message.push_str(&format!(". Re-evaluated now: {}", explained.join("; ")));
            }
            out.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::SMP_NOT_READY,
                object: view.meta().id(),
                chain: vec![disp.clone()],
                message,
                hint: format!("kubectl ksm check {name}  # or: kubectl get statemanagementprovider {name} -o yaml"),
            }));
        }
        // kcm's last verdict against what the rules say now.
        if now.skipped.is_none() && view.ready_recorded() && now.ready != ready {
            out.push(self.push(Finding {
                severity: Severity::Warning,
                code: codes::SMP_STATUS_STALE,
                object: view.meta().id(),
                chain: vec![disp],
                message: format!(
                    "StateManagementProvider {name}: status.ready is {ready}, but its rules evaluate to {} now (kcm re-evaluates every 10 s; a lasting difference means kcm is not reconciling it)",
                    now.ready
                ),
                hint: "kubectl logs -n kcm-system deploy/kcm-controller-manager | grep -i statemanagementprovider".into(),
            }));
        }
        self.smp_checked.insert(name, out.clone());
        out
    }
}
