//! CEL runtime values with cel-go (unstructured / JSON) semantics.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use super::time::{Duration, Timestamp};

/// A CEL runtime value.
#[derive(Clone, Debug)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Arc<Vec<Value>>),
    Map(Arc<MapValue>),
    Timestamp(Timestamp),
    Duration(Duration),
    Type(TypeValue),
}

/// A runtime type value, as returned by `type(x)` or named by `int`, `string`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeValue {
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    List,
    Map,
    Timestamp,
    Duration,
    Type,
}

impl TypeValue {
    pub fn name(self) -> &'static str {
        match self {
            TypeValue::Null => "null_type",
            TypeValue::Bool => "bool",
            TypeValue::Int => "int",
            TypeValue::Uint => "uint",
            TypeValue::Double => "double",
            TypeValue::String => "string",
            TypeValue::Bytes => "bytes",
            TypeValue::List => "list",
            TypeValue::Map => "map",
            TypeValue::Timestamp => "google.protobuf.Timestamp",
            TypeValue::Duration => "google.protobuf.Duration",
            TypeValue::Type => "type",
        }
    }
}

/// A map key: only bool, int, uint and string may be keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MapKey {
    Bool(bool),
    Int(i64),
    Uint(u64),
    String(Arc<str>),
}

impl MapKey {
    pub fn to_value(&self) -> Value {
        match self {
            MapKey::Bool(b) => Value::Bool(*b),
            MapKey::Int(i) => Value::Int(*i),
            MapKey::Uint(u) => Value::Uint(*u),
            MapKey::String(s) => Value::String(s.clone()),
        }
    }

    /// The key a value would be stored under, if it can be a key.
    pub fn from_value(v: &Value) -> Option<MapKey> {
        match v {
            Value::Bool(b) => Some(MapKey::Bool(*b)),
            Value::Int(i) => Some(MapKey::Int(*i)),
            Value::Uint(u) => Some(MapKey::Uint(*u)),
            Value::String(s) => Some(MapKey::String(s.clone())),
            _ => None,
        }
    }
}

const INDEX_THRESHOLD: usize = 12;

/// An insertion-ordered map with an index for the larger ones.
#[derive(Debug, Default)]
pub struct MapValue {
    entries: Vec<(MapKey, Value)>,
    index: Option<HashMap<MapKey, usize>>,
}

impl MapValue {
    /// Builds a map; a later duplicate key replaces the earlier value.
    pub fn from_entries(entries: Vec<(MapKey, Value)>) -> MapValue {
        let mut m = MapValue {
            entries: Vec::with_capacity(entries.len()),
            index: None,
        };
        for (k, v) in entries {
            m.insert(k, v);
        }
        m
    }

    /// Inserts, returning false (and doing nothing) when the key (by CEL equality) exists.
    pub fn insert_new(&mut self, k: MapKey, v: Value) -> bool {
        if self.get_key(&k).is_some() {
            return false;
        }
        self.push(k, v);
        true
    }

    fn insert(&mut self, k: MapKey, v: Value) {
        if let Some(i) = self.position(&k) {
            self.entries[i].1 = v;
        } else {
            self.push(k, v);
        }
    }

    fn push(&mut self, k: MapKey, v: Value) {
        let i = self.entries.len();
        if let Some(index) = &mut self.index {
            index.insert(k.clone(), i);
        }
        self.entries.push((k, v));
        if self.index.is_none() && self.entries.len() > INDEX_THRESHOLD {
            self.index = Some(
                self.entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| (k.clone(), i))
                    .collect(),
            );
        }
    }

    fn position(&self, k: &MapKey) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(k).copied(),
            None => self.entries.iter().position(|(ek, _)| ek == k),
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[(MapKey, Value)] {
        &self.entries
    }

    /// Looks a string key up without allocating.
    pub fn get_str(&self, key: &str) -> Option<&Value> {
        match &self.index {
            Some(index) => index
                .get(&MapKey::String(Arc::from(key)))
                .map(|&i| &self.entries[i].1),
            None => self.entries.iter().find_map(|(k, v)| match k {
                MapKey::String(s) if &**s == key => Some(v),
                _ => None,
            }),
        }
    }

    fn get_exact(&self, k: &MapKey) -> Option<&Value> {
        if let MapKey::String(s) = k {
            return self.get_str(s);
        }
        self.position(k).map(|i| &self.entries[i].1)
    }

    /// Looks a key up with CEL's heterogeneous numeric key semantics.
    pub fn get_key(&self, k: &MapKey) -> Option<&Value> {
        if let Some(v) = self.get_exact(k) {
            return Some(v);
        }
        match k {
            MapKey::Int(i) if *i >= 0 => self.get_exact(&MapKey::Uint(*i as u64)),
            MapKey::Uint(u) if *u <= i64::MAX as u64 => self.get_exact(&MapKey::Int(*u as i64)),
            _ => None,
        }
    }

    /// Looks a value up; `Err(NotAKey)` when the value cannot be a key at all.
    pub fn get(&self, key: &Value) -> Result<Option<&Value>, NotAKey> {
        match key {
            Value::String(s) => Ok(self.get_str(s)),
            Value::Double(d) => {
                let d = *d;
                if d.fract() != 0.0 || !d.is_finite() {
                    return Ok(None);
                }
                if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&d) {
                    Ok(self.get_key(&MapKey::Int(d as i64)))
                } else if (0.0..1.844_674_407_370_955_2e19).contains(&d) {
                    Ok(self.get_key(&MapKey::Uint(d as u64)))
                } else {
                    Ok(None)
                }
            }
            other => match MapKey::from_value(other) {
                Some(k) => Ok(self.get_key(&k)),
                None => Err(NotAKey),
            },
        }
    }
}

