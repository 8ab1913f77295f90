//! `doctor`: from a stuck service to its root cause. PURE: a snapshot of objects (from a live
//! cluster or a saved dump, the same either way) and the time come in; findings come out.
//!
//! Each ServiceSet is followed down its chain, StateManagementProvider → ServiceSet →
//! ServiceTemplate → Flux object → source, and each service's first failing link is named,
//! with a stable code, the failing object's own message and a runnable next step.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::core::cel::Limits;
use crate::core::objects::ObjectId;
use crate::core::readiness::{self, Condition, Explain, ObjectLookup, Rbac, Status};
use crate::core::render::{self, LABEL_SERVICE, LABEL_SERVICESET, label_value};
use crate::core::selector;
use crate::core::state::{self, Observed, ServiceState};

/// Stable finding codes.
pub mod codes {
    pub const SMP_MISSING: &str = "KSM601";
    pub const SMP_NOT_READY: &str = "KSM602";
    pub const SMP_SUSPENDED: &str = "KSM603";
    pub const SELECTOR_MISMATCH: &str = "KSM604";
    pub const SERVICESET_PAUSED: &str = "KSM605";
    pub const SERVICE_FAILED: &str = "KSM606";
    pub const SERVICE_STUCK: &str = "KSM607";
    pub const STATUS_DISAGREES: &str = "KSM608";
    pub const FLUX_MISSING: &str = "KSM609";
    pub const FLUX_STALLED: &str = "KSM610";
    pub const FLUX_FAILING: &str = "KSM611";
    pub const FLUX_SUSPENDED: &str = "KSM612";
    pub const FLUX_OLD_GENERATION: &str = "KSM613";
    pub const DEPENDENCY_NOT_READY: &str = "KSM614";
    pub const SOURCE_FAILING: &str = "KSM615";
    pub const TEMPLATE_INVALID: &str = "KSM616";
    pub const KUBECONFIG_MISSING: &str = "KSM617";
    pub const SMP_STATUS_STALE: &str = "KSM618";
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: &'static str,
    /// The failing object.
    pub object: ObjectId,
    /// The chain from the provider down to the failing object, as `Kind/namespace/name`.
    pub chain: Vec<String>,
    pub message: String,
    /// A runnable next step.
    pub hint: String,
}

/// One service as doctor sees it (for the tree).
#[derive(Debug, Clone, Serialize)]
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
pub struct ServiceSetView {
    pub service_set: ObjectId,
    pub provider: String,
    pub services: Vec<ServiceView>,
    /// Findings about the ServiceSet or its provider.
    pub findings: Vec<usize>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub service_sets: usize,
    pub services: usize,
    pub healthy_services: usize,
    pub errors: usize,
    pub warnings: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub version: u32,
    pub findings: Vec<Finding>,
    pub summary: Summary,
    #[serde(skip)]
    pub service_sets: Vec<ServiceSetView>,
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
}

