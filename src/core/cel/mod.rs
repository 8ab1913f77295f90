//! CEL core: compiles and evaluates StateManagementProvider readiness rules exactly as kcm
//! (cel-go v0.31 with the standard library and one variable `self` of type
//! `map(string, dyn)`) does.
//!
//! Parsing (with macro expansion) is done by the `cel` crate; the type checker, the value model
//! (Kubernetes unstructured semantics), the evaluator, the cost budget and the explanation
//! are this module's own, so that verdicts and error messages follow cel-go.

mod ast;
mod checker;
mod cost;
mod decls;
mod eval;
mod explain;
mod time;
mod types;
mod value;

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

pub use explain::{Clause, ClauseKind};
pub use time::{Duration, Timestamp};
pub use types::CelType;
pub use value::{MapKey, MapValue, TypeValue, Value};

/// Stack size of the thread that parses and checks a rule: deep trees are refused cleanly
/// by the limits, but the parser itself recurses before it can refuse.
const COMPILE_STACK: usize = 256 << 20;

/// Hard ceiling of the tree depth evaluated on the caller's stack.
const MAX_DEPTH_CEILING: u16 = 1000;

/// Resource limits of compiling and evaluating a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest rule in Unicode code points (cel-go: 100,000).
    pub max_code_points: usize,
    /// Deepest nesting of the rule (cel-go: 250). Values above 1000 are treated as 1000.
    pub max_recursion_depth: u16,
    /// Evaluation budget in cost units (one unit per sub-expression evaluated, plus the
    /// elements a concatenation copies). The default stops an evaluation after about 0.7 s on
    /// the benchmark machine (14.5 ns a unit, BENCHMARKS.md): bounded, yet far above anything a
    /// readiness rule over a status object needs, since kcm itself sets no budget.
    pub max_cost: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_code_points: 100_000,
            max_recursion_depth: 250,
            max_cost: 50_000_000,
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

/// An evaluation error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    pub message: String,
    /// The cost budget stopped the evaluation.
    pub budget_exceeded: bool,
    /// The error comes from building the program (cel-go's plan step), before evaluation.
    pub at_plan: bool,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for EvalError {}

impl From<eval::Fault> for EvalError {
    fn from(f: eval::Fault) -> Self {
        EvalError {
            message: f.message,
            budget_exceeded: f.budget_exceeded,
            at_plan: false,
        }
    }
}

/// The verdict of a readiness rule.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    True,
    False,
    Error(EvalError),
}

/// An input object converted once to CEL values with unstructured semantics.
#[derive(Clone, Debug)]
pub struct Object {
    value: Value,
    fanout: u64,
}

impl Object {
    /// Converts JSON: integers fitting int64 are `int`, other numbers `double`.
    pub fn from_json(v: &serde_json::Value) -> Object {
        Object::from_value(Value::from_json(v))
    }

    pub fn from_value(value: Value) -> Object {
        let fanout = cost::max_fanout(&value);
        Object { value, fanout }
    }

    pub fn value(&self) -> &Value {
        &self.value
    }
}

/// Variable declarations of a compile environment (the readiness one has only `self`).
#[derive(Clone, Debug)]
pub struct Declarations {
    pub variables: Vec<(String, CelType)>,
}

