//! The standard macros, expanded as the `cel` crate expands them: the same comprehensions,
//! each of their nodes placed where the call is.

use std::ops::Range;

use super::parser::Rejected;
use crate::core::cel::ast::build::{Builder, Sub};
use crate::core::cel::ast::{Kind, Name};
use crate::core::cel::value::Value;
use crate::core::cel::{CompileError, CompileErrorKind};

const RESULT: &str = "@result";

/// Whether a standard macro matches a call: by name, receiver style and arity.
pub(super) fn is_macro(function: &str, has_target: bool, args: usize) -> bool {
    if !has_target {
        return function == "has" && args == 1;
    }
    matches!(
        (function, args),
        ("exists" | "all" | "exists_one" | "existsOne" | "filter", 2) | ("map", 2 | 3)
    )
}

/// The expansion of a call a standard macro matches ([`is_macro`]); a macro that cannot
/// expand (a bad argument) rejects the expression.
pub(super) fn expand(
    b: &mut Builder,
    own: Option<Range<usize>>,
    function: &str,
    target: Option<Sub>,
    mut args: Vec<Sub>,
) -> Result<Sub, Rejected> {
    let Some(target) = target else {
        let arg = args.pop().ok_or(Rejected)?;
        return match arg.node.kind {
            Kind::Select { operand, field, .. } => {
                Ok(b.selection(own, operand, arg.depth - 1, field, true))
            }
            _ => Err(Rejected),
        };
    };
    let mut at = At { b, own };
    match function {
        "exists" => quantifier(&mut at, target, args, false),
        "all" => quantifier(&mut at, target, args, true),
        "exists_one" | "existsOne" => exists_one(&mut at, target, args),
        "map" => map(&mut at, target, args),
        _ => filter(&mut at, target, args),
    }
}

/// Makes the expansion's nodes, each at the call's offsets.
struct At<'a, 's> {
    b: &'a mut Builder<'s>,
    own: Option<Range<usize>>,
}

impl At<'_, '_> {
    fn accu(&self) -> Sub {
        self.b
            .leaf(self.own.clone(), Kind::Name(Name::Static(RESULT)))
    }

    fn lit(&self, v: Value) -> Sub {
        self.b.leaf(self.own.clone(), Kind::Lit(v))
    }

    fn call<const N: usize>(&self, function: &'static str, args: [Sub; N]) -> Sub {
        self.b.call(self.own.clone(), function, None, args)
    }

    fn list<const N: usize>(&self, elements: [Sub; N]) -> Sub {
        self.b.list(self.own.clone(), elements)
    }

    fn comprehension(&mut self, range: Sub, iter_var: Name, parts: [Sub; 4]) -> Sub {
        let own = self.own.clone();
        self.b
            .comprehension(own, range, iter_var, Name::Static(RESULT), parts)
    }

    /// The name of the variable (a simple identifier); cel-go's macros refuse the
    /// traditional accumulator's name.
    fn var(&mut self, arg: &Sub) -> Result<Name, Rejected> {
        let Kind::Name(name) = &arg.node.kind else {
            return Err(Rejected);
        };
        let name = name.clone();
        if self.b.name_text(&name) == "__result__" {
            let source = self.b.text.0;
            let from = self.own.as_ref().map_or(0, |o| o.start).min(source.len());
            let at = source[from..].find("__result__").map(|i| from + i);
            self.b.errors.push(CompileError {
                message: "iteration variable overwrites accumulator variable".into(),
                span: at.map(|p| p..p + "__result__".len()),
                kind: CompileErrorKind::Syntax,
            });
        }
        Ok(name)
    }
}

/// `all` (`&&` of the predicates, from true) and `exists` (`||`, from false).
fn quantifier(at: &mut At, target: Sub, args: Vec<Sub>, all: bool) -> Result<Sub, Rejected> {
    let [var, predicate] = two(args)?;
    let var = at.var(&var)?;
    let init = at.lit(Value::Bool(all));
    let cond = if all {
        at.call("@not_strictly_false", [at.accu()])
    } else {
        let not = at.call("!_", [at.accu()]);
        at.call("@not_strictly_false", [not])
    };
    let step = at.call(if all { "_&&_" } else { "_||_" }, [at.accu(), predicate]);
    let result = at.accu();
    Ok(at.comprehension(target, var, [init, cond, step, result]))
}

fn exists_one(at: &mut At, target: Sub, args: Vec<Sub>) -> Result<Sub, Rejected> {
    let [var, predicate] = two(args)?;
    let var = at.var(&var)?;
    let init = at.lit(Value::Int(0));
    let cond = at.lit(Value::Bool(true));
    let plus_one = at.call("_+_", [at.accu(), at.lit(Value::Int(1))]);
    let step = at.call("_?_:_", [predicate, plus_one, at.accu()]);
    let result = at.call("_==_", [at.accu(), at.lit(Value::Int(1))]);
    Ok(at.comprehension(target, var, [init, cond, step, result]))
}

/// `map(x, f)` and `map(x, p, f)`.
fn map(at: &mut At, target: Sub, mut args: Vec<Sub>) -> Result<Sub, Rejected> {
    let func = args.pop().ok_or(Rejected)?;
    let filter = (args.len() == 2).then(|| args.pop()).flatten();
    let var = at.var(args.first().ok_or(Rejected)?)?;
    let init = at.list([]);
    let cond = at.lit(Value::Bool(true));
    let item = at.list([func]);
    let mut step = at.call("_+_", [at.accu(), item]);
    if let Some(filter) = filter {
        step = at.call("_?_:_", [filter, step, at.accu()]);
    }
    let result = at.accu();
    Ok(at.comprehension(target, var, [init, cond, step, result]))
}

fn filter(at: &mut At, target: Sub, args: Vec<Sub>) -> Result<Sub, Rejected> {
    let [var_expr, predicate] = two(args)?;
    let var = at.var(&var_expr)?;
    let init = at.list([]);
    let cond = at.lit(Value::Bool(true));
    let item = at.list([var_expr]);
    let step = at.call("_+_", [at.accu(), item]);
    let step = at.call("_?_:_", [predicate, step, at.accu()]);
    let result = at.accu();
    Ok(at.comprehension(target, var, [init, cond, step, result]))
}

fn two(args: Vec<Sub>) -> Result<[Sub; 2], Rejected> {
    <[Sub; 2]>::try_from(args).map_err(|_| Rejected)
}
