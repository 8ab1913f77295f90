//! Our tree as the parser builds it, node by node from the leaves up: each node's kind, its
//! span in the rule text (see [`span`](super::span)) and the depth of the `cel` crate's tree
//! of the same expression (the recursion limit's measure). Names are left to
//! [`resolve`](super::resolve): an identifier is a [`Kind::Name`], and a comprehension's
//! variables are places in [`Builder::names`].

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use super::span::{NO_SPAN, Text, union};
use super::*;
use crate::core::cel::CompileError;
use crate::core::cel::decls;

/// A node built, with the depth of the crate's tree under it (a leaf is 1).
#[derive(Debug)]
pub(crate) struct Sub {
    pub node: Node,
    pub depth: u32,
}

/// Builds the nodes of one rule.
pub(crate) struct Builder<'s> {
    pub text: Text<'s>,
    pub strings_ext: bool,
    /// The names of the comprehensions' variables, in the order given.
    pub names: Vec<Name>,
    /// Errors cel-go's parser reports that the `cel` crate's does not.
    pub errors: Vec<CompileError>,
}

fn deeper<'a>(subs: impl IntoIterator<Item = &'a Sub>) -> u32 {
    1 + subs.into_iter().map(|s| s.depth).max().unwrap_or(0)
}

impl<'s> Builder<'s> {
    pub fn new(source: &'s str, strings_ext: bool) -> Self {
        Builder {
            text: Text(source),
            strings_ext,
            names: Vec::new(),
            errors: Vec::new(),
        }
    }

    pub fn name_text<'a>(&'a self, name: &'a Name) -> &'a str {
        name.text(self.text.0)
    }

    /// A leaf at `own`: a literal, an identifier or a message.
    pub fn leaf(&self, own: Option<Range<usize>>, kind: Kind) -> Sub {
        let span = self
            .text
            .finish(own.clone().unwrap_or(NO_SPAN), own.as_ref());
        Sub {
            node: Node {
                span,
                kind,
                scalar: false,
            },
            depth: 1,
        }
    }

    pub fn select(&self, own: Option<Range<usize>>, operand: Sub, field: &str, test: bool) -> Sub {
        let depth = operand.depth;
        self.selection(own, Box::new(operand.node), depth, Arc::from(field), test)
    }

    /// A selection from a boxed operand of depth `depth`.
    pub fn selection(
        &self,
        own: Option<Range<usize>>,
        operand: Box<Node>,
        depth: u32,
        field: Arc<str>,
        test: bool,
    ) -> Sub {
        let span = self
            .text
            .select(operand.span.clone(), own.as_ref(), &field, test);
        let span = self.text.finish(span, own.as_ref());
        Sub {
            depth: depth + 1,
            node: Node {
                span,
                scalar: false,
                kind: Kind::Select {
                    operand,
                    field,
                    test,
                },
            },
        }
    }

    /// A call of `function` (a method when `target` is given), or of the string extension's
    /// namespaced function the target and the name spell (`strings.quote(x)`).
    pub fn call(
        &self,
        own: Option<Range<usize>>,
        function: &str,
        target: Option<Sub>,
        args: impl IntoIterator<Item = Sub>,
    ) -> Sub {
        let mut depth = target.as_ref().map_or(0, |t| t.depth);
        let args: Vec<Node> = args
            .into_iter()
            .map(|a| {
                depth = depth.max(a.depth);
                a.node
            })
            .collect();
        let depth = depth + 1;
        let qualified = match &target {
            Some(t) if self.strings_ext => t
                .node
                .qualified(self.text.0)
                .map(|segs| format!("{}.{function}", segs.join(".")))
                .filter(|q| decls::STRING_FUNCTIONS.contains_key(q.as_str())),
            _ => None,
        };
        let (target, function) = match qualified {
            Some(q) => (None, Cow::Owned(q)),
            None => (target.map(|t| Box::new(t.node)), Cow::Borrowed(function)),
        };
        let mut span = own.clone().unwrap_or(NO_SPAN);
        if let Some(t) = &target {
            span = union(&span, &t.span);
        }
        for a in &args {
            span = union(&span, &a.span);
        }
        let func = Func::from_name(&function, self.strings_ext);
        let is_fn_syntax = !function.starts_with('_')
            && !function.starts_with('@')
            && function != "!_"
            && function != "-_";
        if is_fn_syntax {
            // the parser places a global call at its `(`: the name is part of it
            if target.is_none() && span.start <= span.end {
                let before = self.text.0[..span.start].trim_end();
                if before.ends_with(&*function) {
                    span.start = before.len() - function.len();
                }
            }
            span.end = self.text.close(span.end, b')');
        } else if func == Func::Index {
            span.end = self.text.close(span.end, b']');
        }
        let regex = if func == Func::Matches {
            let pattern = if target.is_some() {
                args.first()
            } else {
                args.get(1)
            };
            match pattern.map(|p| &p.kind) {
                Some(Kind::Lit(Value::String(p))) => Some(crate::core::cel::regex::cached(p).0),
                _ => None,
            }
        } else {
            None
        };
        let name = match func.name() {
            Some(known) => Cow::Borrowed(known),
            None => Cow::Owned(function.into_owned()),
        };
        Sub {
            depth,
            node: Node {
                span: self.text.finish(span, own.as_ref()),
                scalar: false,
                kind: Kind::Call {
                    func,
                    name,
                    target,
                    args,
                    regex,
                    guard: None,
                    overload: None,
                },
            },
        }
    }

