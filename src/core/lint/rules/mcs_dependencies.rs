//! KSM424–KSM426: MultiClusterServices' `spec.dependsOn`, checked across every input as kcm
//! checks it (`internal/util/validation/multiclusterservice.go` `validateMCSDependencyCycle`,
//! `hasCycleFrom`) and waits on it (`internal/controller/multiclusterservice_controller.go`
//! `okToReconcileServiceSet`): cycles, a dependency that can never be ready, and one that
//! never applies.

use std::collections::HashMap;

use crate::api::kcm::ServiceSource;
use crate::api::meta::Object;
use crate::core::dependencies::mcs_cycle_from;
use crate::core::lint::across::{Budget, Position};
use crate::core::lint::{RuleInfo, Target, key, node_at};
use crate::core::objects::LoadedObject;
use crate::core::schema::PathSeg;
use crate::diag::{Diagnostic, Severity};

pub static CYCLE: RuleInfo = RuleInfo {
    code: "KSM424",
    name: "mcs-dependency-cycle",
    severity: Severity::Error,
    title: "A MultiClusterService on, or depending on, a cycle of dependsOn",
    docs: "\
## What it finds
A MultiClusterService whose `spec.dependsOn`, followed through the MultiClusterServices of
the inputs, comes back to a MultiClusterService already on the path: one that depends on
itself, two that depend on each other, or one that depends on such a cycle. Checked across
every input of a run; the finding is at the entry that leads to the cycle.

## Why it matters
kcm searches the dependencies from each MultiClusterService and refuses it on the first
cycle it reaches, even one it is not part of (kcm
`internal/util/validation/multiclusterservice.go` `validateMCSDependencyCycle`,
`hasCycleFrom`: `dependency cycle detected at <name>`). There is no MultiClusterService
webhook: the object is accepted, and its controller sets
`MultiClusterServiceDependencyValidation=False` and reconciles it no further: nothing is
deployed or updated.

## Example
```yaml
kind: MultiClusterService
metadata: {name: ingress}
spec:
  dependsOn: [cert-manager]
---
kind: MultiClusterService
metadata: {name: cert-manager}
spec:
  dependsOn: [ingress]
```

## Fix
Remove one `dependsOn` entry of the cycle.
",
};

pub static DISABLED: RuleInfo = RuleInfo {
    code: "KSM425",
    name: "mcs-dependency-never-ready",
    severity: Severity::Warning,
    title: "A MultiClusterService depends on one with a disabled service, which is never ready",
    docs: "\
## What it finds
A `spec.dependsOn` entry naming a MultiClusterService of the inputs that has a service with
`disable: true` (or a service that depends on one), when both can target the same cluster (both select ClusterDeployments, or
both deploy to the management cluster).

## Why it matters
kcm creates a MultiClusterService's ServiceSet on a cluster only when every service of each
dependency is Deployed there: it counts the dependency's Deployed services against the
length of its `services` list (kcm `internal/controller/multiclusterservice_controller.go`
`okToReconcileServiceSet`), and a disabled service is never written into a ServiceSet
(`internal/serviceset/util.go` `ServicesToDeploy`), so never Deployed, nor are the services
that depend on it (`FilterServiceDependencies`). On every cluster where
it was not deployed before being disabled, the dependent MultiClusterService waits forever:
`MultiClusterServiceDependencyReady=False`, \"waiting on <name> (n/m services deployed)\".

## Example
```yaml
kind: MultiClusterService
metadata: {name: base}
spec:
  serviceSpec:
    services:
    - {name: cert-manager, namespace: cert-manager, template: cert-manager-1-18-2}
    - {name: old-agent, namespace: agent, template: agent-1-0-0, disable: true}
---
kind: MultiClusterService
metadata: {name: apps}
spec:
  dependsOn: [base]
```

## Fix
Remove the disabled service from the dependency's list instead of disabling it, or move it
to another MultiClusterService.
",
};

