//! Kubernetes objects read from YAML/JSON sources: multi-document streams, `kind: List`
//! (and `<Kind>List`) expanded into items, each object kept with its YAML node for spans.

use std::sync::Arc;

use serde_json::Value;

pub use crate::api::ObjectId;
use crate::api::meta::str_at;
use crate::diag::yaml::{self, Node};
use crate::diag::{Diagnostic, Source};

/// Codes of the problems found while loading (shared by every subcommand).
pub const CODE_SYNTAX: &str = "KSM001";

/// Where a Secret keeps what must never be shown: its `data` and `stringData`, and the
/// last-applied annotation that `kubectl apply` writes with a copy of them.
pub const SECRET_DATA_PATHS: &[&[&str]] = &[
    &["data"],
    &["stringData"],
    &[
        "metadata",
        "annotations",
        "kubectl.kubernetes.io/last-applied-configuration",
    ],
];

/// Whether an object is a core `v1` Secret.
pub fn is_secret(object: &serde_json::Value) -> bool {
    object.get("kind").and_then(serde_json::Value::as_str) == Some("Secret")
        && object.get("apiVersion").and_then(serde_json::Value::as_str) == Some("v1")
}
pub const CODE_NOT_OBJECT: &str = "KSM002";

/// One object of a source.
#[derive(Debug, Clone)]
pub struct LoadedObject {
    pub source: Arc<Source>,
    /// 0-based document index in the source.
    pub document: usize,
    /// Index in the `items` of a List, if it came from one.
    pub item: Option<usize>,
    pub node: Node,
    pub json: Value,
}

impl LoadedObject {
    pub fn id(&self) -> ObjectId {
        ObjectId::of(&self.json)
    }

    pub fn kind(&self) -> &str {
        str_at(&self.json, "/kind")
    }
}

/// What a source held.
#[derive(Debug, Default)]
pub struct Loaded {
    pub objects: Vec<LoadedObject>,
    /// Documents read (empty ones included).
    pub documents: usize,
    /// Syntax errors and documents that are not objects. A syntax error means the rest of
    /// the source could not be read.
    pub diagnostics: Vec<Diagnostic>,
    pub syntax_error: bool,
}

/// Parses every document of `source` into objects, keeping their YAML nodes (for spans).
pub fn load(source: &Arc<Source>, limits: &yaml::Limits) -> Loaded {
    let mut objects = Vec::new();
    let mut loaded = for_each_object(source, limits, true, &mut |o| objects.push(o));
    loaded.objects = objects;
    loaded
}

/// Loads objects for evaluation: the JSON only (YAML nodes are not kept, which halves the
/// memory), with a budget on the whole file since every object is kept.
pub fn load_values(source: &Arc<Source>) -> Loaded {
    let limits = yaml::Limits {
        max_total_nodes: 1_000_000,
        ..yaml::Limits::default()
    };
    let mut objects = Vec::new();
    let mut loaded = for_each_object(source, &limits, false, &mut |o| objects.push(o));
    loaded.objects = objects;
    loaded
}

/// Streams the objects of `source` to `f`, one document at a time. The returned [`Loaded`]
/// has the counts and diagnostics (its `objects` is empty). Without `keep_nodes`, each
/// object's `node` is an empty mapping with the object's span.
pub fn for_each_object(
    source: &Arc<Source>,
    limits: &yaml::Limits,
    keep_nodes: bool,
    f: &mut dyn FnMut(LoadedObject),
) -> Loaded {
    let mut loaded = Loaded::default();
    let err = yaml::for_each_document(source, limits, &mut |doc| {
        loaded.documents += 1;
        let Some(root) = doc.root else { return };
        let json = match root.to_json(limits) {
            Ok(j) => j,
            Err(e) => {
                loaded.diagnostics.push(
                    Diagnostic::error(CODE_SYNTAX, e.message)
                        .at(source, source.first_line(e.offset..e.offset + 1))
                        .help(
                            "simplify the document: anchors and aliases must not multiply its size",
                        ),
                );
                loaded.syntax_error = true;
                return;
            }
        };
        let mut objects = Vec::new();
        push_objects(
            source,
            doc.index,
            root,
            json,
            &mut objects,
            &mut loaded.diagnostics,
        );
        for mut o in objects {
            if !keep_nodes {
                o.node = Node {
                    kind: yaml::NodeKind::Map(Vec::new()),
                    span: o.node.span.clone(),
                };
            }
            f(o);
        }
    });
    if let Some(e) = err {
        loaded.documents += 1;
        loaded.syntax_error = true;
        loaded.diagnostics.push(
            Diagnostic::error(CODE_SYNTAX, format!("invalid YAML: {}", e.message))
                .at(source, e.offset..e.offset + 1)
                .help("fix the error; nothing after it in this file was read"),
        );
    }
    loaded
}

