//! The parser's tree: the `cel` crate's parsed AST (its nodes, ids and offsets) kept flat.
//! Every node is an entry of one vector, its id the entry's place plus one; the lists of
//! children (arguments, elements, entries) are ranges of one more vector. A parse thus
//! allocates a few vectors, not a box or a string per node, and the tree goes in one free.

use crate::core::cel::value::Value;

/// A node's id: its place in [`Tree::nodes`] plus one (the crate's ids start at 1).
pub(crate) type Id = u32;

/// A range of [`Tree::lists`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct List {
    pub start: u32,
    pub end: u32,
}

/// A name: a slice of the rule text, or a name the parser made.
#[derive(Clone, Debug)]
pub(crate) enum Name {
    Src(u32, u32),
    Static(&'static str),
    Owned(Box<str>),
}

#[derive(Debug)]
pub(crate) struct PNode {
    /// The first byte and the end of the token the node is placed at (the crate's offsets,
    /// end exclusive), if placed.
    pub at: Option<(u32, u32)>,
    pub kind: PKind,
}

#[derive(Debug)]
pub(crate) enum PKind {
    /// Not made yet (an id is given before its node is known), or given up by a macro.
    Unspecified,
    Lit(Value),
    Ident(Name),
    Select {
        operand: Id,
        field: Name,
        test: bool,
    },
    Call {
        func: Name,
        target: Option<Id>,
        args: List,
    },
    List(List),
    /// The entries, each a [`PKind::MapEntry`] of its own id.
    Map(List),
    /// A message: its type name and its fields, each a [`PKind::Field`] of its own id.
    Struct {
        type_name: Box<str>,
        fields: List,
    },
    MapEntry {
        key: Id,
        value: Id,
    },
    Field {
        /// Read only by the tests' comparisons with the crate's tree: a message is an error
        /// in these environments, whatever its fields.
        #[cfg_attr(not(test), allow(dead_code))]
        name: Name,
        value: Id,
    },
    Comprehension(Box<Comprehension>),
}

#[derive(Debug)]
pub(crate) struct Comprehension {
    pub iter_range: Id,
    pub iter_var: Name,
    pub iter_var2: Option<Name>,
    pub accu_var: Name,
    pub accu_init: Id,
    pub loop_cond: Id,
    pub loop_step: Id,
    pub result: Id,
}

impl Comprehension {
    /// The range, the accumulator's start, the loop's condition and step, and the result.
    pub fn parts(&self) -> [Id; 5] {
        [
            self.iter_range,
            self.accu_init,
            self.loop_cond,
            self.loop_step,
            self.result,
        ]
    }
}

/// A parsed rule: its nodes, the lists of their children, and the root.
#[derive(Debug)]
pub(crate) struct Tree<'s> {
    pub source: &'s str,
    pub nodes: Vec<PNode>,
    pub lists: Vec<Id>,
    pub root: Id,
}

impl<'s> Tree<'s> {
    pub fn new(source: &'s str) -> Self {
        Tree {
            source,
            nodes: Vec::new(),
            lists: Vec::new(),
            root: 0,
        }
    }

    pub fn node(&self, id: Id) -> &PNode {
        &self.nodes[id as usize - 1]
    }

    pub fn node_mut(&mut self, id: Id) -> &mut PNode {
        &mut self.nodes[id as usize - 1]
    }

    pub fn kind(&self, id: Id) -> &PKind {
        &self.node(id).kind
    }

    /// A new node.
    pub fn push(&mut self, at: Option<(u32, u32)>, kind: PKind) -> Id {
        self.nodes.push(PNode { at, kind });
        self.nodes.len() as Id
    }

    pub fn list(&self, l: List) -> &[Id] {
        &self.lists[l.start as usize..l.end as usize]
    }

    /// A new list of these ids.
    pub fn make_list(&mut self, ids: &[Id]) -> List {
        let start = self.lists.len() as u32;
        self.lists.extend_from_slice(ids);
        List {
            start,
            end: self.lists.len() as u32,
        }
    }

    pub fn name<'a>(&'a self, name: &'a Name) -> &'a str {
        match name {
            Name::Src(s, e) => &self.source[*s as usize..*e as usize],
            Name::Static(s) => s,
            Name::Owned(s) => s,
        }
    }

