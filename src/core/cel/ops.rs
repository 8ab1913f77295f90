//! cel-go's operators and conversions on values: arithmetic with overflow checks, ordering,
//! equality (charged to the budget in proportion to what it compares), and the standard
//! type conversions with Go's `strconv`.

use std::cmp::Ordering;
use std::sync::Arc;

use super::cost::{Budget, Resource};
use super::strconv;
use super::time::{Duration, Timestamp};
use super::value::{Value, numeric_cmp};

/// An operation's failure: an error value (cel-go's message) or the budget running out.
#[derive(Clone, Debug, PartialEq)]
pub enum OpError {
    Err(String),
    Budget(Resource),
}

impl From<Resource> for OpError {
    fn from(r: Resource) -> Self {
        OpError::Budget(r)
    }
}

impl From<String> for OpError {
    fn from(s: String) -> Self {
        OpError::Err(s)
    }
}

pub type OpResult<T> = Result<T, OpError>;

pub const NO_SUCH_OVERLOAD: &str = "no such overload";
pub const INT_OVERFLOW: &str = "integer overflow";
pub const UINT_OVERFLOW: &str = "unsigned integer overflow";

fn err<T>(m: &str) -> OpResult<T> {
    Err(OpError::Err(m.to_string()))
}

/// cel-go's heterogeneous equality (`types.Equal`), charged to the budget: a unit per
/// element or entry compared, and the bytes of strings and bytes compared.
pub fn equal(a: &Value, b: &Value, budget: &mut Budget) -> Result<bool, Resource> {
    Ok(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            budget.scan(x.len())?;
            x == y
        }
        (Value::Bytes(x), Value::Bytes(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            budget.scan(x.len())?;
            x == y
        }
        (Value::Timestamp(x), Value::Timestamp(y)) => x == y,
        (Value::Duration(x), Value::Duration(y)) => x == y,
        (Value::Type(x), Value::Type(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            if Arc::ptr_eq(x, y) && x.iter().all(is_reflexive) {
                budget.charge(x.len() as u64)?;
                return Ok(true);
            }
            for (p, q) in x.iter().zip(y.iter()) {
                budget.tick()?;
                if !equal(p, q, budget)? {
                    return Ok(false);
                }
            }
            true
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (k, v) in x.entries() {
                budget.tick()?;
                let key = k.value();
                if let Value::String(s) = key {
                    budget.scan(s.len())?;
                }
                match y.find(key) {
                    Ok(Some(w)) => {
                        if !equal(v, w, budget)? {
                            return Ok(false);
                        }
                    }
                    _ => return Ok(false),
                }
            }
            true
        }
        _ => matches!(numeric_cmp(a, b), Some(Ordering::Equal)),
    })
}

/// Whether a value equals itself (no NaN inside): only then may identical lists skip the walk.
fn is_reflexive(v: &Value) -> bool {
    !matches!(v, Value::Double(d) if d.is_nan()) && !matches!(v, Value::List(_) | Value::Map(_))
}

/// Ordering for `<`, `<=`, `>`, `>=` (cel-go's `Compare`): numbers across types; the other
/// kinds only with themselves.
pub fn compare(a: &Value, b: &Value, budget: &mut Budget) -> OpResult<Ordering> {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        (Value::String(x), Value::String(y)) => {
            budget.scan(x.len().min(y.len()))?;
            Ok(x.as_bytes().cmp(y.as_bytes()))
        }
        (Value::Bytes(x), Value::Bytes(y)) => {
            budget.scan(x.len().min(y.len()))?;
            Ok(x.cmp(y))
        }
        (Value::Timestamp(x), Value::Timestamp(y)) => Ok(x.cmp(y)),
        (Value::Duration(x), Value::Duration(y)) => Ok(x.cmp(y)),
        (
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
            Value::Int(_) | Value::Uint(_) | Value::Double(_),
        ) => numeric_cmp(a, b).ok_or_else(|| OpError::Err("NaN values cannot be ordered".into())),
        _ => err(NO_SUCH_OVERLOAD),
    }
}

