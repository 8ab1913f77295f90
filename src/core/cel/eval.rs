//! The evaluator: cel-go runtime semantics over the crate's own tree.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

use super::ast::{Func, Kind, Node};
use super::time::{Duration, Timestamp};
use super::value::{MapKey, MapValue, Value, format_double_go, numeric_cmp};

/// An evaluation error (cel-go wording).
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub message: String,
    pub budget_exceeded: bool,
}

impl Fault {
    pub fn new(m: impl Into<String>) -> Fault {
        Fault {
            message: m.into(),
            budget_exceeded: false,
        }
    }
}

pub type EResult<'a> = Result<Cow<'a, Value>, Fault>;

static NULL_VALUE: Value = Value::Null;

const NO_OVERLOAD: &str = "no such overload";

fn no_overload<T>() -> Result<T, Fault> {
    Err(Fault::new(NO_OVERLOAD))
}

pub fn regex_error(e: &regex::Error) -> String {
    format!("error parsing regexp: {e}")
}

pub struct Evaluator<'a> {
    slots: Vec<Option<Result<Cow<'a, Value>, Fault>>>,
    steps: u64,
    max_steps: u64,
}

impl<'a> Evaluator<'a> {
    pub fn new(slot_count: usize, declared: &[&'a Value], max_steps: u64) -> Evaluator<'a> {
        let mut slots: Vec<Option<Result<Cow<'a, Value>, Fault>>> = Vec::with_capacity(slot_count);
        for v in declared {
            slots.push(Some(Ok(Cow::Borrowed(*v))));
        }
        slots.resize_with(slot_count, || None);
        Evaluator {
            slots,
            steps: 0,
            max_steps,
        }
    }

    #[inline]
    fn tick(&mut self) -> Result<(), Fault> {
        self.steps += 1;
        if self.steps > self.max_steps {
            return Err(Fault {
                message: format!(
                    "evaluation budget exceeded: more than {} evaluation steps",
                    self.max_steps
                ),
                budget_exceeded: true,
            });
        }
        Ok(())
    }

    pub fn eval(&mut self, n: &'a Node) -> EResult<'a> {
        self.tick()?;
        match &n.kind {
            Kind::Lit(v) => Ok(Cow::Borrowed(v)),
            Kind::TypeIdent(tv, _) => Ok(Cow::Owned(Value::Type(*tv))),
            Kind::Var(slot) => match &self.slots[*slot] {
                Some(r) => r.clone(),
                None => Err(Fault::new("no such attribute")),
            },
            Kind::Unresolved(name) => Err(Fault::new(format!("undeclared reference to '{name}'"))),
            Kind::Struct(name) => Err(Fault::new(format!("unknown type '{name}'"))),
            Kind::Select {
                operand,
                field,
                test,
            } => {
                let o = self.eval(operand)?;
                select(o, field, *test)
            }
            Kind::List(elems) => {
                let mut out = Vec::with_capacity(elems.len());
                for e in elems {
                    out.push(self.eval(e)?.into_owned());
                }
                Ok(Cow::Owned(Value::list(out)))
            }
            Kind::Map(entries) => {
                let mut m = MapValue::default();
                for (k, v) in entries {
                    let kv = self.eval(k)?;
                    let key = match MapKey::from_value(&kv) {
                        Some(k) => k,
                        None => {
                            return Err(Fault::new(format!(
                                "unsupported key type: {}",
                                kv.type_of().name()
                            )));
                        }
                    };
                    let vv = self.eval(v)?.into_owned();
                    if !m.insert_new(key, vv) {
                        return Err(Fault::new(format!(
                            "Failed with repeated key: {}",
                            kv.render()
                        )));
                    }
                }
                Ok(Cow::Owned(Value::Map(Arc::new(m))))
            }
            Kind::Comprehension(c) => {
                let range = self.eval(&c.range)?;
                let init = self.eval(&c.accu_init);
                self.slots[c.accu_var] = Some(init);
                let items: Vec<(Value, Option<Value>)> = match range.as_ref() {
                    Value::List(l) => l
                        .iter()
                        .enumerate()
                        .map(|(i, v)| match c.iter_var2 {
                            Some(_) => (Value::Int(i as i64), Some(v.clone())),
                            None => (v.clone(), None),
                        })
                        .collect(),
                    Value::Map(m) => m
                        .entries()
                        .iter()
                        .map(|(k, v)| (k.to_value(), c.iter_var2.map(|_| v.clone())))
                        .collect(),
                    other => {
                        return Err(Fault::new(format!(
                            "expression of type '{}' cannot be range of a comprehension",
                            other.type_of().name()
                        )));
                    }
                };
                for (v1, v2) in items {
                    self.slots[c.iter_var] = Some(Ok(Cow::Owned(v1)));
                    if let (Some(s), Some(v2)) = (c.iter_var2, v2) {
                        self.slots[s] = Some(Ok(Cow::Owned(v2)));
                    }
                    let cond = self.eval(&c.loop_cond);
                    if let Ok(v) = &cond
                        && let Value::Bool(false) = v.as_ref()
                    {
                        break;
                    }
                    if let Err(f) = &cond
                        && f.budget_exceeded
                    {
                        return Err(f.clone());
                    }
                    let step = self.eval(&c.loop_step);
                    if let Err(f) = &step
                        && f.budget_exceeded
                    {
                        return Err(f.clone());
                    }
                    self.slots[c.accu_var] = Some(step);
                }
                self.slots[c.iter_var] = None;
                let r = self.eval(&c.result);
                self.slots[c.accu_var] = None;
                r.map(|v| Cow::Owned(v.into_owned()))
            }
            Kind::Call {
                func,
                name,
                target,
                args,
                regex,
            } => self.call(*func, name, target.as_deref(), args, regex.as_ref()),
        }
    }

    fn call(
        &mut self,
        func: Func,
        name: &str,
        target: Option<&'a Node>,
        args: &'a [Node],
        regex: Option<&Result<Arc<regex::Regex>, String>>,
    ) -> EResult<'a> {
        match func {
            Func::And | Func::Or if args.len() == 2 => {
                let decisive = func == Func::Or;
                let l = self.eval(&args[0]);
                if let Ok(v) = &l
                    && let Value::Bool(b) = v.as_ref()
                    && *b == decisive
                {
                    return Ok(Cow::Owned(Value::Bool(decisive)));
                }
                if let Err(f) = &l
                    && f.budget_exceeded
                {
                    return Err(f.clone());
                }
                let r = self.eval(&args[1]);
                if let Ok(v) = &r
                    && let Value::Bool(b) = v.as_ref()
                {
                    if *b == decisive {
                        return Ok(Cow::Owned(Value::Bool(decisive)));
                    }
                    if let Ok(lv) = &l
                        && let Value::Bool(_) = lv.as_ref()
                    {
                        return Ok(Cow::Owned(Value::Bool(!decisive)));
                    }
                }
                match (l, r) {
                    (Err(e), _) => Err(e),
                    (_, Err(e)) => Err(e),
                    _ => no_overload(),
                }
            }
            Func::Cond if args.len() == 3 => {
                let c = self.eval(&args[0])?;
                match c.as_ref() {
                    Value::Bool(true) => self.eval(&args[1]),
                    Value::Bool(false) => self.eval(&args[2]),
                    _ => no_overload(),
                }
            }
            Func::NotStrictlyFalse if args.len() == 1 => {
                let v = self.eval(&args[0]);
                match &v {
                    Ok(v) if matches!(v.as_ref(), Value::Bool(false)) => {
                        Ok(Cow::Owned(Value::Bool(false)))
                    }
                    Err(f) if f.budget_exceeded => Err(f.clone()),
                    _ => Ok(Cow::Owned(Value::Bool(true))),
                }
            }
            Func::Add if args.len() == 2 && target.is_none() => {
                // In-place append to a comprehension accumulator (`@result + [x]` of map and
                // filter), as cel-go does, so that those macros stay linear.
                if let (Kind::Var(slot), Kind::List(elems)) = (&args[0].kind, &args[1].kind)
                    && let Some(Ok(Cow::Owned(Value::List(_)))) = &self.slots[*slot]
                    && let Some(Ok(Cow::Owned(Value::List(mut acc)))) = self.slots[*slot].take()
                {
                    self.tick()?;
                    let v = Arc::make_mut(&mut acc);
                    for e in elems {
                        match self.eval(e) {
                            Ok(x) => v.push(x.into_owned()),
                            Err(f) => return Err(f),
                        }
                    }
                    return Ok(Cow::Owned(Value::List(acc)));
                }
                let a = self.eval(&args[0])?;
                let b = self.eval(&args[1])?;
                if let (Value::List(x), Value::List(y)) = (a.as_ref(), b.as_ref()) {
                    self.steps = self.steps.saturating_add((x.len() + y.len()) as u64);
                }
                self.apply(func, name, None, &[a, b], regex)
            }
            _ => {
                let t = match target {
                    Some(t) => Some(self.eval(t)?),
                    None => None,
                };
                match args.len() {
                    0 => self.apply(func, name, t, &[], regex),
                    1 => {
                        let a = self.eval(&args[0])?;
                        self.apply(func, name, t, &[a], regex)
                    }
                    2 => {
                        let a = self.eval(&args[0])?;
                        let b = self.eval(&args[1])?;
                        self.apply(func, name, t, &[a, b], regex)
                    }
                    _ => {
                        let mut v = Vec::with_capacity(args.len());
                        for a in args {
                            v.push(self.eval(a)?);
                        }
                        self.apply(func, name, t, &v, regex)
                    }
                }
            }
        }
    }

    fn apply(
        &mut self,
        func: Func,
        name: &str,
        target: Option<Cow<'a, Value>>,
        args: &[Cow<'a, Value>],
        regex: Option<&Result<Arc<regex::Regex>, String>>,
    ) -> EResult<'a> {
        let owned = |v: Value| -> EResult<'a> { Ok(Cow::Owned(v)) };
        // global-style argument list, the receiver first, without allocating
        let mut buf: [&Value; 4] = [&NULL_VALUE; 4];
        let mut count = 0;
        for v in target.iter().chain(args.iter()) {
            if count == buf.len() {
                return no_overload();
            }
            buf[count] = v.as_ref();
            count += 1;
        }
        let argv: &[&Value] = &buf[..count];
        match (func, argv) {
            (Func::Eq, [a, b]) => owned(Value::Bool(a.cel_eq(b))),
            (Func::Ne, [a, b]) => owned(Value::Bool(!a.cel_eq(b))),
            (Func::Lt | Func::Le | Func::Gt | Func::Ge, [a, b]) => {
                let o = compare(a, b)?;
                owned(Value::Bool(match func {
                    Func::Lt => o == Ordering::Less,
                    Func::Le => o != Ordering::Greater,
                    Func::Gt => o == Ordering::Greater,
                    _ => o != Ordering::Less,
                }))
            }
            (Func::Not, [Value::Bool(b)]) => owned(Value::Bool(!b)),
            (Func::Add, [a, b]) => add(a, b).map(Cow::Owned),
            (Func::Sub, [a, b]) => sub(a, b).map(Cow::Owned),
            (Func::Mul, [a, b]) => mul(a, b).map(Cow::Owned),
            (Func::Div, [a, b]) => div(a, b).map(Cow::Owned),
            (Func::Mod, [a, b]) => rem(a, b).map(Cow::Owned),
            (Func::Neg, [Value::Int(i)]) => i
                .checked_neg()
                .map(|v| Cow::Owned(Value::Int(v)))
                .ok_or_else(|| Fault::new("integer overflow")),
            (Func::Neg, [Value::Double(d)]) => owned(Value::Double(-d)),
            (Func::Index, _) if argv.len() == 2 => {
                // keep borrowing when the container is borrowed
                let key = args[1].as_ref();
                match &args[0] {
                    Cow::Borrowed(c) => index(c, key).map(Cow::Borrowed),
                    Cow::Owned(c) => index(c, key).map(|v| Cow::Owned(v.clone())),
                }
            }
            (Func::In, [x, Value::List(l)]) => owned(Value::Bool(l.iter().any(|e| e.cel_eq(x)))),
            (Func::In, [x, Value::Map(m)]) => owned(Value::Bool(matches!(m.get(x), Ok(Some(_))))),
            (Func::Size, [v]) => match v {
                Value::String(s) => owned(Value::Int(s.chars().count() as i64)),
                Value::Bytes(b) => owned(Value::Int(b.len() as i64)),
                Value::List(l) => owned(Value::Int(l.len() as i64)),
                Value::Map(m) => owned(Value::Int(m.len() as i64)),
                _ => no_overload(),
            },
            (Func::Contains, [Value::String(s), Value::String(p)]) if target.is_some() => {
                owned(Value::Bool(s.contains(&**p)))
            }
            (Func::StartsWith, [Value::String(s), Value::String(p)]) if target.is_some() => {
                owned(Value::Bool(s.starts_with(&**p)))
            }
            (Func::EndsWith, [Value::String(s), Value::String(p)]) if target.is_some() => {
                owned(Value::Bool(s.ends_with(&**p)))
            }
            (Func::Matches, [Value::String(s), Value::String(p)]) => match regex {
                Some(Ok(re)) => owned(Value::Bool(re.is_match(s))),
                Some(Err(e)) => Err(Fault::new(e.clone())),
                None => match regex::Regex::new(p) {
                    Ok(re) => owned(Value::Bool(re.is_match(s))),
                    Err(e) => Err(Fault::new(regex_error(&e))),
                },
            },
            (Func::TypeOf, [v]) => owned(Value::Type(v.type_of())),
            (Func::ToDyn, [_]) => Ok(args
                .first()
                .cloned()
                .or(target)
                .unwrap_or(Cow::Owned(Value::Null))),
            (Func::ToInt, [v]) => to_int(v).map(|i| Cow::Owned(Value::Int(i))),
            (Func::ToUint, [v]) => to_uint(v).map(|u| Cow::Owned(Value::Uint(u))),
            (Func::ToDouble, [v]) => to_double(v).map(|d| Cow::Owned(Value::Double(d))),
            (Func::ToString, [v]) => to_string(v).map(|s| Cow::Owned(Value::string(&s))),
            (Func::ToBytes, [Value::Bytes(b)]) => owned(Value::Bytes(b.clone())),
            (Func::ToBytes, [Value::String(s)]) => owned(Value::Bytes(Arc::from(s.as_bytes()))),
            (Func::ToBool, [Value::Bool(b)]) => owned(Value::Bool(*b)),
            (Func::ToBool, [Value::String(s)]) => match &**s {
                "1" | "t" | "T" | "TRUE" | "true" | "True" => owned(Value::Bool(true)),
                "0" | "f" | "F" | "FALSE" | "false" | "False" => owned(Value::Bool(false)),
                _ => Err(Fault::new(format!(
                    "type conversion error from 'string' to 'bool': {s}"
                ))),
            },
            (Func::ToDuration, [Value::Duration(d)]) => owned(Value::Duration(*d)),
            (Func::ToDuration, [Value::String(s)]) => Duration::parse(s)
                .map(|d| Cow::Owned(Value::Duration(d)))
                .map_err(Fault::new),
            (Func::ToTimestamp, [Value::Timestamp(t)]) => owned(Value::Timestamp(*t)),
            (Func::ToTimestamp, [Value::String(s)]) => Timestamp::parse(s)
                .map(|t| Cow::Owned(Value::Timestamp(t)))
                .map_err(Fault::new),
            (Func::ToTimestamp, [Value::Int(i)]) => Timestamp::new(*i, 0)
                .map(|t| Cow::Owned(Value::Timestamp(t)))
                .map_err(Fault::new),
            (Func::TimeField(f), [Value::Timestamp(t)]) if target.is_some() => t
                .field(f, None)
                .map(|v| Cow::Owned(Value::Int(v)))
                .map_err(Fault::new),
            (Func::TimeField(f), [Value::Timestamp(t), Value::String(tz)]) if target.is_some() => t
                .field(f, Some(tz))
                .map(|v| Cow::Owned(Value::Int(v)))
                .map_err(Fault::new),
            (
                Func::TimeField(f @ ("getHours" | "getMinutes" | "getSeconds" | "getMilliseconds")),
                [Value::Duration(d)],
            ) if target.is_some() => owned(Value::Int(d.field(f))),
            (Func::Other, _) => Err(Fault::new(format!("no matching overload for '{name}'"))),
            _ => no_overload(),
        }
    }
}

/// Field selection on a map value (unstructured semantics).
fn select<'a>(o: Cow<'a, Value>, field: &str, test: bool) -> EResult<'a> {
    match o {
        Cow::Borrowed(Value::Map(m)) => {
            if test {
                return Ok(Cow::Owned(Value::Bool(m.get_str(field).is_some())));
            }
            match m.get_str(field) {
                Some(v) => Ok(Cow::Borrowed(v)),
                None => Err(Fault::new(format!("no such key: {field}"))),
            }
        }
        Cow::Owned(Value::Map(m)) => {
            if test {
                return Ok(Cow::Owned(Value::Bool(m.get_str(field).is_some())));
            }
            match m.get_str(field) {
                Some(v) => Ok(Cow::Owned(v.clone())),
                None => Err(Fault::new(format!("no such key: {field}"))),
            }
        }
        _ => no_overload(),
    }
}

fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Double(d) => format_double_go(*d),
        other => other.render().trim_end_matches('u').to_string(),
    }
}

fn index<'v>(c: &'v Value, key: &Value) -> Result<&'v Value, Fault> {
    match c {
        Value::List(l) => {
            let i: i64 = match key {
                Value::Int(i) => *i,
                Value::Uint(u) => i64::try_from(*u).unwrap_or(i64::MAX),
                Value::Double(d) if d.fract() == 0.0 && d.is_finite() => *d as i64,
                Value::Double(d) => {
                    return Err(Fault::new(format!(
                        "unsupported index value {} in list",
                        format_double_go(*d)
                    )));
                }
                _ => return no_overload(),
            };
            if i < 0 || i as usize >= l.len() {
                return Err(Fault::new(format!(
                    "index '{i}' out of range in list size '{}'",
                    l.len()
                )));
            }
            Ok(&l[i as usize])
        }
        Value::Map(m) => match m.get(key) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(Fault::new(format!("no such key: {}", key_text(key)))),
            Err(_) => no_overload(),
        },
        _ => no_overload(),
    }
}

pub fn compare(a: &Value, b: &Value) -> Result<Ordering, Fault> {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        (Value::String(x), Value::String(y)) => Ok(x.as_bytes().cmp(y.as_bytes())),
        (Value::Bytes(x), Value::Bytes(y)) => Ok(x.cmp(y)),
        (Value::Timestamp(x), Value::Timestamp(y)) => Ok(x.cmp(y)),
        (Value::Duration(x), Value::Duration(y)) => Ok(x.cmp(y)),
        (
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
        ) => numeric_cmp(a, b).ok_or_else(|| Fault::new("NaN values cannot be ordered")),
        _ => no_overload(),
    }
}