impl Declarations {
    /// kcm's environment: `self` of type `map(string, dyn)`.
    pub fn readiness() -> Declarations {
        Declarations {
            variables: vec![(
                "self".to_string(),
                CelType::map(CelType::String, CelType::Dyn),
            )],
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
    /// The cost when it does not depend on the input (no comprehension).
    static_cost: Option<u64>,
    max_cost: u64,
    /// The error cel-go's plan step (OptOptimize) raises when kcm builds the program.
    plan_error: Option<String>,
}

/// Compile options beyond kcm's defaults (used by the conformance tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Run the type checker (kcm always does).
    pub check: bool,
    /// Expand the standard macros (kcm always does).
    pub macros: bool,
    /// Apply cel-go's `OptOptimize` plan step, as kcm's `env.Program(ast,
    /// cel.EvalOptions(cel.OptOptimize))` does: constant type conversions and constant
    /// `matches` patterns are evaluated when the program is built (an error there fails every
    /// evaluation, even where `&&`/`||` would absorb it at run time), and `x in []` is
    /// folded to `false` without evaluating `x`.
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
    compile_with(rule, limits, &Declarations::readiness(), Options::default())
}

/// Compiles in a given environment with the given options.
pub fn compile_with(
    rule: &str,
    limits: &Limits,
    decls: &Declarations,
    options: Options,
) -> Result<CompiledRule, Vec<CompileError>> {
    let size = rule.chars().count();
    if size > limits.max_code_points {
        return Err(vec![CompileError {
            kind: CompileErrorKind::Syntax,
            message: format!(
                "expression code point size exceeds limit: size: {size}, limit {}",
                limits.max_code_points
            ),
            span: None,
        }]);
    }
    let source = rule.to_string();
    let limits = limits.clone();
    let decls = decls.clone();
    let job = move || compile_inner(source, &limits, &decls, options);
    let internal_error = || {
        Err(vec![CompileError {
            kind: CompileErrorKind::Syntax,
            message: "internal error while compiling the expression".into(),
            span: None,
        }])
    };
    // Parse and check on a thread with a large stack; the parser's tree is dropped there too.
    // Short rules go to a long-lived compiler thread (starting a thread per rule costs more
    // than compiling it); long ones, and callers that find it busy, get a thread of their own.
    let job: Box<dyn FnOnce() -> Result<CompiledRule, Vec<CompileError>> + Send> =
        if size <= WORKER_MAX_CODE_POINTS {
            match worker::run(job) {
                Ok(Ok(result)) => return result,
                Ok(Err(_panicked)) => return internal_error(),
                Err(job) => job,
            }
        } else {
            Box::new(job)
        };
    match std::thread::Builder::new()
        .name("cel-compile".into())
        .stack_size(COMPILE_STACK)
        .spawn(job)
    {
        Ok(handle) => handle.join().unwrap_or_else(|_| internal_error()),
        Err(_) => Err(vec![CompileError {
            kind: CompileErrorKind::Syntax,
            message: "cannot start the compiler thread".into(),
            span: None,
        }]),
    }
}

/// Rules up to this many code points are compiled on the long-lived compiler thread (readiness
/// rules are a few hundred); longer ones, whose parse may go deep into the stack, get a
/// thread of their own, so the long-lived thread never keeps a large stack resident.
const WORKER_MAX_CODE_POINTS: usize = 1024;

/// The long-lived compiler thread: one at a time, jobs are handed over and waited for.
mod worker {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
    use std::sync::{Mutex, TryLockError};

    use super::{COMPILE_STACK, CompileError, CompiledRule};

    type Output = Result<CompiledRule, Vec<CompileError>>;
    /// A job returns its result, or `Err` if it panicked.
    type Job = Box<dyn FnOnce() -> Output + Send>;
    type Reply = std::thread::Result<Output>;

    struct Worker {
        jobs: SyncSender<Job>,
        replies: Receiver<Reply>,
    }

    /// Held for the whole of a compile: a concurrent caller does not queue behind it.
    static WORKER: Mutex<Option<Worker>> = Mutex::new(None);

