//! cel-go's `OptOptimize` plan step (interpreter/decorators.go: decOptimize,
//! decRegexOptimizer), as kcm builds readiness programs with it. Bottom-up:
//!
//! - a type conversion (`int`, `string`, `dyn`, `type`, ...) of a constant is evaluated;
//! - a list or map literal of constants becomes a constant;
//! - `x in <constant list>` becomes a hash-set lookup (an empty list: constant false, `x` not
//!   evaluated at all);
//! - a constant `matches` pattern is compiled.
//!
//! An error in a folded conversion or a constant pattern fails program creation: kcm reports
//! "failed to create CEL program", even where `&&`/`||` would have absorbed it at run time.

use std::sync::Arc;

use super::ast::{Func, Kind, Node, SetLookup};
use super::cost::Budget;
use super::eval::Evaluator;
use super::value::Value;

/// Plans the tree in place; returns the first program-creation error.
pub fn plan(node: &mut Node, slot_count: usize) -> Option<String> {
    let mut first_error = None;
    let mut note = |e: Option<String>| {
        if first_error.is_none() {
            first_error = e;
        }
    };
    match &mut node.kind {
        Kind::Call { target, args, .. } => {
            if let Some(t) = target {
                note(plan(t, slot_count));
            }
            for a in args.iter_mut() {
                note(plan(a, slot_count));
            }
        }
        Kind::Select { operand, .. } => note(plan(operand, slot_count)),
        Kind::List(items) => {
            for i in items {
                note(plan(i, slot_count));
            }
        }
        Kind::Map(entries) => {
            for (k, v) in entries {
                note(plan(k, slot_count));
                note(plan(v, slot_count));
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
                note(plan(n, slot_count));
            }
        }
        Kind::InSet { arg, .. } => note(plan(arg, slot_count)),
        _ => {}
    }
    if let Some(e) = first_error {
        return Some(e);
    }
    let is_const = |n: &Node| matches!(n.kind, Kind::Lit(_));
    match &mut node.kind {
        Kind::List(items) if items.iter().all(is_const) => fold(node, slot_count).err(),
        Kind::Map(entries) if entries.iter().all(|(k, v)| is_const(k) && is_const(v)) => {
            fold(node, slot_count).err()
        }
        Kind::Call {
            func: Func::In,
            args,
            overload: Some(0),
            ..
        } if args.len() == 2 => {
            // the `in_list` overload with a constant list
            let Kind::Lit(Value::List(list)) = &args[1].kind else {
                return None;
            };
            if list.is_empty() {
                node.kind = Kind::Lit(Value::Bool(false));
                node.scalar = true;
                return None;
            }
            let set = SetLookup::new(list)?;
            let arg = args.swap_remove(0);
            node.kind = Kind::InSet {
                arg: Box::new(arg),
                set: Arc::new(set),
            };
            None
        }
        Kind::Call {
            func:
                Func::ToInt
                | Func::ToUint
                | Func::ToDouble
                | Func::ToString
                | Func::ToBytes
                | Func::ToBool
                | Func::ToDyn
                | Func::ToDuration
                | Func::ToTimestamp
                | Func::TypeOf,
            target: None,
            args,
            ..
        } if args.len() == 1 && is_const(&args[0]) => fold(node, slot_count).err(),
        Kind::Call {
            func: Func::Matches,
            target,
            args,
            regex,
            ..
        } => {
            let pattern = if target.is_some() {
                args.first()
            } else {
                args.get(1)
            };
            if regex.is_none()
                && let Some(Node {
                    kind: Kind::Lit(Value::String(p)),
                    ..
                }) = pattern
            {
                *regex = Some(super::regex::cached(p).0);
            }
            match regex {
                Some(Err(e)) => Some(e.clone()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Replaces a node by its constant value.
fn fold(node: &mut Node, slot_count: usize) -> Result<(), String> {
    let mut ev = Evaluator::new(slot_count, &[], Budget::unlimited());
    match ev.eval(node) {
        Ok(v) => {
            let v = v.into_owned();
            node.scalar = matches!(
                v,
                Value::Bool(_)
                    | Value::Int(_)
                    | Value::Uint(_)
                    | Value::Double(_)
                    | Value::Null
                    | Value::Timestamp(_)
                    | Value::Duration(_)
            );
            node.kind = Kind::Lit(v);
            Ok(())
        }
        Err(f) => Err(f.message),
    }
}
