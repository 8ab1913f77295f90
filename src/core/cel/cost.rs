//! Upper-bound cost estimation: one unit per node evaluation (the evaluator's step counter),
//! comprehension bodies multiplied by the range size bound, concatenations by their sizes.
//!
//! A size bound is an upper bound of the length of a value *and of every value nested in it*.

use super::ast::{Func, Kind, Node};
use super::value::Value;

/// The largest length of any string, list or map inside a value (at least 1).
pub fn max_fanout(v: &Value) -> u64 {
    let mut max = 1u64;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => max = max.max(s.len() as u64),
            Value::Bytes(b) => max = max.max(b.len() as u64),
            Value::List(l) => {
                max = max.max(l.len() as u64);
                stack.extend(l.iter());
            }
            Value::Map(m) => {
                max = max.max(m.len() as u64);
                stack.extend(m.entries().iter().map(|(_, v)| v));
            }
            _ => {}
        }
    }
    max
}

pub struct Estimator<'a> {
    /// Size bounds of the variable slots.
    slots: Vec<u64>,
    /// Values of the declared slots, to resolve constant paths exactly.
    declared: &'a [&'a Value],
    /// Slots of comprehension accumulators (for in-place appends).
    accus: Vec<usize>,
}

impl<'a> Estimator<'a> {
    pub fn new(slot_count: usize, declared: &'a [&'a Value], declared_bounds: &[u64]) -> Self {
        let mut slots = declared_bounds.to_vec();
        slots.resize(slot_count, 1);
        Estimator {
            slots,
            declared,
            accus: Vec::new(),
        }
    }

    /// `(cost, size bound)` of a node.
    pub fn estimate(&mut self, n: &Node) -> (u64, u64) {
        match &n.kind {
            Kind::Lit(v) => (1, max_fanout(v)),
            Kind::TypeIdent(..) | Kind::Unresolved(_) | Kind::Struct(_) => (1, 1),
            Kind::Var(s) => (1, self.slots[*s]),
            Kind::Select { operand, .. } => {
                if let Some(v) = self.resolve(n) {
                    return (depth_of_select(n), max_fanout(v));
                }
                let (c, s) = self.estimate(operand);
                (c.saturating_add(1), s)
            }
            Kind::List(elems) => {
                let mut cost = 1u64;
                let mut size = elems.len().max(1) as u64;
                for e in elems {
                    let (c, s) = self.estimate(e);
                    cost = cost.saturating_add(c);
                    size = size.max(s);
                }
                (cost, size)
            }
            Kind::Map(entries) => {
                let mut cost = 1u64;
                let mut size = entries.len().max(1) as u64;
                for (k, v) in entries {
                    let (ck, sk) = self.estimate(k);
                    let (cv, sv) = self.estimate(v);
                    cost = cost.saturating_add(ck).saturating_add(cv);
                    size = size.max(sk).max(sv);
                }
                (cost, size)
            }
            Kind::Call {
                func, target, args, ..
            } => {
                let mut cost = 1u64;
                let mut sizes = Vec::with_capacity(args.len() + 1);
                if let Some(t) = target {
                    let (c, s) = self.estimate(t);
                    cost = cost.saturating_add(c);
                    sizes.push(s);
                }
                for a in args {
                    let (c, s) = self.estimate(a);
                    cost = cost.saturating_add(c);
                    sizes.push(s);
                }
                let max = sizes.iter().copied().max().unwrap_or(1);
                match func {
                    Func::Add if sizes.len() == 2 && n.scalar => (cost, 1),
                    Func::Add if sizes.len() == 2 => {
                        let in_place =
                            matches!(&args[0].kind, Kind::Var(s) if self.accus.contains(s));
                        let size = sizes[0].saturating_add(sizes[1]);
                        let copy = if in_place {
                            match &args[1].kind {
                                Kind::List(e) => e.len() as u64,
                                _ => sizes[1],
                            }
                        } else {
                            size
                        };
                        (cost.saturating_add(copy), size)
                    }
                    // equality and `in` may walk whole values
                    Func::Eq | Func::Ne | Func::In if !args.iter().all(|a| a.scalar) => {
                        (cost.saturating_add(max), 1)
                    }
                    Func::Eq | Func::Ne | Func::In => (cost, 1),
                    Func::Cond => (cost, max),
                    Func::Index | Func::ToDyn => (cost, max),
                    Func::ToString | Func::ToBytes => (cost, max.max(32)),
                    _ => (cost, max),
                }
            }
            Kind::Comprehension(c) => {
                let (cr, sr) = self.estimate(&c.range);
                let (ci, si) = self.estimate(&c.accu_init);
                let n = sr;
                self.slots[c.iter_var] = sr;
                if let Some(s) = c.iter_var2 {
                    self.slots[s] = sr;
                }
                self.accus.push(c.accu_var);
                self.slots[c.accu_var] = si.max(n);
                let (_, s_step) = self.estimate(&c.loop_step);
                let accu = si.max(n).max(s_step);
                self.slots[c.accu_var] = accu;
                let (cc, _) = self.estimate(&c.loop_cond);
                let (cs, _) = self.estimate(&c.loop_step);
                self.accus.pop();
                let (cres, sres) = self.estimate(&c.result);
                let body = cc.saturating_add(cs).saturating_add(2);
                let cost = 1u64
                    .saturating_add(cr)
                    .saturating_add(ci)
                    .saturating_add(n.saturating_mul(body))
                    .saturating_add(cres);
                (cost, sres.max(accu))
            }
        }
    }

    /// The input value a select chain on a declared variable names, when it exists.
    fn resolve(&self, n: &Node) -> Option<&'a Value> {
        match &n.kind {
            Kind::Var(s) => self.declared.get(*s).copied(),
            Kind::Select {
                operand,
                field,
                test: false,
            } => match self.resolve(operand)? {
                Value::Map(m) => m.get_str(field),
                _ => None,
            },
            _ => None,
        }
    }
}

fn depth_of_select(n: &Node) -> u64 {
    match &n.kind {
        Kind::Select { operand, .. } => 1 + depth_of_select(operand),
        _ => 1,
    }
}

/// Whether the tree has a comprehension (otherwise its cost is static).
pub fn has_comprehension(n: &Node) -> bool {
    match &n.kind {
        Kind::Comprehension(_) => true,
        Kind::Select { operand, .. } => has_comprehension(operand),
        Kind::Call { target, args, .. } => {
            target.as_deref().is_some_and(has_comprehension) || args.iter().any(has_comprehension)
        }
        Kind::List(e) => e.iter().any(has_comprehension),
        Kind::Map(e) => e
            .iter()
            .any(|(k, v)| has_comprehension(k) || has_comprehension(v)),
        _ => false,
    }
}
