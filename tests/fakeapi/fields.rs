//! Field ownership for `metadata.managedFields` (server-side apply and update tracking), as
//! structured-merge-diff and the API server's field manager compute it: an update owns what it
//! added or modified (object nodes it created included), an apply owns its configuration's
//! field set, prunes what it applied last time and no one owns now, and conflicts on the
//! fields other managers own that it adds or modifies; the first apply to an untracked object
//! gives what is there to `before-first-apply`, and an untracked object stays untracked on
//! updates. `tests/ssa_differential.rs` holds this against the real kube-apiserver on
//! generated sequences of writes.
//!
//! Simplification: a field set is a set of paths of object keys; lists are atomic (owned as a
//! whole, as for a CRD list without `x-kubernetes-list-type: map|set`, which is every list of
//! the Flux CRDs), so a list is a leaf. Sets are written in the real `FieldsV1` shape
//! (`{"f:spec":{"f:replicas":{}}}`, with `"."` where a node is owned as well as some of its
//! children) and read back from it.

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

pub fn value_at<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, k| cur.as_object()?.get(k))
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
    /// The manager as the API server names it in a conflict (apiserver's fieldmanager
    /// `printManager`): `"m"`, `"m" with subresource "status"`, and for an update
    /// `"m" using v1`.
    pub fn printed(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if let Some(sub) = &self.subresource {
            s.push_str(&format!(" with subresource {sub:?}"));
        }
        // The managers of a conflict are keyed without their time, so none is printed.
        if self.operation == "Update" {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }

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

/// Where two versions of an object differ, node by node, as structured-merge-diff's
/// `Compare` walks them: an object node (a struct or a map) that appears or goes is added or
/// removed with everything under it; a leaf (a scalar, an atomic list, an empty map) that
/// changes is modified. Server metadata, `apiVersion`, `kind` and what `scope` leaves out are
/// not compared (the API server strips them from every field set).
#[derive(Debug, Default)]
pub struct Comparison {
    pub added: FieldSet,
    pub removed: FieldSet,
    pub modified: FieldSet,
}

impl Comparison {
    /// Added or modified: what a write claims.
    fn changed(&self) -> FieldSet {
        self.added.union(&self.modified).cloned().collect()
    }
}

pub fn compare(old: &Value, new: &Value, scope: Scope) -> Comparison {
    let mut c = Comparison::default();
    for (key, o, n) in top_level(old, new, scope) {
        compare_at(o, n, &mut key.clone(), &mut c);
    }
    c
}

/// The pairs of values a field set covers: the top-level keys in scope, and metadata's keys
/// but the server's (metadata itself is stripped).
fn top_level<'a>(
    old: &'a Value,
    new: &'a Value,
    scope: Scope,
) -> Vec<(Path, Option<&'a Value>, Option<&'a Value>)> {
    let keys = |a: Option<&'a Value>, b: Option<&'a Value>| -> Vec<&'a String> {
        let mut k: BTreeSet<&String> = BTreeSet::new();
        for m in [a, b].into_iter().flatten().filter_map(Value::as_object) {
            k.extend(m.keys());
        }
        k.into_iter().collect()
    };
    let mut out = Vec::new();
    for k in keys(Some(old), Some(new)) {
        let in_scope = match scope {
            Scope::Status => k == "status",
            Scope::Main { skip_status } => !(skip_status && k == "status"),
        };
        if !in_scope || k == "apiVersion" || k == "kind" {
            continue;
        }
        if k == "metadata" {
            let (om, nm) = (old.get("metadata"), new.get("metadata"));
            for mk in keys(om, nm) {
                if !SERVER_META.contains(&mk.as_str()) {
                    out.push((
                        vec!["metadata".to_string(), mk.clone()],
                        om.and_then(|m| m.get(mk)),
                        nm.and_then(|m| m.get(mk)),
                    ));
                }
            }
            continue;
        }
        out.push((vec![k.clone()], old.get(k), new.get(k)));
    }
    out
}

