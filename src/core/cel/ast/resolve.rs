//! Names resolved in the tree the parser built, in place: identifiers to the slots of the
//! declared variables and of the comprehensions' variables in scope (or to type names),
//! dotted declared names, and chains of selections from a declared variable made into
//! paths. One walk from the root, scopes as they open and close.

use std::ops::Range;
use std::sync::Arc;

use super::span::Text;
use super::*;
use crate::core::cel::decls;

/// Resolves the names of a tree. `declared` are the declared variables (slot = index).
pub(crate) struct Resolver<'s> {
    text: Text<'s>,
    names: &'s [Name],
    declared: &'s [(String, CelType)],
    scopes: Vec<(&'s str, usize)>,
    pub slot_count: usize,
    /// Whether paths from declared variables are made here (see
    /// [`Resolver::declared_path`]); otherwise [`fuse_paths`] makes them after the check.
    pub direct_paths: bool,
}

/// A placeholder for a node being moved.
const HOLE: Kind = Kind::Struct(String::new());

impl<'s> Resolver<'s> {
    pub fn new(source: &'s str, names: &'s [Name], declared: &'s [(String, CelType)]) -> Self {
        Resolver {
            text: Text(source),
            names,
            declared,
            scopes: Vec::new(),
            slot_count: declared.len(),
            direct_paths: true,
        }
    }