fn int_overflow<T>() -> Result<T, Fault> {
    Err(Fault::new("integer overflow"))
}
fn uint_overflow<T>() -> Result<T, Fault> {
    Err(Fault::new("unsigned integer overflow"))
}

fn add(a: &Value, b: &Value) -> Result<Value, Fault> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_add(*y).map_or_else(int_overflow, Ok)?)
        }
        (Value::Uint(x), Value::Uint(y)) => {
            Value::Uint(x.checked_add(*y).map_or_else(uint_overflow, Ok)?)
        }
        (Value::Double(x), Value::Double(y)) => Value::Double(x + y),
        (Value::String(x), Value::String(y)) => {
            let mut s = String::with_capacity(x.len() + y.len());
            s.push_str(x);
            s.push_str(y);
            Value::string(&s)
        }
        (Value::Bytes(x), Value::Bytes(y)) => {
            let mut v = x.to_vec();
            v.extend_from_slice(y);
            Value::Bytes(Arc::from(v))
        }
        (Value::List(x), Value::List(y)) => {
            let mut v = Vec::with_capacity(x.len() + y.len());
            v.extend(x.iter().cloned());
            v.extend(y.iter().cloned());
            Value::list(v)
        }
        (Value::Duration(x), Value::Duration(y)) => {
            Value::Duration(x.checked_add(*y).map_err(Fault::new)?)
        }
        (Value::Timestamp(t), Value::Duration(d)) | (Value::Duration(d), Value::Timestamp(t)) => {
            Value::Timestamp(t.add(*d).map_err(Fault::new)?)
        }
        _ => return no_overload(),
    })
}

