//! CEL core: compiles and evaluates rules exactly as kcm's cel-go does, in kcm's two
//! environments:
//!
//! - readiness (StateManagementProvider rules): the standard library, one variable `self` of
//!   type `map(string, dyn)`, programs built with `OptOptimize`;
//! - health (the Sveltos adapter's service health rules): the standard library and cel-go's
//!   string extension, one variable `obj` of type `dyn`, programs built without options.
//!
//! Parsing (with macro expansion) gives the `cel` crate's tree: our parser ([`parse`]) gives it
//! for every rule the crate's parser accepts, and the crate's parser gives the (cel-go) error
//! messages of the rules ours rejects. The type checker, the value model
//! (Kubernetes unstructured semantics), the evaluator, the cost budget and the explanation
//! are this module's own, so that verdicts and error messages follow cel-go. Regular
//! expressions are Go's (see [`regex`]), numbers are parsed with Go's `strconv`, and times are
//! Go's `time` (see [`time`]).
//!
//! Every evaluation draws from one budget of cost units and memory (see [`cost`]); a rule that
//! runs out of it is reported as such, never as a verdict: kcm has no budget.

pub(crate) mod ast;
mod call;
mod checker;
pub(crate) mod compile;
mod cost;
mod decls;
mod eval;
mod explain;
mod ext;
mod ops;
mod parse;
mod plan;
mod project;
mod regex;
mod strconv;
mod time;
mod types;
mod value;

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

pub use cost::Resource;
pub use explain::{Clause, ClauseKind};
pub use time::{Duration, Timestamp};
pub use types::CelType;
pub use value::{MapKey, MapValue, Redacted, TypeValue, Value};

use cost::Budget;
use eval::{Evaluator, Fault};

/// Resource limits of compiling and evaluating a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest rule in Unicode code points (cel-go: 100,000).
    pub max_code_points: usize,
    /// Deepest nesting of the rule (cel-go: 250). Values above 1000 are treated as 1000.
    pub max_recursion_depth: u16,
    /// Evaluation budget in cost units: one per sub-expression evaluated, plus one per 64
    /// bytes or per element an operation scans, copies, compares or builds (see
    /// BENCHMARKS.md for the time it takes). The default stops any evaluation well under a
    /// second on the benchmark machine, far above what a rule over a status object needs.
    pub max_cost: u64,
    /// Memory ceiling of one evaluation: the bytes of the values it creates.
    pub max_memory: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_code_points: 100_000,
            max_recursion_depth: 250,
            max_cost: 50_000_000,
            max_memory: 64 << 20,
        }
    }
}

/// A compile (parse or type-check) error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub message: String,
    /// Byte offsets in the rule text.
    pub span: Option<Range<usize>>,
    pub kind: CompileErrorKind,
}

/// Which compile phase rejected the rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileErrorKind {
    /// Parsing, or a size or depth limit of the parser.
    Syntax,
    /// The type checker (undeclared references, unknown functions, overload mismatches).
    Check,
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CompileError {}

/// Where an evaluation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Building the program (cel-go's plan step): a folded constant or a constant pattern.
    Program,
    /// Evaluating.
    Eval,
    /// The rule evaluated to something that is not a bool.
    Result,
}

/// An evaluation error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    pub message: String,
    pub stage: Stage,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EvalError {}

/// The evaluation budget stopped a rule: not a verdict, since kcm has no budget and would keep
/// evaluating.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetExceeded {
    pub resource: Resource,
    /// The limit that was reached (cost units, or bytes).
    pub limit: u64,
}

impl BudgetExceeded {
    pub fn message(&self) -> String {
        let what = match self.resource {
            Resource::Cost => format!("{} cost units", self.limit),
            Resource::Memory => format!("{} MiB of values", self.limit >> 20),
        };
        format!("exceeds the evaluation budget ({what}); kcm would keep evaluating")
    }
}

impl fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

/// Why an evaluation has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    Error(EvalError),
    Budget(BudgetExceeded),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Error(e) => e.fmt(f),
            Failure::Budget(b) => b.fmt(f),
        }
    }
}

/// When to break a rule into clauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explain {
    Never,
    /// For a false or failing result.
    WhenNotTrue,
    /// Also for a true result.
    Always,
}

