//! Whether what `kubectl ksm wait` waits for is there (`wait`): every service of a
//! ServiceSet, of the ServiceSets of a ClusterDeployment, or of those of a
//! MultiClusterService's targets, Deployed as kcm reports it (kcm's health verification
//! included, where its adapter runs it), or a failure that will not heal by itself.
//!
//! PURE: a judgement of one snapshot and doctor's report of it; the caller watches and asks
//! again on each change.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::api::Object;
use crate::api::kcm::{ServiceSet, ServiceSource};
use crate::api::kinds;
use crate::core::doctor::Report;
use crate::core::doctor::codes::WILL_NOT_HEAL;
use crate::core::tree::Focus;

/// The state every service is waited for.
pub const DEPLOYED: &str = "Deployed";

/// What one judgement says.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Judgement {
    pub outcome: Outcome,
    /// Every service waited for, in order: `ServiceSet/<ns>/<name>` → service → state.
    pub services: Vec<ServiceLine>,
    /// What is not there yet (a ServiceSet kcm has not written, a target not matched yet).
    pub pending: Vec<String>,
    /// The findings that will not heal (when `outcome` is Failed).
    pub failures: Vec<Failure>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub enum Outcome {
    /// Every service is Deployed.
    Deployed,
    /// A failure that will not heal by itself.
    Failed,
    /// Neither yet.
    Waiting,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub struct ServiceLine {
    /// `<namespace>/<name>` of the ServiceSet.
    pub service_set: String,
    /// `<namespace>/<name>` of the service.
    pub service: String,
    /// What the ServiceSet's status says (None: nothing yet).
    pub state: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    pub code: String,
    pub message: String,
    pub hint: Option<String>,
    /// Why it will not heal by itself.
    pub why: String,
}

/// Judges `focus` (a ClusterDeployment or ServiceSet in `namespace`, a MultiClusterService)
/// on the objects and doctor's report of them. None when the focus is not among them.
pub fn judge(
    objects: &[Value],
    report: &Report,
    focus: &Focus,
    namespace: &str,
) -> Option<Judgement> {
    let sets: Vec<ServiceSet> = objects
        .iter()
        .filter(|o| kinds::SERVICE_SET.is_any_version(Object(o).api_version(), Object(o).kind()))
        .map(ServiceSet)
        .collect();
    let mut pending = Vec::new();
    let waited: Vec<ServiceSet> = match focus {
        Focus::ServiceSet(name) => {
            let s: Vec<ServiceSet> = sets
                .iter()
                .copied()
                .filter(|s| s.namespace() == namespace && s.name() == name)
                .collect();
            if s.is_empty() {
                return None;
            }
            s
        }
        Focus::ClusterDeployment(name) => {
            let cd = find(objects, &kinds::CLUSTER_DEPLOYMENT, namespace, name)?;
            let s: Vec<ServiceSet> = sets
                .iter()
                .copied()
                .filter(|s| {
                    s.namespace() == namespace && !s.self_management() && s.cluster() == name
                })
                .collect();
            // Its own services come in a ServiceSet of its own (no MultiClusterService).
            let own = s.iter().any(|s| s.multi_cluster_service().is_empty());
            if !own && !ServiceSource(cd).services().is_empty() {
                pending.push(format!(
                    "kcm has not written the ServiceSet of ClusterDeployment {namespace}/{name} yet"
                ));
            }
            s
        }
        Focus::MultiClusterService(name) => {
            let mcs = find(objects, &kinds::MULTI_CLUSTER_SERVICE, "", name)?;
            let s: Vec<ServiceSet> = sets
                .iter()
                .copied()
                .filter(|s| s.multi_cluster_service() == name)
                .collect();
            // kcm's own account of the targets: one not deployed with no ServiceSet yet.
            let targeted: std::collections::HashSet<_> = s.iter().map(|s| s.target()).collect();
            for t in ServiceSource(mcs).matching_clusters() {
                if !targeted.contains(&t.target()) {
                    let target = if t.is_management() {
                        "the management cluster".to_string()
                    } else {
                        format!("{}/{}", t.namespace(), t.name())
                    };
                    let why = match (t.reason(), t.message()) {
                        ("", "") => String::new(),
                        (r, "") => format!(" ({r})"),
                        (r, m) => format!(" ({r}: {m})"),
                    };
                    pending.push(format!("no ServiceSet for {target} yet{why}"));
                }
            }
            s
        }
    };
    let mut services = Vec::new();
    for ss in &waited {
        let states: BTreeMap<(&str, &str), &str> = ss
            .service_statuses()
            .map(|st| ((st.namespace(), st.name()), st.state()))
            .collect();
        for svc in ss.services() {
            let state = states
                .get(&(svc.namespace(), svc.name()))
                .filter(|s| !s.is_empty())
                .map(|s| s.to_string());
            services.push(ServiceLine {
                service_set: format!("{}/{}", ss.namespace(), ss.name()),
                service: format!("{}/{}", svc.namespace(), svc.name()),
                state,
            });
        }
    }
    services.sort();
    let deployed = pending.is_empty()
        && services
            .iter()
            .all(|s| s.state.as_deref() == Some(DEPLOYED));
    // Everything deployed is the answer, whatever else doctor says (a Flux object suspended
    // after it deployed); otherwise a failure that will not heal, on what is not deployed.
    let failures = if deployed {
        Vec::new()
    } else {
        failures(report, &waited)
    };
    let outcome = if deployed {
        Outcome::Deployed
    } else if !failures.is_empty() {
        Outcome::Failed
    } else {
        Outcome::Waiting
    };
    Some(Judgement {
        outcome,
        services,
        pending,
        failures,
    })
}

fn find<'a>(objects: &'a [Value], kind: &kinds::Kind, ns: &str, name: &str) -> Option<&'a Value> {
    objects.iter().find(|o| {
        let m = Object(o);
        kind.is_any_version(m.api_version(), m.kind()) && m.namespace() == ns && m.name() == name
    })
}

