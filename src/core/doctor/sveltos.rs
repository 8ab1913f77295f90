//! A ServiceSet of kcm's default provider, followed down its chain: ServiceSet → the
//! Profile/ClusterProfile kcm writes → Sveltos's ClusterSummary (+ the ClusterConfiguration
//! and the health rules kcm's verifier applies), to each service's first failing link.
//!
//! States are mapped with kcm's own mapping ([`crate::core::state::sveltos`]); the Profile is
//! rebuilt with the same translation `render` prints ([`crate::core::profile`]) to say why kcm
//! could not write it.

use std::ops::ControlFlow::{self, Break, Continue};

use serde_json::Value;

use super::findings::{
    self, NotMatched, NotReady, NotWritten, Paused, Rebuilt, ReleaseOwner, Suspended, Words,
};
use super::{Doctor, Finding, SetLink, Severity, Stop};
use crate::api::kcm::{ServiceSet, ServiceStatus};
use crate::api::meta::{Condition, Object};
use crate::api::sveltos::{
    self as sv, AGENT_NOT_HEALTHY, CLUSTER_NOT_READY, ClusterRef, ClusterSummary, FeatureStatus,
    ProfileKind, ProfileView,
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

/// What the set-level links found, for the services.
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

/// Where the set-level links stop, and why the services are not followed further (None:
/// as the links above said).
struct Halt(Stop, Option<String>);

/// The Profile (or ClusterProfile) kcm writes for a ServiceSet, on the way down.
struct ProfileLink<'a> {
    ss: ServiceSet<'a>,
    kind: ProfileKind,
    /// `Kind/namespace/name`.
    display: String,
    /// The links passed so far.
    chain: Vec<String>,
}

