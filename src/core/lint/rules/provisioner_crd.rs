//! KSM304: a provisionerCRDs entry kcm rejects as "invalid GVR".

use serde_json::Value;

use crate::core::lint::{Context, RuleInfo, key};
use crate::core::schema::PathSeg;
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM304",
    name: "invalid-provisioner-crd",
    severity: Severity::Error,
    title: "A provisionerCRDs entry has an empty group, version or resource list",
    docs: "\
## What it finds
An entry of `spec.provisionerCRDs` whose `group` or `version` is empty, or whose `resources`
list is empty.

## Why it matters
kcm checks that each `<resource>.<group>` CRD exists and serves `version`; with an empty part
it fails with `invalid GVR`: ProvisionerCRDsReady is False and the provider is never ready.

## Example
```yaml
provisionerCRDs:
- group: helm.toolkit.fluxcd.io
  version: \"\"
  resources: [helmreleases]
```

## Fix
Fill in the API group, the version the provisioner uses and at least one resource (plural).
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let items = crate::api::kcm::StateManagementProvider(ctx.json()).provisioner_crd_items();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(m) = item else { continue };
        let path = vec![key("spec"), key("provisionerCRDs"), PathSeg::Index(i)];
        for field in ["group", "version"] {
            if m.get(field).and_then(Value::as_str) == Some("") {
                let mut p = path.clone();
                p.push(key(field));
                out.push(
                    ctx.diag(
                        &INFO,
                        format!(
                            "provisionerCRDs[{i}].{field} is empty: kcm fails with \"invalid GVR\""
                        ),
                        ctx.span_at(&p),
                    )
                    .help(format!("set the API {field} of the provisioner's CRDs")),
                );
            }
        }
        if matches!(m.get("resources"), Some(Value::Array(r)) if r.is_empty()) {
            let mut p = path.clone();
            p.push(key("resources"));
            out.push(
                ctx.diag(
                    &INFO,
                    format!(
                        "provisionerCRDs[{i}].resources is empty: kcm fails with \"invalid GVR\""
                    ),
                    ctx.span_at(&p),
                )
                .help("list the plural resource names, e.g. `resources: [helmreleases]`"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    #[test]
    fn empty_parts() {
        let text = smp_with_rule("\"\"").replace(
            "provisionerCRDs: []",
            "provisionerCRDs:\n  - group: \"\"\n    version: v2\n    resources: []",
        );
        let found = lint_code(&text, "KSM304");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("KSM304 14:12"), "{found:?}");
    }
}
