//! The crate's own expression tree, converted once from the `cel` crate's parsed AST:
//! identifiers resolved to slots, literals turned into values, functions into an enum,
//! and each node given its byte span in the rule text.

use std::ops::Range;
use std::sync::Arc;

use ::cel::IdedExpr;
use ::cel::common::ast::{EntryExpr, Expr, LiteralValue, SourceInfo};

use super::decls::{self, Overload};
use super::regex::Compiled;
use super::types::CelType;
use super::value::{MapKey, TypeValue, Value};
use super::{CompileError, CompileErrorKind};

#[derive(Debug)]
pub struct Node {
    pub span: Range<usize>,
    pub kind: Kind,
    /// Set by the checker when the value is proven to be a number, bool, timestamp or
    /// duration (so `+` cannot be a concatenation).
    pub scalar: bool,
}

#[derive(Debug)]
pub enum Kind {
    Lit(Value),
    /// A type name such as `int`: the value and the type of that value.
    TypeIdent(TypeValue, CelType),
    /// A resolved variable slot.
    Var(usize),
    /// A name that resolves to nothing.
    Unresolved(String),
    Select {
        operand: Box<Node>,
        field: Arc<str>,
        test: bool,
    },
    Call {
        func: Func,
        name: String,
        target: Option<Box<Node>>,
        args: Vec<Node>,
        /// The compiled pattern of a `matches` call with a literal pattern.
        regex: Option<Result<Arc<Compiled>, String>>,
        /// The one overload the checker narrowed the call to, when the function binds each
        /// overload separately: a run-time value of another type is "no such overload".
        guard: Option<&'static Overload>,
        /// The index of the only overload the checker found for the call, if only one.
        overload: Option<u8>,
    },
    /// `v.f1.f2...`: a chain of field selections from a variable, walked in one step (it
    /// costs what the chain of nodes it replaces costs).
    Path {
        slot: usize,
        fields: Box<[Arc<str>]>,
        /// Cost units of comparing the long field names (one per 64 bytes).
        extra: u64,
    },
    /// `x in <constant list>` as cel-go's OptOptimize plans it: a lookup in a hash set.
    InSet {
        arg: Box<Node>,
        set: Arc<SetLookup>,
    },
    List(Vec<Node>),
    Map(Vec<(Node, Node)>),
    Comprehension(Box<Comprehension>),
    /// A message construction: no message types exist in this environment.
    Struct(String),
}