pub static NO_EFFECT: RuleInfo = RuleInfo {
    code: "KSM426",
    name: "mcs-dependency-no-effect",
    severity: Severity::Warning,
    title: "A MultiClusterService depends on one that targets none of its clusters",
    docs: "\
## What it finds
A `spec.dependsOn` entry naming a MultiClusterService of the inputs that can never target a
cluster this one targets: this one deploys only to the management cluster
(`selfManagement`, empty selector) and the dependency does not, or the dependency selects no
ClusterDeployment (empty `clusterSelector`) and does not share the management cluster.

## Why it matters
kcm waits for a dependency only on the clusters the dependency targets: on the management
cluster only if the dependency has `selfManagement`, on a ClusterDeployment only if the
dependency's selector is not empty and matches it (kcm
`internal/controller/multiclusterservice_controller.go` `okToReconcileServiceSet`). Such an
entry never makes this MultiClusterService wait: the ordering it was written for does not
happen.

## Example
```yaml
kind: MultiClusterService
metadata: {name: mgmt-monitoring}
spec:
  dependsOn: [cert-manager]     # targets ClusterDeployments only
  serviceSpec:
    provider: {selfManagement: true}
```

## Fix
Make the dependency target the same clusters (its `clusterSelector`, its `selfManagement`),
or remove the entry.
",
};

/// What the cross-input checks keep of a MultiClusterService.
#[derive(Debug)]
struct Node {
    name: String,
    /// `spec.dependsOn`: (name, where).
    depends_on: Vec<(String, Position)>,
    self_management: bool,
    /// Its `clusterSelector` selects no ClusterDeployment.
    selects_none: bool,
    /// Why some of its services are never Deployed (disabled, or waiting on a disabled one).
    disabled: Vec<String>,
}

impl Node {
    fn targets_clusters(&self) -> bool {
        !self.selects_none
    }
}

/// The MultiClusterServices of the inputs, checked together once every input is read.
#[derive(Debug, Default)]
pub struct McsGraph {
    nodes: Vec<Node>,
}

impl McsGraph {
    pub fn collect(&mut self, object: &LoadedObject, budget: &mut Budget) {
        let json = &object.json;
        if Target::of(json) != Some(Target::MultiClusterService) {
            return;
        }
        let src = ServiceSource(json);
        let mut depends_on = Vec::new();
        for (i, d) in src.depends_on_items().iter().enumerate() {
            let Some(name) = d.as_str() else { continue };
            let path = [key("spec"), key("dependsOn"), PathSeg::Index(i)];
            let Some(node) = node_at(&object.node, &path) else {
                continue;
            };
            depends_on.push((
                name.to_string(),
                Position::keep(&object.source, node.span.clone(), budget),
            ));
        }
        // Services never Deployed on a fresh cluster: disabled ones, and those waiting on them.
        let services = crate::core::dependencies::Service::all_of(src);
        let mut disabled: Vec<String> = services
            .iter()
            .filter(|s| s.disabled)
            .map(|s| format!("{}/{} is disabled", s.key.0, s.key.1))
            .collect();
        let mut waiting: Vec<String> = crate::core::dependencies::never_satisfied(&services)
            .into_iter()
            .map(|((i, _), (dns, dn))| {
                let (ns, n) = services[i].key;
                format!("{ns}/{n} waits on the disabled {dns}/{dn}")
            })
            .collect();
        waiting.dedup();
        disabled.extend(waiting);
        self.nodes.push(Node {
            name: Object(json).name().to_string(),
            depends_on,
            self_management: src.self_management(),
            selects_none: src.selects_no_cluster(),
            disabled,
        });
    }

    pub fn absorb(&mut self, other: McsGraph) {
        self.nodes.extend(other.nodes);
    }