    fn start() -> Option<Worker> {
        let (jobs, job_rx) = sync_channel::<Job>(0);
        let (reply_tx, replies) = sync_channel::<Reply>(1);
        std::thread::Builder::new()
            .name("cel-compile".into())
            .stack_size(COMPILE_STACK)
            .spawn(move || {
                for job in job_rx {
                    let reply = catch_unwind(AssertUnwindSafe(job));
                    if reply_tx.send(reply).is_err() {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Worker { jobs, replies })
    }

    /// Runs `job` on the compiler thread. Gives the job back when the thread is busy (another
    /// caller compiles) or cannot be started.
    pub(super) fn run(
        job: impl FnOnce() -> Output + Send + 'static,
    ) -> Result<Reply, Box<dyn FnOnce() -> Output + Send>> {
        let job: Job = Box::new(job);
        let mut guard = match WORKER.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return Err(job),
        };
        if guard.is_none() {
            *guard = start();
        }
        let Some(worker) = guard.as_ref() else {
            return Err(job);
        };
        if let Err(returned) = worker.jobs.send(job) {
            // The thread is gone: start afresh next time, and compile elsewhere now.
            *guard = None;
            return Err(returned.0);
        }
        match worker.replies.recv() {
            Ok(reply) => Ok(reply),
            Err(_) => {
                *guard = None;
                Ok(Err(Box::new("the compiler thread stopped")))
            }
        }
    }
}

fn line_col_to_offset(source: &str, line: isize, col: isize) -> Option<usize> {
    if line < 1 || col < 0 {
        return None;
    }
    let mut offset = 0usize;
    for (i, l) in source.split_inclusive('\n').enumerate() {
        if i as isize + 1 == line {
            // the column counts characters
            let byte = l
                .char_indices()
                .nth(col as usize)
                .map(|(b, _)| b)
                .unwrap_or(l.len());
            return Some(offset + byte);
        }
        offset += l.len();
    }
    Some(source.len())
}

fn compile_inner(
    source: String,
    limits: &Limits,
    decls: &Declarations,
    options: Options,
) -> Result<CompiledRule, Vec<CompileError>> {
    let check = options.check;
    let max_depth = limits.max_recursion_depth.min(MAX_DEPTH_CEILING);
    let parser = if options.macros {
        ::cel::parser::Parser::new()
    } else {
        ::cel::Env::default().parser()
    };
    let parsed = parser
        .enable_optional_syntax(false)
        .max_recursion_depth(max_depth)
        .parse_with_source_info(&source);
    let (expr, info) = match parsed {
        Ok(p) => p,
        Err(errs) => {
            let mut out: Vec<CompileError> = Vec::new();
            for e in errs.errors {
                let (message, span) = if e.msg.contains("Recursion limit of") {
                    (
                        format!("expression recursion limit exceeded: {max_depth}"),
                        None,
                    )
                } else {
                    let at = line_col_to_offset(&source, e.pos.0, e.pos.1);
                    let span = at.map(|a| {
                        let end = source[a..].chars().next().map_or(a, |c| a + c.len_utf8());
                        a..end
                    });
                    (normalise_parse_message(&e.msg), span)
                };
                if !out.iter().any(|o| o.message == message) {
                    out.push(CompileError {
                        message,
                        span,
                        kind: CompileErrorKind::Syntax,
                    });
                }
            }
            if out.is_empty() {
                out.push(CompileError {
                    kind: CompileErrorKind::Syntax,
                    message: "syntax error".into(),
                    span: None,
                });
            }
            return Err(out);
        }
    };
    if ast::parsed_depth(&expr) > max_depth as usize {
        return Err(vec![CompileError {
            kind: CompileErrorKind::Syntax,
            message: "max recursion depth exceeded".into(),
            span: None,
        }]);
    }
    let names: Vec<String> = decls.variables.iter().map(|(n, _)| n.clone()).collect();
    let mut conv = ast::Converter::new(&source, &info, names);
    let mut root = conv.convert(&expr);
    let slot_count = conv.slot_count;
    drop(expr);
    let result_type = if check {
        let declared: Vec<CelType> = decls.variables.iter().map(|(_, t)| t.clone()).collect();
        let mut checker = checker::Checker::new(&declared, slot_count);
        let t = checker.check_root(&mut root);
        if !checker.errors.is_empty() {
            let mut errs = checker.errors;
            errs.sort_by_key(|e| e.span.as_ref().map_or(0, |s| s.start));
            return Err(errs);
        }
        t
    } else {
        CelType::Dyn
    };
    let plan_error = if options.optimize {
        plan(&mut root, slot_count)
    } else {
        None
    };
    let static_cost = if cost::has_comprehension(&root) {
        None
    } else {
        let dummy: Vec<&Value> = Vec::new();
        let bounds = vec![1u64; decls.variables.len()];
        let mut est = cost::Estimator::new(slot_count, &dummy, &bounds);
        Some(est.estimate(&root).0)
    };
    Ok(CompiledRule {
        source,
        root,
        slot_count,
        declared: decls.variables.len(),
        result_type,
        static_cost,
        max_cost: limits.max_cost,
        plan_error,
    })
}

/// cel-go's OptOptimize plan step (interpreter/decorators.go: decOptimize, decRegexOptimizer):
/// folds `x in []` to false, evaluates constant type conversions and compiles constant regular
/// expressions. Returns the first error, which kcm reports as "failed to create CEL program".
fn plan(node: &mut ast::Node, slot_count: usize) -> Option<String> {
    use ast::{Func, Kind};
    let mut first_error = None;
    match &mut node.kind {
        Kind::Call { target, args, .. } => {
            if let Some(t) = target {
                first_error = first_error.or(plan(t, slot_count));
            }
            for a in args.iter_mut() {
                first_error = first_error.or(plan(a, slot_count));
            }
        }
        Kind::Select { operand, .. } => first_error = plan(operand, slot_count),
        Kind::List(items) => {
            for i in items {
                first_error = first_error.or(plan(i, slot_count));
            }
        }
        Kind::Map(entries) => {
            for (k, v) in entries {
                first_error = first_error.or(plan(k, slot_count));
                first_error = first_error.or(plan(v, slot_count));
            }
        }
        Kind::Comprehension(c) => {
            for n in [
                &mut c.range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                first_error = first_error.or(plan(n, slot_count));
            }
        }
        _ => {}
    }
    let Kind::Call {
        func,
        args,
        regex,
        target,
        ..
    } = &node.kind
    else {
        return first_error;
    };
    if let Some(Err(e)) = regex {
        return first_error.or(Some(e.clone()));
    }
    let is_const = |n: &ast::Node| matches!(n.kind, Kind::Lit(_));
    match func {
        Func::In if args.len() == 2 && matches!(&args[1].kind, Kind::List(l) if l.is_empty()) => {
            node.kind = Kind::Lit(Value::Bool(false));
            node.scalar = true;
        }
        Func::ToInt
        | Func::ToUint
        | Func::ToDouble
        | Func::ToString
        | Func::ToBytes
        | Func::ToBool
        | Func::ToDyn
        | Func::ToDuration
        | Func::ToTimestamp
        | Func::TypeOf
            if target.is_none() && args.len() == 1 && is_const(&args[0]) =>
        {
            let mut ev = eval::Evaluator::new(slot_count, &[], u64::MAX);
            match ev.eval(node) {
                Ok(v) => {
                    let v = v.into_owned();
                    node.kind = Kind::Lit(v);
                }
                Err(f) => return first_error.or(Some(f.message)),
            }
        }
        _ => {}
    }
    first_error
}

fn normalise_parse_message(m: &str) -> String {
    m.to_string()
}

impl CompiledRule {
    /// The rule text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The statically deduced result type (`dyn` when unknown until run time).
    pub fn result_type(&self) -> CelType {
        self.result_type.clone()
    }

    /// The estimated upper bound of the evaluation cost for this input.
    pub fn estimated_cost(&self, obj: &Object) -> u64 {
        self.estimate(&[&obj.value], &[obj.fanout])
    }

    fn estimate(&self, values: &[&Value], bounds: &[u64]) -> u64 {
        match self.static_cost {
            Some(c) => c,
            None => {
                cost::Estimator::new(self.slot_count, values, bounds)
                    .estimate(&self.root)
                    .0
            }
        }
    }

    /// Evaluates against values of the declared variables (in declaration order).
    pub fn evaluate_values<'a>(
        &'a self,
        values: &[&'a Value],
    ) -> Result<Cow<'a, Value>, EvalError> {
        let bounds: Vec<u64> = values.iter().map(|v| cost::max_fanout(v)).collect();
        self.run(values, &bounds)
    }

    fn run<'a>(
        &'a self,
        values: &[&'a Value],
        bounds: &[u64],
    ) -> Result<Cow<'a, Value>, EvalError> {
        if values.len() != self.declared {
            return Err(EvalError {
                message: format!(
                    "expected {} variable values, got {}",
                    self.declared,
                    values.len()
                ),
                budget_exceeded: false,
                at_plan: false,
            });
        }
        let _ = bounds;
        if let Some(e) = &self.plan_error {
            return Err(EvalError {
                message: e.clone(),
                budget_exceeded: false,
                at_plan: true,
            });
        }
        let mut ev = eval::Evaluator::new(self.slot_count, values, self.max_cost);
        ev.eval(&self.root).map_err(EvalError::from)
    }

