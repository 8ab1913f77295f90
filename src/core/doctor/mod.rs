//! `doctor`: from a stuck service to its root cause. PURE: a snapshot of objects (from a live
//! cluster or a saved dump, the same either way) and the time come in; findings come out.
//!
//! Each ServiceSet is followed down its chain, StateManagementProvider → ServiceSet →
//! ServiceTemplate → Flux object → source for the Flux adapter (service.rs), or → Profile →
//! ClusterSummary for kcm's default provider (sveltos*.rs), and each service's first failing
//! link is named, with a stable code, the failing object's own message and a runnable next
//! step. A chain is a sequence of links, one function each, that returns the next link's
//! input or the [`Stop`] where the chain ends; the provider link and the services kcm leaves
//! out (dependents.rs) are shared by both chains ([`Doctor::follow`]). What a finding says is
//! composed in findings.rs, one constructor per code.

pub mod codes;
mod dependents;
mod findings;
mod mcs;
mod service;
mod snapshot;
mod sveltos;
mod sveltos_service;

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::api::kcm::{Reference, Service, ServiceSet, ServiceStatus, StateManagementProvider};
use crate::api::{ObjectId, kinds, selector};
use crate::core::adapter::ownership;
use crate::core::cel::Limits;
use crate::core::provider::{self, Translator};
use crate::core::readiness::{self, Explain, Rbac};
use crate::core::threads::beside;
use crate::diag::Diagnostic;
pub use crate::diag::Severity;
use findings::Words;
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

/// Where a chain stops.
enum Stop {
    /// At a new finding about the failing link.
    At(Finding),
    /// At a finding made before (a kind that could not be read), cited again.
    Cited(usize),
    /// With nothing to say (e.g. a service being removed whose Flux object is gone).
    Quiet,
}

/// A link of a chain: the next link's input, or the [`Stop`] where the chain ends.
type Link<T = ()> = ControlFlow<Stop, T>;

/// A provider's chain below the provider link ([`provider::Provider::chain`]).
pub(crate) type Chain =
    for<'a, 'o> fn(&mut Doctor<'a, 'o>, &SetLink<'a>, Vec<usize>) -> ServiceSetView;

/// The Flux adapter's chain ([`provider::FLUX`]).
pub(crate) fn flux_chain<'a>(
    doctor: &mut Doctor<'a, '_>,
    set: &SetLink<'a>,
    findings: Vec<usize>,
) -> ServiceSetView {
    doctor.follow(
        set,
        findings,
        Translator::Flux,
        Doctor::flux_set,
        Doctor::flux_service,
    )
}

/// kcm's own adapter's chain ([`provider::SVELTOS`]).
pub(crate) fn sveltos_chain<'a>(
    doctor: &mut Doctor<'a, '_>,
    set: &SetLink<'a>,
    findings: Vec<usize>,
) -> ServiceSetView {
    doctor.follow(
        set,
        findings,
        Translator::Sveltos,
        Doctor::sveltos_set,
        Doctor::sveltos_service,
    )
}

/// A ServiceSet past the provider link, for its translation's links.
pub(crate) struct SetLink<'a> {
    ss: ServiceSet<'a>,
    /// `ServiceSet/namespace/name`, the head of every chain below it.
    display: String,
    /// The provider does not act on the ServiceSet (missing, not ready, selector).
    provider_blocks: bool,
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
    /// The provider object `flux_object` names (the Flux object, or the ClusterSummary).
    #[serde(skip)]
    pub provider_object: Option<ObjectId>,
    pub source: Option<String>,
    /// The ServiceSet that owns the release this service conflicts on
    /// (`ServiceSet/<namespace>/<name>`), when another one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Indexes into `Report::findings`.
    pub findings: Vec<usize>,
}

impl ServiceView {
    /// A service as its ServiceSet reports it, before its chain is followed.
    fn new(svc: Service, status: Option<ServiceStatus>) -> ServiceView {
        ServiceView {
            name: svc.name().into(),
            namespace: svc.namespace().into(),
            reported: status
                .map(|st| st.state().to_string())
                .filter(|s| !s.is_empty()),
            observed: None,
            flux_object: None,
            provider_object: None,
            source: None,
            owner: None,
            findings: Vec::new(),
        }
    }
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
    /// Every ServiceSet at `now`, stuck after 10 minutes, nothing unread, no Secrets: what
    /// the unit tests of the rooms that build on the report diagnose with.
    #[cfg(test)]
    pub(crate) fn for_tests(now: DateTime<Utc>) -> Options {
        Options {
            now,
            stuck_after: std::time::Duration::from_secs(600),
            namespace: None,
            service_set: None,
            secrets_collected: false,
            unread: Vec::new(),
        }
    }

