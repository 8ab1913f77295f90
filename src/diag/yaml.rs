//! YAML (and JSON) documents with source spans.
//!
//! Built on saphyr-parser's event stream so that every node keeps the byte range it came from:
//! lint diagnostics point at the exact key or value, and inside a readiness rule's text
//! (block scalars included). Values are resolved the way kubectl reads manifests
//! (sigs.k8s.io/yaml, YAML 1.1 scalars) and converted to JSON the way the API server stores
//! them: integers that fit int64 stay integers, every other number is a double.
//!
//! Hostile input is bounded: nesting depth is limited by the parser, alias expansion and
//! document size by [`Limits`].

use std::ops::Range;
use std::sync::Arc;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};
use serde_json::{Map, Number, Value};

use super::source::Source;

/// Bounds for hostile documents.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Values one document may expand to, aliases included (a "billion laughs" guard).
    pub max_values: usize,
    /// YAML nodes one document may hold. A node costs a few hundred bytes once parsed and
    /// converted, so this is what bounds memory when documents are processed one at a time
    /// (real objects have a few hundred nodes; etcd refuses objects over 1.5 MiB).
    pub max_nodes: usize,
    /// YAML nodes the whole source may hold, for callers that keep every document.
    pub max_total_nodes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_values: 1_000_000,
            max_nodes: 250_000,
            max_total_nodes: usize::MAX,
        }
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
    /// An alias of an anchored node (shared, never copied).
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
    /// Follows aliases.
    pub fn resolved(&self) -> &Node {
        let mut node = self;
        while let NodeKind::Alias(target) = &node.kind {
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
            NodeKind::Alias(_) => unreachable!("resolved() follows aliases"),
        }
    }

    /// Converts to JSON as the API server would store the object.
    pub fn to_json(&self, limits: &Limits) -> Result<Value, YamlError> {
        let mut budget = limits.max_values;
        to_json(self, &mut budget, true).map_err(|e| e.with_limit(limits))
    }

    /// Converts to JSON keeping every YAML float a double, even a whole one (`1.0`), as a
    /// JSON document written by hand would be read before any round trip through the API
    /// server. For tests that feed values straight to CEL.
    pub fn to_json_exact(&self, limits: &Limits) -> Result<Value, YamlError> {
        let mut budget = limits.max_values;
        to_json(self, &mut budget, false).map_err(|e| e.with_limit(limits))
    }

    /// Maps a byte offset inside this scalar's value text to a byte offset in `source`,
    /// so that a position inside a rule (a block scalar, a quoted string) is shown where it is
    /// in the file. Falls back to the start of the scalar if the text cannot be aligned.
    pub fn value_offset_in_source(&self, source: &Source, value_offset: usize) -> usize {
        let Some(scalar) = self.as_scalar() else {
            return self.span.start;
        };
        align_offset(
            &scalar.text,
            scalar.style,
            source.text(),
            self.span.clone(),
            value_offset,
        )
    }
}

impl YamlError {
    fn with_limit(mut self, limits: &Limits) -> YamlError {
        if self.message == TOO_MANY {
            self.message = format!(
                "the document expands to more than {} values through this alias: refusing to \
                 load it (a \"billion laughs\" document?)",
                limits.max_values
            );
        }
        self
    }
}

const TOO_MANY: &str = "too many values";