    /// Evaluates the rule against an object: a bool result is the verdict, anything else
    /// an error.
    pub fn evaluate(&self, obj: &Object) -> Verdict {
        match self.run(&[&obj.value], &[obj.fanout]) {
            Ok(v) => match v.as_ref() {
                Value::Bool(true) => Verdict::True,
                Value::Bool(false) => Verdict::False,
                other => Verdict::Error(EvalError {
                    message: format!(
                        "rule evaluated to {} ({}), expected bool",
                        other.type_of().name(),
                        other.render()
                    ),
                    budget_exceeded: false,
                    at_plan: false,
                }),
            },
            Err(e) => Verdict::Error(e),
        }
    }

    /// The clause tree of the rule with the value of every clause for this object, flattened
    /// in pre-order (`depth` gives the nesting).
    pub fn explain(&self, obj: &Object) -> Vec<Clause> {
        let values = [&obj.value];
        if let Some(e) = &self.plan_error {
            return vec![Clause {
                depth: 0,
                text: self.source.clone(),
                span: self.root.span.clone(),
                value: Err(e.clone()),
                operands: Vec::new(),
                kind: ClauseKind::Other,
            }];
        }
        let mut value_of = |n: &ast::Node| -> Result<String, String> {
            let mut ev = eval::Evaluator::new(self.slot_count, &values, self.max_cost);
            ev.eval(n).map(|v| v.render()).map_err(|f| f.message)
        };
        explain::build(&self.root, &self.source, &mut value_of)
    }
}

/// Where a readiness evaluation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Compile,
    Evaluate,
}

