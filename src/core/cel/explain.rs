//! Clause trees: how a rule's verdict decomposes, with the value of each part.

use std::ops::Range;

use super::ast::{Func, Kind, Node};

/// One clause of a rule's explanation.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    /// Nesting level; 0 for the whole rule.
    pub depth: usize,
    /// Source text of the sub-expression.
    pub text: String,
    /// Byte offsets of the sub-expression in the rule text.
    pub span: Range<usize>,
    /// The value as a CEL literal, or the evaluation error message.
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

/// Collects the terms of a chain of the same logical operator, in source order.
fn flatten<'n>(n: &'n Node, op: Func, out: &mut Vec<&'n Node>) {
    match &n.kind {
        Kind::Call { func, args, .. } if *func == op && args.len() == 2 => {
            flatten(&args[0], op, out);
            flatten(&args[1], op, out);
        }
        _ => out.push(n),
    }
}

/// Walks the tree, calling `value_of` for each clause node and operand.
pub fn build<'n>(
    root: &'n Node,
    source: &str,
    value_of: &mut dyn FnMut(&'n Node) -> Result<String, String>,
) -> Vec<Clause> {
    let mut out = Vec::new();
    walk(root, 0, source, value_of, &mut out);
    out
}

fn text_of(source: &str, span: &Range<usize>) -> String {
    source.get(span.clone()).unwrap_or("").to_string()
}

fn walk<'n>(
    n: &'n Node,
    depth: usize,
    source: &str,
    value_of: &mut dyn FnMut(&'n Node) -> Result<String, String>,
    out: &mut Vec<Clause>,
) {
    let mut clause = Clause {
        depth,
        text: text_of(source, &n.span),
        span: n.span.clone(),
        value: value_of(n),
        operands: Vec::new(),
        kind: ClauseKind::Other,
    };
    let mut children: Vec<&'n Node> = Vec::new();
    match &n.kind {
        Kind::Call {
            func, target, args, ..
        } => match func {
            Func::And | Func::Or => {
                clause.kind = if *func == Func::And {
                    ClauseKind::And
                } else {
                    ClauseKind::Or
                };
                flatten(n, *func, &mut children);
                children.sort_by_key(|c| c.span.start);
            }
            Func::Not => {
                clause.kind = ClauseKind::Not;
                children.extend(args.iter());
            }
            Func::Cond => {
                children.extend(args.iter());
            }
            Func::Eq | Func::Ne | Func::Lt | Func::Le | Func::Gt | Func::Ge | Func::In => {
                clause.kind = ClauseKind::Comparison;
                for a in args {
                    clause
                        .operands
                        .push((text_of(source, &a.span), value_of(a)));
                }
            }
            _ => {
                clause.kind = ClauseKind::Call;
                for a in target.iter().map(|t| &**t).chain(args.iter()) {
                    clause
                        .operands
                        .push((text_of(source, &a.span), value_of(a)));
                }
            }
        },
        Kind::Select { test: true, .. } => clause.kind = ClauseKind::Call,
        Kind::Comprehension(_) => clause.kind = ClauseKind::Macro,
        _ => {}
    }
    out.push(clause);
    for c in children {
        walk(c, depth + 1, source, value_of, out);
    }
}