#[derive(Debug)]
pub struct Comprehension {
    pub range: Node,
    pub iter_var: usize,
    pub iter_var2: Option<usize>,
    pub accu_var: usize,
    pub accu_init: Node,
    pub loop_cond: Node,
    pub loop_step: Node,
    pub result: Node,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    And,
    Or,
    Not,
    Cond,
    NotStrictlyFalse,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Neg,
    Index,
    In,
    Size,
    Contains,
    StartsWith,
    EndsWith,
    Matches,
    TypeOf,
    ToInt,
    ToUint,
    ToDouble,
    ToString,
    ToBytes,
    ToBool,
    ToDyn,
    ToDuration,
    ToTimestamp,
    TimeField(&'static str),
    // The string extension (health rules).
    CharAt,
    IndexOf,
    LastIndexOf,
    LowerAscii,
    UpperAscii,
    Replace,
    Split,
    Substring,
    Trim,
    Join,
    Quote,
    Format,
    Reverse,
    Other,
}

impl Func {
    /// The function of a name; the string extension's only when `strings_ext`.
    pub fn from_name(name: &str, strings_ext: bool) -> Func {
        if strings_ext {
            let f = match name {
                "charAt" => Func::CharAt,
                "indexOf" => Func::IndexOf,
                "lastIndexOf" => Func::LastIndexOf,
                "lowerAscii" => Func::LowerAscii,
                "upperAscii" => Func::UpperAscii,
                "replace" => Func::Replace,
                "split" => Func::Split,
                "substring" => Func::Substring,
                "trim" => Func::Trim,
                "join" => Func::Join,
                "strings.quote" => Func::Quote,
                "format" => Func::Format,
                "reverse" => Func::Reverse,
                _ => Func::Other,
            };
            if f != Func::Other {
                return f;
            }
        }
        match name {
            "_&&_" => Func::And,
            "_||_" => Func::Or,
            "!_" => Func::Not,
            "_?_:_" => Func::Cond,
            "@not_strictly_false" => Func::NotStrictlyFalse,
            "_==_" => Func::Eq,
            "_!=_" => Func::Ne,
            "_<_" => Func::Lt,
            "_<=_" => Func::Le,
            "_>_" => Func::Gt,
            "_>=_" => Func::Ge,
            "_+_" => Func::Add,
            "_-_" => Func::Sub,
            "_*_" => Func::Mul,
            "_/_" => Func::Div,
            "_%_" => Func::Mod,
            "-_" => Func::Neg,
            "_[_]" => Func::Index,
            "@in" => Func::In,
            "size" => Func::Size,
            "contains" => Func::Contains,
            "startsWith" => Func::StartsWith,
            "endsWith" => Func::EndsWith,
            "matches" => Func::Matches,
            "type" => Func::TypeOf,
            "int" => Func::ToInt,
            "uint" => Func::ToUint,
            "double" => Func::ToDouble,
            "string" => Func::ToString,
            "bytes" => Func::ToBytes,
            "bool" => Func::ToBool,
            "dyn" => Func::ToDyn,
            "duration" => Func::ToDuration,
            "timestamp" => Func::ToTimestamp,
            "getFullYear" => Func::TimeField("getFullYear"),
            "getMonth" => Func::TimeField("getMonth"),
            "getDayOfYear" => Func::TimeField("getDayOfYear"),
            "getDayOfMonth" => Func::TimeField("getDayOfMonth"),
            "getDate" => Func::TimeField("getDate"),
            "getDayOfWeek" => Func::TimeField("getDayOfWeek"),
            "getHours" => Func::TimeField("getHours"),
            "getMinutes" => Func::TimeField("getMinutes"),
            "getSeconds" => Func::TimeField("getSeconds"),
            "getMilliseconds" => Func::TimeField("getMilliseconds"),
            _ => Func::Other,
        }
    }
}

/// cel-go's set membership (interpreter/decorators.go `maybeOptimizeSetMembership`): the
/// constant list's elements as Go map keys, each number also under its losslessly (for a
/// double) or plainly (for an int or uint) converted other kinds. A lookup is a Go map
/// lookup: no numeric comparison beyond those keys.
#[derive(Debug)]
pub struct SetLookup {
    keys: std::collections::HashSet<MapKey>,
}

impl SetLookup {
    /// The set of a constant list, if cel-go would build one: every element a bool, int,
    /// uint, double or string.
    pub fn new(list: &[Value]) -> Option<SetLookup> {
        let mut keys = std::collections::HashSet::new();
        for v in list {
            if !matches!(
                v,
                Value::Bool(_)
                    | Value::Int(_)
                    | Value::Uint(_)
                    | Value::Double(_)
                    | Value::String(_)
            ) {
                return None;
            }
            let mut add = |v: Value| {
                if !matches!(v, Value::Double(d) if d.is_nan()) {
                    keys.extend(MapKey::from_value(&v));
                }
            };
            add(v.clone());
            match *v {
                Value::Double(d) => {
                    if d.fract() == 0.0
                        && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&d)
                    {
                        add(Value::Int(d as i64));
                    }
                    if d.fract() == 0.0 && (0.0..1.844_674_407_370_955_2e19).contains(&d) {
                        add(Value::Uint(d as u64));
                    }
                }
                Value::Int(i) => {
                    add(Value::Double(i as f64));
                    if i >= 0 {
                        add(Value::Uint(i as u64));
                    }
                }
                Value::Uint(u) => {
                    add(Value::Double(u as f64));
                    if u <= i64::MAX as u64 {
                        add(Value::Int(u as i64));
                    }
                }
                _ => {}
            }
        }
        Some(SetLookup { keys })
    }

