//! Function calls of the evaluator: the logical operators, the standard library and the
//! string extension, with cel-go's dispatch (a guarded overload when the checker narrowed
//! the call, dynamic dispatch otherwise) and the cost of each operation.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::sync::Arc;

use super::ast::{Func, Kind, Node};
use super::decls::Overload;
use super::eval::{EResult, Evaluator, Fault, field_of_a_list, no_such_key};
use super::ext;
use super::ops::{self, NO_SUCH_OVERLOAD};
use super::regex::{self, Compiled};
use super::value::{Value, format_double_go};

fn no_overload<T>() -> Result<T, Fault> {
    Err(Fault::new(NO_SUCH_OVERLOAD))
}

/// `no such overload: name(type, ...)`, cel-go's message for a function bound per overload.
fn no_such_overload(name: &str, args: &[&Value]) -> Fault {
    let types: Vec<&str> = args.iter().map(|v| v.type_of().name()).collect();
    Fault::new(format!("{NO_SUCH_OVERLOAD}: {name}({})", types.join(", ")))
}

/// cel-go's `IsAssignableRuntimeType`: lists and maps are judged by their first element.
fn runtime_assignable(t: &super::types::CelType, v: &Value) -> bool {
    use super::types::CelType;
    match (t, v) {
        (CelType::Dyn | CelType::Param(_) | CelType::Error, _) => true,
        (CelType::Bool, Value::Bool(_))
        | (CelType::Int, Value::Int(_))
        | (CelType::Uint, Value::Uint(_))
        | (CelType::Double, Value::Double(_))
        | (CelType::String, Value::String(_))
        | (CelType::Bytes, Value::Bytes(_))
        | (CelType::Null, Value::Null)
        | (CelType::Timestamp, Value::Timestamp(_))
        | (CelType::Duration, Value::Duration(_))
        | (CelType::Type(_), Value::Type(_)) => true,
        (CelType::List(e), Value::List(l)) => l.first().is_none_or(|x| runtime_assignable(e, x)),
        (CelType::Map(k, val), Value::Map(m)) => m.entries().first().is_none_or(|(mk, mv)| {
            runtime_assignable(k, mk.value()) && runtime_assignable(val, mv)
        }),
        _ => false,
    }
}

/// Functions bound per overload: a run-time type no overload takes is reported with the
/// argument types.
fn per_overload(func: Func) -> bool {
    !matches!(
        func,
        Func::And
            | Func::Or
            | Func::Not
            | Func::Cond
            | Func::NotStrictlyFalse
            | Func::Eq
            | Func::Ne
            | Func::Lt
            | Func::Le
            | Func::Gt
            | Func::Ge
            | Func::Add
            | Func::Sub
            | Func::Mul
            | Func::Div
            | Func::Mod
            | Func::Neg
            | Func::Index
            | Func::In
            | Func::Size
            | Func::Contains
            | Func::StartsWith
            | Func::EndsWith
            | Func::Matches
            | Func::TypeOf
            | Func::ToDyn
            | Func::Other
    )
}

fn owned<'a>(v: Value) -> EResult<'a> {
    Ok(Cow::Owned(v))
}

