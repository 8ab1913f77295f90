//! A MultiClusterService as kcm's controller leaves it (kcm
//! `internal/controller/multiclusterservice_controller.go`): stopped by a failed validation,
//! or blocked on some of its clusters by a MultiClusterService it depends on, which doctor
//! names and follows to the service that holds it there, waiting or stuck.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use super::Doctor;
use super::findings::{self, Blocked, McsBlocked, Words};
use crate::api::kcm::{
    COND_MCS_DEPENDENCY_READY, ClusterTarget, MCS_VALIDATIONS, MatchingCluster,
    REASON_MCS_DEPENDENCY_NOT_READY, ServiceSet, ServiceSource, service_key,
};
use crate::api::kinds;
use crate::api::meta::Object;

/// One MultiClusterService as doctor sees it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McsView {
    pub name: String,
    /// Indexes into `Report::findings`.
    pub findings: Vec<usize>,
}

/// What holds a target back: whether it can resolve by itself, and the words.
struct Hold {
    stuck: bool,
    text: String,
}

/// The target a `matchingClusters` entry names, in words.
fn target_words(t: MatchingCluster) -> String {
    if t.is_management() {
        "the management cluster".to_string()
    } else {
        format!("ClusterDeployment {}/{}", t.namespace(), t.name())
    }
}

/// What following a blocked target looks up, by key rather than by scanning (a
/// MultiClusterService of a fleet has thousands of targets, each blocked one looked up):
/// each the first of its key, as a scan in snapshot order finds it.
struct Targets<'a> {
    /// (MultiClusterService, cluster: namespace and name, None for the management cluster)
    /// -> its ServiceSet there.
    sets: HashMap<(&'a str, ClusterTarget<'a>), ServiceSet<'a>>,
    /// (MultiClusterService, target kind, namespace, name) -> kcm's entry for the target.
    entries: HashMap<(&'a str, &'a str, &'a str, &'a str), MatchingCluster<'a>>,
}

impl<'a> Targets<'a> {
    fn new(snap: &super::Snapshot<'a>) -> Targets<'a> {
        let mut sets = HashMap::new();
        for s in snap.all(kinds::SERVICE_SET.kind) {
            let s = ServiceSet(s);
            let cluster = Some((s.namespace(), s.cluster())).filter(|(_, c)| !c.is_empty());
            sets.entry((s.multi_cluster_service(), cluster))
                .or_insert(s);
        }
        let mut entries = HashMap::new();
        for m in snap.all(kinds::MULTI_CLUSTER_SERVICE.kind) {
            let name = Object(m).name();
            // The one a name finds (of two of one name in a dump, the first).
            if !snap
                .find(kinds::MULTI_CLUSTER_SERVICE.kind, "", name)
                .is_some_and(|found| std::ptr::eq(found, *m))
            {
                continue;
            }
            for t in ServiceSource(m).matching_clusters() {
                entries
                    .entry((name, t.kind(), t.namespace(), t.name()))
                    .or_insert(t);
            }
        }
        Targets { sets, entries }
    }

    /// The ServiceSet of MultiClusterService `mcs` on the target of `t`: on the management
    /// cluster, the one with no cluster.
    fn set(&self, mcs: &str, t: MatchingCluster) -> Option<ServiceSet<'a>> {
        self.sets.get(&(mcs, t.target())).copied()
    }

    /// The entry of MultiClusterService `mcs` for the same target as `t`.
    fn entry(&self, mcs: &str, t: MatchingCluster) -> Option<MatchingCluster<'a>> {
        self.entries
            .get(&(mcs, t.kind(), t.namespace(), t.name()))
            .copied()
    }
}