    /// Whether the value is in the set; `Err` for a value Go cannot hash (it panics).
    pub fn contains(&self, v: &Value) -> Result<bool, &'static str> {
        match MapKey::from_value(v) {
            None => Err(super::eval::UNHASHABLE_BYTES),
            Some(k) => Ok(self.keys.contains(&k)),
        }
    }
}

/// Fuses chains of field selections from a variable into [`Kind::Path`] nodes (after type
/// checking: the checker sees the selections one by one).
pub fn fuse_paths(n: &mut Node) {
    let mut fields: Vec<Arc<str>> = Vec::new();
    let mut cur: &Node = n;
    let slot = loop {
        match &cur.kind {
            Kind::Select {
                operand,
                field,
                test: false,
            } => {
                fields.push(field.clone());
                cur = operand;
            }
            Kind::Var(slot) if !fields.is_empty() => break Some(*slot),
            _ => break None,
        }
    };
    if let Some(slot) = slot {
        fields.reverse();
        let extra = fields
            .iter()
            .map(|f| f.len() as u64 / super::cost::BYTES_PER_UNIT)
            .sum();
        n.kind = Kind::Path {
            slot,
            fields: fields.into_boxed_slice(),
            extra,
        };
        return;
    }
    match &mut n.kind {
        Kind::Select { operand, .. } => fuse_paths(operand),
        Kind::Call { target, args, .. } => {
            if let Some(t) = target {
                fuse_paths(t);
            }
            for a in args {
                fuse_paths(a);
            }
        }
        Kind::List(items) => items.iter_mut().for_each(fuse_paths),
        Kind::Map(entries) => {
            for (k, v) in entries {
                fuse_paths(k);
                fuse_paths(v);
            }
        }
        Kind::Comprehension(c) => {
            for x in [
                &mut c.range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                fuse_paths(x);
            }
        }
        Kind::InSet { arg, .. } => fuse_paths(arg),
        _ => {}
    }
}

/// Depth of the parsed tree, computed without recursion.
pub fn parsed_depth(root: &IdedExpr) -> usize {
    let mut max = 0;
    let mut stack = vec![(root, 1usize)];
    while let Some((e, d)) = stack.pop() {
        max = max.max(d);
        let d = d + 1;
        match &e.expr {
            Expr::Call(c) => {
                stack.extend(c.target.iter().map(|t| (&**t, d)));
                stack.extend(c.args.iter().map(|a| (a, d)));
            }
            Expr::Select(s) => stack.push((&s.operand, d)),
            Expr::List(l) => stack.extend(l.elements.iter().map(|a| (a, d))),
            Expr::Map(m) => {
                for en in &m.entries {
                    match &en.expr {
                        EntryExpr::MapEntry(me) => {
                            stack.push((&me.key, d));
                            stack.push((&me.value, d));
                        }
                        EntryExpr::StructField(f) => stack.push((&f.value, d)),
                    }
                }
            }
            Expr::Struct(s) => {
                for en in &s.entries {
                    match &en.expr {
                        EntryExpr::MapEntry(me) => {
                            stack.push((&me.key, d));
                            stack.push((&me.value, d));
                        }
                        EntryExpr::StructField(f) => stack.push((&f.value, d)),
                    }
                }
            }
            Expr::Comprehension(c) => {
                for x in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ] {
                    stack.push((x, d));
                }
            }
            _ => {}
        }
    }
    max
}

/// Converts a parsed expression. `vars` are the declared variables (slot = index).
pub struct Converter<'s> {
    source: &'s str,
    info: &'s SourceInfo,
    declared: Vec<String>,
    scopes: Vec<(String, usize)>,
    pub slot_count: usize,
    strings_ext: bool,
    /// Errors cel-go's parser reports that the `cel` crate's does not.
    pub errors: Vec<CompileError>,
}

