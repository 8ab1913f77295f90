//! What every object has: its identity ([`ObjectId`]), and a borrowed view of its metadata
//! and status conditions ([`Object`]).
//!
//! Views borrow the JSON: the object stays exactly as read (unknown fields included) for the
//! code that writes it back or prints it, and reading a field costs what the lookup costs.
//! Accessors of a malformed object give the empty value of their type, never a panic; code
//! that must reject malformed input (kcm's derivation) decodes strictly instead.

use std::fmt;

use serde_json::{Map, Value};

// The pointer helpers stay inside `api`: every other room reads a field through a view
// (ARCHITECTURE.md, "No room reads a Kubernetes object's fields except through a view").

/// [`Value::pointer`] without its cost: it allocates a string per token of the pointer
/// (to undo `~` escapes), and the views read fields through pointers on every object of a
/// fleet. Same results, escapes included.
pub(in crate::api) trait At {
    /// The value at a JSON pointer (RFC 6901).
    fn at(&self, pointer: &str) -> Option<&Value>;
}

impl At for Value {
    fn at(&self, pointer: &str) -> Option<&Value> {
        if pointer.contains('~') {
            return self.pointer(pointer);
        }
        if pointer.is_empty() {
            return Some(self);
        }
        pointer
            .strip_prefix('/')?
            .split('/')
            .try_fold(self, |v, token| match v {
                Value::Object(m) => field(m, token),
                // An index as serde_json reads one: no sign, no leading zero.
                Value::Array(a)
                    if !token.starts_with('+') && (token == "0" || !token.starts_with('0')) =>
                {
                    token.parse::<usize>().ok().and_then(|i| a.get(i))
                }
                _ => None,
            })
    }
}

/// The member `key` of an object. The maps of Kubernetes objects are small: comparing a
/// few keys (their lengths first) costs less than hashing `key` with the map's SipHash and
/// probing its table, which is another allocation away.
fn field<'a>(map: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a Value> {
    if map.len() <= SCANNED_FIELDS {
        map.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        map.get(key)
    }
}

/// Up to how many members an object's member is found by comparing keys.
const SCANNED_FIELDS: usize = 16;

/// The string at a JSON pointer, or "" (absent, null, or not a string).
pub(in crate::api) fn str_at<'a>(v: &'a Value, pointer: &str) -> &'a str {
    opt_str_at(v, pointer).unwrap_or("")
}

/// The string at a JSON pointer, if there is one.
pub(in crate::api) fn opt_str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.at(pointer).and_then(Value::as_str)
}

/// The bool at a JSON pointer, if it is one.
pub(in crate::api) fn bool_at(v: &Value, pointer: &str) -> Option<bool> {
    v.at(pointer).and_then(Value::as_bool)
}

/// The integer at a JSON pointer, if it is one.
pub(in crate::api) fn i64_at(v: &Value, pointer: &str) -> Option<i64> {
    v.at(pointer).and_then(Value::as_i64)
}

/// The items of the list at a JSON pointer (none when absent or not a list).
pub(in crate::api) fn items_at<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
    v.at(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The namespace of a namespaced object that names none.
pub const DEFAULT_NAMESPACE: &str = "default";

/// `namespace`, or [`DEFAULT_NAMESPACE`] when empty.
pub fn or_default_namespace(namespace: &str) -> &str {
    match namespace {
        "" => DEFAULT_NAMESPACE,
        n => n,
    }
}

/// apiVersion, kind, namespace and name of an object.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectId {
    pub api_version: String,
    pub kind: String,
    #[serde(serialize_with = "empty_as_null")]
    pub namespace: String,
    pub name: String,
}

fn empty_as_null<S: serde::Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
    if v.is_empty() {
        s.serialize_none()
    } else {
        s.serialize_str(v)
    }
}

impl ObjectId {
    pub fn of(json: &Value) -> ObjectId {
        ObjectId {
            api_version: str_at(json, "/apiVersion").to_string(),
            kind: str_at(json, "/kind").to_string(),
            namespace: str_at(json, "/metadata/namespace").to_string(),
            name: str_at(json, "/metadata/name").to_string(),
        }
    }

