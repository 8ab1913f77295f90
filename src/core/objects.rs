//! Kubernetes objects read from YAML/JSON sources: multi-document streams, `kind: List`
//! (and `<Kind>List`, Lists inside Lists) expanded into items, each object kept with its YAML
//! node for spans. Loading marks the values of Secrets hidden in their source.

use std::sync::Arc;

use serde_json::Value;

pub use crate::api::ObjectId;
use crate::api::meta::Object;
use crate::core::secret;
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
        Object(&self.json).kind()
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

/// YAML nodes a file may hold when every object of it is kept (what `eval`, `check`,
/// `render` and `doctor --from` read): a 10 MB dump of 5,000 objects holds about 600,000, a
/// 10 MB file of 20,000 small manifests about 800,000. Converted to JSON, a node costs
/// about 75 bytes when nothing else is kept (a file of tiny scalars).
pub const MAX_FILE_NODES: usize = 1_500_000;

/// Objects a file may hold when every one is kept. Each costs about 1 KiB beyond its nodes
/// (its JSON maps, its place in indexes and reports): 10 MB of tiny objects would be 220,000
/// of them and take half a gigabyte.
pub const MAX_FILE_OBJECTS: usize = 50_000;

/// Parses every document of `source` into objects, keeping their YAML nodes (for spans).
pub fn load(source: &Arc<Source>, limits: &yaml::Limits) -> Loaded {
    let mut objects = Vec::new();
    let mut loaded = for_each_object(source, limits, true, &mut |o| objects.push(o));
    loaded.objects = objects;
    loaded
}

/// Loads objects for evaluation: the JSON only (YAML nodes are not kept, which halves the
/// memory), with budgets on the whole file since every object is kept: nodes, and objects
/// ([`MAX_FILE_NODES`], [`MAX_FILE_OBJECTS`]). A document keeps the loader's own limit
/// (its node tree and its JSON are alive together while it is converted); a 10 MB dump
/// (`kubectl get ... -o yaml`), one List document, is within it. Past the object budget,
/// the objects are not kept and the first one left out is an error.
pub fn load_values(source: &Arc<Source>) -> Loaded {
    let limits = yaml::Limits {
        max_total_nodes: MAX_FILE_NODES,
        ..yaml::Limits::default()
    };
    let mut objects = Vec::new();
    let mut refused = None;
    let mut loaded = for_each_object(source, &limits, false, &mut |o| {
        if objects.len() < MAX_FILE_OBJECTS {
            objects.push(o);
        } else if refused.is_none() {
            refused = Some(o.node.span.clone());
        }
    });
    if let Some(span) = refused {
        loaded.diagnostics.insert(
            0,
            Diagnostic::error(
                CODE_SYNTAX,
                format!(
                    "the file holds more than {MAX_FILE_OBJECTS} objects: refusing to load it \
                     (the limit bounds memory; split the file)"
                ),
            )
            .at(source, source.first_line(span)),
        );
        loaded.syntax_error = true;
        objects.clear();
    }
    loaded.objects = objects;
    loaded
}