    /// The depth of the tree from its root (a leaf is 1), without recursion.
    pub fn depth(&self) -> usize {
        let mut max = 0;
        let mut stack = Vec::with_capacity(self.nodes.len().min(256));
        stack.push((self.root, 1usize));
        while let Some((id, d)) = stack.pop() {
            max = max.max(d);
            self.for_each_child(id, |c| stack.push((c, d + 1)));
        }
        max
    }

    /// The children of a node, as the crate's tree has them (an entry's key and value are
    /// children of the map, a field's value of the message).
    fn for_each_child(&self, id: Id, mut f: impl FnMut(Id)) {
        match self.kind(id) {
            PKind::Select { operand, .. } => f(*operand),
            PKind::Call { target, args, .. } => {
                target.iter().for_each(|t| f(*t));
                self.list(*args).iter().for_each(|a| f(*a));
            }
            PKind::List(items) => self.list(*items).iter().for_each(|a| f(*a)),
            PKind::Map(entries)
            | PKind::Struct {
                fields: entries, ..
            } => {
                for e in self.list(*entries) {
                    match self.kind(*e) {
                        PKind::MapEntry { key, value } => {
                            f(*key);
                            f(*value);
                        }
                        PKind::Field { value, .. } => f(*value),
                        _ => {}
                    }
                }
            }
            PKind::Comprehension(c) => c.parts().into_iter().for_each(f),
            _ => {}
        }
    }
}

/// The tree of the `cel` crate's parse (for a rule only the crate's parser accepts).
pub(crate) mod from_crate {
    use ::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue, SourceInfo};

    use super::*;

    /// The same nodes, ids and offsets (the crate's ids are dense from 1 in its trees).
    pub(crate) fn tree<'s>(source: &'s str, expr: &IdedExpr, info: &SourceInfo) -> Tree<'s> {
        let mut tree = Tree::new(source);
        tree.root = add(&mut tree, expr, info);
        tree
    }

    fn place(tree: &mut Tree, id: u64, info: &SourceInfo) -> Id {
        let at = info
            .offset_for(id)
            .and_then(|(s, e)| Some((s, e.checked_add(1)?)));
        let id = Id::try_from(id).unwrap_or(0).max(1);
        while tree.nodes.len() < id as usize {
            tree.nodes.push(PNode {
                at: None,
                kind: PKind::Unspecified,
            });
        }
        tree.node_mut(id).at = at;
        id
    }

    fn name(s: &str) -> Name {
        Name::Owned(s.into())
    }

    fn add(tree: &mut Tree, e: &IdedExpr, info: &SourceInfo) -> Id {
        let id = place(tree, e.id, info);
        let kind = match &e.expr {
            Expr::Unspecified => PKind::Unspecified,
            Expr::Literal(l) => PKind::Lit(match l {
                LiteralValue::Boolean(b) => Value::Bool(*b.inner()),
                LiteralValue::Int(i) => Value::Int(*i.inner()),
                LiteralValue::UInt(u) => Value::Uint(*u.inner()),
                LiteralValue::Double(d) => Value::Double(*d.inner()),
                LiteralValue::Null => Value::Null,
                LiteralValue::String(s) => Value::string(s.inner()),
                LiteralValue::Bytes(b) => Value::Bytes(std::sync::Arc::from(b.inner())),
            }),
            Expr::Ident(n) => PKind::Ident(name(n)),
            Expr::Select(s) => PKind::Select {
                operand: add(tree, &s.operand, info),
                field: name(&s.field),
                test: s.test,
            },
            Expr::Call(c) => {
                let target = c.target.as_ref().map(|t| add(tree, t, info));
                let args: Vec<Id> = c.args.iter().map(|a| add(tree, a, info)).collect();
                PKind::Call {
                    func: name(&c.func_name),
                    target,
                    args: tree.make_list(&args),
                }
            }
            // Optional elements and entries (a syntax our parser does not take) have no
            // node of ours.
            Expr::List(l) if !l.optional_indices.is_empty() => PKind::Unspecified,
            Expr::List(l) => {
                let items: Vec<Id> = l.elements.iter().map(|a| add(tree, a, info)).collect();
                PKind::List(tree.make_list(&items))
            }
            Expr::Map(m) => {
                let entries: Vec<Id> = m.entries.iter().map(|en| entry(tree, en, info)).collect();
                PKind::Map(tree.make_list(&entries))
            }
            Expr::Struct(s) => {
                let fields: Vec<Id> = s.entries.iter().map(|en| entry(tree, en, info)).collect();
                PKind::Struct {
                    type_name: s.type_name.as_str().into(),
                    fields: tree.make_list(&fields),
                }
            }
            Expr::Comprehension(c) => {
                let iter_range = add(tree, &c.iter_range, info);
                let accu_init = add(tree, &c.accu_init, info);
                let loop_cond = add(tree, &c.loop_cond, info);
                let loop_step = add(tree, &c.loop_step, info);
                let result = add(tree, &c.result, info);
                PKind::Comprehension(Box::new(Comprehension {
                    iter_range,
                    iter_var: name(&c.iter_var),
                    iter_var2: c.iter_var2.as_deref().map(name),
                    accu_var: name(&c.accu_var),
                    accu_init,
                    loop_cond,
                    loop_step,
                    result,
                }))
            }
        };
        tree.node_mut(id).kind = kind;
        id
    }

    fn entry(tree: &mut Tree, en: &::cel::common::ast::IdedEntryExpr, info: &SourceInfo) -> Id {
        let id = place(tree, en.id, info);
        let kind = match &en.expr {
            EntryExpr::MapEntry(me) if me.optional => PKind::Unspecified,
            EntryExpr::StructField(f) if f.optional => PKind::Unspecified,
            EntryExpr::MapEntry(me) => PKind::MapEntry {
                key: add(tree, &me.key, info),
                value: add(tree, &me.value, info),
            },
            EntryExpr::StructField(f) => PKind::Field {
                name: name(&f.field),
                value: add(tree, &f.value, info),
            },
        };
        tree.node_mut(id).kind = kind;
        id
    }
}