impl<'a> Evaluator<'a> {
    pub(super) fn call(
        &mut self,
        func: Func,
        name: &str,
        target: Option<&'a Node>,
        args: &'a [Node],
        regex: Option<&Result<Arc<Compiled>, String>>,
        guard: Option<&'static Overload>,
    ) -> EResult<'a> {
        match func {
            Func::And | Func::Or if args.len() == 2 => {
                let decisive = func == Func::Or;
                let l = self.eval(&args[0]);
                if let Ok(v) = &l
                    && let Value::Bool(b) = v.as_ref()
                    && *b == decisive
                {
                    return owned(Value::Bool(decisive));
                }
                if let Err(f) = &l
                    && f.budget.is_some()
                {
                    return Err(f.clone());
                }
                let r = self.eval(&args[1]);
                if let Ok(v) = &r
                    && let Value::Bool(b) = v.as_ref()
                {
                    if *b == decisive {
                        return owned(Value::Bool(decisive));
                    }
                    if let Ok(lv) = &l
                        && let Value::Bool(_) = lv.as_ref()
                    {
                        return owned(Value::Bool(!decisive));
                    }
                }
                match (l, r) {
                    (_, Err(e)) if e.budget.is_some() => Err(e),
                    (Err(e), _) => Err(e),
                    (_, Err(e)) => Err(e),
                    _ => no_overload(),
                }
            }
            Func::Cond if args.len() == 3 => {
                let rc = self.eval(&args[0]);
                let Ok(c) = &rc else { return rc };
                match c.as_ref() {
                    Value::Bool(true) => self.eval(&args[1]),
                    Value::Bool(false) => self.eval(&args[2]),
                    _ => no_overload(),
                }
            }
            Func::NotStrictlyFalse if args.len() == 1 => {
                let v = self.eval(&args[0]);
                match &v {
                    Ok(v) if matches!(v.as_ref(), Value::Bool(false)) => owned(Value::Bool(false)),
                    Err(f) if f.budget.is_some() => Err(f.clone()),
                    _ => owned(Value::Bool(true)),
                }
            }
            // The commonest calls of readiness and health rules, decided here for the cases
            // `apply` would decide the same way, without its general dispatch.
            // The operands are read where the evaluation left them, not moved out of their
            // results: a move reloads what was just stored, wider than it was stored, and the
            // processor stalls on it (half of this function's time before).
            Func::Eq | Func::Ne if args.len() == 2 && target.is_none() && guard.is_none() => {
                let ra = self.eval(&args[0]);
                let Ok(a) = &ra else { return ra };
                let rb = self.eval(&args[1]);
                let Ok(b) = &rb else { return rb };
                let eq = match (a.as_ref(), b.as_ref()) {
                    (Value::Int(x), Value::Int(y)) => x == y,
                    (a, b) => ops::equal(a, b, &mut self.budget)?,
                };
                owned(Value::Bool(eq == (func == Func::Eq)))
            }
            Func::Lt | Func::Le | Func::Gt | Func::Ge
                if args.len() == 2 && target.is_none() && guard.is_none() =>
            {
                let ra = self.eval(&args[0]);
                let Ok(a) = &ra else { return ra };
                let rb = self.eval(&args[1]);
                let Ok(b) = &rb else { return rb };
                if let (Value::Int(x), Value::Int(y)) = (a.as_ref(), b.as_ref()) {
                    return owned(Value::Bool(match func {
                        Func::Lt => x < y,
                        Func::Le => x <= y,
                        Func::Gt => x > y,
                        _ => x >= y,
                    }));
                }
                let (Ok(a), Ok(b)) = (ra, rb) else {
                    unreachable!("both are Ok")
                };
                self.apply(func, name, None, &[a, b], regex, guard)
            }
            Func::ToInt if args.len() == 1 && target.is_none() && guard.is_none() => {
                let ra = self.eval(&args[0]);
                match &ra {
                    // int(int) is the value itself
                    Ok(a) if matches!(a.as_ref(), Value::Int(_)) => ra,
                    Ok(_) => {
                        let Ok(a) = ra else {
                            unreachable!("matched Ok")
                        };
                        self.apply(func, name, None, &[a], regex, guard)
                    }
                    Err(_) => ra,
                }
            }
            Func::Add if args.len() == 2 && target.is_none() => {
                // In-place append to a comprehension accumulator (`@result + [x]` of map and
                // filter), as cel-go does, so that those macros stay linear.
                if let (Kind::Var(slot), Kind::List(elems)) = (&args[0].kind, &args[1].kind)
                    && let Some(Ok(Cow::Owned(Value::List(_)))) = &self.slots[*slot]
                    && let Some(Ok(Cow::Owned(Value::List(mut acc)))) = self.slots[*slot].take()
                {
                    self.budget.tick()?;
                    self.budget.alloc_slots(elems.len())?;
                    let v = Arc::make_mut(&mut acc);
                    for e in elems {
                        v.push(self.eval(e)?.into_owned());
                    }
                    return owned(Value::List(acc));
                }
                let a = self.eval(&args[0])?;
                let b = self.eval(&args[1])?;
                self.apply(func, name, None, &[a, b], regex, guard)
            }
            _ => {
                let t = match target {
                    Some(t) => Some(self.eval(t)?),
                    None => None,
                };
                match args.len() {
                    0 => self.apply(func, name, t, &[], regex, guard),
                    1 => {
                        let a = self.eval(&args[0])?;
                        self.apply(func, name, t, &[a], regex, guard)
                    }
                    2 => {
                        let a = self.eval(&args[0])?;
                        let b = self.eval(&args[1])?;
                        self.apply(func, name, t, &[a, b], regex, guard)
                    }
                    _ => {
                        let mut v = Vec::with_capacity(args.len());
                        for a in args {
                            v.push(self.eval(a)?);
                        }
                        self.apply(func, name, t, &v, regex, guard)
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
        regex: Option<&Result<Arc<Compiled>, String>>,
        guard: Option<&'static Overload>,
    ) -> EResult<'a> {
        // global-style argument list, the receiver first, without allocating
        let mut buf: [&Value; 5] = [&Value::Null; 5];
        let mut count = 0;
        for v in target.iter().chain(args.iter()) {
            if count == buf.len() {
                return no_overload();
            }
            buf[count] = v.as_ref();
            count += 1;
        }
        let argv: &[&Value] = &buf[..count];
        if let Some(o) = guard
            && (o.args.len() != argv.len()
                || !o
                    .args
                    .iter()
                    .zip(argv)
                    .all(|(t, v)| runtime_assignable(t, v)))
        {
            return Err(no_such_overload(name, argv));
        }
        let member = target.is_some();
        let b = &mut self.budget;
        let r: Result<Value, Fault> = match (func, argv) {
            (Func::Eq, [x, y]) => Ok(Value::Bool(ops::equal(x, y, b)?)),
            (Func::Ne, [x, y]) => Ok(Value::Bool(!ops::equal(x, y, b)?)),
            (Func::Lt | Func::Le | Func::Gt | Func::Ge, [x, y]) => {
                if !ops::has_trait(name, x) {
                    return Err(Fault::new(format!("{NO_SUCH_OVERLOAD}: {name}")));
                }
                let o = ops::compare(x, y, b)?;
                Ok(Value::Bool(match func {
                    Func::Lt => o == Ordering::Less,
                    Func::Le => o != Ordering::Greater,
                    Func::Gt => o == Ordering::Greater,
                    _ => o != Ordering::Less,
                }))
            }
            (Func::Not, [Value::Bool(v)]) => Ok(Value::Bool(!v)),
            (Func::Add | Func::Sub | Func::Mul | Func::Div | Func::Mod, [x, y]) => {
                if !ops::has_trait(name, x) {
                    return Err(Fault::new(format!("{NO_SUCH_OVERLOAD}: {name}")));
                }
                match func {
                    Func::Add => ops::add(x, y, b),
                    Func::Sub => ops::sub(x, y),
                    Func::Mul => ops::mul(x, y),
                    Func::Div => ops::div(x, y),
                    _ => ops::rem(x, y),
                }
                .map_err(Fault::from)
            }
            (Func::Neg, [x]) => {
                if !ops::has_trait(name, x) {
                    return Err(Fault::new(format!("{NO_SUCH_OVERLOAD}: {name}")));
                }
                ops::neg(x).map_err(Fault::from)
            }
            (Func::Index, [_, k]) => {
                // keep borrowing when the container is borrowed
                return match &args[0] {
                    Cow::Borrowed(container) => index(container, k, b).map(Cow::Borrowed),
                    Cow::Owned(container) => index(container, k, b).map(|v| Cow::Owned(v.clone())),
                };
            }
            (Func::In, [x, Value::List(l)]) => {
                let mut found = false;
                for e in l.iter() {
                    b.tick()?;
                    if ops::equal(e, x, b)? {
                        found = true;
                        break;
                    }
                }
                Ok(Value::Bool(found))
            }
            (Func::In, [x, Value::Map(m)]) => {
                if let Value::String(s) = x {
                    b.scan(s.len())?;
                }
                Ok(Value::Bool(matches!(m.find(x), Ok(Some(_)))))
            }
            (Func::Size, [v]) => match v {
                Value::String(s) => {
                    b.scan(s.len())?;
                    Ok(Value::Int(s.chars().count() as i64))
                }
                Value::Bytes(x) => Ok(Value::Int(x.len() as i64)),
                Value::List(l) => Ok(Value::Int(l.len() as i64)),
                Value::Map(m) => Ok(Value::Int(m.len() as i64)),
                _ => return Err(Fault::new(format!("{NO_SUCH_OVERLOAD}: {name}"))),
            },
            (Func::Contains, [Value::String(s), Value::String(p)]) if member => {
                b.scan(s.len() + p.len())?;
                Ok(Value::Bool(s.contains(&**p)))
            }
            (Func::StartsWith, [Value::String(s), Value::String(p)]) if member => {
                b.scan(p.len())?;
                Ok(Value::Bool(s.starts_with(&**p)))
            }
            (Func::EndsWith, [Value::String(s), Value::String(p)]) if member => {
                b.scan(p.len())?;
                Ok(Value::Bool(s.ends_with(&**p)))
            }
            (Func::Matches, [s, p]) => {
                let (Value::String(s), Value::String(p)) = (s, p) else {
                    return Err(Fault::new(if ops::has_trait(name, s) {
                        NO_SUCH_OVERLOAD.to_string()
                    } else {
                        format!("{NO_SUCH_OVERLOAD}: {name}")
                    }));
                };
                let compiled = match regex {
                    Some(r) => r.clone(),
                    None => {
                        let (r, miss) = regex::cached(p);
                        if miss {
                            // compiling: time and memory of the program
                            b.scan(p.len())?;
                            if let Ok(c) = &r {
                                b.charge(c.weight)?;
                                b.alloc(c.memory())?;
                            }
                        }
                        r
                    }
                };
                let re = compiled.map_err(Fault::new)?;
                b.charge(re.match_cost(s.len()))?;
                Ok(Value::Bool(re.re.is_match(s)))
            }
            (Func::TypeOf, [v]) => Ok(Value::Type(v.type_of())),
            (Func::ToDyn, [_]) => {
                return Ok(args
                    .first()
                    .cloned()
                    .or(target)
                    .unwrap_or(Cow::Owned(Value::Null)));
            }
            (Func::ToInt, [v]) => ops::to_int(v).map(Value::Int).map_err(Fault::from),
            (Func::ToUint, [v]) => ops::to_uint(v).map(Value::Uint).map_err(Fault::from),
            (Func::ToDouble, [v]) => ops::to_double(v).map(Value::Double).map_err(Fault::from),
            (Func::ToString, [v]) => ops::to_string(v, b).map_err(Fault::from),
            (Func::ToBytes, [v]) => ops::to_bytes(v, b).map_err(Fault::from),
            (Func::ToBool, [v]) => ops::to_bool(v).map(Value::Bool).map_err(Fault::from),
            (Func::ToDuration, [v]) => ops::to_duration(v)
                .map(Value::Duration)
                .map_err(Fault::from),
            (Func::ToTimestamp, [v]) => ops::to_timestamp(v)
                .map(Value::Timestamp)
                .map_err(Fault::from),
            (Func::TimeField(f), [Value::Timestamp(t)]) if member => {
                t.field(f, None).map(Value::Int).map_err(Fault::new)
            }
            (Func::TimeField(f), [Value::Timestamp(t), Value::String(tz)]) if member => {
                t.field(f, Some(tz)).map(Value::Int).map_err(Fault::new)
            }
            (
                Func::TimeField(f @ ("getHours" | "getMinutes" | "getSeconds" | "getMilliseconds")),
                [Value::Duration(d)],
            ) if member => Ok(Value::Int(d.field(f))),
            (f, _) if is_string_ext(f) => string_ext(f, argv, b),
            (Func::Other, _) => Err(Fault::new(format!("no matching overload for '{name}'"))),
            _ => Err(Fault::new(NO_SUCH_OVERLOAD)),
        };
        match r {
            Ok(v) => owned(v),
            Err(f) if f.budget.is_none() && f.message == NO_SUCH_OVERLOAD && per_overload(func) => {
                Err(no_such_overload(name, argv))
            }
            Err(f) => Err(f),
        }
    }
}

fn is_string_ext(f: Func) -> bool {
    matches!(
        f,
        Func::CharAt
            | Func::IndexOf
            | Func::LastIndexOf
            | Func::LowerAscii
            | Func::UpperAscii
            | Func::Replace
            | Func::Split
            | Func::Substring
            | Func::Trim
            | Func::Join
            | Func::Quote
            | Func::Format
            | Func::Reverse
    )
}

/// The string extension's functions (the argument types are guarded by the caller).
fn string_ext(f: Func, argv: &[&Value], b: &mut super::cost::Budget) -> Result<Value, Fault> {
    let s = |v: &Value| match v {
        Value::String(s) => Ok(s.clone()),
        _ => Err(Fault::new(NO_SUCH_OVERLOAD)),
    };
    let i = |v: &Value| match v {
        Value::Int(i) => Ok(*i),
        _ => Err(Fault::new(NO_SUCH_OVERLOAD)),
    };
    let string = |b: &mut super::cost::Budget, r: String| -> Result<Value, Fault> {
        b.alloc(r.len() as u64)?;
        Ok(Value::String(Arc::from(r)))
    };
    let len0 = match argv.first() {
        Some(Value::String(x)) => x.len(),
        Some(Value::List(l)) => l.len(),
        _ => 0,
    };
    b.scan(len0)?;
    match (f, argv) {
        (Func::CharAt, [x, n]) => string(b, ext::char_at(&s(x)?, i(n)?).map_err(Fault::new)?),
        (Func::IndexOf, [x, sub]) => {
            let sub = s(sub)?;
            b.scan(sub.len())?;
            ext::index_of(&s(x)?, &sub, 0)
                .map(Value::Int)
                .map_err(Fault::new)
        }
        (Func::IndexOf, [x, sub, off]) => {
            let sub = s(sub)?;
            b.scan(sub.len())?;
            ext::index_of(&s(x)?, &sub, i(off)?)
                .map(Value::Int)
                .map_err(Fault::new)
        }
        (Func::LastIndexOf, [x, sub]) => {
            let sub = s(sub)?;
            b.scan(sub.len())?;
            ext::last_index_of(&s(x)?, &sub)
                .map(Value::Int)
                .map_err(Fault::new)
        }
        (Func::LastIndexOf, [x, sub, off]) => {
            let sub = s(sub)?;
            b.scan(sub.len())?;
            ext::last_index_of_offset(&s(x)?, &sub, i(off)?)
                .map(Value::Int)
                .map_err(Fault::new)
        }
        (Func::LowerAscii, [x]) => string(b, ext::lower_ascii(&s(x)?)),
        (Func::UpperAscii, [x]) => string(b, ext::upper_ascii(&s(x)?)),
        (Func::Trim, [x]) => string(b, ext::trim(&s(x)?)),
        (Func::Reverse, [x]) => string(b, ext::reverse(&s(x)?)),
        (Func::Quote, [x]) => string(b, ext::quote(&s(x)?)),
        (Func::Replace, [x, old, new]) | (Func::Replace, [x, old, new, _]) => {
            let n = match argv.get(3) {
                Some(n) => i(n)?,
                None => -1,
            };
            let (x, old, new) = (s(x)?, s(old)?, s(new)?);
            // bound the result before building it
            let count = if old.is_empty() {
                x.chars().count() + 1
            } else {
                x.matches(&*old).count()
            };
            let count = if n < 0 { count } else { count.min(n as usize) };
            let size = x.len() as u64 + count as u64 * new.len() as u64;
            b.alloc(size)?;
            Ok(Value::String(Arc::from(ext::replace(&x, &old, &new, n))))
        }
        (Func::Split, [x, sep]) | (Func::Split, [x, sep, _]) => {
            let n = match argv.get(2) {
                Some(n) => i(n)?,
                None => -1,
            };
            let (x, sep) = (s(x)?, s(sep)?);
            b.alloc(x.len() as u64)?;
            let parts = ext::split(&x, &sep, n);
            b.alloc_slots(parts.len())?;
            Ok(ext::string_list(parts))
        }
        (Func::Substring, [x, start]) => string(
            b,
            ext::substring(&s(x)?, i(start)?, None).map_err(Fault::new)?,
        ),
        (Func::Substring, [x, start, end]) => string(
            b,
            ext::substring(&s(x)?, i(start)?, Some(i(end)?)).map_err(Fault::new)?,
        ),
        (Func::Join, [Value::List(l)]) | (Func::Join, [Value::List(l), _]) => {
            let sep = match argv.get(1) {
                Some(sep) => s(sep)?,
                None => Arc::from(""),
            };
            let total: usize = l
                .iter()
                .map(|v| match v {
                    Value::String(x) => x.len(),
                    _ => 0,
                })
                .sum::<usize>()
                + sep.len() * l.len().saturating_sub(1);
            b.alloc(total as u64)?;
            ext::join(l, &sep)
                .map(|r| Value::String(Arc::from(r)))
                .map_err(Fault::new)
        }
        (Func::Format, [x, Value::List(l)]) => {
            let out = ext::format(&s(x)?, l).map_err(Fault::new)?;
            string(b, out)
        }
        _ => Err(Fault::new(NO_SUCH_OVERLOAD)),
    }
}

/// Field selection (cel-go's attribute qualification): a map's key, or for `has()` whether
/// it is there; a list cannot be selected into; anything else has no keys.
#[inline(always)]
pub fn select<'a>(o: &Cow<'a, Value>, field: &str, test: bool) -> EResult<'a> {
    Ok(match o {
        Cow::Borrowed(v) => match selected(v, field, test)? {
            Ok(x) => Cow::Borrowed(x),
            Err(present) => Cow::Owned(Value::Bool(present)),
        },
        Cow::Owned(v) => match selected(v, field, test)? {
            Ok(x) => Cow::Owned(x.clone()),
            Err(present) => Cow::Owned(Value::Bool(present)),
        },
    })
}

