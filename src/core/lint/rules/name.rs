//! KSM401: a `metadata.name` the API server refuses (and derived names that do not fit).

use crate::api::names::is_dns1123_subdomain;
use crate::api::naming;
use crate::core::lint::{Context, RuleInfo, Target, key};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM401",
    name: "invalid-name",
    severity: Severity::Error,
    title: "metadata.name is not a name the API server accepts",
    docs: "\
## What it finds
A k0rdent object whose `metadata.name` is missing (and no `generateName`), or is not a
lowercase RFC 1123 subdomain: at most 253 characters of `a-z`, `0-9`, `-` and `.`, starting
and ending with a letter or digit. For a MultiClusterService's ClusterDeployment-scoped
ServiceSets, kcm derives the name `<clusterdeployment>-<hash>` (9 more characters), so a
ClusterDeployment name must leave room for it.

## Why it matters
The API server refuses the object (`metadata.name: Invalid value: \"My_Template\": a lowercase
RFC 1123 subdomain must consist of ...`): `kubectl apply` fails, and a GitOps tool keeps
retrying it.

## Example
```yaml
kind: ServiceTemplate
metadata:
  name: Ingress_Nginx-4.13
```

## Fix
Use lower case, digits, `-` and `.`: `ingress-nginx-4-13-0`.
",
};

/// Why a name is not a DNS-1123 subdomain (None if it is one).
pub fn problem(name: &str) -> Option<String> {
    if is_dns1123_subdomain(name) {
        return None;
    }
    Some(if name.len() > 253 {
        format!(
            "must be no more than 253 characters (it has {})",
            name.len()
        )
    } else if name.bytes().any(|c| c.is_ascii_uppercase()) {
        "a lowercase RFC 1123 subdomain must be lower case".to_string()
    } else {
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character".to_string()
    })
}

/// A name with the API server's rules applied: lower case, other characters as `-`.
fn suggestion(name: &str) -> String {
    let s: String = name
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    s.chars().take(253).collect()
}

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    let meta = crate::api::meta::Object(ctx.json()).metadata();
    let name = meta.and_then(|m| m.get("name")).and_then(|n| n.as_str());
    let path = [key("metadata"), key("name")];
    let Some(name) = name else {
        if meta.and_then(|m| m.get("generateName")).is_none() {
            out.push(
                ctx.diag(
                    &INFO,
                    format!("the {} has no metadata.name", ctx.target.kind()),
                    ctx.span_at(&path),
                )
                .help("set metadata.name: the API server requires it"),
            );
        }
        return;
    };
    if let Some(p) = problem(name) {
        out.push(
            ctx.diag(
                &INFO,
                format!("metadata.name: Invalid value: {name:?}: {p}"),
                ctx.span_at(&path),
            )
            .help(format!("e.g. {:?}", suggestion(name))),
        );
        return;
    }
    // The names kcm derives from this one.
    let derived = match ctx.target {
        // The ServiceSet of a MultiClusterService on this cluster: `<name>-<8 hex digits>`.
        Target::ClusterDeployment => {
            Some(naming::mcs_service_set_key(Some(("", name)), "mcs", "").1)
        }
        _ => None,
    };
    if let Some(d) = derived
        && let Some(p) = problem(&d)
    {
        out.push(ctx.diag(
            &INFO,
            format!("the ServiceSet name kcm derives from {name:?} ({d:?}) is invalid: {p}"),
            ctx.span_at(&path),
        ));
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_code;

    fn st(name: &str) -> String {
        format!(
            "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceTemplate\nmetadata:\n  name: {name}\n  namespace: kcm-system\nspec:\n  helm:\n    chartSpec:\n      chart: x\n      version: 1.0.0\n      sourceRef: {{kind: HelmRepository, name: r}}\n"
        )
    }

    #[test]
    fn names_as_the_api_server_validates_them() {
        assert_eq!(
            lint_code(&st("ingress-nginx-4-13-0"), "KSM401"),
            Vec::<String>::new()
        );
        assert_eq!(lint_code(&st("a.b.c"), "KSM401"), Vec::<String>::new());
        let bad = lint_code(&st("Ingress_Nginx"), "KSM401");
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(bad[0].starts_with("KSM401 4:9 metadata.name: Invalid value: \"Ingress_Nginx\": a lowercase RFC 1123 subdomain must be lower case"), "{bad:?}");
        assert_eq!(lint_code(&st("under_score"), "KSM401").len(), 1);
        assert_eq!(lint_code(&st("-dash"), "KSM401").len(), 1);
        assert_eq!(lint_code(&st(&"a".repeat(254)), "KSM401").len(), 1);
        let missing = "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ServiceTemplate\nmetadata:\n  namespace: x\nspec: {}\n";
        assert!(lint_code(missing, "KSM401")[0].contains("has no metadata.name"));
    }

    #[test]
    fn a_clusterdeployment_name_must_leave_room_for_derived_servicesets() {
        let cd = |name: &str| {
            format!(
                "apiVersion: k0rdent.mirantis.com/v1beta1\nkind: ClusterDeployment\nmetadata:\n  name: {name}\n  namespace: kcm-system\nspec:\n  template: t\n  config: {{}}\n"
            )
        };
        assert_eq!(
            lint_code(&cd(&"a".repeat(244)), "KSM401"),
            Vec::<String>::new()
        );
        let long = lint_code(&cd(&"a".repeat(245)), "KSM401");
        assert_eq!(long.len(), 1, "{long:?}");
        assert!(long[0].contains("ServiceSet name kcm derives"), "{long:?}");
    }
}
