//! Field ownership for `metadata.managedFields` (server-side apply and update tracking).
//!
//! Simplification: a field set is a set of paths of object keys; lists are atomic (owned as a
//! whole, as for a CRD list without `x-kubernetes-list-type: map|set`), so a list is a leaf. Sets
//! are written in the real `FieldsV1` shape (`{"f:spec":{"f:replicas":{}}}`, with `"."` where a
//! node is owned as well as some of its children) and read back from it.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

pub type Path = Vec<String>;
pub type FieldSet = BTreeSet<Path>;

/// Which part of an object a write may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Everything but status (status subresource enabled) and server-set metadata.
    Main { skip_status: bool },
    /// Only `.status`.
    Status,
}

const SERVER_META: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

/// The leaf paths of `obj` that a manager writing in `scope` owns.
pub fn leaves(obj: &Value, scope: Scope) -> FieldSet {
    let mut out = FieldSet::new();
    let Some(map) = obj.as_object() else {
        return out;
    };
    for (k, v) in map {
        if k == "apiVersion" || k == "kind" {
            continue;
        }
        let is_status = k == "status";
        match scope {
            Scope::Status if !is_status => continue,
            Scope::Main { skip_status: true } if is_status => continue,
            _ => {}
        }
        if k == "metadata" {
            if let Some(m) = v.as_object() {
                for (mk, mv) in m {
                    if !SERVER_META.contains(&mk.as_str()) {
                        collect(mv, vec!["metadata".into(), mk.clone()], &mut out);
                    }
                }
            }
            continue;
        }
        collect(v, vec![k.clone()], &mut out);
    }
    out
}

fn collect(v: &Value, path: Path, out: &mut FieldSet) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, c) in m {
                let mut p = path.clone();
                p.push(k.clone());
                collect(c, p, out);
            }
        }
        _ => {
            out.insert(path);
        }
    }
}

pub fn value_at<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, k| cur.as_object()?.get(k))
}

/// `a` equals `b`, or one is a prefix of the other.
pub fn overlaps(a: &[String], b: &[String]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// Removes the field at `path`, then the maps left empty above it (up to, not including, the
/// top-level key and `metadata`) unless `keep` says a manager owns them.
pub fn remove_at(obj: &mut Value, path: &[String], keep: &dyn Fn(&[String]) -> bool) {
    if path.is_empty() {
        return;
    }
    let Some(parent) = value_mut(obj, &path[..path.len() - 1]).and_then(Value::as_object_mut)
    else {
        return;
    };
    parent.remove(&path[path.len() - 1]);
    let mut end = path.len() - 1;
    while end >= 2 {
        let p = &path[..end];
        let empty = value_at(obj, p)
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty);
        if !empty || keep(p) || p == ["metadata".to_string()] {
            break;
        }
        if let Some(m) = value_mut(obj, &p[..p.len() - 1]).and_then(Value::as_object_mut) {
            m.remove(&p[p.len() - 1]);
        }
        end -= 1;
    }
}

fn value_mut<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter()
        .try_fold(v, |cur, k| cur.as_object_mut()?.get_mut(k))
}