    /// The id of an object of `kind` that may not exist.
    pub fn new(kind: &super::Kind, namespace: &str, name: &str) -> ObjectId {
        ObjectId {
            api_version: kind.api_version.into(),
            kind: kind.kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }

    /// The API group (empty for the core group).
    pub fn group(&self) -> &str {
        super::kinds::group_of(&self.api_version)
    }
}

impl fmt::Display for ObjectId {
    /// `Kind/namespace/name` (or `Kind/name` for cluster-scoped objects), as kubectl prints them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.kind.is_empty() {
            "<no kind>"
        } else {
            &self.kind
        };
        if self.namespace.is_empty() {
            write!(f, "{kind}/{}", self.name)
        } else {
            write!(f, "{kind}/{}/{}", self.namespace, self.name)
        }
    }
}

/// A borrowed view of any Kubernetes object.
#[derive(Debug, Clone, Copy)]
pub struct Object<'a>(pub &'a Value);

impl<'a> Object<'a> {
    pub fn json(self) -> &'a Value {
        self.0
    }

    pub fn api_version(self) -> &'a str {
        str_at(self.0, "/apiVersion")
    }

    pub fn kind(self) -> &'a str {
        str_at(self.0, "/kind")
    }

    pub fn name(self) -> &'a str {
        str_at(self.0, "/metadata/name")
    }

    pub fn namespace(self) -> &'a str {
        str_at(self.0, "/metadata/namespace")
    }

    /// The namespace the API server puts a namespaced object in: `metadata.namespace`, or
    /// [`DEFAULT_NAMESPACE`] when it has none.
    pub fn namespace_or_default(self) -> &'a str {
        or_default_namespace(self.namespace())
    }

    pub fn uid(self) -> &'a str {
        str_at(self.0, "/metadata/uid")
    }

    /// `metadata.name` when it is set (possibly empty).
    pub fn name_if_set(self) -> Option<&'a str> {
        self.0.at("/metadata/name").and_then(Value::as_str)
    }

    /// `metadata.uid` when it is set (possibly empty).
    pub fn uid_if_set(self) -> Option<&'a str> {
        self.0.at("/metadata/uid").and_then(Value::as_str)
    }

    pub fn resource_version(self) -> &'a str {
        str_at(self.0, "/metadata/resourceVersion")
    }

    pub fn generation(self) -> Option<i64> {
        self.0.at("/metadata/generation").and_then(Value::as_i64)
    }

    pub fn id(self) -> ObjectId {
        ObjectId::of(self.0)
    }

    /// The object as the API server serves it at another version of its group that its CRD
    /// serves, without a conversion webhook: the same fields under that apiVersion (the one
    /// field the server sets to the version asked for).
    pub fn served_at(self, api_version: &str) -> Value {
        let mut v = self.0.clone();
        if let Some(m) = v.as_object_mut() {
            m.insert("apiVersion".into(), Value::from(api_version));
        }
        v
    }

    /// `Kind/namespace/name`.
    pub fn display(self) -> String {
        self.id().to_string()
    }

    /// `metadata.labels` (null when absent).
    pub fn labels(self) -> &'a Value {
        self.0.at("/metadata/labels").unwrap_or(&Value::Null)
    }

    /// The value of a label, or "".
    pub fn label(self, key: &str) -> &'a str {
        self.0
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(|l| l.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    pub fn has_annotation(self, key: &str) -> bool {
        self.0
            .at("/metadata/annotations")
            .and_then(Value::as_object)
            .is_some_and(|a| a.contains_key(key))
    }

    /// `metadata.deletionTimestamp` is set (not null, not empty).
    pub fn is_deleting(self) -> bool {
        self.0
            .at("/metadata/deletionTimestamp")
            .is_some_and(|v| !v.is_null() && v.as_str() != Some(""))
    }

    pub fn finalizers(self) -> &'a [Value] {
        items_at(self.0, "/metadata/finalizers")
    }

    pub fn has_finalizer(self, finalizer: &str) -> bool {
        self.finalizers()
            .iter()
            .any(|f| f.as_str() == Some(finalizer))
    }

    /// Whether a controller ownerReference names `uid` (an empty uid controls nothing).
    pub fn is_controlled_by(self, uid: &str) -> bool {
        !uid.is_empty()
            && items_at(self.0, "/metadata/ownerReferences")
                .iter()
                .any(|r| {
                    r.get("controller").and_then(Value::as_bool) == Some(true)
                        && str_at(r, "/uid") == uid
                })
    }

    /// The controller ownerReference, if any.
    pub fn controller(self) -> Option<&'a Value> {
        items_at(self.0, "/metadata/ownerReferences")
            .iter()
            .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
    }

    /// `metadata.creationTimestamp` ("" when absent).
    pub fn creation_timestamp(self) -> &'a str {
        str_at(self.0, "/metadata/creationTimestamp")
    }

    /// `metadata` (None when absent).
    pub fn metadata(self) -> Option<&'a Value> {
        self.0.get("metadata")
    }

    /// `metadata.annotations` when it is a map.
    pub fn annotations(self) -> Option<&'a Map<String, Value>> {
        self.0
            .at("/metadata/annotations")
            .and_then(Value::as_object)
    }

    /// A label is set (whatever its value).
    pub fn has_label(self, key: &str) -> bool {
        self.labels().get(key).is_some()
    }

    /// `metadata.ownerReferences[]`.
    pub fn owner_references(self) -> impl Iterator<Item = ObjectRef<'a>> {
        items_at(self.0, "/metadata/ownerReferences")
            .iter()
            .map(ObjectRef)
    }

    /// `metadata.managedFields[]` (None when absent or not a list).
    pub fn managed_fields(self) -> Option<&'a [Value]> {
        self.0
            .at("/metadata/managedFields")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
    }

    /// `spec` (None when absent).
    pub fn spec(self) -> Option<&'a Value> {
        self.0.get("spec")
    }

    /// `status` (None when absent).
    pub fn status(self) -> Option<&'a Value> {
        self.0.get("status")
    }

    /// `data.<key>` of a ConfigMap (or Secret) when it is a string.
    pub fn data_str(self, key: &str) -> Option<&'a str> {
        self.0
            .get("data")
            .and_then(|d| d.get(key))
            .and_then(Value::as_str)
    }

    pub fn observed_generation(self) -> Option<i64> {
        self.0
            .at("/status/observedGeneration")
            .and_then(Value::as_i64)
    }

    /// `status.conditions`.
    pub fn conditions(self) -> impl Iterator<Item = Condition<'a>> {
        items_at(self.0, "/status/conditions").iter().map(Condition)
    }

    /// The condition of a type.
    pub fn condition(self, type_: &str) -> Option<Condition<'a>> {
        self.conditions().find(|c| c.type_() == type_)
    }
}

