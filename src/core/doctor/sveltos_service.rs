//! One service of a Sveltos ServiceSet: its state mapped from the ClusterSummary as kcm maps
//! it, and the first failing link named: a conflict (with the owner and both tiers), an
//! earlier chart holding it, a Helm error, the health verifier, a stale message.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::sveltos::{SetContext, health_conditions, non_retriable, status_of};
use super::{Doctor, Finding, ServiceView, Severity, codes};
use crate::api::kcm::{Service, ServiceSet, ServiceStatus, ServiceTemplate, ServiceType};
use crate::api::kinds;
use crate::api::meta::str_at;
use crate::api::sveltos::{
    self as sv, ClusterConfiguration, ClusterSummary, FEATURE_HELM, FEATURE_KUSTOMIZE,
    FEATURE_RESOURCES, FeatureStatus, MAX_TIER,
};
use crate::core::state::ServiceState;
use crate::core::state::sveltos::{self as mapping, Why};

/// "tier N (priority P)" or "tier 100 (a nil provider config)".
fn tier_words(tier: i64) -> String {
    if tier == sv::DEFAULT_TIER {
        "tier 100 (a nil provider config, or priority 2147483547)".into()
    } else if tier > 0 && tier < MAX_TIER {
        format!("tier {tier} (priority {})", sv::tier_to_priority(tier))
    } else {
        format!("tier {tier}")
    }
}

/// The ClusterSummary a conflict message names (`... ClusterSummary <name> managing it`).
fn conflict_owner(message: &str) -> Option<&str> {
    let rest = &message[message.find("ClusterSummary ")? + "ClusterSummary ".len()..];
    let name = rest.split_whitespace().next()?;
    Some(name.trim_end_matches(['.', ',']))
}

fn age(status: Option<ServiceStatus>, now: DateTime<Utc>) -> Option<Duration> {
    super::age_of(status?.last_state_transition_time(), now)
}

