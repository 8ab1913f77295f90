//! A ServiceSet of kcm's default provider, followed down its chain: ServiceSet → the
//! Profile/ClusterProfile kcm writes → Sveltos's ClusterSummary (+ the ClusterConfiguration
//! and the health rules kcm's verifier applies), to each service's first failing link.
//!
//! States are mapped with kcm's own mapping ([`crate::core::state::sveltos`]); the Profile is
//! rebuilt with the same translation `render` prints ([`crate::core::profile`]) to say why kcm
//! could not write it.

use serde_json::Value;

use super::{Doctor, Finding, Severity, codes};
use crate::api::kcm::{ServiceSet, ServiceStatus};
use crate::api::meta::{Condition, items_at};
use crate::api::sveltos::{
    self as sv, AGENT_NOT_HEALTHY, CLUSTER_NOT_READY, CapiCluster, ClusterRef, ClusterSummary,
    FeatureStatus, ProfileKind, ProfileView, SveltosCluster,
};
use crate::api::{ObjectId, kinds};
use crate::core::profile::{self, Objects};

use super::snapshot::Snapshot;

/// kcm's translation reads the snapshot's objects.
impl Objects for Snapshot<'_> {
    fn get(&self, kind: &kinds::Kind, namespace: &str, name: &str) -> Option<&Value> {
        self.find(kind.kind, namespace, name)
    }
    fn has_kind(&self, kind: &kinds::Kind) -> bool {
        Snapshot::has_kind(self, kind.kind)
    }
}

/// What the set-level diagnosis found, for the services.
pub(super) struct SetContext<'a> {
    pub summary: Option<ClusterSummary<'a>>,
    pub profile: Option<ProfileView<'a>>,
    pub kind: ProfileKind,
    /// The services cannot be diagnosed further (no Profile, no summary, blocked above):
    /// why, for their Info finding.
    pub blocked: Option<String>,
    /// Sveltos cannot use the cluster (its message).
    pub cluster_not_ready: Option<&'a str>,
}

fn condition<'a>(ss: ServiceSet<'a>, type_: &str) -> Option<Condition<'a>> {
    ss.meta().condition(type_)
}

/// `Kind/namespace/name` of an object.
fn disp(kind: &kinds::Kind, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{}/{name}", kind.kind)
    } else {
        format!("{}/{namespace}/{name}", kind.kind)
    }
}

