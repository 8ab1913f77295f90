//! Label and field selectors, with the syntax of `k8s.io/apimachinery/pkg/labels` and `fields`.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Req {
    Eq(String, String),
    NotEq(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
    Gt(String, i64),
    Lt(String, i64),
}

/// A parsed label selector; the empty one matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector(Vec<Req>);

/// Splits at commas outside parentheses.
fn split_top(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c)
            }
            ')' => {
                depth -= 1;
                cur.push(c)
            }
            ',' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 317
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

fn valid_value(v: &str) -> bool {
    v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

fn parse_set(rest: &str) -> Result<Vec<String>, String> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("found '{rest}', expected: '('"))?;
    let vals: Vec<String> = inner.split(',').map(|v| v.trim().to_string()).collect();
    if let Some(bad) = vals.iter().find(|v| !valid_value(v)) {
        return Err(format!("invalid label value: \"{bad}\""));
    }
    Ok(vals)
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(LabelSelector(reqs));
        }
        for part in split_top(s) {
            let p = part.trim();
            if p.is_empty() {
                return Err(format!("found '', expected: identifier in \"{s}\""));
            }
            let req = if let Some(k) = p.strip_prefix('!') {
                Req::NotExists(k.trim().to_string())
            } else if let Some((k, v)) = p.split_once("!=") {
                Req::NotEq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = p.split_once("==") {
                Req::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = p.split_once('=') {
                Req::Eq(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = p.split_once('>') {
                Req::Gt(
                    k.trim().into(),
                    v.trim()
                        .parse()
                        .map_err(|_| format!("invalid integer value {v}"))?,
                )
            } else if let Some((k, v)) = p.split_once('<') {
                Req::Lt(
                    k.trim().into(),
                    v.trim()
                        .parse()
                        .map_err(|_| format!("invalid integer value {v}"))?,
                )
            } else if let Some(i) = p.find(" notin ").or_else(|| p.find(" notin(")) {
                Req::NotIn(p[..i].trim().into(), parse_set(&p[i + 6..])?)
            } else if let Some(i) = p.find(" in ").or_else(|| p.find(" in(")) {
                Req::In(p[..i].trim().into(), parse_set(&p[i + 3..])?)
            } else {
                Req::Exists(p.to_string())
            };
            let (k, v) = match &req {
                Req::Eq(k, v) | Req::NotEq(k, v) => (k, Some(v)),
                Req::In(k, _) | Req::NotIn(k, _) | Req::Exists(k) | Req::NotExists(k) => (k, None),
                Req::Gt(k, _) | Req::Lt(k, _) => (k, None),
            };
            if !valid_key(k) {
                return Err(format!(
                    "unable to parse requirement: invalid label key \"{k}\""
                ));
            }
            if let Some(v) = v
                && !valid_value(v)
            {
                return Err(format!(
                    "unable to parse requirement: invalid label value: \"{v}\""
                ));
            }
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.pointer("/metadata/labels").and_then(Value::as_object);
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            Req::Eq(k, v) => get(k) == Some(v.as_str()),
            Req::NotEq(k, v) => get(k) != Some(v.as_str()),
            Req::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Req::NotIn(k, vs) => get(k).is_none_or(|x| !vs.iter().any(|v| v == x)),
            Req::Exists(k) => get(k).is_some(),
            Req::NotExists(k) => get(k).is_none(),
            Req::Gt(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x > *n),
            Req::Lt(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x < *n),
        })
    }
}

/// A parsed field selector: `path=value`, `path==value`, `path!=value`, comma-separated.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Custom resources only support `metadata.name` and `metadata.namespace`, as on a real
    /// server without `selectableFields`; built-ins accept any dotted path here.
    pub fn parse(s: &str, custom: bool) -> Result<Self, String> {
        let mut out = Vec::new();
        if s.trim().is_empty() {
            return Ok(FieldSelector(out));
        }
        for part in s.split(',') {
            let (k, eq, v) = if let Some((k, v)) = part.split_once("!=") {
                (k, false, v)
            } else if let Some((k, v)) = part.split_once("==") {
                (k, true, v)
            } else if let Some((k, v)) = part.split_once('=') {
                (k, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            let k = k.trim();
            if custom && k != "metadata.name" && k != "metadata.namespace" {
                return Err(format!("field label not supported: {k}"));
            }
            out.push((k.to_string(), eq, v.trim().to_string()));
        }
        Ok(FieldSelector(out))
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(path, eq, want)| {
            let ptr = format!("/{}", path.replace('.', "/"));
            let got = match obj.pointer(&ptr) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(v) => v.to_string(),
            };
            (got == *want) == *eq
        })
    }

    /// The `metadata.name=` it pins, if any (a watch on one object).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "n", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_selector_operators() {
        let o = obj(json!({"a": "1", "b": "x"}));
        for (sel, want) in [
            ("", true),
            ("a=1", true),
            ("a==1", true),
            ("a!=1", false),
            ("a in (1,2)", true),
            ("a notin (1,2)", false),
            ("c notin (1)", true),
            ("b", true),
            ("!b", false),
            ("!c", true),
            ("a=1,b=x", true),
            ("a=1,b=y", false),
            ("a>0", true),
            ("a<1", false),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).unwrap().matches(&o),
                want,
                "{sel}"
            );
        }
        assert!(LabelSelector::parse("a in (1").is_err());
        assert!(LabelSelector::parse("a=1,").is_err());
        assert!(LabelSelector::parse("a=b c").is_err());
    }

    #[test]
    fn field_selector() {
        let o = obj(json!({}));
        assert!(
            FieldSelector::parse("metadata.name=n", true)
                .unwrap()
                .matches(&o)
        );
        assert!(
            !FieldSelector::parse("metadata.namespace!=ns", true)
                .unwrap()
                .matches(&o)
        );
        assert!(FieldSelector::parse("spec.x=1", true).is_err());
        assert!(FieldSelector::parse("spec.x=", false).unwrap().matches(&o));
        assert!(FieldSelector::parse("nonsense", false).is_err());
    }
}
