//! The static type checker the `cel` crate lacks, following cel-go's checker/checker.go.

use std::ops::Range;

use super::CompileError;
use super::ast::{Func, Kind, Node};
use super::decls::{self, Function, Overload, PA, PB};
use super::types::{self, CelType, Mapping};
use super::value::Value;

pub struct Checker {
    mapping: Mapping,
    next_var: u32,
    /// Types of the variable slots (declared variables then comprehension variables).
    slots: Vec<CelType>,
    /// The environment has cel-go's string extension.
    strings_ext: bool,
    /// Types of list literal elements, by node address.
    list_elements: std::collections::HashMap<usize, CelType>,
    pub errors: Vec<CompileError>,
    /// The parameters of the overload being tried (a buffer kept between calls).
    params: Vec<CelType>,
    /// The argument types of the calls being checked, innermost last (a stack kept between
    /// calls: each call pushes its own and takes them off when done).
    arg_types: Vec<CelType>,
}

impl Checker {
    /// `declared`: the types of the declared variables, in slot order.
    pub fn new(
        declared: impl Iterator<Item = CelType>,
        slot_count: usize,
        strings_ext: bool,
    ) -> Checker {
        let mut slots = Vec::with_capacity(slot_count);
        slots.extend(declared);
        slots.resize(slot_count, CelType::Dyn);
        Checker {
            mapping: Mapping::default(),
            next_var: 0,
            slots,
            strings_ext,
            list_elements: std::collections::HashMap::new(),
            errors: Vec::new(),
            params: Vec::new(),
            arg_types: Vec::new(),
        }
    }

    /// Checks the whole tree and returns its type with free type parameters as `dyn`.
    pub fn check_root(&mut self, n: &mut Node) -> CelType {
        let t = self.check(n);
        types::substitute(&self.mapping, &t, true)
    }

    fn error(&mut self, span: &Range<usize>, message: String) {
        let span = if span.start <= span.end {
            Some(span.clone())
        } else {
            None
        };
        self.errors.push(CompileError {
            message,
            span,
            kind: super::CompileErrorKind::Check,
        });
    }

    fn fresh(&mut self) -> CelType {
        let v = self.next_var;
        self.next_var += 1;
        CelType::Param(v)
    }

    fn is_assignable(&mut self, t1: &CelType, t2: &CelType) -> bool {
        types::is_assignable(&mut self.mapping, t1, t2)
    }

    fn join(&mut self, prev: Option<CelType>, cur: CelType) -> CelType {
        match prev {
            None => cur,
            Some(p) => {
                if self.is_assignable(&p, &cur) {
                    types::most_general(&p, &cur)
                } else {
                    CelType::Dyn
                }
            }
        }
    }

    fn check(&mut self, n: &mut Node) -> CelType {
        let t = self.check_kind(n);
        n.scalar = matches!(
            self.mapping.resolve(&t),
            CelType::Bool
                | CelType::Int
                | CelType::Uint
                | CelType::Double
                | CelType::Null
                | CelType::Timestamp
                | CelType::Duration
        );
        t
    }

    /// The type of a field selected from a value of type `operand`.
    fn selected(&mut self, operand: &CelType, span: &Range<usize>) -> CelType {
        let ot = types::substitute(&self.mapping, operand, false);
        match &ot {
            CelType::Map(_, v) => (**v).clone(),
            CelType::Param(_) => {
                self.is_assignable(&CelType::Dyn, &ot);
                CelType::Dyn
            }
            CelType::Dyn | CelType::Error => CelType::Dyn,
            other => {
                self.error(
                    span,
                    format!("type '{other}' does not support field selection"),
                );
                CelType::Dyn
            }
        }
    }