fn sub(a: &Value, b: &Value) -> Result<Value, Fault> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_sub(*y).map_or_else(int_overflow, Ok)?)
        }
        (Value::Uint(x), Value::Uint(y)) => {
            Value::Uint(x.checked_sub(*y).map_or_else(uint_overflow, Ok)?)
        }
        (Value::Double(x), Value::Double(y)) => Value::Double(x - y),
        (Value::Duration(x), Value::Duration(y)) => {
            Value::Duration(x.checked_sub(*y).map_err(Fault::new)?)
        }
        (Value::Timestamp(t), Value::Duration(d)) => Value::Timestamp(
            t.add(Duration {
                nanos: d
                    .nanos
                    .checked_neg()
                    .ok_or_else(|| Fault::new("timestamp overflow"))?,
            })
            .map_err(Fault::new)?,
        ),
        (Value::Timestamp(x), Value::Timestamp(y)) => {
            Value::Duration(x.sub(y).map_err(Fault::new)?)
        }
        _ => return no_overload(),
    })
}

fn mul(a: &Value, b: &Value) -> Result<Value, Fault> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_mul(*y).map_or_else(int_overflow, Ok)?)
        }
        (Value::Uint(x), Value::Uint(y)) => {
            Value::Uint(x.checked_mul(*y).map_or_else(uint_overflow, Ok)?)
        }
        (Value::Double(x), Value::Double(y)) => Value::Double(x * y),
        _ => return no_overload(),
    })
}

