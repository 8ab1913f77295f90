//! KSM410–KSM412: the `dependsOn` entries of a ClusterDeployment's or MultiClusterService's
//! services, judged as kcm judges them (`internal/util/validation/services.go`
//! `ValidateServiceDependencyOverall`, `internal/serviceset/util.go` `ServicesToDeploy`): an
//! entry naming no service of the spec, a cycle, and a dependency kcm never deploys.

use serde_json::Value;

use crate::core::dependencies::{self, Key, Service, path_text};
use crate::core::lint::{Context, RuleInfo, Target, key};
use crate::core::schema::PathSeg;
use crate::diag::{Diagnostic, Severity};

pub static UNDEFINED: RuleInfo = RuleInfo {
    code: "KSM410",
    name: "service-dependency-undefined",
    severity: Severity::Error,
    title: "A service depends on a service that is not in the same spec",
    docs: "\
## What it finds
A `dependsOn` entry of a ClusterDeployment's or MultiClusterService's service that names no
service of the same `spec.serviceSpec.services`. A service is named by namespace and name,
and an entry without `namespace` names the service in namespace `default`, whatever the
namespace of the service it belongs to (kcm `internal/serviceset/util.go` `ServiceKey`,
`effectiveNamespace`).

## Why it matters
kcm checks every entry (`internal/util/validation/services.go` `validateServiceDependency`:
`dependency <ns>/<name> of service <ns>/<name> is not defined as a service`). A
ClusterDeployment is rejected by kcm's admission webhook (`internal/webhook/
clusterdeployment_webhook.go`); a MultiClusterService has no webhook, so it is accepted, and
its controller sets `ServicesDependencyValidation=False` and deploys nothing until the spec is
fixed (`multiclusterservice_controller.go` `reconcileUpdate`).

## Example
```yaml
services:
- name: cert-manager
  namespace: cert-manager
  template: cert-manager-1-18-2
- name: ingress-nginx
  namespace: ingress-nginx
  template: ingress-nginx-4-13-0
  dependsOn:
  - name: cert-manager        # means default/cert-manager
```

## Fix
Write the dependency's namespace (`namespace: cert-manager`), or add the service it names.
",
};

pub static CYCLE: RuleInfo = RuleInfo {
    code: "KSM411",
    name: "service-dependency-cycle",
    severity: Severity::Error,
    title: "Services depend on each other in a cycle",
    docs: "\
## What it finds
A `dependsOn` entry on a cycle of the services' dependencies, a service depending on itself
included. Each entry of the cycle is reported.

## Why it matters
kcm searches the whole graph for a cycle and refuses the whole list on the first one
(`internal/util/validation/services.go` `validateServiceDependencyCycle`, `hasCycle`:
`dependency cycle detected at <ns>/<name>`): the ClusterDeployment webhook rejects the object;
a MultiClusterService gets `ServicesDependencyValidation=False` and deploys nothing. Even
without the check, none of the services on the cycle could ever be deployed: each waits for
the other to be Deployed first (`FilterServiceDependencies`).

## Example
```yaml
services:
- name: a
  template: a-1-0-0
  dependsOn: [{name: b}]
- name: b
  template: b-1-0-0
  dependsOn: [{name: a}]
```

## Fix
Remove one entry of the cycle.
",
};

pub static NEVER_SATISFIED: RuleInfo = RuleInfo {
    code: "KSM412",
    name: "service-dependency-disabled",
    severity: Severity::Warning,
    title: "A service depends on a service kcm never deploys",
    docs: "\
## What it finds
A `dependsOn` entry naming a service with `disable: true`, or a service that itself waits, through
its own dependencies, on a disabled one.

## Why it matters
kcm adds a service to the ServiceSet only once every service it depends on is Deployed at its
desired version (`internal/serviceset/util.go` `FilterServiceDependencies`), and it never
writes a disabled service into the ServiceSet (`ServicesToDeploy`: \"skip disabled
services\"). On a cluster where the disabled service was not deployed before it was disabled,
it is never Deployed, so the dependent services never deploy, without an error anywhere: they
are simply absent from the ServiceSet.

## Example
```yaml
services:
- name: cert-manager
  namespace: cert-manager
  template: cert-manager-1-18-2
  disable: true
- name: ingress-nginx
  namespace: ingress-nginx
  template: ingress-nginx-4-13-0
  dependsOn: [{name: cert-manager, namespace: cert-manager}]
```

## Fix
Enable the dependency, or remove the entry (and disable the dependents too if they cannot run
without it).
",
};

/// The services of the object's `spec.serviceSpec` as kcm keys them.
fn services(json: &Value) -> Vec<Service<'_>> {
    Service::all_of(crate::api::kcm::ServiceSource(json))
}

fn entry_path(i: usize, j: usize) -> Vec<PathSeg> {
    let mut path = super::service_path(i, &["dependsOn"]);
    path.push(PathSeg::Index(j));
    path
}

/// The span of a `dependsOn` entry: its `name`, or the entry.
fn entry_span(ctx: &Context, i: usize, j: usize) -> std::ops::Range<usize> {
    let mut path = entry_path(i, j);
    if ctx.node_at(&path).is_some_and(|n| n.get("name").is_some()) {
        path.push(key("name"));
    }
    ctx.span_at(&path)
}

/// What kcm does with an object whose services' dependencies it refuses.
fn refusal(target: Target) -> String {
    super::refusal(target, crate::api::kcm::COND_SERVICES_DEPENDENCY_VALIDATION)
}

fn key_text((ns, name): Key) -> String {
    format!("{ns}/{name}")
}

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let svcs = services(ctx.json());
    if svcs.iter().all(|s| s.depends_on.is_empty()) {
        return;
    }
    for (i, j) in dependencies::undefined(&svcs) {
        let (s, d) = (svcs[i].key, svcs[i].depends_on[j]);
        let mut diag = ctx.diag(
            &UNDEFINED,
            format!(
                "service {} depends on {}, which is not a service of this {}: {} (dependency {} of service {} is not defined as a service)",
                key_text(s),
                key_text(d),
                ctx.target.kind(),
                refusal(ctx.target),
                key_text(d),
                key_text(s)
            ),
            entry_span(ctx, i, j),
        );
        let same_name: Vec<&str> = svcs
            .iter()
            .filter(|o| o.key.1 == d.1)
            .map(|o| o.key.0)
            .collect();
        diag = match same_name.as_slice() {
            [ns] => diag.help(format!(
                "a dependsOn entry without a namespace means namespace default: did you mean `namespace: {ns}`?"
            )),
            _ => diag.help("add the service it names, or remove the entry"),
        };
        out.push(diag);
    }
    for ((i, j), cycle) in dependencies::cycles(&svcs) {
        let self_loop = cycle.len() == 2;
        let what = if self_loop {
            format!("service {} depends on itself", key_text(svcs[i].key))
        } else {
            format!("dependency cycle {}", path_text(&cycle))
        };
        out.push(
            ctx.diag(
                &CYCLE,
                format!(
                    "{what}: {} (dependency cycle detected); none of these services could ever deploy",
                    refusal(ctx.target)
                ),
                entry_span(ctx, i, j),
            )
            .help("remove one dependsOn entry of the cycle"),
        );
    }
    for ((i, j), disabled) in dependencies::never_satisfied(&svcs) {
        let (s, d) = (svcs[i].key, svcs[i].depends_on[j]);
        let why = if d == disabled {
            format!("{} is disabled", key_text(d))
        } else {
            format!(
                "{} waits on the disabled service {}",
                key_text(d),
                key_text(disabled)
            )
        };
        out.push(
            ctx.diag(
                &NEVER_SATISFIED,
                format!(
                    "service {} depends on {}, but {why}: kcm never writes a disabled service into the ServiceSet, so {} is never deployed",
                    key_text(s),
                    key_text(d),
                    key_text(s)
                ),
                entry_span(ctx, i, j),
            )
            .help(format!(
                "enable {}, or remove this dependsOn entry",
                key_text(disabled)
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_text;

    /// Indents service lines (written from column 0) under `services:`.
    fn indent(services: &str) -> String {
        services.lines().map(|l| format!("    {l}\n")).collect()
    }

    fn cd(services: &str) -> String {
        let services = indent(services);
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata:\n  name: dev\n  namespace: kcm-system\nspec:\n  template: t\n  credential: c\n  serviceSpec:\n    services:\n{services}"
        )
    }

    fn mcs(services: &str) -> String {
        let services = indent(services);
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: MultiClusterService\nmetadata:\n  name: m\nspec:\n  clusterSelector:\n    matchLabels: {{env: dev}}\n  serviceSpec:\n    services:\n{services}"
        )
    }

    const TWO: &str = "\
- name: cert-manager
  namespace: cert-manager
  template: cert-manager-1-18-2
- name: ingress-nginx
  namespace: ingress-nginx
  template: ingress-nginx-4-13-0
  dependsOn:
  - name: cert-manager
";

    #[test]
    fn an_entry_without_namespace_names_the_default_namespace() {
        let found = lint_text(&cd(TWO));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("KSM410 18:15 service ingress-nginx/ingress-nginx depends on default/cert-manager, which is not a service of this ClusterDeployment: kcm's ClusterDeployment webhook rejects the object"),
            "{found:?}"
        );
        let found = lint_text(&mcs(TWO));
        assert!(
            found[0].contains("ServicesDependencyValidation=False"),
            "{found:?}"
        );
        // The clean twin: the namespace written.
        let fixed = format!("{TWO}    namespace: cert-manager\n");
        assert_eq!(lint_text(&cd(&fixed)), Vec::<String>::new());
        assert_eq!(lint_text(&mcs(&fixed)), Vec::<String>::new());
        // Both in default: no namespace needed anywhere.
        let defaults = TWO.replace("  namespace: cert-manager\n", "");
        assert_eq!(lint_text(&cd(&defaults)), Vec::<String>::new());
    }

    #[test]
    fn cycles_and_self_dependencies() {
        let text = "\
- name: a
  template: a-1
  dependsOn: [{name: b}]
- name: b
  template: b-1
  dependsOn: [{name: a}]
- name: c
  template: c-1
  dependsOn:
  - {name: c, namespace: default}
";
        let found = lint_text(&cd(text));
        assert_eq!(found.len(), 3, "{found:?}");
        assert!(
            found[0].starts_with("KSM411 13:26 dependency cycle default/a → default/b → default/a"),
            "{found:?}"
        );
        assert!(
            found[1].starts_with("KSM411 16:26 dependency cycle default/b → default/a → default/b"),
            "{found:?}"
        );
        assert!(
            found[2].starts_with("KSM411 20:16 service default/c depends on itself"),
            "{found:?}"
        );
        let fixed = "\
- name: a
  template: a-1
  dependsOn: [{name: b}]
- name: b
  template: b-1
- name: c
  template: c-1
";
        assert_eq!(lint_text(&cd(fixed)), Vec::<String>::new());
    }

    #[test]
    fn a_disabled_dependency_is_never_deployed() {
        let text = TWO.replace(
            "template: cert-manager-1-18-2",
            "template: cert-manager-1-18-2\n  disable: true",
        ) + "    namespace: cert-manager\n";
        let found = lint_text(&mcs(&text));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("KSM412 18:15 service ingress-nginx/ingress-nginx depends on cert-manager/cert-manager, but cert-manager/cert-manager is disabled"),
            "{found:?}"
        );
        // Disabling the dependent too is fine.
        let both = text.replace(
            "template: ingress-nginx-4-13-0",
            "template: ingress-nginx-4-13-0\n  disable: true",
        );
        assert_eq!(lint_text(&mcs(&both)), Vec::<String>::new());
    }
}