    pub fn findings(&self) -> Vec<Diagnostic> {
        // Names defined once: a name defined twice in the inputs (two variants of an
        // example) is not one object, and its edges are not followed.
        let mut count: HashMap<&str, usize> = HashMap::new();
        for n in &self.nodes {
            *count.entry(n.name.as_str()).or_default() += 1;
        }
        let unique: HashMap<&str, &Node> = self
            .nodes
            .iter()
            .filter(|n| count[n.name.as_str()] == 1)
            .map(|n| (n.name.as_str(), n))
            .collect();
        let graph: HashMap<&str, Vec<&str>> = unique
            .values()
            .map(|n| {
                (
                    n.name.as_str(),
                    n.depends_on.iter().map(|(d, _)| d.as_str()).collect(),
                )
            })
            .collect();
        let mut out = Vec::new();
        for n in &self.nodes {
            self.cycle(n, &graph, &unique, &mut out);
            for (dep, at) in &n.depends_on {
                let Some(d) = unique.get(dep.as_str()).filter(|d| d.name != n.name) else {
                    continue;
                };
                let share_mgmt = n.self_management && d.self_management;
                let share_clusters = n.targets_clusters() && d.targets_clusters();
                let n_targets = n.self_management || n.targets_clusters();
                if !share_mgmt && !share_clusters {
                    if n_targets {
                        out.push(self.no_effect(n, d, at));
                    }
                    continue;
                }
                if !d.disabled.is_empty() {
                    out.push(
                        at.diag(
                            DISABLED.code,
                            DISABLED.severity,
                            format!(
                                "MultiClusterService {} depends on {}, whose services never all deploy ({}): kcm waits until every service of {} is Deployed on a cluster, and never deploys a disabled one, so {} waits forever on the clusters they share",
                                n.name,
                                d.name,
                                d.disabled.join(", "),
                                d.name,
                                n.name
                            ),
                        )
                        .help(format!(
                            "remove the disabled service from {}'s services instead of disabling it, or drop this dependency",
                            d.name
                        )),
                    );
                }
            }
        }
        out
    }

    /// KSM424 for one MultiClusterService: a self-dependency (whatever its name's other
    /// definitions), else the cycle kcm's search from it reaches.
    fn cycle(
        &self,
        n: &Node,
        graph: &HashMap<&str, Vec<&str>>,
        unique: &HashMap<&str, &Node>,
        out: &mut Vec<Diagnostic>,
    ) {
        let refusal = "kcm sets MultiClusterServiceDependencyValidation=False and reconciles it no further (dependency cycle detected)";
        if let Some((_, at)) = n.depends_on.iter().find(|(d, _)| *d == n.name) {
            out.push(
                at.diag(
                    CYCLE.code,
                    CYCLE.severity,
                    format!(
                        "MultiClusterService {} depends on itself: {refusal}",
                        n.name
                    ),
                )
                .help("remove this entry"),
            );
            return;
        }
        if !unique.contains_key(n.name.as_str()) {
            return;
        }
        let Some(path) = mcs_cycle_from(n.name.as_str(), graph) else {
            return;
        };
        let Some((_, at)) = n.depends_on.iter().find(|(d, _)| d == path[1]) else {
            return;
        };
        let repeated = path[path.len() - 1];
        let on_cycle = path[..path.len() - 1].contains(&repeated) && path[0] == repeated;
        let text = path.join(" → ");
        let message = if on_cycle {
            format!(
                "MultiClusterService {} is on the dependency cycle {text}: {refusal}",
                n.name
            )
        } else {
            let start = path.iter().position(|p| *p == repeated).unwrap_or(0);
            format!(
                "MultiClusterService {} depends ({text}) on the dependency cycle {}: kcm's search from {} reaches it, so {refusal}",
                n.name,
                path[start..].join(" → "),
                n.name
            )
        };
        out.push(
            at.diag(CYCLE.code, CYCLE.severity, message)
                .help("remove one dependsOn entry of the cycle"),
        );
    }

