//! Readiness of a StateManagementProvider, as kcm's controller computes it
//! (internal/controller/statemanagementprovider): the adapter and provisioner rules evaluated
//! against the referenced objects, the provisioner CRDs checked, the conditions and reasons
//! kcm would set, and `status.ready`.
//!
//! PURE: objects come through [`ObjectLookup`], so the same code serves saved files (`check`
//! offline) and a live snapshot.

//!
//! The rooms: the evaluation of one rule on one object, with its [`RuleOutcome`] and
//! explanation (this file), where referenced objects come from ([`lookup`]), and the SMP's
//! conditions as kcm sets them ([`smp`]).

mod lookup;
mod smp;
#[cfg(test)]
mod tests;

use serde::Serialize;
use serde_json::Value;

use crate::core::cel::{self, Clause, CompileError, Limits};

pub use crate::api::kcm::Reference;
pub use lookup::{ObjectLookup, ObjectSet, guess_resource};
pub use smp::{
    Condition, Evaluation, Rbac, Skipped, SmpCheck, Status, check_smp, disagreements,
    recorded_condition,
};

pub const COND_RBAC: &str = "RBACReady";
pub const COND_ADAPTER: &str = "AdapterReady";
pub const COND_PROVISIONER: &str = "ProvisionerReady";
pub const COND_PROVISIONER_CRDS: &str = "ProvisionerCRDsReady";

pub const REASON_FAILED_TO_GET: &str = "FailedToGetAdapter";
pub const REASON_FAILED_TO_EVALUATE: &str = "FailedToEvaluateReadiness";

/// The outcome of one readiness rule on one object, as kcm's `evaluateReadiness` reaches it.
#[derive(Debug, Clone)]
pub struct RuleOutcome {
    /// true/false, or None when compiling or evaluating failed.
    pub result: Option<bool>,
    pub error: Option<RuleError>,
    /// The rule broken into clauses with their values (empty when the rule is true or empty).
    pub explanation: Vec<Clause>,
}

#[derive(Debug, Clone)]
pub struct RuleError {
    pub phase: Phase,
    /// The error as the CEL library reports it (e.g. `no such key: readyReplicas`).
    pub message: String,
    /// The message kcm writes into the condition after its prefix
    /// (`failed to compile CEL expression: ...`).
    pub kcm_message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Compile,
    Evaluate,
}

/// When to break a rule into clauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explain {
    Never,
    /// For a false or failing result (the default of `eval` and `check`).
    WhenNotTrue,
    /// Also for a true result (`-v`).
    Always,
}

/// A rule compiled once, for evaluation against many objects.
pub struct Rule {
    text: String,
    compiled: Option<Result<cel::CompiledRule, Vec<CompileError>>>,
}

impl Rule {
    /// kcm treats the empty string (and only it) as "ready": a rule of blanks is compiled and fails.
    pub fn new(text: &str, limits: &Limits) -> Rule {
        Rule {
            text: text.to_string(),
            compiled: (!text.is_empty()).then(|| cel::compile(text, limits)),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn compile_errors(&self) -> Option<&[CompileError]> {
        match &self.compiled {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }

    /// Evaluates the rule against an object, with the clause breakdown `explain` asks for.
    pub fn evaluate(&self, object: &Value, explain: Explain) -> RuleOutcome {
        let compiled = match &self.compiled {
            None => {
                return RuleOutcome {
                    result: Some(true),
                    error: None,
                    explanation: Vec::new(),
                };
            }
            Some(Err(errors)) => {
                let message = errors
                    .iter()
                    .map(|e| e.message.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                return RuleOutcome {
                    result: None,
                    error: Some(RuleError {
                        phase: Phase::Compile,
                        kcm_message: format!(
                            "failed to compile CEL expression: {}",
                            cel_go_issues(&self.text, errors)
                        ),
                        message,
                    }),
                    explanation: Vec::new(),
                };
            }
            Some(Ok(c)) => c,
        };
        let obj = cel::Object::from_json(object);
        let (result, error) = match compiled.evaluate(&obj) {
            cel::Verdict::True => (Some(true), None),
            cel::Verdict::False => (Some(false), None),
            cel::Verdict::Error(e) => {
                let kcm_message = if e.at_plan {
                    format!("failed to create CEL program: {}", e.message)
                } else if e.message.ends_with("expected bool") {
                    "CEL expression did not return a boolean value".to_string()
                } else {
                    format!("failed to evaluate CEL expression: {}", e.message)
                };
                (
                    None,
                    Some(RuleError {
                        phase: Phase::Evaluate,
                        message: e.message,
                        kcm_message,
                    }),
                )
            }
        };
        let explanation = if explain == Explain::Always
            || (explain == Explain::WhenNotTrue && result != Some(true))
        {
            compiled.explain(&obj)
        } else {
            Vec::new()
        };
        RuleOutcome {
            result,
            error,
            explanation,
        }
    }
}

/// cel-go's `issues.Err()` text: `ERROR: <input>:L:C: message` with the source line and a caret.
fn cel_go_issues(rule: &str, errors: &[CompileError]) -> String {
    errors
        .iter()
        .map(|e| {
            let Some(span) = &e.span else {
                return format!("ERROR: <input>:1:1: {}", e.message);
            };
            let start = span.start.min(rule.len());
            let line_start = rule[..start].rfind('\n').map_or(0, |i| i + 1);
            let line_no = rule[..start].matches('\n').count() + 1;
            let col = rule[line_start..start].chars().count();
            let line_text = rule[line_start..].lines().next().unwrap_or("");
            format!(
                "ERROR: <input>:{line_no}:{}: {}\n | {line_text}\n | {}^",
                col + 1,
                e.message,
                ".".repeat(col)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
