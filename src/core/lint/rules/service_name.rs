//! KSM421: a service name or namespace kcm refuses: each must be a DNS-1123 label
//! (`internal/util/validation/services.go` `ServicesHaveValidTemplates`,
//! `validation.ValidateNamespaceName`), a stricter rule than the CRD's.

use crate::api::names::dns1123_label_errors;
use crate::core::lint::{Context, RuleInfo};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM421",
    name: "service-name-invalid",
    severity: Severity::Error,
    title: "A service name or namespace that is not a DNS-1123 label",
    docs: "\
## What it finds
A ClusterDeployment's or MultiClusterService's service whose `name`, or non-empty
`namespace`, is not a lowercase RFC 1123 label: at most 63 characters of `a-z`, `0-9` and
`-`, no dots. The CRD allows 253 characters of anything, so the API server accepts it.

## Why it matters
kcm validates each service as a namespace name (kcm
`internal/util/validation/services.go` `ServicesHaveValidTemplates`, with
`ValidateNamespaceName`): the service becomes a Helm release in that namespace. kcm's
admission webhook rejects such a ClusterDeployment; a MultiClusterService (which has no
webhook) gets `ServicesReferencesValidation=False` and deploys nothing.

## Example
```yaml
services:
- name: ingress.nginx
  namespace: Ingress
  template: ingress-nginx-4-13-0
```

## Fix
Use lower case letters, digits and `-`: `ingress-nginx`.
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let refusal = super::refusal(
        ctx.target,
        crate::api::kcm::COND_SERVICES_REFERENCES_VALIDATION,
    );
    let services = crate::api::kcm::ServiceSource(ctx.json()).service_views();
    for (i, svc) in services.enumerate() {
        for (field, v) in [
            ("name", svc.name()),
            ("namespace", svc.namespace_as_written()),
        ] {
            if v.is_empty() {
                continue;
            }
            let errs = dns1123_label_errors(v);
            if errs.is_empty() {
                continue;
            }
            let path = super::service_path(i, &[field]);
            out.push(
                ctx.diag(
                    &INFO,
                    format!(
                        "spec.serviceSpec.services[{i}].{field}: Invalid value: {v:?}: {}: {refusal}",
                        errs.join(", ")
                    ),
                    ctx.span_at(&path),
                )
                .help("a service is a Helm release in a namespace: use lower case letters, digits and '-' (at most 63)"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_text;

    #[test]
    fn service_names_are_namespace_names() {
        let cd = |name: &str, ns: &str| {
            format!(
                "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata:\n  name: dev\n  namespace: kcm-system\nspec:\n  template: t\n  credential: c\n  serviceSpec:\n    services:\n    - name: {name}\n      namespace: {ns}\n      template: x-1-0-0\n"
            )
        };
        let found = lint_text(&cd("ingress.nginx", "Ingress"));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("KSM421 11:13 spec.serviceSpec.services[0].name: Invalid value: \"ingress.nginx\": must not contain dots"), "{found:?}");
        assert!(found[1].starts_with("KSM421 12:18 spec.serviceSpec.services[0].namespace: Invalid value: \"Ingress\": a lowercase RFC 1123 label"), "{found:?}");
        assert_eq!(
            lint_text(&cd("ingress-nginx", "ingress")),
            Vec::<String>::new()
        );
    }
}