    /// Why the kind could not be read, if it could not.
    fn unread(&self, kind: &str) -> Option<&Unread> {
        self.unread.iter().find(|u| u.kind.kind == kind)
    }
}

/// Diagnoses every ServiceSet of the snapshot (within the options' filters).
pub fn diagnose(objects: &[Value], options: &Options) -> Report {
    diagnose_on(objects, options, None)
}

/// [`diagnose`] on `threads` threads (at most one a ServiceSet), or as many as suit the
/// fleet and the machine.
fn diagnose_on(objects: &[Value], options: &Options, threads: Option<usize>) -> Report {
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
        flux_conflicts: &flux_conflicts,
        releases: &releases,
        unread: HashMap::new(),
    };
    let general: Vec<usize> = options
        .unread
        .iter()
        .map(|u| {
            let i = d.push(
                findings::kind_unread(u)
                    .about(ObjectId::new(u.kind, "", ""), vec![u.kind.kind.to_string()]),
            );
            d.unread.insert(u.kind.kind, i);
            i
        })
        .collect();
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
    let threads = threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(sets.len() / SETS_PER_THREAD)
    });
    let views = d.service_sets(&sets, threads.clamp(1, sets.len().max(1)));
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

/// How long ago an RFC 3339 time was (None when it does not parse or is in the future).
fn age_of(time: &str, now: DateTime<Utc>) -> Option<Duration> {
    let t = DateTime::parse_from_rfc3339(time).ok()?;
    (now - t.with_timezone(&Utc)).to_std().ok()
}

/// Fewer ServiceSets than this for each thread are diagnosed on one.
const SETS_PER_THREAD: usize = 64;

pub(crate) struct Doctor<'a, 'o> {
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
    flux_conflicts: &'a HashMap<(String, String, String), ownership::Conflict>,
    /// Every HelmRelease and Kustomization of the snapshot, by what it deploys where.
    releases: &'a HashMap<ownership::Target, Vec<&'a Value>>,
    /// Kinds that could not be read → the finding that says so (cited by every chain that
    /// stops there).
    unread: HashMap<&'static str, usize>,
}

