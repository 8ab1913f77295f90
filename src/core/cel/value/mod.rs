//! CEL runtime values with cel-go (unstructured / JSON) semantics.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::time::{Duration, Timestamp};

mod render;

pub use render::{Redacted, format_double_go, redacted_marker};

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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

/// A map key. cel-go keeps map literals in a Go map keyed by the CEL value, so any value
/// Go can hash is a key: two keys are the same when Go's `==` says so (same type and value;
/// lists and maps by identity; a NaN never equals itself). Bytes cannot be hashed.
#[derive(Clone, Debug)]
pub struct MapKey(Value);

impl MapKey {
    pub fn to_value(&self) -> Value {
        self.0.clone()
    }

    pub fn value(&self) -> &Value {
        &self.0
    }

    /// The key a value would be stored under, if it can be a key at all.
    pub fn from_value(v: &Value) -> Option<MapKey> {
        match v {
            Value::Bytes(_) => None,
            other => Some(MapKey(other.clone())),
        }
    }

    pub fn string(s: &str) -> MapKey {
        MapKey(Value::string(s))
    }

    /// A string key sharing `s` (no copy).
    pub fn shared(s: &Arc<str>) -> MapKey {
        MapKey(Value::String(Arc::clone(s)))
    }

    fn is_nan(&self) -> bool {
        matches!(self.0, Value::Double(d) if d.is_nan())
    }
}

impl PartialEq for MapKey {
    fn eq(&self, other: &Self) -> bool {
        go_key_eq(&self.0, &other.0)
    }
}

impl Eq for MapKey {}

impl Hash for MapKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        match &self.0 {
            Value::Null => 0u8.hash(h),
            Value::Bool(b) => (1u8, b).hash(h),
            Value::Int(i) => (2u8, i).hash(h),
            Value::Uint(u) => (3u8, u).hash(h),
            Value::Double(d) => (4u8, if *d == 0.0 { 0 } else { d.to_bits() }).hash(h),
            Value::String(s) => (5u8, &**s).hash(h),
            Value::Bytes(b) => (6u8, &**b).hash(h),
            Value::List(l) => (7u8, Arc::as_ptr(l) as usize).hash(h),
            Value::Map(m) => (8u8, Arc::as_ptr(m) as usize).hash(h),
            Value::Timestamp(t) => (9u8, t.secs, t.nanos, t.offset).hash(h),
            Value::Duration(d) => (10u8, d.nanos).hash(h),
            Value::Type(t) => (11u8, t).hash(h),
        }
    }
}

/// String equality that first tries identity: a projected object's keys are the rule's
/// own field names (see `project`), so a rule's lookups mostly match without comparing bytes.
#[inline(always)]
pub(in crate::core::cel) fn same_str(a: &str, b: &str) -> bool {
    a.len() == b.len() && (std::ptr::eq(a.as_ptr(), b.as_ptr()) || a == b)
}

/// Go's `==` on two map keys held as `ref.Val` interfaces.
fn go_key_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Uint(x), Value::Uint(y)) => x == y,
        (Value::Double(x), Value::Double(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::List(x), Value::List(y)) => Arc::ptr_eq(x, y),
        (Value::Map(x), Value::Map(y)) => Arc::ptr_eq(x, y),
        (Value::Timestamp(x), Value::Timestamp(y)) => x == y && x.offset == y.offset,
        (Value::Duration(x), Value::Duration(y)) => x == y,
        (Value::Type(x), Value::Type(y)) => x == y,
        _ => false,
    }
}

const INDEX_THRESHOLD: usize = 12;

/// An insertion-ordered map with an index for the larger ones.
#[derive(Debug, Default)]
pub struct MapValue {
    entries: Vec<(MapKey, Value)>,
    /// String keys (the keys of every JSON object) by text.
    strings: Option<HashMap<Arc<str>, usize>>,
    /// The other keys.
    others: Option<HashMap<MapKey, usize>>,
}

impl MapValue {
    /// Builds a map; a later duplicate key replaces the earlier value (as a Go map literal).
    pub fn from_entries(entries: Vec<(MapKey, Value)>) -> MapValue {
        let mut m = MapValue {
            entries: Vec::with_capacity(entries.len()),
            strings: None,
            others: None,
        };
        for (k, v) in entries {
            m.insert(k, v);
        }
        m
    }

    /// Builds a map of string keys known to be distinct (a JSON object).
    pub(in crate::core::cel) fn from_distinct_strings(entries: Vec<(MapKey, Value)>) -> MapValue {
        let mut m = MapValue {
            entries,
            strings: None,
            others: None,
        };
        if m.entries.len() > INDEX_THRESHOLD {
            m.build_index();
        }
        m
    }

    fn build_index(&mut self) {
        let mut strings = HashMap::new();
        let mut others = HashMap::new();
        for (i, (k, _)) in self.entries.iter().enumerate() {
            match &k.0 {
                Value::String(s) => {
                    strings.entry(s.clone()).or_insert(i);
                }
                _ if k.is_nan() => {}
                _ => {
                    others.entry(k.clone()).or_insert(i);
                }
            }
        }
        self.strings = Some(strings);
        self.others = Some(others);
    }

