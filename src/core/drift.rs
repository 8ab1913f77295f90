//! Drift: a rendered object against its live copy, as `kubectl ksm diff` reports it.
//!
//! The rendered object says what the adapter sets; the live one also carries what the API
//! server and the controllers add (status, managedFields, uid, defaults). So the comparison
//! is the rendered object's own fields: every field it sets must have the same value live,
//! labels and annotations key by key, lists element by element; fields only the live object
//! has are not drift. The values of a Secret's `data` and `stringData` are never kept: a
//! difference there is reported by path with both sides masked.

use serde::Serialize;
use serde_json::Value;

use crate::api::kinds;
use crate::api::meta::{Object, ObjectId};

/// Metadata fields that belong to the rendered object's intent; the rest of `metadata` is the
/// API server's (uid, resourceVersion, generation, managedFields, creationTimestamp, ...).
const INTENDED_METADATA: &[&str] = &["labels", "annotations", "finalizers"];

/// What is shown in place of a Secret's value.
pub const MASK: &str = "***";

/// One field that differs: its path (`spec.values.replicaCount`) and both values (None: the
/// field is absent on that side).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    pub path: String,
    pub live: Option<Value>,
    pub rendered: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    /// The live object has every rendered field with the same value.
    Unchanged,
    /// The live object differs.
    Drifted,
    /// No live object: applying would create it.
    Missing,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectDrift {
    pub object: ObjectId,
    pub status: Status,
    pub differences: Vec<Difference>,
}

/// The drift of one rendered object against its live copy (None: not in the cluster).
pub fn compare(rendered: &Value, live: Option<&Value>) -> ObjectDrift {
    let object = ObjectId::of(rendered);
    let Some(live) = live else {
        return ObjectDrift {
            object,
            status: Status::Missing,
            differences: Vec::new(),
        };
    };
    let mut differences = Vec::new();
    if let Some(fields) = rendered.as_object() {
        for (key, want) in fields {
            match key.as_str() {
                "apiVersion" | "kind" | "status" => {}
                "metadata" => {
                    for k in INTENDED_METADATA {
                        if let Some(want) = want.get(*k) {
                            let path = format!("metadata.{k}");
                            walk(
                                &path,
                                want,
                                live.pointer(&format!("/metadata/{k}")),
                                &mut differences,
                            );
                        }
                    }
                }
                _ => walk(key, want, live.get(key), &mut differences),
            }
        }
    }
    if Object(rendered).kind() == kinds::SECRET.kind {
        for d in &mut differences {
            if ["data", "stringData"]
                .iter()
                .any(|p| d.path == *p || d.path.starts_with(&format!("{p}.")))
            {
                d.live = d.live.as_ref().map(|_| Value::from(MASK));
                d.rendered = d.rendered.as_ref().map(|_| Value::from(MASK));
            }
        }
    }
    ObjectDrift {
        object,
        status: if differences.is_empty() {
            Status::Unchanged
        } else {
            Status::Drifted
        },
        differences,
    }
}

/// A path segment: `.key`, or `["key.with.dots"]` when the key needs quoting.
fn join(path: &str, key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        format!("{path}.{key}")
    } else {
        format!("{path}[{key:?}]")
    }
}

fn walk(path: &str, want: &Value, live: Option<&Value>, out: &mut Vec<Difference>) {
    let differ = |out: &mut Vec<Difference>| {
        out.push(Difference {
            path: path.to_string(),
            live: live.cloned(),
            rendered: Some(want.clone()),
        })
    };
    match (want, live) {
        (_, None) => differ(out),
        (Value::Object(w), Some(Value::Object(l))) => {
            for (k, v) in w {
                walk(&join(path, k), v, l.get(k), out);
            }
        }
        (Value::Array(w), Some(Value::Array(l))) if w.len() == l.len() => {
            for (i, (wv, lv)) in w.iter().zip(l).enumerate() {
                walk(&format!("{path}[{i}]"), wv, Some(lv), out);
            }
        }
        (Value::Number(w), Some(Value::Number(l))) if w.as_f64() == l.as_f64() => {}
        (w, Some(l)) if w == l => {}
        _ => differ(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hr(values: Value) -> Value {
        json!({
            "apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
            "metadata": {"name": "x", "namespace": "ns", "labels": {"a": "1"}},
            "spec": {"interval": "10m", "values": values},
        })
    }

    #[test]
    fn fields_the_server_adds_are_not_drift() {
        let mut live = hr(json!({"replicas": 2}));
        live["metadata"]["uid"] = json!("u");
        live["metadata"]["labels"]["added-by-someone"] = json!("x");
        live["spec"]["timeout"] = json!("5m");
        live["status"] = json!({"conditions": []});
        let d = compare(&hr(json!({"replicas": 2.0})), Some(&live));
        assert_eq!(d.status, Status::Unchanged, "{d:?}");
    }

    #[test]
    fn changed_and_removed_fields_are_drift() {
        let mut live = hr(json!({"replicas": 3, "list": [1, 2]}));
        live["metadata"]["labels"] = json!({});
        let d = compare(
            &hr(json!({"replicas": 2, "list": [1, 2, 3], "a.b": true})),
            Some(&live),
        );
        assert_eq!(d.status, Status::Drifted);
        let paths: Vec<&str> = d.differences.iter().map(|d| d.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "metadata.labels.a",
                "spec.values.replicas",
                "spec.values.list",
                "spec.values[\"a.b\"]"
            ]
        );
        assert_eq!(d.differences[1].live, Some(json!(3)));
        assert_eq!(d.differences[1].rendered, Some(json!(2)));
        assert_eq!(d.differences[0].live, None);
        assert_eq!(compare(&hr(json!({})), None).status, Status::Missing);
    }

    #[test]
    fn secret_values_are_never_kept() {
        let secret = |v: &str| {
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"name": "s", "namespace": "ns"},
                   "stringData": {"password": v}})
        };
        let d = compare(&secret("new-secret"), Some(&secret("old-secret")));
        assert_eq!(d.status, Status::Drifted);
        let text = serde_json::to_string(&d).unwrap();
        assert!(
            !text.contains("new-secret") && !text.contains("old-secret"),
            "{text}"
        );
        assert_eq!(d.differences[0].path, "stringData.password");
        assert_eq!(d.differences[0].rendered, Some(json!(MASK)));
    }
}