impl ProfileLink<'_> {
    fn at(&self, words: Words, object: ObjectId) -> Finding {
        words.about(object, self.chain.clone())
    }
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
    /// The set-level links of a ServiceSet of kcm's default provider.
    pub(super) fn sveltos_set(
        &mut self,
        set: &SetLink<'a>,
        found: &mut Vec<usize>,
    ) -> SetContext<'a> {
        let ss = set.ss;
        let kind = if ss.self_management() {
            ProfileKind::ClusterProfile
        } else {
            ProfileKind::Profile
        };
        let namespace = if kind == ProfileKind::Profile {
            ss.namespace()
        } else {
            ""
        };
        let display = disp(kind.kind(), namespace, ss.name());
        let mut p = ProfileLink {
            ss,
            kind,
            chain: vec![set.display.clone(), display.clone()],
            display,
        };
        let mut ctx = SetContext {
            summary: None,
            profile: self
                .snap
                .find(kind.kind().kind, namespace, ss.name())
                .map(ProfileView),
            kind,
            blocked: set
                .provider_blocks
                .then(|| "the provider above does not act on this ServiceSet".into()),
            cluster_not_ready: None,
        };
        if let Some(f) = self.paused(&p, ctx.profile) {
            found.push(self.push(f));
            ctx.blocked
                .get_or_insert_with(|| "the ServiceSet is paused".into());
        }
        if let Break(Halt(stop, why)) =
            self.profile_links(&mut p, set.provider_blocks, &mut ctx, found)
        {
            self.stop(stop, found);
            if why.is_some() {
                ctx.blocked = why;
            }
        }
        ctx
    }

    /// The links below the ServiceSet, in order: the Profile, its references and tier, its
    /// cluster, the ClusterSummary, the cluster as Sveltos sees it, the health rules.
    fn profile_links(
        &mut self,
        p: &mut ProfileLink<'a>,
        provider_blocks: bool,
        ctx: &mut SetContext<'a>,
        found: &mut Vec<usize>,
    ) -> ControlFlow<Halt> {
        let profile = self.profile_written(p, ctx.profile, provider_blocks)?;
        for f in self.references(p, profile) {
            found.push(self.push(f));
        }
        let nil_config = self.nil_config(p, profile);
        self.note(nil_config, found);
        let cluster = self.matching_cluster(p, profile, found)?;
        let summary = self.cluster_summary(p, &cluster)?;
        ctx.summary = Some(summary);
        let spec = self.spec_copied(p, profile, summary);
        self.note(spec, found);
        let not_ready = summary.features().find_map(|f| {
            f.failure_message()
                .filter(|m| *m == CLUSTER_NOT_READY || *m == AGENT_NOT_HEALTHY)
        });
        if let Some(m) = not_ready {
            ctx.cluster_not_ready = Some(m);
            let f = self.cluster_not_ready(p, &cluster, summary, m);
            found.push(self.push(f));
        }
        let suspended = summary_suspended(p, &cluster, summary);
        self.note(suspended, found);
        let rules = health_rules(p.ss);
        self.note(rules, found);
        Continue(())
    }

    /// Paused: the ServiceSet's annotation (Sveltos writes no status for a paused Profile),
    /// or the Profile's.
    fn paused(&self, p: &ProfileLink, profile: Option<ProfileView>) -> Option<Finding> {
        let profile_paused = profile.is_some_and(|p| p.paused());
        let set_paused = p.ss.paused();
        (set_paused || profile_paused).then(|| {
            let paused = Paused::Sveltos {
                profile: &p.display,
                set_paused,
                profile_paused,
            };
            let words = findings::serviceset_paused(p.ss.namespace(), p.ss.name(), paused);
            p.at(words, p.ss.meta().id())
        })
    }

    /// The Profile: written, or why not (unless Profiles could not be read); kcm does not
    /// write it while the provider blocks, and nothing more is said then.
    fn profile_written(
        &self,
        p: &ProfileLink,
        profile: Option<ProfileView<'a>>,
        provider_blocks: bool,
    ) -> ControlFlow<Halt, ProfileView<'a>> {
        let kind = p.kind.kind().kind;
        if let (None, Some(i)) = (profile, self.unread(&[kind])) {
            let why = format!("{} could not be read", p.display);
            return Break(Halt(Stop::Cited(i), Some(why)));
        }
        let cond = condition(p.ss, sv::COND_PROFILE);
        let refused = cond.filter(|c| c.status() == "False");
        if (refused.is_none() && profile.is_some()) || provider_blocks {
            return profile.map_or(Break(Halt(Stop::Quiet, None)), Continue);
        }
        let rebuilt = profile::translate(&profile::Inputs {
            service_set: p.ss.0,
            objects: self.snap,
        });
        let why = match refused {
            Some(c) => NotWritten::Condition(c.reason(), c.message()),
            None if self.snap.has_kind(kind) => NotWritten::Missing,
            None => NotWritten::NotCollected(kind),
        };
        let errors: Vec<String> = rebuilt
            .diagnostics
            .iter()
            .filter(|d| {
                d.severity == Severity::Error && d.code != profile::codes::PROFILE_NOT_WRITTEN
            })
            .map(|d| d.message.replace('\n', "; "))
            .collect();
        let rebuilt = if !errors.is_empty() {
            Rebuilt::Errors(errors)
        } else if let Some(e) = rebuilt.condition.error.as_deref() {
            Rebuilt::KcmError(e)
        } else if rebuilt.profile.is_some() && refused.is_some() {
            Rebuilt::BuildsNow
        } else {
            Rebuilt::Nothing
        };
        let (ns, name) = (p.ss.namespace(), p.ss.name());
        let words = findings::profile_not_written(ns, name, &p.display, why, rebuilt);
        let why = format!("kcm wrote no {kind}");
        Break(Halt(Stop::At(p.at(words, p.ss.meta().id())), Some(why)))
    }

    /// References Sveltos rewrites to the Profile's namespace.
    fn references(&self, p: &ProfileLink, profile: ProfileView) -> Vec<Finding> {
        if p.kind != ProfileKind::Profile {
            return Vec::new();
        }
        let ns = p.ss.namespace();
        let mut out = Vec::new();
        for (field, refs) in [
            ("policyRefs", profile.policy_refs()),
            ("kustomizationRefs", profile.kustomization_refs()),
        ] {
            for r in refs {
                let r_ns = r.namespace();
                if !r_ns.is_empty() && r_ns != ns {
                    let (r_kind, r_name) = (r.kind(), r.name());
                    let words =
                        findings::reference_namespace(&p.display, field, r_kind, r_ns, r_name, ns);
                    out.push(p.at(words, profile.meta().id()));
                }
            }
        }
        out
    }

    /// A nil provider config: tier 100.
    fn nil_config(&self, p: &ProfileLink, profile: ProfileView) -> Option<Finding> {
        let nil = p.ss.provider_config().is_none_or(Value::is_null);
        (nil && profile.tier() == sv::DEFAULT_TIER).then(|| {
            let words = findings::nil_config_tier(p.ss.namespace(), p.ss.name(), &p.display);
            p.at(words, p.ss.meta().id())
        })
    }

    /// The Profile's matching cluster (the first), after the clusters it failed for.
    fn matching_cluster(
        &mut self,
        p: &ProfileLink,
        profile: ProfileView,
        found: &mut Vec<usize>,
    ) -> ControlFlow<Halt, ClusterRef> {
        let matching = profile.matching_clusters();
        for (cluster, msg) in profile.failed_clusters() {
            let how = NotMatched::Failed(&cluster.display(), msg);
            let f = p.at(
                findings::profile_not_matched(&p.display, how),
                profile.meta().id(),
            );
            found.push(self.push(f));
        }
        match matching.first() {
            Some(cluster) => Continue(cluster.clone()),
            None => {
                let words = findings::profile_not_matched(&p.display, NotMatched::NoCluster);
                let why = format!("{} matches no cluster yet", p.display);
                Break(Halt(Stop::At(p.at(words, profile.meta().id())), Some(why)))
            }
        }
    }

    /// The cluster's ClusterSummary of the Profile (unless ClusterSummaries could not be
    /// read); the chain goes on through it.
    fn cluster_summary(
        &self,
        p: &mut ProfileLink,
        cluster: &ClusterRef,
    ) -> ControlFlow<Halt, ClusterSummary<'a>> {
        let cs_name = sv::cluster_summary_name(p.kind, p.ss.name(), cluster);
        let cs_disp = disp(&kinds::CLUSTER_SUMMARY, &cluster.namespace, &cs_name);
        p.chain.push(cs_disp.clone());
        let summary = self
            .snap
            .find(kinds::CLUSTER_SUMMARY.kind, &cluster.namespace, &cs_name);
        if let Some(summary) = summary {
            return Continue(ClusterSummary(summary));
        }
        if let Some(i) = self.unread(&[kinds::CLUSTER_SUMMARY.kind]) {
            return Break(Halt(
                Stop::Cited(i),
                Some(format!("{cs_disp} could not be read")),
            ));
        }
        let collected = self.snap.has_kind(kinds::CLUSTER_SUMMARY.kind);
        let words = findings::summary_missing(&p.display, cluster, &cs_disp, collected);
        let object = ObjectId::new(&kinds::CLUSTER_SUMMARY, &cluster.namespace, &cs_name);
        let why = format!("{cs_disp} is missing");
        Break(Halt(Stop::At(p.at(words, object)), Some(why)))
    }

    /// Sveltos copies the Profile's spec into the summary; until it has, the states are
    /// those of the previous spec. Both compared as the API server stores them, with the
    /// Profile CRD's defaults: a copy saved where the CRDs default less (or more) is the
    /// same spec.
    fn spec_copied(
        &self,
        p: &ProfileLink,
        profile: ProfileView,
        summary: ClusterSummary,
    ) -> Option<Finding> {
        let written = profile.spec()?;
        // Defaulting is a function of the spec: the same text defaults the same (a copy
        // made by Sveltos is the Profile's spec as stored, so this is the usual case).
        if summary.profile_spec() == written {
            return None;
        }
        let spec = with_profile_defaults(p.kind, written);
        let copied = with_profile_defaults(p.kind, summary.profile_spec());
        if copied == spec {
            return None;
        }
        let mut fields: Vec<&str> = spec
            .as_object()
            .into_iter()
            .flat_map(|m| m.iter())
            .filter(|(k, v)| copied.get(k.as_str()) != Some(v))
            .map(|(k, _)| k.as_str())
            .collect();
        fields.sort_unstable();
        let cs = summary.meta();
        let how = NotMatched::NotCopied {
            summary: &disp(&kinds::CLUSTER_SUMMARY, cs.namespace(), cs.name()),
            fields: &fields,
            plural: p.kind.kind().plural,
            namespace: p.ss.namespace(),
            name: p.ss.name(),
        };
        let words = findings::profile_not_matched(&p.display, how);
        Some(p.at(words, summary.meta().id()))
    }

    /// The cluster Sveltos cannot use (`message`): kcm hides the message.
    fn cluster_not_ready(
        &self,
        p: &ProfileLink,
        cluster: &ClusterRef,
        summary: ClusterSummary,
        message: &str,
    ) -> Finding {
        let target_kind = cluster.target_kind().kind;
        let cs = summary.meta();
        let at = NotReady::Summary {
            summary: &disp(&kinds::CLUSTER_SUMMARY, cs.namespace(), cs.name()),
            cluster,
            target: self
                .snap
                .find(target_kind, &cluster.namespace, &cluster.name),
            collected: self.snap.has_kind(target_kind),
        };
        p.at(
            findings::cluster_not_ready(message, at),
            summary.meta().id(),
        )
    }

    /// Who owns a ClusterSummary: its display, its Profile's, the ServiceSet's, its tier.
    pub(super) fn summary_owner(&self, namespace: &str, name: &str) -> ReleaseOwner {
        let owner = |profile: &str, service_set: &str, tier| ReleaseOwner {
            summary: disp(&kinds::CLUSTER_SUMMARY, namespace, name),
            profile: profile.into(),
            service_set: service_set.into(),
            tier,
        };
        let Some(cs) = self
            .snap
            .find(kinds::CLUSTER_SUMMARY.kind, namespace, name)
            .map(ClusterSummary)
        else {
            return owner(
                "its Profile (ClusterSummary not in the snapshot)",
                "?",
                None,
            );
        };
        let tier = Some(cs.tier());
        let Some((kind, profile)) = cs.profile() else {
            return owner("?", "?", tier);
        };
        let p_ns = if kind == ProfileKind::Profile {
            namespace
        } else {
            ""
        };
        let p_disp = disp(kind.kind(), p_ns, profile);
        let set = self
            .snap
            .find(kind.kind().kind, p_ns, profile)
            .and_then(|p| {
                Object(p)
                    .owner_references()
                    .find(|r| r.kind() == kinds::SERVICE_SET.kind)
                    .map(|r| r.name())
            });
        let ss_disp = match set {
            Some(n) => disp(
                &kinds::SERVICE_SET,
                if p_ns.is_empty() { "?" } else { p_ns },
                n,
            ),
            None => "no ServiceSet (not written by kcm)".into(),
        };
        owner(&p_disp, &ss_disp, tier)
    }
}

