//! The conversion of the parser's tree: scopes and slots, literals, calls resolved to
//! [`Func`], map literals, macros, and each node's byte span.

use std::ops::Range;
use std::sync::Arc;

use super::*;
use crate::core::cel::decls;
use crate::core::cel::parse::tree::{Id, PKind, Tree};
use crate::core::cel::value::Value;
use crate::core::cel::{CompileError, CompileErrorKind};
use crate::core::fxhash::FxHasher;

/// The field names shared by the rules a thread compiles: at most this many, each at most
/// this long.
const MAX_SHARED_FIELDS: usize = 4096;
const MAX_SHARED_FIELD: usize = 64;

thread_local! {
    static FIELDS: std::cell::RefCell<
        std::collections::HashSet<Arc<str>, std::hash::BuildHasherDefault<FxHasher>>,
    > = std::cell::RefCell::new(Default::default());
}

/// Converts a parsed expression. `declared` are the declared variables (slot = index).
pub struct Converter<'s> {
    source: &'s str,
    tree: &'s Tree<'s>,
    declared: &'s [(String, CelType)],
    scopes: Vec<(&'s str, usize)>,
    pub slot_count: usize,
    strings_ext: bool,
    /// The chain of selections being fused into a path.
    chain: Vec<(Id, &'s str)>,
    /// Whether paths from declared variables are made here (see
    /// [`Converter::declared_path`]); otherwise [`fuse_paths`] makes them after the check.
    pub direct_paths: bool,
    /// Errors cel-go's parser reports that the `cel` crate's does not.
    pub errors: Vec<CompileError>,
}

impl<'s> Converter<'s> {
    pub fn new(tree: &'s Tree<'s>, declared: &'s [(String, CelType)], strings_ext: bool) -> Self {
        let slot_count = declared.len();
        Converter {
            source: tree.source,
            tree,
            declared,
            scopes: Vec::new(),
            slot_count,
            strings_ext,
            chain: Vec::new(),
            direct_paths: true,
            errors: Vec::new(),
        }
    }

    fn own_span(&self, id: Id) -> Option<Range<usize>> {
        self.tree.node(id).at.and_then(|(s, e)| {
            let (s, e) = (s as usize, e as usize);
            if s <= e
                && e <= self.source.len()
                && self.source.is_char_boundary(s)
                && self.source.is_char_boundary(e)
            {
                Some(s..e)
            } else {
                None
            }
        })
    }

    fn skip_ws(&self, mut i: usize) -> usize {
        let b = self.source.as_bytes();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    }

    /// Extends `end` over an expected closing character after optional whitespace.
    fn close(&self, end: usize, c: u8) -> usize {
        let i = self.skip_ws(end);
        if self.source.as_bytes().get(i) == Some(&c) {
            i + 1
        } else {
            end
        }
    }

    fn resolve_name(&self, name: &str) -> Option<usize> {
        if let Some((_, slot)) = self.scopes.iter().rev().find(|(n, _)| *n == name) {
            return Some(*slot);
        }
        self.declared.iter().position(|(d, _)| d == name)
    }

    /// Whether a selection `a.b...` could spell a dotted declared name or a dotted type name
    /// (`google.protobuf.Timestamp`): only if its root is the first segment of one. Found
    /// without allocating, so that the names are built only then.
    fn may_name_a_dotted_declaration(&self, e: Id) -> bool {
        let mut cur = e;
        let root = loop {
            match self.tree.kind(cur) {
                PKind::Ident(n) => break self.tree.name(n),
                PKind::Select {
                    operand,
                    test: false,
                    ..
                } => cur = *operand,
                _ => return false,
            }
        };
        root == "google"
            || self.declared.iter().any(|(d, _)| {
                d.strip_prefix(root)
                    .is_some_and(|rest| rest.starts_with('.'))
            })
    }

    fn qualified(&self, e: Id) -> Option<Vec<&'s str>> {
        let tree = self.tree;
        let mut segs = Vec::new();
        let mut cur = e;
        loop {
            match tree.kind(cur) {
                PKind::Ident(n) => {
                    segs.push(tree.name(n));
                    segs.reverse();
                    return Some(segs);
                }
                PKind::Select {
                    operand,
                    field,
                    test: false,
                } => {
                    segs.push(tree.name(field));
                    cur = *operand;
                }
                _ => return None,
            }
        }
    }

    /// Converts the tree from its root.
    pub fn convert_root(&mut self) -> Node {
        self.convert(self.tree.root)
    }

    fn convert(&mut self, e: Id) -> Node {
        let own = self.own_span(e);
        let mut node = self.convert_kind(e, own.clone());
        node.span = self.finish_span(node.span, own);
        node
    }

    /// What [`Converter::convert`] makes of a node's span: with its own offsets, and the
    /// parentheses around it.
    fn finish_span(&self, span: Range<usize>, own: Option<Range<usize>>) -> Range<usize> {
        let span = match own {
            Some(own) => union(&span, &own),
            None => span,
        };
        self.parenthesized(span)
    }

    /// A field name, shared with the selections of the same name made before by this
    /// thread (rules select the same few fields).
    fn field(name: &str) -> Arc<str> {
        FIELDS.with(|fields| {
            let mut fields = fields.borrow_mut();
            if let Some(f) = fields.get(name) {
                return f.clone();
            }
            let f: Arc<str> = Arc::from(name);
            if name.len() <= MAX_SHARED_FIELD {
                if fields.len() >= MAX_SHARED_FIELDS {
                    fields.clear();
                }
                fields.insert(f.clone());
            }
            f
        })
    }

    /// `v.f1.f2...` (no `has()`) from a declared variable whose type lets every selection
    /// through (maps and `dyn`, as `self` and `obj` are): the path node that checking the
    /// selections one by one and then [`fuse_paths`] would make, with the same span, made
    /// directly. None for any other expression.
    fn declared_path(&mut self, e: Id) -> Option<Node> {
        let tree = self.tree;
        self.chain.clear();
        let mut cur = e;
        let root = loop {
            match tree.kind(cur) {
                PKind::Select {
                    operand,
                    field,
                    test: false,
                } => {
                    self.chain.push((cur, tree.name(field)));
                    cur = *operand;
                }
                PKind::Ident(name) => break tree.name(name),
                _ => return None,
            }
        };
        let slot = self
            .resolve_name(root)
            .filter(|slot| *slot < self.declared.len());
        let selectable = slot.is_some_and(|slot| {
            let mut t = &self.declared[slot].1;
            self.chain.iter().all(|_| match t {
                CelType::Map(_, v) => {
                    t = v;
                    true
                }
                CelType::Dyn => true,
                _ => false,
            })
        });
        let (Some(slot), true) = (slot, selectable && !self.may_name_a_dotted_declaration(e))
        else {
            return None;
        };
        // The spans as the selections' conversions make them, from the variable out.
        let mut span = self.finish_span(NO_SPAN, self.own_span(cur));
        let mut fields = Vec::with_capacity(self.chain.len());
        for &(id, field) in self.chain.iter().rev() {
            let own = self.own_span(id);
            span = self.select_span_over(span, own.clone(), field, false);
            span = self.finish_span(span, own);
            fields.push(Self::field(field));
        }
        Some(Node {
            span,
            kind: Kind::path(slot, fields.into_boxed_slice()),
            scalar: false,
        })
    }

    /// The span of a selection of `field` from an operand of span `operand`: over the
    /// operand, the selection's own offsets and the `.field` (and `has(` ... `)`).
    fn select_span_over(
        &self,
        operand: Range<usize>,
        own: Option<Range<usize>>,
        field: &str,
        test: bool,
    ) -> Range<usize> {
        let mut span = operand.clone();
        if let Some(o) = &own {
            span = union(&span, o);
        }
        // extend over `.field` (and `)` for has()).
        let mut end = span.end;
        let dot = match &own {
            Some(o) if self.source.as_bytes().get(o.start) == Some(&b'.') => Some(o.start),
            _ => {
                let i = self.skip_ws(operand.end.min(self.source.len()));
                (self.source.as_bytes().get(i) == Some(&b'.')).then_some(i)
            }
        };
        if let Some(i) = dot {
            let j = self.skip_ws(i + 1);
            if self.source[j..].starts_with(field) {
                end = end.max(j + field.len());
            }
        }
        if test {
            end = self.close(end, b')');
            let before = self.source[..span.start.min(self.source.len())].trim_end();
            let before = before.strip_suffix('(').unwrap_or(before).trim_end();
            if let Some(b) = before.strip_suffix("has") {
                span.start = b.len();
            }
        }
        span.end = span.end.max(end);
        span
    }

    /// The span of a sub-expression with the parentheses around it: `(a || b)` is the text of
    /// the `||` in `(a || b) && c`, not `a || b`. A `(` after a name opens a call's
    /// arguments, not a group (but `x in (y)` groups).
    fn parenthesized(&self, mut span: Range<usize>) -> Range<usize> {
        let b = self.source.as_bytes();
        if span.end > b.len() || span.start > span.end {
            return span;
        }
        loop {
            let before = self.source[..span.start].trim_end();
            let after = self.source[span.end..].trim_start();
            if !before.ends_with('(') || !after.starts_with(')') {
                return span;
            }
            let open = before.len() - 1;
            let ahead = self.source[..open].trim_end();
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
            span = open..self.source.len() - after.len() + 1;
        }
    }

    fn leaf(&self, span: Option<Range<usize>>, kind: Kind) -> Node {
        Node {
            span: span.unwrap_or(NO_SPAN),
            kind,
            scalar: false,
        }
    }

    fn convert_kind(&mut self, e: Id, own: Option<Range<usize>>) -> Node {
        let tree = self.tree;
        match tree.kind(e) {
            PKind::Unspecified | PKind::MapEntry { .. } | PKind::Field { .. } => {
                self.leaf(own, Kind::Unresolved(String::new()))
            }
            PKind::Lit(v) => self.leaf(own, Kind::Lit(v.clone())),
            PKind::Ident(name) => {
                let kind = self.ident_kind(tree.name(name));
                self.leaf(own, kind)
            }
            &PKind::Select {
                operand,
                ref field,
                test,
            } => {
                let field = tree.name(field);
                if !test && self.may_name_a_dotted_declaration(e) {
                    // A declared variable with a dotted name wins over field selection.
                    if let Some(segs) = self.qualified(e) {
                        let full = segs.join(".");
                        if !self.scopes.iter().any(|(n, _)| *n == segs[0]) {
                            if let Some(slot) = self.declared.iter().position(|(d, _)| *d == full) {
                                let span = self.select_span(e);
                                return Node {
                                    span,
                                    kind: Kind::Var(slot),
                                    scalar: false,
                                };
                            }
                            if let Some((tv, t)) = decls::type_ident(&full) {
                                let span = self.select_span(e);
                                return Node {
                                    span,
                                    kind: Kind::TypeIdent(tv, t),
                                    scalar: false,
                                };
                            }
                        }
                    }
                }
                if !test
                    && self.direct_paths
                    && let Some(path) = self.declared_path(e)
                {
                    return path;
                }
                let operand = self.convert(operand);
                let span = self.select_span_over(operand.span.clone(), own, field, test);
                Node {
                    span,
                    scalar: false,
                    kind: Kind::Select {
                        operand: Box::new(operand),
                        field: Self::field(field),
                        test,
                    },
                }
            }
            &PKind::Call {
                ref func,
                target,
                args,
            } => {
                let func_name = tree.name(func);
                // `strings.quote(x)`: a namespaced function, not a method of `strings`.
                let qualified = match target {
                    Some(t) if self.strings_ext => self
                        .qualified(t)
                        .map(|segs| format!("{}.{}", segs.join("."), func_name))
                        .filter(|q| decls::STRING_FUNCTIONS.contains_key(q.as_str())),
                    _ => None,
                };
                let (target, func_name) = match qualified {
                    Some(q) => (None, std::borrow::Cow::Owned(q)),
                    None => (
                        target.map(|t| Box::new(self.convert(t))),
                        std::borrow::Cow::Borrowed(func_name),
                    ),
                };
                let args: Vec<Node> = tree.list(args).iter().map(|a| self.convert(*a)).collect();
                let mut span = own.clone().unwrap_or(NO_SPAN);
                if let Some(t) = &target {
                    span = union(&span, &t.span);
                }
                for a in &args {
                    span = union(&span, &a.span);
                }
                let func = Func::from_name(&func_name, self.strings_ext);
                let is_fn_syntax = !func_name.starts_with('_')
                    && !func_name.starts_with('@')
                    && func_name != "!_"
                    && func_name != "-_";
                if is_fn_syntax {
                    // the parser places a global call at its `(`: the name is part of it
                    if target.is_none() && span.start <= span.end {
                        let before = self.source[..span.start].trim_end();
                        if before.ends_with(&*func_name) {
                            span.start = before.len() - func_name.len();
                        }
                    }
                    span.end = self.close(span.end, b')');
                } else if func == Func::Index {
                    span.end = self.close(span.end, b']');
                }
                let regex = if func == Func::Matches {
                    let pat = if target.is_some() {
                        args.first()
                    } else {
                        args.get(1)
                    };
                    match pat.map(|p| &p.kind) {
                        Some(Kind::Lit(Value::String(p))) => {
                            Some(crate::core::cel::regex::cached(p).0)
                        }
                        _ => None,
                    }
                } else {
                    None
                };
                let name = match func.name() {
                    Some(known) => std::borrow::Cow::Borrowed(known),
                    None => std::borrow::Cow::Owned(func_name.into_owned()),
                };
                Node {
                    span,
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
                }
            }
            &PKind::List(items) => {
                let elems: Vec<Node> = tree.list(items).iter().map(|a| self.convert(*a)).collect();
                let mut span = own.clone().unwrap_or(NO_SPAN);
                for a in &elems {
                    span = union(&span, &a.span);
                }
                span.end = self.close(span.end, b']');
                Node {
                    span,
                    kind: Kind::List(elems),
                    scalar: false,
                }
            }
            &PKind::Map(list) => {
                let mut entries = Vec::new();
                let mut span = own.clone().unwrap_or(NO_SPAN);
                for en in tree.list(list) {
                    if let &PKind::MapEntry { key, value } = tree.kind(*en) {
                        let k = self.convert(key);
                        let v = self.convert(value);
                        span = union(&span, &k.span);
                        span = union(&span, &v.span);
                        entries.push((k, v));
                    }
                }
                span.end = self.close(span.end, b'}');
                Node {
                    span,
                    kind: Kind::Map(entries),
                    scalar: false,
                }
            }
            PKind::Struct { type_name, .. } => self.leaf(own, Kind::Struct(type_name.to_string())),
            PKind::Comprehension(c) => {
                let iter_var = tree.name(&c.iter_var);
                let iter_var2 = c.iter_var2.as_ref().map(|n| tree.name(n));
                if iter_var == "__result__" || iter_var2 == Some("__result__") {
                    // cel-go's macros refuse the traditional accumulator name.
                    let at = own.as_ref().map(|o| o.start).unwrap_or(0);
                    let pos = self.source[at.min(self.source.len())..]
                        .find("__result__")
                        .map(|i| at + i);
                    self.errors.push(CompileError {
                        message: "iteration variable overwrites accumulator variable".into(),
                        span: pos.map(|p| p..p + "__result__".len()),
                        kind: CompileErrorKind::Syntax,
                    });
                }
                let range = self.convert(c.iter_range);
                let accu_init = self.convert(c.accu_init);
                let accu_var = self.new_slot(tree.name(&c.accu_var));
                let iter_var = self.new_slot(iter_var);
                let iter_var2 = iter_var2.map(|n| self.new_slot(n));
                let loop_cond = self.convert(c.loop_cond);
                let loop_step = self.convert(c.loop_step);
                // the result sees the accumulator but not the iteration variables
                self.scopes.pop();
                if iter_var2.is_some() {
                    self.scopes.pop();
                }
                let result = self.convert(c.result);
                self.scopes.pop();
                let mut span = own.clone().unwrap_or(NO_SPAN);
                for n in [&range, &loop_step, &result] {
                    span = union(&span, &n.span);
                }
                span.end = self.close(span.end, b')');
                Node {
                    span,
                    scalar: false,
                    kind: Kind::Comprehension(Box::new(Comprehension {
                        range,
                        iter_var,
                        iter_var2,
                        accu_var,
                        accu_init,
                        loop_cond,
                        loop_step,
                        result,
                    })),
                }
            }
        }
    }

    fn select_span(&self, e: Id) -> Range<usize> {
        // union of all offsets in the select chain, extended over the last field
        let mut span = NO_SPAN;
        let mut cur = e;
        let mut last_field: Option<&str> = None;
        loop {
            if let Some(o) = self.own_span(cur) {
                span = union(&span, &o);
            }
            match self.tree.kind(cur) {
                PKind::Select { operand, field, .. } => {
                    if last_field.is_none() {
                        last_field = Some(self.tree.name(field));
                    }
                    cur = *operand;
                }
                _ => break,
            }
        }
        if let Some(f) = last_field {
            let i = self.skip_ws(span.end);
            if self.source[i.min(self.source.len())..].starts_with(f) {
                span.end = i + f.len();
            }
        }
        span
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
