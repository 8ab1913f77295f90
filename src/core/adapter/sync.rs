//! Whether a live object already is what a server-side apply of the desired object would make
//! it, so that the controller writes nothing at steady state.
//!
//! An apply of `desired` by manager M is a no-op when
//! 1. every field of `desired` has its value in the live object (maps by key, lists as a whole,
//!    element by element: Flux's lists are atomic), and
//! 2. M owns no field that `desired` no longer sets (an apply would remove it). M's fields are
//!    read from the live object's `metadata.managedFields` entry of operation `Apply`.
//!
//! Fields other managers or the API server set (defaults, status) are not compared: an apply
//! would not touch them either.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::api::meta::Object;
use crate::api::naming::OPERATION_APPLY;

/// Whether applying `desired` as `manager` would change nothing in `live`.
pub fn in_sync(desired: &Value, live: &Value, manager: &str) -> bool {
    if !subset(desired, live) {
        return false;
    }
    match owned_paths(live, manager) {
        // Without our managedFields entry we never applied this object (or the server does
        // not track fields): the values match, but we do not own them yet. Apply once.
        None => false,
        Some(owned) => {
            let wanted = paths(desired);
            owned.iter().all(|p| wanted.contains(p))
        }
    }
}

/// `a`'s fields all have their values in `b`.
pub fn subset(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => a
            .iter()
            .all(|(k, av)| b.get(k).is_some_and(|bv| subset(av, bv))),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| subset(x, y))
        }
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64())
        }
        _ => a == b,
    }
}

/// A set of field paths, each one string: every segment as `<length>:<name>`, so that no
/// two paths share a text whatever their names hold (one allocation per path; the
/// comparison runs on every reconcile of every object).
type Paths = BTreeSet<String>;

/// Appends the segment `name` to `path`.
fn push_segment(path: &mut String, name: &str) {
    use std::fmt::Write as _;
    let _ = write!(path, "{}:{name}", name.len());
}

/// The map-key paths of an object below its top level (`spec`, `spec.interval`, …), lists
/// being leaves; `apiVersion`, `kind` and the server's metadata are left out.
fn paths(obj: &Value) -> Paths {
    let mut out = Paths::new();
    let mut path = String::new();
    if let Some(m) = obj.as_object() {
        for (k, v) in m {
            if k == "apiVersion" || k == "kind" {
                continue;
            }
            path.clear();
            push_segment(&mut path, k);
            if k == "metadata" {
                out.insert(path.clone());
                if let Some(meta) = v.as_object() {
                    for (mk, mv) in meta {
                        if matches!(mk.as_str(), "name" | "namespace") {
                            continue;
                        }
                        let at = path.len();
                        push_segment(&mut path, mk);
                        collect(mv, &mut path, &mut out);
                        path.truncate(at);
                    }
                }
                continue;
            }
            collect(v, &mut path, &mut out);
        }
    }
    out
}

fn collect(v: &Value, path: &mut String, out: &mut Paths) {
    if let Value::Object(m) = v
        && !m.is_empty()
    {
        for (k, c) in m {
            let at = path.len();
            push_segment(path, k);
            collect(c, path, out);
            path.truncate(at);
        }
    }
    out.insert(path.clone());
}

/// The paths `manager` owns by apply, from `metadata.managedFields`; None when it has no
/// entry. List items (`k:`, `v:`, `i:` keys) are folded into their list.
fn owned_paths(live: &Value, manager: &str) -> Option<Paths> {
    let entries = Object(live).managed_fields()?;
    let entry = entries.iter().find(|e| {
        e.get("manager").and_then(Value::as_str) == Some(manager)
            && e.get("operation").and_then(Value::as_str) == Some(OPERATION_APPLY)
            && e.get("subresource")
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
    })?;
    let mut out = Paths::new();
    if let Some(Value::Object(f)) = entry.get("fieldsV1") {
        walk_fields(f, &mut String::new(), &mut out);
    }
    // Server-set metadata is never compared.
    for name in ["name", "namespace"] {
        let mut p = String::new();
        push_segment(&mut p, "metadata");
        push_segment(&mut p, name);
        out.remove(&p);
    }
    Some(out)
}