/// The verdict of a rule.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    True,
    False,
    Error(EvalError),
    /// Stopped by the evaluation budget: no verdict.
    BudgetExceeded(BudgetExceeded),
}

/// An input object converted once to CEL values with unstructured semantics.
#[derive(Clone, Debug)]
pub struct Object {
    value: Value,
    redacted: Redacted,
}

impl Object {
    /// Converts JSON: integers fitting int64 are `int`, other numbers `double`.
    pub fn from_json(v: &serde_json::Value) -> Object {
        Object::from_value(Value::from_json(v))
    }

    pub fn from_value(value: Value) -> Object {
        Object {
            value,
            redacted: Redacted::default(),
        }
    }

    /// Never shows what is at these paths (a map: its values; a string: itself) in an
    /// explanation, nor anything computed from it: a Secret's `data` and `stringData`.
    pub fn redacting(mut self, paths: &[&[&str]]) -> Object {
        for p in paths {
            self.redacted.add_path(&self.value, p);
        }
        self
    }

    pub fn value(&self) -> &Value {
        &self.value
    }
}

/// kcm's two CEL environments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Environment {
    /// StateManagementProvider readiness rules.
    Readiness,
    /// The Sveltos adapter's service health rules.
    Health,
}

/// Builds the declarations of both environments and the standard functions now (work done
/// ahead by a thread that would otherwise wait).
pub fn declare_ahead() {
    Environment::Readiness.declarations();
    Environment::Health.declarations();
    std::sync::LazyLock::force(&decls::STD_FUNCTIONS);
    std::sync::LazyLock::force(&decls::STRING_FUNCTIONS);
}

impl Environment {
    pub fn declarations(self) -> &'static Declarations {
        static READINESS: std::sync::LazyLock<Declarations> =
            std::sync::LazyLock::new(Declarations::readiness);
        static HEALTH: std::sync::LazyLock<Declarations> =
            std::sync::LazyLock::new(Declarations::health);
        match self {
            Environment::Readiness => &READINESS,
            Environment::Health => &HEALTH,
        }
    }

    /// kcm builds readiness programs with `OptOptimize`, health programs without options.
    pub fn options(self) -> Options {
        Options {
            optimize: self == Environment::Readiness,
            ..Options::default()
        }
    }

    /// The name of the variable the object is bound to.
    pub fn variable(self) -> &'static str {
        match self {
            Environment::Readiness => "self",
            Environment::Health => "obj",
        }
    }
}

/// Declarations of a compile environment.
#[derive(Clone, Debug)]
pub struct Declarations {
    pub variables: Vec<(String, CelType)>,
    /// cel-go's string extension (`ext.Strings()`).
    pub strings_ext: bool,
}

impl Declarations {
    /// kcm's readiness environment: `self` of type `map(string, dyn)`.
    pub fn readiness() -> Declarations {
        Declarations {
            variables: vec![(
                "self".to_string(),
                CelType::map(CelType::String, CelType::Dyn),
            )],
            strings_ext: false,
        }
    }

    /// kcm's health environment: `obj` of type `dyn`, and the string extension.
    pub fn health() -> Declarations {
        Declarations {
            variables: vec![("obj".to_string(), CelType::Dyn)],
            strings_ext: true,
        }
    }
}

/// A parsed and type-checked rule. Immutable; evaluate it as often as needed.
#[derive(Debug)]
pub struct CompiledRule {
    source: String,
    root: ast::Node,
    slot_count: usize,
    declared: usize,
    result_type: CelType,
    limits: Limits,
    /// The error cel-go's plan step (OptOptimize) raises when kcm builds the program.
    plan_error: Option<String>,
    /// What the rule reads of the object (the one declared variable), found when first
    /// asked (linting never asks).
    reads: std::sync::OnceLock<project::Reads>,
}

/// Compile options (kcm's readiness environment uses the defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Run the type checker (kcm always does).
    pub check: bool,
    /// Expand the standard macros (kcm always does).
    pub macros: bool,
    /// Apply cel-go's `OptOptimize` plan step (see [`plan`]).
    pub optimize: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            check: true,
            macros: true,
            optimize: true,
        }
    }
}

/// Compiles a readiness rule in kcm's environment.
pub fn compile(rule: &str, limits: &Limits) -> Result<CompiledRule, Vec<CompileError>> {
    compile_in(rule, limits, Environment::Readiness)
}

