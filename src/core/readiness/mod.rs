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

use crate::core::cel::{self, Clause, CompileError, Environment, Limits};

pub use crate::api::kcm::Reference;
pub use lookup::{ObjectLookup, ObjectSet, guess_resource, no_kind_match};
pub use smp::{
    Condition, Evaluation, Rbac, Skipped, SmpCheck, Status, check_smp, disagreements,
    recorded_condition,
};

pub const COND_RBAC: &str = "RBACReady";
pub const COND_ADAPTER: &str = "AdapterReady";
pub const COND_PROVISIONER: &str = "ProvisionerReady";
pub const COND_PROVISIONER_CRDS: &str = "ProvisionerCRDsReady";

pub const REASON_FAILED_TO_GET: &str = "FailedToGetAdapter";
/// RBACReady False: kcm's ensureRBAC cannot map the adapter's or a provisioner's kind.
pub const REASON_GVK_ADAPTER: &str = "FailedToGetGVKForAdapter";
pub const REASON_GVK_PROVISIONER: &str = "FailedToGetGVKForProvisioner";
pub const REASON_FAILED_TO_EVALUATE: &str = "FailedToEvaluateReadiness";
/// Not kcm's: our evaluation budget stopped the rule, so the condition kcm would set is
/// unknown (kcm has no budget and would keep evaluating).
pub const REASON_BUDGET_EXCEEDED: &str = "NotEvaluatedBudgetExceeded";

/// The outcome of one rule on one object, as kcm's `evaluateReadiness` (or, for health rules,
/// the Sveltos adapter's verifier) reaches it.
#[derive(Debug, Clone)]
pub struct RuleOutcome {
    /// true/false, or None when compiling or evaluating failed, or the budget stopped it.
    pub result: Option<bool>,
    pub error: Option<RuleError>,
    /// Our evaluation budget stopped the rule: no verdict (kcm has no budget and would keep
    /// evaluating). Never set together with `result` or `error`.
    pub budget_exceeded: Option<cel::BudgetExceeded>,
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
    env: Environment,
    compiled: Option<Result<cel::CompiledRule, Vec<CompileError>>>,
}

impl Rule {
    /// A readiness rule. kcm treats the empty string (and only it) as "ready": a rule of
    /// blanks is compiled and fails.
    pub fn new(text: &str, limits: &Limits) -> Rule {
        Rule::in_env(text, limits, Environment::Readiness)
    }