impl Doctor<'_, '_> {
    pub(super) fn sveltos_service(
        &mut self,
        ss: ServiceSet,
        svc: Service,
        ctx: &SetContext,
        ss_disp: &str,
    ) -> ServiceView {
        let (ns, set_name) = (ss.namespace(), ss.name());
        let (name, svc_ns) = (svc.name(), svc.namespace());
        let status = status_of(ss, name, svc_ns);
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
        if let Some(why) = &ctx.blocked {
            view.findings.push(self.push(Finding {
                severity: Severity::Info,
                code: codes::SERVICE_STUCK,
                object: ss.meta().id(),
                chain,
                message: format!("{label}: not followed further: {why}"),
                hint: format!("kubectl get serviceset -n {ns} {set_name} -o yaml"),
            }));
            return view;
        }
        let Some(summary) = ctx.summary else {
            return view;
        };
        let ty = self
            .snap
            .find(kinds::SERVICE_TEMPLATE.kind, ns, svc.template())
            .and_then(|t| ServiceTemplate(t).service_type())
            .or_else(|| match status.map(|s| str_at(s.json(), "/type")) {
                Some("Kustomize") => Some(ServiceType::Kustomize),
                Some("Resource") => Some(ServiceType::Resource),
                _ => None,
            })
            .unwrap_or(ServiceType::Helm);
        let cs = summary.meta();
        let cs_disp = format!("ClusterSummary/{}/{}", cs.namespace(), cs.name());
        chain.push(cs_disp.clone());
        let mapped = mapping::service(summary, ty, svc_ns, name);
        view.observed = Some(mapped.state.as_str().into());
        let (rel_ns, rel_name) = mapping::release_key(svc_ns, name);
        view.flux_object = Some(match ty {
            ServiceType::Helm => format!("{cs_disp} release {rel_ns}/{rel_name}"),
            ServiceType::Kustomize => format!("{cs_disp} feature Kustomize"),
            ServiceType::Resource => format!("{cs_disp} feature Resources"),
        });
        let feature_id = match ty {
            ServiceType::Helm => FEATURE_HELM,
            ServiceType::Kustomize => FEATURE_KUSTOMIZE,
            ServiceType::Resource => FEATURE_RESOURCES,
        };
        let feature = summary.feature(feature_id);
        let stuck = age(status, self.options.now).filter(|a| *a > self.options.stuck_after);
        let reported = view.reported.clone();
        let before = self.findings.len();
        let mut found: Vec<usize> = Vec::new();
        let mut f = |d: &mut Self, severity, code, message: String, hint: String| {
            let i = d.push(Finding {
                severity,
                code,
                object: cs.id(),
                chain: chain.clone(),
                message,
                hint,
            });
            found.push(i);
        };
        let cs_get = format!(
            "kubectl get clustersummary -n {} {} -o yaml",
            cs.namespace(),
            cs.name()
        );
        match mapped.why {
            Why::Conflict => {
                let owner = conflict_owner(&mapped.message).unwrap_or("?");
                let (o_cs, o_profile, o_ss, o_tier) = self.summary_owner(cs.namespace(), owner);
                let ours = summary.tier();
                let mut m = format!(
                    "{label} is Failed: Helm release {rel_ns}/{rel_name} is managed by {o_cs} (of {o_profile}, {o_ss}, {}); this ServiceSet's {cs_disp} has {}. ",
                    o_tier.map_or("tier unknown".into(), tier_words),
                    tier_words(ours)
                );
                match o_tier {
                    Some(t) if ours < t => m.push_str("This one has the lower tier and takes the release over on its next attempt."),
                    Some(t) if ours == t => m.push_str("Equal tiers: the first owner keeps the release; Sveltos does not retry (FailedNonRetriable)."),
                    Some(_) => m.push_str("The owner has the lower tier (strictly lower wins): it keeps the release; Sveltos does not retry (FailedNonRetriable)."),
                    None => {}
                }
                if !summary.continue_on_conflict() {
                    m.push_str(
                        " continueOnConflict is false: the charts after it are not deployed.",
                    );
                }
                m.push_str(&format!(" Sveltos: {}", mapped.message));
                f(self, Severity::Error, codes::HELM_CONFLICT, m,
                  "raise the priority (serviceSpec.provider.config.priority: lower tier = 2147483647 - priority) of the ServiceSet that should own the release, or remove the service from the other".into());
            }
            Why::InstallFailed | Why::UpgradeFailed => {
                let nr = non_retriable(summary, feature_id);
                let mut m = format!("{label} is Failed: {}", mapped.message);
                if mapped.why == Why::UpgradeFailed {
                    m.push_str(" (an older version stays installed)");
                }
                if nr {
                    m.push_str("; the Helm feature is FailedNonRetriable: Sveltos will not retry until the Profile changes");
                }
                let code = if nr {
                    codes::NON_RETRIABLE
                } else {
                    codes::SERVICE_FAILED
                };
                f(self, Severity::Error, code, m, cs_get.clone());
            }
            Why::NotAttempted | Why::NoRelease => {
                if let Some(msg) = ctx.cluster_not_ready {
                    f(
                        self,
                        Severity::Info,
                        codes::CLUSTER_NOT_READY,
                        format!(
                            "{label} is {} because Sveltos cannot use the cluster ({msg:?}, above)",
                            mapped.state
                        ),
                        cs_get.clone(),
                    );
                } else if let Some(blocker) = blocker(summary, rel_ns, rel_name) {
                    f(self, Severity::Warning, codes::CHART_HELD,
                      format!("{label} is {} (never attempted): {blocker}", mapped.state),
                      "fix the earlier chart; or set continueOnError: true (or leave stopOnConflict unset, with a provider config) in serviceSpec.provider.config".into());
                } else if non_retriable(summary, feature_id) {
                    let why = feature.and_then(|x| x.failure_message()).unwrap_or("");
                    f(
                        self,
                        Severity::Error,
                        codes::NON_RETRIABLE,
                        format!(
                            "{label} is {}: the Helm feature is FailedNonRetriable ({why}): Sveltos will not retry",
                            mapped.state
                        ),
                        cs_get.clone(),
                    );
                } else if let Some(a) = stuck {
                    let what = if mapped.why == Why::NoRelease {
                        format!("{cs_disp} has no release summary for {rel_ns}/{rel_name} yet")
                    } else {
                        format!(
                            "Sveltos has neither installed release {rel_ns}/{rel_name} (no valuesHash) nor reported an error for it"
                        )
                    };
                    f(
                        self,
                        Severity::Warning,
                        codes::SERVICE_STUCK,
                        format!(
                            "{label} has been {} for {}: {what}",
                            mapped.state,
                            crate::api::duration::format_coarse(a)
                        ),
                        "kubectl logs -n projectsveltos deploy/addon-controller".into(),
                    );
                }
            }
            Why::Installed => {
                if mapped.state == ServiceState::Deployed
                    && reported.as_deref() == Some("Provisioning")
                {
                    self.verifier_hold(ss, status, summary, &label, ctx, rel_ns, rel_name, &mut f);
                } else if mapped.state == ServiceState::Provisioning
                    && let Some(a) = stuck
                {
                    f(
                        self,
                        Severity::Warning,
                        codes::SERVICE_STUCK,
                        format!(
                            "{label} has been Provisioning for {}: Sveltos's Helm feature is still Provisioning",
                            crate::api::duration::format_coarse(a)
                        ),
                        cs_get.clone(),
                    );
                }
            }
            Why::FeatureFailed => {
                let provisioning =
                    feature.is_some_and(|x| x.status() == FeatureStatus::Provisioning);
                if provisioning {
                    f(
                        self,
                        Severity::Warning,
                        codes::STALE_FAILURE,
                        format!(
                            "{label} is shown Failed from a stale message: the {feature_id} feature is Provisioning again (retrying) and keeps its previous failureMessage: {}",
                            mapped.message
                        ),
                        cs_get.clone(),
                    );
                } else {
                    let nr = non_retriable(summary, feature_id);
                    f(
                        self,
                        Severity::Error,
                        if nr {
                            codes::NON_RETRIABLE
                        } else {
                            codes::SERVICE_FAILED
                        },
                        format!(
                            "{label} is Failed: {}{}",
                            mapped.message,
                            if nr {
                                " (FailedNonRetriable: Sveltos will not retry)"
                            } else {
                                ""
                            }
                        ),
                        cs_get.clone(),
                    );
                }
            }
            Why::FeatureProvisioning => {
                if let Some(a) = stuck {
                    f(
                        self,
                        Severity::Warning,
                        codes::SERVICE_STUCK,
                        format!(
                            "{label} has been Provisioning for {}",
                            crate::api::duration::format_coarse(a)
                        ),
                        cs_get.clone(),
                    );
                }
            }
            Why::Removal | Why::NoRefs | Why::FeatureProvisioned => {}
        }
        // Helm: a failure message kept on a feature that is Provisioning again.
        let nothing_yet = self.findings.len() == before;
        if ty == ServiceType::Helm
            && nothing_yet
            && mapped.state != ServiceState::Deployed
            && let Some(fs) = feature.filter(|x| x.status() == FeatureStatus::Provisioning)
            && let Some(m) = fs.failure_message().filter(|m| !m.is_empty())
        {
            f(
                self,
                Severity::Info,
                codes::STALE_FAILURE,
                format!(
                    "{label}: the Helm feature is Provisioning (retrying) with the previous failureMessage kept: {m}"
                ),
                cs_get,
            );
        }
        view.findings.extend(found);
        view
    }