fn walk_fields(f: &Map<String, Value>, path: &mut String, out: &mut Paths) {
    for (k, v) in f {
        if k == "." {
            continue;
        }
        let Some(name) = k.strip_prefix("f:") else {
            // A list item: the list is owned as a whole at this granularity.
            continue;
        };
        let at = path.len();
        push_segment(path, name);
        if let Value::Object(children) = v {
            walk_fields(children, path, out);
        }
        out.insert(path.clone());
        path.truncate(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn live(spec: Value, fields: Value) -> Value {
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "a", "namespace": "n", "resourceVersion": "7",
                "labels": {"x": "1"},
                "managedFields": [
                    {"manager": "other", "operation": "Update", "fieldsV1": {"f:spec": {"f:suspend": {}}}},
                    {"manager": "kubectl-ksm", "operation": "Apply", "fieldsV1": fields}]},
            "spec": spec, "status": {"observedGeneration": 1}})
    }

    fn desired(spec: Value) -> Value {
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "a", "namespace": "n", "labels": {"x": "1"}}, "spec": spec})
    }

    const FIELDS: &str = r#"{"f:metadata": {"f:labels": {"f:x": {}}},
        "f:spec": {"f:interval": {}, "f:values": {"f:a": {}, "f:b": {"f:c": {}}}}}"#;

    #[test]
    fn same_values_and_fields_is_in_sync() {
        let spec = json!({"interval": "10m", "values": {"a": 1, "b": {"c": [1, 2]}}});
        let mut live_spec = spec.clone();
        live_spec["suspend"] = json!(false); // another manager's field
        let f: Value = serde_json::from_str(FIELDS).unwrap();
        assert!(in_sync(&desired(spec), &live(live_spec, f), "kubectl-ksm"));
    }

    #[test]
    fn changed_value_is_not_in_sync() {
        let f: Value = serde_json::from_str(FIELDS).unwrap();
        let l = live(
            json!({"interval": "10m", "values": {"a": 1, "b": {"c": [1, 2]}}}),
            f,
        );
        let d = desired(json!({"interval": "5m", "values": {"a": 1, "b": {"c": [1, 2]}}}));
        assert!(!in_sync(&d, &l, "kubectl-ksm"));
        let d = desired(json!({"interval": "10m", "values": {"a": 1, "b": {"c": [1]}}}));
        assert!(!in_sync(&d, &l, "kubectl-ksm"));
    }

    #[test]
    fn dropped_field_is_not_in_sync() {
        // We own values.b; the desired object no longer sets it: an apply would remove it.
        let f: Value = serde_json::from_str(FIELDS).unwrap();
        let l = live(
            json!({"interval": "10m", "values": {"a": 1, "b": {"c": [1, 2]}}}),
            f,
        );
        let d = desired(json!({"interval": "10m", "values": {"a": 1}}));
        assert!(subset(&d, &l));
        assert!(!in_sync(&d, &l, "kubectl-ksm"));
    }

    #[test]
    fn not_yet_owned_is_not_in_sync() {
        let spec = json!({"interval": "10m"});
        let mut l = live(spec.clone(), json!({}));
        l["metadata"]["managedFields"] = json!([]);
        assert!(!in_sync(&desired(spec), &l, "kubectl-ksm"));
    }

    #[test]
    fn field_names_with_separators_stay_apart() {
        let a = paths(&json!({"spec": {"x:1": {"y": 1}}}));
        let b = paths(&json!({"spec": {"x": {"1:y": 1}}}));
        assert_eq!(a.len(), 3);
        assert!(a.is_disjoint(&b.iter().filter(|p| p.len() > 6).cloned().collect()));
        let f = json!({"f:spec": {"f:x:1": {"f:y": {}}}});
        let l = live(json!({"x:1": {"y": 1}}), f);
        assert!(in_sync(
            &desired(json!({"x:1": {"y": 1}})),
            &l,
            "kubectl-ksm"
        ));
        assert!(!in_sync(
            &desired(json!({"x": {"1:y": 1}})),
            &l,
            "kubectl-ksm"
        ));
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(subset(&json!({"a": 1.0}), &json!({"a": 1.0})));
        assert!(!subset(&json!({"a": 1}), &json!({"a": 2})));
        assert!(!subset(&json!({"a": "1"}), &json!({"a": 1})));
    }
}