impl<'a> Doctor<'a, '_> {
    /// The set-level links of a Sveltos ServiceSet; pushes its findings into `set_findings`.
    pub(super) fn sveltos_set(
        &mut self,
        ss: ServiceSet<'a>,
        provider_blocks: bool,
        set_findings: &mut Vec<usize>,
        ss_disp: &str,
    ) -> SetContext<'a> {
        let (ns, name) = (ss.namespace(), ss.name());
        let kind = if ss.self_management() {
            ProfileKind::ClusterProfile
        } else {
            ProfileKind::Profile
        };
        let profile_ns = if kind == ProfileKind::Profile { ns } else { "" };
        let profile_disp = disp(kind.kind(), profile_ns, name);
        let mut ctx = SetContext {
            summary: None,
            profile: None,
            kind,
            blocked: None,
            cluster_not_ready: None,
        };
        if provider_blocks {
            ctx.blocked = Some("the provider above does not act on this ServiceSet".into());
        }
        let profile = self
            .snap
            .find(kind.kind().kind, profile_ns, name)
            .map(ProfileView);
        ctx.profile = profile;
        let mut chain = vec![ss_disp.to_string(), profile_disp.clone()];

        // Paused: the ServiceSet's annotation (Sveltos writes no status for a paused Profile).
        let profile_paused = profile.is_some_and(|p| p.paused());
        if ss.paused() || profile_paused {
            let why = match (ss.paused(), profile_paused) {
                (true, true) => format!(
                    "ServiceSet {ns}/{name} is paused ({}) and kcm annotated {profile_disp} {}",
                    crate::api::naming::ANNOTATION_PAUSED,
                    sv::ANNOTATION_PROFILE_PAUSED
                ),
                (true, false) => format!(
                    "ServiceSet {ns}/{name} is paused ({}); kcm adds {} to {profile_disp} on its next reconcile",
                    crate::api::naming::ANNOTATION_PAUSED,
                    sv::ANNOTATION_PROFILE_PAUSED
                ),
                _ => format!(
                    "{profile_disp} carries {} but the ServiceSet is not paused: kcm removes it on its next reconcile",
                    sv::ANNOTATION_PROFILE_PAUSED
                ),
            };
            set_findings.push(self.push(Finding {
                severity: Severity::Warning,
                code: codes::SERVICESET_PAUSED,
                object: ss.meta().id(),
                chain: chain.clone(),
                message: format!("{why}: Sveltos skips the Profile, nothing is deployed or updated and the service states are frozen (a paused Profile shows nothing in its status)"),
                hint: format!("kubectl annotate serviceset -n {ns} {name} {}-", crate::api::naming::ANNOTATION_PAUSED),
            }));
            if ctx.blocked.is_none() {
                ctx.blocked = Some("the ServiceSet is paused".into());
            }
        }

        // The Profile: written, or why not (unless Profiles could not be read).
        let cond = condition(ss, sv::COND_PROFILE);
        if let (None, Some(i)) = (profile, self.unread(&[kind.kind().kind])) {
            set_findings.push(i);
            ctx.blocked = Some(format!("{profile_disp} could not be read"));
            return ctx;
        }
        let not_written = cond.is_some_and(|c| c.status() == "False") || profile.is_none();
        if not_written && !provider_blocks {
            let rebuilt = profile::translate(&profile::Inputs {
                service_set: ss.0,
                objects: self.snap,
            });
            let mut message = match cond {
                Some(c) if c.status() == "False" => format!(
                    "kcm could not write {profile_disp}: ServiceSetProfile=False {}: {}",
                    c.reason(),
                    c.message().replace('\n', "; ")
                ),
                _ if self.snap.has_kind(kind.kind().kind) => {
                    format!("{profile_disp} does not exist")
                }
                _ => format!(
                    "{profile_disp} is not in the snapshot (no {} collected)",
                    kind.kind().kind
                ),
            };
            let why: Vec<String> = rebuilt
                .diagnostics
                .iter()
                .filter(|d| {
                    d.severity == Severity::Error && d.code != profile::codes::PROFILE_NOT_WRITTEN
                })
                .map(|d| d.message.replace('\n', "; "))
                .collect();
            if !why.is_empty() {
                message.push_str(&format!(". Rebuilt as kcm builds it: {}", why.join("; ")));
            } else if let Some(e) = rebuilt.condition.error.as_deref() {
                message.push_str(&format!(". kcm's error: {}", e.replace('\n', "; ")));
            } else if rebuilt.profile.is_some() && cond.is_some_and(|c| c.status() == "False") {
                message.push_str(". Rebuilt from the objects at hand it builds now: the cause is gone or lies in the regional cluster or the API server (see kcm's Warning events)");
            }
            set_findings.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::PROFILE_NOT_WRITTEN,
                object: ss.meta().id(),
                chain: chain.clone(),
                message,
                hint: format!("kubectl ksm render --live {name} -n {ns}; kubectl get events -n {ns} --field-selector involvedObject.name={name}"),
            }));
            ctx.blocked = Some(format!("kcm wrote no {}", kind.kind().kind));
            return ctx;
        }
        let Some(profile) = profile else {
            return ctx;
        };

        // References Sveltos rewrites to the Profile's namespace.
        if kind == ProfileKind::Profile {
            for field in ["policyRefs", "kustomizationRefs"] {
                for r in items_at(profile.0, &format!("/spec/{field}")) {
                    let r_ns = crate::api::meta::str_at(r, "/namespace");
                    if !r_ns.is_empty() && r_ns != ns {
                        let r_kind = crate::api::meta::str_at(r, "/kind");
                        let r_name = crate::api::meta::str_at(r, "/name");
                        set_findings.push(self.push(Finding {
                            severity: Severity::Warning,
                            code: codes::REFERENCE_NAMESPACE,
                            object: profile.meta().id(),
                            chain: chain.clone(),
                            message: format!("{profile_disp}: spec.{field} names {r_kind} {r_ns}/{r_name}, but Sveltos reads a Profile's {field} in the Profile's namespace: it deploys {r_kind} {ns}/{r_name} (if it exists) instead"),
                            hint: format!("kubectl get {} -n {ns} {r_name}", r_kind.to_lowercase()),
                        }));
                    }
                }
            }
        }

        // Nil provider config: tier 100.
        if ss.provider_config().is_none_or(Value::is_null) && profile.tier() == sv::DEFAULT_TIER {
            set_findings.push(self.push(Finding {
                severity: Severity::Warning,
                code: codes::NIL_CONFIG_TIER,
                object: ss.meta().id(),
                chain: chain.clone(),
                message: format!("ServiceSet {ns}/{name} has no provider config: {profile_disp} has tier 100 (it wins every conflict against ServiceSets with a priority, whose tiers are about 2.1e9) and continueOnConflict false (its first conflict stops the charts after it)"),
                hint: "give the ClusterDeployment/MultiClusterService serviceSpec.provider.config (even {}), or leave serviceSpec.provider.name empty".into(),
            }));
        }

        // Matching cluster → ClusterSummary.
        let matching = profile.matching_clusters();
        for (cluster, msg) in profile.failed_clusters() {
            set_findings.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::PROFILE_NOT_MATCHED,
                object: profile.meta().id(),
                chain: chain.clone(),
                message: format!(
                    "{profile_disp} failed for cluster {}: {msg}",
                    cluster.display()
                ),
                hint: "kubectl logs -n projectsveltos deploy/addon-controller".into(),
            }));
        }
        let Some(cluster) = matching.first().cloned() else {
            set_findings.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::PROFILE_NOT_MATCHED,
                object: profile.meta().id(),
                chain: chain.clone(),
                message: format!("{profile_disp} has no status.matchingClusters: Sveltos has not reconciled it, so there is no ClusterSummary and kcm collects no service state"),
                hint: "kubectl logs -n projectsveltos deploy/addon-controller | grep -i profile".into(),
            }));
            ctx.blocked = Some(format!("{profile_disp} matches no cluster yet"));
            return ctx;
        };
        let cs_name = sv::cluster_summary_name(kind, name, &cluster);
        let cs_disp = disp(&kinds::CLUSTER_SUMMARY, &cluster.namespace, &cs_name);
        chain.push(cs_disp.clone());
        let summary = self
            .snap
            .find(kinds::CLUSTER_SUMMARY.kind, &cluster.namespace, &cs_name);
        if let (None, Some(i)) = (summary, self.unread(&[kinds::CLUSTER_SUMMARY.kind])) {
            set_findings.push(i);
            ctx.blocked = Some(format!("{cs_disp} could not be read"));
            return ctx;
        }
        let Some(summary) = self
            .snap
            .find(kinds::CLUSTER_SUMMARY.kind, &cluster.namespace, &cs_name)
            .map(ClusterSummary)
        else {
            let collected = self.snap.has_kind(kinds::CLUSTER_SUMMARY.kind);
            set_findings.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::SUMMARY_MISSING,
                object: ObjectId::new(&kinds::CLUSTER_SUMMARY, &cluster.namespace, &cs_name),
                chain: chain.clone(),
                message: if collected {
                    format!("{profile_disp} matches {} but {cs_disp} does not exist: kcm keeps the last service states", cluster.display())
                } else {
                    format!("{cs_disp} is not in the snapshot (no ClusterSummaries collected)")
                },
                hint: format!("kubectl get clustersummaries -n {}", cluster.namespace),
            }));
            ctx.blocked = Some(format!("{cs_disp} is missing"));
            return ctx;
        };
        ctx.summary = Some(summary);
        // Sveltos copies the Profile's spec into the summary; until it has, the states are
        // those of the previous spec.
        // Both as the API server stores them, with the Profile CRD's defaults: a copy saved
        // where the CRDs default less (or more) is the same spec.
        let (spec, copied) = (
            profile
                .0
                .get("spec")
                .map(|s| with_profile_defaults(kind, s)),
            with_profile_defaults(kind, summary.profile_spec()),
        );
        if let Some(spec) = spec
            && copied != spec
        {
            let mut fields: Vec<&str> = spec
                .as_object()
                .into_iter()
                .flat_map(|m| m.iter())
                .filter(|(k, v)| copied.get(k.as_str()) != Some(v))
                .map(|(k, _)| k.as_str())
                .collect();
            fields.sort_unstable();
            set_findings.push(self.push(Finding {
                severity: Severity::Info,
                code: codes::PROFILE_NOT_MATCHED,
                object: summary.meta().id(),
                chain: chain.clone(),
                message: format!("{cs_disp} does not hold {profile_disp}'s current spec yet (differs in: {}): the service states are those of the spec Sveltos last copied", if fields.is_empty() { "removed fields".to_string() } else { fields.join(", ") }),
                hint: format!("kubectl get {} -n {ns} {name} -o jsonpath='{{.status}}'", kind.kind().plural),
            }));
        }

        // The cluster Sveltos cannot use: kcm hides the message.
        let not_ready = summary.features().find_map(|f| {
            f.failure_message()
                .filter(|m| *m == CLUSTER_NOT_READY || *m == AGENT_NOT_HEALTHY)
        });
        if let Some(m) = not_ready {
            ctx.cluster_not_ready = Some(m);
            let target = self.cluster_state(&cluster);
            set_findings.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::CLUSTER_NOT_READY,
                object: summary.meta().id(),
                chain: chain.clone(),
                message: format!("{cs_disp}: Sveltos reports {m:?} for every feature ({target}); kcm shows its Helm services Pending (or still Deployed) and never this message"),
                hint: format!(
                    "kubectl get {}.{} -n {} {} -o yaml",
                    cluster.target_kind().plural,
                    cluster.target_kind().group,
                    cluster.namespace,
                    cluster.name
                ),
            }));
        }
        if summary.reconciliation_suspended() || !summary.failure_message().is_empty() {
            let what = if summary.reconciliation_suspended() {
                format!(
                    "reconciliation is suspended ({})",
                    match summary.suspension_reason() {
                        "" => "no reason given",
                        r => r,
                    }
                )
            } else {
                format!("Sveltos reports: {}", summary.failure_message())
            };
            set_findings.push(self.push(Finding {
                severity: Severity::Warning,
                code: codes::SUMMARY_SUSPENDED,
                object: summary.meta().id(),
                chain: chain.clone(),
                message: format!("{cs_disp}: {what}"),
                hint: format!(
                    "kubectl get clustersummary -n {} {cs_name} -o yaml",
                    cluster.namespace
                ),
            }));
        }
        // Health rules kcm could not load.
        if let Some(c) = condition(ss, sv::COND_HEALTH_RULES).filter(|c| c.status() == "False") {
            set_findings.push(self.push(Finding {
                severity: Severity::Error,
                code: codes::HEALTH_RULES_INVALID,
                object: ss.meta().id(),
                chain: vec![ss_disp.to_string()],
                message: format!("kcm cannot load the health rules of ServiceSet {ns}/{name} ({}): {}; its verifier does not run, so Helm services are not promoted to Deployed nor their version stamped", c.reason(), c.message()),
                hint: format!("kubectl get configmaps -A -l {}", sv::LABEL_HEALTH_RULE_TARGET),
            }));
        }
        ctx
    }

    /// The target cluster as Sveltos judges it, in words.
    fn cluster_state(&self, cluster: &ClusterRef) -> String {
        let target = self.snap.find(
            cluster.target_kind().kind,
            &cluster.namespace,
            &cluster.name,
        );
        match target {
            None if self.snap.has_kind(cluster.target_kind().kind) => {
                format!("{} does not exist", cluster.display())
            }
            None => format!("{} is not in the snapshot", cluster.display()),
            Some(t) if cluster.is_sveltos() => {
                let s = SveltosCluster(t);
                let mut m = format!("{}: ready={}", cluster.display(), s.ready());
                if !s.connection_status().is_empty() {
                    m.push_str(&format!(", connectionStatus {}", s.connection_status()));
                }
                if !s.failure_message().is_empty() {
                    m.push_str(&format!(", {}", s.failure_message()));
                }
                m
            }
            Some(t) => format!(
                "{}: control plane initialized: {}",
                cluster.display(),
                CapiCluster(t).control_plane_initialized()
            ),
        }
    }

    /// Who owns a ClusterSummary: (its display, its Profile's display, the ServiceSet's
    /// display, its tier).
    pub(super) fn summary_owner(
        &self,
        namespace: &str,
        name: &str,
    ) -> (String, String, String, Option<i64>) {
        let cs_disp = disp(&kinds::CLUSTER_SUMMARY, namespace, name);
        let Some(cs) = self
            .snap
            .find(kinds::CLUSTER_SUMMARY.kind, namespace, name)
            .map(ClusterSummary)
        else {
            return (
                cs_disp,
                "its Profile (ClusterSummary not in the snapshot)".into(),
                "?".into(),
                None,
            );
        };
        let tier = Some(cs.tier());
        let Some((kind, profile)) = cs.profile() else {
            return (cs_disp, "?".into(), "?".into(), tier);
        };
        let p_ns = if kind == ProfileKind::Profile {
            namespace
        } else {
            ""
        };
        let p_disp = disp(kind.kind(), p_ns, profile);
        let owner = self
            .snap
            .find(kind.kind().kind, p_ns, profile)
            .and_then(|p| {
                items_at(p, "/metadata/ownerReferences")
                    .iter()
                    .find(|r| crate::api::meta::str_at(r, "/kind") == kinds::SERVICE_SET.kind)
                    .map(|r| crate::api::meta::str_at(r, "/name"))
            });
        let ss_disp = match owner {
            Some(n) => disp(
                &kinds::SERVICE_SET,
                if p_ns.is_empty() { "?" } else { p_ns },
                n,
            ),
            None => "no ServiceSet (not written by kcm)".into(),
        };
        (cs_disp, p_disp, ss_disp, tier)
    }
}