    /// A Helm service Sveltos deployed that kcm still shows Provisioning: its health verifier.
    #[allow(clippy::too_many_arguments)]
    fn verifier_hold(
        &mut self,
        ss: ServiceSet,
        status: Option<ServiceStatus>,
        summary: ClusterSummary,
        label: &str,
        ctx: &SetContext,
        rel_ns: &str,
        rel_name: &str,
        f: &mut impl FnMut(&mut Self, Severity, &'static str, String, String),
    ) {
        let (ns, set_name) = (ss.namespace(), ss.name());
        let held: Vec<String> = status
            .map(health_conditions)
            .unwrap_or_default()
            .iter()
            .map(|c| format!("{} ({}): {}", c.type_(), c.reason(), c.message()))
            .collect();
        let hint =
            format!("kubectl get serviceset -n {ns} {set_name} -o jsonpath='{{.status.services}}'");
        if !held.is_empty() {
            let text = held.join("; ");
            let mut m = format!(
                "{label} is held Provisioning by kcm's health verifier although Sveltos deployed it: {text}"
            );
            if text.contains("Completed") {
                m.push_str(". Completed pods (Jobs or hooks left behind) are never Ready: the default Pod rule keeps the service Provisioning until they are deleted");
            }
            let rules = self.named_rules(&text);
            if !rules.is_empty() {
                m.push_str(&format!(". The rule: {}", rules.join("; ")));
            }
            f(self, Severity::Error, codes::VERIFIER_HOLD, m, hint);
            return;
        }
        // No unhealthy object: can kcm compute the release's fingerprint?
        let profile_uid = ctx.profile.map(|p| p.meta().uid()).unwrap_or("");
        let (cluster_ns, _, _) = summary.cluster();
        let cluster_ns = if cluster_ns.is_empty() {
            summary.meta().namespace()
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
                .any(|c| str_at(c, "/releaseName") == rel_name && str_at(c, "/namespace") == rel_ns)
        });
        if !self.snap.has_kind(kinds::CLUSTER_CONFIGURATION.kind) {
            f(
                self,
                Severity::Warning,
                codes::VERIFIER_HOLD,
                format!(
                    "{label} is Provisioning although Sveltos deployed it, with no unhealthy object reported: kcm's verifier holds it (no ClusterConfigurations in the snapshot to check the release fingerprint)"
                ),
                hint,
            );
        } else if !has_entry {
            f(
                self,
                Severity::Error,
                codes::VERIFIER_HOLD,
                format!(
                    "{label} is Provisioning although Sveltos deployed it: the ClusterConfiguration of namespace {cluster_ns} has no chart entry for release {rel_ns}/{rel_name}, so kcm cannot compute its fingerprint and never promotes it to Deployed (nor stamps its version)"
                ),
                format!("kubectl get clusterconfigurations -n {cluster_ns} -o yaml"),
            );
        } else {
            f(
                self,
                Severity::Warning,
                codes::VERIFIER_HOLD,
                format!(
                    "{label} is Provisioning although Sveltos deployed it and no health condition is False: kcm's verifier has not promoted it yet (it re-checks every 10 s; rule evaluation errors only reach kcm's log)"
                ),
                hint,
            );
        }
    }
}

/// The earlier chart that made Sveltos stop before this one, in words.
fn blocker(summary: ClusterSummary, rel_ns: &str, rel_name: &str) -> Option<String> {
    for chart in summary.helm_charts() {
        let (cns, cname) = mapping::release_key(
            str_at(chart, "/releaseNamespace"),
            str_at(chart, "/releaseName"),
        );
        if (cns, cname) == (rel_ns, rel_name) {
            return None;
        }
        let st = mapping::helm(summary, cns, cname);
        match st.why {
            Why::InstallFailed | Why::UpgradeFailed if !summary.continue_on_error() => {
                return Some(format!(
                    "the earlier chart {cns}/{cname} failed and continueOnError is false, so Sveltos stopped there ({})",
                    st.message
                ));
            }
            Why::Conflict if !summary.continue_on_conflict() => {
                return Some(format!(
                    "the earlier chart {cns}/{cname} is in conflict and continueOnConflict is false (stopOnConflict, or a nil provider config), so Sveltos stopped there"
                ));
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

    #[test]
    fn tiers_in_words() {
        assert!(tier_words(100).contains("nil provider config"));
        assert_eq!(tier_words(2147483547), "tier 2147483547 (priority 100)");
    }
}
