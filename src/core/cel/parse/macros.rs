//! The standard macros, expanded as the `cel` crate expands them: the same comprehensions,
//! the same ids in the same order, each placed where the call is.

use super::parser::Rejected;
use super::tree::{Comprehension, Id, Name, PKind, Tree};
use crate::core::cel::value::Value;

const RESULT: &str = "@result";

/// The expansion of a call, if a standard macro matches it (by name, receiver style and
/// arity); None otherwise. A macro that matches but cannot expand (a bad argument) rejects
/// the expression. The nodes of the arguments are reused; those the expansion leaves out
/// stay in the tree, unreachable.
pub(super) fn expand(
    tree: &mut Tree,
    call_id: Id,
    function: &str,
    target: Option<Id>,
    args: &[Id],
) -> Result<Option<Id>, Rejected> {
    let mut at = At { tree, call_id };
    let Some(target) = target else {
        if function == "has" && args.len() == 1 {
            let arg = at.tree.node_mut(args[0]);
            return match std::mem::replace(&mut arg.kind, PKind::Unspecified) {
                PKind::Select { operand, field, .. } => Ok(Some(at.expr(PKind::Select {
                    operand,
                    field,
                    test: true,
                }))),
                other => {
                    arg.kind = other;
                    Err(Rejected)
                }
            };
        }
        return Ok(None);
    };
    let expanded = match (function, args.len()) {
        ("exists", 2) => quantifier(&mut at, target, args, false),
        ("all", 2) => quantifier(&mut at, target, args, true),
        ("exists_one" | "existsOne", 2) => exists_one(&mut at, target, args),
        ("map", 2 | 3) => map(&mut at, target, args),
        ("filter", 2) => filter(&mut at, target, args),
        _ => return Ok(None),
    };
    expanded.map(Some)
}

/// Makes the expansion's nodes: each with an id of its own, at the call's offsets.
struct At<'a, 's> {
    tree: &'a mut Tree<'s>,
    call_id: Id,
}

impl At<'_, '_> {
    fn expr(&mut self, kind: PKind) -> Id {
        self.tree.copy_of(self.call_id, kind)
    }

    fn accu(&mut self) -> Id {
        self.expr(PKind::Ident(Name::Static(RESULT)))
    }

    fn bool(&mut self, b: bool) -> Id {
        self.expr(PKind::Lit(Value::Bool(b)))
    }

    fn int(&mut self, i: i64) -> Id {
        self.expr(PKind::Lit(Value::Int(i)))
    }

    fn call(&mut self, function: &'static str, args: &[Id]) -> Id {
        let args = self.tree.make_list(args);
        self.expr(PKind::Call {
            func: Name::Static(function),
            target: None,
            args,
        })
    }

    fn list(&mut self, elements: &[Id]) -> Id {
        let items = self.tree.make_list(elements);
        self.expr(PKind::List(items))
    }

    fn comprehension(
        &mut self,
        iter_range: Id,
        iter_var: Name,
        [accu_init, loop_cond, loop_step, result]: [Id; 4],
    ) -> Id {
        self.expr(PKind::Comprehension(Box::new(Comprehension {
            iter_range,
            iter_var,
            iter_var2: None,
            accu_var: Name::Static(RESULT),
            accu_init,
            loop_cond,
            loop_step,
            result,
        })))
    }

    /// The name of a simple identifier.
    fn simple_name(&self, id: Id) -> Result<Name, Rejected> {
        match self.tree.kind(id) {
            PKind::Ident(name) => Ok(name.clone()),
            _ => Err(Rejected),
        }
    }
}

/// `all` (`&&` of the predicates, from true) and `exists` (`||`, from false).
fn quantifier(at: &mut At, target: Id, args: &[Id], all: bool) -> Result<Id, Rejected> {
    let predicate = args[1];
    let var = at.simple_name(args[0])?;
    let init = at.bool(all);
    let accu = at.accu();
    let cond = if all {
        at.call("@not_strictly_false", &[accu])
    } else {
        let not = at.call("!_", &[accu]);
        at.call("@not_strictly_false", &[not])
    };
    let accu = at.accu();
    let step = at.call(if all { "_&&_" } else { "_||_" }, &[accu, predicate]);
    let result = at.accu();
    Ok(at.comprehension(target, var, [init, cond, step, result]))
}

fn exists_one(at: &mut At, target: Id, args: &[Id]) -> Result<Id, Rejected> {
    let predicate = args[1];
    let var = at.simple_name(args[0])?;
    let init = at.int(0);
    let cond = at.bool(true);
    let accu = at.accu();
    let one = at.int(1);
    let plus_one = at.call("_+_", &[accu, one]);
    let accu = at.accu();
    let step = at.call("_?_:_", &[predicate, plus_one, accu]);
    let accu = at.accu();
    let one = at.int(1);
    let result = at.call("_==_", &[accu, one]);
    Ok(at.comprehension(target, var, [init, cond, step, result]))
}

/// `map(x, f)` and `map(x, p, f)`.
fn map(at: &mut At, target: Id, args: &[Id]) -> Result<Id, Rejected> {
    let func = args[args.len() - 1];
    let var = at.simple_name(args[0])?;
    let init = at.list(&[]);
    let cond = at.bool(true);
    let filter = (args.len() == 3).then(|| args[1]);
    let accu = at.accu();
    let item = at.list(&[func]);
    let mut step = at.call("_+_", &[accu, item]);
    if let Some(filter) = filter {
        let accu = at.accu();
        step = at.call("_?_:_", &[filter, step, accu]);
    }
    let result = at.accu();
    Ok(at.comprehension(target, var, [init, cond, step, result]))
}

fn filter(at: &mut At, target: Id, args: &[Id]) -> Result<Id, Rejected> {
    let var_expr = args[0];
    let var = at.simple_name(var_expr)?;
    let predicate = args[1];
    let init = at.list(&[]);
    let cond = at.bool(true);
    let accu = at.accu();
    let item = at.list(&[var_expr]);
    let step = at.call("_+_", &[accu, item]);
    let accu = at.accu();
    let step = at.call("_?_:_", &[predicate, step, accu]);
    let result = at.accu();
    Ok(at.comprehension(target, var, [init, cond, step, result]))
}