/// Deep merge for apply: maps merge key by key, anything else replaces.
pub fn merge_into(dst: &mut Value, src: &Value) {
    match (dst, src) {
        (Value::Object(d), Value::Object(s)) => {
            for (k, v) in s {
                match d.get_mut(k) {
                    Some(dv) if dv.is_object() && v.is_object() => merge_into(dv, v),
                    _ => {
                        d.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (d, s) => *d = s.clone(),
    }
}

/// A set in the `FieldsV1` shape.
pub fn to_fields_v1(set: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in set {
        let mut node = &mut root;
        for k in path {
            let e = node.entry(format!("f:{k}")).or_insert_with(|| json!({}));
            node = e.as_object_mut().expect("fields node");
        }
        node.insert(".".into(), json!({}));
    }
    // "." only where a node also has children: a bare owned leaf is `{}`.
    fn tidy(m: &mut Map<String, Value>) {
        if m.len() == 1 && m.contains_key(".") {
            m.clear();
            return;
        }
        for (k, v) in m.iter_mut() {
            if k != "."
                && let Some(c) = v.as_object_mut()
            {
                tidy(c);
            }
        }
    }
    tidy(&mut root);
    Value::Object(root)
}

/// Reads a `FieldsV1` value back to a set (keys other than `f:` stay as opaque segments).
pub fn from_fields_v1(v: &Value) -> FieldSet {
    let mut out = FieldSet::new();
    fn walk(m: &Map<String, Value>, path: &mut Path, out: &mut FieldSet) {
        if m.is_empty() {
            if !path.is_empty() {
                out.insert(path.clone());
            }
            return;
        }
        for (k, v) in m {
            if k == "." {
                out.insert(path.clone());
                continue;
            }
            let seg = k.strip_prefix("f:").unwrap_or(k).to_string();
            path.push(seg);
            if let Some(c) = v.as_object() {
                walk(c, path, out);
            }
            path.pop();
        }
    }
    if let Some(m) = v.as_object() {
        walk(m, &mut Vec::new(), &mut out);
    }
    out
}

/// One `metadata.managedFields` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub time: String,
    pub subresource: Option<String>,
    pub fields: FieldSet,
}

impl Entry {
    pub fn same_slot(&self, manager: &str, operation: &str, sub: Option<&str>) -> bool {
        self.manager == manager && self.operation == operation && self.subresource.as_deref() == sub
    }
}

pub fn read_managed(obj: &Value) -> Vec<Entry> {
    let Some(a) = obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    a.iter()
        .filter_map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
            Some(Entry {
                manager: s("manager")?,
                operation: s("operation").unwrap_or_else(|| "Update".into()),
                api_version: s("apiVersion").unwrap_or_default(),
                time: s("time").unwrap_or_default(),
                subresource: s("subresource"),
                fields: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
            })
        })
        .collect()
}

pub fn write_managed(obj: &mut Value, entries: &[Entry]) {
    let arr: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut v = json!({
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": e.api_version,
                "time": e.time,
                "fieldsType": "FieldsV1",
                "fieldsV1": to_fields_v1(&e.fields),
            });
            if let Some(s) = &e.subresource {
                v["subresource"] = json!(s);
            }
            v
        })
        .collect();
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        if arr.is_empty() {
            m.remove("managedFields");
        } else {
            m.insert("managedFields".into(), Value::Array(arr));
        }
    }
}

/// Ownership after a non-apply write by `manager`: it takes the fields it changed or added,
/// and fields that disappeared are no longer owned by anyone.
pub fn track_update(
    entries: &mut Vec<Entry>,
    old: &Value,
    new: &Value,
    scope: Scope,
    manager: &str,
    api_version: &str,
    now: &str,
) {
    let old_l = leaves(old, scope);
    let new_l = leaves(new, scope);
    let removed: Vec<&Path> = old_l
        .iter()
        .filter(|p| !new_l.contains(*p) && value_at(new, p) != value_at(old, p))
        .collect();
    let changed: Vec<&Path> = new_l
        .iter()
        .filter(|p| value_at(old, p) != value_at(new, p))
        .collect();
    let sub = matches!(scope, Scope::Status).then_some("status");
    for e in entries.iter_mut() {
        e.fields.retain(|q| {
            !removed.iter().any(|r| q.starts_with(r)) && !changed.iter().any(|c| overlaps(q, c))
        });
    }
    if !changed.is_empty() {
        let idx = match entries
            .iter()
            .position(|e| e.same_slot(manager, "Update", sub))
        {
            Some(i) => i,
            None => {
                entries.push(Entry {
                    manager: manager.to_string(),
                    operation: "Update".into(),
                    api_version: api_version.to_string(),
                    time: now.to_string(),
                    subresource: sub.map(str::to_string),
                    fields: FieldSet::new(),
                });
                entries.len() - 1
            }
        };
        let e = &mut entries[idx];
        e.time = now.to_string();
        e.api_version = api_version.to_string();
        e.fields.extend(changed.into_iter().cloned());
    }
    entries.retain(|e| !e.fields.is_empty());
}