impl<'s> Converter<'s> {
    pub fn new(
        source: &'s str,
        info: &'s SourceInfo,
        declared: Vec<String>,
        strings_ext: bool,
    ) -> Self {
        let slot_count = declared.len();
        Converter {
            source,
            info,
            declared,
            scopes: Vec::new(),
            slot_count,
            strings_ext,
            errors: Vec::new(),
        }
    }

    fn own_span(&self, id: u64) -> Option<Range<usize>> {
        self.info.offset_for(id).and_then(|(s, e)| {
            let (s, e) = (s as usize, e as usize + 1);
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
        if let Some((_, slot)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Some(*slot);
        }
        self.declared.iter().position(|d| d == name)
    }

    fn qualified(e: &IdedExpr) -> Option<Vec<&str>> {
        let mut segs = Vec::new();
        let mut cur = e;
        loop {
            match &cur.expr {
                Expr::Ident(n) => {
                    segs.push(n.as_str());
                    segs.reverse();
                    return Some(segs);
                }
                Expr::Select(s) if !s.test => {
                    segs.push(s.field.as_str());
                    cur = &s.operand;
                }
                _ => return None,
            }
        }
    }

    pub fn convert(&mut self, e: &IdedExpr) -> Node {
        let own = self.own_span(e.id);
        let mut node = self.convert_kind(e, own.clone());
        if let Some(own) = own {
            node.span = union(&node.span, &own);
        }
        node.span = self.parenthesized(node.span);
        node
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

    fn convert_kind(&mut self, e: &IdedExpr, own: Option<Range<usize>>) -> Node {
        match &e.expr {
            Expr::Unspecified => self.leaf(own, Kind::Unresolved(String::new())),
            Expr::Literal(l) => {
                let v = match l {
                    LiteralValue::Boolean(b) => Value::Bool(*b.inner()),
                    LiteralValue::Int(i) => Value::Int(*i.inner()),
                    LiteralValue::UInt(u) => Value::Uint(*u.inner()),
                    LiteralValue::Double(d) => Value::Double(*d.inner()),
                    LiteralValue::Null => Value::Null,
                    LiteralValue::String(s) => Value::string(s.inner()),
                    LiteralValue::Bytes(b) => Value::Bytes(Arc::from(b.inner())),
                };
                self.leaf(own, Kind::Lit(v))
            }
            Expr::Ident(name) => {
                let kind = self.ident_kind(name);
                self.leaf(own, kind)
            }
            Expr::Select(s) => {
                if !s.test {
                    // A declared variable with a dotted name wins over field selection.
                    if let Some(segs) = Self::qualified(e) {
                        let full = segs.join(".");
                        if !self.scopes.iter().any(|(n, _)| n == segs[0]) {
                            if let Some(slot) = self.declared.iter().position(|d| *d == full) {
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
                let operand = self.convert(&s.operand);
                let mut span = operand.span.clone();
                if let Some(o) = &own {
                    span = union(&span, o);
                }
                // extend over `.field` (and `)` for has()).
                let mut end = span.end;
                let dot = match &own {
                    Some(o) if self.source.as_bytes().get(o.start) == Some(&b'.') => Some(o.start),
                    _ => {
                        let i = self.skip_ws(operand.span.end.min(self.source.len()));
                        (self.source.as_bytes().get(i) == Some(&b'.')).then_some(i)
                    }
                };
                if let Some(i) = dot {
                    let j = self.skip_ws(i + 1);
                    if self.source[j..].starts_with(s.field.as_str()) {
                        end = end.max(j + s.field.len());
                    }
                }
                if s.test {
                    end = self.close(end, b')');
                    let before = self.source[..span.start.min(self.source.len())].trim_end();
                    let before = before.strip_suffix('(').unwrap_or(before).trim_end();
                    if let Some(b) = before.strip_suffix("has") {
                        span.start = b.len();
                    }
                }
                span.end = span.end.max(end);
                Node {
                    span,
                    scalar: false,
                    kind: Kind::Select {
                        operand: Box::new(operand),
                        field: Arc::from(s.field.as_str()),
                        test: s.test,
                    },
                }
            }
            Expr::Call(c) => {
                // `strings.quote(x)`: a namespaced function, not a method of `strings`.
                let qualified = match &c.target {
                    Some(t) if self.strings_ext => Self::qualified(t)
                        .map(|segs| format!("{}.{}", segs.join("."), c.func_name))
                        .filter(|q| decls::STRING_FUNCTIONS.contains_key(q.as_str())),
                    _ => None,
                };
                let (target, func_name) = match qualified {
                    Some(q) => (None, q),
                    None => (
                        c.target.as_ref().map(|t| Box::new(self.convert(t))),
                        c.func_name.clone(),
                    ),
                };
                let args: Vec<Node> = c.args.iter().map(|a| self.convert(a)).collect();
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
                        if before.ends_with(func_name.as_str()) {
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
                        Some(Kind::Lit(Value::String(p))) => Some(super::regex::cached(p).0),
                        _ => None,
                    }
                } else {
                    None
                };
                Node {
                    span,
                    scalar: false,
                    kind: Kind::Call {
                        func,
                        name: func_name,
                        target,
                        args,
                        regex,
                        guard: None,
                        overload: None,
                    },
                }
            }
            Expr::List(l) => {
                let elems: Vec<Node> = l.elements.iter().map(|a| self.convert(a)).collect();
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
            Expr::Map(m) => {
                let mut entries = Vec::new();
                let mut span = own.clone().unwrap_or(NO_SPAN);
                for en in &m.entries {
                    if let EntryExpr::MapEntry(me) = &en.expr {
                        let k = self.convert(&me.key);
                        let v = self.convert(&me.value);
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
            Expr::Struct(s) => self.leaf(own, Kind::Struct(s.type_name.clone())),
            Expr::Comprehension(c) => {
                if c.iter_var == "__result__" || c.iter_var2.as_deref() == Some("__result__") {
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
                let range = self.convert(&c.iter_range);
                let accu_init = self.convert(&c.accu_init);
                let accu_var = self.new_slot(&c.accu_var);
                let iter_var = self.new_slot(&c.iter_var);
                let iter_var2 = c.iter_var2.as_ref().map(|n| self.new_slot(n));
                let loop_cond = self.convert(&c.loop_cond);
                let loop_step = self.convert(&c.loop_step);
                // the result sees the accumulator but not the iteration variables
                self.scopes.pop();
                if iter_var2.is_some() {
                    self.scopes.pop();
                }
                let result = self.convert(&c.result);
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

    fn select_span(&self, e: &IdedExpr) -> Range<usize> {
        // union of all offsets in the select chain, extended over the last field
        let mut span = NO_SPAN;
        let mut cur = e;
        let mut last_field: Option<&str> = None;
        loop {
            if let Some(o) = self.own_span(cur.id) {
                span = union(&span, &o);
            }
            match &cur.expr {
                Expr::Select(s) => {
                    if last_field.is_none() {
                        last_field = Some(&s.field);
                    }
                    cur = &s.operand;
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

    fn new_slot(&mut self, name: &str) -> usize {
        let slot = self.slot_count;
        self.slot_count += 1;
        self.scopes.push((name.to_string(), slot));
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

/// The span of a node with no known source position (empty and reversed).
#[allow(clippy::reversed_empty_ranges)]
const NO_SPAN: Range<usize> = usize::MAX..0;

pub fn union(a: &Range<usize>, b: &Range<usize>) -> Range<usize> {
    if a.start > a.end {
        return b.clone();
    }
    if b.start > b.end {
        return a.clone();
    }
    a.start.min(b.start)..a.end.max(b.end)
}