/// A borrowed view of one `metav1.Condition`.
#[derive(Debug, Clone, Copy)]
pub struct Condition<'a>(pub &'a Value);

impl<'a> Condition<'a> {
    pub fn type_(self) -> &'a str {
        str_at(self.0, "/type")
    }
    pub fn status(self) -> &'a str {
        str_at(self.0, "/status")
    }
    pub fn reason(self) -> &'a str {
        str_at(self.0, "/reason")
    }
    pub fn message(self) -> &'a str {
        str_at(self.0, "/message")
    }
    pub fn last_transition_time(self) -> &'a str {
        str_at(self.0, "/lastTransitionTime")
    }
    pub fn observed_generation(self) -> Option<i64> {
        self.0.get("observedGeneration").and_then(Value::as_i64)
    }
    /// `status` when it is set (possibly empty).
    pub fn status_if_set(self) -> Option<&'a str> {
        opt_str_at(self.0, "/status")
    }
}

/// A borrowed view of a reference to an object: `kind`, `name`, `namespace`, `apiVersion`
/// (a `valuesFrom` entry, a source's `secretRef`, an `ownerReferences` entry, a service's
/// `dependsOn` entry, a template's `status.sourceStatus`...). Absent fields read as "".
#[derive(Debug, Clone, Copy)]
pub struct ObjectRef<'a>(pub &'a Value);

