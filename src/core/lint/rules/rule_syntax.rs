//! KSM201: a readiness rule that does not parse.

use crate::core::cel;
use crate::core::lint::{Context, RuleInfo};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM201",
    name: "rule-syntax-error",
    severity: Severity::Error,
    title: "A readiness rule is not valid CEL",
    docs: "\
## What it finds
A readiness rule that CEL cannot parse: unbalanced parentheses, a stray operator, optional
syntax (`self.?status`), which kcm's environment does not enable, or a rule over the parser's
limits (100,000 code points, deep nesting).

## Why it matters
kcm compiles the rule on every reconcile and fails: the condition (AdapterReady or
ProvisionerReady) is False with reason `FailedToEvaluateReadiness`, and the provider never
becomes ready.

## Example
```yaml
readinessRule: self.status.readyReplicas == self.status.replicas &&
```

## Fix
Correct the expression at the position shown; `kubectl ksm eval RULE -f object.yaml` tries it
against a saved object.
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    super::compile_errors(ctx, &INFO, cel::CompileErrorKind::Syntax, out);
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    #[test]
    fn points_inside_the_block_scalar() {
        let text = smp_with_rule(
            "|-\n      self.status.readyReplicas ==\n        self.status.replicas &&",
        );
        let found = lint_code(&text, "KSM201");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM201 13:"), "{found:?}");
    }

    #[test]
    fn optional_syntax_is_refused_like_kcm() {
        let text = smp_with_rule("self.?status.hasValue()");
        assert_eq!(lint_code(&text, "KSM201").len(), 1);
    }
}