/// Compiles a rule in one of kcm's environments.
pub fn compile_in(
    rule: &str,
    limits: &Limits,
    env: Environment,
) -> Result<CompiledRule, Vec<CompileError>> {
    compile_with(rule, limits, env.declarations(), env.options())
}

/// Compiles in a given environment with the given options.
pub fn compile_with(
    rule: &str,
    limits: &Limits,
    decls: &Declarations,
    options: Options,
) -> Result<CompiledRule, Vec<CompileError>> {
    compile::compile_with(rule, limits, decls, options)
}

impl CompiledRule {
    /// The object a rule reads, from JSON: only the fields the rule can read are converted
    /// (see [`project`]); the verdict, the explanation and the budget are those of
    /// [`Object::from_json`].
    pub fn object_from_json(&self, v: &serde_json::Value) -> Object {
        Object::from_value(project::project(v, self.reads()))
    }

    /// What the rule reads of the object: one declared variable, the object, in slot 0.
    fn reads(&self) -> &project::Reads {
        self.reads.get_or_init(|| {
            if self.declared == 1 {
                project::reads(&self.root, 0)
            } else {
                project::Reads::All
            }
        })
    }

    /// [`CompiledRule::evaluate`] of the object given as JSON, read in place: a rule that
    /// reads the object only through selections looks each one up in the JSON and converts
    /// only the values it finds (each text, list or map once), so an object is neither
    /// converted nor projected first. The verdict and the budget are those of
    /// `evaluate(&object_from_json(v))`; there is no explanation, and nothing is withheld
    /// (a Secret goes through [`Object::redacting`]).
    pub fn evaluate_json(&self, v: &serde_json::Value) -> Verdict {
        if *self.reads() == project::Reads::All {
            return self.evaluate(&self.object_from_json(v));
        }
        if let Some(f) = self.plan_failure() {
            return self.verdict(Err(f));
        }
        let mut ev = Evaluator::in_place(self.slot_count, v, self.budget());
        self.verdict_of(ev.eval(&self.root), &Redacted::default())
    }

    /// The compiled tree (for analyses of the rule as written: spans are the rule text's).
    pub(crate) fn tree(&self) -> &ast::Node {
        &self.root
    }

    /// The rule text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The statically deduced result type (`dyn` when unknown until run time).
    pub fn result_type(&self) -> CelType {
        self.result_type.clone()
    }

    fn budget(&self) -> Budget {
        Budget::new(self.limits.max_cost, self.limits.max_memory)
    }

    fn failure(&self, f: Fault) -> Failure {
        match f.budget {
            Some(resource) => Failure::Budget(BudgetExceeded {
                resource,
                limit: match resource {
                    Resource::Cost => self.limits.max_cost,
                    Resource::Memory => self.limits.max_memory,
                },
            }),
            None => Failure::Error(EvalError {
                message: f.message,
                stage: Stage::Eval,
            }),
        }
    }

    fn plan_failure(&self) -> Option<Failure> {
        self.plan_error.as_ref().map(|e| {
            Failure::Error(EvalError {
                message: e.clone(),
                stage: Stage::Program,
            })
        })
    }

