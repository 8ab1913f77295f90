//! The standard macros, expanded as the `cel` crate expands them: the same comprehensions,
//! the same ids in the same order, each placed where the call is.

use ::cel::common::ast::{CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue};

use super::parser::{Ids, Rejected};

const RESULT: &str = "@result";

/// A call no macro takes: its target and arguments, given back.
pub(super) type NotAMacro = (Option<IdedExpr>, Vec<IdedExpr>);

/// The expansion of a call, if a standard macro matches it (by name, receiver style and
/// arity); the call is given back otherwise. A macro that matches but cannot expand (a
/// bad argument) rejects the expression.
pub(super) fn expand(
    ids: &mut Ids,
    call_id: u64,
    function: &str,
    target: Option<IdedExpr>,
    mut args: Vec<IdedExpr>,
) -> Result<Result<IdedExpr, NotAMacro>, Rejected> {
    let mut at = At { ids, call_id };
    let Some(target) = target else {
        if function == "has" && args.len() == 1 {
            return match args.pop().map(|a| a.expr) {
                Some(Expr::Select(mut select)) => {
                    select.test = true;
                    Ok(Ok(at.expr(Expr::Select(select))))
                }
                _ => Err(Rejected),
            };
        }
        return Ok(Err((None, args)));
    };
    let expanded = match (function, args.len()) {
        ("exists", 2) => quantifier(&mut at, target, args, false),
        ("all", 2) => quantifier(&mut at, target, args, true),
        ("exists_one" | "existsOne", 2) => exists_one(&mut at, target, args),
        ("map", 2 | 3) => map(&mut at, target, args),
        ("filter", 2) => filter(&mut at, target, args),
        _ => return Ok(Err((Some(target), args))),
    };
    expanded.map(Ok)
}

/// Makes the expansion's nodes: each with an id of its own, at the call's offsets.
struct At<'a> {
    ids: &'a mut Ids,
    call_id: u64,
}

impl At<'_> {
    fn expr(&mut self, expr: Expr) -> IdedExpr {
        IdedExpr {
            id: self.ids.copy_of(self.call_id),
            expr,
        }
    }

    fn ident(&mut self, name: &str) -> IdedExpr {
        self.expr(Expr::Ident(name.to_string()))
    }

    fn bool(&mut self, b: bool) -> IdedExpr {
        self.expr(Expr::Literal(LiteralValue::Boolean(b.into())))
    }

    fn int(&mut self, i: i64) -> IdedExpr {
        self.expr(Expr::Literal(LiteralValue::Int(i.into())))
    }

    fn call(&mut self, function: &str, args: Vec<IdedExpr>) -> IdedExpr {
        self.expr(Expr::Call(CallExpr {
            func_name: function.to_string(),
            target: None,
            args,
        }))
    }

    fn list(&mut self, elements: Vec<IdedExpr>) -> IdedExpr {
        self.expr(Expr::List(ListExpr::new(elements)))
    }

    #[allow(clippy::too_many_arguments)]
    fn comprehension(
        &mut self,
        iter_range: IdedExpr,
        iter_var: String,
        accu_init: IdedExpr,
        loop_cond: IdedExpr,
        loop_step: IdedExpr,
        result: IdedExpr,
    ) -> IdedExpr {
        self.expr(Expr::Comprehension(Box::new(ComprehensionExpr {
            iter_range,
            iter_var,
            iter_var2: None,
            accu_var: RESULT.to_string(),
            accu_init,
            loop_cond,
            loop_step,
            result,
        })))
    }
}

fn simple_name(e: IdedExpr) -> Result<String, Rejected> {
    match e.expr {
        Expr::Ident(name) => Ok(name),
        _ => Err(Rejected),
    }
}

/// `all` (`&&` of the predicates, from true) and `exists` (`||`, from false).
fn quantifier(
    at: &mut At,
    target: IdedExpr,
    mut args: Vec<IdedExpr>,
    all: bool,
) -> Result<IdedExpr, Rejected> {
    let predicate = args.remove(1);
    let var = simple_name(args.remove(0))?;
    let init = at.bool(all);
    let accu = at.ident(RESULT);
    let cond = if all {
        at.call("@not_strictly_false", vec![accu])
    } else {
        let not = at.call("!_", vec![accu]);
        at.call("@not_strictly_false", vec![not])
    };
    let accu = at.ident(RESULT);
    let step = at.call(if all { "_&&_" } else { "_||_" }, vec![accu, predicate]);
    let result = at.ident(RESULT);
    Ok(at.comprehension(target, var, init, cond, step, result))
}

fn exists_one(
    at: &mut At,
    target: IdedExpr,
    mut args: Vec<IdedExpr>,
) -> Result<IdedExpr, Rejected> {
    let predicate = args.remove(1);
    let var = simple_name(args.remove(0))?;
    let init = at.int(0);
    let cond = at.bool(true);
    let accu = at.ident(RESULT);
    let one = at.int(1);
    let plus_one = at.call("_+_", vec![accu, one]);
    let accu = at.ident(RESULT);
    let step = at.call("_?_:_", vec![predicate, plus_one, accu]);
    let accu = at.ident(RESULT);
    let one = at.int(1);
    let result = at.call("_==_", vec![accu, one]);
    Ok(at.comprehension(target, var, init, cond, step, result))
}

/// `map(x, f)` and `map(x, p, f)`.
fn map(at: &mut At, target: IdedExpr, mut args: Vec<IdedExpr>) -> Result<IdedExpr, Rejected> {
    let func = args.pop().ok_or(Rejected)?;
    let var = simple_name(args.remove(0))?;
    let init = at.list(Vec::new());
    let cond = at.bool(true);
    let filter = args.pop();
    let accu = at.ident(RESULT);
    let item = at.list(vec![func]);
    let mut step = at.call("_+_", vec![accu, item]);
    if let Some(filter) = filter {
        let accu = at.ident(RESULT);
        step = at.call("_?_:_", vec![filter, step, accu]);
    }
    let result = at.ident(RESULT);
    Ok(at.comprehension(target, var, init, cond, step, result))
}

fn filter(at: &mut At, target: IdedExpr, mut args: Vec<IdedExpr>) -> Result<IdedExpr, Rejected> {
    let var_expr = args.remove(0);
    let var = simple_name(var_expr.clone())?;
    let predicate = args.pop().ok_or(Rejected)?;
    let init = at.list(Vec::new());
    let cond = at.bool(true);
    let accu = at.ident(RESULT);
    let item = at.list(vec![var_expr]);
    let step = at.call("_+_", vec![accu, item]);
    let accu = at.ident(RESULT);
    let step = at.call("_?_:_", vec![predicate, step, accu]);
    let result = at.ident(RESULT);
    Ok(at.comprehension(target, var, init, cond, step, result))
}
