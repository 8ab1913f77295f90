//! YAML (and JSON) documents with source spans.
//!
//! Built on saphyr-parser's event stream so that every node keeps the byte range it came from:
//! lint diagnostics point at the exact key or value, and inside a readiness rule's text
//! (block scalars included). Values are resolved the way kubectl reads manifests
//! (sigs.k8s.io/yaml, YAML 1.1 scalars) and converted to JSON the way the API server stores
//! them: integers that fit int64 stay integers, every other number is a double.
//!
//! Hostile input is bounded by [`Limits`]: nesting depth (block and flow, aliases counted
//! where they are used), nodes per document, and what aliases may expand to, in values and in
//! bytes. The rooms: `block` (the plain block YAML of manifests read into saphyr's events,
//! over twice as fast as saphyr reads it; any other document is saphyr's), `build`
//! (events to trees), `json` (trees to JSON), `scalar` (types of scalars, positions inside
//! them).

mod block;
mod build;
mod json;
mod scalar;
mod values;

use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;

use super::source::Source;

pub use build::{for_each_document, for_each_document_in};
pub(crate) use json::float_json;
pub use scalar::resolve_plain_scalar;
pub use values::{document_values, document_values_parallel};

/// Bounds for hostile documents.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Values one document may expand to, aliases included (a "billion laughs" guard).
    pub max_values: usize,
    /// Bytes of text (strings and keys) that aliases may copy into one document: an alias of
    /// a long string copies it whole, so counting values alone lets a few KiB of aliases
    /// expand to gigabytes.
    pub max_alias_bytes: usize,
    /// Collections one inside another, aliases expanded. Every later walk over a document
    /// (conversion, checks, rendering) recurses at most this deep.
    pub max_depth: usize,
    /// YAML nodes one document may hold. A node costs 150 to 300 bytes once parsed and
    /// converted, so this is what bounds memory when documents are processed one at a time
    /// (under 256 MiB at the limit).
    /// Real objects have a few hundred nodes (etcd refuses objects over 1.5 MiB), but a dump
    /// (`kubectl get ... -o yaml`) is one List document: 10 MB of it hold about 600,000.
    pub max_nodes: usize,
    /// YAML nodes the whole source may hold, for callers that keep every document.
    pub max_total_nodes: usize,
}

/// The deepest nesting accepted. Kubernetes clients built on serde_json (kube-rs, which
/// `kubectl ksm` uses for live objects) refuse deeper JSON, so a deeper object could not be
/// read back from a cluster either; the deepest kcm, Flux and Sveltos CRD schemas nest 23
/// levels, and real objects far fewer.
pub const MAX_DEPTH: usize = 128;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_values: 1_000_000,
            max_alias_bytes: 16 * 1024 * 1024,
            max_depth: MAX_DEPTH,
            max_nodes: 750_000,
            max_total_nodes: usize::MAX,
        }
    }
}

/// The message of a document nested deeper than `max_depth`.
fn too_deep(max_depth: usize) -> String {
    format!(
        "the document nests collections more than {max_depth} levels deep: refusing to load it \
         (Kubernetes objects are far shallower)"
    )
}

/// `16 MiB`, `512 KiB`, `100 bytes`.
fn human_bytes(n: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{} KiB", n / 1024)
    } else if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

/// A YAML node and where it came from.
#[derive(Debug, Clone)]
pub struct Node {
    pub kind: NodeKind,
    /// Byte range of the node in its source. For block scalars it starts at the content.
    pub span: Range<usize>,
}

#[derive(Debug, Clone)]
pub enum NodeKind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
    /// An anchored node (`&name ...`) where it is defined, shared with its aliases.
    Anchor(Arc<Node>),
    /// An alias (`*name`) of an anchored node: shared, never copied.
    Alias(Arc<Node>),
}