#[cfg(test)]
impl Tree<'_> {
    /// The tree from its root, with every node's id and offsets: equal for equal trees
    /// whatever their names' storage and their unreachable nodes.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        self.dump_node(self.root, &mut out);
        out
    }

    fn dump_node(&self, id: Id, out: &mut String) {
        use std::fmt::Write;
        let n = self.node(id);
        let _ = write!(out, "#{id}@{:?} ", n.at);
        let list = |t: &Self, l: &List, out: &mut String| {
            out.push('[');
            for c in t.list(*l) {
                t.dump_node(*c, out);
                out.push(',');
            }
            out.push(']');
        };
        match &n.kind {
            PKind::Unspecified => out.push_str("unspecified"),
            PKind::Lit(v) => {
                let _ = write!(out, "{v:?}");
            }
            PKind::Ident(name) => {
                let _ = write!(out, "ident {:?}", self.name(name));
            }
            PKind::Select {
                operand,
                field,
                test,
            } => {
                let _ = write!(out, "select {:?} test={test} (", self.name(field));
                self.dump_node(*operand, out);
                out.push(')');
            }
            PKind::Call { func, target, args } => {
                let _ = write!(out, "call {:?} (", self.name(func));
                if let Some(t) = target {
                    self.dump_node(*t, out);
                }
                out.push_str(") ");
                list(self, args, out);
            }
            PKind::List(items) => {
                out.push_str("list ");
                list(self, items, out);
            }
            PKind::Map(entries) => {
                out.push_str("map ");
                list(self, entries, out);
            }
            PKind::Struct { type_name, fields } => {
                let _ = write!(out, "struct {type_name:?} ");
                list(self, fields, out);
            }
            PKind::MapEntry { key, value } => {
                out.push_str("entry (");
                self.dump_node(*key, out);
                out.push_str(") (");
                self.dump_node(*value, out);
                out.push(')');
            }
            PKind::Field { name, value } => {
                let _ = write!(out, "field {:?} (", self.name(name));
                self.dump_node(*value, out);
                out.push(')');
            }
            PKind::Comprehension(c) => {
                let _ = write!(
                    out,
                    "comprehension {:?} {:?} {:?} (",
                    self.name(&c.iter_var),
                    c.iter_var2.as_ref().map(|n| self.name(n)),
                    self.name(&c.accu_var)
                );
                for x in c.parts() {
                    self.dump_node(x, out);
                    out.push(';');
                }
                out.push(')');
            }
        }
    }
}
