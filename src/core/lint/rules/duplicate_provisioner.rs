//! KSM306: the same object referenced twice as a provisioner.

use std::collections::HashMap;

use serde_json::Value;

use crate::core::lint::{Context, RuleInfo};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM306",
    name: "duplicate-provisioner",
    severity: Severity::Warning,
    title: "The same object is listed twice as a provisioner",
    docs: "\
## What it finds
Two entries of `spec.provisioner` with the same apiVersion, kind, namespace and name.

## Why it matters
kcm evaluates both rules against the same object; a copy-paste usually means that another
provisioner (say, kustomize-controller next to helm-controller) was meant and is not checked
at all, or that two rules disagree.

## Example
```yaml
provisioner:
- {apiVersion: apps/v1, kind: Deployment, name: helm-controller, namespace: flux-system, readinessRule: \"\"}
- {apiVersion: apps/v1, kind: Deployment, name: helm-controller, namespace: flux-system, readinessRule: \"\"}
```

## Fix
Remove the duplicate, or change it to the object that was meant.
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let mut seen: HashMap<[&str; 4], usize> = HashMap::new();
    for (path, reference) in super::api_version::references(ctx) {
        if path.len() < 3 {
            continue; // the adapter
        }
        let s = |k: &str| reference.get(k).and_then(Value::as_str).unwrap_or("");
        let id = [s("apiVersion"), s("kind"), s("namespace"), s("name")];
        let crate::core::schema::PathSeg::Index(i) = path[2] else {
            continue;
        };
        if let Some(first) = seen.get(&id) {
            let first_span = ctx.span_at(
                &path[..2]
                    .iter()
                    .cloned()
                    .chain([crate::core::schema::PathSeg::Index(*first)])
                    .collect::<Vec<_>>(),
            );
            out.push(
                ctx.diag(
                    &INFO,
                    format!(
                        "provisioner[{i}] references {} {:?} again (first at provisioner[{first}])",
                        id[1], id[3]
                    ),
                    ctx.span_at(&path),
                )
                .secondary(first_span, "first here")
                .help("remove the duplicate or point it at the object that was meant"),
            );
        } else {
            seen.insert(id, i);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    #[test]
    fn duplicates_are_reported_once_with_the_first() {
        let p = "  - {apiVersion: apps/v1, kind: Deployment, name: helm-controller, namespace: flux-system, readinessRule: \"\"}\n";
        let text = smp_with_rule("\"\"")
            .replace("  provisioner: []\n", &format!("  provisioner:\n{p}{p}{p}"));
        let found = lint_code(&text, "KSM306");
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].starts_with("KSM306 14:5"), "{found:?}");
    }
}
