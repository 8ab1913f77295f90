//! The evaluator: cel-go runtime semantics over the crate's own tree, every step drawn from
//! one [`Budget`].

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::ast::{Comprehension, Kind, Node};
use super::call::select;
use super::cost::{Budget, Resource};
use super::ops::{self, OpError};
use super::value::{MapKey, MapValue, Value};

/// An evaluation error (cel-go wording), or the budget running out.
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub message: String,
    pub budget: Option<Resource>,
}

impl Fault {
    pub fn new(m: impl Into<String>) -> Fault {
        Fault {
            message: m.into(),
            budget: None,
        }
    }

    pub fn budget(r: Resource) -> Fault {
        Fault {
            message: String::new(),
            budget: Some(r),
        }
    }
}

impl From<Resource> for Fault {
    fn from(r: Resource) -> Self {
        Fault::budget(r)
    }
}

impl From<OpError> for Fault {
    fn from(e: OpError) -> Self {
        match e {
            OpError::Err(m) => Fault::new(m),
            OpError::Budget(r) => Fault::budget(r),
        }
    }
}

pub type EResult<'a> = Result<Cow<'a, Value>, Fault>;

/// Values of clause nodes an explanation will ask for, kept as they are computed.
pub struct Memo {
    /// Node addresses to keep.
    pub watched: HashSet<usize>,
    pub values: HashMap<usize, Result<Value, Fault>>,
}

/// A variable slot: unbound, or the value (or error) bound to it.
pub(super) type Slot<'a> = Option<Result<Cow<'a, Value>, Fault>>;

/// The variable slots of an evaluation: on the stack for the usual few (the object and a
/// comprehension or two), so that evaluating a rule allocates nothing.
pub(super) enum Slots<'a> {
    Inline([Slot<'a>; 6]),
    Heap(Vec<Slot<'a>>),
}

impl<'a> std::ops::Index<usize> for Slots<'a> {
    type Output = Slot<'a>;
    #[inline(always)]
    fn index(&self, i: usize) -> &Slot<'a> {
        match self {
            Slots::Inline(a) => &a[i],
            Slots::Heap(v) => &v[i],
        }
    }
}

impl<'a> std::ops::IndexMut<usize> for Slots<'a> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut Slot<'a> {
        match self {
            Slots::Inline(a) => &mut a[i],
            Slots::Heap(v) => &mut v[i],
        }
    }
}

pub struct Evaluator<'a> {
    pub(super) slots: Slots<'a>,
    pub budget: Budget,
    /// Boxed: the evaluator is made on every evaluation, and only explanations keep values.
    pub memo: Option<Box<Memo>>,
    /// Depth of comprehension bodies being evaluated (their values are not memoised: they
    /// depend on the iteration variables).
    in_loop: u32,
}