pub fn add(a: &Value, b: &Value, budget: &mut Budget) -> OpResult<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_add(*y).ok_or_else(int_ovf)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(x.checked_add(*y).ok_or_else(uint_ovf)?),
        (Value::Double(x), Value::Double(y)) => Value::Double(x + y),
        (Value::String(x), Value::String(y)) => {
            budget.alloc((x.len() + y.len()) as u64)?;
            let mut s = String::with_capacity(x.len() + y.len());
            s.push_str(x);
            s.push_str(y);
            Value::String(Arc::from(s))
        }
        (Value::Bytes(x), Value::Bytes(y)) => {
            budget.alloc((x.len() + y.len()) as u64)?;
            let mut v = Vec::with_capacity(x.len() + y.len());
            v.extend_from_slice(x);
            v.extend_from_slice(y);
            Value::Bytes(Arc::from(v))
        }
        (Value::List(x), Value::List(y)) => {
            budget.alloc_slots(x.len() + y.len())?;
            let mut v = Vec::with_capacity(x.len() + y.len());
            v.extend(x.iter().cloned());
            v.extend(y.iter().cloned());
            Value::list(v)
        }
        (Value::Duration(x), Value::Duration(y)) => Value::Duration(x.checked_add(*y)?),
        (Value::Timestamp(t), Value::Duration(d)) | (Value::Duration(d), Value::Timestamp(t)) => {
            Value::Timestamp(t.add(*d)?)
        }
        _ => return err(NO_SUCH_OVERLOAD),
    })
}

pub fn sub(a: &Value, b: &Value) -> OpResult<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_sub(*y).ok_or_else(int_ovf)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(x.checked_sub(*y).ok_or_else(uint_ovf)?),
        (Value::Double(x), Value::Double(y)) => Value::Double(x - y),
        (Value::Duration(x), Value::Duration(y)) => Value::Duration(x.checked_sub(*y)?),
        (Value::Timestamp(t), Value::Duration(d)) => Value::Timestamp(t.sub_duration(*d)?),
        (Value::Timestamp(x), Value::Timestamp(y)) => Value::Duration(x.sub(y)?),
        _ => return err(NO_SUCH_OVERLOAD),
    })
}

pub fn mul(a: &Value, b: &Value) -> OpResult<Value> {
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_mul(*y).ok_or_else(int_ovf)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(x.checked_mul(*y).ok_or_else(uint_ovf)?),
        (Value::Double(x), Value::Double(y)) => Value::Double(x * y),
        _ => return err(NO_SUCH_OVERLOAD),
    })
}

pub fn div(a: &Value, b: &Value) -> OpResult<Value> {
    Ok(match (a, b) {
        (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
            return err("division by zero");
        }
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_div(*y).ok_or_else(int_ovf)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(x / y),
        (Value::Double(x), Value::Double(y)) => Value::Double(x / y),
        _ => return err(NO_SUCH_OVERLOAD),
    })
}

pub fn rem(a: &Value, b: &Value) -> OpResult<Value> {
    Ok(match (a, b) {
        (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
            return err("modulus by zero");
        }
        (Value::Int(x), Value::Int(y)) => Value::Int(x.checked_rem(*y).ok_or_else(int_ovf)?),
        (Value::Uint(x), Value::Uint(y)) => Value::Uint(x % y),
        _ => return err(NO_SUCH_OVERLOAD),
    })
}

pub fn neg(a: &Value) -> OpResult<Value> {
    Ok(match a {
        Value::Int(i) => Value::Int(i.checked_neg().ok_or_else(int_ovf)?),
        Value::Double(d) => Value::Double(-d),
        Value::Duration(d) => Value::Duration(d.checked_neg()?),
        _ => return err(NO_SUCH_OVERLOAD),
    })
}

fn int_ovf() -> OpError {
    OpError::Err(INT_OVERFLOW.into())
}

fn uint_ovf() -> OpError {
    OpError::Err(UINT_OVERFLOW.into())
}

/// Whether the operand has the trait a singleton operator dispatches on (otherwise cel-go
/// says `no such overload: <operator>`).
pub fn has_trait(op: &str, v: &Value) -> bool {
    use Value::*;
    match op {
        "_+_" => matches!(
            v,
            Int(_)
                | Uint(_)
                | Double(_)
                | String(_)
                | Bytes(_)
                | List(_)
                | Duration(_)
                | Timestamp(_)
        ),
        "_-_" => matches!(v, Int(_) | Uint(_) | Double(_) | Duration(_) | Timestamp(_)),
        "_*_" | "_/_" => matches!(v, Int(_) | Uint(_) | Double(_)),
        "_%_" => matches!(v, Int(_) | Uint(_)),
        "-_" => matches!(v, Int(_) | Double(_) | Duration(_) | Bool(_)),
        "_<_" | "_<=_" | "_>_" | "_>=_" => matches!(
            v,
            Bool(_)
                | Int(_)
                | Uint(_)
                | Double(_)
                | String(_)
                | Bytes(_)
                | Timestamp(_)
                | Duration(_)
        ),
        "size" => matches!(v, String(_) | Bytes(_) | List(_) | Map(_)),
        "matches" => matches!(v, String(_)),
        _ => true,
    }
}

fn conv_err<T>(from: &Value, to: &str) -> OpResult<T> {
    Err(OpError::Err(format!(
        "type conversion error from '{}' to '{to}'",
        from.type_of().name()
    )))
}