    fn no_effect(&self, n: &Node, d: &Node, at: &Position) -> Diagnostic {
        let why = if !d.self_management && d.selects_none {
            format!(
                "{} targets no cluster at all (empty clusterSelector, no selfManagement)",
                d.name
            )
        } else if !n.targets_clusters() {
            format!(
                "{} deploys only to the management cluster and {} does not set selfManagement",
                n.name, d.name
            )
        } else {
            format!(
                "{} selects no ClusterDeployment (empty clusterSelector) and only {} deploys to the management cluster",
                d.name, n.name
            )
        };
        at.diag(
            NO_EFFECT.code,
            NO_EFFECT.severity,
            format!(
                "MultiClusterService {} depends on {}, but {why}: kcm waits for a dependency only on the clusters it targets, so this entry never orders anything",
                n.name, d.name
            ),
        )
        .help(format!(
            "make {} target the same clusters as {}, or remove the entry",
            d.name, n.name
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::template_chain::across;

    fn mcs(name: &str, spec: &str) -> String {
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: MultiClusterService\nmetadata:\n  name: {name}\nspec:\n{spec}"
        )
    }

    fn sel(deps: &str) -> String {
        format!(
            "  clusterSelector:\n    matchLabels: {{group: demo}}\n  dependsOn: [{deps}]\n  serviceSpec:\n    services:\n    - {{name: s, namespace: s, template: s-1}}\n"
        )
    }

    fn messages(texts: &[&str]) -> Vec<String> {
        across(texts)
            .iter()
            .map(|d| {
                format!(
                    "{} {}:{} {}",
                    d.code,
                    d.file().unwrap(),
                    d.position().unwrap().0.line,
                    d.message
                )
            })
            .collect()
    }

    #[test]
    fn cycles_across_files_self_included() {
        let found = messages(&[
            &mcs("a", &sel("b")),
            &mcs("b", &sel("a")),
            &mcs("c", &sel("a")),
            &mcs("s", &sel("s")),
        ]);
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(
            found[0].starts_with(
                "KSM424 in0.yaml:8 MultiClusterService a is on the dependency cycle a → b → a"
            ),
            "{found:?}"
        );
        assert!(
            found[1].starts_with(
                "KSM424 in1.yaml:8 MultiClusterService b is on the dependency cycle b → a → b"
            ),
            "{found:?}"
        );
        assert!(found[2].starts_with("KSM424 in2.yaml:8 MultiClusterService c depends (c → a → b → a) on the dependency cycle a → b → a"), "{found:?}");
        assert!(
            found[3].starts_with("KSM424 in3.yaml:8 MultiClusterService s depends on itself"),
            "{found:?}"
        );
        // The clean twin: a chain, no cycle.
        assert!(
            messages(&[
                &mcs("a", &sel("b")),
                &mcs("b", &sel("")),
                &mcs("c", &sel("a"))
            ])
            .is_empty()
        );
    }

    #[test]
    fn a_dependency_with_a_disabled_service_is_never_ready() {
        let base = mcs(
            "base",
            "  clusterSelector:\n    matchLabels: {group: demo}\n  serviceSpec:\n    services:\n    - {name: cert-manager, namespace: cert-manager, template: cm-1}\n    - {name: agent, namespace: agent, template: agent-1, disable: true}\n",
        );
        let found = messages(&[&base, &mcs("apps", &sel("base"))]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM425 in1.yaml:8 MultiClusterService apps depends on base, whose services never all deploy (agent/agent is disabled)"), "{found:?}");
        let waits = base.replace(
            "template: cm-1}",
            "template: cm-1, dependsOn: [{name: agent, namespace: agent}]}",
        );
        let found = messages(&[&waits, &mcs("apps", &sel("base"))]);
        assert!(found[0].contains("(agent/agent is disabled, cert-manager/cert-manager waits on the disabled agent/agent)"), "{found:?}");
        let fixed = base.replace(
            "    - {name: agent, namespace: agent, template: agent-1, disable: true}\n",
            "",
        );
        assert!(messages(&[&fixed, &mcs("apps", &sel("base"))]).is_empty());
    }

    #[test]
    fn a_dependency_that_targets_none_of_the_clusters() {
        let mgmt = |deps: &str| {
            mcs(
                "mgmt-monitoring",
                &format!(
                    "  dependsOn: [{deps}]\n  serviceSpec:\n    provider: {{selfManagement: true}}\n    services:\n    - {{name: m, namespace: m, template: m-1}}\n"
                ),
            )
        };
        let found = messages(&[&mcs("cert-manager", &sel("")), &mgmt("cert-manager")]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM426 in1.yaml:6 MultiClusterService mgmt-monitoring depends on cert-manager, but mgmt-monitoring deploys only to the management cluster and cert-manager does not set selfManagement"), "{found:?}");
        // The twin: the dependency also deploys to the management cluster.
        let both = mcs(
            "cert-manager",
            "  serviceSpec:\n    provider: {selfManagement: true}\n    services:\n    - {name: c, namespace: c, template: c-1}\n",
        );
        assert!(messages(&[&both, &mgmt("cert-manager")]).is_empty());
        // Unknown dependency (in the cluster, not the inputs): nothing to say.
        assert!(messages(&[&mgmt("elsewhere")]).is_empty());
    }
}
