//! A YAML stream read straight into JSON values, without node trees or positions: for
//! what keeps no positions (the objects of a dump that doctor, tree, trace and wait read),
//! where building a tree of every node with its span would cost more than the values.
//!
//! Values come out as [`Node::to_json`] makes them (the same scalar resolution, tags and
//! numbers). What only the tree reader handles, or reports where it is, is left to it: a
//! syntax error, anchors and aliases (and so merge keys, `<<`), a key that is not a scalar,
//! nesting past the depth limit and a file past its node budget all give `None`, and the
//! caller reads the source again with [`for_each_document`](super::for_each_document),
//! which says what and where.

use saphyr_parser::{Event, Parser, ScalarStyle};
use serde_json::{Map, Value};

use super::json::scalar_value;
use super::scalar::resolve_tagged;
use super::{Limits, Style, scalar_text};

/// A collection being read: where its members start in the reader's `items` or `members`
/// (an object is made at its end with room for exactly its members, instead of growing and
/// rehashing as they come), and a mapping's key waiting for its value.
enum Frame {
    Seq(usize),
    Map(usize, Option<String>),
}

/// The documents of `text` as values (empty and `null` documents skipped, as kubectl does),
/// or `None` if the tree reader has to read it (see the module's documentation). Nodes are
/// counted as the tree reader counts them (keys included) against `limits.max_total_nodes`.
pub fn document_values(text: &str, limits: &Limits) -> Option<Vec<Value>> {
    if let Some(docs) = json_documents(text, limits) {
        return Some(docs);
    }
    let mut parser = Parser::new_from_str(text);
    let mut docs = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut items: Vec<Value> = Vec::new();
    let mut members: Vec<(String, Value)> = Vec::new();
    let mut root: Option<Value> = None;
    let mut nodes_left = limits.max_total_nodes;
    while let Some(event) = parser.next_event() {
        let (event, _) = event.ok()?;
        let value = match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => continue,
            Event::DocumentStart(_) => {
                root = None;
                continue;
            }
            Event::DocumentEnd => {
                if let Some(v) = root.take().filter(|v| !v.is_null()) {
                    docs.push(v);
                }
                continue;
            }
            Event::Alias(_) => return None,
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _)
                if anchor != 0 || stack.len() >= limits.max_depth =>
            {
                return None;
            }
            Event::SequenceStart(..) => {
                nodes_left = nodes_left.checked_sub(1)?;
                stack.push(Frame::Seq(items.len()));
                continue;
            }
            Event::MappingStart(..) => {
                nodes_left = nodes_left.checked_sub(1)?;
                stack.push(Frame::Map(members.len(), None));
                continue;
            }
            Event::SequenceEnd => match stack.pop()? {
                Frame::Seq(start) => Value::Array(items.drain(start..).collect()),
                Frame::Map(..) => return None,
            },
            Event::MappingEnd => match stack.pop()? {
                Frame::Map(start, None) => {
                    let mut map = Map::with_capacity(members.len() - start);
                    // A key given twice keeps its first place and its last value.
                    for (k, v) in members.drain(start..) {
                        map.insert(k, v);
                    }
                    Value::Object(map)
                }
                _ => return None,
            },
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 {
                    return None;
                }
                nodes_left = nodes_left.checked_sub(1)?;
                if let Some(Frame::Map(_, key @ None)) = stack.last_mut() {
                    // A merge key (`<<`) is only ever useful with an alias: the tree reader's.
                    if style == ScalarStyle::Plain && text == "<<" {
                        return None;
                    }
                    *key = Some(scalar_text(text));
                    continue;
                }
                let style = Style::of(style);
                let resolved = resolve_tagged(&text, style, tag.as_deref());
                scalar_value(&resolved, || scalar_text(text), 0, true).ok()?
            }
        };
        match stack.last_mut() {
            None => root = Some(value),
            Some(Frame::Seq(_)) => items.push(value),
            Some(Frame::Map(_, key)) => match key.take() {
                Some(k) => members.push((k, value)),
                // A collection as a key.
                None => return None,
            },
        }
    }
    Some(docs)
}

