//! Where a trace starts: the ServiceSets (and which of their services) a start object
//! leads to.

use serde_json::Value;

use super::{Index, Options, Start};
use crate::api::Object;
use crate::api::kinds::{self, Kind};
use crate::api::naming::{LABEL_SERVICE, LABEL_SERVICESET, label_value};
use crate::api::sveltos::{ClusterSummary, ProfileKind};

/// A ServiceSet a start leads to, and which of its services.
pub(super) struct Pick<'a> {
    pub set: &'a Value,
    pub service: Only,
}

pub(super) enum Only {
    Any,
    /// The service whose label value (the Flux adapter's `service` label) is this.
    Label(String),
}

/// The ServiceSets (and services) `start` leads to. Err: the start object is not there, or
/// names no ServiceSet.
pub(super) fn picks<'a>(
    index: &Index<'a>,
    start: &Start,
    options: &Options,
) -> Result<Vec<Pick<'a>>, String> {
    let any = |set| Pick {
        set,
        service: Only::Any,
    };
    match start {
        Start::Flux { kind, name } => named(index, kind, name, options)?
            .into_iter()
            .map(|flux| flux_pick(index, flux))
            .collect(),
        Start::ClusterSummary(name) => {
            let mut picks = Vec::new();
            for cs in named(index, &kinds::CLUSTER_SUMMARY, name, options)? {
                let Some((kind, profile)) = ClusterSummary(cs).profile() else {
                    return Err(format!(
                        "{} names no Profile or ClusterProfile in its labels",
                        Object(cs).display()
                    ));
                };
                let cluster_scoped = kind == ProfileKind::ClusterProfile;
                let ns = Some(Object(cs).namespace()).filter(|_| !cluster_scoped);
                picks.extend(profile_sets(index, cluster_scoped, ns, profile)?);
            }
            Ok(picks)
        }
        Start::Profile {
            cluster_scoped,
            name,
        } => {
            let ns = options.namespace.as_deref().filter(|_| !cluster_scoped);
            profile_sets(index, *cluster_scoped, ns, name)
        }
        Start::ServiceSet(name) => Ok(named(index, &kinds::SERVICE_SET, name, options)?
            .into_iter()
            .map(any)
            .collect()),
        Start::Everything => Ok(index
            .all(&kinds::SERVICE_SET)
            .iter()
            .copied()
            .filter(|s| in_namespace(options, Object(s).namespace()))
            .map(any)
            .collect()),
    }
}

fn in_namespace(options: &Options, ns: &str) -> bool {
    options.namespace.as_deref().is_none_or(|n| n == ns)
}

/// The objects of the kind and name (in the options' namespace); Err when there is none.
fn named<'a>(
    index: &Index<'a>,
    kind: &Kind,
    name: &str,
    options: &Options,
) -> Result<Vec<&'a Value>, String> {
    let found: Vec<&Value> = index
        .all(kind)
        .iter()
        .copied()
        .filter(|o| Object(o).name() == name && in_namespace(options, Object(o).namespace()))
        .collect();
    if found.is_empty() {
        return Err(format!(
            "{} {name:?} not found{}",
            kind.kind,
            where_(options)
        ));
    }
    Ok(found)
}

/// The ServiceSet and service the Flux adapter labelled a HelmRelease or Kustomization with.
fn flux_pick<'a>(index: &Index<'a>, flux: &'a Value) -> Result<Pick<'a>, String> {
    let m = Object(flux);
    let (set_label, svc_label) = (m.label(LABEL_SERVICESET), m.label(LABEL_SERVICE));
    if set_label.is_empty() || svc_label.is_empty() {
        return Err(format!(
            "{} was not written by the Flux adapter: it has no {LABEL_SERVICESET} and {LABEL_SERVICE} labels",
            m.display()
        ));
    }
    let set = index.all(&kinds::SERVICE_SET).iter().copied().find(|s| {
        Object(s).namespace() == m.namespace() && label_value(Object(s).name()) == set_label
    });
    match set {
        Some(set) => Ok(Pick {
            set,
            service: Only::Label(svc_label.to_string()),
        }),
        None => Err(format!(
            "{}: the ServiceSet it was written for ({LABEL_SERVICESET}={set_label}) is not there",
            m.display()
        )),
    }
}

fn where_(options: &Options) -> String {
    match &options.namespace {
        Some(ns) => format!(" in namespace {ns}"),
        None => String::new(),
    }
}

/// The ServiceSet kcm wrote a Profile or ClusterProfile for: the same name, and for a
/// Profile the same namespace (ServiceSetReconciler's `createOrUpdateProfile`); a
/// ClusterProfile's namespace comes from its owner reference to the ServiceSet.
fn profile_sets<'a>(
    index: &Index<'a>,
    cluster_scoped: bool,
    namespace: Option<&str>,
    name: &str,
) -> Result<Vec<Pick<'a>>, String> {
    let kind = if cluster_scoped {
        &kinds::CLUSTER_PROFILE
    } else {
        &kinds::PROFILE
    };
    let profiles: Vec<&Value> = index
        .all(kind)
        .iter()
        .copied()
        .filter(|p| {
            Object(p).name() == name && namespace.is_none_or(|n| Object(p).namespace() == n)
        })
        .collect();
    let mut picks = Vec::new();
    let named_sets = || {
        index
            .all(&kinds::SERVICE_SET)
            .iter()
            .filter(|s| Object(s).name() == name)
            .map(|s| Object(s).namespace().to_string())
    };
    let set_namespaces: Vec<String> = if profiles.is_empty() {
        // The Profile may be gone while its ClusterSummary stays: look for the ServiceSet.
        match namespace {
            Some(ns) => vec![ns.to_string()],
            None => named_sets().collect(),
        }
    } else if cluster_scoped {
        // A ClusterProfile's owner reference names no namespace: the ServiceSet of its name.
        named_sets().take(1).collect()
    } else {
        profiles
            .iter()
            .map(|p| Object(p).namespace().to_string())
            .collect()
    };
    for ns in set_namespaces {
        if let Some(set) = index.find(&kinds::SERVICE_SET, &ns, name) {
            picks.push(Pick {
                set,
                service: Only::Any,
            });
        }
    }
    if picks.is_empty() {
        return Err(format!(
            "{} {name:?}: no ServiceSet {name:?} wrote it (kcm names a Profile after its ServiceSet)",
            kind.kind
        ));
    }
    Ok(picks)
}