/// A value of a type that cannot be a map key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotAKey;

impl Value {
    pub fn string(s: &str) -> Value {
        Value::String(Arc::from(s))
    }

    pub fn list(v: Vec<Value>) -> Value {
        Value::List(Arc::new(v))
    }

    pub fn type_of(&self) -> TypeValue {
        match self {
            Value::Null => TypeValue::Null,
            Value::Bool(_) => TypeValue::Bool,
            Value::Int(_) => TypeValue::Int,
            Value::Uint(_) => TypeValue::Uint,
            Value::Double(_) => TypeValue::Double,
            Value::String(_) => TypeValue::String,
            Value::Bytes(_) => TypeValue::Bytes,
            Value::List(_) => TypeValue::List,
            Value::Map(_) => TypeValue::Map,
            Value::Timestamp(_) => TypeValue::Timestamp,
            Value::Duration(_) => TypeValue::Duration,
            Value::Type(_) => TypeValue::Type,
        }
    }

    /// Converts JSON the way Kubernetes unstructured content is seen by cel-go:
    /// integers that fit int64 are `int`, every other number is `double`.
    pub fn from_json(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
            },
            serde_json::Value::String(s) => Value::string(s),
            serde_json::Value::Array(a) => Value::list(a.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(o) => Value::Map(Arc::new(MapValue::from_entries(
                o.iter()
                    .map(|(k, v)| (MapKey::String(Arc::from(k.as_str())), Value::from_json(v)))
                    .collect(),
            ))),
        }
    }

    /// CEL equality (cel-go heterogeneous equality: values of different kinds are unequal,
    /// numbers compare by numeric value).
    pub fn cel_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::Timestamp(a), Value::Timestamp(b)) => a == b,
            (Value::Duration(a), Value::Duration(b)) => a == b,
            (Value::Type(a), Value::Type(b)) => a == b,
            (Value::List(a), Value::List(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.cel_eq(y))
            }
            (Value::Map(a), Value::Map(b)) => {
                a.len() == b.len()
                    && a.entries().iter().all(|(k, v)| match b.get_key(k) {
                        Some(bv) => v.cel_eq(bv),
                        None => false,
                    })
            }
            _ => match numeric_cmp(self, other) {
                Some(o) => o == Ordering::Equal,
                None => false,
            },
        }
    }

    /// Renders the value as a CEL literal.
    pub fn render(&self) -> String {
        let mut s = String::new();
        self.render_into(&mut s);
        s
    }

    fn render_into(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Uint(u) => {
                let _ = write!(out, "{u}u");
            }
            Value::Double(d) => out.push_str(&render_double(*d)),
            Value::String(s) => render_string(s, out),
            Value::Bytes(b) => {
                out.push_str("b\"");
                for &c in b.iter() {
                    match c {
                        b'"' => out.push_str("\\\""),
                        b'\\' => out.push_str("\\\\"),
                        0x20..=0x7e => out.push(c as char),
                        _ => {
                            let _ = write!(out, "\\x{c:02x}");
                        }
                    }
                }
                out.push('"');
            }
            Value::List(l) => {
                out.push('[');
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.render_into(out);
                }
                out.push(']');
            }
            Value::Map(m) => {
                out.push('{');
                for (i, (k, v)) in m.entries().iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.to_value().render_into(out);
                    out.push_str(": ");
                    v.render_into(out);
                }
                out.push('}');
            }
            Value::Timestamp(t) => {
                let _ = write!(out, "timestamp(\"{}\")", t.to_rfc3339());
            }
            Value::Duration(d) => {
                let _ = write!(out, "duration(\"{}\")", d.to_cel_string());
            }
            Value::Type(t) => out.push_str(t.name()),
        }
    }
}