    pub fn insert(&mut self, k: MapKey, v: Value) {
        if let Some(i) = self.position(&k) {
            self.entries[i].1 = v;
            return;
        }
        let i = self.entries.len();
        if self.strings.is_some() {
            match &k.0 {
                Value::String(s) => {
                    if let Some(ix) = &mut self.strings {
                        ix.insert(s.clone(), i);
                    }
                }
                _ if k.is_nan() => {}
                _ => {
                    if let Some(ix) = &mut self.others {
                        ix.insert(k.clone(), i);
                    }
                }
            }
        }
        self.entries.push((k, v));
        if self.strings.is_none() && self.entries.len() > INDEX_THRESHOLD {
            self.build_index();
        }
    }

    /// The position of the exact key (Go map lookup), if present.
    fn position(&self, k: &MapKey) -> Option<usize> {
        if k.is_nan() {
            return None;
        }
        match (&k.0, &self.strings, &self.others) {
            (Value::String(s), Some(ix), _) => ix.get(&**s).copied(),
            (_, _, Some(ix)) => ix.get(k).copied(),
            _ => self.entries.iter().position(|(ek, _)| ek == k),
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

    /// [`MapValue::get_str`], trying first the position `hint` says, and leaving there
    /// where the key was found.
    #[inline(always)]
    pub fn get_str_hinted(&self, key: &str, hint: &crate::core::cel::ast::Hint) -> Option<&Value> {
        if let Some((MapKey(Value::String(s)), v)) = self.entries.get(hint.get())
            && same_str(s, key)
        {
            return Some(v);
        }
        self.get_str_missed(key, hint)
    }

    /// [`MapValue::get_str_hinted`] when the hint was wrong.
    #[inline(never)]
    fn get_str_missed(&self, key: &str, hint: &crate::core::cel::ast::Hint) -> Option<&Value> {
        let at = self.position_str(key)?;
        hint.set(at);
        Some(&self.entries[at].1)
    }

    /// Looks a string key up without allocating.
    pub fn get_str(&self, key: &str) -> Option<&Value> {
        self.position_str(key).map(|i| &self.entries[i].1)
    }

    /// Where the string key `key` is.
    fn position_str(&self, key: &str) -> Option<usize> {
        match &self.strings {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| match &k.0 {
                Value::String(s) => same_str(s, key),
                _ => false,
            }),
        }
    }

    fn get_exact(&self, v: &Value) -> Option<&Value> {
        match v {
            Value::String(s) => self.get_str(s),
            Value::Bytes(_) => None,
            other => {
                let k = MapKey(other.clone());
                self.position(&k).map(|i| &self.entries[i].1)
            }
        }
    }

    /// cel-go's `Find`: the exact key, then the numerically equal int, uint or double key
    /// (lossless conversions only). `Err(NotAKey)` for a value Go cannot hash (bytes).
    pub fn find(&self, key: &Value) -> Result<Option<&Value>, NotAKey> {
        if matches!(key, Value::Bytes(_)) {
            return Err(NotAKey);
        }
        if self.entries.is_empty() {
            return Ok(None);
        }
        if let Some(v) = self.get_exact(key) {
            return Ok(Some(v));
        }
        Ok(match *key {
            Value::Double(d) => match double_to_int_lossless(d) {
                Some(i) => self.get_exact(&Value::Int(i)).or_else(|| {
                    double_to_uint_lossless(d).and_then(|u| self.get_exact(&Value::Uint(u)))
                }),
                None => double_to_uint_lossless(d).and_then(|u| self.get_exact(&Value::Uint(u))),
            },
            Value::Int(i) if i >= 0 => self.get_exact(&Value::Uint(i as u64)),
            Value::Uint(u) if u <= i64::MAX as u64 => self.get_exact(&Value::Int(u as i64)),
            _ => None,
        })
    }
}

fn double_to_int_lossless(d: f64) -> Option<i64> {
    if d.fract() != 0.0 || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&d) {
        return None;
    }
    Some(d as i64)
}

