//! The byte span each node of our tree covers in the rule text: its token's offsets, its
//! children's spans, the closing bracket of a call, list or map, and the parentheses around
//! it. A node's span is a function of the rule text and of its children's, so the parser
//! gives each node its span as it builds it.

use std::ops::Range;

/// The span of a node with no known source position (empty and reversed).
#[allow(clippy::reversed_empty_ranges)]
pub(crate) const NO_SPAN: Range<usize> = usize::MAX..0;

pub fn union(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    if a.start > a.end {
        return b.clone();
    }
    if b.start > b.end {
        return a.clone();
    }
    a.start.min(b.start)..a.end.max(b.end)
}

/// The rule text spans are measured in.
#[derive(Clone, Copy)]
pub(crate) struct Text<'s>(pub &'s str);

impl<'s> Text<'s> {
    pub fn skip_ws(self, mut i: usize) -> usize {
        let b = self.0.as_bytes();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    }

    /// Extends `end` over an expected closing character after optional whitespace.
    pub fn close(self, end: usize, c: u8) -> usize {
        let i = self.skip_ws(end);
        if self.0.as_bytes().get(i) == Some(&c) {
            i + 1
        } else {
            end
        }
    }

    /// A node's span from what its kind covers: with its own offsets, and the parentheses
    /// around it.
    pub fn finish(self, span: Range<usize>, own: Option<&Range<usize>>) -> Range<usize> {
        let span = match own {
            Some(own) => union(&span, own),
            None => span,
        };
        self.parenthesized(span)
    }

    /// The span of a sub-expression with the parentheses around it: `(a || b)` is the text
    /// of the `||` in `(a || b) && c`, not `a || b`. A `(` after a name opens a call's
    /// arguments, not a group (but `x in (y)` groups).
    pub fn parenthesized(self, mut span: Range<usize>) -> Range<usize> {
        let source = self.0;
        let b = source.as_bytes();
        if span.end > b.len() || span.start > span.end {
            return span;
        }
        loop {
            let before = source[..span.start].trim_end();
            let after = source[span.end..].trim_start();
            if !before.ends_with('(') || !after.starts_with(')') {
                return span;
            }
            let open = before.len() - 1;
            let ahead = source[..open].trim_end();
            let ident = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'`';
            // `in (` groups: `in` is an operator unless it ends a longer name or a field
            let in_operator = ahead.strip_suffix("in").is_some_and(|rest| {
                !rest
                    .as_bytes()
                    .last()
                    .is_some_and(|c| ident(c) || *c == b'.')
            });
            let called = !in_operator && ahead.as_bytes().last().is_some_and(ident);
            if called {
                return span;
            }
            span = open..source.len() - after.len() + 1;
        }
    }

    /// The span of a selection of `field` from an operand of span `operand`: over the
    /// operand, the selection's own offsets and the `.field` (and `has(` ... `)`).
    pub fn select(
        self,
        operand: Range<usize>,
        own: Option<&Range<usize>>,
        field: &str,
        test: bool,
    ) -> Range<usize> {
        let source = self.0;
        let mut span = operand.clone();
        if let Some(o) = own {
            span = union(&span, o);
        }
        // extend over `.field` (and `)` for has()).
        let mut end = span.end;
        let dot = match own {
            Some(o) if source.as_bytes().get(o.start) == Some(&b'.') => Some(o.start),
            _ => {
                let i = self.skip_ws(operand.end.min(source.len()));
                (source.as_bytes().get(i) == Some(&b'.')).then_some(i)
            }
        };
        if let Some(i) = dot {
            let j = self.skip_ws(i + 1);
            if source[j..].starts_with(field) {
                end = end.max(j + field.len());
            }
        }
        if test {
            end = self.close(end, b')');
            let before = source[..span.start.min(source.len())].trim_end();
            let before = before.strip_suffix('(').unwrap_or(before).trim_end();
            if let Some(b) = before.strip_suffix("has") {
                span.start = b.len();
            }
        }
        span.end = span.end.max(end);
        span
    }
}