/// Sveltos suspended the ClusterSummary, or reports a reconcile-level failure.
fn summary_suspended(
    p: &ProfileLink,
    cluster: &ClusterRef,
    summary: ClusterSummary,
) -> Option<Finding> {
    let why = if summary.reconciliation_suspended() {
        Suspended::Reconciliation(summary.suspension_reason())
    } else if !summary.failure_message().is_empty() {
        Suspended::Failure(summary.failure_message())
    } else {
        return None;
    };
    let cs = summary.meta();
    let cs_disp = disp(&kinds::CLUSTER_SUMMARY, cs.namespace(), cs.name());
    let words = findings::summary_suspended(&cs_disp, &cluster.namespace, cs.name(), why);
    Some(p.at(words, cs.id()))
}

/// Health rules kcm could not load.
fn health_rules(ss: ServiceSet) -> Option<Finding> {
    let c = condition(ss, sv::COND_HEALTH_RULES).filter(|c| c.status() == "False")?;
    let words = findings::health_rules_invalid(ss.namespace(), ss.name(), c.reason(), c.message());
    Some(words.about(ss.meta().id(), vec![ss.meta().display()]))
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
    status
        .conditions()
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
                .and_then(|c| Object(c).data_str("rules"))
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
    // The spec cloned, not serialised into a new value as `json!` would.
    let mut o = Value::Object(serde_json::Map::from_iter([
        ("apiVersion".to_string(), k.api_version.into()),
        ("kind".to_string(), k.kind.into()),
        ("spec".to_string(), spec.clone()),
    ]));
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