/// The outcome of evaluating a readiness rule the way kcm does.
#[derive(Clone, Debug, PartialEq)]
pub enum ReadinessOutcome {
    /// The rule evaluated to this bool (an empty rule means ready).
    Ready(bool),
    /// kcm reports `FailedToEvaluateReadiness`.
    Failed {
        phase: Phase,
        message: String,
        budget_exceeded: bool,
        /// The compile errors, for the compile phase.
        compile_errors: Vec<CompileError>,
    },
}

impl ReadinessOutcome {
    pub fn is_ready(&self) -> bool {
        matches!(self, ReadinessOutcome::Ready(true))
    }
}

/// Compiles and evaluates a readiness rule against an object.
pub fn readiness(rule: &str, obj: &Object, limits: &Limits) -> ReadinessOutcome {
    if rule.trim().is_empty() {
        return ReadinessOutcome::Ready(true);
    }
    match compile(rule, limits) {
        Err(errs) => ReadinessOutcome::Failed {
            phase: Phase::Compile,
            message: errs
                .iter()
                .map(|e| e.message.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            budget_exceeded: false,
            compile_errors: errs,
        },
        Ok(rule) => match rule.evaluate(obj) {
            Verdict::True => ReadinessOutcome::Ready(true),
            Verdict::False => ReadinessOutcome::Ready(false),
            Verdict::Error(e) => ReadinessOutcome::Failed {
                phase: Phase::Evaluate,
                message: e.message,
                budget_exceeded: e.budget_exceeded,
                compile_errors: Vec::new(),
            },
        },
    }
}

#[cfg(test)]
mod deviations;
#[cfg(test)]
mod tests;
