//! Clause trees: how a rule's verdict decomposes, with the value of each part.
//!
//! The explanation continues the evaluation that reached the verdict, on the same budget
//! (one budget per rule and object), and computes each clause once: the values of clauses
//! and operands are kept as they are computed, so nested clauses reuse their children's.
//! Values and texts are shortened with a marker. When the object is a Secret, its data is
//! never shown: maps of it are shown with their values redacted, and a value computed from
//! it (found by following what each part of the rule reads) is shown only as its type and
//! size; a bool is always shown, since it is what the explanation is about.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::ast::{Func, Kind, Node};
use super::eval::{Evaluator, Fault, Memo};
use super::value::{Redacted, Value, redacted_marker};

/// One clause of a rule's explanation.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    /// Nesting level; 0 for the whole rule.
    pub depth: usize,
    /// Source text of the sub-expression (shortened with `…`).
    pub text: String,
    /// Byte offsets of the sub-expression in the rule text.
    pub span: Range<usize>,
    /// The value as a CEL literal (shortened with `…`), or the evaluation error message.
    pub value: Result<String, String>,
    /// For comparisons and calls: the operands' source text and values.
    pub operands: Vec<(String, Result<String, String>)>,
    pub kind: ClauseKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClauseKind {
    And,
    Or,
    Not,
    Comparison,
    Macro,
    Call,
    Other,
}

/// Longest value shown, in bytes (then `…`).
pub const VALUE_LIMIT: usize = 256;
/// Longest clause text shown, in characters (then `…`).
pub const TEXT_LIMIT: usize = 200;

pub fn shorten_text(s: &str) -> String {
    match s.char_indices().nth(TEXT_LIMIT) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Collects the terms of a chain of the same logical operator, in source order.
fn flatten<'n>(n: &'n Node, op: Func, out: &mut Vec<&'n Node>) {
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        match &n.kind {
            Kind::Call { func, args, .. } if *func == op && args.len() == 2 => {
                stack.push(&args[1]);
                stack.push(&args[0]);
            }
            _ => out.push(n),
        }
    }
}

/// The children clauses of a node and its operands.
fn structure(n: &Node) -> (ClauseKind, Vec<&Node>, Vec<&Node>) {
    let mut children: Vec<&Node> = Vec::new();
    let mut operands: Vec<&Node> = Vec::new();
    let kind = match &n.kind {
        Kind::Call {
            func, target, args, ..
        } => match func {
            Func::And | Func::Or => {
                flatten(n, *func, &mut children);
                children.sort_by_key(|c| c.span.start);
                if *func == Func::And {
                    ClauseKind::And
                } else {
                    ClauseKind::Or
                }
            }
            Func::Not => {
                children.extend(args.iter());
                ClauseKind::Not
            }
            Func::Cond => {
                children.extend(args.iter());
                ClauseKind::Other
            }
            Func::Eq | Func::Ne | Func::Lt | Func::Le | Func::Gt | Func::Ge | Func::In => {
                operands.extend(args.iter());
                ClauseKind::Comparison
            }
            _ => {
                operands.extend(target.iter().map(|t| &**t).chain(args.iter()));
                ClauseKind::Call
            }
        },
        Kind::InSet { arg, .. } => {
            operands.push(arg);
            ClauseKind::Comparison
        }
        Kind::Select { test: true, .. } => ClauseKind::Call,
        Kind::Comprehension(_) => ClauseKind::Macro,
        _ => ClauseKind::Other,
    };
    (kind, children, operands)
}

/// The memo of the nodes whose values an explanation shows (the clauses and their
/// operands), for the evaluation to fill as it goes.
pub fn memo(root: &Node) -> Memo {
    let mut watched = HashSet::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        watched.insert(n as *const Node as usize);
        let (_, children, operands) = structure(n);
        for o in operands {
            watched.insert(o as *const Node as usize);
        }
        stack.extend(children);
    }
    Memo {
        watched,
        values: HashMap::new(),
    }
}

