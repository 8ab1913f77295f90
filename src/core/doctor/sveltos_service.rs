//! One service of a Sveltos ServiceSet: its state mapped from the ClusterSummary as kcm maps
//! it, and the first failing link named: a conflict (with the owner and both tiers), an
//! earlier chart holding it, a Helm error, the health verifier, a stale message.

use std::ops::ControlFlow::{Break, Continue};
use std::time::Duration;

use serde_json::Value;

use super::findings::{
    self, Failed, Held, NotReady, ReleaseOwner, Stale, Stuck, SveltosFailure, VerifierHold, Words,
};
use super::sveltos::{SetContext, health_conditions, non_retriable, status_of};
use super::{Doctor, Link, ServiceView, SetLink, Stop};
use crate::api::kcm::{Service, ServiceSet, ServiceStatus, ServiceTemplate, ServiceType};
use crate::api::kinds;
use crate::api::sveltos::{
    ClusterConfiguration, ClusterSummary, DeployedChart, FEATURE_HELM, FEATURE_KUSTOMIZE,
    FEATURE_RESOURCES, FeatureStatus, FeatureSummary, HelmChartSpec,
};
use crate::core::state::ServiceState;
use crate::core::state::sveltos::{self as mapping, SveltosState, Why};

/// The ClusterSummary a conflict message names (`... ClusterSummary <name> managing it`).
fn conflict_owner(message: &str) -> Option<&str> {
    let rest = &message[message.find("ClusterSummary ")? + "ClusterSummary ".len()..];
    let name = rest.split_whitespace().next()?;
    Some(name.trim_end_matches(['.', ',']))
}

/// A service on its way down the chain, at its ClusterSummary.
struct SummaryService<'a> {
    ss: ServiceSet<'a>,
    status: Option<ServiceStatus<'a>>,
    summary: ClusterSummary<'a>,
    /// "service <name> of ServiceSet <namespace>/<name>".
    label: String,
    /// `ClusterSummary/namespace/name`.
    summary_disp: String,
    /// `kubectl get clustersummary ... -o yaml`.
    summary_get: String,
    /// Its state mapped from the ClusterSummary as kcm maps it.
    mapped: SveltosState,
    /// The Helm release key of the service.
    release: (&'a str, &'a str),
    feature_id: &'static str,
    feature: Option<FeatureSummary<'a>>,
    /// How long it has been in its state, when longer than `--stuck-after`.
    stuck: Option<Duration>,
}