fn to_json(node: &Node, budget: &mut usize, server: bool) -> Result<Value, YamlError> {
    if *budget == 0 {
        return Err(YamlError {
            message: TOO_MANY.into(),
            offset: node.span.start,
        });
    }
    *budget -= 1;
    Ok(match &node.kind {
        // The error names the outermost alias whose expansion ran out of budget.
        NodeKind::Alias(target) => to_json(target, budget, server).map_err(|mut e| {
            if e.message == TOO_MANY {
                e.offset = node.span.start;
            }
            e
        })?,
        NodeKind::Scalar(s) => scalar_json(s, node.span.start, server)?,
        NodeKind::Seq(items) => Value::Array(
            items
                .iter()
                .map(|n| to_json(n, budget, server))
                .collect::<Result<_, _>>()?,
        ),
        NodeKind::Map(entries) => {
            let mut map = Map::with_capacity(entries.len());
            let mut merges = Vec::new();
            for (k, v) in entries {
                let ks = k.as_scalar();
                if ks.is_some_and(|s| s.style == Style::Plain && s.text == "<<") {
                    merges.push(v);
                    continue;
                }
                let key = match ks {
                    Some(s) => s.text.clone(),
                    None => {
                        return Err(YamlError {
                            message: "a mapping key must be a scalar (Kubernetes objects are \
                                      JSON: keys are strings)"
                                .into(),
                            offset: k.span.start,
                        });
                    }
                };
                map.insert(key, to_json(v, budget, server)?);
            }
            // YAML 1.1 merge keys (`<<: *base`), which kubectl honours: explicit keys win.
            for merge in merges {
                let sources: Vec<&Node> = match merge.as_seq() {
                    Some(items) => items.iter().collect(),
                    None => vec![merge],
                };
                for src in sources {
                    let Value::Object(m) = to_json(src, budget, server)? else {
                        return Err(YamlError {
                            message: "a merge key (`<<`) must refer to a mapping".into(),
                            offset: src.span.start,
                        });
                    };
                    for (k, v) in m {
                        map.entry(k).or_insert(v);
                    }
                }
            }
            Value::Object(map)
        }
    })
}

fn scalar_json(s: &Scalar, offset: usize, server: bool) -> Result<Value, YamlError> {
    Ok(match s.value {
        ScalarValue::Null => Value::Null,
        ScalarValue::Bool(b) => Value::Bool(b),
        ScalarValue::Int(i) => Value::Number(i.into()),
        ScalarValue::Uint(u) => float_json(u as f64, offset, false)?,
        ScalarValue::Float(f) => float_json(f, offset, server)?,
        ScalarValue::String => Value::String(s.text.clone()),
    })
}

/// A number the way it comes back from the API server: Go's JSON encoder writes a float below
/// 1e21 in its shortest decimal form without an exponent (a whole one without a fraction:
/// 9223372036854774784.0 is written 9223372036854775000), and the server decodes a number
/// without a fraction or exponent that fits int64 as int64.
fn float_json(f: f64, offset: usize, server: bool) -> Result<Value, YamlError> {
    if server
        && f.fract() == 0.0
        && f.abs() < 1e21
        && let Ok(i) = format!("{f}").parse::<i64>()
    {
        return Ok(Value::Number(i.into()));
    }
    Number::from_f64(f).map(Value::Number).ok_or(YamlError {
        message: "infinity and NaN cannot be represented in a Kubernetes object (JSON)".into(),
        offset,
    })
}

/// Resolves a plain scalar like sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 types).
pub fn resolve_plain_scalar(text: &str) -> ScalarValue {
    resolve_plain(text)
}

fn resolve_plain(text: &str) -> ScalarValue {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarValue::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return ScalarValue::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return ScalarValue::Bool(false);
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return ScalarValue::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return ScalarValue::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return ScalarValue::Float(f64::NAN),
        _ => {}
    }
    let first = text.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return ScalarValue::String;
    }
    let cleaned: String = text.chars().filter(|&c| c != '_').collect();
    if let Some(v) = parse_int(&cleaned) {
        return v;
    }
    if is_yaml_float(&cleaned)
        && let Ok(f) = cleaned.parse::<f64>()
    {
        return ScalarValue::Float(f);
    }
    ScalarValue::String
}

/// Integers as Go's strconv.ParseInt/ParseUint with base 0 read them.
fn parse_int(s: &str) -> Option<ScalarValue> {
    let (neg, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let (radix, body) = if let Some(r) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, r)
    } else if let Some(r) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        (2, r)
    } else if let Some(r) = digits
        .strip_prefix("0o")
        .or_else(|| digits.strip_prefix("0O"))
    {
        (8, r)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(body, radix).ok()?;
    if neg {
        if magnitude <= i64::MAX as u128 + 1 {
            return Some(ScalarValue::Int((-(magnitude as i128)) as i64));
        }
        return Some(ScalarValue::Float(-(magnitude as f64)));
    }
    if magnitude <= i64::MAX as u128 {
        Some(ScalarValue::Int(magnitude as i64))
    } else if magnitude <= u64::MAX as u128 {
        Some(ScalarValue::Uint(magnitude as u64))
    } else {
        Some(ScalarValue::Float(magnitude as f64))
    }
}