fn double_to_uint_lossless(d: f64) -> Option<u64> {
    if d.fract() != 0.0 || !(0.0..1.844_674_407_370_955_2e19).contains(&d) {
        return None;
    }
    Some(d as u64)
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
    /// integers that fit int64 are `int`, every other number is `double`. Iterative, so
    /// that no nesting depth can exhaust the stack.
    pub fn from_json(v: &serde_json::Value) -> Value {
        enum Frame<'a> {
            List(std::slice::Iter<'a, serde_json::Value>, Vec<Value>),
            Map(
                serde_json::map::Iter<'a>,
                Vec<(MapKey, Value)>,
                Option<Arc<str>>,
            ),
        }
        fn leaf(v: &serde_json::Value) -> Option<Value> {
            Some(match v {
                serde_json::Value::Null => Value::Null,
                serde_json::Value::Bool(b) => Value::Bool(*b),
                serde_json::Value::Number(n) => match n.as_i64() {
                    Some(i) => Value::Int(i),
                    None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
                },
                serde_json::Value::String(s) => Value::string(s),
                _ => return None,
            })
        }
        fn open(v: &serde_json::Value) -> Frame<'_> {
            match v {
                serde_json::Value::Array(a) => Frame::List(a.iter(), Vec::with_capacity(a.len())),
                serde_json::Value::Object(o) => {
                    Frame::Map(o.iter(), Vec::with_capacity(o.len()), None)
                }
                _ => unreachable!("open is only called on containers"),
            }
        }
        if let Some(v) = leaf(v) {
            return v;
        }
        let mut stack = vec![open(v)];
        loop {
            let top = stack.last_mut().expect("non-empty");
            let next = match top {
                Frame::List(it, _) => it.next(),
                Frame::Map(it, _, key) => it.next().map(|(k, v)| {
                    *key = Some(Arc::from(k.as_str()));
                    v
                }),
            };
            let done = match next {
                Some(child) => match leaf(child) {
                    Some(v) => Some(v),
                    None => {
                        stack.push(open(child));
                        None
                    }
                },
                None => {
                    let finished = stack.pop().expect("non-empty");
                    Some(match finished {
                        Frame::List(_, items) => Value::list(items),
                        Frame::Map(_, entries, _) => {
                            Value::Map(Arc::new(MapValue::from_distinct_strings(entries)))
                        }
                    })
                }
            };
            let Some(v) = done else { continue };
            match stack.last_mut() {
                None => return v,
                Some(Frame::List(_, items)) => items.push(v),
                Some(Frame::Map(_, entries, key)) => {
                    let k = key.take().unwrap_or_else(|| Arc::from(""));
                    entries.push((MapKey(Value::String(k)), v));
                }
            }
        }
    }
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
    fn deep_json_converts_without_recursion() {
        let mut v = serde_json::json!("leaf");
        for _ in 0..100_000 {
            v = serde_json::Value::Array(vec![v]);
        }
        let cel = Value::from_json(&v);
        let Value::List(l) = &cel else { panic!() };
        assert_eq!(l.len(), 1);
        // drop both iteratively-built trees without overflowing the stack
        let mut cur = cel;
        while let Value::List(l) = cur {
            cur = Arc::try_unwrap(l)
                .map(|mut v| v.pop().unwrap_or(Value::Null))
                .unwrap_or(Value::Null);
        }
        let mut cur = v;
        while let serde_json::Value::Array(mut a) = cur {
            cur = a.pop().unwrap_or(serde_json::Value::Null);
        }
    }

    #[test]
    fn map_keys_follow_go_map_semantics() {
        let m = MapValue::from_entries(vec![
            (MapKey(Value::Int(1)), Value::string("a")),
            (MapKey(Value::Uint(1)), Value::string("b")),
            (MapKey(Value::Int(1)), Value::string("c")),
            (MapKey(Value::Double(2.0)), Value::string("d")),
        ]);
        assert_eq!(m.len(), 3);
        assert!(matches!(m.find(&Value::Int(1)), Ok(Some(Value::String(s))) if &**s == "c"));
        assert!(matches!(m.find(&Value::Uint(1)), Ok(Some(Value::String(s))) if &**s == "b"));
        // a double key is found by a double only; an int does not find it
        assert!(matches!(m.find(&Value::Int(2)), Ok(None)));
        assert!(matches!(m.find(&Value::Double(2.0)), Ok(Some(_))));
        assert!(matches!(m.find(&Value::Double(1.0)), Ok(Some(Value::String(s))) if &**s == "c"));
        assert!(matches!(m.find(&Value::Double(1.5)), Ok(None)));
        assert!(m.find(&Value::Bytes(Arc::from(&b"x"[..]))).is_err());
        let nan = MapValue::from_entries(vec![
            (MapKey(Value::Double(f64::NAN)), Value::Null),
            (MapKey(Value::Double(f64::NAN)), Value::Null),
        ]);
        assert_eq!(nan.len(), 2);
        assert!(matches!(nan.find(&Value::Double(f64::NAN)), Ok(None)));
    }

    #[test]
    fn large_maps_are_indexed() {
        let entries = (0..100)
            .map(|i| (MapKey::string(&format!("k{i}")), Value::Int(i)))
            .collect();
        let m = MapValue::from_entries(entries);
        assert!(matches!(m.get_str("k57"), Some(Value::Int(57))));
        assert!(m.get_str("nope").is_none());
        assert!(matches!(
            MapValue::from_entries(vec![(MapKey(Value::Uint(3)), Value::Null)])
                .find(&Value::Int(3)),
            Ok(Some(Value::Null))
        ));
    }

    #[test]
    fn renders_cel_literals_and_truncates() {
        let v = Value::from_json(&serde_json::json!({"a": [1, 2.5, "x\"y", null, true]}));
        assert_eq!(v.render(), r#"{"a": [1, 2.5, "x\"y", null, true]}"#);
        assert_eq!(Value::Uint(3).render(), "3u");
        assert_eq!(Value::Double(2.0).render(), "2.0");
        let big = Value::string(&"x".repeat(1_000_000));
        let mut out = String::new();
        big.render_limited(&mut out, 20, None);
        assert_eq!(out, format!("\"{}…", "x".repeat(19)));
    }
}