/// The objects doctor looks at, indexed once: by kind, by (kind, namespace, name), and the
/// Flux objects by the ServiceSet and service labels the adapter puts on them. Every lookup
/// of the diagnosis is then a hash lookup, so a run is linear in the objects.
pub struct Snapshot<'a> {
    by_kind: HashMap<&'a str, Vec<&'a Value>>,
    by_key: HashMap<(&'a str, &'a str, &'a str), &'a Value>,
    /// (namespace, serviceset label, service label) → HelmRelease or Kustomization.
    flux_by_labels: HashMap<(&'a str, &'a str, &'a str), &'a Value>,
}

fn s<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn kind_of(v: &Value) -> &str {
    s(v, "/kind")
}

fn display(v: &Value) -> String {
    ObjectId::of(v).to_string()
}

fn label<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl<'a> Snapshot<'a> {
    pub fn new(objects: &'a [Value]) -> Snapshot<'a> {
        let mut by_kind: HashMap<&str, Vec<&Value>> = HashMap::new();
        let mut by_key = HashMap::new();
        let mut flux_by_labels = HashMap::new();
        for o in objects {
            let kind = kind_of(o);
            by_kind.entry(kind).or_default().push(o);
            let ns = s(o, "/metadata/namespace");
            // The first object of a key wins, as a linear scan would find it.
            by_key
                .entry((kind, ns, s(o, "/metadata/name")))
                .or_insert(o);
            if matches!(kind, "HelmRelease" | "Kustomization") {
                let (set, svc) = (label(o, LABEL_SERVICESET), label(o, LABEL_SERVICE));
                if !set.is_empty() && !svc.is_empty() {
                    flux_by_labels.entry((ns, set, svc)).or_insert(o);
                }
            }
        }
        Snapshot {
            by_kind,
            by_key,
            flux_by_labels,
        }
    }

    fn all(&self, kind: &str) -> &[&'a Value] {
        self.by_kind.get(kind).map_or(&[], Vec::as_slice)
    }

    fn find(&self, kind: &str, namespace: &str, name: &str) -> Option<&'a Value> {
        self.by_key.get(&(kind, namespace, name)).copied()
    }
}

/// The readiness re-evaluation reads the SMP's references from the snapshot's index.
impl ObjectLookup for Snapshot<'_> {
    fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.find(kind, namespace, name)
            .filter(|o| s(o, "/apiVersion") == api_version)
    }

    fn crd(&self, name: &str) -> Option<&Value> {
        self.find("CustomResourceDefinition", "", name)
    }

    fn resource_of(&self, group: &str, kind: &str) -> Option<String> {
        self.all("CustomResourceDefinition").iter().find_map(|c| {
            (s(c, "/spec/group") == group && s(c, "/spec/names/kind") == kind)
                .then(|| s(c, "/spec/names/plural").to_string())
        })
    }
}

/// Diagnoses every ServiceSet of the snapshot (within the options' filters).
pub fn diagnose(objects: &[Value], options: &Options) -> Report {
    let snap = Snapshot::new(objects);
    let mut d = Doctor {
        snap: &snap,
        options,
        findings: Vec::new(),
        smp_checked: HashMap::new(),
    };
    let mut views = Vec::new();
    let mut sets: Vec<&Value> = snap
        .all("ServiceSet")
        .iter()
        .copied()
        .filter(|ss| {
            options
                .namespace
                .as_deref()
                .is_none_or(|ns| s(ss, "/metadata/namespace") == ns)
                && options
                    .service_set
                    .as_deref()
                    .is_none_or(|n| s(ss, "/metadata/name") == n)
        })
        .collect();
    sets.sort_by_key(|ss| (s(ss, "/metadata/namespace"), s(ss, "/metadata/name")));
    for ss in sets {
        views.push(d.service_set(ss));
    }
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
    }
}

struct Doctor<'a, 'o> {
    snap: &'a Snapshot<'a>,
    options: &'o Options,
    findings: Vec<Finding>,
    /// SMP name → the indexes of its findings (an SMP is diagnosed once, cited by every
    /// ServiceSet that uses it).
    smp_checked: HashMap<String, Vec<usize>>,
}

impl Doctor<'_, '_> {
    fn push(&mut self, f: Finding) -> usize {
        self.findings.push(f);
        self.findings.len() - 1
    }

