//! Label selectors (`metav1.LabelSelector`): one model of requirements, read strictly as
//! apimachinery's `LabelSelectorAsSelector` does (kcm's derivation needs its errors) or
//! leniently as a matcher over whatever an object holds (an invalid selector matches nothing).

use std::collections::BTreeMap;

use serde_json::Value;

use super::names::{label_value_errors, qualified_name_errors};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Equals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub op: Op,
    pub values: Vec<String>,
}

impl Requirement {
    /// Whether the labels, read through `get`, satisfy the requirement.
    pub fn matches<'a>(&self, get: &impl Fn(&str) -> Option<&'a str>) -> bool {
        match self.op {
            Op::Equals | Op::In => {
                get(&self.key).is_some_and(|v| self.values.iter().any(|x| x == v))
            }
            Op::NotIn => get(&self.key).is_none_or(|v| !self.values.iter().any(|x| x == v)),
            Op::Exists => get(&self.key).is_some(),
            Op::DoesNotExist => get(&self.key).is_none(),
        }
    }
}

/// kubectl's form: `key=value`, `key in (a,b)`, `key notin (a,b)`, `key`, `!key`.
impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = &self.key;
        match self.op {
            Op::Equals => write!(f, "{key}={}", self.values.join(",")),
            Op::In => write!(f, "{key} in ({})", self.values.join(",")),
            Op::NotIn => write!(f, "{key} notin ({})", self.values.join(",")),
            Op::Exists => write!(f, "{key}"),
            Op::DoesNotExist => write!(f, "!{key}"),
        }
    }
}

/// A parsed selector; no requirement selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    requirements: Vec<Requirement>,
}

impl Selector {
    /// `metav1.LabelSelectorAsSelector`: every key and value validated, requirements stably
    /// sorted by key; the error is apimachinery's.
    pub fn parse(sel: &Value) -> Result<Selector, String> {
        let Value::Object(m) = sel else {
            return Err("a label selector must be an object".to_string());
        };
        let mut reqs = Vec::new();
        match m.get("matchLabels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(ml)) => {
                for (k, v) in ml {
                    let Value::String(v) = v else {
                        return Err(format!("matchLabels[{k}] must be a string"));
                    };
                    reqs.push(new_requirement(k, Op::Equals, vec![v.clone()])?);
                }
            }
            Some(_) => return Err("matchLabels must be an object".to_string()),
        }
        match m.get("matchExpressions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(exprs)) => {
                for e in exprs {
                    let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
                    let op = match e
                        .get("operator")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                    {
                        "In" => Op::In,
                        "NotIn" => Op::NotIn,
                        "Exists" => Op::Exists,
                        "DoesNotExist" => Op::DoesNotExist,
                        other => {
                            return Err(format!(
                                "{other:?} is not a valid label selector operator"
                            ));
                        }
                    };
                    let values = match e.get("values") {
                        None | Some(Value::Null) => Vec::new(),
                        Some(Value::Array(a)) => a
                            .iter()
                            .map(|x| {
                                x.as_str()
                                    .map(str::to_string)
                                    .ok_or_else(|| format!("values of {key:?} must be strings"))
                            })
                            .collect::<Result<_, _>>()?,
                        Some(_) => return Err(format!("values of {key:?} must be a list")),
                    };
                    reqs.push(new_requirement(key, op, values)?);
                }
            }
            Some(_) => return Err("matchExpressions must be a list".to_string()),
        }
        // sort.Sort(ByKey): only same-key order could differ, and Go's insertion sort for
        // short inputs is stable, as is this one.
        reqs.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector { requirements: reqs })
    }

    /// Reads a selector as a matcher: `None` when it is invalid in structure (an unknown
    /// operator, `In` without values, `Exists` with values); keys and values are not checked
    /// (the API server did that).
    pub fn lenient(sel: &Value) -> Option<Selector> {
        let mut reqs = Vec::new();
        if let Some(m) = sel.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in m {
                reqs.push(match v.as_str() {
                    Some(v) => Requirement {
                        key: k.clone(),
                        op: Op::Equals,
                        values: vec![v.to_string()],
                    },
                    // A value that is no string is never equal to a label's.
                    None => Requirement {
                        key: k.clone(),
                        op: Op::DoesNotExist,
                        values: Vec::new(),
                    },
                });
            }
        }
        for e in expressions(sel) {
            let n = e
                .get("values")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let op = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                "In" if n > 0 => Op::In,
                "NotIn" if n > 0 => Op::NotIn,
                "Exists" if n == 0 => Op::Exists,
                "DoesNotExist" if n == 0 => Op::DoesNotExist,
                _ => return None,
            };
            reqs.push(Requirement {
                key: e
                    .get("key")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                op,
                values: string_values(e).map(str::to_string).collect(),
            });
        }
        Some(Selector { requirements: reqs })
    }

    /// A selector as kubectl's `-l` takes it (apimachinery `labels.Parse`):
    /// `key=value`, `key==value`, `key!=value`, `key in (a,b)`, `key notin (a,b)`, `key`,
    /// `!key`, joined by commas. An empty string selects everything.
    pub fn parse_string(text: &str) -> Result<Selector, String> {
        let mut reqs = Vec::new();
        for part in split_top_level(text)? {
            let part = part.trim();
            if part.is_empty() {
                if text.trim().is_empty() {
                    continue;
                }
                return Err(format!("{text:?}: found ',', expected: identifier"));
            }
            reqs.push(parse_requirement(part).map_err(|e| format!("{text:?}: {e}"))?);
        }
        reqs.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector { requirements: reqs })
    }

    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether labels read through `get` satisfy every requirement.
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| r.matches(&get))
    }

    pub fn matches_map(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_with(|k| labels.get(k).map(String::as_str))
    }

    /// `labels` is an object of strings (or null: no labels).
    pub fn matches_json(&self, labels: &Value) -> bool {
        self.matches_with(|k| labels.get(k).and_then(Value::as_str))
    }
}