/// go-yaml v2's float pattern: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'-' | b'+')) {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if int_digits == 0 && i == frac_start {
            return false;
        }
    } else if int_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return false;
        }
    }
    i == b.len()
}

fn resolve_tagged(text: &str, style: Style, tag: Option<&Tag>) -> ScalarValue {
    if let Some(tag) = tag
        && (tag.handle == "tag:yaml.org,2002:" || tag.handle == "!!")
    {
        return match tag.suffix.as_str() {
            "str" | "binary" | "timestamp" => ScalarValue::String,
            "null" => ScalarValue::Null,
            "bool" | "int" | "float" => resolve_plain(text),
            _ => ScalarValue::String,
        };
    }
    if style == Style::Plain {
        resolve_plain(text)
    } else {
        ScalarValue::String
    }
}

/// Aligns a position in a scalar's value with the source by walking both texts: the value
/// is the source minus indentation, quotes, escapes and line folding, so every value
/// character can be found in order in the source.
fn align_offset(
    value: &str,
    style: Style,
    src: &str,
    span: Range<usize>,
    value_offset: usize,
) -> usize {
    let span = span.start.min(src.len())..span.end.min(src.len());
    let Some(region) = src.get(span.clone()) else {
        return span.start;
    };
    let mut src_iter = region.char_indices().peekable();
    // Skip the opening quote.
    if matches!(style, Style::SingleQuoted | Style::DoubleQuoted) {
        src_iter.next();
    }
    for (vi, vc) in value.char_indices() {
        loop {
            let Some(&(si, sc)) = src_iter.peek() else {
                return span.start;
            };
            let matches_here = sc == vc || (vc == ' ' && (sc == '\n' || sc == '\r'));
            if matches_here {
                if vi >= value_offset {
                    return span.start + si;
                }
                src_iter.next();
                break;
            }
            src_iter.next();
        }
    }
    // The offset is at (or past) the end of the value: point after the last character.
    src_iter
        .peek()
        .map_or(span.end, |&(si, _)| span.start + si)
        .min(span.end)
}

