//! Secrets: which objects hold secret data, and what of them is secret. The one place that
//! decides it, for every output: support bundles (`doctor --save`), source excerpts in
//! diagnostics, and values shown to people.
//!
//! A Secret is an object of kind `Secret` (whatever its apiVersion: a stray kind named so is
//! scrubbed too, which loses nothing a diagnosis needs). Its secret parts are the values of
//! `data` and `stringData`, and kubectl's last-applied annotation, which holds a copy of the
//! whole object. Secrets hide inside lists: `List` and `<Kind>List` objects at any depth, and
//! the items of a `SecretList` are Secrets whatever their own `kind` says (the API server
//! leaves `kind` out of list items). The `items` of any other object are searched too: an
//! object whose `kind` is missing or mistyped may still be a list, and a Secret found where
//! no list should hold one is scrubbed all the same.

use std::ops::Range;

use serde_json::{Map, Value};

use crate::diag::yaml::Node;

/// The fields of a Secret whose values are secret.
pub const DATA_FIELDS: [&str; 2] = ["data", "stringData"];

/// kubectl's annotation with the last applied configuration: for a Secret, its data.
pub const LAST_APPLIED: &str = crate::api::naming::ANNOTATION_LAST_APPLIED;

/// `List` and `<Kind>List` (as `kubectl get -o yaml` and the API server write them) hold
/// their objects in `items`.
pub fn is_list_kind(kind: &str) -> bool {
    kind == "List" || (kind.len() > 4 && kind.ends_with("List"))
}

/// What an object is, as far as secrets go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Secret,
    /// Anything else, whose `items` (if any) are searched; they are Secrets if it is a
    /// `SecretList`.
    Holder {
        of_secrets: bool,
    },
}

/// `kind` is the object's own kind; `in_secret_list` says it is an item of a `SecretList`.
fn classify(kind: Option<&str>, in_secret_list: bool) -> Class {
    match kind {
        Some(k) if k == crate::api::kinds::SECRET.kind => Class::Secret,
        Some(k) if is_list_kind(k) => Class::Holder {
            of_secrets: k == "SecretList",
        },
        _ if in_secret_list => Class::Secret,
        _ => Class::Holder { of_secrets: false },
    }
}

/// Whether a JSON object is a Secret (on its own, outside any list).
pub fn is_secret(object: &Value) -> bool {
    classify(object.get("kind").and_then(Value::as_str), false) == Class::Secret
}

/// Calls `f` on every Secret in `value`: the value itself, or the items of its lists, at any
/// depth (without recursion). Returns how many there were.
fn for_each_secret(value: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) -> usize {
    let mut count = 0;
    let mut stack: Vec<(&mut Value, bool)> = vec![(value, false)];
    while let Some((value, in_secret_list)) = stack.pop() {
        let Value::Object(object) = value else {
            continue;
        };
        match classify(object.get("kind").and_then(Value::as_str), in_secret_list) {
            Class::Secret => {
                f(object);
                count += 1;
            }
            Class::Holder { of_secrets } => {
                if let Some(Value::Array(items)) = object.get_mut("items") {
                    stack.extend(items.iter_mut().map(|item| (item, of_secrets)));
                }
            }
        }
    }
    count
}

/// Removes the secret data of every Secret in `value` (see [`for_each_secret`]): `data`,
/// `stringData`, the last-applied annotation and the managed fields. For support bundles,
/// which keep the Secrets' names and nothing else of them. Returns how many were scrubbed.
pub fn scrub(value: &mut Value) -> usize {
    for_each_secret(value, &mut |secret| {
        for field in DATA_FIELDS {
            secret.remove(field);
        }
        if let Some(Value::Object(meta)) = secret.get_mut("metadata") {
            if let Some(Value::Object(annotations)) = meta.get_mut("annotations") {
                annotations.remove(LAST_APPLIED);
            }
            meta.remove("managedFields");
        }
    })
}

/// Replaces every secret value of every Secret in `value` with [`redacted`] text that gives
/// its size, and drops the last-applied annotation: what to show people, who may need to
/// know which keys a Secret has. Returns how many Secrets were redacted.
pub fn redact(value: &mut Value) -> usize {
    for_each_secret(value, &mut |secret| {
        for field in DATA_FIELDS {
            match secret.get_mut(field) {
                Some(Value::Object(entries)) => {
                    for v in entries.values_mut() {
                        *v = Value::String(redacted(field, v));
                    }
                }
                Some(v) if !v.is_null() => *v = Value::String(redacted(field, v)),
                _ => {}
            }
        }
        if let Some(Value::Object(meta)) = secret.get_mut("metadata")
            && let Some(Value::Object(annotations)) = meta.get_mut("annotations")
            && let Some(v) = annotations.get_mut(LAST_APPLIED)
        {
            *v = Value::String(redacted("", v));
        }
    })
}

