//! Kubernetes label selectors (`matchLabels` and `matchExpressions`), as
//! apimachinery's `LabelSelectorAsSelector` evaluates them.

use serde_json::Value;

/// Whether `labels` (an object of strings, or null) match `selector`.
///
/// An empty selector (`{}`) matches everything; a null selector matches nothing (kcm refuses
/// an SMP without one). An invalid selector (unknown operator, `In` without values) matches
/// nothing and is reported by [`validate`].
pub fn matches(selector: &Value, labels: &Value) -> bool {
    if selector.is_null() || validate(selector).is_err() {
        return false;
    }
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    if let Some(m) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            if label(k) != v.as_str() {
                return false;
            }
        }
    }
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let ok = match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => label(key).is_some_and(|v| values.contains(&v)),
            "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
            "Exists" => label(key).is_some(),
            "DoesNotExist" => label(key).is_none(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Checks a selector as the API server does for `metav1.LabelSelector`.
pub fn validate(selector: &Value) -> Result<(), String> {
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
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
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
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
    }
}
