//! KSM202: a readiness rule that parses but fails kcm's type check.

use crate::core::cel;
use crate::core::lint::{Context, RuleInfo};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM202",
    name: "rule-type-error",
    severity: Severity::Error,
    title: "A readiness rule fails kcm's CEL type check",
    docs: "\
## What it finds
What cel-go's `env.Compile` rejects in kcm's environment (the CEL standard library and one
variable, `self`, a `map(string, dyn)`): references to undeclared names (`status.replicas`
without `self.`), functions and macros that are not in the standard library (Kubernetes
extensions such as `quantity()`, `lowerAscii()`, `math.greatest()`, optional values such as
`orValue()`), and operators applied to literals of mismatched types (`1 == 1.0`, `1 < 1.5`,
`1 == 1u`, `'a' + 1`).

## Why it matters
kcm fails to compile the rule: the condition is False with reason
`FailedToEvaluateReadiness` and the provider never becomes ready. Values read from `self` are
`dyn` and are checked at run time instead.

## Example
```yaml
readinessRule: status.readyReplicas == status.replicas
```

## Fix
Reference the object through `self` (`self.status.readyReplicas`), use only standard CEL
functions, and compare numbers of the same type (`1 == 1`, `double(x) < 1.5`).
",
};

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    super::compile_errors(ctx, &INFO, cel::CompileErrorKind::Check, out);
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::{lint_code, smp_with_rule};

    #[test]
    fn undeclared_reference_points_at_the_name() {
        let found = lint_code(&smp_with_rule("status.replicas > 0"), "KSM202");
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].starts_with("KSM202 11:20"), "{found:?}");
        assert!(
            found[0].contains("undeclared reference to 'status'"),
            "{found:?}"
        );
    }

    #[test]
    fn literal_type_mismatch_and_unknown_functions() {
        for rule in [
            "1 == 1.0",
            "'a' + 1 == 'a1'",
            "self.metadata.name.lowerAscii() == 'x'",
            "quantity('1') == quantity('1')",
        ] {
            let found = lint_code(&smp_with_rule(&format!("\"{rule}\"")), "KSM202");
            // cel-go reports each offending call.
            assert!(!found.is_empty(), "{rule}: {found:?}");
        }
    }

    #[test]
    fn dyn_operands_pass_the_checker() {
        let found = lint_code(
            &smp_with_rule("\"has(self.status.replicas) && self.status.replicas == 2.0\""),
            "KSM202",
        );
        assert!(found.is_empty(), "{found:?}");
    }
}
