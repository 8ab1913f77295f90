//! The parse tree measured (Go's size and nesting limits, our compile weight) and written
//! out as a pattern of the `regex` crate.

use std::fmt::Write as _;

use super::syntax::*;

/// Go's `repeatIsValid`: nested counted repetitions multiply to at most `n` copies.
pub(super) fn repeat_is_valid(re: &Node, n: i32) -> bool {
    let mut n = n;
    if let Node::Repeat(_, min, max, _) = re {
        let mut m = *max;
        if m == 0 {
            return true;
        }
        if m < 0 {
            m = *min;
        }
        if m > n {
            return false;
        }
        if m > 0 {
            n /= m;
        }
    }
    children(re).iter().all(|s| repeat_is_valid(s, n))
}

pub(super) fn children(n: &Node) -> Vec<&Node> {
    match n {
        Node::Capture(s) | Node::Star(s, _) | Node::Plus(s, _) | Node::Quest(s, _) => vec![s],
        Node::Repeat(s, ..) => vec![s],
        Node::Concat(v) | Node::Alt(v) => v.iter().collect(),
        _ => Vec::new(),
    }
}

/// Go's `calcSize`.
pub(super) fn calc_size(n: &Node) -> u64 {
    let size = match n {
        Node::Lit(..) => 1,
        Node::Capture(s) | Node::Star(s, _) => 2 + calc_size(s),
        Node::Plus(s, _) | Node::Quest(s, _) => 1 + calc_size(s),
        Node::Concat(v) => v.iter().map(calc_size).sum(),
        Node::Alt(v) => v.iter().map(calc_size).sum::<u64>() + (v.len() as u64).saturating_sub(1),
        Node::Repeat(s, min, max, _) => {
            let sub = calc_size(s);
            if *max == -1 {
                if *min == 0 {
                    2 + sub
                } else {
                    1 + *min as u64 * sub
                }
            } else {
                *max as u64 * sub + (*max - *min) as u64
            }
        }
        _ => 0,
    };
    size.max(1)
}

/// The compile weight of a node (see [`Compiled::weight`]).
pub(super) fn weight(n: &Node) -> u64 {
    let w = match n {
        Node::Lit(_, fold) => 1 + *fold as u64,
        Node::Class(c) => {
            let items: u64 = c
                .items
                .iter()
                .map(|item| match item {
                    ClassItem::Range(_, hi) if (*hi as u32) < 0x80 => 1,
                    ClassItem::Range(lo, hi) => 8 + (*hi as u64 - *lo as u64) / 4096,
                    ClassItem::Set(body, _) if body.contains("\\p{") => 20_000,
                    ClassItem::Set(..) => 1,
                })
                .sum();
            items * (1 + c.negated as u64) * (1 + c.fold as u64)
        }
        Node::AnyNotNl | Node::Any => 16,
        Node::Capture(s) | Node::Star(s, _) | Node::Plus(s, _) | Node::Quest(s, _) => 1 + weight(s),
        Node::Repeat(s, min, max, _) => {
            let times = if *max >= 0 { *max } else { *min }.max(1) as u64;
            1 + times.saturating_mul(weight(s))
        }
        Node::Concat(v) | Node::Alt(v) => v.iter().map(weight).fold(0, u64::saturating_add),
        _ => 1,
    };
    w.max(1)
}

pub(super) fn height(n: &Node) -> usize {
    1 + children(n).into_iter().map(height).max().unwrap_or(0)
}

/// Writes the `regex` crate equivalent of a node.
pub(super) fn emit(n: &Node, out: &mut String) {
    match n {
        Node::Empty => out.push_str("(?:)"),
        Node::Lit(c, fold) => {
            if *fold {
                out.push_str("(?i:");
            }
            let _ = write!(out, "\\x{{{:X}}}", *c as u32);
            if *fold {
                out.push(')');
            }
        }
        Node::Class(c) => {
            if c.fold {
                out.push_str("(?i:");
            }
            out.push('[');
            if c.negated {
                out.push('^');
            }
            for item in &c.items {
                match item {
                    ClassItem::Range(lo, hi) => {
                        let _ = write!(out, "\\x{{{:X}}}-\\x{{{:X}}}", *lo as u32, *hi as u32);
                    }
                    ClassItem::Set(body, negated) => {
                        out.push('[');
                        if *negated {
                            out.push('^');
                        }
                        out.push_str(body);
                        out.push(']');
                    }
                }
            }
            if c.items.is_empty() && !c.negated {
                // `[]` cannot be written: a class that matches nothing
                out.push_str("^\\x{0}-\\x{10FFFF}");
            }
            out.push(']');
            if c.fold {
                out.push(')');
            }
        }
        Node::AnyNotNl => out.push_str("[^\\n]"),
        Node::Any => out.push_str("[\\x{0}-\\x{10FFFF}]"),
        Node::BeginLine => out.push_str("(?m:^)"),
        Node::EndLine => out.push_str("(?m:$)"),
        Node::BeginText => out.push_str("\\A"),
        Node::EndText => out.push_str("\\z"),
        Node::WordBoundary => out.push_str("(?-u:\\b)"),
        Node::NoWordBoundary => out.push_str("(?-u:\\B)"),
        Node::Capture(s) => {
            out.push_str("(?:");
            emit(s, out);
            out.push(')');
        }
        Node::Star(s, greedy) | Node::Plus(s, greedy) | Node::Quest(s, greedy) => {
            out.push_str("(?:");
            emit(s, out);
            out.push(')');
            out.push(match n {
                Node::Star(..) => '*',
                Node::Plus(..) => '+',
                _ => '?',
            });
            if !greedy {
                out.push('?');
            }
        }
        Node::Repeat(s, min, max, greedy) => {
            out.push_str("(?:");
            emit(s, out);
            out.push(')');
            if *max == -1 {
                let _ = write!(out, "{{{min},}}");
            } else {
                let _ = write!(out, "{{{min},{max}}}");
            }
            if !greedy {
                out.push('?');
            }
        }
        Node::Concat(v) => {
            out.push_str("(?:");
            for s in v {
                emit(s, out);
            }
            out.push(')');
        }
        Node::Alt(v) => {
            out.push_str("(?:");
            for (i, s) in v.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(s, out);
            }
            out.push(')');
        }
    }
}
