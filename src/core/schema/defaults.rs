//! What the API server does to a custom resource before it validates and stores it: drop the
//! fields the schema does not know (apiextensions `structuralpruning.Prune`), drop the
//! non-nullable nulls that have no default, and fill in the schema's defaults
//! (`structuraldefaulting.Default`, which also defaults inside a value it just defaulted).
//!
//! Used to show a rendered object in its live shape, as `kubectl get -o yaml` would print it.

use serde_json::{Map, Value};

use super::node::{Additional, Node};
use super::{Crd, PathSeg, Schema};

impl Schema {
    /// Prunes unknown fields and applies defaults, in place; returns the paths pruned.
    pub fn default_and_prune(&self, value: &mut Value) -> Vec<Vec<PathSeg>> {
        let mut pruned = Vec::new();
        walk(&self.root, value, None, true, &mut pruned);
        pruned
    }
}

impl Crd {
    /// [`Schema::default_and_prune`] with the schema of the object's served version; None when
    /// the object's apiVersion is not one of this CRD's.
    pub fn default_and_prune(&self, value: &mut Value) -> Option<Vec<Vec<PathSeg>>> {
        let av = value.get("apiVersion")?.as_str()?;
        let (group, version) = av.split_once('/')?;
        if group != self.group {
            return None;
        }
        let v = self.versions.iter().find(|v| v.name == version)?;
        Some(v.schema.default_and_prune(value))
    }
}

/// The top-level fields every resource (and every embedded resource) keeps.
const RESOURCE_META: &[&str] = &["apiVersion", "kind", "metadata"];

/// Where the walk is, borrowed from the value: made into a path only for what is pruned.
#[derive(Clone, Copy)]
struct Crumb<'a> {
    seg: Seg<'a>,
    up: Option<&'a Crumb<'a>>,
}

#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// The path of `key` under `at`.
fn path_of(at: Option<&Crumb<'_>>, key: &str) -> Vec<PathSeg> {
    let mut path = vec![PathSeg::Key(key.to_string())];
    let mut at = at;
    while let Some(c) = at {
        path.push(match c.seg {
            Seg::Key(k) => PathSeg::Key(k.to_string()),
            Seg::Index(i) => PathSeg::Index(i),
        });
        at = c.up;
    }
    path.reverse();
    path
}

fn walk(
    node: &Node,
    value: &mut Value,
    at: Option<&Crumb<'_>>,
    resource: bool,
    pruned: &mut Vec<Vec<PathSeg>>,
) {
    match value {
        Value::Object(map) => object(node, map, at, resource, pruned),
        Value::Array(items) => {
            if let Some(item) = node.items.as_deref() {
                for (i, v) in items.iter_mut().enumerate() {
                    let here = Crumb {
                        seg: Seg::Index(i),
                        up: at,
                    };
                    walk(item, v, Some(&here), item.embedded, pruned);
                }
            }
        }
        _ => {}
    }
}

fn object(
    node: &Node,
    map: &mut Map<String, Value>,
    at: Option<&Crumb<'_>>,
    resource: bool,
    pruned: &mut Vec<Vec<PathSeg>>,
) {
    let keeps_unknown = node.preserve_unknown || matches!(node.additional, Additional::Any);
    // Prune: unknown fields, and non-nullable nulls without a default.
    map.retain(|k, v| {
        if resource && RESOURCE_META.contains(&k.as_str()) {
            return true;
        }
        match node.schema_for_field(k) {
            None if keeps_unknown => true,
            None => {
                pruned.push(path_of(at, k));
                false
            }
            Some(s) => !(v.is_null() && !s.nullable && s.default.is_none()),
        }
    });
    // Default: a missing property (or a non-nullable null) takes its default.
    for (k, prop) in &node.properties {
        let Some(default) = &prop.default else {
            continue;
        };
        let missing = match map.get(k) {
            None => true,
            Some(v) => v.is_null() && !prop.nullable,
        };
        if missing {
            map.insert(k.clone(), default.clone());
        }
    }
    // Recurse into what is there now (defaults included).
    for (k, v) in map.iter_mut() {
        if resource && RESOURCE_META.contains(&k.as_str()) {
            continue;
        }
        if let Some(s) = node.schema_for_field(k) {
            let here = Crumb {
                seg: Seg::Key(k),
                up: at,
            };
            walk(s, v, Some(&here), s.embedded, pruned);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::compile(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "tier": {"type": "integer", "default": 100},
                "name": {"type": "string"},
                "opts": {"type": "object", "default": {}, "properties": {
                    "replace": {"type": "boolean", "default": true},
                    "max": {"type": "integer", "default": 2}}},
                "list": {"type": "array", "items": {"type": "object", "properties": {
                    "action": {"type": "string", "default": "Install"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}))
        .unwrap()
    }

    #[test]
    fn defaults_fill_missing_fields_and_nested_defaults() {
        let mut v = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a"},
            "spec": {"name": "n", "list": [{}, {"action": "Uninstall"}], "opts": {"max": 5}}});
        let pruned = schema().default_and_prune(&mut v);
        assert!(pruned.is_empty());
        assert_eq!(
            v["spec"],
            json!({"name": "n", "list": [{"action": "Install"}, {"action": "Uninstall"}],
                "opts": {"max": 5, "replace": true}, "tier": 100})
        );
        let mut empty = json!({"spec": {}});
        schema().default_and_prune(&mut empty);
        assert_eq!(
            empty["spec"]["opts"],
            json!({"replace": true, "max": 2}),
            "a defaulted object is defaulted inside"
        );
    }

    #[test]
    fn unknown_fields_and_null_are_pruned() {
        let mut v = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "a"},
            "spec": {"nope": 1, "name": null, "tier": null, "free": {"any": 1},
                "labels": {"a": "b"}, "list": [{}, {"bogus": 1, "action": "x"}],
                "opts": {"deep": {"er": 1}}}, "extra": true});
        let pruned = schema().default_and_prune(&mut v);
        let mut shown: Vec<String> = pruned
            .iter()
            .map(|p| super::super::format_path(p))
            .collect();
        shown.sort();
        assert_eq!(
            shown,
            ["extra", "spec.list[1].bogus", "spec.nope", "spec.opts.deep"]
        );
        assert_eq!(v["spec"]["list"][1], json!({"action": "x"}));
        assert_eq!(v["spec"]["tier"], 100);
        assert!(v["spec"].get("name").is_none());
        assert_eq!(v["spec"]["free"], json!({"any": 1}));
        assert_eq!(v["metadata"], json!({"name": "a"}));
    }
}