/// The message of an error that would show a Secret's data.
pub const WITHHELD: &str = "evaluation error (message withheld: it shows Secret data)";

/// Explains the rule, continuing the evaluator `ev` (its budget and its memo, see [`memo`]).
pub fn explain<'a>(
    root: &'a Node,
    source: &str,
    ev: &mut Evaluator<'a>,
    redacted: &Redacted,
    budget_message: impl Fn(Fault) -> String,
) -> Vec<Clause> {
    if ev.memo.is_none() {
        ev.memo = Some(Box::new(memo(root)));
    }
    let derived = if redacted.is_empty() {
        HashSet::new()
    } else {
        Taint::new(redacted).run(root)
    };
    let mut value_of = |n: &'a Node| -> Result<String, String> {
        let is_derived = derived.contains(&(n as *const Node as usize));
        match ev.eval(n) {
            Ok(v) => Ok(show(&v, is_derived, redacted)),
            Err(f) if f.budget.is_some() => Err(budget_message(f)),
            Err(f) => {
                if !redacted.is_empty() && (redacted.leaks(&f.message)) {
                    Err(WITHHELD.into())
                } else {
                    Err(f.message)
                }
            }
        }
    };
    let mut out = Vec::new();
    let mut stack = vec![(root, 0usize)];
    while let Some((n, depth)) = stack.pop() {
        let (kind, children, operands) = structure(n);
        let clause = Clause {
            depth,
            text: text_of(source, &n.span),
            span: n.span.clone(),
            value: value_of(n),
            operands: operands
                .into_iter()
                .map(|o| (text_of(source, &o.span), value_of(o)))
                .collect(),
            kind,
        };
        out.push(clause);
        for c in children.into_iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    ev.memo = None;
    out
}

fn text_of(source: &str, span: &Range<usize>) -> String {
    shorten_text(source.get(span.clone()).unwrap_or(""))
}

/// A value as an explanation shows it.
fn show(v: &Value, derived: bool, redacted: &Redacted) -> String {
    if redacted.is_empty() {
        let mut s = String::new();
        v.render_limited(&mut s, VALUE_LIMIT, None);
        return s;
    }
    if matches!(v, Value::Bool(_)) {
        return v.render();
    }
    if derived {
        return redacted_marker(v);
    }
    let mut s = String::new();
    v.render_limited(&mut s, VALUE_LIMIT, Some(redacted));
    if redacted.leaks(&s) {
        return redacted_marker(v);
    }
    s
}

/// Which nodes compute their values from redacted data. Conservative: a node is derived when
/// any value it reads may be, except for sizes and types; reading into the object along a
/// path is exact for literal keys (`self.data.x` is derived, `self.metadata.name` is not).
struct Taint<'r> {
    redacted: &'r Redacted,
    /// (derived, holds redacted data) of the variable slots.
    slots: HashMap<usize, (bool, bool)>,
    derived: HashSet<usize>,
}

