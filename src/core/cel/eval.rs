//! The evaluator: cel-go runtime semantics over the crate's own tree, every step drawn from
//! one [`Budget`].

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::ast::{Comprehension, Hint, Kind, Node};
use super::call::select;
use super::cost::{Budget, Resource};
use super::ops::{self, OpError};
use super::value::{MapKey, MapValue, Value, same_str};

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
    /// The value of slot 0 when one is given (the object, the usual case): read from here,
    /// not from `slots`, so that binding it is one store (building the slot's Result and
    /// copying it in stalled the processor on every evaluation).
    first: Option<&'a Value>,
    pub(super) slots: Slots<'a>,
    /// The object given as JSON, when it is read in place (its slot is left unbound).
    in_place: Option<InPlace<'a>>,
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
        for (i, v) in declared.iter().enumerate().skip(1) {
            slots[i] = Some(Ok(Cow::Borrowed(*v)));
        }
        Evaluator {
            first: declared.first().copied(),
            slots,
            in_place: None,
            budget,
            memo: None,
            in_loop: 0,
        }
    }

    /// An evaluator reading the object (slot 0, left unbound) in place from its JSON: what a
    /// rule reads through selections is looked up in the JSON and only the values found are
    /// converted.
    pub fn in_place(
        slot_count: usize,
        json: &'a serde_json::Value,
        budget: Budget,
    ) -> Evaluator<'a> {
        let mut ev = Evaluator::new(slot_count, &[], budget);
        ev.in_place = Some(InPlace {
            json,
            converted: HashMap::new(),
        });
        ev
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
            Kind::Var(0) if let Some(v) = self.first => Ok(Cow::Borrowed(v)),
            Kind::Var(slot) => match &self.slots[*slot] {
                Some(Ok(Cow::Borrowed(v))) => Ok(Cow::Borrowed(*v)),
                Some(r) => r.clone(),
                None => self.read_in_place(*slot, &[], &[]),
            },
            Kind::Path {
                slot,
                fields,
                extra,
                hints,
            } => {
                // one unit per selection, as the nodes this one replaces
                self.budget
                    .charge(fields.len() as u64 + *extra)
                    .map_err(Fault::budget)?;
                if *slot == 0
                    && let Some(v) = self.first
                {
                    return walk(v, fields, hints).map(Cow::Borrowed);
                }
                match &self.slots[*slot] {
                    Some(Ok(Cow::Borrowed(v))) => walk(v, fields, hints).map(Cow::Borrowed),
                    Some(Ok(Cow::Owned(v))) => {
                        walk(v, fields, hints).map(|v| Cow::Owned(v.clone()))
                    }
                    Some(Err(e)) => Err(e.clone()),
                    None => self.read_in_place(*slot, fields, hints),
                }
            }
            Kind::Select {
                operand,
                field,
                test,
            } => {
                if self.in_place.is_some()
                    && let Some(r) = self.select_in_place(operand, field, *test)
                {
                    return r;
                }
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

impl<'a> Evaluator<'a> {
    /// `fields` selected from the object read in place (none: the whole object).
    #[inline(never)]
    fn read_in_place(&mut self, slot: usize, fields: &[Arc<str>], hints: &[Hint]) -> EResult<'a> {
        match &mut self.in_place {
            Some(p) if slot == 0 => {
                let found = walk_json(p.json, fields, hints)?;
                Ok(Cow::Owned(p.value(found)))
            }
            _ => Err(Fault::new("no such attribute")),
        }
    }

    /// `operand.field` (or `has(operand.field)`) when the operand is the object read in place
    /// or a path from it: the field is looked up in the JSON, without converting the operand.
    /// The cost is what evaluating the operand node and then selecting would charge. None
    /// for any other operand.
    #[inline(never)]
    fn select_in_place(
        &mut self,
        operand: &'a Node,
        field: &str,
        test: bool,
    ) -> Option<EResult<'a>> {
        let (slot, fields, hints, path_cost) = match &operand.kind {
            Kind::Path {
                slot,
                fields,
                extra,
                hints,
            } => (
                *slot,
                &fields[..],
                &hints[..],
                Some(fields.len() as u64 + *extra),
            ),
            Kind::Var(slot) => (*slot, &[][..], &[][..], None),
            _ => return None,
        };
        // (an explanation keeps the operand's value: it evaluates the operand node itself)
        if slot != 0 || self.memo.is_some() {
            return None;
        }
        let json = self.in_place.as_ref()?.json;
        Some((|| {
            self.tick()?;
            if let Some(units) = path_cost {
                self.budget.charge(units).map_err(Fault::budget)?;
            }
            let base = walk_json(json, fields, hints)?;
            self.budget.scan(field.len()).map_err(Fault::budget)?;
            let p = self.in_place.as_mut().expect("checked");
            match base {
                serde_json::Value::Object(m) => match json_field(m, field, &Hint::default()) {
                    found if test => Ok(Cow::Owned(Value::Bool(found.is_some()))),
                    Some(x) => Ok(Cow::Owned(p.value(x))),
                    None => Err(no_such_key(field)),
                },
                serde_json::Value::Array(_) => Err(field_of_a_list()),
                _ if test => Ok(Cow::Owned(Value::Bool(false))),
                _ => Err(no_such_key(field)),
            }
        })())
    }
}