/// `<redacted: 12 bytes>`: the size of a secret value, as `kubectl describe secret` gives
/// it (decoded bytes for base64 `data`).
pub fn redacted(field: &str, value: &Value) -> String {
    let len = match value {
        Value::String(s) if field == "data" => base64_decoded_len(s),
        Value::String(s) => s.len(),
        other => other.to_string().len(),
    };
    redacted_len(len)
}

/// How a Secret value of `len` bytes is shown: its size, never its content.
pub fn redacted_len(len: usize) -> String {
    let unit = if len == 1 { "byte" } else { "bytes" };
    format!("<redacted: {len} {unit}>")
}

fn base64_decoded_len(s: &str) -> usize {
    let body = s.trim_end_matches('=');
    let chars = body.bytes().filter(|b| !b.is_ascii_whitespace()).count();
    chars * 3 / 4
}

/// Byte ranges of a YAML document's secret values, for every Secret in it (lists at any
/// depth, as [`scrub`] sees them): each value of `data` and `stringData` (the keys stay
/// visible) and the last-applied annotation. Source excerpts mask them.
pub fn secret_spans(root: &Node) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut stack = vec![(root, false)];
    while let Some((node, in_secret_list)) = stack.pop() {
        let kind = node.get("kind").and_then(Node::key_text);
        match classify(kind, in_secret_list) {
            Class::Secret => {
                for field in DATA_FIELDS {
                    let Some(value) = node.get(field) else {
                        continue;
                    };
                    match value.as_map() {
                        Some(entries) => spans.extend(entries.iter().map(|(_, v)| v.span.clone())),
                        None => spans.push(value.span.clone()),
                    }
                }
                // A YAML node's position, not a field read: the annotation's path in the source.
                let path = ["metadata", "annotations", LAST_APPLIED];
                if let Some(v) = path.iter().try_fold(node, |n, k| n.get(k)) {
                    spans.push(v.span.clone());
                }
            }
            Class::Holder { of_secrets } => {
                if let Some(items) = node.get("items").and_then(Node::as_seq) {
                    stack.extend(items.iter().map(|item| (item, of_secrets)));
                }
            }
        }
    }
    spans
}

/// For a document that could not be parsed (so nothing is known of its structure): whether
/// its text names a Secret or a `SecretList` as a kind anywhere, in YAML or JSON spelling
/// (a list of Secrets names each item's kind).
pub fn text_may_hold_secret(text: &str) -> bool {
    let mut rest = text;
    while let Some(i) = rest.find("kind") {
        let after = rest[i + 4..].trim_start_matches(['"', '\'']).trim_start();
        if let Some(value) = after.strip_prefix(':') {
            let value = value.trim_start().trim_start_matches(['"', '\'']);
            if value.starts_with("Secret") {
                return true;
            }
        }
        rest = &rest[i + 4..];
    }
    false
}