impl<'r> Taint<'r> {
    fn new(redacted: &'r Redacted) -> Taint<'r> {
        let mut slots = HashMap::new();
        // slot 0: the object itself, which holds the redacted data
        slots.insert(0, (false, true));
        Taint {
            redacted,
            slots,
            derived: HashSet::new(),
        }
    }

    fn run(mut self, root: &Node) -> HashSet<usize> {
        self.visit(root);
        self.derived
    }

    /// The literal path of a select/index chain from the object.
    fn path(n: &Node) -> Option<Vec<String>> {
        let mut segs = Vec::new();
        let mut cur = n;
        loop {
            match &cur.kind {
                Kind::Path {
                    slot: 0, fields, ..
                } => {
                    segs.extend(fields.iter().rev().map(|f| f.to_string()));
                    segs.reverse();
                    return Some(segs);
                }
                Kind::Select {
                    operand,
                    field,
                    test: false,
                } => {
                    segs.push(field.to_string());
                    cur = operand;
                }
                Kind::Call {
                    func: Func::Index,
                    args,
                    target: None,
                    ..
                } if args.len() == 2 => match &args[1].kind {
                    Kind::Lit(Value::String(k)) => {
                        segs.push(k.to_string());
                        cur = &args[0];
                    }
                    _ => return None,
                },
                Kind::Var(0) => {
                    segs.reverse();
                    return Some(segs);
                }
                _ => return None,
            }
        }
    }

    /// (derived, holds) of a path into the object.
    fn of_path(&self, path: &[String]) -> (bool, bool) {
        for p in &self.redacted.paths {
            if path.len() >= p.len() && path[..p.len()] == p[..] {
                // at a hidden map itself: shown with its values redacted
                let at_map = path.len() == p.len() && p.len() == 1;
                return (!at_map, true);
            }
            if path.len() < p.len() && p[..path.len()] == path[..] {
                return (false, true);
            }
        }
        (false, false)
    }

    fn visit(&mut self, n: &Node) -> (bool, bool) {
        let r = self.visit_kind(n);
        if r.0 {
            self.derived.insert(n as *const Node as usize);
        }
        r
    }

    fn visit_kind(&mut self, n: &Node) -> (bool, bool) {
        if let Some(p) = Self::path(n) {
            // still visit the index operands, for their own clauses
            if let Kind::Call { args, .. } = &n.kind {
                for a in args {
                    self.visit(a);
                }
            }
            return self.of_path(&p);
        }
        let union = |a: (bool, bool), b: (bool, bool)| (a.0 || b.0, a.1 || b.1);
        match &n.kind {
            Kind::Lit(_)
            | Kind::TypeIdent(..)
            | Kind::Unresolved(_)
            | Kind::Name(_)
            | Kind::Struct(_) => (false, false),
            Kind::Var(s) => self.slots.get(s).copied().unwrap_or((false, false)),
            Kind::Path { slot, .. } => {
                let (d, h) = self.slots.get(slot).copied().unwrap_or((false, false));
                (d || h, d || h)
            }
            Kind::Select { operand, test, .. } => {
                let (d, h) = self.visit(operand);
                if *test {
                    (false, false)
                } else {
                    (d || h, d || h)
                }
            }
            Kind::List(items) => items
                .iter()
                .fold((false, false), |acc, i| union(acc, self.visit(i))),
            Kind::Map(entries) => entries.iter().fold((false, false), |acc, (k, v)| {
                let k = self.visit(k);
                union(union(acc, k), self.visit(v))
            }),
            Kind::InSet { arg, .. } => {
                self.visit(arg);
                (false, false)
            }
            Kind::Comprehension(c) => {
                let (d, h) = self.visit(&c.range);
                let it = (d || h, d || h);
                self.slots.insert(c.iter_var, it);
                if let Some(s) = c.iter_var2 {
                    self.slots.insert(s, it);
                }
                let init = self.visit(&c.accu_init);
                self.slots.insert(c.accu_var, init);
                // twice: the step reads the accumulator it updates
                let step = self.visit(&c.loop_step);
                self.slots.insert(c.accu_var, union(init, step));
                let step = self.visit(&c.loop_step);
                self.slots.insert(c.accu_var, union(init, step));
                self.visit(&c.loop_cond);
                self.visit(&c.result)
            }
            Kind::Call {
                func, target, args, ..
            } => {
                let mut all = (false, false);
                if let Some(t) = target {
                    all = union(all, self.visit(t));
                }
                for a in args {
                    all = union(all, self.visit(a));
                }
                match func {
                    Func::Size | Func::TypeOf => (false, false),
                    Func::ToDyn => all,
                    _ => (all.0 || all.1, all.0 || all.1),
                }
            }
        }
    }
}