/// The ServiceSet status entry of a service.
pub(super) fn status_of<'a>(
    ss: ServiceSet<'a>,
    name: &str,
    namespace: &str,
) -> Option<ServiceStatus<'a>> {
    ss.service_statuses()
        .find(|s| s.name() == name && s.namespace() == namespace)
}

/// The `ServiceHealth*` conditions of a service status that are False.
pub(super) fn health_conditions(status: ServiceStatus) -> Vec<Condition> {
    items_at(status.json(), "/conditions")
        .iter()
        .map(Condition)
        .filter(|c| c.type_().starts_with(sv::SERVICE_HEALTH_PREFIX) && c.status() == "False")
        .collect()
}

/// A feature's status is FailedNonRetriable.
pub(super) fn non_retriable(summary: ClusterSummary, feature: &str) -> bool {
    summary
        .feature(feature)
        .is_some_and(|f| f.status() == FeatureStatus::FailedNonRetriable)
}

impl Doctor<'_, '_> {
    /// The rules a health condition's message names (`rule <ns>/<configmap>#<i>`), read from
    /// the ConfigMaps of the snapshot as kcm reads them: "`<ns>/<cm>#<i>`: <group>/<kind>
    /// healthy: <expression>".
    pub(super) fn named_rules(&self, message: &str) -> Vec<String> {
        let mut out = Vec::new();
        for part in message.split("rule ").skip(1) {
            let reference: String = part
                .chars()
                .take_while(|c| !matches!(c, ')' | ';' | ',' | ' '))
                .collect();
            let Some((cm, index)) = reference.split_once('#') else {
                continue;
            };
            let Some((ns, name)) = cm.split_once('/') else {
                continue;
            };
            let Ok(index) = index.parse::<usize>() else {
                continue;
            };
            let Some(text) = self
                .snap
                .find(kinds::CONFIG_MAP.kind, ns, name)
                .and_then(|c| c.pointer("/data/rules"))
                .and_then(Value::as_str)
            else {
                continue;
            };
            let (rules, _) = crate::core::lint::health_rules::parse_rules(text);
            if let Some(r) = rules.into_iter().find(|r| r.index == index) {
                let healthy = r.healthy.split_whitespace().collect::<Vec<_>>().join(" ");
                let line = format!(
                    "{reference}: {} healthy: {healthy}",
                    if r.group.is_empty() {
                        r.kind.clone()
                    } else {
                        format!("{}/{}", r.group, r.kind)
                    }
                );
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
        out
    }
}

/// A Profile (or ClusterProfile) spec with the defaults and pruning of its CRD, as the API
/// server stores it.
fn with_profile_defaults(kind: ProfileKind, spec: &Value) -> Value {
    let k = kind.kind();
    let mut o = serde_json::json!({"apiVersion": k.api_version, "kind": k.kind, "spec": spec});
    crate::core::crds::default_and_prune(&mut o);
    o.get_mut("spec").map(Value::take).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_spec_and_its_copy_compare_with_the_crds_defaults() {
        let written = json!({"syncMode": "Continuous", "helmCharts": [{"repositoryURL": "oci://x",
            "repositoryName": "x", "chartName": "x", "chartVersion": "1.0.0",
            "releaseName": "x", "releaseNamespace": "x", "helmChartAction": "Install",
            "options": {"atomic": true}}]});
        // The same spec as a server with the real CRD stores it: its defaults filled in.
        let stored = with_profile_defaults(ProfileKind::Profile, &written);
        assert_ne!(stored, written, "the CRD defaults something here");
        assert_eq!(with_profile_defaults(ProfileKind::Profile, &stored), stored);
        // A real difference stays one.
        let mut other = written.clone();
        other["helmCharts"][0]["chartVersion"] = json!("2.0.0");
        assert_ne!(with_profile_defaults(ProfileKind::Profile, &other), stored);
    }
}