impl<'a> ObjectRef<'a> {
    pub fn json(self) -> &'a Value {
        self.0
    }
    pub fn api_version(self) -> &'a str {
        str_at(self.0, "/apiVersion")
    }
    pub fn kind(self) -> &'a str {
        str_at(self.0, "/kind")
    }
    pub fn name(self) -> &'a str {
        str_at(self.0, "/name")
    }
    pub fn namespace(self) -> &'a str {
        str_at(self.0, "/namespace")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn at_finds_what_pointer_finds() {
        let v = json!({"a": {"b/c": 1, "d~e": 2, "": 3, "l": [10, 11, {"x": 12}], "0": 4}});
        for p in [
            "", "/", "/a", "/a/b~1c", "/a/d~0e", "/a/", "/a/l/0", "/a/l/1", "/a/l/2/x", "/a/l/01",
            "/a/l/+1", "/a/l/-1", "/a/l/3", "/a/0", "/a/l/x", "a", "/a/b/c", "/z",
        ] {
            assert_eq!(v.at(p), v.pointer(p), "{p:?}");
        }
        // Objects small enough to scan and large enough to hash, keys of one length
        // included.
        for size in [0, 1, SCANNED_FIELDS, SCANNED_FIELDS + 1, 40] {
            let v = Value::Object((0..size).map(|i| (format!("k{i:02}"), json!(i))).collect());
            for i in 0..=size {
                let p = format!("/k{i:02}");
                assert_eq!(v.at(&p), v.pointer(&p), "{size}: {p:?}");
            }
            assert_eq!(v.at("/k"), None);
        }
    }

    #[test]
    fn object_id_groups_and_display() {
        let id = ObjectId::of(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "a", "namespace": "x"}}));
        assert_eq!(id.group(), "apps");
        assert_eq!(id.to_string(), "Deployment/x/a");
        let id = ObjectId::of(&json!({"apiVersion": "v1"}));
        assert_eq!(id.group(), "");
        assert_eq!(id.to_string(), "<no kind>/");
    }

    #[test]
    fn metadata_of_well_formed_and_malformed_objects() {
        let o = json!({"metadata": {"name": "a", "labels": {"k": "v"}, "annotations": {"p": ""},
            "finalizers": ["f"], "deletionTimestamp": null, "generation": 3,
            "ownerReferences": [{"uid": "u", "controller": true}]},
            "status": {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 3}]}});
        let v = Object(&o);
        assert_eq!((v.name(), v.label("k"), v.label("x")), ("a", "v", ""));
        assert!(v.has_annotation("p") && v.has_finalizer("f") && !v.is_deleting());
        assert!(v.is_controlled_by("u") && !v.is_controlled_by("") && !v.is_controlled_by("w"));
        assert_eq!(v.generation(), Some(3));
        assert_eq!(v.condition("Ready").map(|c| c.status()), Some("True"));
        assert_eq!(
            v.condition("Ready").and_then(|c| c.observed_generation()),
            Some(3)
        );
        let bad = json!({"metadata": [1], "status": "x"});
        let v = Object(&bad);
        assert_eq!((v.name(), v.label("k")), ("", ""));
        assert!(v.finalizers().is_empty() && v.condition("Ready").is_none());
        assert!(v.labels().is_null());
        assert!(v.annotations().is_none() && v.managed_fields().is_none());
        assert_eq!(
            (v.creation_timestamp(), v.owner_references().count()),
            ("", 0)
        );
        assert_eq!((v.data_str("k"), v.spec()), (None, None));
    }

    #[test]
    fn references_data_and_managed_fields() {
        let o = json!({"metadata": {"labels": {"k": ""}, "annotations": {"a": "b"},
            "creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": [{"manager": "m"}],
            "ownerReferences": [{"kind": "ServiceSet", "name": "s"}, "x"]},
            "data": {"rules": "r", "n": 1}});
        let v = Object(&o);
        assert!(v.has_label("k") && !v.has_label("x"));
        assert_eq!(v.annotations().map(|a| a.len()), Some(1));
        assert_eq!(v.creation_timestamp(), "2026-01-01T00:00:00Z");
        assert_eq!(v.managed_fields().map(<[Value]>::len), Some(1));
        let owners: Vec<_> = v.owner_references().map(|r| (r.kind(), r.name())).collect();
        assert_eq!(owners, [("ServiceSet", "s"), ("", "")]);
        assert_eq!((v.data_str("rules"), v.data_str("n")), (Some("r"), None));
        let c = json!({"type": "Ready"});
        assert_eq!(
            (Condition(&c).status_if_set(), Condition(&c).status()),
            (None, "")
        );
    }
}