fn render_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Formats a double the way cel-go's `string(double)` does (Go `%g`-like, shortest repr).
pub fn format_double_go(d: f64) -> String {
    if d.is_nan() {
        return "NaN".into();
    }
    if d.is_infinite() {
        return if d > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if d == 0.0 {
        return if d.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Shortest round-trip digits, (Go 'g' with -1 precision).
    let s = format!("{d:e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    // Go's `%g` with the shortest representation: exponent form when exp < -4 || exp >= 6.
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        let e = exp.abs();
        if e < 10 {
            format!("{mant}e{sign}0{e}")
        } else {
            format!("{mant}e{sign}{e}")
        }
    } else {
        format!("{d}")
    }
}

fn render_double(d: f64) -> String {
    if d.is_nan() {
        return "double(\"NaN\")".into();
    }
    if d.is_infinite() {
        return if d > 0.0 {
            "double(\"Infinity\")".into()
        } else {
            "double(\"-Infinity\")".into()
        };
    }
    let s = format!("{d:?}");
    s
}

/// Compares two numbers of any numeric kind by value; `None` if either is not numeric
/// or a NaN is involved.
pub fn numeric_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Some(x.cmp(y)),
        (Value::Uint(x), Value::Uint(y)) => Some(x.cmp(y)),
        (Value::Double(x), Value::Double(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Uint(y)) => Some(cmp_int_uint(*x, *y)),
        (Value::Uint(x), Value::Int(y)) => Some(cmp_int_uint(*y, *x).reverse()),
        (Value::Int(x), Value::Double(y)) => cmp_int_double(*x, *y),
        (Value::Double(x), Value::Int(y)) => cmp_int_double(*y, *x).map(Ordering::reverse),
        (Value::Uint(x), Value::Double(y)) => cmp_uint_double(*x, *y),
        (Value::Double(x), Value::Uint(y)) => cmp_uint_double(*y, *x).map(Ordering::reverse),
        _ => None,
    }
}

fn cmp_int_uint(i: i64, u: u64) -> Ordering {
    if i < 0 {
        Ordering::Less
    } else {
        (i as u64).cmp(&u)
    }
}

// cel-go (common/types/compare.go) compares an int or uint with a double as doubles once the
// double is within the integer range: lossy on purpose, and the conformance tests expect it.
fn cmp_int_double(i: i64, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d < i64::MIN as f64 {
        return Some(Ordering::Greater);
    }
    if d > i64::MAX as f64 {
        return Some(Ordering::Less);
    }
    (i as f64).partial_cmp(&d)
}

fn cmp_uint_double(u: u64, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d < 0.0 {
        return Some(Ordering::Greater);
    }
    if d > u64::MAX as f64 {
        return Some(Ordering::Less);
    }
    (u as f64).partial_cmp(&d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_integers_are_int_and_other_numbers_double() {
        let v = Value::from_json(
            &serde_json::json!({"a": 1, "b": 1.5, "c": 18446744073709551615u64, "d": -3}),
        );
        let Value::Map(m) = v else { panic!() };
        assert!(matches!(m.get_str("a"), Some(Value::Int(1))));
        assert!(matches!(m.get_str("b"), Some(Value::Double(d)) if *d == 1.5));
        assert!(matches!(m.get_str("c"), Some(Value::Double(_))));
        assert!(matches!(m.get_str("d"), Some(Value::Int(-3))));
    }

    #[test]
    fn heterogeneous_numeric_equality() {
        assert!(Value::Int(2).cel_eq(&Value::Double(2.0)));
        assert!(Value::Uint(2).cel_eq(&Value::Int(2)));
        assert!(!Value::Int(-1).cel_eq(&Value::Uint(u64::MAX)));
        assert!(!Value::Int(1).cel_eq(&Value::string("1")));
        assert!(!Value::Double(f64::NAN).cel_eq(&Value::Double(f64::NAN)));
        assert_eq!(
            numeric_cmp(&Value::Int(1), &Value::Double(1.5)),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn large_maps_are_indexed() {
        let entries = (0..100)
            .map(|i| {
                (
                    MapKey::String(Arc::from(format!("k{i}").as_str())),
                    Value::Int(i),
                )
            })
            .collect();
        let m = MapValue::from_entries(entries);
        assert!(matches!(m.get_str("k57"), Some(Value::Int(57))));
        assert!(m.get_str("nope").is_none());
        assert!(matches!(
            MapValue::from_entries(vec![(MapKey::Uint(3), Value::Null)]).get(&Value::Int(3)),
            Ok(Some(Value::Null))
        ));
    }

    #[test]
    fn renders_cel_literals() {
        let v = Value::from_json(&serde_json::json!({"a": [1, 2.5, "x\"y", null, true]}));
        assert_eq!(v.render(), r#"{"a": [1, 2.5, "x\"y", null, true]}"#);
        assert_eq!(Value::Uint(3).render(), "3u");
        assert_eq!(Value::Double(2.0).render(), "2.0");
    }
}