fn div(a: &Value, b: &Value) -> Result<Value, Fault> {
    Ok(match (a, b) {
        (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
            return Err(Fault::new("division by zero"));
        }
        (Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_div(*y).map_or_else(int_overflow, Ok)?)
        }
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(x / y),
        (Value::Double(x), Value::Double(y)) => Value::Double(x / y),
        _ => return no_overload(),
    })
}

fn rem(a: &Value, b: &Value) -> Result<Value, Fault> {
    Ok(match (a, b) {
        (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
            return Err(Fault::new("modulus by zero"));
        }
        (Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_rem(*y).map_or_else(int_overflow, Ok)?)
        }
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(x % y),
        _ => return no_overload(),
    })
}

fn conv_err<T>(from: &Value, to: &str) -> Result<T, Fault> {
    Err(Fault::new(format!(
        "type conversion error from '{}' to '{to}'",
        from.type_of().name()
    )))
}

fn to_int(v: &Value) -> Result<i64, Fault> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Uint(u) => i64::try_from(*u).or_else(|_| int_overflow()),
        Value::Double(d) => {
            if d.is_nan() || *d <= -9.223_372_036_854_776e18 || *d >= 9.223_372_036_854_776e18 {
                int_overflow()
            } else {
                Ok(*d as i64)
            }
        }
        Value::String(s) => s.parse::<i64>().or_else(|_| conv_err(v, "int")),
        Value::Timestamp(t) => Ok(t.secs),
        Value::Duration(d) => Ok(d.nanos),
        _ => no_overload(),
    }
}

