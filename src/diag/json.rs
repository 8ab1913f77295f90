//! JSON text (`kubectl get -o json`, one value or several one after the other) read straight
//! into values within the same bounds as YAML: nesting depth and nodes per file, counted as
//! the YAML reader counts them (a key is a node). JSON is read as JSON, the way kubectl
//! decodes a file that looks like JSON, rather than as YAML 1.1, and numbers come out as the
//! API server would store them (whole doubles become integers, as the YAML reader makes them).
//!
//! Like [`yaml::document_values`](super::yaml::document_values), this is the fast reader of
//! what keeps no positions: on any error it gives `None` and the caller reads the text as
//! YAML with positions, which says what is wrong and where.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::yaml::{Limits, float_json};

/// Whether `text` is JSON rather than YAML at first sight: its first character that is not
/// white space opens an object or an array. (A YAML flow collection looks the same; reading it
/// as JSON fails and it is read as YAML.)
pub fn looks_like_json(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

/// The values of `text` in order, or `None` when it is not JSON within `limits` (depth and
/// `max_total_nodes`).
pub fn values(text: &str, limits: &Limits) -> Option<Vec<Value>> {
    values_counted(text, limits).map(|(values, _)| values)
}

/// [`values`], and the nodes they took of `limits.max_total_nodes`.
pub fn values_counted(text: &str, limits: &Limits) -> Option<(Vec<Value>, usize)> {
    let mut budget = Budget {
        nodes_left: limits.max_total_nodes,
        depth_left: limits.max_depth,
        members: Vec::new(),
        items: Vec::new(),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let mut out = Vec::new();
    // `end` only looks past white space: another value may follow.
    while de.end().is_err() {
        out.push(Seed(&mut budget).deserialize(&mut de).ok()?);
    }
    Some((out, limits.max_total_nodes - budget.nodes_left))
}

struct Budget {
    nodes_left: usize,
    depth_left: usize,
    /// The members of the objects being read, innermost last: an object is made at its
    /// end with room for exactly its members, instead of growing (and rehashing) as they
    /// come. Arrays likewise.
    members: Vec<(String, Value)>,
    items: Vec<Value>,
}

impl Budget {
    fn node<E: de::Error>(&mut self) -> Result<(), E> {
        self.nodes_left = self
            .nodes_left
            .checked_sub(1)
            .ok_or_else(|| E::custom("too many nodes"))?;
        Ok(())
    }
}

/// One value, charged to the budget.
struct Seed<'a>(&'a mut Budget);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        self.0.node()?;
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        self.0.node()?;
        Ok(Value::Number(i.into()))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        self.0.node()?;
        // Past int64 the server keeps a double, as the YAML reader does.
        match i64::try_from(u) {
            Ok(i) => Ok(Value::Number(i.into())),
            Err(_) => Number::from_f64(u as f64)
                .map(Value::Number)
                .ok_or_else(|| E::custom("not a number")),
        }
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        self.0.node()?;
        float_json(f, 0, true).map_err(|e| E::custom(e.message))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.0.node()?;
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.0.node()?;
        Ok(Value::String(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.0.node()?;
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let budget = self.0;
        budget.node()?;
        enter(budget)?;
        let start = budget.items.len();
        while let Some(v) = seq.next_element_seed(Seed(budget))? {
            budget.items.push(v);
        }
        budget.depth_left += 1;
        Ok(Value::Array(budget.items.drain(start..).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let budget = self.0;
        budget.node()?;
        enter(budget)?;
        let start = budget.members.len();
        while let Some(key) = map.next_key::<String>()? {
            budget.node()?;
            let value = map.next_value_seed(Seed(budget))?;
            budget.members.push((key, value));
        }
        budget.depth_left += 1;
        let mut out = Map::with_capacity(budget.members.len() - start);
        // A key given twice keeps its first place and its last value, as `insert` does.
        for (key, value) in budget.members.drain(start..) {
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

fn enter<E: de::Error>(budget: &mut Budget) -> Result<(), E> {
    budget.depth_left = budget
        .depth_left
        .checked_sub(1)
        .ok_or_else(|| E::custom("too deep"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_value_or_several() {
        let text = r#" {"kind": "List", "items": [1, 2.0, 2.5, -3, 18446744073709551615, null, true, "s"]}
            {"a": {"b": []}}[1]"#;
        let v = values(text, &Limits::default()).unwrap();
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[0]["items"],
            json!([1, 2, 2.5, -3, 18446744073709551615.0, null, true, "s"])
        );
        assert_eq!(v[1], json!({"a": {"b": []}}));
        assert_eq!(values("  \n", &Limits::default()), Some(vec![]));
    }

    #[test]
    fn members_keep_their_order_and_collections_their_size() {
        let text = r#"{"z": 1, "a": [1, 2, 3], "m": {"y": [], "b": {}}, "z": 2}"#;
        let v = values(text, &Limits::default()).unwrap();
        // A key given twice keeps its first place and its last value.
        assert_eq!(
            serde_json::to_string(&v[0]).unwrap(),
            r#"{"z":2,"a":[1,2,3],"m":{"y":[],"b":{}}}"#
        );
        let items = v[0]["a"].as_array().unwrap();
        assert_eq!(items.capacity(), items.len());
    }

    #[test]
    fn matches_the_yaml_reader_on_json() {
        let text = r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
            "data": {"n": 1.0, "dup": 1, "dup": 2, "deep": [[{"x": [0.5, 1e3]}]]}}"#;
        let source = crate::diag::Source::new("t.json", text);
        let (docs, err) = crate::diag::yaml::parse_documents(&source);
        assert!(err.is_none());
        let through_yaml = docs[0]
            .root
            .as_ref()
            .unwrap()
            .to_json(&Limits::default())
            .unwrap();
        let direct = values(text, &Limits::default()).unwrap();
        assert_eq!(direct, vec![through_yaml]);
    }

    #[test]
    fn errors_and_bounds_give_none() {
        for bad in [r#"{"a": }"#, "{a: 1}", r#"{"a": 1} x"#, "[1e400]"] {
            assert_eq!(values(bad, &Limits::default()), None, "{bad}");
        }
        let deep = format!("{}{}", "[".repeat(10), "]".repeat(10));
        let limited = |depth, nodes| Limits {
            max_depth: depth,
            max_total_nodes: nodes,
            ..Limits::default()
        };
        assert!(values(&deep, &limited(10, 100)).is_some());
        assert_eq!(values(&deep, &limited(9, 100)), None);
        // 1 object, 2 keys, 2 values.
        assert!(values(r#"{"a": 1, "b": 2}"#, &limited(10, 5)).is_some());
        assert_eq!(values(r#"{"a": 1, "b": 2}"#, &limited(10, 4)), None);
    }

    #[test]
    fn json_is_recognised_by_its_first_character() {
        assert!(looks_like_json("\n  {\"a\": 1}"));
        assert!(looks_like_json("[]"));
        assert!(!looks_like_json("a: 1"));
        assert!(!looks_like_json("# {\n"));
    }
}