#[derive(Debug, Clone)]
pub struct Scalar {
    /// The scalar's text after YAML unescaping and folding.
    pub text: String,
    pub style: Style,
    pub value: ScalarValue,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

/// A scalar's text to keep. The scanner's buffer has room for more (a plain scalar's is
/// over 100 bytes): kept, a document of short scalars would take several times its size.
/// Copied rather than shrunk in place, so the buffer freed is the one the next scalar is
/// scanned into, not a hole the size of the rest.
fn scalar_text(text: std::borrow::Cow<str>) -> String {
    match text {
        std::borrow::Cow::Owned(t) if t.capacity() > t.len() => t.as_str().to_owned(),
        t => t.into_owned(),
    }
}

impl Style {
    fn of(style: saphyr_parser::ScalarStyle) -> Style {
        use saphyr_parser::ScalarStyle;
        match style {
            ScalarStyle::Plain => Style::Plain,
            ScalarStyle::SingleQuoted => Style::SingleQuoted,
            ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
            ScalarStyle::Literal => Style::Literal,
            ScalarStyle::Folded => Style::Folded,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ScalarValue {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    String,
}

/// One document of a stream.
#[derive(Debug, Clone)]
pub struct Document {
    /// 0-based index of the document in its source.
    pub index: usize,
    /// None for an empty document (`---` followed by nothing or comments only).
    pub root: Option<Node>,
    /// Byte offset where the document starts.
    pub start: usize,
}

/// A syntax or limit error at a byte offset.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    pub message: String,
    pub offset: usize,
}

impl Node {
    /// Follows aliases (and the anchor of an anchored node).
    pub fn resolved(&self) -> &Node {
        let mut node = self;
        while let NodeKind::Alias(target) | NodeKind::Anchor(target) = &node.kind {
            node = target;
        }
        node
    }

    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.resolved().kind {
            NodeKind::Map(entries) => Some(entries),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.resolved().kind {
            NodeKind::Seq(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.resolved().kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The string a mapping key stands for.
    pub fn key_text(&self) -> Option<&str> {
        self.as_scalar().map(|s| s.text.as_str())
    }

    /// The entry for `key` in a mapping (the last one, as with duplicate keys JSON keeps the last).
    pub fn entry(&self, key: &str) -> Option<&(Node, Node)> {
        self.as_map()?
            .iter()
            .rev()
            .find(|(k, _)| k.key_text() == Some(key))
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    pub fn index(&self, i: usize) -> Option<&Node> {
        self.as_seq()?.get(i)
    }

    /// A short name of the node's type for messages.
    pub fn type_name(&self) -> &'static str {
        match &self.resolved().kind {
            NodeKind::Scalar(s) => match s.value {
                ScalarValue::Null => "null",
                ScalarValue::Bool(_) => "boolean",
                ScalarValue::Int(_) | ScalarValue::Uint(_) => "integer",
                ScalarValue::Float(_) => "number",
                ScalarValue::String => "string",
            },
            NodeKind::Seq(_) => "sequence",
            NodeKind::Map(_) => "mapping",
            // resolved() follows both.
            NodeKind::Alias(_) | NodeKind::Anchor(_) => "alias",
        }
    }

    /// Converts to JSON as the API server would store the object.
    pub fn to_json(&self, limits: &Limits) -> Result<Value, YamlError> {
        json::to_json(self, limits, true)
    }

    /// Converts to JSON keeping every YAML float a double, even a whole one (`1.0`), as a
    /// JSON document written by hand would be read before any round trip through the API
    /// server. For tests that feed values straight to CEL.
    pub fn to_json_exact(&self, limits: &Limits) -> Result<Value, YamlError> {
        json::to_json(self, limits, false)
    }

    /// Maps a byte offset inside this scalar's value text to a byte offset in `source`,
    /// so that a position inside a rule (a block scalar, a quoted string) is shown where it is
    /// in the file. Falls back to the start of the scalar if the text cannot be aligned.
    pub fn value_offset_in_source(&self, source: &Source, value_offset: usize) -> usize {
        let Some(scalar) = self.as_scalar() else {
            return self.span.start;
        };
        scalar::align_offset(
            &scalar.text,
            scalar.style,
            source.text(),
            self.span.clone(),
            value_offset,
        )
    }
}

/// Parses every document of a YAML stream with the default limits.
pub fn parse_documents(source: &Source) -> (Vec<Document>, Option<YamlError>) {
    parse_documents_with(source, &Limits::default())
}

/// [`parse_documents`] with saphyr reading every document, none by the block reader: what
/// the block reader is measured (and tested) against.
#[doc(hidden)]
pub fn parse_documents_by_saphyr(source: &Source) -> (Vec<Document>, Option<YamlError>) {
    let mut docs = Vec::new();
    let err = build::read(
        source,
        None,
        &Limits::default(),
        &mut |d| docs.push(d),
        false,
    );
    (docs, err)
}

/// Parses every document of a YAML stream. A syntax error (or a node limit) ends the
/// stream: the documents before it are returned with the error.
pub fn parse_documents_with(
    source: &Source,
    limits: &Limits,
) -> (Vec<Document>, Option<YamlError>) {
    let mut docs = Vec::new();
    let err = for_each_document(source, limits, &mut |d| docs.push(d));
    (docs, err)
}

/// `text` cut into about `n` pieces of similar size, as byte ranges, each but the first
/// starting at a line `---` (followed by a space, a tab or the end of the line): a document
/// marker, which YAML lets no scalar or collection continue across.
pub fn split_at_documents(text: &str, n: usize) -> Vec<std::ops::Range<usize>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for k in 1..n {
        let target = (text.len() * k / n).max(start);
        let Some(cut) = text[target..]
            .match_indices("\n---")
            .map(|(i, _)| target + i + 1)
            .find(|&i| {
                matches!(
                    text.as_bytes().get(i + 3),
                    None | Some(b'\n' | b'\r' | b' ' | b'\t')
                )
            })
        else {
            break;
        };
        pieces.push(start..cut);
        start = cut;
    }
    pieces.push(start..text.len());
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> (Arc<Source>, Vec<Document>, Option<YamlError>) {
        let src = Source::new("t.yaml", text);
        let (d, e) = parse_documents(&src);
        (src, d, e)
    }

    fn json(text: &str) -> Value {
        let (_, d, e) = docs(text);
        assert!(e.is_none(), "{e:?}");
        d[0].root
            .as_ref()
            .unwrap()
            .to_json(&Limits::default())
            .unwrap()
    }

    #[test]
    fn resolves_scalars_like_kubectl() {
        let v = json(
            "a: 1\nb: 1.5\nc: yes\nd: ~\ne: '1'\nf: 0x1F\ng: 9223372036854775808\nh: 1.0\ni: 1_000\nj: on\nk: 1e3\nl: 010\n",
        );
        assert_eq!(
            v,
            serde_json::json!({"a": 1, "b": 1.5, "c": true, "d": null, "e": "1", "f": 31,
                "g": 9223372036854775808.0, "h": 1, "i": 1000, "j": true, "k": 1000, "l": 8})
        );
        assert!(v["g"].is_f64());
    }

    /// A parsed scalar holds its text and no more: the scanner's buffers have room for over
    /// 100 bytes, which kept would make a document of short scalars take several times its
    /// size (and the node budget's memory bound with it).
    #[test]
    fn scalars_hold_no_room_beyond_their_text() {
        let (_, d, e) = docs("- a\n- 'b'\n- \"c\"\n- |\n  d\n- k: v\n- ''\n");
        assert!(e.is_none(), "{e:?}");
        fn walk(node: &Node, seen: &mut usize) {
            match &node.kind {
                NodeKind::Scalar(s) => {
                    *seen += 1;
                    assert_eq!(s.text.capacity(), s.text.len(), "{:?}", s.text);
                }
                NodeKind::Seq(items) => items.iter().for_each(|n| walk(n, seen)),
                NodeKind::Map(entries) => entries.iter().for_each(|(k, v)| {
                    walk(k, seen);
                    walk(v, seen);
                }),
                NodeKind::Anchor(n) | NodeKind::Alias(n) => walk(n, seen),
            }
        }
        let mut seen = 0;
        walk(d[0].root.as_ref().unwrap(), &mut seen);
        assert_eq!(seen, 7);
    }

    /// Every marker saphyr gives for `text` (events' spans, or the error's), as the byte
    /// offset its character index says and the one its line and column say.
    fn marker_offsets(text: &str) -> Vec<(usize, usize)> {
        let src = Source::new("t.yaml", text);
        let both = |m: saphyr_parser::Marker| {
            (
                src.offset_of_marker(m.index(), m.line(), m.col()),
                src.offset_of(m.line(), m.col()),
            )
        };
        let mut out = Vec::new();
        for event in saphyr_parser::Parser::new_from_str(text) {
            match event {
                Ok((_, span)) => out.extend([both(span.start), both(span.end)]),
                Err(e) => {
                    out.push(both(*e.marker()));
                    break;
                }
            }
        }
        out
    }

    /// The loader takes an ASCII file's offsets from the parser's character index instead of
    /// its lines: both say the same for every marker of every file of testdata/ and of texts
    /// with CRLF, tabs, flow collections, block scalars, comments, documents and errors.
    #[test]
    fn a_markers_index_and_its_line_and_column_give_one_offset() {
        let mut texts: Vec<String> = [
            "a: 1\r\nb:\r\n  - x\r\n  - {c: d, e: [f, g]}\r\n",
            "# c\n---\nk: |\n  one\n  two\n\nm: >-\n  folded\n  text\n...\n---\n- 'q\n  r'\n- \"s\\\"t\"\n",
            "a:\t1\nb: [1,\n  2]\nc: &x {y: z}\nd: *x\n",
            "no: newline at end",
            "a: b: c\n",
            "a: [1, 2\n",
            "\n\n\n  - x\n  - y\n",
        ]
        .map(String::from)
        .to_vec();
        let mut dirs = vec![std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if matches!(
                    path.extension().and_then(|e| e.to_str()),
                    Some("yaml" | "yml" | "json")
                ) && let Ok(text) = std::fs::read_to_string(&path)
                    && text.is_ascii()
                    && text.len() < 1 << 20
                {
                    texts.push(text);
                }
            }
        }
        assert!(texts.len() > 100, "testdata/ read: {}", texts.len());
        let mut markers = 0;
        for text in &texts {
            for (by_index, by_line) in marker_offsets(text) {
                markers += 1;
                assert_eq!(by_index, by_line, "in {text:?}");
            }
        }
        assert!(markers > 10_000, "{markers}");
    }

    #[test]
    fn keeps_multiple_documents_and_their_starts() {
        let (src, d, e) = docs("a: 1\n---\nb: 2\n---\n# empty\n");
        assert!(e.is_none());
        assert_eq!(d.len(), 3);
        assert!(d[2].root.is_none());
        assert_eq!(src.line_col(d[1].start).line, 2);
    }

    #[test]
    fn syntax_error_reports_position_and_keeps_earlier_documents() {
        let (src, d, e) = docs("a: 1\n---\nb: c: d\n");
        let e = e.unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(src.line_col(e.offset).line, 3);
        assert!(e.message.contains("mapping values are not allowed"));
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let (_, d, e) = docs(&text);
        assert!(e.is_none());
        let err = d[0].root.as_ref().unwrap().to_json(&Limits::default());
        let err = err.unwrap_err();
        assert!(
            err.message.contains("more than 1000000 values"),
            "{}",
            err.message
        );
        // It points at the alias whose expansion ran out.
        assert!(
            text[err.offset..].starts_with("*a"),
            "{}",
            &text[err.offset..]
        );
    }

    #[test]
    fn merge_keys_and_aliases_expand() {
        let v = json("base: &b {x: 1, y: 2}\nobj:\n  <<: *b\n  y: 3\nref: *b\n");
        assert_eq!(v["obj"], serde_json::json!({"y": 3, "x": 1}));
        assert_eq!(v["ref"], serde_json::json!({"x": 1, "y": 2}));
    }

    #[test]
    fn positions_inside_block_scalars_map_to_the_file() {
        let text = "spec:\n  rule: |-\n    self.a &&\n      self.b\n";
        let (src, d, _) = docs(text);
        let rule = d[0]
            .root
            .as_ref()
            .unwrap()
            .get("spec")
            .unwrap()
            .get("rule")
            .unwrap();
        let value = &rule.as_scalar().unwrap().text;
        assert_eq!(value, "self.a &&\n  self.b");
        let off = value.find("self.b").unwrap();
        let at = rule.value_offset_in_source(&src, off);
        assert_eq!(&src.text()[at..at + 6], "self.b");
        let lc = src.line_col(at);
        assert_eq!((lc.line, lc.column), (4, 7));
    }

    #[test]
    fn positions_inside_quoted_and_folded_scalars_map_to_the_file() {
        let text = "r: \"self.a == \\\"x\\\" && self.b\"\nf: >-\n  self.c &&\n  self.d\n";
        let (src, d, _) = docs(text);
        let root = d[0].root.as_ref().unwrap();
        let r = root.get("r").unwrap();
        let value = &r.as_scalar().unwrap().text;
        let at = r.value_offset_in_source(&src, value.find("self.b").unwrap());
        assert_eq!(&src.text()[at..at + 6], "self.b");
        let f = root.get("f").unwrap();
        let value = &f.as_scalar().unwrap().text;
        assert_eq!(value, "self.c && self.d");
        let at = f.value_offset_in_source(&src, value.find("self.d").unwrap());
        assert_eq!(src.line_col(at).line, 4);
    }

    #[test]
    fn node_limit_bounds_memory() {
        let src = Source::new("t", "- a\n".repeat(20));
        let limits = Limits {
            max_nodes: 10,
            ..Limits::default()
        };
        let (docs, err) = parse_documents_with(&src, &limits);
        assert!(docs.is_empty());
        let err = err.unwrap();
        assert!(
            err.message
                .contains("document holds more than 10 YAML nodes"),
            "{}",
            err.message
        );
        assert_eq!(src.line_col(err.offset).line, 10);
        // The per-document budget starts again with each document; the total one does not.
        let src = Source::new("t", "a: 1\n---\n".repeat(20));
        let (docs, err) = parse_documents_with(&src, &limits);
        assert_eq!((docs.len(), err), (21, None));
        let total = Limits {
            max_total_nodes: 15,
            ..limits
        };
        let (docs, err) = parse_documents_with(&src, &total);
        assert_eq!(docs.len(), 5);
        assert!(
            err.unwrap()
                .message
                .contains("file holds more than 15 YAML nodes")
        );
    }

    fn depth_error(text: &str) -> (Arc<Source>, YamlError) {
        let (src, _, e) = docs(text);
        let e = e.unwrap_or_else(|| panic!("no error for {:?}", &text[..text.len().min(80)]));
        assert!(
            e.message.contains("more than 128 levels deep"),
            "{}",
            e.message
        );
        (src, e)
    }

    #[test]
    fn deep_nesting_is_an_error_with_its_position_block_and_flow() {
        // Flow: the parser's scanner looks ahead and stops at its own limit of 255 levels.
        let (_, e) = depth_error(&"[".repeat(100_000));
        assert_eq!(e.offset, 255);
        let (_, e) = depth_error(&format!("{}]]", "[".repeat(200)));
        assert_eq!(e.offset, 128);
        // Block sequences written compactly: `- - - ... x` (7,000 levels in 14 KB).
        let (src, e) = depth_error(&format!("{}x\n", "- ".repeat(7_000)));
        assert_eq!(src.line_col(e.offset).column, 257);
        // Block mappings, one level a line.
        let text: String = (0..1000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect();
        let (src, e) = depth_error(&text);
        assert_eq!(src.line_col(e.offset).line, 129);
        // Exactly at the limit is fine.
        let (_, d, e) = docs(&format!("{}x\n", "- ".repeat(128)));
        assert!(e.is_none(), "{e:?}");
        let json = d[0].root.as_ref().unwrap().to_json(&Limits::default());
        assert!(json.is_ok());
    }

    #[test]
    fn aliases_count_where_they_are_used_so_anchor_chains_stop_at_the_limit() {
        // Each anchor nests the previous one a level deeper: 100,000 anchors would expand to
        // 100,000 levels (and dropping the half-built tree recursed as deep).
        let mut text = String::from("a0: &a0 x\n");
        for i in 1..100_000 {
            text.push_str(&format!("a{i}: &a{i} [*a{}]\n", i - 1));
        }
        let (src, e) = depth_error(&text);
        // Line 129 is `a128: &a128 [*a127]`: *a127 is 127 levels deep, inside the mapping and
        // the sequence.
        assert_eq!(src.line_col(e.offset).line, 129);
        assert!(e.message.contains("through this alias"), "{}", e.message);
        // A deep anchor used deep down.
        let deep = format!(
            "a: &a {}x{}\nb: {}*a{}\n",
            "[".repeat(100),
            "]".repeat(100),
            "[".repeat(40),
            "]".repeat(40)
        );
        depth_error(&deep);
    }

    #[test]
    fn nested_anchors_are_shared_not_copied() {
        // 128 anchors one inside another around 20,000 scalars: copying each anchored node
        // into the tree held 128 copies of the scalars.
        let text = format!(
            "{}[{}]{}\n",
            (0..127).map(|i| format!("&a{i} [")).collect::<String>(),
            vec!["x"; 20_000].join(", "),
            "]".repeat(127)
        );
        let (_, d, e) = docs(&text);
        assert!(e.is_none(), "{e:?}");
        fn count(n: &Node) -> usize {
            match &n.kind {
                NodeKind::Scalar(_) | NodeKind::Alias(_) => 1,
                NodeKind::Anchor(t) => count(t),
                NodeKind::Seq(items) => 1 + items.iter().map(count).sum::<usize>(),
                NodeKind::Map(e) => 1 + e.iter().map(|(k, v)| count(k) + count(v)).sum::<usize>(),
            }
        }
        assert_eq!(count(d[0].root.as_ref().unwrap()), 20_128);
    }

    #[test]
    fn aliases_of_long_strings_are_budgeted_in_bytes() {
        // 1,000 bytes, aliased 9^4 times: 6.5 MB from a file of a few hundred bytes.
        let mut text = format!(
            "s: &s \"{}\"\nl0: &l0 [*s, *s, *s, *s, *s, *s, *s, *s, *s]\n",
            "x".repeat(1000)
        );
        for i in 1..4 {
            let p = i - 1;
            text.push_str(&format!(
                "l{i}: &l{i} [{}]\n",
                vec![format!("*l{p}"); 9].join(", ")
            ));
        }
        let (_, d, e) = docs(&text);
        assert!(e.is_none());
        let root = d[0].root.as_ref().unwrap();
        assert!(root.to_json(&Limits::default()).is_ok());
        let small = Limits {
            max_alias_bytes: 1024 * 1024,
            ..Limits::default()
        };
        let err = root.to_json(&small).unwrap_err();
        assert!(
            err.message
                .contains("copy more than 1 MiB of text through this alias"),
            "{}",
            err.message
        );
        // The outermost alias is named: the one in the last mapping entry.
        assert!(
            text[err.offset..].starts_with("*l2"),
            "{}",
            &text[err.offset..]
        );
        // Keys count too (merge keys copy them).
        let keys = format!("b: &b {{{}: 1}}\nc: {{<<: *b}}\n", "k".repeat(2048));
        let (_, d, _) = docs(&keys);
        let tiny = Limits {
            max_alias_bytes: 1024,
            ..Limits::default()
        };
        assert!(d[0].root.as_ref().unwrap().to_json(&tiny).is_err());
    }

    #[test]
    fn non_string_keys_become_strings_and_nan_is_refused() {
        let v = json("1: a\ntrue: b\n");
        assert_eq!(v, serde_json::json!({"1": "a", "true": "b"}));
        let (_, d, _) = docs("a: .nan\n");
        assert!(
            d[0].root
                .as_ref()
                .unwrap()
                .to_json(&Limits::default())
                .is_err()
        );
    }

    #[test]
    fn json_documents_parse_too() {
        let v = json("{\"apiVersion\": \"v1\", \"n\": [1, 2.5, -3], \"s\": \"x\"}");
        assert_eq!(v["n"], serde_json::json!([1, 2.5, -3]));
    }
}