fn compare_at(old: Option<&Value>, new: Option<&Value>, path: &mut Path, c: &mut Comparison) {
    let (om, nm) = (
        old.and_then(Value::as_object),
        new.and_then(Value::as_object),
    );
    let empty_or_none = |v: Option<&Value>, m: Option<&Map<String, Value>>| {
        v.is_none() || m.is_some_and(Map::is_empty)
    };
    // A leaf: a scalar or list, or maps empty (or absent) on both sides.
    if (om.is_none() && nm.is_none()) || (empty_or_none(old, om) && empty_or_none(new, nm)) {
        match (old, new) {
            (None, Some(_)) => {
                c.added.insert(path.clone());
            }
            (Some(_), None) => {
                c.removed.insert(path.clone());
            }
            (Some(a), Some(b)) if a != b => {
                c.modified.insert(path.clone());
            }
            _ => {}
        }
        return;
    }
    if old.is_some() && new.is_some() && (om.is_none() || nm.is_none()) {
        // A scalar became an object, or the other way round.
        c.modified.insert(path.clone());
    }
    let mut keys: BTreeSet<&String> = BTreeSet::new();
    keys.extend(om.into_iter().flat_map(Map::keys));
    keys.extend(nm.into_iter().flat_map(Map::keys));
    for k in keys {
        path.push(k.clone());
        compare_at(
            om.and_then(|m| m.get(k)),
            nm.and_then(|m| m.get(k)),
            path,
            c,
        );
        path.pop();
    }
    match (old, new) {
        (None, Some(_)) => {
            c.added.insert(path.clone());
        }
        (Some(_), None) => {
            c.removed.insert(path.clone());
        }
        _ => {}
    }
}

/// The field set of an applied configuration, as structured-merge-diff's `ToFieldSet` builds
/// it: every leaf (a scalar, a list, a null, an empty map), and every key of a map (`is_map`:
/// keys that are data, not a struct's fields) even when its value is an object.
pub fn applied_set(applied: &Value, scope: Scope, is_map: &dyn Fn(&[String]) -> bool) -> FieldSet {
    let mut out = FieldSet::new();
    for (mut path, _, v) in top_level(&json!({}), applied, scope) {
        if let Some(v) = v {
            applied_at(v, &mut path, is_map, &mut out);
        }
    }
    out
}

fn applied_at(v: &Value, path: &mut Path, is_map: &dyn Fn(&[String]) -> bool, out: &mut FieldSet) {
    match v.as_object() {
        Some(m) if !m.is_empty() => {
            for (k, c) in m {
                path.push(k.clone());
                applied_at(c, path, is_map, out);
                path.pop();
            }
            if is_map(&path[..path.len() - 1]) {
                out.insert(path.clone());
            }
        }
        _ => {
            out.insert(path.clone());
        }
    }
}

/// Ownership after a non-apply write by `manager` (structured-merge-diff's `Update`): it owns
/// what it added or modified, on top of what it owned and is still there; others lose what
/// it changed and what went.
#[allow(clippy::too_many_arguments)]
pub fn track_update(
    entries: &mut Vec<Entry>,
    old: &Value,
    new: &Value,
    scope: Scope,
    manager: &str,
    api_version: &str,
    now: &str,
) {
    let c = compare(old, new, scope);
    let changed = c.changed();
    let sub = matches!(scope, Scope::Status).then_some("status");
    for e in entries.iter_mut() {
        if !e.same_slot(manager, "Update", sub) {
            e.fields
                .retain(|q| !changed.contains(q) && !c.removed.contains(q));
        }
    }
    let idx = entries
        .iter()
        .position(|e| e.same_slot(manager, "Update", sub));
    let mut set: FieldSet = idx
        .map(|i| entries[i].fields.clone())
        .unwrap_or_default()
        .difference(&c.removed)
        .cloned()
        .collect();
    set.extend(changed);
    match idx {
        Some(i) => {
            let e = &mut entries[i];
            if e.fields != set {
                e.time = now.to_string();
            }
            e.fields = set;
            e.api_version = api_version.to_string();
        }
        None if !set.is_empty() => entries.push(Entry {
            manager: manager.to_string(),
            operation: "Update".into(),
            api_version: api_version.to_string(),
            time: now.to_string(),
            subresource: sub.map(str::to_string),
            fields: set,
        }),
        None => {}
    }
    entries.retain(|e| !e.fields.is_empty());
}