fn push_objects(
    source: &Arc<Source>,
    document: usize,
    root: Node,
    json: Value,
    objects: &mut Vec<LoadedObject>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Value::Object(map) = &json else {
        diagnostics.push(
            Diagnostic::error(
                CODE_NOT_OBJECT,
                format!(
                    "document {} is a {}, not a Kubernetes object",
                    document + 1,
                    root.type_name()
                ),
            )
            .at(source, source.first_line(root.span.clone()))
            .help("a manifest document must be a mapping with apiVersion, kind and metadata"),
        );
        return;
    };
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    if is_list_kind(kind)
        && let (Some(Value::Array(items)), Some(items_node)) = (map.get("items"), root.get("items"))
    {
        let nodes = items_node.as_seq().unwrap_or_default();
        for (i, (item, node)) in items.iter().zip(nodes).enumerate() {
            let node = node.resolved().clone();
            if !item.is_object() {
                diagnostics.push(
                    Diagnostic::error(
                        CODE_NOT_OBJECT,
                        format!(
                            "item {i} of the {kind} is a {}, not an object",
                            node.type_name()
                        ),
                    )
                    .at(source, node.span.clone()),
                );
                continue;
            }
            objects.push(LoadedObject {
                source: Arc::clone(source),
                document,
                item: Some(i),
                node,
                json: item.clone(),
            });
        }
        return;
    }
    for field in ["apiVersion", "kind"] {
        if map
            .get(field)
            .is_none_or(|v| v.as_str().is_none_or(|s| s.is_empty()))
        {
            let span = root
                .entry(field)
                .map_or(root.span.start..root.span.start + 1, |(k, v)| {
                    k.span.start..v.span.end
                });
            diagnostics.push(
                Diagnostic::error(CODE_NOT_OBJECT, format!("object has no {field}"))
                    .at(source, span)
                    .help(format!(
                        "set `{field}`: every Kubernetes object needs apiVersion and kind"
                    )),
            );
            return;
        }
    }
    objects.push(LoadedObject {
        source: Arc::clone(source),
        document,
        item: None,
        node: root,
        json,
    });
}

/// `List` and `<Kind>List` (as `kubectl get -o yaml` writes them) hold their objects in `items`.
fn is_list_kind(kind: &str) -> bool {
    kind == "List" || (kind.len() > 4 && kind.ends_with("List"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_str(text: &str) -> Loaded {
        load(&Source::new("t.yaml", text), &yaml::Limits::default())
    }

    #[test]
    fn expands_lists_and_keeps_item_nodes() {
        let l = load_str(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b, namespace: x}\n",
        );
        assert_eq!(l.objects.len(), 2);
        assert_eq!(l.objects[1].id().to_string(), "ConfigMap/x/b");
        assert_eq!(l.objects[1].item, Some(1));
        let src = &l.objects[1].source;
        assert_eq!(src.line_col(l.objects[1].node.span.start).line, 7);
    }

    #[test]
    fn reports_documents_that_are_not_objects() {
        let l = load_str("- a\n---\njust text\n---\nkind: X\n");
        assert_eq!(l.objects.len(), 0);
        let msgs: Vec<_> = l.diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            msgs,
            [
                "document 1 is a sequence, not a Kubernetes object",
                "document 2 is a string, not a Kubernetes object",
                "object has no apiVersion"
            ]
        );
    }

    #[test]
    fn syntax_error_is_a_diagnostic_with_position() {
        let l = load_str("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [}\n");
        assert!(l.syntax_error);
        let (start, _) = l.diagnostics[0].position().unwrap();
        assert_eq!(start.line, 3);
    }
}
