//! The fleet as a tree (`kubectl ksm tree`): each MultiClusterService with the clusters its
//! selector matches (and, for each ClusterDeployment it does not match, the requirement that
//! decides), then each cluster with its ServiceSets and their services: state and age,
//! `dependsOn`, and the ServiceSet that owns a release two of them claim.
//!
//! Built on doctor's report (states as doctor reads them from either provider's objects), so
//! it is the same live and from a dump. PURE: the time comes in the options.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::api::Object;
use crate::api::kcm::{ClusterTarget, MatchingCluster, ServiceSet, ServiceSource};
use crate::api::kinds;
use crate::api::selector::Selector;
use crate::core::doctor::{Report, ServiceSetView};

/// The version of the JSON/YAML document.
pub const VERSION: u32 = 1;

/// What the tree is rooted at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Focus {
    /// One ClusterDeployment (in the options' namespace when one is given).
    ClusterDeployment(String),
    /// One MultiClusterService (cluster-scoped).
    MultiClusterService(String),
    /// One ServiceSet (in the options' namespace when one is given).
    ServiceSet(String),
}

#[derive(Debug, Clone)]
pub struct Options {
    pub now: DateTime<Utc>,
    /// Only clusters and ServiceSets of this namespace (None: all).
    pub namespace: Option<String>,
    pub focus: Option<Focus>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Tree {
    pub version: u32,
    pub multi_cluster_services: Vec<McsNode>,
    pub clusters: Vec<ClusterNode>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct McsNode {
    pub name: String,
    /// `spec.clusterSelector` as kubectl shows selectors; empty when it selects nothing.
    pub selector: String,
    pub self_management: bool,
    pub depends_on: Vec<String>,
    /// The clusters it targets: the ClusterDeployments its selector matches, and the
    /// management cluster with self-management.
    pub targets: Vec<Target>,
    /// The ClusterDeployments its selector does not match, each with the requirement that
    /// decides.
    pub not_matched: Vec<NotMatched>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    /// `ClusterDeployment/<namespace>/<name>`, or `management`.
    pub cluster: String,
    /// The ServiceSet kcm writes for it, `<namespace>/<name>`.
    pub service_set: String,
    /// kcm's `status.matchingClusters` entry: whether its services are deployed (None when
    /// kcm has not written one for the target).
    pub deployed: Option<bool>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NotMatched {
    /// `ClusterDeployment/<namespace>/<name>`.
    pub cluster: String,
    /// The first requirement of the selector the cluster's labels fail, as kubectl shows it.
    pub requirement: String,
    /// The cluster's value of the requirement's label (None: it has no such label).
    pub has: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ClusterNode {
    /// `ClusterDeployment/<namespace>/<name>`, or `management`.
    pub cluster: String,
    /// The ClusterDeployment is not among the objects (its ServiceSets name it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    pub service_sets: Vec<SetNode>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SetNode {
    pub namespace: String,
    pub name: String,
    pub provider: String,
    /// The chain doctor followed ("Sveltos", "Flux").
    pub translation: String,
    /// The MultiClusterService it comes from; None for a ClusterDeployment's own.
    pub multi_cluster_service: Option<String>,
    pub services: Vec<ServiceNode>,
    /// Doctor's findings about the ServiceSet itself (code: message).
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServiceNode {
    pub name: String,
    pub namespace: String,
    pub template: String,
    /// What the ServiceSet's status says (None: nothing yet).
    pub state: Option<String>,
    /// Since when (`lastStateTransitionTime`), and how long that is at the options' time.
    pub since: Option<String>,
    pub age: Option<String>,
    /// What the provider's objects say, mapped as the provider's adapter maps them.
    pub observed: Option<String>,
    /// `dependsOn`, as `<namespace>/<name>`.
    pub depends_on: Vec<String>,
    /// The ServiceSet that owns the release this service conflicts on.
    pub owner: Option<String>,
    /// Doctor's first finding on the service (code: message).
    pub problem: Option<String>,
}

const MANAGEMENT: &str = "management";

fn cluster_label(namespace: &str, name: &str) -> String {
    format!("{}/{namespace}/{name}", kinds::CLUSTER_DEPLOYMENT.kind)
}

/// The tree of the objects, with the states of `report` (doctor's diagnosis of the same
/// objects, every ServiceSet).
pub fn tree(objects: &[Value], report: &Report, options: &Options) -> Tree {
    let of_kind = |kind: &kinds::Kind| -> Vec<&Value> {
        objects
            .iter()
            .filter(|o| kind.is_any_version(Object(o).api_version(), Object(o).kind()))
            .collect()
    };
    let in_namespace =
        |ns: &str| -> bool { options.namespace.as_deref().is_none_or(|want| want == ns) };
    let mut cds: Vec<&Value> = of_kind(&kinds::CLUSTER_DEPLOYMENT);
    cds.retain(|cd| in_namespace(Object(cd).namespace()));
    cds.sort_by_key(|cd| (Object(cd).namespace(), Object(cd).name()));
    let mut mcss: Vec<&Value> = of_kind(&kinds::MULTI_CLUSTER_SERVICE);
    mcss.sort_by_key(|m| Object(m).name());
    let sets: HashMap<(&str, &str), &Value> = of_kind(&kinds::SERVICE_SET)
        .into_iter()
        .map(|s| ((Object(s).namespace(), Object(s).name()), s))
        .collect();

    let mut clusters: Vec<ClusterNode> = cds
        .iter()
        .map(|cd| ClusterNode {
            cluster: cluster_label(Object(cd).namespace(), Object(cd).name()),
            missing: false,
            service_sets: Vec::new(),
        })
        .collect();
    // The first of each name, as a scan from the start finds it.
    let mut at: HashMap<String, usize> = HashMap::new();
    for (i, c) in clusters.iter().enumerate() {
        at.entry(c.cluster.clone()).or_insert(i);
    }
    for view in &report.service_sets {
        let Some(json) = sets.get(&(
            view.service_set.namespace.as_str(),
            view.service_set.name.as_str(),
        )) else {
            continue;
        };
        let ss = ServiceSet(json);
        if !in_namespace(ss.namespace()) {
            continue;
        }
        let cluster = if ss.self_management() {
            MANAGEMENT.to_string()
        } else {
            cluster_label(ss.namespace(), ss.cluster())
        };
        // Found by name, not by a scan of the clusters so far: a fleet has thousands.
        let i = *at.entry(cluster.clone()).or_insert_with(|| {
            clusters.push(ClusterNode {
                missing: cluster != MANAGEMENT,
                cluster,
                service_sets: Vec::new(),
            });
            clusters.len() - 1
        });
        let node = &mut clusters[i];
        node.service_sets
            .push(set_node(ss, view, report, options.now));
    }
    for c in &mut clusters {
        c.service_sets
            .sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    }
    // The management cluster last, after the ClusterDeployments in name order.
    clusters.sort_by_key(|c| (c.cluster == MANAGEMENT, c.cluster.clone()));

    let multi_cluster_services: Vec<McsNode> = mcss
        .iter()
        .map(|m| mcs_node(ServiceSource(m), &cds, &sets))
        .collect();
    let mut tree = Tree {
        version: VERSION,
        multi_cluster_services,
        clusters,
    };
    if let Some(focus) = &options.focus {
        narrow(&mut tree, focus);
    }
    tree
}

fn set_node(ss: ServiceSet, view: &ServiceSetView, report: &Report, now: DateTime<Utc>) -> SetNode {
    let problem = |i: &usize| {
        report
            .findings
            .get(*i)
            .map(|f| format!("{}: {}", f.code, f.message))
    };
    let services = view
        .services
        .iter()
        .map(|sv| {
            let spec = ss
                .services()
                .find(|s| s.name() == sv.name && s.namespace() == sv.namespace);
            let status = ss
                .service_statuses()
                .find(|st| st.name() == sv.name && st.namespace() == sv.namespace);
            let since = status
                .map(|st| st.last_state_transition_time())
                .filter(|t| !t.is_empty());
            let age = since
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .and_then(|t| (now - t.with_timezone(&Utc)).to_std().ok())
                .map(crate::api::duration::human);
            ServiceNode {
                name: sv.name.clone(),
                namespace: sv.namespace.clone(),
                template: spec.map(|s| s.template().to_string()).unwrap_or_default(),
                state: sv.reported.clone(),
                since: since.map(str::to_string),
                age,
                observed: sv.observed.clone(),
                depends_on: spec
                    .map(|s| {
                        s.dependency_keys()
                            .into_iter()
                            .map(|(ns, name)| format!("{ns}/{name}"))
                            .collect()
                    })
                    .unwrap_or_default(),
                owner: sv.owner.clone(),
                problem: sv.findings.first().and_then(problem),
            }
        })
        .collect();
    SetNode {
        namespace: ss.namespace().to_string(),
        name: ss.name().to_string(),
        provider: view.provider.clone(),
        translation: view.translation.to_string(),
        multi_cluster_service: Some(ss.multi_cluster_service())
            .filter(|m| !m.is_empty())
            .map(str::to_string),
        services,
        problems: view.findings.iter().filter_map(problem).collect(),
    }
}

fn mcs_node(mcs: ServiceSource, cds: &[&Value], sets: &HashMap<(&str, &str), &Value>) -> McsNode {
    let name = mcs.meta().name();
    // kcm lists ClusterDeployments only for a selector that is not empty, and an invalid one
    // matches nothing here (kcm fails on it; lint and doctor say so).
    let selector = if mcs.selects_no_cluster() {
        None
    } else {
        mcs.cluster_selector().and_then(Selector::lenient)
    };
    // kcm's entry for each target, the first one of a target as a scan would find it (a
    // MultiClusterService of a fleet lists thousands): the management cluster's under None.
    let mut status: HashMap<ClusterTarget, MatchingCluster> = HashMap::new();
    for t in mcs.matching_clusters() {
        status.entry(t.target()).or_insert(t);
    }
    let status_of = |management: bool, ns: &str, cd: &str| {
        let key = if management { None } else { Some((ns, cd)) };
        status.get(&key).copied()
    };
    let target = |cluster: String, key: (String, String), entry: Option<MatchingCluster>| Target {
        cluster,
        service_set: format!("{}/{}", key.0, key.1),
        deployed: entry.map(MatchingCluster::deployed),
        reason: entry.map(|t| t.reason().to_string()).unwrap_or_default(),
        message: entry.map(|t| t.message().to_string()).unwrap_or_default(),
    };
    let mut targets = Vec::new();
    let mut not_matched = Vec::new();
    // No selector (or an empty one): no ClusterDeployment to match or pass over.
    for (cd, sel) in cds.iter().filter_map(|cd| Some((cd, selector.as_ref()?))) {
        let (ns, cd_name) = (Object(cd).namespace(), Object(cd).name());
        let labels = Object(cd).labels();
        let get = |k: &str| labels.get(k).and_then(Value::as_str);
        match sel.requirements().iter().find(|r| !r.matches(&get)) {
            None => targets.push(target(
                cluster_label(ns, cd_name),
                crate::api::naming::mcs_service_set_key(Some((ns, cd_name)), name, ""),
                status_of(false, ns, cd_name),
            )),
            Some(r) => not_matched.push(NotMatched {
                cluster: cluster_label(ns, cd_name),
                requirement: r.to_string(),
                has: get(&r.key).map(str::to_string),
            }),
        }
    }
    if mcs.self_management() {
        let entry = status_of(true, "", "");
        // kcm's system namespace is where the management ServiceSet lives: read it off the
        // ServiceSet when it is there.
        let (_, set_name) = crate::api::naming::mcs_service_set_key(None, name, "");
        let namespace = sets
            .keys()
            .find(|(_, n)| *n == set_name)
            .map(|(ns, _)| ns.to_string())
            .unwrap_or_else(|| crate::api::sveltos::DEFAULT_SYSTEM_NAMESPACE.to_string());
        targets.push(target(MANAGEMENT.to_string(), (namespace, set_name), entry));
    }
    McsNode {
        name: name.to_string(),
        selector: selector
            .as_ref()
            .map(|s| {
                s.requirements()
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default(),
        self_management: mcs.self_management(),
        depends_on: mcs.depends_on().into_iter().map(str::to_string).collect(),
        targets,
        not_matched,
    }
}

/// Keeps what concerns the focus: a cluster and the MultiClusterServices that target it; a
/// MultiClusterService, its clusters and only its ServiceSets there; a ServiceSet, its
/// cluster and the MultiClusterService it comes from.
fn narrow(tree: &mut Tree, focus: &Focus) {
    match focus {
        Focus::ClusterDeployment(name) => {
            tree.clusters
                .retain(|c| !c.missing && c.cluster.rsplit('/').next() == Some(name.as_str()));
            // Every MultiClusterService that targets it, or that does not and says why.
            let kept: Vec<String> = tree.clusters.iter().map(|c| c.cluster.clone()).collect();
            for m in &mut tree.multi_cluster_services {
                m.targets.retain(|t| kept.contains(&t.cluster));
                m.not_matched.retain(|n| kept.contains(&n.cluster));
            }
            tree.multi_cluster_services
                .retain(|m| !m.targets.is_empty() || !m.not_matched.is_empty());
        }
        Focus::MultiClusterService(name) => {
            tree.multi_cluster_services.retain(|m| &m.name == name);
            for c in &mut tree.clusters {
                c.service_sets
                    .retain(|s| s.multi_cluster_service.as_deref() == Some(name.as_str()));
            }
            tree.clusters.retain(|c| !c.service_sets.is_empty());
        }
        Focus::ServiceSet(name) => {
            for c in &mut tree.clusters {
                c.service_sets.retain(|s| &s.name == name);
            }
            tree.clusters.retain(|c| !c.service_sets.is_empty());
            let from: Vec<String> = tree
                .clusters
                .iter()
                .flat_map(|c| &c.service_sets)
                .filter_map(|s| s.multi_cluster_service.clone())
                .collect();
            tree.multi_cluster_services
                .retain(|m| from.contains(&m.name));
            for m in &mut tree.multi_cluster_services {
                m.targets
                    .retain(|t| t.service_set.rsplit('/').next() == Some(name.as_str()));
                m.not_matched.clear();
            }
        }
    }
}

/// Whether the focus names something the tree holds.
pub fn found(tree: &Tree, focus: &Focus) -> bool {
    match focus {
        Focus::MultiClusterService(_) => !tree.multi_cluster_services.is_empty(),
        Focus::ClusterDeployment(_) | Focus::ServiceSet(_) => !tree.clusters.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::doctor;
    use serde_json::json;

    fn cd(name: &str, labels: Value) -> Value {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
               "metadata": {"name": name, "namespace": "kcm-system", "labels": labels}})
    }

    fn mcs(name: &str, selector: Value) -> Value {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "MultiClusterService",
               "metadata": {"name": name}, "spec": {"clusterSelector": selector}})
    }

    fn set(name: &str, cluster: &str, mcs: Option<&str>) -> Value {
        let mut spec = json!({"cluster": cluster, "provider": {"name": "ksm-flux"},
            "services": [{"name": "a", "namespace": "apps", "template": "a-1"},
                         {"name": "b", "namespace": "apps", "template": "b-1",
                          "dependsOn": [{"name": "a", "namespace": "apps"}, {"name": "c"}]}]});
        if let Some(m) = mcs {
            spec["multiClusterService"] = json!(m);
        }
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
               "metadata": {"name": name, "namespace": "kcm-system"}, "spec": spec,
               "status": {"services": [{"name": "a", "namespace": "apps", "state": "Deployed",
                   "lastStateTransitionTime": "2026-11-21T11:00:00Z"}]}})
    }

    fn fleet() -> Vec<Value> {
        vec![
            cd("prod-1", json!({"env": "prod", "tier": "gold"})),
            cd("prod-2", json!({"env": "prod"})),
            cd("dev-1", json!({"env": "dev"})),
            mcs(
                "ingress",
                json!({"matchLabels": {"env": "prod"},
                       "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold", "silver"]}]}),
            ),
            mcs("nothing", json!({})),
            set("prod-1", "prod-1", None),
            set("prod-1-x", "prod-1", Some("ingress")),
            set("gone", "gone", None),
        ]
    }

    fn tree_of(objects: &[Value], focus: Option<Focus>) -> Tree {
        let now: DateTime<Utc> = "2026-11-21T12:00:00Z".parse().unwrap();
        let report = doctor::diagnose(objects, &doctor::Options::for_tests(now));
        tree(
            objects,
            &report,
            &Options {
                now,
                namespace: None,
                focus,
            },
        )
    }

    #[test]
    fn a_selector_matches_clusters_and_names_the_requirement_others_fail() {
        let t = tree_of(&fleet(), None);
        let ingress = &t.multi_cluster_services[0];
        assert_eq!(ingress.selector, "env=prod,tier in (gold,silver)");
        let targets: Vec<&str> = ingress.targets.iter().map(|t| t.cluster.as_str()).collect();
        assert_eq!(targets, ["ClusterDeployment/kcm-system/prod-1"]);
        assert_eq!(ingress.targets[0].deployed, None, "no status written");
        let not: Vec<(&str, &str, Option<&str>)> = ingress
            .not_matched
            .iter()
            .map(|n| (n.cluster.as_str(), n.requirement.as_str(), n.has.as_deref()))
            .collect();
        assert_eq!(
            not,
            [
                (
                    "ClusterDeployment/kcm-system/dev-1",
                    "env=prod",
                    Some("dev")
                ),
                (
                    "ClusterDeployment/kcm-system/prod-2",
                    "tier in (gold,silver)",
                    None
                ),
            ]
        );
        // An empty selector selects nothing (kcm lists no ClusterDeployment for it).
        let nothing = &t.multi_cluster_services[1];
        assert_eq!(nothing.selector, "");
        assert!(nothing.targets.is_empty() && nothing.not_matched.is_empty());
    }

    #[test]
    fn clusters_hold_their_servicesets_and_services_with_state_age_and_edges() {
        let t = tree_of(&fleet(), None);
        let names: Vec<(&str, bool)> = t
            .clusters
            .iter()
            .map(|c| (c.cluster.as_str(), c.missing))
            .collect();
        assert_eq!(
            names,
            [
                ("ClusterDeployment/kcm-system/dev-1", false),
                ("ClusterDeployment/kcm-system/gone", true),
                ("ClusterDeployment/kcm-system/prod-1", false),
                ("ClusterDeployment/kcm-system/prod-2", false),
            ]
        );
        let prod = &t.clusters[2];
        let sets: Vec<(&str, Option<&str>)> = prod
            .service_sets
            .iter()
            .map(|s| (s.name.as_str(), s.multi_cluster_service.as_deref()))
            .collect();
        assert_eq!(sets, [("prod-1", None), ("prod-1-x", Some("ingress"))]);
        let a = &prod.service_sets[0].services[0];
        assert_eq!(a.state.as_deref(), Some("Deployed"));
        assert_eq!(a.age.as_deref(), Some("60m"));
        assert_eq!(a.template, "a-1");
        let b = &prod.service_sets[0].services[1];
        assert_eq!(b.state, None);
        assert_eq!(b.depends_on, ["apps/a", "default/c"]);
    }

    #[test]
    fn a_focus_keeps_what_concerns_it() {
        let t = tree_of(&fleet(), Some(Focus::ClusterDeployment("prod-2".into())));
        assert_eq!(t.clusters.len(), 1);
        let m = &t.multi_cluster_services;
        assert_eq!(m.len(), 1, "ingress passes prod-2 over, and says why");
        assert!(m[0].targets.is_empty());
        assert_eq!(
            m[0].not_matched[0].cluster,
            "ClusterDeployment/kcm-system/prod-2"
        );

        let t = tree_of(&fleet(), Some(Focus::MultiClusterService("ingress".into())));
        assert_eq!(t.multi_cluster_services.len(), 1);
        let sets: Vec<&str> = t
            .clusters
            .iter()
            .flat_map(|c| &c.service_sets)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(sets, ["prod-1-x"], "only its ServiceSets");

        let t = tree_of(&fleet(), Some(Focus::ServiceSet("prod-1-x".into())));
        assert_eq!(t.clusters.len(), 1);
        assert_eq!(t.multi_cluster_services[0].name, "ingress");
        assert!(found(&t, &Focus::ServiceSet("prod-1-x".into())));

        let t = tree_of(&fleet(), Some(Focus::ServiceSet("absent".into())));
        assert!(!found(&t, &Focus::ServiceSet("absent".into())));
    }
}