impl Doctor<'_, '_> {
    /// One service of a ServiceSet of kcm's default provider, down its chain.
    pub(super) fn sveltos_service<'a>(
        &mut self,
        set: &SetLink<'a>,
        ctx: &SetContext<'a>,
        svc: Service<'a>,
    ) -> ServiceView {
        let status = status_of(set.ss, svc.name(), svc.namespace());
        let mut view = ServiceView::new(svc, status);
        if let Break(stop) = self.summary_links(set, ctx, svc, status, &mut view) {
            self.stop(stop, &mut view.findings);
        }
        view
    }

    /// The links of a service: past the set-level links, to the ClusterSummary, to the first
    /// failing link kcm's mapping names; else a stale Helm failure.
    fn summary_links<'a>(
        &mut self,
        set: &SetLink<'a>,
        ctx: &SetContext<'a>,
        svc: Service<'a>,
        status: Option<ServiceStatus<'a>>,
        view: &mut ServiceView,
    ) -> Link {
        let ss = set.ss;
        let (ns, set_name) = (ss.namespace(), ss.name());
        let label = format!("service {} of ServiceSet {ns}/{set_name}", svc.name());
        if let Some(why) = &ctx.blocked {
            let words = findings::service_stuck(&label, ns, set_name, Stuck::NotFollowed { why });
            return Break(Stop::At(
                words.about(ss.meta().id(), vec![set.display.clone()]),
            ));
        }
        let Some(summary) = ctx.summary else {
            return Break(Stop::Quiet);
        };
        let ty = self.service_type(ss, svc, status);
        let s = self.at_summary(ss, svc, status, summary, ty, label);
        view.observed = Some(s.mapped.state.as_str().into());
        let (rel_ns, rel_name) = s.release;
        view.provider_object = Some(summary.meta().id());
        view.flux_object = Some(match ty {
            ServiceType::Helm => format!("{} release {rel_ns}/{rel_name}", s.summary_disp),
            ServiceType::Kustomize => format!("{} feature Kustomize", s.summary_disp),
            ServiceType::Resource => format!("{} feature Resources", s.summary_disp),
        });
        if s.mapped.why == Why::Conflict {
            view.owner = Some(self.release_owner_of(&s).service_set);
        }
        let words = self
            .mapped(&s, ctx)
            .or_else(|| stale_helm(&s, ty))
            .map(|w| {
                w.about(
                    summary.meta().id(),
                    vec![set.display.clone(), s.summary_disp],
                )
            });
        match words {
            Some(f) => Break(Stop::At(f)),
            None => Continue(()),
        }
    }

    /// The service's type: its template's, else the one its status names, else Helm.
    fn service_type(
        &self,
        ss: ServiceSet,
        svc: Service,
        status: Option<ServiceStatus>,
    ) -> ServiceType {
        self.snap
            .find(kinds::SERVICE_TEMPLATE.kind, ss.namespace(), svc.template())
            .and_then(|t| ServiceTemplate(t).service_type())
            .or_else(|| match status.map(|s| s.type_()) {
                Some("Kustomize") => Some(ServiceType::Kustomize),
                Some("Resource") => Some(ServiceType::Resource),
                _ => None,
            })
            .unwrap_or(ServiceType::Helm)
    }

    /// The service at its ClusterSummary, mapped as kcm maps it.
    fn at_summary<'a>(
        &self,
        ss: ServiceSet<'a>,
        svc: Service<'a>,
        status: Option<ServiceStatus<'a>>,
        summary: ClusterSummary<'a>,
        ty: ServiceType,
        label: String,
    ) -> SummaryService<'a> {
        let cs = summary.meta();
        let feature_id = match ty {
            ServiceType::Helm => FEATURE_HELM,
            ServiceType::Kustomize => FEATURE_KUSTOMIZE,
            ServiceType::Resource => FEATURE_RESOURCES,
        };
        SummaryService {
            ss,
            status,
            summary,
            label,
            summary_disp: format!("ClusterSummary/{}/{}", cs.namespace(), cs.name()),
            summary_get: format!(
                "kubectl get clustersummary -n {} {} -o yaml",
                cs.namespace(),
                cs.name()
            ),
            mapped: mapping::service(summary, ty, svc.namespace(), svc.name()),
            release: mapping::release_key(svc.namespace(), svc.name()),
            feature_id,
            feature: summary.feature(feature_id),
            stuck: status
                .and_then(|st| super::age_of(st.last_state_transition_time(), self.options.now))
                .filter(|a| *a > self.options.stuck_after),
        }
    }

    /// The finding kcm's mapping of the service leads to, if any.
    fn mapped(&self, s: &SummaryService, ctx: &SetContext) -> Option<Words> {
        match s.mapped.why {
            Why::Conflict => Some(self.helm_conflict(s)),
            Why::InstallFailed => Some(failed(s, SveltosFailure::Install)),
            Why::UpgradeFailed => Some(failed(s, SveltosFailure::Upgrade)),
            Why::NotAttempted | Why::NoRelease => not_attempted(s, ctx),
            Why::Installed => self.installed(s, ctx),
            Why::FeatureFailed => Some(feature_failed(s)),
            Why::FeatureProvisioning => s.stuck.map(|age| {
                let stuck = Stuck::FeatureProvisioning {
                    age,
                    summary_get: &s.summary_get,
                };
                service_stuck(s, stuck)
            }),
            Why::Removal | Why::NoRefs | Why::FeatureProvisioned => None,
        }
    }

    /// Who manages the Helm release a service conflicts on, from Sveltos's message.
    fn release_owner_of(&self, s: &SummaryService) -> ReleaseOwner {
        let owner = conflict_owner(&s.mapped.message).unwrap_or("?");
        self.summary_owner(s.summary.meta().namespace(), owner)
    }

    /// Another ClusterSummary manages the Helm release: its owner and both tiers.
    fn helm_conflict(&self, s: &SummaryService) -> Words {
        let owner = self.release_owner_of(s);
        findings::helm_conflict(
            &s.label,
            s.release,
            &owner,
            &s.summary_disp,
            s.summary.tier(),
            s.summary.continue_on_conflict(),
            &s.mapped.message,
        )
    }

    /// Sveltos installed the release: kcm's health verifier may hold it Provisioning, or
    /// Sveltos is still at it.
    fn installed(&self, s: &SummaryService, ctx: &SetContext) -> Option<Words> {
        let state = s.mapped.state;
        let reported = s.status.map(|st| st.state());
        if state == ServiceState::Deployed && reported == Some("Provisioning") {
            return Some(self.verifier_hold(s, ctx));
        }
        let age = s.stuck.filter(|_| state == ServiceState::Provisioning)?;
        let stuck = Stuck::HelmProvisioning {
            age,
            summary_get: &s.summary_get,
        };
        Some(service_stuck(s, stuck))
    }

    /// A Helm service Sveltos deployed that kcm still shows Provisioning: its health verifier.
    fn verifier_hold(&self, s: &SummaryService, ctx: &SetContext) -> Words {
        let (ns, set_name) = (s.ss.namespace(), s.ss.name());
        let hold = |hold| findings::verifier_hold(&s.label, ns, set_name, hold);
        let held: Vec<String> = s
            .status
            .map(health_conditions)
            .unwrap_or_default()
            .iter()
            .map(|c| format!("{} ({}): {}", c.type_(), c.reason(), c.message()))
            .collect();
        if !held.is_empty() {
            let conditions = held.join("; ");
            let rules = self.named_rules(&conditions);
            return hold(VerifierHold::Unhealthy {
                conditions: &conditions,
                rules: &rules,
            });
        }
        // No unhealthy object: can kcm compute the release's fingerprint?
        let (rel_ns, rel_name) = s.release;
        let profile_uid = ctx.profile.map(|p| p.meta().uid()).unwrap_or("");
        let (cluster_ns, _, _) = s.summary.cluster();
        let cluster_ns = if cluster_ns.is_empty() {
            s.summary.meta().namespace()
        } else {
            cluster_ns
        };
        let profile_name = ctx.profile.map(|p| p.meta().name()).unwrap_or(set_name);
        let configs = self.snap.all(kinds::CLUSTER_CONFIGURATION.kind);
        let charts: Option<&[Value]> = configs
            .iter()
            .map(|c| ClusterConfiguration(c))
            .filter(|c| c.meta().namespace() == cluster_ns)
            .find(|c| c.owned_by(profile_uid) || !c.helm_charts(ctx.kind, profile_name).is_empty())
            .map(|c| c.helm_charts(ctx.kind, profile_name));
        let has_entry = charts.is_some_and(|cs| {
            cs.iter()
                .map(DeployedChart)
                .any(|c| c.release_name() == rel_name && c.namespace() == rel_ns)
        });
        if !self.snap.has_kind(kinds::CLUSTER_CONFIGURATION.kind) {
            hold(VerifierHold::NotCollected)
        } else if !has_entry {
            hold(VerifierHold::NoChartEntry {
                namespace: cluster_ns,
                release: s.release,
            })
        } else {
            hold(VerifierHold::NotYet)
        }
    }
}

