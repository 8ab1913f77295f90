//! KSM303: an SMP without a selector (kcm refuses it) or with one that matches everything.

use serde_json::Value;

use crate::core::lint::{Context, RuleInfo, key};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM303",
    name: "selector",
    severity: Severity::Error,
    title: "The StateManagementProvider selector is missing or empty",
    docs: "\
## What it finds
A StateManagementProvider without `spec.selector` (or with `selector: null`), or with an empty
selector (no `matchLabels` and no `matchExpressions`).

## Why it matters
kcm refuses to reconcile an SMP without a selector: it records the event
`StateManagementProviderSelectorNotDefined` and never sets its status, so the provider is
never ready. An empty selector matches every ServiceSet in the cluster, so the adapter would
claim the ServiceSets of every other provider.

## Example
```yaml
spec:
  selector: {}
```

## Fix
Select the ServiceSets of this provider by the label kcm puts on them:
```yaml
spec:
  selector:
    matchLabels:
      ksm.k0rdent.mirantis.com/adapter: flux-adapter
```
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let Some(spec) = crate::api::meta::Object(ctx.json())
        .spec()
        .filter(|s| s.is_object())
    else {
        return;
    };
    match spec.get("selector") {
        None | Some(Value::Null) => out.push(
            ctx.diag(&INFO, "spec.selector is not set: kcm refuses to reconcile this StateManagementProvider (event StateManagementProviderSelectorNotDefined)", ctx.span_at(&[key("spec"), key("selector")]))
                .help("add `selector: {matchLabels: {ksm.k0rdent.mirantis.com/adapter: <adapter name>}}`"),
        ),
        Some(sel) => {
            let empty = |k: &str| match sel.get(k) {
                None | Some(Value::Null) => true,
                Some(Value::Object(m)) => m.is_empty(),
                Some(Value::Array(a)) => a.is_empty(),
                _ => false,
            };
            if sel.is_object() && empty("matchLabels") && empty("matchExpressions") {
                out.push(
                    ctx.diag(&INFO, "spec.selector is empty: it matches every ServiceSet, those of other providers included", ctx.span_at(&[key("spec"), key("selector")]))
                        .help("select this provider's ServiceSets, e.g. `matchLabels: {ksm.k0rdent.mirantis.com/adapter: <adapter name>}`"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    #[test]
    fn missing_and_empty_selectors() {
        let base = smp_with_rule("\"\"");
        let missing = base.replace(
            "  selector:\n    matchLabels:\n      ksm.k0rdent.mirantis.com/adapter: flux-adapter\n",
            "",
        );
        let found = lint_code(&missing, "KSM303");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("refuses to reconcile"));
        let empty = base.replace(
            "  selector:\n    matchLabels:\n      ksm.k0rdent.mirantis.com/adapter: flux-adapter\n",
            "  selector: {}\n",
        );
        let found = lint_code(&empty, "KSM303");
        assert!(
            found[0].starts_with("KSM303 14:13") && found[0].contains("matches every ServiceSet"),
            "{found:?}"
        );
        assert!(lint_code(&base, "KSM303").is_empty());
    }
}