impl<'a> Evaluator<'a> {
    #[inline]
    pub fn new(slot_count: usize, declared: &[&'a Value], budget: Budget) -> Evaluator<'a> {
        let mut slots = if slot_count <= 6 {
            Slots::Inline(std::array::from_fn(|_| None))
        } else {
            let mut v = Vec::with_capacity(slot_count);
            v.resize_with(slot_count, || None);
            Slots::Heap(v)
        };
        for (i, v) in declared.iter().enumerate() {
            slots[i] = Some(Ok(Cow::Borrowed(*v)));
        }
        Evaluator {
            slots,
            budget,
            memo: None,
            in_loop: 0,
        }
    }

    #[inline(always)]
    fn tick(&mut self) -> Result<(), Fault> {
        self.budget.tick().map_err(Fault::budget)
    }

    pub fn eval(&mut self, n: &'a Node) -> EResult<'a> {
        self.tick()?;
        if self.memo.is_some() && self.in_loop == 0 {
            return self.eval_memo(n);
        }
        self.eval_kind(n)
    }

    #[cold]
    fn eval_memo(&mut self, n: &'a Node) -> EResult<'a> {
        let key = n as *const Node as usize;
        let memo = self.memo.as_ref().expect("checked");
        if !memo.watched.contains(&key) {
            return self.eval_kind(n);
        }
        if let Some(r) = memo.values.get(&key) {
            return r.clone().map(Cow::Owned);
        }
        let r = self.eval_kind(n);
        if let Some(m) = self.memo.as_mut() {
            let kept = match &r {
                Ok(v) => Ok(v.as_ref().clone()),
                Err(f) => Err(f.clone()),
            };
            if kept.as_ref().err().is_none_or(|f| f.budget.is_none()) {
                m.values.insert(key, kept);
            }
        }
        r
    }

    #[inline(always)]
    fn eval_kind(&mut self, n: &'a Node) -> EResult<'a> {
        match &n.kind {
            Kind::Lit(v) => Ok(Cow::Borrowed(v)),
            Kind::TypeIdent(tv, _) => Ok(Cow::Owned(Value::Type(*tv))),
            Kind::Var(slot) => match &self.slots[*slot] {
                Some(Ok(Cow::Borrowed(v))) => Ok(Cow::Borrowed(*v)),
                Some(r) => r.clone(),
                None => Err(Fault::new("no such attribute")),
            },
            Kind::Path {
                slot,
                fields,
                extra,
            } => {
                // one unit per selection, as the nodes this one replaces
                self.budget
                    .charge(fields.len() as u64 + *extra)
                    .map_err(Fault::budget)?;
                match &self.slots[*slot] {
                    Some(Ok(Cow::Borrowed(v))) => walk(v, fields).map(Cow::Borrowed),
                    Some(Ok(Cow::Owned(v))) => walk(v, fields).map(|v| Cow::Owned(v.clone())),
                    Some(Err(e)) => Err(e.clone()),
                    None => Err(Fault::new("no such attribute")),
                }
            }
            Kind::Select {
                operand,
                field,
                test,
            } => {
                // read where it was left (see the note in `call`)
                let ro = self.eval(operand);
                let Ok(o) = &ro else { return ro };
                self.budget.scan(field.len()).map_err(Fault::budget)?;
                select(o, field, *test)
            }
            Kind::Call {
                func,
                name,
                target,
                args,
                regex,
                guard,
                ..
            } => self.call(*func, name, target.as_deref(), args, regex.as_ref(), *guard),
            _ => self.eval_rare(n),
        }
    }

    /// The kinds of node evaluated less often, out of line so that the evaluator's frame
    /// stays small (the recursion goes as deep as the rule).
    #[inline(never)]
    fn eval_rare(&mut self, n: &'a Node) -> EResult<'a> {
        match &n.kind {
            Kind::Unresolved(name) => Err(Fault::new(format!("undeclared reference to '{name}'"))),
            Kind::Struct(name) => Err(Fault::new(format!("unknown type '{name}'"))),
            Kind::Name(_) => Err(Fault::new("an identifier not resolved".to_string())),
            Kind::List(elems) => {
                self.budget.alloc_slots(elems.len())?;
                let mut out = Vec::with_capacity(elems.len());
                for e in elems {
                    out.push(self.eval(e)?.into_owned());
                }
                Ok(Cow::Owned(Value::list(out)))
            }
            Kind::Map(entries) => {
                self.budget.alloc_slots(2 * entries.len())?;
                let mut m = MapValue::default();
                for (k, v) in entries {
                    let kv = self.eval(k)?.into_owned();
                    let vv = self.eval(v)?.into_owned();
                    let Some(key) = MapKey::from_value(&kv) else {
                        return Err(Fault::new(UNHASHABLE_BYTES));
                    };
                    m.insert(key, vv);
                }
                Ok(Cow::Owned(Value::Map(Arc::new(m))))
            }
            Kind::InSet { arg, set } => {
                let v = self.eval(arg)?;
                if let Value::String(s) = v.as_ref() {
                    self.budget.scan(s.len()).map_err(Fault::budget)?;
                }
                set.contains(&v)
                    .map(|b| Cow::Owned(Value::Bool(b)))
                    .map_err(Fault::new)
            }
            Kind::Comprehension(c) => {
                let range = self.eval(&c.range)?;
                let init = self.eval(&c.accu_init);
                self.slots[c.accu_var] = Some(init);
                self.in_loop += 1;
                let r = self.fold(c, range);
                self.in_loop -= 1;
                r?;
                self.slots[c.iter_var] = None;
                if let Some(s) = c.iter_var2 {
                    self.slots[s] = None;
                }
                let r = self.eval(&c.result);
                self.slots[c.accu_var] = None;
                r.map(|v| Cow::Owned(v.into_owned()))
            }
            _ => unreachable!("eval_kind handles the other kinds"),
        }
    }

    /// The loop of a comprehension over `range`.
    fn fold(&mut self, c: &'a Comprehension, range: Cow<'a, Value>) -> Result<(), Fault> {
        match range {
            Cow::Borrowed(Value::List(l)) => {
                for (i, v) in l.iter().enumerate() {
                    if !self.iteration(c, false, Value::Int(i as i64), Cow::Borrowed(v))? {
                        break;
                    }
                }
            }
            Cow::Owned(Value::List(l)) => {
                for (i, v) in l.iter().enumerate() {
                    if !self.iteration(c, false, Value::Int(i as i64), Cow::Owned(v.clone()))? {
                        break;
                    }
                }
            }
            Cow::Borrowed(Value::Map(m)) => {
                for (k, v) in m.entries() {
                    if !self.iteration(c, true, k.to_value(), Cow::Borrowed(v))? {
                        break;
                    }
                }
            }
            Cow::Owned(Value::Map(m)) => {
                for (k, v) in m.entries() {
                    if !self.iteration(c, true, k.to_value(), Cow::Owned(v.clone()))? {
                        break;
                    }
                }
            }
            other => {
                return Err(Fault::new(format!(
                    "got '{}', expected iterable type",
                    ops::go_type_name(&other)
                )));
            }
        }
        Ok(())
    }

    /// One iteration; false when the loop condition stops the loop. For a list, `first` is
    /// the index and `second` the element; for a map, the key and the value. With one
    /// iteration variable, a list gives its elements and a map its keys.
    fn iteration(
        &mut self,
        c: &'a Comprehension,
        is_map: bool,
        first: Value,
        second: Cow<'a, Value>,
    ) -> Result<bool, Fault> {
        self.tick()?;
        match c.iter_var2 {
            Some(s) => {
                self.slots[c.iter_var] = Some(Ok(Cow::Owned(first)));
                self.slots[s] = Some(Ok(second));
            }
            None if is_map => self.slots[c.iter_var] = Some(Ok(Cow::Owned(first))),
            None => self.slots[c.iter_var] = Some(Ok(second)),
        }
        let cond = self.eval(&c.loop_cond);
        match &cond {
            Ok(v) if matches!(v.as_ref(), Value::Bool(false)) => return Ok(false),
            Err(f) if f.budget.is_some() => return Err(f.clone()),
            _ => {}
        }
        let step = self.eval(&c.loop_step);
        if let Err(f) = &step
            && f.budget.is_some()
        {
            return Err(f.clone());
        }
        self.slots[c.accu_var] = Some(step);
        Ok(true)
    }
}

/// Selects `fields` one after the other from `v` (cel-go's attribute qualification).
#[inline]
fn walk<'v>(v: &'v Value, fields: &[std::sync::Arc<str>]) -> Result<&'v Value, Fault> {
    let mut cur = v;
    for f in fields {
        cur = match cur {
            Value::Map(m) => match m.get_str(f) {
                Some(x) => x,
                None => return Err(Fault::new(format!("no such key: {f}"))),
            },
            Value::List(_) => {
                return Err(Fault::new("unsupported index type 'string' in list"));
            }
            _ => return Err(Fault::new(format!("no such key: {f}"))),
        };
    }
    Ok(cur)
}

pub const UNHASHABLE_BYTES: &str =
    "internal error: runtime error: hash of unhashable type types.Bytes";
