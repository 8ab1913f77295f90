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

/// YAML nodes (keys included) a file may hold when every object of it is kept (what `eval`,
/// `check`, `render` and `doctor --from` read). Dumps hold one node per 12 to 17 bytes: the
/// `doctor --save` bundle of 2,000 ServiceSets × 5 services (14,236 objects, 26.6 MB) about
/// 2 million, so a dump at the 32 MiB input limit about 2.5 million; this bound lets every
/// such dump through. Converted to JSON, a node costs about 75 bytes when nothing else is
/// kept (a file of tiny scalars): 225 MB at the bound.
pub const MAX_FILE_NODES: usize = 3_000_000;

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
        load_document(source, doc, limits, keep_nodes, &mut loaded, f);
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

/// [`for_each_object`] of the documents in `piece` of `source` (cut at a document marker:
/// [`yaml::split_at_documents`]) read as a stream of their own: the objects' `document`
/// counts from the piece's first. `None` where the piece is not read as it is in its
/// stream: a source whose offsets are not marker indices, a syntax error, a document that
/// is not an object (its finding numbers the document in the stream); the caller then reads
/// the source whole. What `f` was given by then is to be discarded.
pub fn for_each_object_in(
    source: &Arc<Source>,
    piece: std::ops::Range<usize>,
    limits: &yaml::Limits,
    keep_nodes: bool,
    f: &mut dyn FnMut(LoadedObject),
) -> Option<Loaded> {
    let mut loaded = Loaded::default();
    let err = yaml::for_each_document_in(source, piece, limits, &mut |doc| {
        load_document(source, doc, limits, keep_nodes, &mut loaded, f);
    })?;
    (err.is_none() && loaded.diagnostics.is_empty()).then_some(loaded)
}