/// Whether the object at `path` of an object of this schema (`openAPIV3Schema`, or None for
/// a built-in) holds data keys (a map: labels, annotations, a ConfigMap's data,
/// `additionalProperties`, preserved unknown fields) rather than a struct's fields.
pub fn schema_is_map(schema: Option<&Value>, path: &[String]) -> bool {
    match path {
        [m, f] if m == "metadata" => return f == "labels" || f == "annotations",
        [m, ..] if m == "metadata" => return false,
        _ => {}
    }
    let Some(mut node) = schema else {
        // Built-ins: a ConfigMap's or a Secret's data.
        return matches!(path, [d] if d == "data" || d == "binaryData" || d == "stringData");
    };
    for seg in path {
        let props = node.get("properties").and_then(Value::as_object);
        if let Some(next) = props.and_then(|p| p.get(seg)) {
            node = next;
        } else if let Some(next) = node.get("additionalProperties").filter(|a| a.is_object()) {
            node = next;
        } else if node.get("items").is_some() {
            return false;
        } else {
            // Preserved unknown fields (or no schema below): untyped, maps all the way.
            return props.is_none();
        }
    }
    node.get("properties").is_none()
}

/// A field another manager owns: how the API server names that manager (see [`Entry::printed`])
/// and the path.
pub type Conflict = (String, Path);

/// Server-side apply of `applied` by `manager` onto `live` (the empty object when creating),
/// in structured-merge-diff's order: merge, take the applied field set, prune what this
/// manager applied last time and no one owns now, then find the conflicts: the fields other
/// managers own that the merge added or modified. Returns the merged object and the new
/// entries, or the conflicts when not forced.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    live: &Value,
    applied: &Value,
    entries: &[Entry],
    scope: Scope,
    is_map: &dyn Fn(&[String]) -> bool,
    manager: &str,
    api_version: &str,
    now: &str,
    force: bool,
) -> Result<(Value, Vec<Entry>), Vec<Conflict>> {
    let sub = matches!(scope, Scope::Status).then_some("status");
    let mut entries = entries.to_vec();

    // The merge: everything applied in scope, maps key by key, anything else replaced.
    let mut merged = if live.is_null() {
        json!({})
    } else {
        live.clone()
    };
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

    // The applier's field set, replacing its last one.
    let new_set = applied_set(applied, scope, is_map);
    let mine = entries
        .iter()
        .position(|e| e.same_slot(manager, "Apply", sub));
    let last = mine.map(|i| entries[i].fields.clone());
    match mine {
        Some(i) => {
            entries[i].fields = new_set.clone();
            entries[i].time = now.to_string();
            entries[i].api_version = api_version.to_string();
        }
        None => entries.push(Entry {
            manager: manager.to_string(),
            operation: "Apply".into(),
            api_version: api_version.to_string(),
            time: now.to_string(),
            subresource: sub.map(str::to_string),
            fields: new_set.clone(),
        }),
    }

    // Pruning: what it applied last time and not now goes, unless some manager (this one's
    // new set included) owns it or something under it.
    if let Some(last) = last {
        let owned: FieldSet = entries
            .iter()
            .flat_map(|e| e.fields.iter().cloned())
            .collect();
        let held = |r: &[String]| owned.iter().any(|q| q.starts_with(r));
        for r in last.difference(&new_set) {
            if !held(r) {
                remove_at(&mut merged, r, &held);
            }
        }
    }

    // Conflicts: other managers' fields that this apply adds or modifies.
    let c = compare(live, &merged, scope);
    let changed = c.changed();
    let mut conflicts: Vec<(usize, String, Path)> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if e.same_slot(manager, "Apply", sub) {
            continue;
        }
        for q in e.fields.intersection(&changed) {
            conflicts.push((i, e.printed(), q.clone()));
        }
    }
    if !conflicts.is_empty() && !force {
        conflicts.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| set_order(&a.2, &b.2)));
        return Err(conflicts.into_iter().map(|(_, m, p)| (m, p)).collect());
    }
    for (i, e) in entries.iter_mut().enumerate() {
        if e.same_slot(manager, "Apply", sub) {
            continue;
        }
        e.fields.retain(|q| !c.removed.contains(q));
        for (j, _, q) in &conflicts {
            if *j == i {
                e.fields.remove(q);
            }
        }
    }
    entries.retain(|e| !e.fields.is_empty());
    Ok((merged, entries))
}

