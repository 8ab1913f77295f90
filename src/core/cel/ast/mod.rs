//! Our expression tree, built by our parser (build.rs) with each node's byte span in the
//! rule text (span.rs), literals as values and functions as an enum; then its names resolved
//! in place (resolve.rs): identifiers to slots, chains of selections from a declared
//! variable to paths.

pub(crate) mod build;
pub(crate) mod resolve;
pub(crate) mod span;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use super::decls::Overload;
use super::regex::Compiled;
use super::types::CelType;
use super::value::{MapKey, TypeValue, Value};

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
    /// An identifier as the parser read it: only between the parse and [`resolve`].
    Name(Name),
    Select {
        operand: Box<Node>,
        field: Arc<str>,
        test: bool,
    },
    Call {
        func: Func,
        /// The function's name: the static one of a function [`Func`] knows, a copy of
        /// the rule's only for [`Func::Other`].
        name: Cow<'static, str>,
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
        /// Where each field was found last (see [`Hint`]).
        hints: Box<[Hint]>,
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

/// A name as the parser read it: a slice of the rule text, or a name the parser made.
#[derive(Clone, Debug)]
pub enum Name {
    Src(u32, u32),
    Static(&'static str),
    Owned(Box<str>),
}

impl Name {
    pub fn text<'a>(&'a self, source: &'a str) -> &'a str {
        match self {
            Name::Src(s, e) => &source[*s as usize..*e as usize],
            Name::Static(s) => s,
            Name::Owned(s) => s,
        }
    }
}

/// A comprehension. Between the parse and [`resolve`], its variables are places in the
/// parse's names; after, slots.
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

impl Node {
    /// The names of `a.b.c` as the parser read it: selections without `has()` down to an
    /// identifier not resolved yet.
    pub(crate) fn qualified<'a>(&'a self, source: &'a str) -> Option<Vec<&'a str>> {
        let mut segs = Vec::new();
        let mut n = self;
        loop {
            match &n.kind {
                Kind::Name(name) => {
                    segs.push(name.text(source));
                    segs.reverse();
                    return Some(segs);
                }
                Kind::Select {
                    operand,
                    field,
                    test: false,
                } => {
                    segs.push(&**field);
                    n = operand;
                }
                _ => return None,
            }
        }
    }
}

impl Kind {
    /// The path of these fields from the variable in `slot`.
    pub fn path(slot: usize, fields: Box<[Arc<str>]>) -> Kind {
        let extra = fields
            .iter()
            .map(|f| f.len() as u64 / super::cost::BYTES_PER_UNIT)
            .sum();
        let hints = fields.iter().map(|_| Hint::default()).collect();
        Kind::Path {
            slot,
            fields,
            extra,
            hints,
        }
    }
}

/// The position in its map where a field of a path was found the last time: objects of one
/// kind keep their keys in one order, so the next object mostly has it there too, and the
/// lookup is one comparison (by identity, for an object projected for the rule). Only ever
/// a guess: a key found there is compared first.
#[derive(Debug, Default)]
pub struct Hint(std::sync::atomic::AtomicU16);

impl Hint {
    pub fn get(&self) -> usize {
        usize::from(self.0.load(std::sync::atomic::Ordering::Relaxed))
    }

    pub fn set(&self, at: usize) {
        if let Ok(at) = u16::try_from(at) {
            self.0.store(at, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl Func {
    /// The function of a name; the string extension's only when `strings_ext`.
    /// The name [`Func::from_name`] gives this function for (None for [`Func::Other`]).
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Func::CharAt => "charAt",
            Func::IndexOf => "indexOf",
            Func::LastIndexOf => "lastIndexOf",
            Func::LowerAscii => "lowerAscii",
            Func::UpperAscii => "upperAscii",
            Func::Replace => "replace",
            Func::Split => "split",
            Func::Substring => "substring",
            Func::Trim => "trim",
            Func::Join => "join",
            Func::Quote => "strings.quote",
            Func::Format => "format",
            Func::Reverse => "reverse",
            Func::And => "_&&_",
            Func::Or => "_||_",
            Func::Not => "!_",
            Func::Cond => "_?_:_",
            Func::NotStrictlyFalse => "@not_strictly_false",
            Func::Eq => "_==_",
            Func::Ne => "_!=_",
            Func::Lt => "_<_",
            Func::Le => "_<=_",
            Func::Gt => "_>_",
            Func::Ge => "_>=_",
            Func::Add => "_+_",
            Func::Sub => "_-_",
            Func::Mul => "_*_",
            Func::Div => "_/_",
            Func::Mod => "_%_",
            Func::Neg => "-_",
            Func::Index => "_[_]",
            Func::In => "@in",
            Func::Size => "size",
            Func::Contains => "contains",
            Func::StartsWith => "startsWith",
            Func::EndsWith => "endsWith",
            Func::Matches => "matches",
            Func::TypeOf => "type",
            Func::ToInt => "int",
            Func::ToUint => "uint",
            Func::ToDouble => "double",
            Func::ToString => "string",
            Func::ToBytes => "bytes",
            Func::ToBool => "bool",
            Func::ToDyn => "dyn",
            Func::ToDuration => "duration",
            Func::ToTimestamp => "timestamp",
            Func::TimeField(name) => name,
            Func::Other => return None,
        })
    }

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
pub struct SetLookup {
    keys: std::collections::HashSet<MapKey>,
}

impl std::fmt::Debug for SetLookup {
    /// The keys in a stable order (a set's order changes from run to run).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut keys: Vec<String> = self.keys.iter().map(|k| format!("{k:?}")).collect();
        keys.sort();
        f.debug_struct("SetLookup").field("keys", &keys).finish()
    }
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

/// Makes every field name the rule selects one shared `Arc` per text: an object projected
/// for the rule has these `Arc`s as its keys (see `project`), so a selection finds its key
/// by identity, without comparing bytes.
pub fn share_field_names(root: &mut Node) {
    let mut names: std::collections::HashSet<Arc<str>> = std::collections::HashSet::new();
    let mut share = |f: &mut Arc<str>| match names.get(f) {
        Some(known) => *f = Arc::clone(known),
        None => {
            names.insert(Arc::clone(f));
        }
    };
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match &mut n.kind {
            Kind::Select { operand, field, .. } => {
                share(field);
                stack.push(operand);
            }
            Kind::Path { fields, .. } => fields.iter_mut().for_each(&mut share),
            Kind::Call { target, args, .. } => {
                stack.extend(target.as_deref_mut());
                stack.extend(args.iter_mut());
            }
            Kind::InSet { arg, .. } => stack.push(arg),
            Kind::List(items) => stack.extend(items.iter_mut()),
            Kind::Map(entries) => {
                for (k, v) in entries {
                    stack.push(k);
                    stack.push(v);
                }
            }
            Kind::Comprehension(c) => {
                let c = &mut **c;
                stack.extend([
                    &mut c.range,
                    &mut c.accu_init,
                    &mut c.loop_cond,
                    &mut c.loop_step,
                    &mut c.result,
                ]);
            }
            Kind::Lit(_)
            | Kind::TypeIdent(..)
            | Kind::Var(_)
            | Kind::Unresolved(_)
            | Kind::Name(_)
            | Kind::Struct(_) => {}
        }
    }
}

/// Fuses chains of field selections from a variable into [`Kind::Path`] nodes (after type
/// checking: the checker sees the selections one by one).
pub fn fuse_paths(n: &mut Node) {
    // the length of the chain first, so that its fields are gathered in one allocation
    let mut len = 0;
    let mut cur: &Node = n;
    let slot = loop {
        match &cur.kind {
            Kind::Select {
                operand,
                test: false,
                ..
            } => {
                len += 1;
                cur = operand;
            }
            Kind::Var(slot) if len > 0 => break Some(*slot),
            _ => break None,
        }
    };
    if let Some(slot) = slot {
        let mut fields: Vec<Arc<str>> = Vec::with_capacity(len);
        let mut cur: &Node = n;
        while let Kind::Select { operand, field, .. } = &cur.kind {
            fields.push(field.clone());
            cur = operand;
        }
        fields.reverse();
        n.kind = Kind::path(slot, fields.into_boxed_slice());
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