/// The documents of a stream each of which is one JSON object (a `doctor --save` bundle,
/// `kubectl get -o json` objects put one after the other as YAML documents), read by the
/// JSON reader; `None` as soon as one document is anything else (its `---` line with more
/// on it, a directive, a document end marker, text other than one JSON object), and the
/// stream is read as YAML. JSON text is YAML whose values are the JSON's (kubectl's YAML
/// decoder gives the same), at the speed of the JSON reader. Nodes are counted as the
/// JSON reader counts them, against the same budget.
fn json_documents(text: &str, limits: &Limits) -> Option<Vec<Value>> {
    let mut docs = Vec::new();
    let mut nodes_left = limits.max_total_nodes;
    for body in text.split("\n---\n") {
        let body = without_comments(body)?;
        if body.is_empty() {
            continue;
        }
        if !body.starts_with('{') {
            return None;
        }
        let within = Limits {
            max_total_nodes: nodes_left,
            ..*limits
        };
        let (mut values, nodes) = crate::diag::json::values_counted(body, &within)?;
        nodes_left -= nodes;
        if values.len() != 1 {
            return None;
        }
        docs.push(values.pop()?);
    }
    Some(docs)
}

/// A document's text after the comment and blank lines it starts with (those of the first
/// document of a stream, or after a `---` line that opens it). A marker or directive line
/// the split at `\n---\n` leaves inside a document is not JSON: the JSON reader refuses it.
/// `None` when a comment holds a byte order mark, which YAML's comments may not (the YAML
/// reader refuses the stream, and says where).
fn without_comments(mut body: &str) -> Option<&str> {
    loop {
        let rest = body.trim_start_matches([' ', '\t', '\r', '\n']);
        if let Some(comment) = rest.strip_prefix('#') {
            // A comment ends at a line break: `\n`, `\r\n` or a `\r` alone, as YAML reads.
            let (text, after) = comment.split_once(['\n', '\r']).unwrap_or((comment, ""));
            if text.contains('\u{feff}') {
                return None;
            }
            body = after;
        } else if rest == "---" || rest.starts_with("---\n") || rest.starts_with("---\r\n") {
            body = &rest[3..];
        } else {
            return Some(rest.trim_end());
        }
    }
}

/// [`document_values`] of a large stream on up to `threads` threads: the text is cut at
/// document markers (a line `---`, which YAML lets no scalar or collection continue across)
/// and the pieces are read at once, each within an equal share of the node budget. The
/// same values, or `None` where any piece would not be read (a directive cut from its
/// document fails to parse, as does anything else) or its share of the budget is exceeded:
/// the caller's fallback reads the whole text.
pub fn document_values_parallel(text: &str, limits: &Limits, threads: usize) -> Option<Vec<Value>> {
    /// Below this a thread costs more than it saves.
    const MIN_PIECE: usize = 1 << 20;
    read_in_pieces(text, limits, threads.min(text.len() / MIN_PIECE))
}