/// The order in which structured-merge-diff iterates a field set: at each level the members
/// (the paths that end there) before the children, each by name.
pub fn set_order(a: &[String], b: &[String]) -> std::cmp::Ordering {
    for i in 0..a.len().min(b.len()) {
        let key = |p: &[String]| (p.len() != i + 1, p[i].clone());
        match key(a).cmp(&key(b)) {
            std::cmp::Ordering::Equal => continue,
            other => return other,
        }
    }
    a.len().cmp(&b.len())
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
    fn an_applied_set_skips_server_metadata_and_status_and_holds_map_keys() {
        let o = json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n", "uid": "u", "labels": {"a": "b"}},
                       "spec": {"list": [1, 2], "empty": {}, "s": "x", "m": {"k": {"x": 1}}},
                       "status": {"y": 1}});
        // `spec.m` holds data keys: its key `k` is a member though its value is an object.
        let is_map = |p: &[String]| p == ["spec".to_string(), "m".to_string()];
        let l = applied_set(&o, Scope::Main { skip_status: true }, &is_map);
        let want: FieldSet = [
            p("metadata.labels.a"),
            p("spec.list"),
            p("spec.empty"),
            p("spec.s"),
            p("spec.m.k"),
            p("spec.m.k.x"),
        ]
        .into_iter()
        .collect();
        assert_eq!(l, want);
        assert_eq!(
            applied_set(&o, Scope::Status, &is_map),
            [p("status.y")].into_iter().collect()
        );
    }

    #[test]
    fn apply_conflicts_force_and_removal() {
        let scope = Scope::Main { skip_status: true };
        let a1 = json!({"spec": {"x": 1, "y": 2}});
        let (live, e) = apply(
            &json!({}),
            &a1,
            &[],
            scope,
            &|_| false,
            "a",
            "v1",
            "t",
            false,
        )
        .unwrap();
        assert_eq!(live, a1);
        // b conflicts on x, co-owns nothing else
        let b = json!({"spec": {"x": 5, "z": 3}});
        let err = apply(&live, &b, &e, scope, &|_| false, "b", "v1", "t", false).unwrap_err();
        assert_eq!(err, vec![("\"a\"".to_string(), p("spec.x"))]);
        let (live, e) = apply(&live, &b, &e, scope, &|_| false, "b", "v1", "t", true).unwrap();
        assert_eq!(live, json!({"spec": {"x": 5, "y": 2, "z": 3}}));
        let a_fields = &e.iter().find(|x| x.manager == "a").unwrap().fields;
        assert_eq!(a_fields, &[p("spec.y")].into_iter().collect::<FieldSet>());
        // a drops y: removed; x stays (b owns it)
        let (live, _) = apply(
            &live,
            &json!({"spec": {}}),
            &e,
            scope,
            &|_| false,
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
        // The creator made `spec` (an object node, `"."`) and its fields; the editor takes
        // what it changed.
        assert_eq!(
            get("creator"),
            [p("spec"), p("spec.y")].into_iter().collect()
        );
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
        // (It still owns `spec`, which is still there.)
        let creator = e.iter().find(|x| x.manager == "creator").unwrap();
        assert_eq!(creator.fields, [p("spec")].into_iter().collect());
    }
}