    fn check_kind(&mut self, n: &mut Node) -> CelType {
        let span = n.span.clone();
        match &mut n.kind {
            Kind::Lit(v) => match v {
                super::value::Value::Null => CelType::Null,
                super::value::Value::Bool(_) => CelType::Bool,
                super::value::Value::Int(_) => CelType::Int,
                super::value::Value::Uint(_) => CelType::Uint,
                super::value::Value::Double(_) => CelType::Double,
                super::value::Value::String(_) => CelType::String,
                super::value::Value::Bytes(_) => CelType::Bytes,
                _ => CelType::Dyn,
            },
            Kind::TypeIdent(_, t) => t.clone(),
            Kind::InSet { arg, .. } => {
                self.check(arg);
                CelType::Bool
            }
            Kind::Path { slot, fields, .. } => {
                // Each field selected as a selection node is.
                let mut t = self.slots[*slot].clone();
                for _ in fields.iter() {
                    t = self.selected(&t, &span);
                    t = types::substitute(&self.mapping, &t, false);
                }
                t
            }
            Kind::Var(slot) => self.slots[*slot].clone(),
            Kind::Unresolved(name) => {
                self.error(
                    &span,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                CelType::Error
            }
            Kind::Name(_) => {
                // Resolved before the check: never met here.
                self.error(&span, "an identifier not resolved".to_string());
                CelType::Error
            }
            Kind::Struct(name) => {
                self.error(
                    &span,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                CelType::Error
            }
            Kind::Select { operand, test, .. } => {
                let ot = self.check(operand);
                let rt = self.selected(&ot, &span);
                if *test {
                    CelType::Bool
                } else {
                    types::substitute(&self.mapping, &rt, false)
                }
            }
            Kind::List(elems) => {
                let mut et = None;
                for e in elems.iter_mut() {
                    let t = self.check(e);
                    if self.strings_ext {
                        // kept for the string-format validator
                        self.list_elements
                            .insert(e as *const Node as usize, t.clone());
                    }
                    et = Some(self.join(et, t));
                }
                let et = match et {
                    Some(t) => t,
                    None => self.fresh(),
                };
                CelType::list(et)
            }
            Kind::Map(entries) => {
                let mut kt = None;
                let mut vt = None;
                for (k, v) in entries.iter_mut() {
                    let t = self.check(k);
                    kt = Some(self.join(kt, t));
                    let t = self.check(v);
                    vt = Some(self.join(vt, t));
                }
                match (kt, vt) {
                    (Some(k), Some(v)) => CelType::map(k, v),
                    _ => {
                        let k = self.fresh();
                        let v = self.fresh();
                        CelType::map(k, v)
                    }
                }
            }
            Kind::Comprehension(c) => {
                let range_t = self.check(&mut c.range);
                let accu_t = self.check(&mut c.accu_init);
                let range_t = types::substitute(&self.mapping, &range_t, false);
                self.slots[c.accu_var] = accu_t.clone();
                let (vt, vt2) = match &range_t {
                    CelType::List(e) => {
                        if c.iter_var2.is_some() {
                            (CelType::Int, (**e).clone())
                        } else {
                            ((**e).clone(), CelType::Dyn)
                        }
                    }
                    CelType::Map(k, v) => ((**k).clone(), (**v).clone()),
                    CelType::Dyn | CelType::Error | CelType::Param(_) => {
                        self.is_assignable(&CelType::Dyn, &range_t);
                        (CelType::Dyn, CelType::Dyn)
                    }
                    other => {
                        self.error(
                            &c.range.span,
                            format!(
                                "expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"
                            ),
                        );
                        (CelType::Error, CelType::Error)
                    }
                };
                self.slots[c.iter_var] = vt;
                if let Some(s) = c.iter_var2 {
                    self.slots[s] = vt2;
                }
                let ct = self.check(&mut c.loop_cond);
                if !self.is_assignable(&CelType::Bool, &ct) {
                    let ct = types::substitute(&self.mapping, &ct, true);
                    self.error(
                        &c.loop_cond.span,
                        format!("expected type 'bool' but found '{ct}'"),
                    );
                }
                let st = self.check(&mut c.loop_step);
                if !self.is_assignable(&accu_t, &st) {
                    let a = types::substitute(&self.mapping, &accu_t, true);
                    let s = types::substitute(&self.mapping, &st, true);
                    self.error(
                        &c.loop_step.span,
                        format!("expected type '{a}' but found '{s}'"),
                    );
                }
                let rt = self.check(&mut c.result);
                types::substitute(&self.mapping, &rt, false)
            }
            Kind::Call {
                name,
                target,
                args,
                guard,
                func,
                overload,
                ..
            } => {
                let name = name.clone();
                let (t, narrowed, only) =
                    self.check_call(&span, &name, target.as_deref_mut(), args);
                *guard = narrowed;
                *overload = only;
                if *func == Func::Format {
                    self.check_format(&span, target.as_deref(), args);
                }
                t
            }
        }
    }

    /// The result type of a call, the overload it is narrowed to (see [`Overload`]), and the
    /// index of the only overload that matched, if only one did.
    fn check_call(
        &mut self,
        span: &Range<usize>,
        name: &str,
        target: Option<&mut Node>,
        args: &mut [Node],
    ) -> (CelType, Option<&'static Overload>, Option<u8>) {
        let has_target = target.is_some();
        let base = self.arg_types.len();
        if let Some(t) = target {
            let t = self.check(t);
            self.arg_types.push(t);
        }
        for a in args.iter_mut() {
            let t = self.check(a);
            self.arg_types.push(t);
        }
        let result = self.check_call_types(span, name, has_target, base, args);
        self.arg_types.truncate(base);
        result
    }

    /// [`Self::check_call`] once the types of the target and arguments are on top of the
    /// argument stack, from `base`.
    fn check_call_types(
        &mut self,
        span: &Range<usize>,
        name: &str,
        has_target: bool,
        base: usize,
        args: &[Node],
    ) -> (CelType, Option<&'static Overload>, Option<u8>) {
        let Some(function) = decls::function(name, self.strings_ext) else {
            self.error(
                span,
                format!("undeclared reference to '{name}' (in container '')"),
            );
            return (CelType::Error, None, None);
        };
        if name == "_&&_" || name == "_||_" {
            let mut failed = false;
            for i in 0..self.arg_types.len() - base {
                let t = &self.arg_types[base + i];
                if !types::is_assignable(&mut self.mapping, t, &CelType::Bool) {
                    let t = types::substitute(&self.mapping, t, true);
                    self.error(
                        &args[i].span,
                        format!("expected type 'bool' but found '{t}'"),
                    );
                    failed = true;
                }
            }
            return (
                if failed {
                    CelType::Error
                } else {
                    CelType::Bool
                },
                None,
                None,
            );
        }
        let typed = calls::typed(function, has_target, &self.arg_types[base..], &self.mapping);
        if let Ok(Some(cached)) = &typed {
            // The fresh parameters the overloads would have taken.
            self.next_var += cached.fresh;
            return (cached.result.clone(), cached.narrowed, cached.only);
        }
        let first_var = self.next_var;
        let result = self.overloads(span, name, function, has_target, base);
        if let Ok(None) = typed {
            let (result, narrowed, only) = result.clone();
            let typing = calls::Typing {
                result,
                narrowed,
                only,
                fresh: self.next_var - first_var,
            };
            calls::remember(
                function,
                has_target,
                &self.arg_types[base..],
                &self.mapping,
                typing,
            );
        }
        result
    }

    /// [`Self::check_call_types`] of a call to a function (not `&&` or `||`): every overload
    /// tried.
    fn overloads(
        &mut self,
        span: &Range<usize>,
        name: &str,
        function: &'static Function,
        has_target: bool,
        base: usize,
    ) -> (CelType, Option<&'static Overload>, Option<u8>) {
        let mut result: Option<CelType> = None;
        let mut matched = 0usize;
        let mut first_match: Option<(usize, &'static Overload)> = None;
        // One buffer for the parameters of every overload tried.
        let mut params = std::mem::take(&mut self.params);
        for (index, o) in function.overloads.iter().enumerate() {
            if o.member != has_target {
                continue;
            }
            // instantiate A and B with fresh variables (an overload without them is its own
            // instance)
            let a = self.fresh();
            let b = self.fresh();
            let (args, res) = if o.generic {
                let inst = |t: &CelType| instantiate(t, &a, &b);
                params.clear();
                params.extend(o.args.iter().map(inst));
                (&params[..], std::borrow::Cow::Owned(inst(&o.result)))
            } else {
                (&o.args[..], std::borrow::Cow::Borrowed(&o.result))
            };
            if types::is_assignable_list(&mut self.mapping, &self.arg_types[base..], args) {
                matched += 1;
                first_match.get_or_insert((index, o));
                let rt = types::substitute(&self.mapping, &res, false);
                result = Some(match result {
                    None => rt,
                    Some(prev) if prev == CelType::Dyn || prev != rt => CelType::Dyn,
                    Some(prev) => prev,
                });
            }
        }
        params.clear();
        self.params = params;
        match result {
            Some(t) => {
                let only = first_match.filter(|_| matched == 1);
                let narrowed = only.filter(|_| function.guarded).map(|(_, o)| o);
                (t, narrowed, only.map(|(i, _)| i as u8))
            }
            None => {
                let shown: Vec<String> = self.arg_types[base..]
                    .iter()
                    .map(|t| types::substitute(&self.mapping, t, true).to_string())
                    .collect();
                let sig = if has_target {
                    format!("{}.({})", shown[0], shown[1..].join(", "))
                } else {
                    format!("({})", shown.join(", "))
                };
                self.error(
                    span,
                    format!("found no matching overload for '{name}' applied to '{sig}'"),
                );
                (CelType::Error, None, None)
            }
        }
    }

    /// cel-go's string-format validator: a constant format string applied to a list literal
    /// is checked clause by clause against the static types of the list's elements.
    fn check_format(&mut self, span: &Range<usize>, target: Option<&Node>, args: &[Node]) {
        let (
            Some(Node {
                kind: Kind::Lit(Value::String(fmt)),
                ..
            }),
            [list],
        ) = (target, args)
        else {
            return;
        };
        let Kind::List(elems) = &list.kind else {
            return;
        };
        let types: Vec<CelType> = elems
            .iter()
            .map(|e| {
                self.list_elements
                    .get(&(e as *const Node as usize))
                    .map(|t| types::substitute(&self.mapping, t, true))
                    .unwrap_or(CelType::Dyn)
            })
            .collect();
        if let Err((at, message)) = super::ext::check_format(fmt, &types) {
            let where_ = at.map_or_else(|| span.clone(), |i| elems[i].span.clone());
            self.error(&where_, message);
        }
    }
}

fn instantiate(t: &CelType, a: &CelType, b: &CelType) -> CelType {
    if !t.has_param() {
        return t.clone();
    }
    match t {
        t if *t == PA => a.clone(),
        t if *t == PB => b.clone(),
        CelType::List(e) => CelType::list(instantiate(e, a, b)),
        CelType::Map(k, v) => CelType::map(instantiate(k, a, b), instantiate(v, a, b)),
        CelType::Type(Some(p)) => CelType::type_of(instantiate(p, a, b)),
        other => other.clone(),
    }
}

/// The typing of calls whose argument types are known (no type parameter left): the same
/// for every rule, so remembered by each thread. A call of readiness rules is typed once
/// for all (`self.status.x > 0`: `_>_` of `dyn` and `int`), not overload by overload each
/// time.
mod calls {
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::hash::{BuildHasherDefault, Hash, Hasher};

    use super::super::decls::{Function, Overload};
    use super::super::types::{self, CelType, Mapping};
    use crate::core::fxhash::FxHasher;

    /// A call's typing: its result, overloads, and the fresh parameters its check took.
    #[derive(Clone)]
    pub(super) struct Typing {
        pub result: CelType,
        pub narrowed: Option<&'static Overload>,
        pub only: Option<u8>,
        pub fresh: u32,
    }

    /// A typing remembered, with its call (the map's key is the call's hash).
    struct Remembered {
        function: usize,
        has_target: bool,
        args: Box<[CelType]>,
        typing: Typing,
    }

    /// Calls remembered by a thread, at most this many (then afresh).
    const MAX_CALLS: usize = 4096;

    thread_local! {
        static CALLS: RefCell<HashMap<u64, Remembered, BuildHasherDefault<FxHasher>>> =
            RefCell::new(HashMap::default());
    }

    /// Forgets every call remembered by this thread.
    #[cfg(test)]
    pub(super) fn forget() {
        CALLS.with(|calls| calls.borrow_mut().clear());
    }

    /// The argument types as they stand, if none is or holds a type parameter.
    fn ground(args: &[CelType], mapping: &Mapping) -> Option<Vec<CelType>> {
        let mut out = Vec::with_capacity(args.len());
        for t in args {
            let t = types::substitute(mapping, t, false);
            if t.has_param() {
                return None;
            }
            out.push(t);
        }
        Some(out)
    }

    fn address(function: &'static Function) -> usize {
        function as *const Function as usize
    }

    fn hash(function: &'static Function, has_target: bool, args: &[CelType]) -> u64 {
        let mut h = FxHasher::default();
        address(function).hash(&mut h);
        has_target.hash(&mut h);
        args.hash(&mut h);
        h.finish()
    }

    /// The call's typing if remembered (`Ok(Some)`), `Ok(None)` if it may be remembered once
    /// made, `Err` if it may not (a type parameter in the arguments).
    pub(super) fn typed(
        function: &'static Function,
        has_target: bool,
        args: &[CelType],
        mapping: &Mapping,
    ) -> Result<Option<Typing>, ()> {
        if args.iter().all(|t| !t.has_param()) {
            return Ok(lookup(function, has_target, args));
        }
        let args = ground(args, mapping).ok_or(())?;
        Ok(lookup(function, has_target, &args))
    }

    fn lookup(function: &'static Function, has_target: bool, args: &[CelType]) -> Option<Typing> {
        let key = hash(function, has_target, args);
        CALLS.with(|calls| {
            let calls = calls.borrow();
            let r = calls.get(&key)?;
            let same =
                r.function == address(function) && r.has_target == has_target && *r.args == *args;
            same.then(|| r.typing.clone())
        })
    }

    /// Remembers a call's typing, if it found an overload and its result holds no type
    /// parameter.
    pub(super) fn remember(
        function: &'static Function,
        has_target: bool,
        args: &[CelType],
        mapping: &Mapping,
        typing: Typing,
    ) {
        if typing.result == CelType::Error || typing.result.has_param() {
            return;
        }
        let Some(args) = ground(args, mapping) else {
            return;
        };
        let key = hash(function, has_target, &args);
        CALLS.with(|calls| {
            let mut calls = calls.borrow_mut();
            if calls.len() >= MAX_CALLS {
                calls.clear();
            }
            calls.entry(key).or_insert(Remembered {
                function: address(function),
                has_target,
                args: args.into_boxed_slice(),
                typing,
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use crate::core::cel::compile::build;
    use crate::core::cel::parse::parse;
    use crate::core::cel::{Declarations, Environment};

    /// The compiled tree (types, overloads, errors) as a check with nothing remembered gives
    /// it, and as one with every call remembered does.
    #[test]
    fn remembered_calls_type_as_the_overloads_do() {
        let rules = [
            "self.status.readyReplicas > 0 && self.status.readyReplicas >= 1",
            "size(self.spec.x) == 2 && size(self.spec.x) == 2",
            "[1, 2].map(x, x + 1)[0] > 1 && [1, 2].map(x, x + 1)[0] > 1",
            "[[]].exists(l, size(l) == 0) || {}.size() == 0",
            "self.a + 1 == 2u || self.a + 1 == 2u",
            "1 + 'a' == 2",
            "[1, 'a'][0] == dyn(1) && type(self) == map",
            "self.x.all(e, e.y.exists(z, z == e.w)) && 1.0 / 2.0 > 0.1",
            "duration('1s') + timestamp('2024-01-01T00:00:00Z') > timestamp(0)",
            "'abc'.matches('b') && 'a'.startsWith(self.p) && int('1') == 1",
        ];
        let envs = [
            (Declarations::readiness(), Environment::Readiness.options()),
            (Declarations::health(), Environment::Health.options()),
        ];
        for (decls, options) in &envs {
            let typed = |rule: &str| {
                let parsed = parse(rule, true, decls.strings_ext, 250).expect("parses");
                format!("{:?}", build(rule, parsed, decls, *options, true))
            };
            let cold: Vec<String> = rules
                .iter()
                .map(|r| {
                    super::calls::forget();
                    typed(r)
                })
                .collect();
            let warm: Vec<String> = rules.iter().map(|r| typed(r)).collect();
            let again: Vec<String> = rules.iter().map(|r| typed(r)).collect();
            assert_eq!(cold, warm);
            assert_eq!(cold, again);
        }
    }
}