/// The requirements of a selector string, split at the commas outside parentheses.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("{text:?}: unbalanced ')'"))?
            }
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("{text:?}: unclosed '('"));
    }
    parts.push(&text[start..]);
    Ok(parts)
}

fn parse_requirement(part: &str) -> Result<Requirement, String> {
    if let Some(key) = part.strip_prefix('!') {
        return new_requirement(key.trim(), Op::DoesNotExist, Vec::new());
    }
    for (sym, op) in [("!=", Op::NotIn), ("==", Op::Equals), ("=", Op::Equals)] {
        if let Some((k, v)) = part.split_once(sym) {
            return new_requirement(k.trim(), op, vec![v.trim().to_string()]);
        }
    }
    if part.contains('>') || part.contains('<') {
        return Err("the operators > and < are not supported here".into());
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    if let [key, rest] = words.as_slice() {
        let rest = rest.trim_start();
        for (word, op) in [("notin", Op::NotIn), ("in", Op::In)] {
            if let Some(set) = rest.strip_prefix(word) {
                let set = set.trim();
                let inner = set
                    .strip_prefix('(')
                    .and_then(|s| s.strip_suffix(')'))
                    .ok_or_else(|| {
                        format!("{word} needs a set of values in parentheses: {part}")
                    })?;
                let values = inner.split(',').map(|v| v.trim().to_string()).collect();
                return new_requirement(key, op, values);
            }
        }
        return Err(format!(
            "unknown operator in {part:?} (=, ==, !=, in, notin)"
        ));
    }
    new_requirement(part, Op::Exists, Vec::new())
}

fn new_requirement(key: &str, op: Op, values: Vec<String>) -> Result<Requirement, String> {
    let mut errs = Vec::new();
    let key_errs = qualified_name_errors(key);
    if !key_errs.is_empty() {
        errs.push(format!(
            "key: Invalid value: {key:?}: {}",
            key_errs.join("; ")
        ));
    }
    match op {
        Op::In | Op::NotIn if values.is_empty() => errs.push(
            "values: Invalid value: for 'in', 'notin' operators, values set can't be empty".into(),
        ),
        Op::Equals if values.len() != 1 => errs.push(
            "values: Invalid value: exact-match compatibility requires one single value".into(),
        ),
        Op::Exists | Op::DoesNotExist if !values.is_empty() => errs.push(
            "values: Invalid value: values set must be empty for exists and does not exist".into(),
        ),
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        let e = label_value_errors(v);
        if !e.is_empty() {
            errs.push(format!(
                "values[{i}][{key}]: Invalid value: {v:?}: {}",
                e.join("; ")
            ));
        }
    }
    if errs.is_empty() {
        Ok(Requirement {
            key: key.to_string(),
            op,
            values,
        })
    } else {
        Err(errs.join(", "))
    }
}

fn expressions(sel: &Value) -> impl Iterator<Item = &Value> {
    sel.get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn string_values(e: &Value) -> impl Iterator<Item = &str> {
    e.get("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Whether `labels` (an object of strings, or null) match `selector`.
///
/// An empty selector (`{}`) matches everything; a null selector matches nothing (kcm refuses
/// an SMP without one). A selector invalid in structure matches nothing and is reported by
/// [`validate`].
pub fn matches(selector: &Value, labels: &Value) -> bool {
    if selector.is_null() {
        return false;
    }
    Selector::lenient(selector).is_some_and(|s| s.matches_json(labels))
}

/// Checks the structure of a selector as the API server does for `metav1.LabelSelector`.
pub fn validate(selector: &Value) -> Result<(), String> {
    for e in expressions(selector) {
        let n = e
            .get("values")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" | "NotIn" if n == 0 => {
                return Err("In and NotIn need at least one value".into());
            }
            "Exists" | "DoesNotExist" if n > 0 => {
                return Err("Exists and DoesNotExist take no values".into());
            }
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => return Err(format!("unknown operator {other:?}")),
        }
    }
    Ok(())
}

/// `key=value,key2 in (a,b)` as kubectl shows selectors.
pub fn to_string(selector: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(m) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            parts.push(format!("{k}={}", v.as_str().unwrap_or("")));
        }
    }
    for e in expressions(selector) {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = string_values(e).collect();
        parts.push(
            match e.get("operator").and_then(Value::as_str).unwrap_or("") {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.to_string(),
                "DoesNotExist" => format!("!{key}"),
                op => format!("{key} {op}"),
            },
        );
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn match_labels_and_expressions() {
        let sel = json!({"matchLabels": {"a": "1"}, "matchExpressions": [
            {"key": "b", "operator": "In", "values": ["x", "y"]},
            {"key": "c", "operator": "DoesNotExist"}]});
        assert!(matches(&sel, &json!({"a": "1", "b": "y"})));
        assert!(!matches(&sel, &json!({"a": "1", "b": "z"})));
        assert!(!matches(&sel, &json!({"a": "1", "b": "x", "c": ""})));
        assert!(!matches(&sel, &json!(null)));
        assert_eq!(to_string(&sel), "a=1,b in (x,y),!c");
    }

    #[test]
    fn empty_null_and_invalid_selectors() {
        assert!(matches(&json!({}), &json!({"any": "thing"})));
        assert!(!matches(&Value::Null, &json!({})));
        let bad = json!({"matchExpressions": [{"key": "b", "operator": "In", "values": []}]});
        assert!(validate(&bad).is_err());
        assert!(!matches(&bad, &json!({"b": "x"})));
        assert!(matches(
            &json!({"matchExpressions": [{"key": "b", "operator": "NotIn", "values": ["x"]}]}),
            &json!({})
        ));
        // A matchLabels value that is no string equals no label.
        assert!(!matches(
            &json!({"matchLabels": {"a": 1}}),
            &json!({"a": "1"})
        ));
    }

    #[test]
    fn selector_strings_as_kubectl_takes_them() {
        let s = Selector::parse_string("env in (dev, prod),tier!=db,app=web,!legacy,team").unwrap();
        let labels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(s.matches_map(&labels(&[("env", "dev"), ("app", "web"), ("team", "a")])));
        assert!(!s.matches_map(&labels(&[("env", "qa"), ("app", "web"), ("team", "a")])));
        assert!(!s.matches_map(&labels(&[
            ("env", "dev"),
            ("app", "web"),
            ("team", "a"),
            ("tier", "db")
        ])));
        assert!(!s.matches_map(&labels(&[
            ("env", "dev"),
            ("app", "web"),
            ("team", "a"),
            ("legacy", "")
        ])));
        assert!(Selector::parse_string("").unwrap().is_empty());
        assert!(Selector::parse_string("a==b").is_ok());
        for bad in ["a in b", "bad key=x", "a=(", "a,,b", "a>1", "a=b c"] {
            assert!(Selector::parse_string(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn strict_parse_sorts_and_validates() {
        let s = Selector::parse(&json!({"matchLabels": {"z": "1"},
            "matchExpressions": [{"key": "a", "operator": "Exists"}]}))
        .unwrap();
        let keys: Vec<&str> = s.requirements().iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["a", "z"]);
        let mut labels = BTreeMap::new();
        labels.insert("a".to_string(), String::new());
        labels.insert("z".to_string(), "1".to_string());
        assert!(s.matches_map(&labels));
        for bad in [
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
            json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}),
            json!({"matchLabels": {"bad key": "v"}}),
            json!({"matchLabels": {"k": "bad value!"}}),
            json!({"matchLabels": {"Upper.Prefix/k": "v"}}),
            json!([]),
        ] {
            assert!(Selector::parse(&bad).is_err(), "{bad}");
        }
        let e = Selector::parse(&json!({"matchLabels": {"bad key": "v"}})).unwrap_err();
        assert!(
            e.starts_with("key: Invalid value: \"bad key\": name part must"),
            "{e}"
        );
        assert!(Selector::parse(&json!({})).unwrap().is_empty());
    }
}