    /// Evaluates against values of the declared variables (in declaration order).
    #[inline]
    pub fn evaluate_values<'a>(&'a self, values: &[&'a Value]) -> Result<Cow<'a, Value>, Failure> {
        if values.len() != self.declared {
            return Err(Failure::Error(EvalError {
                message: format!(
                    "expected {} variable values, got {}",
                    self.declared,
                    values.len()
                ),
                stage: Stage::Eval,
            }));
        }
        if let Some(f) = self.plan_failure() {
            return Err(f);
        }
        let mut ev = Evaluator::new(self.slot_count, values, self.budget());
        ev.eval(&self.root).map_err(|f| self.failure(f))
    }

    /// The value of the rule for an object, whatever its type (a health rule's `message`).
    pub fn value(&self, obj: &Object) -> Result<Value, Failure> {
        self.evaluate_values(&[&obj.value]).map(Cow::into_owned)
    }

    /// Evaluates the rule against an object: a bool result is the verdict, anything else
    /// an error.
    pub fn evaluate(&self, obj: &Object) -> Verdict {
        if self.declared != 1 || self.plan_error.is_some() {
            return withhold(
                self.verdict(self.evaluate_values(&[&obj.value])),
                &obj.redacted,
            );
        }
        let mut ev = Evaluator::new(self.slot_count, &[&obj.value], self.budget());
        self.verdict_of(ev.eval(&self.root), &obj.redacted)
    }

    /// The verdict of an evaluation's result, read where the evaluation left it.
    #[inline(always)]
    fn verdict_of(&self, r: Result<Cow<'_, Value>, Fault>, redacted: &Redacted) -> Verdict {
        match &r {
            Ok(v) if matches!(v.as_ref(), Value::Bool(true)) => Verdict::True,
            Ok(v) if matches!(v.as_ref(), Value::Bool(false)) => Verdict::False,
            _ => withhold(self.verdict(r.map_err(|f| self.failure(f))), redacted),
        }
    }

    #[inline]
    fn verdict(&self, r: Result<Cow<'_, Value>, Failure>) -> Verdict {
        match r {
            Ok(v) => match v.as_ref() {
                Value::Bool(true) => Verdict::True,
                Value::Bool(false) => Verdict::False,
                other => {
                    let mut shown = String::new();
                    other.render_limited(&mut shown, 100, None);
                    Verdict::Error(EvalError {
                        message: format!(
                            "rule evaluated to {} ({shown}), expected bool",
                            other.type_of().name()
                        ),
                        stage: Stage::Result,
                    })
                }
            },
            Err(Failure::Error(e)) => Verdict::Error(e),
            Err(Failure::Budget(b)) => Verdict::BudgetExceeded(b),
        }
    }

    /// Evaluates the rule, and explains it as `explain` asks: the clause tree with the value
    /// of every clause, flattened in pre-order (`depth` gives the nesting). The explanation
    /// shares the evaluation's budget, and every clause is computed once (the evaluation
    /// keeps the values of the clauses as it goes); values are shortened, and a Secret's data
    /// is never shown (see [`Object::redacting`]).
    pub fn evaluate_explained(&self, obj: &Object, explain: Explain) -> (Verdict, Vec<Clause>) {
        let values = [&obj.value];
        if let Some(e) = &self.plan_error {
            let verdict = Verdict::Error(EvalError {
                message: e.clone(),
                stage: Stage::Program,
            });
            let clauses = if explain != Explain::Never {
                vec![Clause {
                    depth: 0,
                    text: explain::shorten_text(&self.source),
                    span: self.root.span.clone(),
                    value: Err(e.clone()),
                    operands: Vec::new(),
                    kind: ClauseKind::Other,
                }]
            } else {
                Vec::new()
            };
            return (verdict, clauses);
        }
        let mut ev = Evaluator::new(self.slot_count, &values, self.budget());
        if explain != Explain::Never {
            ev.memo = Some(Box::new(explain::memo(&self.root)));
        }
        let r = ev.eval(&self.root).map_err(|f| self.failure(f));
        let verdict = withhold(self.verdict(r), &obj.redacted);
        let wanted = match explain {
            Explain::Never => false,
            Explain::WhenNotTrue => verdict != Verdict::True,
            Explain::Always => true,
        };
        // With the budget spent, there is nothing left to explain with.
        if !wanted || matches!(verdict, Verdict::BudgetExceeded(_)) {
            return (verdict, Vec::new());
        }
        let clauses = explain::explain(&self.root, &self.source, &mut ev, &obj.redacted, |f| {
            self.failure(f).to_string()
        });
        (verdict, clauses)
    }

    /// The clause tree of the rule for this object (see [`CompiledRule::evaluate_explained`]).
    pub fn explain(&self, obj: &Object) -> Vec<Clause> {
        self.evaluate_explained(obj, Explain::Always).1
    }
}

/// An evaluation error whose message would show a Secret's data (`no such key: <a value>`,
/// a pattern built from it) is reported without its message.
#[inline]
fn withhold(verdict: Verdict, redacted: &Redacted) -> Verdict {
    match verdict {
        Verdict::Error(e) if !redacted.is_empty() && redacted.leaks(&e.message) => {
            Verdict::Error(EvalError {
                message: explain::WITHHELD.into(),
                stage: e.stage,
            })
        }
        other => other,
    }
}

#[cfg(test)]
mod deviations;
#[cfg(test)]
mod tests;
