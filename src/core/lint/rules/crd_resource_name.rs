//! KSM305: a provisionerCRDs resource that is not a lowercase plural resource name.

use serde_json::Value;

use crate::api::names::is_dns1123_label;
use crate::core::lint::{Context, RuleInfo, key};
use crate::core::schema::PathSeg;
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM305",
    name: "provisioner-crd-resource-name",
    severity: Severity::Error,
    title: "A provisionerCRDs resource is not a lowercase plural resource name",
    docs: "\
## What it finds
A name in `spec.provisionerCRDs[].resources` that is not a lowercase DNS label, or that is a
kind or a singular name instead of the plural (`HelmRelease`, `helmrelease` instead of
`helmreleases`).

## Why it matters
kcm looks up the CRD named `<resource>.<group>`; CRDs are named by their plural, so any other
form is not found: ProvisionerCRDsReady is False with `failed to get CRD`.

## Example
```yaml
provisionerCRDs:
- group: helm.toolkit.fluxcd.io
  version: v2
  resources: [HelmRelease]
```

## Fix
Use the plural resource name, as `kubectl api-resources` prints it (`helmreleases`).
",
};

/// The plural of a kind (or resource) of a group, from the kinds table: the embedded kcm,
/// Flux and Sveltos CRDs (whose names the table is tested against) and the CRDs of other
/// add-on controllers SMPs commonly name. Not from the CRDs themselves: parsing them all
/// (a megabyte of YAML) cost every lint of an SMP 15 ms.
fn plural_for(group: &str, name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    crate::api::kinds::known()
        .find(|k| k.group == group && (k.kind.to_ascii_lowercase() == lower || k.plural == lower))
        .map(|k| k.plural.to_string())
}

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let items = crate::api::kcm::StateManagementProvider(ctx.json()).provisioner_crd_items();
    for (i, item) in items.iter().enumerate() {
        let group = item.get("group").and_then(Value::as_str).unwrap_or("");
        let Some(Value::Array(resources)) = item.get("resources") else {
            continue;
        };
        for (j, r) in resources.iter().enumerate() {
            let Some(name) = r.as_str() else { continue };
            let path = vec![
                key("spec"),
                key("provisionerCRDs"),
                PathSeg::Index(i),
                key("resources"),
                PathSeg::Index(j),
            ];
            let plural = plural_for(group, name);
            let message = if !is_dns1123_label(name) {
                Some(format!(
                    "resource {name:?} is not a lowercase resource name: kcm looks for the CRD {name}.{group}, which cannot exist"
                ))
            } else if plural.as_deref().is_some_and(|p| p != name) {
                Some(format!(
                    "resource {name:?} is not the plural resource name: kcm looks for the CRD {name}.{group}, which does not exist"
                ))
            } else {
                None
            };
            if let Some(message) = message {
                let help = match plural {
                    Some(p) => format!("use `{p}`"),
                    None => "use the plural name that `kubectl api-resources` shows".into(),
                };
                out.push(ctx.diag(&INFO, message, ctx.span_at(&path)).help(help));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    fn with_resources(resources: &str) -> Vec<String> {
        let text = smp_with_rule("\"\"").replace(
            "provisionerCRDs: []",
            &format!("provisionerCRDs:\n  - group: helm.toolkit.fluxcd.io\n    version: v2\n    resources: {resources}"),
        );
        lint_code(&text, "KSM305")
    }

    #[test]
    fn the_plural_of_every_embedded_crd_comes_from_the_kinds_table() {
        for kind in crate::core::crds::kinds() {
            let crd = crate::core::crds::crd(kind).unwrap();
            for name in [crd.kind.as_str(), crd.plural.as_str()] {
                assert_eq!(
                    super::plural_for(&crd.group, name).as_deref(),
                    Some(crd.plural.as_str()),
                    "{name}.{}",
                    crd.group
                );
            }
        }
    }

    #[test]
    fn kinds_singulars_and_case() {
        assert_eq!(with_resources("[helmreleases]"), Vec::<String>::new());
        let found = with_resources("[HelmRelease, helmrelease]");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("KSM305 16:17"), "{found:?}");
        assert!(found[1].contains("not the plural"), "{found:?}");
    }
}
