//! KSM302: a reference to a namespaced kind without a namespace (or a cluster-scoped kind
//! with one).

use serde_json::Value;

use crate::core::lint::{Context, RuleInfo, key};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM302",
    name: "reference-namespace",
    severity: Severity::Error,
    title: "An adapter or provisioner reference has the wrong namespace scope",
    docs: "\
## What it finds
An adapter or provisioner reference to a namespaced kind (Deployment, StatefulSet,
DaemonSet, Pod, a Flux object...) with an empty `namespace`, or to a cluster-scoped kind
(Namespace, CustomResourceDefinition, ClusterRole...) with a namespace.

## Why it matters
kcm gets the object in the reference's namespace, or cluster-wide when it is empty. A
namespaced object asked for without a namespace, or a cluster-scoped one asked for in a
namespace, is never found: the condition is False with reason `FailedToGetAdapter`.

## Example
```yaml
adapter:
  apiVersion: apps/v1
  kind: Deployment
  name: flux-adapter
  namespace: \"\"
```

## Fix
Set the namespace the object lives in (`kcm-system`, `flux-system`...), or `\"\"` for a
cluster-scoped kind.
",
};

/// Scope of the kinds kcm references most; None for kinds we cannot know offline.
fn namespaced(api_version: &str, kind: &str) -> Option<bool> {
    crate::api::kinds::known_scope(api_version, kind)
}

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for (path, reference) in super::api_version::references(ctx) {
        let s = |k: &str| reference.get(k).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind, name, ns) = (s("apiVersion"), s("kind"), s("name"), s("namespace"));
        let Some(is_namespaced) = namespaced(api_version, kind) else {
            continue;
        };
        let mut p = path.clone();
        if is_namespaced && ns.is_empty() {
            p.push(key("namespace"));
            out.push(
                ctx.diag(&INFO, format!("{kind} {name:?} is namespaced but the reference has no namespace: kcm will not find it"), ctx.span_at(&p))
                    .help(format!("set `namespace:` to the namespace of the {kind}")),
            );
        } else if !is_namespaced && !ns.is_empty() {
            p.push(key("namespace"));
            out.push(
                ctx.diag(&INFO, format!("{kind} is cluster-scoped but the reference has namespace {ns:?}: kcm will not find it"), ctx.span_at(&p))
                    .help("set `namespace: \"\"` for a cluster-scoped kind"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    #[test]
    fn namespaced_kind_without_namespace() {
        let text = smp_with_rule("\"\"").replace("namespace: kcm-system", "namespace: \"\"");
        let found = lint_code(&text, "KSM302");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM302 10:16"), "{found:?}");
    }

    #[test]
    fn cluster_scoped_kind_with_namespace() {
        let text = smp_with_rule("\"\"").replace(
            "apiVersion: apps/v1\n    kind: Deployment",
            "apiVersion: apiextensions.k8s.io/v1\n    kind: CustomResourceDefinition",
        );
        assert_eq!(lint_code(&text, "KSM302").len(), 1);
    }

    #[test]
    fn unknown_kinds_are_not_judged() {
        let text = smp_with_rule("\"\"")
            .replace("kind: Deployment", "kind: Widget")
            .replace("namespace: kcm-system", "namespace: \"\"");
        assert!(lint_code(&text, "KSM302").is_empty());
    }
}