/// Doctor's findings that will not heal on the ServiceSets with a service not deployed
/// (their own findings and those of such services).
fn failures(report: &Report, sets: &[ServiceSet]) -> Vec<Failure> {
    let mut ids: Vec<usize> = Vec::new();
    for view in &report.service_sets {
        let Some(ss) = sets.iter().find(|s| {
            s.namespace() == view.service_set.namespace && s.name() == view.service_set.name
        }) else {
            continue;
        };
        let not_deployed: Vec<_> = view
            .services
            .iter()
            .filter(|sv| {
                !ss.service_statuses().any(|st| {
                    st.name() == sv.name && st.namespace() == sv.namespace && st.state() == DEPLOYED
                })
            })
            .collect();
        if not_deployed.is_empty() {
            continue;
        }
        ids.extend(&view.findings);
        ids.extend(not_deployed.iter().flat_map(|s| s.findings.iter()));
    }
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .filter_map(|i| report.findings.get(i))
        .filter_map(|f| {
            let (_, why) = WILL_NOT_HEAL.iter().find(|(code, _)| *code == f.code)?;
            Some(Failure {
                code: f.code.to_string(),
                message: f.message.clone(),
                hint: f.help.clone(),
                why: why.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::doctor;
    use serde_json::json;

    const NS: &str = "kcm-system";

    fn set(name: &str, cluster: &str, mcs: &str, states: &[&str], paused: bool) -> Value {
        let services: Vec<Value> = (0..states.len())
            .map(|i| json!({"name": format!("s{i}"), "namespace": "apps", "template": "t"}))
            .collect();
        let statuses: Vec<Value> = states
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.is_empty())
            .map(|(i, s)| json!({"name": format!("s{i}"), "namespace": "apps", "state": s}))
            .collect();
        let mut o = json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ServiceSet",
            "metadata": {"name": name, "namespace": NS},
            "spec": {"cluster": cluster, "multiClusterService": mcs,
                     "provider": {"name": "ksm-flux"}, "services": services},
            "status": {"services": statuses}});
        if paused {
            o["metadata"]["annotations"] = json!({crate::api::naming::ANNOTATION_PAUSED: ""});
        }
        o
    }

    fn cd(name: &str, services: usize) -> Value {
        let services: Vec<Value> = (0..services)
            .map(|i| json!({"name": format!("s{i}"), "template": "t"}))
            .collect();
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "ClusterDeployment",
               "metadata": {"name": name, "namespace": NS},
               "spec": {"serviceSpec": {"services": services}}})
    }

    fn judged(objects: &[Value], focus: Focus) -> Option<Judgement> {
        let report = doctor::diagnose(
            objects,
            &doctor::Options::for_tests("2026-11-21T12:00:00Z".parse().unwrap()),
        );
        judge(objects, &report, &focus, NS)
    }

    #[test]
    fn deployed_when_every_service_of_every_set_is() {
        let objects = [set("a", "c1", "", &["Deployed", "Deployed"], false)];
        let j = judged(&objects, Focus::ServiceSet("a".into())).unwrap();
        assert_eq!(j.outcome, Outcome::Deployed);
        assert_eq!(j.services.len(), 2);
        let objects = [set("a", "c1", "", &["Deployed", ""], false)];
        let j = judged(&objects, Focus::ServiceSet("a".into())).unwrap();
        assert_eq!(j.outcome, Outcome::Waiting);
        assert_eq!(j.services[1].state, None);
        assert!(judged(&objects, Focus::ServiceSet("b".into())).is_none());
    }

    #[test]
    fn a_cluster_waits_for_its_own_serviceset_and_those_of_multiclusterservices() {
        // Only a MultiClusterService's ServiceSet so far: the cluster's own is pending.
        let objects = [cd("c1", 1), set("m-c1", "c1", "m", &["Deployed"], false)];
        let j = judged(&objects, Focus::ClusterDeployment("c1".into())).unwrap();
        assert_eq!(j.outcome, Outcome::Waiting);
        assert_eq!(
            j.pending,
            ["kcm has not written the ServiceSet of ClusterDeployment kcm-system/c1 yet"]
        );
        let objects = [
            cd("c1", 1),
            set("m-c1", "c1", "m", &["Deployed"], false),
            set("c1", "c1", "", &["Deployed"], false),
            set("c2", "c2", "", &["Failed"], false),
        ];
        let j = judged(&objects, Focus::ClusterDeployment("c1".into())).unwrap();
        assert_eq!(
            j.outcome,
            Outcome::Deployed,
            "another cluster's set is not waited for"
        );
        assert_eq!(j.services.len(), 2);
        assert!(judged(&objects, Focus::ClusterDeployment("c3".into())).is_none());
    }

    #[test]
    fn a_multiclusterservice_waits_for_a_set_on_every_target_kcm_reports() {
        let mcs = json!({"apiVersion": "k0rdent.mirantis.com/v1beta1",
            "kind": "MultiClusterService", "metadata": {"name": "m"},
            "status": {"matchingClusters": [
                {"kind": "ClusterDeployment", "namespace": NS, "name": "c1", "deployed": true},
                {"kind": "ClusterDeployment", "namespace": NS, "name": "c2", "deployed": false,
                 "reason": "DependencyNotReady", "message": "waiting on base"}]}});
        let objects = [mcs.clone(), set("m-c1", "c1", "m", &["Deployed"], false)];
        let j = judged(&objects, Focus::MultiClusterService("m".into())).unwrap();
        assert_eq!(j.outcome, Outcome::Waiting);
        assert_eq!(
            j.pending,
            ["no ServiceSet for kcm-system/c2 yet (DependencyNotReady: waiting on base)"]
        );
        let objects = [
            mcs,
            set("m-c1", "c1", "m", &["Deployed"], false),
            set("m-c2", "c2", "m", &["Deployed"], false),
        ];
        let j = judged(&objects, Focus::MultiClusterService("m".into())).unwrap();
        assert_eq!(j.outcome, Outcome::Deployed);
    }

    #[test]
    fn a_failure_that_will_not_heal_ends_the_wait_unless_all_is_deployed() {
        let objects = [set("a", "c1", "", &["Deployed", "Provisioning"], true)];
        let j = judged(&objects, Focus::ServiceSet("a".into())).unwrap();
        assert_eq!(j.outcome, Outcome::Failed);
        assert_eq!(
            j.failures[0].code,
            crate::core::doctor::codes::SERVICESET_PAUSED
        );
        assert_eq!(j.failures[0].why, "the ServiceSet is paused");
        // Paused after everything deployed: deployed is the answer.
        let objects = [set("a", "c1", "", &["Deployed", "Deployed"], true)];
        let j = judged(&objects, Focus::ServiceSet("a".into())).unwrap();
        assert_eq!((j.outcome, j.failures.len()), (Outcome::Deployed, 0));
    }
}