    /// A rule of one of kcm's CEL environments (a health rule's `healthy` expression has no
    /// empty-means-true shortcut: it is compiled, and the empty text does not compile).
    pub fn in_env(text: &str, limits: &Limits, env: Environment) -> Rule {
        let compile = !text.is_empty() || env == Environment::Health;
        Rule {
            text: text.to_string(),
            env,
            compiled: compile.then(|| cel::compile_in(text, limits, env)),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn env(&self) -> Environment {
        self.env
    }

    pub fn compile_errors(&self) -> Option<&[CompileError]> {
        match &self.compiled {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }

    /// The value of the rule as a health rule's `message`: the string it evaluates to, and
    /// the empty string when it fails or is not a string (as the verifier does).
    pub fn message_for(&self, object: &Value) -> String {
        match &self.compiled {
            Some(Ok(c)) => match c.value(&cel_object(c, object)) {
                Ok(cel::Value::String(s)) => s.to_string(),
                _ => String::new(),
            },
            _ => String::new(),
        }
    }

    /// Evaluates the rule against an object, with the clause breakdown `explain` asks for.
    pub fn evaluate(&self, object: &Value, explain: Explain) -> RuleOutcome {
        let compiled = match &self.compiled {
            None => {
                return RuleOutcome {
                    result: Some(true),
                    error: None,
                    budget_exceeded: None,
                    explanation: Vec::new(),
                };
            }
            Some(Err(errors)) => {
                let mut message = errors
                    .iter()
                    .take(MAX_ERRORS_TO_REPORT)
                    .map(|e| e.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ");
                if errors.len() > MAX_ERRORS_TO_REPORT {
                    message.push_str(&format!(
                        "; {} more errors were truncated",
                        errors.len() - MAX_ERRORS_TO_REPORT
                    ));
                }
                let issues = cel_go_issues(&self.text, errors);
                return RuleOutcome {
                    result: None,
                    error: Some(RuleError {
                        phase: Phase::Compile,
                        kcm_message: match self.env {
                            Environment::Readiness => {
                                format!("failed to compile CEL expression: {issues}")
                            }
                            Environment::Health => format!("healthy: compile: {issues}"),
                        },
                        message,
                    }),
                    budget_exceeded: None,
                    explanation: Vec::new(),
                };
            }
            Some(Ok(c)) => c,
        };
        let (verdict, explanation) = match explain {
            // kcm's path: the verdict alone, the object read in place
            Explain::Never if !crate::core::objects::is_secret(object) => {
                (compiled.evaluate_json(object), Vec::new())
            }
            _ => compiled.evaluate_explained(
                &cel_object(compiled, object),
                match explain {
                    Explain::Never => cel::Explain::Never,
                    Explain::WhenNotTrue => cel::Explain::WhenNotTrue,
                    Explain::Always => cel::Explain::Always,
                },
            ),
        };
        let (result, error, budget_exceeded) = match verdict {
            cel::Verdict::True => (Some(true), None, None),
            cel::Verdict::False => (Some(false), None, None),
            cel::Verdict::BudgetExceeded(b) => (None, None, Some(b)),
            cel::Verdict::Error(e) => {
                let kcm_message = match (self.env, e.stage) {
                    (Environment::Readiness, cel::Stage::Program) => {
                        format!("failed to create CEL program: {}", e.message)
                    }
                    (Environment::Readiness, cel::Stage::Result) => {
                        "CEL expression did not return a boolean value".to_string()
                    }
                    (Environment::Readiness, cel::Stage::Eval) => {
                        format!("failed to evaluate CEL expression: {}", e.message)
                    }
                    (Environment::Health, cel::Stage::Program) => {
                        format!("healthy: program: {}", e.message)
                    }
                    (Environment::Health, cel::Stage::Result) => format!(
                        "healthy expression returned {}, want bool",
                        go_type_of_result(compiled, &cel_object(compiled, object))
                    ),
                    (Environment::Health, cel::Stage::Eval) => {
                        format!("evaluate healthy: {}", e.message)
                    }
                };
                (
                    None,
                    Some(RuleError {
                        phase: Phase::Evaluate,
                        message: e.message,
                        kcm_message,
                    }),
                    None,
                )
            }
        };
        RuleOutcome {
            result,
            error,
            budget_exceeded,
            explanation,
        }
    }
}

/// The object as CEL sees it; a Secret's data never shows in explanations.
fn cel_object(compiled: &cel::CompiledRule, object: &Value) -> cel::Object {
    let obj = compiled.object_from_json(object);
    if crate::core::objects::is_secret(object) {
        obj.redacting(crate::core::objects::SECRET_DATA_PATHS)
    } else {
        obj
    }
}

/// Go's `%T` of what a health rule's `healthy` returned, as the verifier's error names it.
fn go_type_of_result(compiled: &cel::CompiledRule, obj: &cel::Object) -> &'static str {
    match compiled.value(obj) {
        Ok(cel::Value::Int(_)) => "int64",
        Ok(cel::Value::Uint(_)) => "uint64",
        Ok(cel::Value::Double(_)) => "float64",
        Ok(cel::Value::String(_)) => "string",
        Ok(cel::Value::Bytes(_)) => "[]uint8",
        Ok(cel::Value::Null) => "structpb.NullValue",
        Ok(cel::Value::List(_)) => "[]ref.Val",
        Ok(cel::Value::Map(_)) => "map[ref.Val]ref.Val",
        Ok(cel::Value::Timestamp(_)) => "time.Time",
        Ok(cel::Value::Duration(_)) => "time.Duration",
        Ok(cel::Value::Type(_)) => "*types.Type",
        _ => "bool",
    }
}

/// cel-go reports this many errors, then how many more there were.
const MAX_ERRORS_TO_REPORT: usize = 100;
/// cel-go shows the source line of an error only up to this many bytes.
const MAX_SNIPPET_LENGTH: usize = 16384;

/// cel-go's `issues.Err()` text: `ERROR: <input>:L:C: message` with the source line and a caret
/// (tabs shown as spaces, a full-width dot for each wide character before the column), at
/// most [`MAX_ERRORS_TO_REPORT`] of them, the line left out when it is longer than
/// [`MAX_SNIPPET_LENGTH`]: so a rule with an error per list item of a 100,000-character line
/// gives a short message, not gigabytes.
fn cel_go_issues(rule: &str, errors: &[CompileError]) -> String {
    // In source order, as cel-go sorts them (stable: errors at one position keep their order).
    let mut sorted: Vec<&CompileError> = errors.iter().collect();
    sorted.sort_by_key(|e| e.span.as_ref().map_or(0, |s| s.start));
    let mut out: Vec<String> = sorted
        .into_iter()
        .take(MAX_ERRORS_TO_REPORT)
        .map(|e| {
            let Some(span) = &e.span else {
                return format!("ERROR: <input>:1:1: {}", e.message);
            };
            let start = span.start.min(rule.len());
            let line_start = rule[..start].rfind('\n').map_or(0, |i| i + 1);
            let line_no = rule[..start].matches('\n').count() + 1;
            let col = rule[line_start..start].chars().count();
            let mut text = format!("ERROR: <input>:{line_no}:{}: {}", col + 1, e.message);
            let line_text = rule[line_start..].lines().next().unwrap_or("");
            if line_text.len() <= MAX_SNIPPET_LENGTH {
                let wide = |c: char, narrow: char, full: char| {
                    if c.len_utf8() > 1 { full } else { narrow }
                };
                let mut chars = line_text.chars();
                let dots: String = chars
                    .by_ref()
                    .take(col)
                    .map(|c| wide(c, '.', '\u{ff0e}'))
                    .collect();
                let caret = chars.next().map_or('^', |c| wide(c, '^', '\u{ff3e}'));
                text.push_str(&format!(
                    "\n | {}\n | {dots}{caret}",
                    line_text.replace('\t', " ")
                ));
            }
            text
        })
        .collect();
    if errors.len() > MAX_ERRORS_TO_REPORT {
        out.push(format!(
            "{} more errors were truncated",
            errors.len() - MAX_ERRORS_TO_REPORT
        ));
    }
    out.join("\n")
}