impl<'a> Doctor<'a, '_> {
    /// The MultiClusterServices of the snapshot within the options' filters.
    pub(super) fn multi_cluster_services(&mut self) -> Vec<McsView> {
        if self.options.service_set.is_some() {
            return Vec::new();
        }
        let mut all: Vec<&Value> = self.snap.all(kinds::MULTI_CLUSTER_SERVICE.kind).to_vec();
        all.sort_by_key(|m| Object(m).name());
        let targets = Targets::new(self.snap);
        all.into_iter()
            .filter(|m| {
                self.options.namespace.as_deref().is_none_or(|ns| {
                    ServiceSource(m)
                        .matching_clusters()
                        .any(|t| t.namespace() == ns)
                })
            })
            .map(|m| self.multi_cluster_service(m, &targets))
            .collect()
    }

    fn multi_cluster_service(&mut self, mcs: &Value, targets: &Targets<'a>) -> McsView {
        let meta = Object(mcs);
        let name = meta.name().to_string();
        let disp = meta.display();
        let mut view = McsView {
            name: name.clone(),
            findings: Vec::new(),
        };
        let at = |words: Words, chain| words.about(meta.id(), chain);
        // A failed validation: kcm goes no further, whatever the rest of the status says.
        if let Some(c) = MCS_VALIDATIONS
            .iter()
            .find_map(|t| meta.condition(t).filter(|c| c.status() == "False"))
        {
            let stale = match (c.observed_generation(), meta.generation()) {
                (Some(o), Some(g)) if o < g => Some((o, g)),
                _ => None,
            };
            let words = findings::mcs_not_reconciled(&name, c.type_(), c.message(), stale);
            view.findings.push(self.push(at(words, vec![disp.clone()])));
            return view;
        }
        if let Some(c) = meta
            .condition(COND_MCS_DEPENDENCY_READY)
            .filter(|c| c.status() == "Unknown")
        {
            let words =
                findings::mcs_blocked(&name, McsBlocked::Unchecked(c.reason(), c.message()));
            view.findings.push(self.push(at(words, vec![disp.clone()])));
        }
        for t in ServiceSource(mcs)
            .matching_clusters()
            .filter(|t| t.reason() == REASON_MCS_DEPENDENCY_NOT_READY)
        {
            let mut chain = vec![disp.clone()];
            let mut visited = HashSet::from([name.clone()]);
            let waits = t.waiting_on();
            let holds: Vec<(String, Hold)> = waits
                .iter()
                .map(|(dep, says)| {
                    let h = self.dependency_hold(dep, t, targets, &mut visited, &mut chain);
                    (format!("{dep} (kcm: {says})"), h)
                })
                .collect();
            let stuck = holds.iter().any(|(_, h)| h.stuck);
            let waited = super::age_of(t.last_transition_time(), self.options.now)
                .filter(|a| *a > self.options.stuck_after);
            let blocked = match (stuck, waited) {
                (true, _) => Blocked::Stuck,
                (false, Some(a)) => Blocked::WaitingLong(a),
                (false, None) => Blocked::Waiting,
            };
            let why = if holds.is_empty() {
                format!("kcm says: {}", t.message())
            } else {
                holds
                    .iter()
                    .map(|(dep, h)| format!("{dep}: {}", h.text))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            let target = target_words(t);
            let how = McsBlocked::Target {
                target: &target,
                blocked,
                why: &why,
            };
            view.findings
                .push(self.push(at(findings::mcs_blocked(&name, how), chain)));
        }
        view
    }

    /// What holds MultiClusterService `dep` back on the target of `t`.
    fn dependency_hold(
        &self,
        dep: &str,
        t: MatchingCluster,
        targets: &Targets<'a>,
        visited: &mut HashSet<String>,
        chain: &mut Vec<String>,
    ) -> Hold {
        let waiting = |text: String| Hold { stuck: false, text };
        let stuck = |text: String| Hold { stuck: true, text };
        let Some(d) = self.snap.find(kinds::MULTI_CLUSTER_SERVICE.kind, "", dep) else {
            return waiting(format!("MultiClusterService {dep} is not in the snapshot"));
        };
        let meta = Object(d);
        chain.push(meta.display());
        if let Some(c) = MCS_VALIDATIONS
            .iter()
            .find_map(|v| meta.condition(v).filter(|c| c.status() == "False"))
        {
            return stuck(format!(
                "it is not reconciled ({}=False: {}), so it never deploys there",
                c.type_(),
                c.message()
            ));
        }
        let set = targets.set(dep, t);
        let Some(set) = set else {
            // Its own ServiceSet is not there: is it blocked there too?
            let own = targets
                .entry(dep, t)
                .filter(|o| o.reason() == REASON_MCS_DEPENDENCY_NOT_READY);
            let Some(own) = own else {
                return waiting("its ServiceSet for this cluster does not exist yet".into());
            };
            if !visited.insert(dep.to_string()) {
                return stuck("its dependencies come back to it (a cycle)".into());
            }
            let inner: Vec<(String, Hold)> = own
                .waiting_on()
                .iter()
                .map(|(next, says)| {
                    (
                        format!("{next} (kcm: {says})"),
                        self.dependency_hold(next, own, targets, visited, chain),
                    )
                })
                .collect();
            let is_stuck = inner.iter().any(|(_, h)| h.stuck);
            let words: Vec<String> = inner
                .iter()
                .map(|(n, h)| format!("{n}: {}", h.text))
                .collect();
            return Hold {
                stuck: is_stuck,
                text: format!(
                    "its ServiceSet for this cluster does not exist: it is blocked there itself, waiting on {}",
                    words.join("; ")
                ),
            };
        };
        chain.push(set.meta().display());
        let mut stuck_parts = Vec::new();
        let mut waiting_parts = Vec::new();
        let keyed = crate::core::dependencies::Service::all_of(ServiceSource(d));
        let never = crate::core::dependencies::never_satisfied(&keyed);
        for (i, svc) in keyed.iter().enumerate() {
            let (ns, n) = keyed[i].key;
            let k = format!("{ns}/{n}");
            let status = set
                .service_statuses()
                .find(|s| service_key(s.namespace(), s.name()) == (ns, n));
            // Deployed before it (or its dependency) was disabled: kcm counts it.
            if status.is_some_and(|st| st.state() == "Deployed") {
                continue;
            }
            if svc.disabled {
                stuck_parts.push(format!("{k} is disabled (kcm never deploys it)"));
                continue;
            }
            if let Some((_, (dns, dn))) = never.iter().find(|((j, _), _)| *j == i) {
                stuck_parts.push(format!("{k} waits on the disabled {dns}/{dn}"));
                continue;
            }
            match status {
                Some(st) if st.state() == "Failed" => {
                    stuck_parts.push(if st.failure_message().is_empty() {
                        format!("{k} is Failed")
                    } else {
                        format!("{k} is Failed: {}", st.failure_message())
                    })
                }
                Some(st) => waiting_parts.push(format!(
                    "{k} is {}",
                    if st.state().is_empty() {
                        "without a state"
                    } else {
                        st.state()
                    }
                )),
                None => waiting_parts.push(format!("{k} is not in its ServiceSet yet")),
            }
        }
        let at = format!("in ServiceSet {}/{}", set.namespace(), set.name());
        if !stuck_parts.is_empty() {
            stuck(format!(
                "{at}, {} (a failed or disabled service blocks its dependents until it is Deployed)",
                stuck_parts.join(", ")
            ))
        } else if !waiting_parts.is_empty() {
            waiting(format!("{at}, {}", waiting_parts.join(", ")))
        } else {
            waiting(format!(
                "{at}, every service is Deployed now: kcm unblocks on its next reconcile"
            ))
        }
    }
}