/// One document's objects to `f`, its Secrets' values hidden in `source`.
fn load_document(
    source: &Arc<Source>,
    doc: yaml::Document,
    limits: &yaml::Limits,
    keep_nodes: bool,
    loaded: &mut Loaded,
    f: &mut dyn FnMut(LoadedObject),
) {
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
                    .help("simplify the document: anchors and aliases must not multiply its size"),
            );
            loaded.syntax_error = true;
            return;
        }
    };
    push_objects(source, doc.index, root, json, keep_nodes, loaded, f);
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
        if is_list(&json) && node.get("items").and_then(Node::as_seq).is_some() {
            let kind = kind.to_string();
            let Some(items) = list_items(&mut json) else {
                continue;
            };
            let nodes = take_items(node);
            let mut expanded = Vec::with_capacity(items.len());
            for (i, (item, node)) in items.into_iter().zip(nodes).enumerate() {
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

/// Whether a value is a List (`kind: List` or `<Kind>List`) whose items kubectl would expand.
fn is_list(json: &Value) -> bool {
    secret::is_list_kind(json.get("kind").and_then(Value::as_str).unwrap_or(""))
        && matches!(json.get("items"), Some(Value::Array(_)))
}

/// The items of a List, moved out of it. The API server leaves apiVersion and kind out of
/// the items of a `<Kind>List`: they are given its kind without the suffix, and its apiVersion.
fn list_items(json: &mut Value) -> Option<Vec<Value>> {
    let item_type = json
        .get("kind")
        .and_then(Value::as_str)
        .and_then(|k| k.strip_suffix("List"))
        .filter(|k| !k.is_empty())
        .map(|k| (k.to_string(), json.get("apiVersion").cloned()));
    let Some(Value::Array(mut items)) = json.as_object_mut().and_then(|m| m.remove("items")) else {
        return None;
    };
    if let Some((kind, api_version)) = &item_type {
        for item in &mut items {
            if let Value::Object(m) = item
                && m.get("kind").is_none()
            {
                m.insert("kind".into(), kind.as_str().into());
                if let Some(v) = api_version
                    && m.get("apiVersion").is_none()
                {
                    m.insert("apiVersion".into(), v.clone());
                }
            }
        }
    }
    Some(items)
}

/// The objects of a dump, read without positions (what doctor, tree, trace and wait read
/// `--from`): JSON read as JSON, YAML without node trees, Lists expanded as [`load_values`]
/// expands them, within the same budgets ([`MAX_FILE_NODES`], [`MAX_FILE_OBJECTS`], depth).
/// Several times faster than [`load_values`], and without its per-document bound on nodes (a
/// `kubectl get -o yaml` List of a whole fleet is one document): no tree of a document is
/// built. `None` when the source holds anything [`load_values`] would report (invalid text, a
/// document that is not an object, a budget exceeded) or that only it reads (anchors and
/// aliases): the caller loads it with [`load_values`], whose diagnostics say what and where.
/// No value is shown from the source (it has no diagnostics), so no Secret span is hidden.
pub fn load_dump_values(source: &Source) -> Option<Vec<Value>> {
    let limits = yaml::Limits {
        max_total_nodes: MAX_FILE_NODES,
        ..yaml::Limits::default()
    };
    dump_values_within(source, &limits)
}

/// The threads a large YAML dump is read on.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn dump_values_within(source: &Source, limits: &yaml::Limits) -> Option<Vec<Value>> {
    let text = source.text();
    let docs = crate::diag::json::looks_like_json(text)
        .then(|| crate::diag::json::values(text, limits))
        .flatten()
        .or_else(|| yaml::document_values_parallel(text, limits, threads()))?;
    let mut out = Vec::new();
    for doc in docs {
        if !doc.is_object() {
            return None;
        }
        let mut work = vec![(doc, false)];
        while let Some((mut json, item)) = work.pop() {
            if is_list(&json) {
                let items = list_items(&mut json)?;
                if !items.iter().all(Value::is_object) {
                    return None;
                }
                work.extend(items.into_iter().rev().map(|i| (i, true)));
                continue;
            }
            let typed = ["apiVersion", "kind"].iter().all(|f| {
                json.get(f)
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
            });
            if !item && !typed {
                return None;
            }
            if out.len() == MAX_FILE_OBJECTS {
                return None;
            }
            out.push(json);
        }
    }
    Some(out)
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

    /// The values `load_values` gives, or None when it reports anything.
    fn values_with_positions(source: &Arc<Source>) -> Option<Vec<Value>> {
        let loaded = load_values(source);
        loaded
            .diagnostics
            .is_empty()
            .then(|| loaded.objects.into_iter().map(|o| o.json).collect())
    }

    #[test]
    fn dumps_read_without_positions_give_the_same_objects() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut read = 0;
        for dir in ["testdata/doctor", "testdata/examples", "examples"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let files: Vec<_> = if path.is_dir() {
                    std::fs::read_dir(&path)
                        .unwrap()
                        .flatten()
                        .map(|e| e.path())
                        .collect()
                } else {
                    vec![path]
                };
                for file in files {
                    if !matches!(
                        file.extension().and_then(|e| e.to_str()),
                        Some("yaml" | "yml" | "json")
                    ) {
                        continue;
                    }
                    let text = std::fs::read_to_string(&file).unwrap();
                    let source = Source::new(file.display().to_string(), &text);
                    let fast = load_dump_values(&source);
                    if fast.is_some() {
                        read += 1;
                    }
                    // Where the fast reader reads a file, it reads what the other does; where
                    // it does not, the other reports the problem (or reads aliases).
                    match (fast, values_with_positions(&source)) {
                        (Some(f), Some(v)) => assert_eq!(f, v, "{}", file.display()),
                        (Some(_), None) => panic!("{}: read past a problem", file.display()),
                        (None, _) => {}
                    }
                    // The same objects as JSON.
                    if let Some(v) = values_with_positions(&source) {
                        let json = serde_json::to_string(&serde_json::json!({
                            "apiVersion": "v1", "kind": "List", "items": v}))
                        .unwrap();
                        let as_json = load_dump_values(&Source::new("t.json", &json));
                        assert_eq!(as_json, Some(v), "{} as JSON", file.display());
                    }
                }
            }
        }
        assert!(read > 20, "{read} files read");
    }

    #[test]
    fn dumps_with_problems_are_left_to_the_reader_with_positions() {
        for text in [
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [}\n",
            "- a\n",
            "kind: ConfigMap\nmetadata: {name: a}\n",
            "apiVersion: v1\nkind: List\nitems: [1]\n",
            "{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [[]]}",
        ] {
            let source = Source::new("t.yaml", text);
            assert_eq!(load_dump_values(&source), None, "{text}");
            assert!(!load_values(&source).diagnostics.is_empty(), "{text}");
        }
        // Aliases are read by the reader with positions only.
        let source = Source::new(
            "t.yaml",
            "apiVersion: &v v1\nkind: ConfigMap\nmetadata: {name: *v}\n",
        );
        assert_eq!(load_dump_values(&source), None);
        assert_eq!(
            load_values(&source).objects[0].json["metadata"]["name"],
            "v1"
        );
        // A List of a fleet in one document: no per-document bound without trees.
        let item = "{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}";
        let big = format!(
            "apiVersion: v1\nkind: List\nitems:\n{}",
            format!("- {item}\n").repeat(100)
        );
        let source = Source::new("big.yaml", &big);
        let limits = yaml::Limits {
            max_nodes: 500,
            max_total_nodes: 10_000,
            ..yaml::Limits::default()
        };
        let read = dump_values_within(&source, &limits);
        assert_eq!(read.map(|v| v.len()), Some(100));
        let mut nodes = 0;
        let err = yaml::for_each_document(&source, &limits, &mut |_| nodes += 1);
        assert!(err.is_some_and(|e| e.message.contains("more than 500 YAML nodes")));
        // Past the file's budget, it is left to the reader with positions, which says so.
        let limits = yaml::Limits {
            max_total_nodes: 900,
            ..limits
        };
        assert_eq!(dump_values_within(&source, &limits), None);
    }

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
