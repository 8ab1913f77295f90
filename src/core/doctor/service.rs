//! One service of a ServiceSet, followed down its chain: ServiceTemplate → Flux object →
//! source, to its first failing link.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Doctor, Finding, ServiceView, Severity, codes};
use crate::api::flux::{self, FluxObject, SourceRef};
use crate::api::kcm::{Service, ServiceSet, ServiceStatus, ServiceTemplate};
use crate::api::meta::Object;
use crate::api::naming::{self, label_value};
use crate::api::{ObjectId, duration, kinds};
use crate::core::adapter::ownership;
use crate::core::state::{self, Observed, ServiceState};

impl Doctor<'_, '_> {
    pub(super) fn service(
        &mut self,
        ss: ServiceSet,
        svc: Service,
        status: Option<ServiceStatus>,
        provider_blocks: bool,
        ss_disp: &str,
    ) -> ServiceView {
        let (ns, set_name) = (ss.namespace(), ss.name());
        let (name, svc_ns) = (svc.name(), svc.namespace());
        let mut view = ServiceView {
            name: name.into(),
            namespace: svc_ns.into(),
            reported: status
                .map(|st| st.state().to_string())
                .filter(|s| !s.is_empty()),
            observed: None,
            flux_object: None,
            source: None,
            findings: Vec::new(),
        };
        let label = format!("service {name} of ServiceSet {ns}/{set_name}");
        let mut chain = vec![ss_disp.to_string()];

        // The template.
        let template_name = svc.template();
        let template = self
            .snap
            .find(kinds::SERVICE_TEMPLATE.kind, ns, template_name)
            .map(ServiceTemplate);
        chain.push(format!("ServiceTemplate/{ns}/{template_name}"));
        match template {
            Some(t) if t.valid() == Some(false) => {
                let why = t.validation_error();
                view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::TEMPLATE_INVALID,
                    object: t.meta().id(),
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
            None if self.snap.has_kind(kinds::SERVICE_TEMPLATE.kind) => {
                view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::TEMPLATE_INVALID,
                    object: ObjectId::new(&kinds::SERVICE_TEMPLATE, ns, template_name),
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

        // Another ServiceSet of the provider owns the release: the adapter writes nothing.
        let key = (ns.to_string(), set_name.to_string(), name.to_string());
        if let Some(c) = self.flux_conflicts.get(&key).cloned() {
            let (owner, loser) = (&c.owner, &c.loser);
            let mut m = format!(
                "{label} is {}: {} is owned by service {} of ServiceSet {}/{} (priority {}); this ServiceSet has priority {}. ",
                if c.pending { "Pending" } else { "Failed" },
                c.loser.target,
                owner.service,
                owner.namespace,
                owner.service_set,
                owner.priority,
                loser.priority
            );
            m.push_str(if c.pending {
                "The owner is being deleted: this service takes the release over once it is gone."
            } else if owner.priority > loser.priority {
                "The owner has the higher priority: it keeps the release; the adapter writes nothing for this service."
            } else {
                "Equal priorities: the older ServiceSet keeps the release; the adapter writes nothing for this service."
            });
            chain.push(format!(
                "ServiceSet/{}/{}",
                owner.namespace, owner.service_set
            ));
            view.findings.push(self.push(Finding {
                severity: if c.pending {
                    Severity::Warning
                } else {
                    Severity::Error
                },
                code: codes::FLUX_CONFLICT,
                object: ss.meta().id(),
                chain,
                message: m,
                hint: "raise spec.provider.config.priority of the ServiceSet that should own the release (in the ClusterDeployment's or MultiClusterService's serviceSpec.provider.config), or remove the service from the other".into(),
            }));
            return view;
        }

        // The Flux object: labelled by the adapter, or named <serviceset>-<service>.
        let object_name = naming::flux_object_name(set_name, name);
        let (set_label, svc_label) = (label_value(set_name), label_value(name));
        let flux = self
            .snap
            .flux_by_labels(ns, &set_label, &svc_label)
            .or_else(|| self.snap.find(kinds::HELM_RELEASE.kind, ns, &object_name))
            .or_else(|| self.snap.find(kinds::KUSTOMIZATION.kind, ns, &object_name));
        let uninstall = svc.uninstall();
        let flux_kinds = [kinds::HELM_RELEASE.kind, kinds::KUSTOMIZATION.kind];
        if let (None, Some(i)) = (flux, self.unread(&flux_kinds)) {
            view.findings.push(i);
            return view;
        }
        let Some(flux) = flux else {
            // The adapter marked it Failed without creating an object: a configuration error
            // (bad provider config, template, values) in its failureMessage.
            if let Some(st) = status.filter(|st| st.state() == "Failed") {
                view.observed = None;
                view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::SERVICE_FAILED,
                    object: ss.meta().id(),
                    chain,
                    message: format!("{label} is Failed: {}", match st.failure_message() {
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
                    hint: format!("kubectl get helmreleases,kustomizations -n {ns} -l {}", naming::flux_objects_selector(set_name)),
                }));
            }
            return view;
        };
        let flux_disp = Object(flux).display();
        view.flux_object = Some(flux_disp.clone());
        chain.push(flux_disp.clone());
        // Other Flux objects deploying the same release fight with this one.
        if let Some(target) = ownership::target_of(flux)
            && let Some(all) = self.releases.get(&target).filter(|a| a.len() > 1)
        {
            let who: Vec<String> = all
                .iter()
                .map(|o| {
                    let m = Object(o);
                    let owner = m
                        .controller()
                        .filter(|r| {
                            r.get("kind").and_then(Value::as_str) == Some(kinds::SERVICE_SET.kind)
                        })
                        .and_then(|r| r.get("name").and_then(Value::as_str))
                        .or_else(|| {
                            Some(m.label(naming::LABEL_SERVICESET)).filter(|l| !l.is_empty())
                        });
                    match owner {
                        Some(set) => {
                            format!("{} (ServiceSet {}/{set})", m.display(), m.namespace())
                        }
                        None => format!("{} (no ServiceSet)", m.display()),
                    }
                })
                .collect();
            view.findings.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::FLUX_DUPLICATE,
                object: ObjectId::of(flux),
                chain: chain.clone(),
                message: format!(
                    "{label}: {target} is deployed by {} {}s: {}; they fight over it, and deleting either one uninstalls it",
                    all.len(),
                    Object(flux).kind(),
                    who.join(", ")
                ),
                hint: {
                    let word = flux::cli_object_word(Object(flux).kind()).trim_end_matches('s');
                    format!(
                        "flux suspend {word} -n NAMESPACE NAME && kubectl delete {word} -n NAMESPACE NAME  # the one no ServiceSet should own: suspended first, its deletion does not uninstall the release"
                    )
                },
            }));
        }
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
        let (cond_reason, cond_message) = outcome.condition.clone().unwrap_or_default();
        let flux_kind = Object(flux).kind();
        let flux_name = Object(flux).name();
        let flux_cmd = format!(
            "flux get {} -n {ns} {flux_name}",
            flux::cli_object_word(flux_kind)
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
            c.push(Object(src).display());
            view.findings.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::SOURCE_FAILING,
                object: ObjectId::of(src),
                chain: c,
                message: format!(
                    "{label}: source {} is failing: {msg}",
                    Object(src).display()
                ),
                hint: format!(
                    "flux get sources {} -n {} {}",
                    flux::cli_source_word(Object(src).kind()),
                    Object(src).namespace(),
                    Object(src).name()
                ),
            }));
        } else if FluxObject(flux).suspended() {
            view.findings.push(self.push(Finding {
                severity: Severity::Warning,
                code: codes::FLUX_SUSPENDED,
                object: ObjectId::of(flux),
                chain: chain.clone(),
                message: format!("{label}: {flux_disp} is suspended: Flux does not reconcile it"),
                hint: format!(
                    "flux resume {} -n {ns} {}",
                    flux_kind.to_lowercase(),
                    flux_name
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
                    hint: format!("{flux_cmd}; kubectl describe {} -n {ns} {}", flux_kind.to_lowercase(), flux_name),
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
                        Object(flux).generation().unwrap_or(0),
                        Object(flux).observed_generation().unwrap_or(0)
                    ),
                    hint: format!("flux reconcile {} -n {ns} {}", flux_kind.to_lowercase(), flux_name),
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
                    hint: format!("{flux_cmd}; kubectl describe {} -n {ns} {}", flux_kind.to_lowercase(), flux_name),
                })),
                _ => {}
            }
        }

        // What the ServiceSet status says against what Flux says.
        if let Some(st) = status {
            let reported = st.state();
            let age = transition_age(st, self.options.now);
            if reported == "Failed"
                && outcome.state == ServiceState::Failed
                && view.findings.is_empty()
            {
                view.findings.push(self.push(Finding {
                    severity: Severity::Error,
                    code: codes::SERVICE_FAILED,
                    object: ss.meta().id(),
                    chain: chain.clone(),
                    message: format!("{label} is Failed: {}", st.failure_message()),
                    hint: flux_cmd.clone(),
                }));
            }
            if !reported.is_empty() && reported != outcome.state.as_str() {
                view.findings.push(self.push(Finding {
                    severity: Severity::Warning,
                    code: codes::STATUS_DISAGREES,
                    object: ss.meta().id(),
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
                        duration::human(age.unwrap_or_default()),
                        duration::human(self.options.stuck_after),
                        if cond_message.is_empty() { "no message from Flux".to_string() } else { format!("{cond_reason}: {cond_message}") }
                    ),
                    hint: format!("{flux_cmd}; kubectl get events -n {ns} --field-selector involvedObject.name={}", flux_name),
                }));
            }
        }
        view
    }

    /// Whether the snapshot holds objects of the kind of the Flux object's source (so that a
    /// source not found is really missing, not just not collected).
    fn source_kind_collected(&self, flux: &Value) -> bool {
        self.snap.has_kind(FluxObject(flux).source_kind())
    }

    /// The source a Flux object reads from: the chartRef'd HelmChart or OCIRepository, the
    /// HelmChart helm-controller generates for a chart.spec (`<ns>-<name>`), or the
    /// Kustomization's sourceRef.
    fn source_of(&self, flux: &Value) -> Option<&Value> {
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

fn ready_message(src: &Value) -> String {
    Object(src)
        .conditions()
        .find(|c| c.type_() == "Ready" || c.type_() == "Stalled")
        .map(|c| format!("{}: {}", c.reason(), c.message()))
        .unwrap_or_else(|| "no Ready condition".into())
}

/// How long ago a service's lastStateTransitionTime was.
fn transition_age(status: ServiceStatus, now: DateTime<Utc>) -> Option<Duration> {
    let t = DateTime::parse_from_rfc3339(status.last_state_transition_time()).ok()?;
    (now - t.with_timezone(&Utc)).to_std().ok()
}