    pub fn list(&self, own: Option<Range<usize>>, items: impl IntoIterator<Item = Sub>) -> Sub {
        let mut depth = 0;
        let mut span = own.clone().unwrap_or(NO_SPAN);
        let items: Vec<Node> = items
            .into_iter()
            .map(|a| {
                depth = depth.max(a.depth);
                span = union(&span, &a.node.span);
                a.node
            })
            .collect();
        span.end = self.text.close(span.end, b']');
        Sub {
            depth: depth + 1,
            node: Node {
                span: self.text.finish(span, own.as_ref()),
                kind: Kind::List(items),
                scalar: false,
            },
        }
    }

    /// A map literal; the crate's tree has each entry's key and value as children of the map.
    pub fn map(
        &self,
        own: Option<Range<usize>>,
        entries: impl IntoIterator<Item = (Sub, Sub)>,
    ) -> Sub {
        let mut depth = 0;
        let mut span = own.clone().unwrap_or(NO_SPAN);
        let entries: Vec<(Node, Node)> = entries
            .into_iter()
            .map(|(k, v)| {
                depth = depth.max(k.depth).max(v.depth);
                span = union(&span, &k.node.span);
                span = union(&span, &v.node.span);
                (k.node, v.node)
            })
            .collect();
        span.end = self.text.close(span.end, b'}');
        Sub {
            depth: depth + 1,
            node: Node {
                span: self.text.finish(span, own.as_ref()),
                kind: Kind::Map(entries),
                scalar: false,
            },
        }
    }

    /// A message: an error in these environments whatever its fields, which are only
    /// measured.
    pub fn message(&self, own: Option<Range<usize>>, type_name: String, values: &[Sub]) -> Sub {
        let mut leaf = self.leaf(own, Kind::Struct(type_name));
        leaf.depth = deeper(values);
        leaf
    }

    /// A macro's comprehension over `range` with the variable `iter_var` and the
    /// accumulator `accu_var`.
    pub fn comprehension(
        &mut self,
        own: Option<Range<usize>>,
        range: Sub,
        iter_var: Name,
        accu_var: Name,
        [accu_init, loop_cond, loop_step, result]: [Sub; 4],
    ) -> Sub {
        let depth = deeper([&range, &accu_init, &loop_cond, &loop_step, &result]);
        let mut span = own.clone().unwrap_or(NO_SPAN);
        for n in [&range, &loop_step, &result] {
            span = union(&span, &n.node.span);
        }
        span.end = self.text.close(span.end, b')');
        let iter_var = self.place(iter_var);
        let accu_var = self.place(accu_var);
        Sub {
            depth,
            node: Node {
                span: self.text.finish(span, own.as_ref()),
                scalar: false,
                kind: Kind::Comprehension(Box::new(Comprehension {
                    range: range.node,
                    iter_var,
                    iter_var2: None,
                    accu_var,
                    accu_init: accu_init.node,
                    loop_cond: loop_cond.node,
                    loop_step: loop_step.node,
                    result: result.node,
                })),
            },
        }
    }

    fn place(&mut self, name: Name) -> usize {
        self.names.push(name);
        self.names.len() - 1
    }
}
