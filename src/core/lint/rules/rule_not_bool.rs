//! KSM203: a readiness rule whose result can never be a bool.

use crate::core::cel::CelType;
use crate::core::lint::{Context, RuleInfo};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM203",
    name: "rule-not-bool",
    severity: Severity::Error,
    title: "A readiness rule does not evaluate to a bool",
    docs: "\
## What it finds
A readiness rule whose type, as the CEL checker deduces it, is not `bool`: an arithmetic
expression, a field read without a comparison where the type is known, a string.

## Why it matters
kcm accepts only a bool: any other result fails with `CEL expression did not return a boolean
value`, reason `FailedToEvaluateReadiness`.

## Example
```yaml
readinessRule: size(self.status.conditions)
```

## Fix
Compare the value: `size(self.status.conditions) > 0`.
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for site in &ctx.rules {
        let Ok(compiled) = &*site.compiled else {
            continue;
        };
        let ty = compiled.result_type();
        if matches!(ty, CelType::Bool | CelType::Dyn) {
            continue;
        }
        out.push(
            ctx.diag(
                &INFO,
                format!("readiness rule evaluates to {ty}, not bool"),
                site.node.span.clone(),
            )
            .help("kcm fails with \"CEL expression did not return a boolean value\"; compare the value, e.g. `... > 0`"),
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    #[test]
    fn non_bool_types_are_reported() {
        for rule in [
            "size(self.status)",
            "\"self.metadata.name + 'x'\"",
            "\"[1, 2]\"",
        ] {
            let found = lint_code(&smp_with_rule(rule), "KSM203");
            assert_eq!(found.len(), 1, "{rule}: {found:?}");
        }
    }

    #[test]
    fn bool_and_dyn_results_pass() {
        for rule in [
            "has(self.status)",
            "self.status.ready",
            "\"self.status.replicas > 0\"",
        ] {
            assert!(
                lint_code(&smp_with_rule(rule), "KSM203").is_empty(),
                "{rule}"
            );
        }
    }
}