/// The conflicts among the snapshot's ServiceSets of each Flux provider (those its SMP's
/// selector admits), rendered with the snapshot's templates as the adapter renders them.
/// Only ServiceSets that share a cluster can conflict: the others are not rendered.
fn flux_conflicts(
    snap: &Snapshot,
    kcm_adapter: Option<&Reference>,
) -> HashMap<(String, String, String), ownership::Conflict> {
    let mut by_cluster: HashMap<(&str, String), Vec<&Value>> = HashMap::new();
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
        by_cluster
            .entry((provider, ownership::cluster_of(set)))
            .or_default()
            .push(set);
    }
    by_cluster.retain(|_, sets| sets.len() > 1);
    if by_cluster.is_empty() {
        return HashMap::new();
    }
    let templates: Vec<Value> = snap
        .all(kinds::SERVICE_TEMPLATE.kind)
        .iter()
        .map(|t| (*t).clone())
        .collect();
    let mut out = HashMap::new();
    for sets in by_cluster.values() {
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

impl<'a, 'o> Doctor<'a, 'o> {
    /// Each ServiceSet's view, in order. A fleet's ServiceSets are diagnosed on every core,
    /// each thread a doctor of its own over a contiguous run of them; their findings are then
    /// put together as one doctor going through them in order would have made them: an SMP's
    /// findings once, where the first ServiceSet citing it is, and every index renumbered.
    fn service_sets(&mut self, sets: &[ServiceSet<'a>], threads: usize) -> Vec<ServiceSetView> {
        if threads <= 1 {
            return sets.iter().map(|ss| self.service_set(*ss)).collect();
        }
        // The first run on this thread, the others on helpers.
        let diagnose = |run: &[ServiceSet<'a>], mut d: Doctor<'a, 'o>| {
            let views: Vec<_> = run.iter().map(|ss| d.service_set(*ss)).collect();
            (views, d.findings, d.smp_checked)
        };
        let mut forks = sets
            .chunks(sets.len().div_ceil(threads))
            .map(|run| (run, self.fork()));
        let Some((first, d)) = forks.next() else {
            return Vec::new();
        };
        let runs = beside(
            || diagnose(first, d),
            forks.map(|(run, d)| move || diagnose(run, d)),
        );
        let base = self.findings.len();
        let mut out = Vec::with_capacity(sets.len());
        for (views, findings, smp_checked) in runs {
            // Where each of the run's findings is in the whole; the first `base` are those
            // every run started with.
            let mut to: Vec<Option<usize>> = (0..findings.len())
                .map(|i| (i < base).then_some(i))
                .collect();
            for (name, ids) in &smp_checked {
                if let Some(known) = self.smp_checked.get(name) {
                    for (mine, whole) in ids.iter().zip(known) {
                        to[*mine] = Some(*whole);
                    }
                }
            }
            for (i, f) in findings.into_iter().enumerate().skip(base) {
                if to[i].is_none() {
                    self.findings.push(f);
                    to[i] = Some(self.findings.len() - 1);
                }
            }
            let at = |ids: &mut Vec<usize>| {
                for i in ids {
                    *i = to[*i].expect("every finding of a run has its place");
                }
            };
            for (name, mut ids) in smp_checked {
                self.smp_checked.entry(name).or_insert_with(|| {
                    at(&mut ids);
                    ids
                });
            }
            for mut view in views {
                at(&mut view.findings);
                for s in &mut view.services {
                    at(&mut s.findings);
                }
                out.push(view);
            }
        }
        out
    }

    /// A doctor for another thread: what this one has found so far, and the same snapshot.
    fn fork(&self) -> Doctor<'a, 'o> {
        Doctor {
            snap: self.snap,
            options: self.options,
            findings: self.findings.clone(),
            smp_checked: self.smp_checked.clone(),
            kcm_adapter: self.kcm_adapter.clone(),
            flux_conflicts: self.flux_conflicts,
            releases: self.releases,
            unread: self.unread.clone(),
        }
    }

    fn push(&mut self, f: Finding) -> usize {
        self.findings.push(f.into());
        self.findings.len() - 1
    }

    /// The finding about the first of `kinds` that could not be read, if one could not: a
    /// chain that needs it stops there and cites it (it is not healthy, nor missing).
    fn unread(&self, kinds: &[&str]) -> Option<usize> {
        kinds.iter().find_map(|k| self.unread.get(k).copied())
    }

    /// Cites where a chain stopped among `into`'s findings.
    fn stop(&mut self, stop: Stop, into: &mut Vec<usize>) {
        match stop {
            Stop::At(f) => into.push(self.push(f)),
            Stop::Cited(i) => into.push(i),
            Stop::Quiet => {}
        }
    }

    /// Adds a finding of a link that does not stop the chain, if it has one.
    fn note(&mut self, finding: Option<Finding>, into: &mut Vec<usize>) {
        if let Some(f) = finding {
            into.push(self.push(f));
        }
    }

    /// A ServiceSet down its chain: the links both chains share (the provider, then the
    /// provider's own set-level links, then the services kcm leaves out), and each service
    /// down the chain of its translation.
    fn service_set(&mut self, ss: ServiceSet<'a>) -> ServiceSetView {
        let provider = ss.provider_name();
        // An index, not a scan: a run stays linear in the ServiceSets.
        let smp = self.snap.smp(provider);
        let mut findings = Vec::new();
        let set = SetLink {
            ss,
            display: ss.meta().display(),
            provider_blocks: self.provider(ss, smp, &mut findings),
        };
        // A provider the tool does not know is followed as a Flux adapter: its provider
        // link has said so.
        let translator = provider::translator(provider, smp, self.kcm_adapter.as_ref())
            .unwrap_or(Translator::Flux);
        (translator.provider().chain)(self, &set, findings)
    }

    /// One translation's chain below the provider: its set-level links (what they found,
    /// `C`, goes to its services), the services kcm leaves out, each service's links.
    fn follow<C>(
        &mut self,
        set: &SetLink<'a>,
        mut findings: Vec<usize>,
        translator: Translator,
        set_links: fn(&mut Self, &SetLink<'a>, &mut Vec<usize>) -> C,
        service_links: fn(&mut Self, &SetLink<'a>, &C, Service<'a>) -> ServiceView,
    ) -> ServiceSetView {
        let found = set_links(self, set, &mut findings);
        if !set.provider_blocks {
            self.blocked_dependents(set.ss, &mut findings, &set.display);
        }
        let services = set
            .ss
            .services()
            .map(|svc| service_links(self, set, &found, svc))
            .collect();
        ServiceSetView {
            service_set: set.ss.meta().id(),
            provider: set.ss.provider_name().to_string(),
            translation: translator.as_str(),
            services,
            findings,
        }
    }

    /// The provider link, the same for both chains: the SMP the ServiceSet names, its
    /// readiness and its selector. Whether it keeps its adapter from acting on the
    /// ServiceSet (then the services' findings below say it is expected).
    fn provider(
        &mut self,
        ss: ServiceSet<'a>,
        smp: Option<StateManagementProvider<'a>>,
        findings: &mut Vec<usize>,
    ) -> bool {
        let (ns, name, provider) = (ss.namespace(), ss.name(), ss.provider_name());
        let ss_disp = ss.meta().display();
        let Some(smp) = smp else {
            // Not read: the finding about the kind says so; the chain goes on without it.
            if self
                .options
                .unread(kinds::STATE_MANAGEMENT_PROVIDER.kind)
                .is_some()
            {
                return false;
            }
            let chain = vec![format!("StateManagementProvider/{provider}"), ss_disp];
            let f = findings::smp_missing(ns, name, provider).about(ss.meta().id(), chain);
            findings.push(self.push(f));
            return true;
        };
        findings.extend(self.smp(smp));
        let mut blocks = findings
            .iter()
            .any(|i| self.findings[*i].severity == Severity::Error);
        let selector = smp.selector();
        if !selector.is_null() && !selector::matches(selector, ss.meta().labels()) {
            let words =
                findings::selector_mismatch(ns, name, provider, &selector::to_string(selector));
            let f = words.about(ss.meta().id(), vec![smp.meta().display(), ss_disp]);
            findings.push(self.push(f));
            blocks = true;
        }
        blocks
    }

    /// Findings about an SMP (once per SMP).
    fn smp(&mut self, view: StateManagementProvider) -> Vec<usize> {
        let smp = view.0;
        let name = view.name().to_string();
        if let Some(found) = self.smp_checked.get(&name) {
            return found.clone();
        }
        let mut out = Vec::new();
        let at = |words: Words| words.about(view.meta().id(), vec![view.meta().display()]);
        if view.suspended() {
            out.push(self.push(at(findings::smp_suspended(&name))));
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
            let failing = view.meta().conditions().filter(|c| c.status() != "True");
            let words = findings::smp_not_ready(&name, failing, &now.evaluations);
            out.push(self.push(at(words)));
        }
        // kcm's last verdict against what the rules say now.
        if now.skipped.is_none() && view.ready_recorded() && now.ready != ready {
            out.push(self.push(at(findings::smp_status_stale(&name, ready, now.ready))));
        }
        self.smp_checked.insert(name, out.clone());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(case: &str) -> Vec<Value> {
        let path = format!(
            "{}/testdata/doctor/{case}/dump.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).expect(&path);
        let loaded = crate::core::objects::load_values(&crate::diag::Source::new(path, text));
        assert!(
            loaded.diagnostics.is_empty(),
            "{case}: {:?}",
            loaded.diagnostics
        );
        loaded.objects.into_iter().map(|o| o.json).collect()
    }

    fn now() -> DateTime<Utc> {
        "2026-11-20T12:00:00Z".parse().unwrap()
    }

    /// The report as it is shown, findings by value where the views cite them.
    fn shown(r: &Report) -> String {
        format!("{r:?}")
    }

    #[test]
    fn on_several_threads_the_report_is_the_one_of_one_thread() {
        let root = format!("{}/testdata/doctor", env!("CARGO_MANIFEST_DIR"));
        let mut cases: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(|e| {
                let e = e.unwrap();
                e.path()
                    .join("dump.yaml")
                    .exists()
                    .then(|| e.file_name().to_string_lossy().into_owned())
            })
            .collect();
        cases.sort();
        assert!(cases.len() > 40, "{cases:?}");
        let options = Options::for_tests(now());
        for case in &cases {
            let objects = dump(case);
            let one = diagnose_on(&objects, &options, Some(1));
            // As many threads as ServiceSets: every one on its own.
            let each = diagnose_on(&objects, &options, Some(one.service_sets.len()));
            assert_eq!(shown(&each), shown(&one), "{case}");
        }
    }

    #[test]
    fn an_smps_findings_are_made_once_however_the_fleet_is_split() {
        // Forty copies of each ServiceSet of the case: every copy of team-a/prod-eu cites the
        // suspended SMP's finding, and the copies (their Flux objects absent) have their own.
        let mut objects = dump("multi-problem");
        let sets: Vec<Value> = objects
            .iter()
            .filter(|o| o["kind"] == "ServiceSet")
            .cloned()
            .collect();
        assert_eq!(sets.len(), 2);
        for i in 0..40 {
            for set in &sets {
                let mut copy = set.clone();
                let name = format!("{}-{i:02}", copy["metadata"]["name"].as_str().unwrap());
                copy["metadata"]["name"] = name.into();
                objects.push(copy);
            }
        }
        let options = Options::for_tests(now());
        let one = diagnose_on(&objects, &options, Some(1));
        assert_eq!(one.service_sets.len(), 82);
        let suspended: Vec<usize> = (0..one.findings.len())
            .filter(|i| one.findings[*i].code == "KSM603")
            .collect();
        assert_eq!(suspended.len(), 1, "{:?}", one.findings);
        let citing = one
            .service_sets
            .iter()
            .filter(|v| v.findings.contains(&suspended[0]))
            .count();
        assert_eq!(citing, 41);
        for threads in [2, 3, 7, 82] {
            let split = diagnose_on(&objects, &options, Some(threads));
            assert_eq!(shown(&split), shown(&one), "{threads} threads");
        }
    }
}