/// Streams the objects of `source` to `f`, one document at a time. The returned [`Loaded`]
/// has the counts and diagnostics (its `objects` is empty). Without `keep_nodes`, each
/// object's `node` is an empty mapping with the object's span.
///
/// The values of Secrets (in lists at any depth) are marked hidden in `source`, so that no
/// excerpt shows them; a document that cannot be parsed and names a Secret has all its
/// values hidden.
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
        for span in secret::secret_spans(&root) {
            source.hide(span);
        }
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
        push_objects(source, doc.index, root, json, keep_nodes, &mut loaded, f);
    });
    if let Some(e) = err {
        hide_unparsed(source, e.offset);
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

/// The document around a syntax error is not known object by object: if its text names a
/// Secret, every value in it is hidden (from its start to the next document, or the end).
fn hide_unparsed(source: &Source, offset: usize) {
    let text = source.text();
    let offset = offset.min(text.len());
    let is_marker = |line: &str| line.starts_with("---") || line.starts_with("...");
    let start = text[..offset]
        .rmatch_indices('\n')
        .map(|(i, _)| i + 1)
        .find(|&i| is_marker(&text[i..]))
        .unwrap_or(0);
    let end = text[offset..]
        .match_indices('\n')
        .map(|(i, _)| offset + i + 1)
        .find(|&i| is_marker(&text[i..]))
        .unwrap_or(text.len());
    if secret::text_may_hold_secret(&text[start..end]) {
        for span in secret::unparsed_value_spans(text, start..end) {
            source.hide(span);
        }
    }
}

/// Hands the objects of one document to `f`: the document itself, or the items of a List
/// (`kind: List` or `<Kind>List`), Lists inside Lists flattened as kubectl does. Nodes and
/// values are moved, not copied.
fn push_objects(
    source: &Arc<Source>,
    document: usize,
    root: Node,
    json: Value,
    keep_nodes: bool,
    loaded: &mut Loaded,
    f: &mut dyn FnMut(LoadedObject),
) {
    let Value::Object(_) = &json else {
        loaded.diagnostics.push(
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
    // (node, value, index in its list) still to hand out or expand.
    let mut work = vec![(root, json, None)];
    while let Some((node, mut json, item)) = work.pop() {
        let kind = json.get("kind").and_then(Value::as_str).unwrap_or("");
        if secret::is_list_kind(kind)
            && matches!(json.get("items"), Some(Value::Array(_)))
            && node.get("items").and_then(Node::as_seq).is_some()
        {
            let kind = kind.to_string();
            // The API server leaves apiVersion and kind out of the items of a `<Kind>List`.
            let item_type = kind
                .strip_suffix("List")
                .filter(|k| !k.is_empty())
                .map(|k| {
                    let api_version = json.get("apiVersion").cloned();
                    (k.to_string(), api_version)
                });
            let Some(Value::Array(items)) = json.as_object_mut().and_then(|m| m.remove("items"))
            else {
                continue;
            };
            let nodes = take_items(node);
            let mut expanded = Vec::with_capacity(items.len());
            for (i, (mut item, node)) in items.into_iter().zip(nodes).enumerate() {
                if let (Some((kind, api_version)), Value::Object(m)) = (&item_type, &mut item)
                    && m.get("kind").is_none()
                {
                    m.insert("kind".into(), kind.as_str().into());
                    if let Some(v) = api_version
                        && m.get("apiVersion").is_none()
                    {
                        m.insert("apiVersion".into(), v.clone());
                    }
                }
                if !item.is_object() {
                    loaded.diagnostics.push(
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
                expanded.push((node, item, Some(i)));
            }
            // In order: the work list is a stack.
            work.extend(expanded.into_iter().rev());
            continue;
        }
        if item.is_none()
            && let Some(diagnostic) = missing_type(source, &node, &json)
        {
            loaded.diagnostics.push(diagnostic);
            continue;
        }
        let node = if keep_nodes {
            node
        } else {
            Node {
                kind: yaml::NodeKind::Map(Vec::new()),
                span: node.span.clone(),
            }
        };
        f(LoadedObject {
            source: Arc::clone(source),
            document,
            item,
            node,
            json,
        });
    }
}

/// The item nodes of a list's node, moved out of it (copied only from an alias).
fn take_items(node: Node) -> Vec<Node> {
    let resolve = |n: Node| match n.kind {
        yaml::NodeKind::Alias(_) | yaml::NodeKind::Anchor(_) => n.resolved().clone(),
        _ => n,
    };
    let node = resolve(node);
    let yaml::NodeKind::Map(entries) = node.kind else {
        return Vec::new();
    };
    // The last `items` wins, as in the JSON.
    let Some((_, items)) = entries
        .into_iter()
        .rev()
        .find(|(k, _)| k.key_text() == Some("items"))
    else {
        return Vec::new();
    };
    match resolve(items).kind {
        yaml::NodeKind::Seq(items) => items.into_iter().map(resolve).collect(),
        _ => Vec::new(),
    }
}

/// A document without apiVersion or kind is not an object.
fn missing_type(source: &Arc<Source>, root: &Node, json: &Value) -> Option<Diagnostic> {
    for field in ["apiVersion", "kind"] {
        if json
            .get(field)
            .is_none_or(|v| v.as_str().is_none_or(|s| s.is_empty()))
        {
            let span = root
                .entry(field)
                .map_or(root.span.start..root.span.start + 1, |(k, v)| {
                    k.span.start..v.span.end
                });
            return Some(
                Diagnostic::error(CODE_NOT_OBJECT, format!("object has no {field}"))
                    .at(source, span)
                    .help(format!(
                        "set `{field}`: every Kubernetes object needs apiVersion and kind"
                    )),
            );
        }
    }
    None
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

    #[test]
    fn lists_inside_lists_are_flattened_and_list_items_get_their_kind() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - apiVersion: v1\n    kind: ConfigMapList\n    items:\n    - metadata: {name: deep}\n  - {apiVersion: v1, kind: ConfigMap, metadata: {name: mid}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: top}}\n";
        let l = load_str(text);
        assert!(l.diagnostics.is_empty(), "{:?}", l.diagnostics);
        let ids: Vec<String> = l.objects.iter().map(|o| o.id().to_string()).collect();
        assert_eq!(ids, ["ConfigMap/deep", "ConfigMap/mid", "ConfigMap/top"]);
        assert_eq!(l.objects[0].json["apiVersion"], "v1");
        assert_eq!(l.objects[0].item, Some(0));
        assert!(text[l.objects[0].node.span.start..].starts_with("metadata: {name: deep}"));
    }

    #[test]
    fn secret_values_are_hidden_from_excerpts() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: SecretList\n  items:\n  - metadata: {name: s}\n    data: {password: aHVudGVyMg==}\n    stringData:\n      token: hunter2\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: shown}\n";
        let src = Source::new("t.yaml", text);
        let l = load(&src, &yaml::Limits::default());
        assert_eq!(l.objects.len(), 2);
        assert_eq!(l.objects[0].kind(), "Secret");
        let masked = src.masked_text().unwrap();
        assert!(
            !masked.contains("aHVudGVy") && !masked.contains("hunter2"),
            "{masked}"
        );
        assert!(masked.contains("password: ************}") && masked.contains("shown"));
    }

    #[test]
    fn a_secret_that_does_not_parse_shows_no_value() {
        let text = "apiVersion: v1\nkind: ConfigMap\ndata: {a: shown}\n---\napiVersion: v1\ndata:\n  password: aHVudGVyMg==\n  bad: [\nkind: Secret\n";
        let src = Source::new("t.yaml", text);
        let l = load(&src, &yaml::Limits::default());
        assert!(l.syntax_error);
        let masked = src.masked_text().unwrap();
        assert!(!masked.contains("aHVudGVy"), "{masked}");
        assert!(masked.contains("shown") && masked.contains("  password: ****"));
    }

    #[test]
    fn a_file_of_more_objects_than_the_budget_is_refused_where_they_overflow() {
        let doc = "---\n{apiVersion: v1, kind: C, metadata: {name: c}}\n";
        let l = load_values(&Source::new("t.yaml", doc.repeat(MAX_FILE_OBJECTS)));
        assert!(l.diagnostics.is_empty() && l.objects.len() == MAX_FILE_OBJECTS);
        let text = doc.repeat(MAX_FILE_OBJECTS + 2);
        let l = load_values(&Source::new("t.yaml", text.as_str()));
        assert!(l.syntax_error && l.objects.is_empty());
        assert!(l.diagnostics[0].message.contains("more than 50000 objects"));
        let (start, _) = l.diagnostics[0].position().unwrap();
        assert_eq!(start.line, 2 * MAX_FILE_OBJECTS + 2);
    }
}
