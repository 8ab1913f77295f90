//! Who deployed this, from which template, and why is it in this state (`kubectl ksm trace`):
//! from what a user sees (a Flux object of the adapter, a Sveltos ClusterSummary or Profile, a
//! ServiceSet, or a release on a cluster) up the chain: the provider's objects, the
//! ServiceSet and its service, the MultiClusterService or ClusterDeployment it comes from,
//! and the ServiceTemplate (its version, chain and source), ending with doctor's verdict.
//!
//! Built on doctor's report of the same objects, so trace, tree and doctor agree, live and
//! from a dump. PURE: the time comes in the options.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::api::Object;
use crate::api::kcm::{ClusterTarget, MatchingCluster, ServiceSet, ServiceSource};
use crate::api::kinds::{self, Kind};
use crate::api::naming::label_value;
use crate::api::sveltos::{ClusterSummary, ProfileKind};
use crate::core::doctor::{Report, ServiceSetView, Snapshot};

/// The version of the JSON/YAML document.
pub const VERSION: u32 = 1;

/// The object a trace starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// A HelmRelease or Kustomization of the Flux adapter.
    Flux { kind: &'static Kind, name: String },
    /// A Sveltos ClusterSummary (kcm's default provider).
    ClusterSummary(String),
    /// A Sveltos Profile, or a ClusterProfile (self-management).
    Profile { cluster_scoped: bool, name: String },
    /// A ServiceSet.
    ServiceSet(String),
    /// Every ServiceSet (then `--release` says which service).
    Everything,
}

/// A cluster a release is deployed to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterFilter {
    /// A ClusterDeployment, by name and, if given, namespace.
    Deployment {
        namespace: Option<String>,
        name: String,
    },
    /// The management cluster (self-management).
    Management,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub now: DateTime<Utc>,
    /// The namespace of the start object and of the ServiceSets (None: every namespace).
    pub namespace: Option<String>,
    /// Only the service deployed as this release (its namespace, if given, and name).
    pub release: Option<(Option<String>, String)>,
    /// Only ServiceSets that deploy to this cluster.
    pub cluster: Option<ClusterFilter>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Trace {
    pub version: u32,
    /// What was traced, in words.
    pub start: String,
    /// One chain per service the start leads to.
    pub services: Vec<ServiceTrace>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServiceTrace {
    /// The service as deployed: `<namespace>/<name>` (a Helm release's namespace and name).
    pub service: String,
    /// From the provider's objects up to the template.
    pub hops: Vec<Hop>,
    pub verdict: Verdict,
}

/// One object of the chain.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Hop {
    pub kind: String,
    /// `<namespace>/<name>`, or the name of a cluster-scoped object (`management` for the
    /// management cluster).
    pub name: String,
    /// The object is not among the objects read.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
    /// What the object says that matters here, in order.
    pub facts: Facts,
}

/// Ordered facts (serialized as a map in this order).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Facts(pub Vec<(&'static str, String)>);

impl Facts {
    fn add(&mut self, key: &'static str, value: impl Into<String>) {
        let value = value.into();
        if !value.is_empty() {
            self.0.push((key, value));
        }
    }
}

impl Serialize for Facts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Why the service is in its state: doctor's first finding on it (or on its ServiceSet).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// No error or warning on the service or its ServiceSet.
    pub healthy: bool,
    /// The state the ServiceSet reports for the service.
    pub state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<Finding>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub code: String,
    pub severity: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The objects, indexed as doctor indexes them (by kind, by key, the Flux objects by the
/// adapter's labels), and the ClusterSummaries by the Profile their label names.
struct Index<'a> {
    snap: Snapshot<'a>,
    /// (Profile or ClusterProfile, its name) -> ClusterSummaries.
    summaries: HashMap<(ProfileKind, &'a str), Vec<&'a Value>>,
    /// (MultiClusterService, target) -> kcm's `status.matchingClusters` entry for it, the
    /// first of a target (a MultiClusterService of a fleet lists thousands).
    targets: HashMap<(&'a str, ClusterTarget<'a>), MatchingCluster<'a>>,
}

impl<'a> Index<'a> {
    fn new(objects: &'a [Value]) -> Index<'a> {
        let snap = Snapshot::new(objects);
        let mut summaries: HashMap<_, Vec<&Value>> = HashMap::new();
        for cs in snap.all(kinds::CLUSTER_SUMMARY.kind) {
            if let Some(profile) = ClusterSummary(cs).profile() {
                summaries.entry(profile).or_default().push(*cs);
            }
        }
        let mut targets = HashMap::new();
        for m in snap.all(kinds::MULTI_CLUSTER_SERVICE.kind) {
            let name = Object(m).name();
            for t in ServiceSource(m).matching_clusters() {
                targets.entry((name, t.target())).or_insert(t);
            }
        }
        Index {
            snap,
            summaries,
            targets,
        }
    }

    /// kcm's entry for the cluster a ServiceSet deploys to, in its MultiClusterService.
    fn target(&self, mcs: &str, ss: ServiceSet) -> Option<MatchingCluster<'a>> {
        self.targets.get(&(mcs, ss.target())).copied()
    }

    fn find(&self, kind: &Kind, namespace: &str, name: &str) -> Option<&'a Value> {
        self.snap.find(kind.kind, namespace, name)
    }

    fn all(&self, kind: &Kind) -> &[&'a Value] {
        self.snap.all(kind.kind)
    }

    /// The Flux object the adapter labelled for a service of a ServiceSet.
    fn flux_of(&self, ss: ServiceSet, service: &str) -> Option<&'a Value> {
        let (set, svc) = (label_value(ss.name()), label_value(service));
        self.snap.flux_by_labels(ss.namespace(), &set, &svc)
    }

    /// The ClusterSummary of a ServiceSet's Profile (in its namespace) or ClusterProfile.
    fn summary_of(&self, ss: ServiceSet) -> Option<&'a Value> {
        let kind = if ss.self_management() {
            ProfileKind::ClusterProfile
        } else {
            ProfileKind::Profile
        };
        self.summaries
            .get(&(kind, ss.name()))?
            .iter()
            .copied()
            .find(|cs| {
                kind == ProfileKind::ClusterProfile || Object(cs).namespace() == ss.namespace()
            })
    }
}