    fn service_set(&mut self, ss: &Value) -> ServiceSetView {
        let ns = s(ss, "/metadata/namespace");
        let name = s(ss, "/metadata/name");
        let provider = s(ss, "/spec/provider/name").to_string();
        let ss_disp = display(ss);
        let mut set_findings = Vec::new();
        let smp = self
            .snap
            .all("StateManagementProvider")
            .iter()
            .copied()
            .find(|p| s(p, "/metadata/name") == provider);
        let mut provider_blocks: bool;
        match smp {
            None => {
                let f = self.push(Finding {
                    severity: Severity::Error,
                    code: codes::SMP_MISSING,
                    object: ObjectId::of(ss),
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
                let selector = smp.pointer("/spec/selector").unwrap_or(&Value::Null);
                let labels = ss.pointer("/metadata/labels").unwrap_or(&Value::Null);
                if !selector.is_null() && !selector::matches(selector, labels) {
                    let f = self.push(Finding {
                        severity: Severity::Error,
                        code: codes::SELECTOR_MISMATCH,
                        object: ObjectId::of(ss),
                        chain: vec![display(smp), ss_disp.clone()],
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
        if ss
            .pointer("/metadata/annotations")
            .and_then(Value::as_object)
            .is_some_and(|a| a.contains_key(render::ANNOTATION_PAUSED))
        {
            let f = self.push(Finding {
                severity: Severity::Warning,
                code: codes::SERVICESET_PAUSED,
                object: ObjectId::of(ss),
                chain: vec![ss_disp.clone()],
                message: format!("ServiceSet {ns}/{name} is paused ({}): its Flux objects are suspended and nothing changes", render::ANNOTATION_PAUSED),
                hint: format!("kubectl annotate serviceset -n {ns} {name} {}-", render::ANNOTATION_PAUSED),
            });
            set_findings.push(f);
        }
        // The target cluster's kubeconfig, by name (Secrets are never read).
        let cluster = s(ss, "/spec/cluster");
        let self_mgmt = ss
            .pointer("/spec/provider/selfManagement")
            .and_then(Value::as_bool)
            == Some(true)
            || cluster.is_empty();
        if self.options.secrets_collected && !self_mgmt {
            let secret = format!("{cluster}-kubeconfig");
            if self.snap.find("Secret", ns, &secret).is_none() {
                let f = self.push(Finding {
                    severity: Severity::Error,
                    code: codes::KUBECONFIG_MISSING,
                    object: ObjectId {
                        api_version: "v1".into(),
                        kind: "Secret".into(),
                        namespace: ns.into(),
                        name: secret.clone(),
                    },
                    chain: vec![ss_disp.clone(), format!("Secret/{ns}/{secret}")],
                    message: format!("the kubeconfig Secret {ns}/{secret} of cluster {cluster} does not exist: Flux cannot reach the cluster"),
                    hint: format!("kubectl get clusterdeployment -n {ns} {cluster}; kubectl get secret -n {ns} {secret}"),
                });
                set_findings.push(f);
            }
        }
        let reported: HashMap<(&str, &str), &Value> = ss
            .pointer("/status/services")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|st| ((s(st, "/name"), s(st, "/namespace")), st))
            .collect();
        let mut services = Vec::new();
        for svc in ss
            .pointer("/spec/services")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let svc_ns = match s(svc, "/namespace") {
                "" => "default",
                n => n,
            };
            let status = reported.get(&(s(svc, "/name"), svc_ns)).copied();
            services.push(self.service(ss, svc, status, provider_blocks, &ss_disp));
        }
        ServiceSetView {
            service_set: ObjectId::of(ss),
            provider,
            services,
            findings: set_findings,
        }
    }

    /// Findings about an SMP (once per SMP).
    fn smp(&mut self, smp: &Value) -> Vec<usize> {
        let name = s(smp, "/metadata/name").to_string();
        if let Some(found) = self.smp_checked.get(&name) {
            return found.clone();
        }
        let mut out = Vec::new();
        let disp = display(smp);
        if smp.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
            out.push(self.push(Finding {
                severity: Severity::Warning,
                code: codes::SMP_SUSPENDED,
                object: ObjectId::of(smp),
                chain: vec![disp.clone()],
                message: format!("StateManagementProvider {name} is suspended: adapters skip its ServiceSets"),
                hint: format!("kubectl patch statemanagementprovider {name} --type merge -p '{{\"spec\":{{\"suspend\":false}}}}'"),
            }));
        }
        let ready = smp.pointer("/status/ready").and_then(Value::as_bool) == Some(true);
        // Re-evaluate what kcm evaluates, on the objects of the snapshot.
        let rbac =
            status_condition(smp, readiness::COND_RBAC).map_or(Rbac::NotEvaluated, Rbac::Known);
        let now = readiness::check_smp(
            smp,
            self.snap,
            rbac,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        if !ready {
            let failing: Vec<String> = smp
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|c| s(c, "/status") != "True")
                .map(|c| {
                    format!(
                        "{}={} {}: {}",
                        s(c, "/type"),
                        s(c, "/status"),
                        s(c, "/reason"),
                        s(c, "/message")
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
                object: ObjectId::of(smp),
                chain: vec![disp.clone()],
                message,
                hint: format!("kubectl ksm check {name}  # or: kubectl get statemanagementprovider {name} -o yaml"),
            }));
        }
        // kcm's last verdict against what the rules say now.
        if now.skipped.is_none() && smp.pointer("/status/ready").is_some() && now.ready != ready {
            out.push(self.push(Finding {
                severity: Severity::Warning,
                code: codes::SMP_STATUS_STALE,
                object: ObjectId::of(smp),
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

    fn service(
        &mut self,
        ss: &Value,
        svc: &Value,
        status: Option<&Value>,
        provider_blocks: bool,
        ss_disp: &str,
    ) -> ServiceView {
        let ns = s(ss, "/metadata/namespace");
        let set_name = s(ss, "/metadata/name");
        let name = s(svc, "/name");
        let svc_ns = match s(svc, "/namespace") {
            "" => "default",
            n => n,
        };
        let mut view = ServiceView {
            name: name.into(),
            namespace: svc_ns.into(),
            reported: status
                .map(|st| s(st, "/state").to_string())
                .filter(|s| !s.is_empty()),
            observed: None,
            flux_object: None,
            source: None,
            findings: Vec::new(),
        };
        let label = format!("service {name} of ServiceSet {ns}/{set_name}");
        let mut chain = vec![ss_disp.to_string()];

        // The template.
        let template_name = s(svc, "/template");
        let template = self.snap.find("ServiceTemplate", ns, template_name);
        chain.push(format!("ServiceTemplate/{ns}/{template_name}"));
        match template {
            Some(t) if t.pointer("/status/valid").and_then(Value::as_bool) == Some(false) => {
                let why = s(t, "/status/validationError");
                view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::TEMPLATE_INVALID,
                    object: ObjectId::of(t),
                    chain: chain.clone(),
                    message: format!(
                        "{label}: ServiceTemplate {ns}/{template_name} is invalid: {}",
                        if why.is_empty() {
                            "(no validationError)"
                        } else {
                            why
                        }
                    ),
                    hint: format!("kubectl get servicetemplate -n {ns} {template_name} -o yaml"),
                }));
                return view;
            }
            None if self.snap.by_kind.contains_key("ServiceTemplate") => {
                view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::TEMPLATE_INVALID,
                    object: ObjectId {
                        api_version: render::KCM_API_VERSION.into(),
                        kind: "ServiceTemplate".into(),
                        namespace: ns.into(),
                        name: template_name.into(),
                    },
                    chain: chain.clone(),
                    message: format!(
                        "{label}: ServiceTemplate {ns}/{template_name} does not exist"
                    ),
                    hint: format!("kubectl get servicetemplates -n {ns}"),
                }));
                return view;
            }
            _ => {}
        }

        // The Flux object: labelled by the adapter, or named <serviceset>-<service>.
        let object_name = format!("{set_name}-{name}");
        let (set_label, svc_label) = (label_value(set_name), label_value(name));
        let flux = self
            .snap
            .flux_by_labels
            .get(&(ns, set_label.as_str(), svc_label.as_str()))
            .copied()
            .or_else(|| self.snap.find("HelmRelease", ns, &object_name))
            .or_else(|| self.snap.find("Kustomization", ns, &object_name));
        let uninstall = s(svc, "/helmAction") == "Uninstall";
        let Some(flux) = flux else {
            // The adapter marked it Failed without creating an object: a configuration error
            // (bad provider config, template, values) in its failureMessage.
            if let Some(st) = status.filter(|st| s(st, "/state") == "Failed") {
                view.observed = None;
                view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::SERVICE_FAILED,
                    object: ObjectId::of(ss),
                    chain,
                    message: format!("{label} is Failed: {}", match s(st, "/failureMessage") {
                        "" => "(no failureMessage)",
                        m => m,
                    }),
                    hint: format!("kubectl ksm render  # with the ServiceSet and its templates: kubectl get serviceset -n {ns} {set_name} -o yaml"),
                }));
                return view;
            }
            if !uninstall {
                view.observed = Some(ServiceState::Pending.as_str().into());
                let since = status.and_then(|st| transition_age(st, self.options.now));
                let stuck = since.is_some_and(|age| age > self.options.stuck_after);
                let reported_deployed = view.reported.as_deref() == Some("Deployed");
                let (severity, why) = if provider_blocks {
                    (
                        Severity::Info,
                        " (expected: the provider above does not deploy it)".to_string(),
                    )
                } else if reported_deployed || stuck {
                    (Severity::Error, String::new())
                } else {
                    (
                        Severity::Warning,
                        " (the adapter may not have created it yet)".to_string(),
                    )
                };
                chain.push(format!("HelmRelease|Kustomization/{ns}/{object_name}"));
                view.findings.push(self.push(Finding {
                    severity,
                    code: codes::FLUX_MISSING,
                    object: ObjectId {
                        api_version: String::new(),
                        kind: "HelmRelease|Kustomization".into(),
                        namespace: ns.into(),
                        name: object_name.clone(),
                    },
                    chain,
                    message: format!(
                        "{label}: no Flux object (HelmRelease or Kustomization labelled for it, or named {object_name}){}{why}",
                        match view.reported.as_deref() {
                            Some(r) => format!(", yet the ServiceSet status says {r}"),
                            None => String::new(),
                        }
                    ),
                    hint: format!("kubectl get helmreleases,kustomizations -n {ns} -l {LABEL_SERVICESET}={}", label_value(set_name)),
                }));
            }
            return view;
        };
        let flux_disp = display(flux);
        view.flux_object = Some(flux_disp.clone());
        chain.push(flux_disp.clone());
        let source = self.source_of(flux);
        view.source = source.map(display);
        let outcome = state::service_state(&Observed {
            object: Some(flux),
            source,
            source_missing: source.is_none() && self.source_kind_collected(flux),
            in_spec: true,
            now: self.options.now,
            source_timeout: self.options.stuck_after,
        });
        view.observed = Some(outcome.state.as_str().into());
        let (cond_reason, cond_message) = outcome.condition.clone().unwrap_or_default();
        let flux_kind = kind_of(flux);
        let flux_cmd = format!(
            "flux get {} -n {ns} {}",
            if flux_kind == "HelmRelease" {
                "helmreleases"
            } else {
                "kustomizations"
            },
            s(flux, "/metadata/name")
        );

        // The first failing link of the chain below the ServiceSet.
        let source_failing = source.filter(|src| source_failing(src));
        if let (Some(src), true) = (
            source_failing,
            matches!(cond_reason.as_str(), "ArtifactFailed" | "SourceNotReady")
                || outcome.state != ServiceState::Deployed,
        ) {
            let msg = ready_message(src);
            let mut c = chain.clone();
            c.push(display(src));
            view.findings.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::SOURCE_FAILING,
                object: ObjectId::of(src),
                chain: c,
                message: format!("{label}: source {} is failing: {msg}", display(src)),
                hint: format!(
                    "flux get sources {} -n {} {}",
                    source_kind_arg(kind_of(src)),
                    s(src, "/metadata/namespace"),
                    s(src, "/metadata/name")
                ),
            }));
        } else if flux.pointer("/spec/suspend").and_then(Value::as_bool) == Some(true) {
            view.findings.push(self.push(Finding {
                severity: Severity::Warning,
                code: codes::FLUX_SUSPENDED,
                object: ObjectId::of(flux),
                chain: chain.clone(),
                message: format!("{label}: {flux_disp} is suspended: Flux does not reconcile it"),
                hint: format!(
                    "flux resume {} -n {ns} {}",
                    flux_kind.to_lowercase(),
                    s(flux, "/metadata/name")
                ),
            }));
        } else {
            match outcome.reason {
                "stalled" => view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::FLUX_STALLED,
                    object: ObjectId::of(flux),
                    chain: chain.clone(),
                    message: format!("{label}: {flux_disp} is stalled ({cond_reason}): {cond_message}"),
                    hint: format!("{flux_cmd}; kubectl describe {} -n {ns} {}", flux_kind.to_lowercase(), s(flux, "/metadata/name")),
                })),
                "dependency-not-ready" => view.findings.push(self.push(Finding {
                    severity: Severity::Warning,
                    code: codes::DEPENDENCY_NOT_READY,
                    object: ObjectId::of(flux),
                    chain: chain.clone(),
                    message: format!("{label}: {flux_disp} waits for a dependency: {cond_message}"),
                    hint: flux_cmd.clone(),
                })),
                "older-generation" => view.findings.push(self.push(Finding {
                    severity: Severity::Warning,
                    code: codes::FLUX_OLD_GENERATION,
                    object: ObjectId::of(flux),
                    chain: chain.clone(),
                    message: format!(
                        "{label}: {flux_disp} has not yet reconciled its latest spec (generation {}, observed {})",
                        flux.pointer("/metadata/generation").and_then(Value::as_i64).unwrap_or(0),
                        flux.pointer("/status/observedGeneration").and_then(Value::as_i64).unwrap_or(0)
                    ),
                    hint: format!("flux reconcile {} -n {ns} {}", flux_kind.to_lowercase(), s(flux, "/metadata/name")),
                })),
                _ if outcome.state == ServiceState::Failed => view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::FLUX_FAILING,
                    object: ObjectId::of(flux),
                    chain: chain.clone(),
                    message: format!(
                        "{label}: {flux_disp} failed ({cond_reason}): {}",
                        outcome.failure_message.clone().unwrap_or(cond_message.clone())
                    ),
                    hint: format!("{flux_cmd}; kubectl describe {} -n {ns} {}", flux_kind.to_lowercase(), s(flux, "/metadata/name")),
                })),
                _ => {}
            }
        }

        // What the ServiceSet status says against what Flux says.
        if let Some(st) = status {
            let reported = s(st, "/state");
            let age = transition_age(st, self.options.now);
            if reported == "Failed"
                && outcome.state == ServiceState::Failed
                && view.findings.is_empty()
            {
                view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::SERVICE_FAILED,
                    object: ObjectId::of(ss),
                    chain: chain.clone(),
                    message: format!("{label} is Failed: {}", s(st, "/failureMessage")),
                    hint: flux_cmd.clone(),
                }));
            }
            if !reported.is_empty() && reported != outcome.state.as_str() {
                view.findings.push(self.push(Finding {
                    severity: Severity::Warning,
                    code: codes::STATUS_DISAGREES,
                    object: ObjectId::of(ss),
                    chain: chain.clone(),
                    message: format!(
                        "{label}: the ServiceSet status says {reported}, but {flux_disp} says {}{}",
                        outcome.state.as_str(),
                        if cond_reason.is_empty() { String::new() } else { format!(" ({cond_reason})") }
                    ),
                    hint: "kubectl logs -n <adapter namespace> deploy/<adapter>  # the adapter is not writing status".into(),
                }));
            }
            if matches!(
                outcome.state,
                ServiceState::Pending | ServiceState::Provisioning
            ) && age.is_some_and(|a| a > self.options.stuck_after)
                && view
                    .findings
                    .iter()
                    .all(|i| self.findings[*i].severity != Severity::Error)
            {
                view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::SERVICE_STUCK,
                    object: ObjectId::of(flux),
                    chain: chain.clone(),
                    message: format!(
                        "{label} has been {} for {} (longer than {}): {}",
                        outcome.state.as_str(),
                        human_duration(age.unwrap_or_default()),
                        human_duration(self.options.stuck_after),
                        if cond_message.is_empty() { "no message from Flux".to_string() } else { format!("{cond_reason}: {cond_message}") }
                    ),
                    hint: format!("{flux_cmd}; kubectl get events -n {ns} --field-selector involvedObject.name={}", s(flux, "/metadata/name")),
                }));
            }
        }
        view
    }

    /// Whether the snapshot holds objects of the kind of the Flux object's source (so that a
    /// source not found is really missing, not just not collected).
    fn source_kind_collected(&self, flux: &Value) -> bool {
        let kind = flux
            .pointer("/spec/chartRef/kind")
            .or_else(|| flux.pointer("/spec/chart/spec/sourceRef/kind"))
            .or_else(|| flux.pointer("/spec/sourceRef/kind"))
            .and_then(Value::as_str)
            .unwrap_or("");
        self.snap.by_kind.contains_key(kind)
    }

    /// The source a Flux object reads from: the chartRef'd HelmChart or OCIRepository, the
    /// HelmChart helm-controller generates for a chart.spec (`<ns>-<name>`), or the
    /// Kustomization's sourceRef.
    fn source_of(&self, flux: &Value) -> Option<&Value> {
        let ns = s(flux, "/metadata/namespace");
        let pick = |r: &Value| -> Option<&Value> {
            let kind = s(r, "/kind");
            let rns = match s(r, "/namespace") {
                "" => ns,
                n => n,
            };
            self.snap.find(kind, rns, s(r, "/name"))
        };
        if let Some(r) = flux.pointer("/spec/chartRef") {
            return pick(r);
        }
        if let Some(r) = flux.pointer("/spec/chart/spec/sourceRef") {
            let src_ns = match s(r, "/namespace") {
                "" => ns,
                n => n,
            };
            let chart = format!("{ns}-{}", s(flux, "/metadata/name"));
            let hc = self.snap.find("HelmChart", src_ns, &chart);
            let repo = pick(r);
            // A failing repository is the root cause of its HelmChart's failure; otherwise
            // the HelmChart carries the chart's own failures (pull, package, values files).
            return match (repo, hc) {
                (Some(repo), _) if source_failing(repo) => Some(repo),
                (_, Some(hc)) if source_failing(hc) => Some(hc),
                (repo, hc) => repo.or(hc),
            };
        }
        flux.pointer("/spec/sourceRef").and_then(pick)
    }
}