fn read_in_pieces(text: &str, limits: &Limits, n: usize) -> Option<Vec<Value>> {
    let pieces: Vec<&str> = super::split_at_documents(text, n.max(1))
        .into_iter()
        .map(|piece| &text[piece])
        .collect();
    if pieces.len() < 2 {
        return document_values(text, limits);
    }
    let share = Limits {
        max_total_nodes: limits.max_total_nodes / pieces.len(),
        ..*limits
    };
    let read: Vec<Option<Vec<Value>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = pieces
            .iter()
            .map(|piece| scope.spawn(move || document_values(piece, &share)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut out = Vec::new();
    for piece in read {
        out.extend(piece?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Source;
    use crate::diag::yaml::parse_documents;

    /// What the tree reader makes of the same text.
    fn through_trees(text: &str) -> Vec<Value> {
        let (docs, err) = parse_documents(&Source::new("t.yaml", text));
        assert!(err.is_none(), "{err:?}");
        docs.into_iter()
            .filter_map(|d| d.root)
            .map(|r| r.to_json(&Limits::default()).unwrap())
            .collect()
    }

    #[test]
    fn values_are_those_of_the_tree_reader() {
        let text = "\
apiVersion: v1
kind: ConfigMap
metadata: {name: a, labels: {on: yes, n: '1'}}
data:
  int: 42
  float: 1.5
  whole: 2.0
  big: 18446744073709551615
  octal: 0o17
  oldoctal: 017
  hex: 0x1F
  tagged: !!str 12
  custom: !thing 12
  nul: ~
  empty:
  bools: [true, False, off, y]
  text: |
    line one
    line two
  folded: >-
    a
    b
  quoted: \"x\\ty\"
  dup: 1
  dup: 2
---
---
null
---
- 1
- {a: [b, {c: d}]}
";
        let fast = document_values(text, &Limits::default()).expect("read without trees");
        assert_eq!(fast, through_trees(text));
        assert_eq!(fast.len(), 2);
        assert_eq!(fast[0]["data"]["dup"], 2);
        assert_eq!(fast[0]["data"]["whole"], 2);
        // In the same order (maps compare equal in any order), a key given twice where it
        // was first.
        assert_eq!(
            serde_json::to_string(&fast).unwrap(),
            serde_json::to_string(&through_trees(text)).unwrap()
        );
    }

    #[test]
    fn keys_strings_and_collections_hold_no_room_beyond_their_contents() {
        let text =
            "a: {b: text, c: [x, w, z], d: [], e: {}}\nf: long enough to be a plain scalar\n";
        fn walk(v: &Value, seen: &mut usize) {
            match v {
                Value::String(s) => {
                    assert_eq!(s.capacity(), s.len(), "{s:?}");
                    *seen += 1;
                }
                Value::Array(items) => {
                    assert_eq!(items.capacity(), items.len(), "{items:?}");
                    items.iter().for_each(|i| walk(i, seen));
                }
                Value::Object(map) => {
                    for (k, v) in map {
                        assert_eq!(k.capacity(), k.len(), "{k:?}");
                        *seen += 1;
                        walk(v, seen);
                    }
                }
                _ => {}
            }
        }
        let mut seen = 0;
        walk(
            &document_values(text, &Limits::default()).unwrap()[0],
            &mut seen,
        );
        assert_eq!(seen, 11);
    }

    #[test]
    fn a_stream_of_json_documents_is_read_as_json_with_the_values_of_yaml() {
        let docs = [
            r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}"#,
            "{\n  \"n\": [1, -0, 1.0, 1.5, 1e3, 1E+3, 2.5e-3, 12345678901234567890, -9223372036854775808],\n  \"b\": [true, false, null]\n}",
            r#"{"s": ["\u00e9\u0001\t\"\\\/", "é", "", "yes", "on", "~", "1e3", "0x1F"], "dup": 1, "dup": {"x": []}}"#,
        ];
        let text = format!(
            "# a header\n# of two lines\n---\n{}\n",
            docs.join("\n---\n")
        );
        let fast = json_documents(&text, &Limits::default()).expect("every document is JSON");
        assert_eq!(fast.len(), 3);
        assert_eq!(fast, through_trees(&text));
        assert_eq!(
            serde_json::to_string(&fast).unwrap(),
            serde_json::to_string(&through_trees(&text)).unwrap()
        );
        assert_eq!(document_values(&text, &Limits::default()), Some(fast));
        // Anything else in the stream leaves it to the YAML reader, which reads it all.
        for other in [
            format!("{text}---\na: 1\n"),
            format!("{text}--- {{\"a\": 1}}\n"),
            format!("{text}...\n"),
            format!("%YAML 1.2\n---\n{}\n", docs[0]),
            format!("{text}---\n{{\"a\": 1}} # a comment\n"),
            format!("{text}---\n[1, 2]\n"),
            text.replace('\n', "\r\n"),
        ] {
            assert_eq!(json_documents(&other, &Limits::default()), None, "{other}");
            assert_eq!(
                document_values(&other, &Limits::default()),
                Some(through_trees(&other)),
                "{other}"
            );
        }
        // The same node budget: keys and values, as the YAML reader counts them.
        let one = r#"{"a": 1, "b": [2, 3]}"#;
        let two = format!("---\n{one}\n---\n{one}\n");
        let limited = |nodes| Limits {
            max_total_nodes: nodes,
            ..Limits::default()
        };
        assert!(document_values(&two, &limited(14)).is_some());
        assert_eq!(document_values(&two, &limited(13)), None);
    }

    #[test]
    fn a_comment_ends_at_a_carriage_return_too() {
        // YAML reads a `\r` alone as a line break: what follows it is no longer the comment
        // (here a document that is a string, which the tree reader reads too).
        for text in ["# a\r{\"a\": 1}\n", "# a\r\n{\"a\": 1}\n", "# a\rs b\n"] {
            let fast = document_values(text, &Limits::default());
            assert_eq!(fast, Some(through_trees(text)), "{text:?}");
        }
    }

    #[test]
    fn a_comment_with_a_byte_order_mark_is_left_to_the_tree_reader() {
        // YAML's comments hold no byte order mark: the tree reader refuses the stream (and
        // says where), so the JSON path of the fast one must not read past it.
        for text in [
            "#\u{feff}\n{\"a\": 1}\n",
            "{\"a\": 1}\n---\n# a\u{feff}b\n{\"b\": 2}\n",
        ] {
            assert!(
                parse_documents(&Source::new("t.yaml", text)).1.is_some(),
                "{text:?}"
            );
            assert_eq!(document_values(text, &Limits::default()), None, "{text:?}");
        }
        // Elsewhere, as in a string, it is a character like any other.
        let text = "# a\n{\"a\": \"x\u{feff}y\"}\n";
        assert_eq!(
            document_values(text, &Limits::default()),
            Some(through_trees(text))
        );
    }

    #[test]
    fn what_only_the_tree_reader_handles_is_left_to_it() {
        for text in [
            "a: &x 1\nb: *x\n",
            "base: &b {x: 1}\nc:\n  <<: *b\n",
            "? [a, b]\n: c\n",
            "a: [b\n",
            "a: b: c\n",
        ] {
            assert_eq!(document_values(text, &Limits::default()), None, "{text:?}");
        }
    }

    #[test]
    fn pieces_read_at_once_give_the_same_values() {
        let doc = |i: usize| {
            format!(
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\ndata:\n  text: |\n    ---x\n    line {i}\n"
            )
        };
        let text: String = (0..4000).map(doc).collect();
        let pieces: Vec<&str> = crate::diag::yaml::split_at_documents(&text, 4)
            .into_iter()
            .map(|piece| &text[piece])
            .collect();
        assert_eq!(pieces.len(), 4);
        assert_eq!(pieces.concat(), text);
        assert!(pieces[1..].iter().all(|p| p.starts_with("---\n")));
        let all = document_values(&text, &Limits::default()).unwrap();
        assert_eq!(all.len(), 4000);
        assert_eq!(read_in_pieces(&text, &Limits::default(), 4), Some(all));
        // A directive cut from its document: the piece before it does not parse.
        let directive = text.replacen("---\napiVersion", "%YAML 1.1\n---\napiVersion", 3000);
        assert_eq!(read_in_pieces(&directive, &Limits::default(), 4), None);
        assert!(document_values(&directive, &Limits::default()).is_none());
        // Each piece has its share of the budget (13 nodes a document): past the whole
        // budget, one of them is past its share.
        let nodes = Limits {
            max_total_nodes: 4000 * 13,
            ..Limits::default()
        };
        assert!(document_values(&text, &nodes).is_some());
        let tight = Limits {
            max_total_nodes: 4000 * 13 - 1,
            ..Limits::default()
        };
        assert_eq!(read_in_pieces(&text, &tight, 4), None);
    }

    #[test]
    fn depth_and_nodes_are_bounded() {
        let deep = format!("{}1{}", "[".repeat(10), "]".repeat(10));
        let limits = Limits {
            max_depth: 10,
            ..Limits::default()
        };
        assert!(document_values(&deep, &limits).is_some());
        let limits = Limits {
            max_depth: 9,
            ..Limits::default()
        };
        assert_eq!(document_values(&deep, &limits), None);
        // 1 mapping, 2 keys, 2 values.
        let text = "a: 1\nb: 2\n";
        let nodes = |n| Limits {
            max_total_nodes: n,
            ..Limits::default()
        };
        assert!(document_values(text, &nodes(5)).is_some());
        assert_eq!(document_values(text, &nodes(4)), None);
    }
}