fn to_uint(v: &Value) -> Result<u64, Fault> {
    match v {
        Value::Uint(u) => Ok(*u),
        Value::Int(i) => u64::try_from(*i).or_else(|_| uint_overflow()),
        Value::Double(d) => {
            if d.is_nan() || *d < 0.0 || *d >= 1.844_674_407_370_955_2e19 {
                uint_overflow()
            } else {
                Ok(*d as u64)
            }
        }
        Value::String(s) => s.parse::<u64>().or_else(|_| conv_err(v, "uint")),
        _ => no_overload(),
    }
}

fn to_double(v: &Value) -> Result<f64, Fault> {
    match v {
        Value::Double(d) => Ok(*d),
        Value::Int(i) => Ok(*i as f64),
        Value::Uint(u) => Ok(*u as f64),
        Value::String(s) => s.parse::<f64>().or_else(|_| conv_err(v, "double")),
        _ => no_overload(),
    }
}

fn to_string(v: &Value) -> Result<String, Fault> {
    match v {
        Value::String(s) => Ok(s.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        Value::Int(i) => Ok(i.to_string()),
        Value::Uint(u) => Ok(u.to_string()),
        Value::Double(d) => Ok(format_double_go(*d)),
        Value::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => Ok(s.to_string()),
            Err(_) => Err(Fault::new(
                "invalid UTF-8 in bytes, cannot convert to string",
            )),
        },
        Value::Timestamp(t) => Ok(t.to_rfc3339()),
        Value::Duration(d) => Ok(d.to_cel_string()),
        Value::Type(t) => Ok(t.name().to_string()),
        _ => no_overload(),
    }
}