/// The field selected from `v` (`Ok`), or, for a test, whether it is there (`Err`).
fn selected<'v>(v: &'v Value, field: &str, test: bool) -> Result<Result<&'v Value, bool>, Fault> {
    match v {
        Value::Map(m) => match m.get_str(field) {
            found if test => Ok(Err(found.is_some())),
            Some(x) => Ok(Ok(x)),
            None => Err(no_such_key(field)),
        },
        Value::List(_) => Err(field_of_a_list()),
        _ if test => Ok(Err(false)),
        _ => Err(no_such_key(field)),
    }
}

/// A key as Go's `%v` prints it in "no such key" and "index out of bounds".
pub fn key_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string(),
        Value::Double(d) => format_double_go(*d),
        Value::Uint(u) => u.to_string(),
        other => other.render(),
    }
}

/// `container[key]`.
pub fn index<'v>(
    c: &'v Value,
    key: &Value,
    b: &mut super::cost::Budget,
) -> Result<&'v Value, Fault> {
    match c {
        Value::List(l) => {
            let i: i64 = match key {
                Value::Int(i) => *i,
                Value::Uint(u) => i64::try_from(*u)
                    .map_err(|_| Fault::new(format!("unsupported index value {u} in list")))?,
                Value::Double(d) => {
                    if d.fract() == 0.0 && d.is_finite() && d.abs() < 9.2e18 {
                        *d as i64
                    } else {
                        return Err(Fault::new(format!(
                            "unsupported index value {} in list",
                            format_double_go(*d)
                        )));
                    }
                }
                other => {
                    return Err(Fault::new(format!(
                        "unsupported index type '{}' in list",
                        other.type_of().name()
                    )));
                }
            };
            if i < 0 || i as usize >= l.len() {
                return Err(Fault::new(format!(
                    "index out of bounds: {}",
                    key_text(key)
                )));
            }
            Ok(&l[i as usize])
        }
        Value::Map(m) => {
            if let Value::String(s) = key {
                b.scan(s.len())?;
            }
            match m.find(key) {
                Ok(Some(v)) => Ok(v),
                Ok(None) => Err(no_such_key(&key_text(key))),
                Err(_) => Err(Fault::new(super::eval::UNHASHABLE_BYTES)),
            }
        }
        _ => Err(no_such_key(&key_text(key))),
    }
}