/// Parses every document of a YAML stream with the default limits.
pub fn parse_documents(source: &Source) -> (Vec<Document>, Option<YamlError>) {
    parse_documents_with(source, &Limits::default())
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

/// Parses a YAML stream one document at a time, handing each to `f` as soon as it is
/// complete, so that memory is bounded by the largest document rather than the file.
pub fn for_each_document(
    source: &Source,
    limits: &Limits,
    f: &mut dyn FnMut(Document),
) -> Option<YamlError> {
    let mut parser = Parser::new_from_str(source.text());
    let mut builder = Builder {
        nodes_left: limits.max_nodes,
        max_nodes: limits.max_nodes,
        total_left: limits.max_total_nodes,
        max_total_nodes: limits.max_total_nodes,
        ..Builder::default()
    };
    let mut index = 0;
    while let Some(event) = parser.next_event() {
        let (event, span) = match event {
            Ok(e) => e,
            Err(err) => {
                let m = err.marker();
                return Some(YamlError {
                    message: err.info().to_string(),
                    offset: source.offset_of(m.line(), m.col()),
                });
            }
        };
        match builder.push(source, event, span) {
            Ok(Some(DocEvent::Start(start))) => {
                builder.doc_start = start;
                builder.nodes_left = builder.max_nodes;
            }
            Ok(Some(DocEvent::End(root))) => {
                // `---` followed by nothing (or `null`) is an empty document, which kubectl skips.
                let root = root.filter(
                    |r| !matches!(&r.kind, NodeKind::Scalar(s) if s.value == ScalarValue::Null),
                );
                f(Document {
                    index,
                    root,
                    start: builder.doc_start,
                });
                index += 1;
            }
            Ok(None) => {}
            Err(e) => return Some(e),
        }
    }
    None
}

enum DocEvent {
    Start(usize),
    End(Option<Node>),
}

enum Frame {
    Seq {
        start: usize,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        start: usize,
        anchor: usize,
        entries: Vec<(Node, Node)>,
        pending_key: Option<Node>,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
    anchors: std::collections::HashMap<usize, Arc<Node>>,
    doc_start: usize,
    nodes_left: usize,
    max_nodes: usize,
    total_left: usize,
    max_total_nodes: usize,
}

impl Builder {
    fn push(
        &mut self,
        source: &Source,
        event: Event<'_>,
        span: Span,
    ) -> Result<Option<DocEvent>, YamlError> {
        let start = source.offset_of(span.start.line(), span.start.col());
        let end = || source.offset_of(span.end.line(), span.end.col());
        if matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        ) {
            if self.nodes_left == 0 {
                return Err(YamlError {
                    message: format!(
                        "the document holds more than {} YAML nodes: refusing to load it (the \
                         limit bounds memory; Kubernetes objects are far smaller)",
                        self.max_nodes
                    ),
                    offset: start,
                });
            }
            if self.total_left == 0 {
                return Err(YamlError {
                    message: format!(
                        "the file holds more than {} YAML nodes: refusing to load it (the limit \
                         bounds memory; split the file)",
                        self.max_total_nodes
                    ),
                    offset: start,
                });
            }
            self.nodes_left -= 1;
            self.total_left -= 1;
        }
        match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => Ok(None),
            Event::DocumentStart(_) => {
                self.anchors.clear();
                self.root = None;
                Ok(Some(DocEvent::Start(start)))
            }
            Event::DocumentEnd => Ok(Some(DocEvent::End(self.root.take()))),
            Event::Alias(id) => {
                let Some(target) = self.anchors.get(&id) else {
                    return Err(YamlError {
                        message: "unknown anchor".into(),
                        offset: start,
                    });
                };
                let node = Node {
                    kind: NodeKind::Alias(Arc::clone(target)),
                    span: start..end(),
                };
                self.add(node, 0);
                Ok(None)
            }
            Event::Scalar(text, style, anchor, tag) => {
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted => Style::SingleQuoted,
                    ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                    ScalarStyle::Literal => Style::Literal,
                    ScalarStyle::Folded => Style::Folded,
                };
                let value = resolve_tagged(&text, style, tag.as_deref());
                let node = Node {
                    kind: NodeKind::Scalar(Scalar {
                        text: text.into_owned(),
                        style,
                        value,
                    }),
                    span: start..end(),
                };
                self.add(node, anchor);
                Ok(None)
            }
            Event::SequenceStart(anchor, _) => {
                self.stack.push(Frame::Seq {
                    start,
                    anchor,
                    items: Vec::new(),
                });
                Ok(None)
            }
            Event::MappingStart(anchor, _) => {
                self.stack.push(Frame::Map {
                    start,
                    anchor,
                    entries: Vec::new(),
                    pending_key: None,
                });
                Ok(None)
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let end = end();
                let (node, anchor) = match self.stack.pop() {
                    Some(Frame::Seq {
                        start,
                        anchor,
                        items,
                    }) => (
                        Node {
                            kind: NodeKind::Seq(items),
                            span: start..end,
                        },
                        anchor,
                    ),
                    Some(Frame::Map {
                        start,
                        anchor,
                        entries,
                        ..
                    }) => (
                        Node {
                            kind: NodeKind::Map(entries),
                            span: start..end,
                        },
                        anchor,
                    ),
                    None => {
                        return Err(YamlError {
                            message: "unbalanced collection end".into(),
                            offset: start,
                        });
                    }
                };
                self.add(node, anchor);
                Ok(None)
            }
        }
    }

    fn add(&mut self, node: Node, anchor: usize) {
        let node = if anchor != 0 {
            let shared = Arc::new(node);
            self.anchors.insert(anchor, Arc::clone(&shared));
            // The anchored node itself stays in place (spans point at the definition);
            // later aliases share it.
            Arc::unwrap_or_clone(shared.clone())
        } else {
            node
        };
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries,
                pending_key,
                ..
            }) => match pending_key.take() {
                None => *pending_key = Some(node),
                Some(key) => entries.push((key, node)),
            },
        }
    }
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

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(100_000);
        let (_, _, e) = docs(&text);
        assert!(e.unwrap().message.contains("recursion limit"));
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