fn status_condition(obj: &Value, type_: &'static str) -> Option<Condition> {
    let c = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| s(c, "/type") == type_)?;
    Some(Condition {
        type_,
        status: match s(c, "/status") {
            "True" => Status::True,
            "False" => Status::False,
            _ => Status::Unknown,
        },
        reason: s(c, "/reason").into(),
        message: s(c, "/message").into(),
    })
}

/// A source is failing when it is Stalled, or Ready=False with a reason other than progress.
fn source_failing(src: &Value) -> bool {
    let conds = src.pointer("/status/conditions").and_then(Value::as_array);
    let cond = |t: &str| conds.into_iter().flatten().find(|c| s(c, "/type") == t);
    if cond("Stalled").is_some_and(|c| s(c, "/status") == "True") {
        return true;
    }
    cond("Ready").is_some_and(|c| {
        s(c, "/status") == "False"
            && !matches!(s(c, "/reason"), "Progressing" | "ProgressingWithRetry" | "")
    })
}

fn ready_message(src: &Value) -> String {
    src.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| s(c, "/type") == "Ready" || s(c, "/type") == "Stalled")
        .map(|c| format!("{}: {}", s(c, "/reason"), s(c, "/message")))
        .unwrap_or_else(|| "no Ready condition".into())
}

fn source_kind_arg(kind: &str) -> &'static str {
    match kind {
        "GitRepository" => "git",
        "HelmRepository" => "helm",
        "HelmChart" => "chart",
        "OCIRepository" => "oci",
        "Bucket" => "bucket",
        _ => "all",
    }
}

/// How long ago a service's lastStateTransitionTime was.
fn transition_age(status: &Value, now: DateTime<Utc>) -> Option<Duration> {
    let t = DateTime::parse_from_rfc3339(s(status, "/lastStateTransitionTime")).ok()?;
    (now - t.with_timezone(&Utc)).to_std().ok()
}

pub fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d", s / 86_400),
    }
}
