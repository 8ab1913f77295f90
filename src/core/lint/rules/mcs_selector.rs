//! KSM419: a MultiClusterService that targets nothing: an empty `clusterSelector` selects no
//! ClusterDeployment in kcm (`multiclusterservice_controller.go` `reconcileUpdate`: the
//! ClusterDeployments are listed only `if !selector.Empty()`), and without
//! `selfManagement` there is no other target.

use crate::api::kcm::ServiceSource;
use crate::core::lint::{Context, RuleInfo, key};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM419",
    name: "mcs-selects-nothing",
    severity: Severity::Warning,
    title: "A MultiClusterService whose empty clusterSelector selects no cluster",
    docs: "\
## What it finds
A MultiClusterService with services whose `spec.clusterSelector` is absent or empty (no
`matchLabels`, no `matchExpressions`) and that does not set
`spec.serviceSpec.provider.selfManagement: true`.

## Why it matters
In Kubernetes an empty label selector usually selects everything; in kcm it selects no
ClusterDeployment: the controller lists ClusterDeployments only when the selector is not empty
(kcm `internal/controller/multiclusterservice_controller.go` `reconcileUpdate`, and
`cleanupServiceSets` deletes the ServiceSets of a selector that became empty). Without
`selfManagement` the MultiClusterService has no target at all and deploys nothing, with
`ClusterInReadyState` \"0/0\" and no error.

## Example
```yaml
kind: MultiClusterService
spec:
  clusterSelector: {}
  serviceSpec:
    services:
    - name: ingress-nginx
      namespace: ingress-nginx
      template: ingress-nginx-4-13-0
```

## Fix
Select the clusters by label (`matchLabels: {group: demo}`), or set
`serviceSpec.provider.selfManagement: true` to deploy to the management cluster.
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let mcs = ServiceSource(ctx.json());
    // Without services there is nothing to deploy anyway (a status-only excerpt, say).
    if mcs.services().is_empty() || mcs.self_management() || !mcs.selects_no_cluster() {
        return;
    }
    let span = if mcs.cluster_selector().is_some() {
        ctx.span_at(&[key("spec"), key("clusterSelector")])
    } else {
        ctx.span_at(&[key("spec")])
    };
    out.push(
        ctx.diag(
            &INFO,
            "spec.clusterSelector is empty: kcm selects no ClusterDeployment with an empty selector (not every one, as Kubernetes selectors do), and without serviceSpec.provider.selfManagement this MultiClusterService deploys nothing",
            span,
        )
        .help("select clusters by label (matchLabels: {group: demo}), or set serviceSpec.provider.selfManagement: true to deploy to the management cluster"),
    );
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_text;

    fn mcs(spec: &str) -> String {
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: MultiClusterService\nmetadata:\n  name: global\nspec:\n{spec}  serviceSpec:\n    services:\n    - {{name: ingress-nginx, namespace: ingress-nginx, template: ingress-nginx-4-13-0}}\n"
        )
    }

    #[test]
    fn an_empty_selector_selects_nothing() {
        for spec in [
            "  clusterSelector: {}\n",
            "  clusterSelector:\n    matchLabels: {}\n    matchExpressions: []\n",
            "",
        ] {
            let found = lint_text(&mcs(spec));
            assert_eq!(found.len(), 1, "{spec}: {found:?}");
            assert!(found[0].starts_with("KSM419 "), "{found:?}");
        }
        let found = lint_text(&mcs("  clusterSelector: {}\n"));
        assert!(
            found[0].starts_with("KSM419 6:20 spec.clusterSelector is empty"),
            "{found:?}"
        );
        // The clean twins: a selector, or self-management.
        assert_eq!(
            lint_text(&mcs("  clusterSelector:\n    matchLabels: {group: demo}\n")),
            Vec::<String>::new()
        );
        assert_eq!(
            lint_text(&mcs(
                "  clusterSelector:\n    matchExpressions:\n    - {key: group, operator: Exists}\n"
            )),
            Vec::<String>::new()
        );
        let self_managed = mcs("").replace(
            "  serviceSpec:\n",
            "  serviceSpec:\n    provider: {selfManagement: true}\n",
        );
        assert_eq!(lint_text(&self_managed), Vec::<String>::new());
        // No services: nothing to deploy anyway.
        let empty = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: MultiClusterService\nmetadata:\n  name: global\nspec: {}\n";
        assert_eq!(lint_text(empty), Vec::<String>::new());
    }
}