/// The trace of `start`, with the states and findings of `report` (doctor's diagnosis of the
/// same objects, every ServiceSet the start may lead to). Err: the start object is not there,
/// or leads to no ServiceSet (the words say which).
pub fn trace(
    objects: &[Value],
    report: &Report,
    start: &Start,
    options: &Options,
) -> Result<Trace, String> {
    let index = Index::new(objects);
    let picks = start::picks(&index, start, options)?;
    let views: HashMap<(&str, &str), &ServiceSetView> = report
        .service_sets
        .iter()
        .map(|v| {
            (
                (
                    v.service_set.namespace.as_str(),
                    v.service_set.name.as_str(),
                ),
                v,
            )
        })
        .collect();
    let mut services = Vec::new();
    for pick in &picks {
        let ss = ServiceSet(pick.set);
        if !options.cluster.as_ref().is_none_or(|c| targets(ss, c)) {
            continue;
        }
        let view = views.get(&(ss.namespace(), ss.name())).copied();
        for svc in ss.services() {
            let keep = match &pick.service {
                start::Only::Any => true,
                start::Only::Label(l) => label_value(svc.name()) == *l,
            } && options.release.as_ref().is_none_or(|(ns, name)| {
                let (svc_ns, svc_name) = svc.key();
                svc_name == name && ns.as_deref().is_none_or(|n| n == svc_ns)
            });
            if !keep {
                continue;
            }
            let sv = view.and_then(|v| {
                v.services
                    .iter()
                    .find(|s| s.name == svc.name() && s.namespace == svc.namespace())
            });
            services.push(hops::service_trace(
                &index, report, ss, svc, view, sv, options,
            ));
        }
    }
    if services.is_empty() {
        return Err(no_service(start, options));
    }
    Ok(Trace {
        version: VERSION,
        start: start_words(start, options),
        services,
    })
}

/// Why a start leads to no service.
fn no_service(start: &Start, options: &Options) -> String {
    {
        let filters = filter_words(options);
        let filters = filters.trim_start_matches(", ").replacen(", on", " on", 1);
        let bare = Options {
            release: None,
            cluster: None,
            ..options.clone()
        };
        match start {
            Start::Everything => format!("{filters}: no ServiceSet deploys it"),
            _ if filters.is_empty() => format!("{}: no services", start_words(start, &bare)),
            _ => format!(
                "{}: no service matches {filters}",
                start_words(start, &bare)
            ),
        }
    }
}

/// Whether the ServiceSet deploys to the cluster.
fn targets(ss: ServiceSet, cluster: &ClusterFilter) -> bool {
    match cluster {
        ClusterFilter::Management => ss.self_management(),
        ClusterFilter::Deployment { namespace, name } => {
            !ss.self_management()
                && ss.cluster() == name
                && namespace.as_deref().is_none_or(|n| n == ss.namespace())
        }
    }
}

fn start_words(start: &Start, options: &Options) -> String {
    let ns = |name: &str| match &options.namespace {
        Some(n) => format!("{n}/{name}"),
        None => name.to_string(),
    };
    let mut words = match start {
        Start::Flux { kind, name } => format!("{} {}", kind.kind, ns(name)),
        Start::ClusterSummary(name) => format!("ClusterSummary {}", ns(name)),
        Start::Profile {
            cluster_scoped: true,
            name,
        } => format!("ClusterProfile {name}"),
        Start::Profile { name, .. } => format!("Profile {}", ns(name)),
        Start::ServiceSet(name) => format!("ServiceSet {}", ns(name)),
        Start::Everything => "every ServiceSet".to_string(),
    };
    words.push_str(&filter_words(options));
    words
}

/// `, release NS/NAME, on ClusterDeployment NS/NAME` of the options' filters.
fn filter_words(options: &Options) -> String {
    let mut words = String::new();
    if let Some((rns, name)) = &options.release {
        words.push_str(&format!(
            ", release {}",
            match rns {
                Some(n) => format!("{n}/{name}"),
                None => name.clone(),
            }
        ));
    }
    match &options.cluster {
        Some(ClusterFilter::Management) => words.push_str(", on the management cluster"),
        Some(ClusterFilter::Deployment { namespace, name }) => words.push_str(&format!(
            ", on ClusterDeployment {}",
            match namespace {
                Some(n) => format!("{n}/{name}"),
                None => name.clone(),
            }
        )),
        None => {}
    }
    words
}

mod hops;
mod start;

#[cfg(test)]
mod tests;