/// An object given as JSON, read where a rule reads it (see `CompiledRule::evaluate_json`):
/// the object (slot 0), and what was converted of it, by the address of the JSON value (each
/// text, list or map converted at most once per evaluation, however often a loop reads it).
pub(super) struct InPlace<'a> {
    json: &'a serde_json::Value,
    converted: HashMap<usize, Value>,
}

impl<'a> InPlace<'a> {
    /// The value of `j` (a part of the object), as the whole conversion gives it.
    fn value(&mut self, j: &serde_json::Value) -> Value {
        match j {
            serde_json::Value::String(_)
            | serde_json::Value::Array(_)
            | serde_json::Value::Object(_) => self
                .converted
                .entry(j as *const serde_json::Value as usize)
                .or_insert_with(|| Value::from_json(j))
                .clone(),
            scalar => Value::from_json(scalar),
        }
    }
}

/// [`walk`] over the JSON the object is.
fn walk_json<'v>(
    v: &'v serde_json::Value,
    fields: &[Arc<str>],
    hints: &[Hint],
) -> Result<&'v serde_json::Value, Fault> {
    let mut cur = v;
    for (f, hint) in fields.iter().zip(hints) {
        cur = match cur {
            serde_json::Value::Object(m) => match json_field(m, f, hint) {
                Some(x) => x,
                None => return Err(no_such_key(f)),
            },
            serde_json::Value::Array(_) => return Err(field_of_a_list()),
            _ => return Err(no_such_key(f)),
        };
    }
    Ok(cur)
}

/// A field of a JSON object: where `hint` says, else a few keys scanned lengths first (the
/// position kept in `hint`), more hashed.
fn json_field<'v>(
    m: &'v serde_json::Map<String, serde_json::Value>,
    f: &str,
    hint: &Hint,
) -> Option<&'v serde_json::Value> {
    if let Some((k, v)) = m.iter().nth(hint.get())
        && same_str(k, f)
    {
        return Some(v);
    }
    if m.len() <= 8 {
        let (at, (_, v)) = m.iter().enumerate().find(|(_, (k, _))| same_str(k, f))?;
        hint.set(at);
        Some(v)
    } else {
        m.get(f)
    }
}

/// Selects `fields` one after the other from `v` (cel-go's attribute qualification).
#[inline]
fn walk<'v>(v: &'v Value, fields: &[Arc<str>], hints: &[Hint]) -> Result<&'v Value, Fault> {
    let mut cur = v;
    for (f, hint) in fields.iter().zip(hints) {
        cur = match cur {
            Value::Map(m) => match m.get_str_hinted(f, hint) {
                Some(x) => x,
                None => return Err(no_such_key(f)),
            },
            Value::List(_) => return Err(field_of_a_list()),
            _ => return Err(no_such_key(f)),
        };
    }
    Ok(cur)
}

/// cel-go's error for a field missing from a map (or selected from a scalar).
pub(super) fn no_such_key(field: &str) -> Fault {
    Fault::new(format!("no such key: {field}"))
}

/// cel-go's error for a field selected from a list.
pub(super) fn field_of_a_list() -> Fault {
    Fault::new("unsupported index type 'string' in list")
}

pub const UNHASHABLE_BYTES: &str =
    "internal error: runtime error: hash of unhashable type types.Bytes";