    fn text_of<'a>(&self, name: &'a Name) -> &'a str
    where
        's: 'a,
    {
        name.text(self.text.0)
    }

    fn resolve_name(&self, name: &str) -> Option<usize> {
        if let Some((_, slot)) = self.scopes.iter().rev().find(|(n, _)| *n == name) {
            return Some(*slot);
        }
        self.declared.iter().position(|(d, _)| d == name)
    }

    /// The root name of a chain of selections without `has()`, and the chain's length.
    fn root_of<'a>(&self, mut n: &'a Node) -> Option<(&'a Name, usize)> {
        let mut len = 0;
        loop {
            match &n.kind {
                Kind::Name(name) => return Some((name, len)),
                Kind::Select {
                    operand,
                    test: false,
                    ..
                } => {
                    len += 1;
                    n = operand;
                }
                _ => return None,
            }
        }
    }

    /// Whether a selection `a.b...` could spell a dotted declared name or a dotted type name
    /// (`google.protobuf.Timestamp`): only if its root is the first segment of one. Found
    /// without allocating, so that the names are built only then.
    fn may_name_a_dotted_declaration(&self, n: &Node) -> bool {
        let Some((root, _)) = self.root_of(n) else {
            return false;
        };
        let root = self.text_of(root);
        root == "google"
            || self.declared.iter().any(|(d, _)| {
                d.strip_prefix(root)
                    .is_some_and(|rest| rest.starts_with('.'))
            })
    }

    /// The span of a dotted name `a.b.c`: from the first name's token to the last field,
    /// and the parentheses around that.
    fn dotted_span(&self, n: &Node, last: &str) -> Range<usize> {
        let source = self.text.0;
        let mut root = n;
        while let Kind::Select { operand, .. } = &root.kind {
            root = operand;
        }
        let start = root.span.start
            + source[root.span.start..]
                .bytes()
                .take_while(|b| *b == b'(' || b.is_ascii_whitespace())
                .count();
        let mut end = n.span.end.min(source.len());
        while end > start && !source[start..end].ends_with(last) {
            end -= 1;
        }
        self.text.parenthesized(start..end)
    }

    pub fn resolve(&mut self, n: &mut Node) {
        match &mut n.kind {
            Kind::Name(name) => {
                let name = name.text(self.text.0);
                n.kind = self.ident_kind(name);
            }
            Kind::Select { test, .. } => {
                let test = *test;
                if !test && self.may_name_a_dotted_declaration(n) {
                    // A declared variable with a dotted name wins over field selection.
                    if let Some(segs) = n.qualified(self.text.0)
                        && !self.scopes.iter().any(|(s, _)| *s == segs[0])
                    {
                        let full = segs.join(".");
                        let last = segs[segs.len() - 1];
                        if let Some(slot) = self.declared.iter().position(|(d, _)| *d == full) {
                            n.span = self.dotted_span(n, last);
                            n.kind = Kind::Var(slot);
                            return;
                        }
                        if let Some((tv, t)) = decls::type_ident(&full) {
                            n.span = self.dotted_span(n, last);
                            n.kind = Kind::TypeIdent(tv, t);
                            return;
                        }
                    }
                }
                if !test && self.direct_paths && self.declared_path(n) {
                    return;
                }
                if let Kind::Select { operand, .. } = &mut n.kind {
                    self.resolve(operand);
                }
            }
            Kind::Call { target, args, .. } => {
                if let Some(t) = target {
                    self.resolve(t);
                }
                for a in args {
                    self.resolve(a);
                }
            }
            Kind::List(items) => items.iter_mut().for_each(|i| self.resolve(i)),
            Kind::Map(entries) => {
                for (k, v) in entries {
                    self.resolve(k);
                    self.resolve(v);
                }
            }
            Kind::Comprehension(c) => {
                self.resolve(&mut c.range);
                self.resolve(&mut c.accu_init);
                let names = self.names;
                let text = self.text.0;
                c.accu_var = self.new_slot(names[c.accu_var].text(text));
                c.iter_var = self.new_slot(names[c.iter_var].text(text));
                if let Some(v2) = c.iter_var2 {
                    c.iter_var2 = Some(self.new_slot(names[v2].text(text)));
                }
                self.resolve(&mut c.loop_cond);
                self.resolve(&mut c.loop_step);
                // the result sees the accumulator but not the iteration variables
                self.scopes.pop();
                if c.iter_var2.is_some() {
                    self.scopes.pop();
                }
                self.resolve(&mut c.result);
                self.scopes.pop();
            }
            Kind::Lit(_)
            | Kind::TypeIdent(..)
            | Kind::Var(_)
            | Kind::Unresolved(_)
            | Kind::Path { .. }
            | Kind::InSet { .. }
            | Kind::Struct(_) => {}
        }
    }

    /// `v.f1.f2...` (no `has()`) from a declared variable whose type lets every selection
    /// through (maps and `dyn`, as `self` and `obj` are): made the path node that checking
    /// the selections one by one and then [`fuse_paths`] would make, with the same span.
    /// False for any other expression.
    fn declared_path(&mut self, n: &mut Node) -> bool {
        let Some((root, len)) = self.root_of(n) else {
            return false;
        };
        let slot = self
            .resolve_name(self.text_of(root))
            .filter(|slot| *slot < self.declared.len());
        let selectable = slot.is_some_and(|slot| {
            let mut t = &self.declared[slot].1;
            (0..len).all(|_| match t {
                CelType::Map(_, v) => {
                    t = v;
                    true
                }
                CelType::Dyn => true,
                _ => false,
            })
        });
        let (Some(slot), true) = (slot, selectable && !self.may_name_a_dotted_declaration(n))
        else {
            return false;
        };
        let mut fields: Vec<Arc<str>> = Vec::with_capacity(len);
        let mut cur = std::mem::replace(&mut n.kind, HOLE);
        while let Kind::Select { operand, field, .. } = cur {
            fields.push(field);
            cur = operand.kind;
        }
        fields.reverse();
        n.kind = Kind::path(slot, fields.into_boxed_slice());
        true
    }

    fn new_slot(&mut self, name: &'s str) -> usize {
        let slot = self.slot_count;
        self.slot_count += 1;
        self.scopes.push((name, slot));
        slot
    }

    fn ident_kind(&self, name: &str) -> Kind {
        if let Some(slot) = self.resolve_name(name) {
            return Kind::Var(slot);
        }
        if let Some((tv, t)) = decls::type_ident(name) {
            return Kind::TypeIdent(tv, t);
        }
        Kind::Unresolved(name.to_string())
    }
}
