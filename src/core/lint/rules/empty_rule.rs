//! KSM205: an empty readiness rule (always ready).

use crate::core::lint::{Context, RuleInfo};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM205",
    name: "empty-readiness-rule",
    severity: Severity::Warning,
    title: "A readiness rule is empty: kcm reports the object ready as soon as it exists",
    docs: "\
## What it finds
An adapter or provisioner whose `readinessRule` is the empty string.

## Why it matters
kcm treats an empty rule as ready without looking at the object: a crash-looping adapter is
reported ready, and services are handed to it. (A rule of only spaces is not empty: kcm fails
to compile it.)

## Example
```yaml
adapter:
  apiVersion: apps/v1
  kind: Deployment
  name: flux-adapter
  namespace: kcm-system
  readinessRule: \"\"
```

## Fix
Write a rule that checks the object's status, e.g. for a Deployment:
`has(self.status.readyReplicas) && self.status.readyReplicas == self.spec.replicas`.
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for site in &ctx.rules {
        if site.text.is_empty() {
            out.push(
                ctx.diag(&INFO, format!("the readiness rule of {} {:?} is empty: kcm reports it ready as soon as it exists", site.target_kind, name_of(ctx, site)), site.node.span.clone())
                    .help("check the object's status, e.g. `has(self.status.readyReplicas) && self.status.readyReplicas == self.spec.replicas`"),
            );
        }
    }
}

fn name_of<'a>(ctx: &'a Context, site: &crate::core::lint::RuleSite) -> &'a str {
    let parent = &site.path[..site.path.len() - 1];
    let mut v = ctx.json();
    for seg in parent {
        v = match seg {
            crate::core::schema::PathSeg::Key(k) => &v[k.as_str()],
            crate::core::schema::PathSeg::Index(i) => &v[*i],
        };
    }
    v.get("name").and_then(|n| n.as_str()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    #[test]
    fn empty_rule_warns_and_blank_rule_is_a_syntax_error() {
        let found = lint_code(&smp_with_rule("\"\""), "KSM205");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("Deployment \"flux-adapter\""));
        assert!(lint_code(&smp_with_rule("\"  \""), "KSM205").is_empty());
        assert_eq!(lint_code(&smp_with_rule("\"  \""), "KSM201").len(), 1);
    }
}