/// One conflict of an apply: `(manager, its apiVersion, path)`.
pub type Conflict = (String, String, Path);

/// Server-side apply of `applied` by `manager` onto `live` (the empty object when creating).
/// Returns the merged object and the new entries, or the conflicts when not forced.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    live: &Value,
    applied: &Value,
    entries: &[Entry],
    scope: Scope,
    manager: &str,
    api_version: &str,
    now: &str,
    force: bool,
) -> Result<(Value, Vec<Entry>), Vec<Conflict>> {
    let sub = matches!(scope, Scope::Status).then_some("status");
    let new_set = leaves(applied, scope);
    let mut entries = entries.to_vec();
    let mine = entries
        .iter()
        .position(|e| e.same_slot(manager, "Apply", sub));
    let old_set = mine.map(|i| entries[i].fields.clone()).unwrap_or_default();

    let mut conflicts = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.manager == manager {
            continue;
        }
        for q in &e.fields {
            for p in &new_set {
                if !overlaps(p, q) {
                    continue;
                }
                // An empty map applied above someone else's fields claims the map, not them.
                if p.len() < q.len() && value_at(applied, p).is_some_and(Value::is_object) {
                    continue;
                }
                let short = if p.len() <= q.len() { p } else { q };
                if value_at(live, short) != value_at(applied, short) {
                    conflicts.push((i, e.manager.clone(), e.api_version.clone(), q.clone()));
                }
            }
        }
    }
    conflicts.sort();
    conflicts.dedup();
    if !conflicts.is_empty() {
        if !force {
            return Err(conflicts
                .into_iter()
                .map(|(_, m, a, p)| (m, a, p))
                .collect());
        }
        for (i, _, _, q) in &conflicts {
            entries[*i].fields.remove(q);
        }
    }

    let mut merged = live.clone();
    if merged.is_null() {
        merged = json!({});
    }
    // Fields this manager applied before and omits now go, unless someone still owns them.
    let others: Vec<&Entry> = entries
        .iter()
        .filter(|e| !e.same_slot(manager, "Apply", sub))
        .collect();
    let owned_elsewhere = |r: &[String]| {
        new_set.iter().any(|p| {
            overlaps(p, r)
                && !(p.len() < r.len() && value_at(applied, p).is_some_and(Value::is_object))
        }) || others
            .iter()
            .any(|e| e.fields.iter().any(|q| overlaps(q, r)))
    };
    for r in old_set.difference(&new_set) {
        if !owned_elsewhere(r) {
            remove_at(&mut merged, r, &owned_elsewhere);
        }
    }
    // Applied values: everything in scope.
    let mut scoped = applied.clone();
    if let Some(m) = scoped.as_object_mut() {
        m.retain(|k, _| match scope {
            Scope::Status => k == "status" || k == "metadata" || k == "apiVersion" || k == "kind",
            Scope::Main { skip_status } => !(skip_status && k == "status"),
        });
        if let Some(md) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            md.retain(|k, _| {
                matches!(scope, Scope::Main { .. }) && !SERVER_META.contains(&k.as_str())
                    || k == "name"
                    || k == "namespace"
            });
        }
    }
    merge_into(&mut merged, &scoped);

    match mine {
        Some(i) => {
            entries[i].fields = new_set;
            entries[i].time = now.to_string();
            entries[i].api_version = api_version.to_string();
        }
        None => entries.push(Entry {
            manager: manager.to_string(),
            operation: "Apply".into(),
            api_version: api_version.to_string(),
            time: now.to_string(),
            subresource: sub.map(str::to_string),
            fields: new_set,
        }),
    }
    entries.retain(|e| !e.fields.is_empty());
    Ok((merged, entries))
}