/// `service_stuck` for a service of this chain.
fn service_stuck(s: &SummaryService, stuck: Stuck) -> Words {
    findings::service_stuck(&s.label, s.ss.namespace(), s.ss.name(), stuck)
}

/// The Helm release failed to install or upgrade.
fn failed(s: &SummaryService, how: SveltosFailure) -> Words {
    findings::service_failed(
        &s.label,
        s.ss.namespace(),
        s.ss.name(),
        Failed::Sveltos {
            message: &s.mapped.message,
            how,
            non_retriable: non_retriable(s.summary, s.feature_id),
            summary_get: &s.summary_get,
        },
    )
}

/// The Kustomize or Resources feature failed, or shows a failure from before its retry.
fn feature_failed(s: &SummaryService) -> Words {
    if s.feature
        .is_some_and(|x| x.status() == FeatureStatus::Provisioning)
    {
        let stale = Stale::Feature(s.feature_id);
        return findings::stale_failure(&s.label, &s.mapped.message, stale, &s.summary_get);
    }
    failed(s, SveltosFailure::Feature)
}

/// The release was never attempted, or has no release summary yet: why.
fn not_attempted(s: &SummaryService, ctx: &SetContext) -> Option<Words> {
    let state = s.mapped.state;
    if let Some(msg) = ctx.cluster_not_ready {
        let at = NotReady::Service {
            label: &s.label,
            state,
            summary_get: &s.summary_get,
        };
        return Some(findings::cluster_not_ready(msg, at));
    }
    if let Some(held) = blocker(s.summary, s.release) {
        return Some(findings::chart_held(&s.label, state, held));
    }
    if non_retriable(s.summary, s.feature_id) {
        let why = s.feature.and_then(|x| x.failure_message()).unwrap_or("");
        return Some(findings::non_retriable(
            &s.label,
            state,
            why,
            &s.summary_get,
        ));
    }
    s.stuck.map(|age| {
        let stuck = Stuck::NotInstalled {
            state,
            age,
            no_release: s.mapped.why == Why::NoRelease,
            summary: &s.summary_disp,
            release: s.release,
        };
        service_stuck(s, stuck)
    })
}

