//! The services kcm leaves out of a ServiceSet while a service they depend on is not ready
//! (kcm `internal/serviceset/util.go` `FilterServiceDependencies`), for either provider: each
//! named with the dependency that holds it, followed when that one is itself left out, and
//! said to be waiting (the dependency is on its way) or stuck (it Failed, is disabled, has no
//! version, is on a cycle or is not a service of the spec).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::Doctor;
use super::findings::{self, Blocked};
use crate::api::kcm::{Service, ServiceSet, ServiceSource, ServiceStatus, service_key};
use crate::api::kinds;
use crate::api::meta::Object;

/// Why a dependency holds its dependents.
enum Hold {
    /// It will not become ready by itself.
    Stuck(String),
    /// It is on its way; `since` how long it has been in its state, when known.
    Waiting(String, Option<Duration>),
}

type Key = (String, String);

/// kcm's key of a service, a service status or a `dependsOn` entry: (namespace as written,
/// name).
fn key_of(namespace: &str, name: &str) -> Key {
    let (ns, n) = service_key(namespace, name);
    (ns.to_string(), n.to_string())
}

fn text((ns, n): &Key) -> String {
    format!("{ns}/{n}")
}

/// What the rules need of a ServiceSet and the object it comes from.
struct Set<'a> {
    source: String,
    /// The CD's or MCS's services by key.
    desired: HashMap<Key, Service<'a>>,
    /// The ServiceSet's `status.services` by key.
    statuses: HashMap<Key, ServiceStatus<'a>>,
    /// The ServiceSet's `spec.services` keys.
    in_spec: HashSet<Key>,
}

impl Doctor<'_, '_> {
    /// The services of the ClusterDeployment/MultiClusterService that kcm leaves out of
    /// `ss` while a dependency is not ready.
    pub(super) fn blocked_dependents(
        &mut self,
        ss: ServiceSet,
        set_findings: &mut Vec<usize>,
        ss_disp: &str,
    ) {
        let mcs = ss.multi_cluster_service();
        let source = if mcs.is_empty() {
            self.snap
                .find(kinds::CLUSTER_DEPLOYMENT.kind, ss.namespace(), ss.cluster())
        } else {
            self.snap.find(kinds::MULTI_CLUSTER_SERVICE.kind, "", mcs)
        };
        let Some(source) = source else { return };
        let wanted: Vec<Service> = ServiceSource(source).service_views().collect();
        if wanted.iter().all(|w| w.depends_on().next().is_none()) {
            return;
        }
        let set = Set {
            source: Object(source).display(),
            desired: wanted
                .iter()
                .map(|w| (key_of(w.namespace_as_written(), w.name()), *w))
                .collect(),
            statuses: ss
                .service_statuses()
                .map(|st| (key_of(st.namespace(), st.name()), st))
                .collect(),
            in_spec: ss
                .services()
                .map(|s| key_of(s.namespace_as_written(), s.name()))
                .collect(),
        };
        for w in wanted {
            let k = key_of(w.namespace_as_written(), w.name());
            if w.disabled() || set.in_spec.contains(&k) {
                continue;
            }
            for dep in w.depends_on() {
                let dep = key_of(dep.namespace(), dep.name());
                let Some(hold) = self.hold(&set, &dep, &mut vec![k.clone()]) else {
                    continue;
                };
                let (blocked, why) = match hold {
                    Hold::Stuck(why) => (Blocked::Stuck, why),
                    Hold::Waiting(why, since) => {
                        match since.filter(|s| *s > self.options.stuck_after) {
                            Some(s) => (Blocked::WaitingLong(s), why),
                            None => (Blocked::Waiting, why),
                        }
                    }
                };
                let (ns, name) = (ss.namespace(), ss.name());
                let words =
                    findings::dependents_blocked(&text(&k), &set.source, ns, name, blocked, &why);
                let chain = vec![set.source.clone(), ss_disp.to_string()];
                let i = self.push(words.about(ss.meta().id(), chain));
                set_findings.push(i);
            }
        }
    }

    /// What holds a dependency back (None: it is Deployed at its version and holds nothing).
    /// `path` holds the services already followed (a cycle).
    fn hold(&self, set: &Set, dep: &Key, path: &mut Vec<Key>) -> Option<Hold> {
        let d = text(dep);
        if path.contains(dep) {
            return Some(Hold::Stuck(format!(
                "{d}, which is on a dependency cycle: kcm refuses the services"
            )));
        }
        let Some(desired) = set.desired.get(dep) else {
            return Some(Hold::Stuck(format!(
                "{d}, which is not a service of {}: kcm refuses the services (\"depends on {d} which is not present in the desired services list\")",
                set.source
            )));
        };
        // Disabled: never deployed, unless it was before it was disabled (kcm keeps it then).
        let deployed = set
            .statuses
            .get(dep)
            .is_some_and(|st| st.state() == "Deployed");
        if !deployed && desired.disabled() {
            return Some(Hold::Stuck(format!(
                "{d}, which is disabled: kcm never deploys it"
            )));
        }
        let want = match desired.version() {
            "" => desired.template(),
            v => v,
        };
        if let Some(st) = set.statuses.get(dep) {
            let since = super::age_of(st.last_state_transition_time(), self.options.now);
            return match st.state() {
                "Deployed" => {
                    let version = st.version();
                    (version != want).then(|| {
                        Hold::Stuck(format!(
                            "{d}, which is Deployed but its status.version is {} instead of {want:?}: for a Helm service only kcm's health verifier stamps it (no health rules, a verifier error, or no ClusterConfiguration chart entry leave it unset)",
                            if version.is_empty() {
                                "unset".to_string()
                            } else {
                                format!("{version:?}")
                            }
                        ))
                    })
                }
                "Failed" => {
                    let msg = st.failure_message();
                    Some(Hold::Stuck(if msg.is_empty() {
                        format!(
                            "{d}, which is Failed: a failed dependency keeps its dependents out until it is Deployed"
                        )
                    } else {
                        format!(
                            "{d}, which is Failed ({msg}): a failed dependency keeps its dependents out until it is Deployed"
                        )
                    }))
                }
                "" => Some(Hold::Waiting(format!("{d}, which has no state yet"), since)),
                state => Some(Hold::Waiting(format!("{d}, which is {state}"), since)),
            };
        }
        if set.in_spec.contains(dep) {
            return Some(Hold::Waiting(
                format!("{d}, which the adapter has not reported yet"),
                None,
            ));
        }
        // Itself left out: what holds it.
        path.push(dep.clone());
        let inner = desired
            .depends_on()
            .find_map(|e| self.hold(set, &key_of(e.namespace(), e.name()), path));
        path.pop();
        Some(match inner {
            Some(Hold::Stuck(why)) => Hold::Stuck(format!(
                "{d}, which is itself left out: it depends on {why}"
            )),
            Some(Hold::Waiting(why, since)) => Hold::Waiting(
                format!("{d}, which is itself left out: it depends on {why}"),
                since,
            ),
            None => Hold::Waiting(
                format!("{d}, which kcm has not added to the ServiceSet yet"),
                None,
            ),
        })
    }
}