/// `.spec.x.y` as the real server prints field paths in conflicts.
pub fn dotted(p: &[String]) -> String {
    p.iter().map(|s| format!(".{s}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Path {
        s.split('.').map(str::to_string).collect()
    }

    #[test]
    fn fields_v1_round_trip() {
        let set: FieldSet = [
            p("spec.a"),
            p("spec.b.c"),
            p("spec.b"),
            p("metadata.labels.x"),
        ]
        .into_iter()
        .collect();
        let v = to_fields_v1(&set);
        assert_eq!(
            v,
            json!({"f:spec": {"f:a": {}, "f:b": {".": {}, "f:c": {}}}, "f:metadata": {"f:labels": {"f:x": {}}}})
        );
        assert_eq!(from_fields_v1(&v), set);
    }

    #[test]
    fn leaves_skip_server_metadata_and_status() {
        let o = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "uid": "u", "labels": {"a": "b"}},
                       "spec": {"list": [1, 2], "empty": {}, "s": "x"}, "status": {"y": 1}});
        let l = leaves(&o, Scope::Main { skip_status: true });
        let want: FieldSet = [
            p("metadata.labels.a"),
            p("spec.list"),
            p("spec.empty"),
            p("spec.s"),
        ]
        .into_iter()
        .collect();
        assert_eq!(l, want);
        assert_eq!(
            leaves(&o, Scope::Status),
            [p("status.y")].into_iter().collect()
        );
    }

    #[test]
    fn apply_conflicts_force_and_removal() {
        let scope = Scope::Main { skip_status: true };
        let a1 = json!({"spec": {"x": 1, "y": 2}});
        let (live, e) = apply(&json!({}), &a1, &[], scope, "a", "v1", "t", false).unwrap();
        assert_eq!(live, a1);
        // b conflicts on x, co-owns nothing else
        let b = json!({"spec": {"x": 5, "z": 3}});
        let err = apply(&live, &b, &e, scope, "b", "v1", "t", false).unwrap_err();
        assert_eq!(err, vec![("a".to_string(), "v1".to_string(), p("spec.x"))]);
        let (live, e) = apply(&live, &b, &e, scope, "b", "v1", "t", true).unwrap();
        assert_eq!(live, json!({"spec": {"x": 5, "y": 2, "z": 3}}));
        let a_fields = &e.iter().find(|x| x.manager == "a").unwrap().fields;
        assert_eq!(a_fields, &[p("spec.y")].into_iter().collect::<FieldSet>());
        // a drops y: removed; x stays (b owns it)
        let (live, _) = apply(
            &live,
            &json!({"spec": {}}),
            &e,
            scope,
            "a",
            "v1",
            "t",
            false,
        )
        .unwrap();
        assert_eq!(live, json!({"spec": {"x": 5, "z": 3}}));
    }

    #[test]
    fn update_tracking_takes_changed_fields() {
        let scope = Scope::Main { skip_status: false };
        let old = json!({"spec": {"x": 1, "y": 2}});
        let mut e = Vec::new();
        track_update(&mut e, &json!({}), &old, scope, "creator", "v1", "t");
        let new = json!({"spec": {"x": 9, "y": 2}});
        track_update(&mut e, &old, &new, scope, "editor", "v1", "t");
        let get = |m: &str| e.iter().find(|x| x.manager == m).unwrap().fields.clone();
        assert_eq!(get("creator"), [p("spec.y")].into_iter().collect());
        assert_eq!(get("editor"), [p("spec.x")].into_iter().collect());
        // removing a field un-owns it
        track_update(
            &mut e,
            &new,
            &json!({"spec": {"x": 9}}),
            scope,
            "editor",
            "v1",
            "t",
        );
        assert!(e.iter().all(|x| x.manager != "creator"));
    }
}