#[cfg(test)]
mod tests {

    use serde_json::json;

    use super::super::{Options, diagnose};
    use crate::diag::Severity;

    fn options() -> Options {
        Options::for_tests("2026-11-21T12:00:00Z".parse().unwrap())
    }

    #[test]
    fn targets_are_found_by_key_the_first_of_each_as_a_scan_finds_it() {
        use super::super::Snapshot;
        use super::Targets;
        use crate::api::kcm::MatchingCluster;
        let set = |name: &str, mcs: &str, cluster: &str| {
            json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
                "metadata": {"namespace": "ns", "name": name},
                "spec": {"multiClusterService": mcs, "cluster": cluster}})
        };
        let mcs = |name: &str, reason: &str| {
            json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "MultiClusterService",
                "metadata": {"name": name}, "status": {"matchingClusters": [
                    {"kind": "ClusterDeployment", "namespace": "ns", "name": "c1", "reason": reason},
                    {"kind": "SveltosCluster", "namespace": "mgmt", "name": "mgmt", "reason": reason}]}})
        };
        let objects = vec![
            set("first", "a", "c1"),
            set("second", "a", "c1"),
            set("mgmt", "a", ""),
            set("other", "b", "c1"),
            mcs("a", "one"),
            mcs("a", "the second of the name"),
        ];
        // Of two of one name, a name finds the first: the second's other target is not one.
        let mut objects = objects;
        objects[5]["status"]["matchingClusters"][1]["name"] = json!("c2");
        objects[5]["status"]["matchingClusters"][1]["kind"] = json!("ClusterDeployment");
        objects[5]["status"]["matchingClusters"][1]["namespace"] = json!("ns");
        let snap = Snapshot::new(&objects);
        let t = Targets::new(&snap);
        let cd = json!({"kind": "ClusterDeployment", "namespace": "ns", "name": "c1"});
        let mgmt = json!({"kind": "SveltosCluster", "namespace": "mgmt", "name": "mgmt"});
        let elsewhere = json!({"kind": "ClusterDeployment", "namespace": "ns", "name": "c2"});
        // (MultiClusterService, target) -> its ServiceSet there, kcm's entry's reason.
        for (m, target, set, entry) in [
            ("a", &cd, Some("first"), Some("one")),
            ("a", &mgmt, Some("mgmt"), Some("one")),
            ("b", &cd, Some("other"), None),
            ("a", &elsewhere, None, None),
        ] {
            let found = t.set(m, MatchingCluster(target));
            assert_eq!(found.map(|s| s.name()), set, "{m} {target}");
            let found = t.entry(m, MatchingCluster(target));
            assert_eq!(found.map(|e| e.reason()), entry, "{m} {target}");
        }
    }

    fn base(state: &str) -> Vec<serde_json::Value> {
        vec![
            json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "MultiClusterService",
                "metadata": {"name": "base"},
                "spec": {"clusterSelector": {"matchLabels": {"group": "demo"}},
                    "serviceSpec": {"services": [{"name": "cert-manager", "namespace": "cert-manager", "template": "cm"}]}}}),
            json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
                "metadata": {"name": "dev-1a2b3c4d", "namespace": "kcm-system"},
                "spec": {"cluster": "dev", "multiClusterService": "base", "provider": {"name": "x"},
                    "services": [{"name": "cert-manager", "namespace": "cert-manager", "template": "cm"}]},
                "status": {"services": [{"name": "cert-manager", "namespace": "cert-manager", "state": state,
                    "failureMessage": if state == "Failed" { "boom" } else { "" },
                    "lastStateTransitionTime": "2026-11-21T11:59:00Z"}]}}),
            json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "MultiClusterService",
                "metadata": {"name": "apps"},
                "spec": {"dependsOn": ["base"], "clusterSelector": {"matchLabels": {"group": "demo"}}},
                "status": {"matchingClusters": [{"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
                    "name": "dev", "namespace": "kcm-system", "deployed": false,
                    "reason": "MultiClusterServiceDependencyNotReady",
                    "lastTransitionTime": "2026-11-21T11:58:00Z",
                    "message": "skipping create/update of ServiceSet for matching cluster kcm-system/dev: waiting on base (0/1 services deployed)"}]}}),
        ]
    }

    #[test]
    fn a_blocked_target_names_the_dependency_waiting_or_stuck() {
        let r = diagnose(&base("Provisioning"), &options());
        let f: Vec<_> = r.findings.iter().filter(|d| d.code == "KSM635").collect();
        assert_eq!(f.len(), 1, "{:?}", r.findings);
        assert_eq!(f[0].severity, Severity::Info);
        assert!(
            f[0].message.contains(
                "MultiClusterService apps is blocked on ClusterDeployment kcm-system/dev (waiting)"
            ),
            "{}",
            f[0].message
        );
        assert!(f[0].message.contains("base (kcm: 0/1 services deployed): in ServiceSet kcm-system/dev-1a2b3c4d, cert-manager/cert-manager is Provisioning"), "{}", f[0].message);
        let r = diagnose(&base("Failed"), &options());
        let f: Vec<_> = r.findings.iter().filter(|d| d.code == "KSM635").collect();
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("(stuck)")
                && f[0]
                    .message
                    .contains("cert-manager/cert-manager is Failed: boom"),
            "{}",
            f[0].message
        );
        assert_eq!(r.multi_cluster_services.len(), 2);
    }

    #[test]
    fn a_failed_validation_stops_everything() {
        let mcs = json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "MultiClusterService",
            "metadata": {"name": "a", "generation": 2},
            "spec": {"dependsOn": ["a"]},
            "status": {"conditions": [{"type": "MultiClusterServiceDependencyValidation", "status": "False",
                "reason": "Failed", "observedGeneration": 2,
                "message": "failed MCS dependency cycle validation: dependency cycle detected at /a"}]}});
        let r = diagnose(&[mcs], &options());
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.findings[0].code, "KSM636");
        assert!(r.findings[0].message.contains(
            "MultiClusterServiceDependencyValidation=False: failed MCS dependency cycle validation"
        ));
    }
}
