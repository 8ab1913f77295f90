//! KSM420: `selfManagement` on a ClusterDeployment, which kcm ignores: the ServiceSet gets
//! `selfManagement = (clusterDeployment == nil)` (`internal/serviceset/builder.go` `Build`).

use crate::api::kcm::ServiceSource;
use crate::core::lint::{Context, RuleInfo, key};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM420",
    name: "self-management-ignored",
    severity: Severity::Warning,
    title: "selfManagement on a ClusterDeployment, where kcm ignores it",
    docs: "\
## What it finds
A ClusterDeployment with `spec.serviceSpec.provider.selfManagement: true`.

## Why it matters
Only a MultiClusterService's `selfManagement` deploys to the management cluster. For a
ClusterDeployment kcm overwrites the flag: its ServiceSet always targets the
ClusterDeployment's own cluster (kcm `internal/serviceset/builder.go` `Build`:
`SelfManagement = ClusterDeployment == nil`; the CRD says \"This field is ignored if set for
ClusterDeployment\"). The services go to the workload cluster, not to the management cluster
the author meant.

## Example
```yaml
kind: ClusterDeployment
spec:
  serviceSpec:
    provider:
      selfManagement: true
```

## Fix
Remove the flag; to deploy to the management cluster, use a MultiClusterService with
`serviceSpec.provider.selfManagement: true`.
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    if !ServiceSource(ctx.json()).self_management() {
        return;
    }
    out.push(
        ctx.diag(
            &INFO,
            "spec.serviceSpec.provider.selfManagement is ignored on a ClusterDeployment: kcm deploys its services to the ClusterDeployment's own cluster",
            ctx.key_span_at(&[
                key("spec"),
                key("serviceSpec"),
                key("provider"),
                key("selfManagement"),
            ]),
        )
        .help("remove it; a MultiClusterService with serviceSpec.provider.selfManagement: true deploys to the management cluster"),
    );
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_text;

    fn cd(flag: &str) -> String {
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata:\n  name: dev\n  namespace: kcm-system\nspec:\n  template: t\n  credential: c\n  serviceSpec:\n    provider:\n      name: ksm-projectsveltos\n      selfManagement: {flag}\n"
        )
    }

    #[test]
    fn ignored_on_a_clusterdeployment_only() {
        let found = lint_text(&cd("true"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("KSM420 12:7 spec.serviceSpec.provider.selfManagement is ignored"),
            "{found:?}"
        );
        assert_eq!(lint_text(&cd("false")), Vec::<String>::new());
        let mcs = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: MultiClusterService\nmetadata:\n  name: m\nspec:\n  serviceSpec:\n    provider:\n      selfManagement: true\n";
        assert_eq!(lint_text(mcs), Vec::<String>::new());
    }
}