/// Helm: a failure message kept on a feature that is Provisioning again.
fn stale_helm(s: &SummaryService, ty: ServiceType) -> Option<Words> {
    if ty != ServiceType::Helm || s.mapped.state == ServiceState::Deployed {
        return None;
    }
    let feature = s
        .feature
        .filter(|x| x.status() == FeatureStatus::Provisioning)?;
    let m = feature.failure_message().filter(|m| !m.is_empty())?;
    Some(findings::stale_failure(
        &s.label,
        m,
        Stale::Helm,
        &s.summary_get,
    ))
}

/// The earlier chart that made Sveltos stop before this one.
fn blocker<'a>(summary: ClusterSummary<'a>, release: (&str, &str)) -> Option<Held<'a>> {
    for chart in summary.helm_charts().iter().map(HelmChartSpec) {
        let (cns, cname) = mapping::release_key(chart.release_namespace(), chart.release_name());
        if (cns, cname) == release {
            return None;
        }
        let st = mapping::helm(summary, cns, cname);
        match st.why {
            Why::InstallFailed | Why::UpgradeFailed if !summary.continue_on_error() => {
                return Some(Held::Failed(cns, cname, st.message));
            }
            Why::Conflict if !summary.continue_on_conflict() => {
                return Some(Held::Conflict(cns, cname));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_owner_is_read_from_sveltos_message() {
        assert_eq!(
            conflict_owner(
                "cannot manage chart ingress-nginx/ingress-nginx. ClusterSummary p--dev-cluster-capi-dev-cluster managing it."
            ),
            Some("p--dev-cluster-capi-dev-cluster")
        );
        assert_eq!(conflict_owner("ClusterSummary x managing it"), Some("x"));
        assert_eq!(conflict_owner("nothing"), None);
    }
}