pub fn to_int(v: &Value) -> OpResult<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Uint(u) => i64::try_from(*u).map_err(|_| int_ovf()),
        Value::Double(d) => {
            if d.is_nan() || *d <= -9.223_372_036_854_776e18 || *d >= 9.223_372_036_854_776e18 {
                Err(int_ovf())
            } else {
                Ok(*d as i64)
            }
        }
        Value::String(s) => strconv::parse_int(s).map_or_else(|| conv_err(v, "int"), Ok),
        Value::Timestamp(t) => Ok(t.secs),
        Value::Duration(d) => Ok(d.nanos),
        _ => err(NO_SUCH_OVERLOAD),
    }
}

pub fn to_uint(v: &Value) -> OpResult<u64> {
    match v {
        Value::Uint(u) => Ok(*u),
        Value::Int(i) => u64::try_from(*i).map_err(|_| uint_ovf()),
        Value::Double(d) => {
            if d.is_nan() || *d < 0.0 || *d >= 1.844_674_407_370_955_2e19 {
                Err(uint_ovf())
            } else {
                Ok(*d as u64)
            }
        }
        Value::String(s) => strconv::parse_uint(s).map_or_else(|| conv_err(v, "uint"), Ok),
        _ => err(NO_SUCH_OVERLOAD),
    }
}

pub fn to_double(v: &Value) -> OpResult<f64> {
    match v {
        Value::Double(d) => Ok(*d),
        Value::Int(i) => Ok(*i as f64),
        Value::Uint(u) => Ok(*u as f64),
        Value::String(s) => strconv::parse_float(s).map_or_else(|| conv_err(v, "double"), Ok),
        _ => err(NO_SUCH_OVERLOAD),
    }
}

pub fn to_string(v: &Value, budget: &mut Budget) -> OpResult<Value> {
    Ok(match v {
        Value::String(_) => v.clone(),
        Value::Bool(b) => Value::string(if *b { "true" } else { "false" }),
        Value::Int(i) => Value::string(&i.to_string()),
        Value::Uint(u) => Value::string(&u.to_string()),
        Value::Double(d) => Value::string(&strconv::format_g(*d)),
        Value::Bytes(b) => {
            budget.scan(b.len())?;
            budget.alloc(b.len() as u64)?;
            match std::str::from_utf8(b) {
                Ok(s) => Value::string(s),
                Err(_) => return err("invalid UTF-8 in bytes, cannot convert to string"),
            }
        }
        Value::Timestamp(t) => Value::string(&t.to_rfc3339()),
        Value::Duration(d) => Value::string(&d.to_cel_string()),
        _ => return err(NO_SUCH_OVERLOAD),
    })
}

pub fn to_bool(v: &Value) -> OpResult<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::String(s) => strconv::parse_bool(s).map_or_else(|| conv_err(v, "bool"), Ok),
        _ => err(NO_SUCH_OVERLOAD),
    }
}

pub fn to_bytes(v: &Value, budget: &mut Budget) -> OpResult<Value> {
    match v {
        Value::Bytes(_) => Ok(v.clone()),
        Value::String(s) => {
            budget.alloc(s.len() as u64)?;
            Ok(Value::Bytes(Arc::from(s.as_bytes())))
        }
        _ => err(NO_SUCH_OVERLOAD),
    }
}

pub fn to_duration(v: &Value) -> OpResult<Duration> {
    match v {
        Value::Duration(d) => Ok(*d),
        Value::String(s) => Ok(Duration::parse(s)?),
        _ => err(NO_SUCH_OVERLOAD),
    }
}

pub fn to_timestamp(v: &Value) -> OpResult<Timestamp> {
    match v {
        Value::Timestamp(t) => Ok(*t),
        Value::String(s) => Ok(Timestamp::parse(s)?),
        Value::Int(i) => Ok(Timestamp::new(*i, 0)?),
        _ => err(NO_SUCH_OVERLOAD),
    }
}

/// Go's `%T` of a cel-go value, for messages.
pub fn go_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "types.Null",
        Value::Bool(_) => "types.Bool",
        Value::Int(_) => "types.Int",
        Value::Uint(_) => "types.Uint",
        Value::Double(_) => "types.Double",
        Value::String(_) => "types.String",
        Value::Bytes(_) => "types.Bytes",
        Value::List(_) => "*types.baseList",
        Value::Map(_) => "*types.baseMap",
        Value::Timestamp(_) => "types.Timestamp",
        Value::Duration(_) => "types.Duration",
        Value::Type(_) => "*types.Type",
    }
}

impl Value {
    /// CEL equality (cel-go's heterogeneous equality: values of different kinds are unequal,
    /// numbers compare by numeric value), without a budget.
    pub fn cel_eq(&self, other: &Value) -> bool {
        equal(self, other, &mut Budget::unlimited()).unwrap_or(false)
    }
}
