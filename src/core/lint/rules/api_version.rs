//! KSM301: an adapter or provisioner reference with an apiVersion kcm cannot parse.

use serde_json::Value;

use crate::core::lint::{Context, RuleInfo, key};
use crate::core::schema::PathSeg;
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM301",
    name: "invalid-api-version",
    severity: Severity::Error,
    title: "An adapter or provisioner apiVersion is not `group/version` or `version`",
    docs: "\
## What it finds
An adapter or provisioner reference whose `apiVersion` is empty, has more than one `/`, an
empty group or version, or names an API group without a version (`apps`).

## Why it matters
kcm splits the apiVersion on `/`; anything else fails its RBAC step with `invalid API
version` (RBACReady False, reason `FailedToGetGVKForAdapter` or `FailedToGetGVKForProvisioner`,
and nothing else is evaluated), and a bare group is taken as a core-group version, which no
REST mapping has (the same reasons): the provider never becomes ready.

## Example
```yaml
adapter:
  apiVersion: apps
  kind: Deployment
```

## Fix
Write `group/version` (`apps/v1`), or only the version for the core group (`v1`).
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for (path, reference) in references(ctx) {
        let Some(api_version) = reference.get("apiVersion").and_then(Value::as_str) else {
            continue;
        };
        let Some(problem) = problem(api_version) else {
            continue;
        };
        let mut p = path.clone();
        p.push(key("apiVersion"));
        out.push(
            ctx.diag(
                &INFO,
                format!("apiVersion {api_version:?} {problem}"),
                ctx.span_at(&p),
            )
            .help("write `group/version` (e.g. `apps/v1`), or `v1` for the core group"),
        );
    }
}

fn problem(api_version: &str) -> Option<&'static str> {
    let parts: Vec<&str> = api_version.split('/').collect();
    match parts.as_slice() {
        [""] => Some("is empty"),
        [v] if !looks_like_version(v) => Some(
            "is not a version: kcm reads a single word as a core-group version (did you forget the version, e.g. `apps/v1`?)",
        ),
        [_] => None,
        [g, v] if g.is_empty() || v.is_empty() => Some("has an empty group or version"),
        [_, v] if !looks_like_version(v) => Some("does not end in a version such as v1, v1beta1"),
        [_, _] => None,
        _ => Some("has more than one `/`: kcm fails with \"invalid API version\""),
    }
}

/// Kubernetes API versions look like v1, v2, v1beta1, v2alpha3.
fn looks_like_version(v: &str) -> bool {
    let Some(rest) = v.strip_prefix('v') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || rest.starts_with('0') {
        return false;
    }
    let tail = &rest[digits..];
    tail.is_empty()
        || ["alpha", "beta"].iter().any(|p| {
            tail.strip_prefix(p)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// The adapter and provisioner references of an SMP with their paths.
pub fn references<'a>(ctx: &Context<'a>) -> Vec<(Vec<PathSeg>, &'a Value)> {
    let mut out = Vec::new();
    let smp = crate::api::kcm::StateManagementProvider(ctx.json());
    if let Some(a) = smp.adapter_json().filter(|a| a.is_object()) {
        out.push((vec![key("spec"), key("adapter")], a));
    }
    let items = smp.provisioner_items().iter().enumerate();
    for (i, p) in items.filter(|(_, p)| p.is_object()) {
        out.push((vec![key("spec"), key("provisioner"), PathSeg::Index(i)], p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::lint::test_support::lint_code;

    #[test]
    fn versions() {
        for ok in [
            "v1",
            "apps/v1",
            "helm.toolkit.fluxcd.io/v2",
            "x.io/v1beta1",
            "x.io/v2alpha1",
        ] {
            assert_eq!(problem(ok), None, "{ok}");
        }
        for bad in [
            "",
            "apps",
            "apps/",
            "/v1",
            "a/b/v1",
            "apps/1",
            "x.io/v1beta",
        ] {
            assert!(problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn points_at_the_api_version_value() {
        let text = crate::core::lint::test_support::smp_with_rule("\"\"")
            .replace("apiVersion: apps/v1", "apiVersion: apps");
        let found = lint_code(&text, "KSM301");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM301 7:17"), "{found:?}");
    }
}