/// Byte ranges to mask in the lines of `region` of `text`, a document that could not be
/// parsed: on each line, everything after the indentation, a `- ` and a `key:`, so that the
/// structure (what a syntax error is about) stays visible and no value does.
pub fn unparsed_value_spans(text: &str, region: Range<usize>) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut offset = region.start;
    for line in text[region.clone()].split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let mut i = body.len() - body.trim_start().len();
        while body[i..].starts_with("- ") {
            i += 2;
        }
        // A plain `key:` (followed by a blank or the end of the line) stays visible.
        let rest = &body[i..];
        if let Some(colon) = rest
            .find(": ")
            .or_else(|| rest.strip_suffix(':').map(|k| k.len()))
            && !rest[..colon].contains(['"', '\'', '{', '[', '#'])
        {
            i += colon + 1;
        }
        let value = &body[i..];
        let skip = value.len() - value.trim_start().len();
        if i + skip < body.len() {
            spans.push(start + i + skip..start + body.len());
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::diag::Source;
    use crate::diag::yaml::parse_documents;

    fn secret(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name,
            "annotations": {LAST_APPLIED: "{\"data\":{\"password\":\"aHVudGVyMg==\"}}", "keep": "x"},
            "managedFields": [{"manager": "kubectl"}]},
            "data": {"password": "aHVudGVyMg=="}, "stringData": {"token": "hunter2"}, "type": "Opaque"})
    }

    #[test]
    fn sizes_are_counted_in_english() {
        assert_eq!(redacted("data", &json!("YQ==")), "<redacted: 1 byte>");
        assert_eq!(redacted("stringData", &json!("ab")), "<redacted: 2 bytes>");
        assert_eq!(redacted("stringData", &json!("")), "<redacted: 0 bytes>");
    }

    #[test]
    fn scrubs_secrets_in_lists_of_lists_and_secret_list_items_without_kind() {
        let mut item = secret("bare");
        item.as_object_mut().unwrap().remove("kind");
        let mut v = json!({"apiVersion": "v1", "kind": "List", "items": [
            secret("top"),
            {"apiVersion": "v1", "kind": "List", "items": [
                {"kind": "SecretList", "apiVersion": "v1", "items": [item.clone()]},
                secret("nested"),
            ]},
            {"kind": "ConfigMapList", "items": [{"kind": "ConfigMap", "data": {"a": "visible"}}]},
        ]});
        assert_eq!(scrub(&mut v), 3);
        let text = v.to_string();
        for secret_text in ["aHVudGVyMg", "hunter2", "last-applied", "managedFields"] {
            assert!(!text.contains(secret_text), "{secret_text} in {text}");
        }
        assert!(text.contains("visible") && text.contains("\"keep\":\"x\""));
        assert_eq!(
            v["items"][1]["items"][0]["items"][0]["metadata"]["name"],
            "bare"
        );
        // A Secret on its own.
        let mut s = secret("alone");
        assert_eq!(scrub(&mut s), 1);
        assert!(s.get("data").is_none() && s["type"] == "Opaque");
        // A kindless object outside a SecretList is not a Secret.
        assert_eq!(scrub(&mut item.clone()), 0);
    }

    #[test]
    fn secrets_in_the_items_of_an_object_that_is_not_a_list_are_found_too() {
        // Found by fuzzing: `kind:+ List` in a flow mapping is a key of its own, so the
        // object has no kind, and its items held a SecretList.
        let mut v = json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind:+ List": null, "items": [
                {"apiVersion": "v1", "kind": "SecretList", "items": [{"metadata": {"name": "c"}, "data": {"x": "eA=="}}]},
            ]},
            {"kind": 5, "items": [secret("numeric kind")]},
            {"kind": "Bundle", "items": [secret("custom")]},
        ]});
        assert_eq!(scrub(&mut v), 3);
        assert!(!v.to_string().contains("eA==") && !v.to_string().contains("aHVudGVy"));
        let text = "kind: Bundle\nitems:\n- kind: Secret\n  data: {p: aHVudGVyMg==}\n";
        let (docs, _) = parse_documents(&Source::new("t", text));
        let spans = secret_spans(docs[0].root.as_ref().unwrap());
        assert_eq!(
            spans.iter().map(|s| &text[s.clone()]).collect::<Vec<_>>(),
            ["aHVudGVyMg=="]
        );
    }

    #[test]
    fn redacts_with_sizes() {
        let mut v = json!({"kind": "SecretList", "items": [secret("s")]});
        assert_eq!(redact(&mut v), 1);
        let s = &v["items"][0];
        assert_eq!(s["data"]["password"], "<redacted: 7 bytes>");
        assert_eq!(s["stringData"]["token"], "<redacted: 7 bytes>");
        assert!(!v.to_string().contains("aHVudGVy"));
    }

    #[test]
    fn spans_of_secret_values_in_yaml_lists() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- kind: SecretList\n  items:\n  - metadata: {name: a}\n    data:\n      password: aHVudGVyMg==\n      cert: |\n        line one\n        line two\n- kind: ConfigMap\n  data: {a: shown}\n";
        let src = Source::new("t", text);
        let (docs, _) = parse_documents(&src);
        let spans = secret_spans(docs[0].root.as_ref().unwrap());
        let hidden: Vec<&str> = spans.iter().map(|s| &text[s.clone()]).collect();
        assert_eq!(hidden.len(), 2);
        assert!(hidden.contains(&"aHVudGVyMg=="));
        assert!(
            hidden
                .iter()
                .any(|h| h.starts_with("line one\n        line two"))
        );
    }

    #[test]
    fn unparsed_documents_are_judged_by_their_text() {
        assert!(text_may_hold_secret("a: 1\nkind: Secret\n"));
        assert!(text_may_hold_secret("{\"kind\" : \"SecretList\"}"));
        assert!(text_may_hold_secret(
            "kind: List\nitems:\n- {kind: Secret, data: [\n"
        ));
        assert!(!text_may_hold_secret("kind: List\n"));
        assert!(!text_may_hold_secret("kind: ConfigMap\nkinds: Secret\n"));
        let text = "data:\n  password: hunter2\n  - x: \"y: z\"\n  |\n    raw\nkey:\n";
        let spans = unparsed_value_spans(text, 0..text.len());
        let hidden: Vec<&str> = spans.iter().map(|s| &text[s.clone()]).collect();
        assert_eq!(hidden, ["hunter2", "\"y: z\"", "|", "raw"]);
    }
}
