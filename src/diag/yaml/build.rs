//! saphyr-parser's event stream turned into [`Node`] trees, one document at a time, within the
//! [`Limits`]: YAML nodes per document and per source, and nesting depth.
//!
//! The builder keeps its own stack (no recursion), and it measures depth the way the
//! document will be expanded: an alias is as deep as the anchored node it stands for, placed
//! where the alias is. So a chain of anchors, each one an alias of the previous inside one
//! more level, stops at the limit, and every tree it hands out (or drops half-built on an
//! error) is at most `max_depth` collections deep, aliases included: every later recursion
//! over it (conversion, drop, lint checks) is bounded too.

use std::collections::HashMap;
use std::sync::Arc;

use saphyr_parser::{Event, Parser, Span};

use super::block;
use super::scalar::resolve_tagged;
use super::{Document, Limits, Node, NodeKind, Scalar, ScalarValue, Style, YamlError, scalar_text};
use crate::diag::Source;

/// Parses a YAML stream one document at a time, handing each to `f` as soon as it is
/// complete, so that memory is bounded by the largest document rather than the file.
pub fn for_each_document(
    source: &Source,
    limits: &Limits,
    f: &mut dyn FnMut(Document),
) -> Option<YamlError> {
    documents(source, None, limits, f)
}

/// [`for_each_document`] of the text of `source` in `piece` (a piece cut at a document
/// marker: [`super::split_at_documents`]), read as a stream of its own: its documents are
/// numbered from 0, positions are the source's. Only for a source whose offsets are its
/// saphyr markers' indices ([`Source::offsets_are_indices`]); `None` for any other (the
/// caller reads it whole).
pub fn for_each_document_in(
    source: &Source,
    piece: std::ops::Range<usize>,
    limits: &Limits,
    f: &mut dyn FnMut(Document),
) -> Option<Option<YamlError>> {
    if !source.offsets_are_indices() || source.text().get(piece.clone()).is_none() {
        return None;
    }
    Some(documents(source, Some(piece), limits, f))
}

fn documents(
    source: &Source,
    piece: Option<std::ops::Range<usize>>,
    limits: &Limits,
    f: &mut dyn FnMut(Document),
) -> Option<YamlError> {
    read(source, piece, limits, f, true)
}

/// The documents of `source` (or of its `piece`), each read by [`block`] when `block_first`
/// and it can, from the first it cannot by saphyr.
pub(super) fn read(
    source: &Source,
    piece: Option<std::ops::Range<usize>>,
    limits: &Limits,
    f: &mut dyn FnMut(Document),
    block_first: bool,
) -> Option<YamlError> {
    let (text, base) = match &piece {
        Some(p) => (&source.text()[p.clone()], Some(p.start)),
        None => (source.text(), None),
    };
    let mut builder = Builder {
        limits: *limits,
        nodes_left: limits.max_nodes,
        total_left: limits.max_total_nodes,
        stack: Vec::new(),
        root: None,
        anchors: HashMap::new(),
        doc_start: 0,
        index: 0,
    };
    let block = block_first && source.offsets_are_indices() && block::readable(text);
    // Where the next document starts.
    let mut from = 0;
    loop {
        if block {
            let at = Offsets { source, base };
            while from < text.len() {
                // The events go to the builder as they are read. A limit the builder meets
                // declines the document too: saphyr reads it again and says where.
                let nodes_before = builder.total_left;
                let mut feed = |event: Event, span: Span| builder.feed(&at, event, span, f).is_ok();
                match block::document(text, from, &mut feed) {
                    Some(next) if next > from => from = next,
                    _ => {
                        builder.rewind(nodes_before);
                        break;
                    }
                }
            }
            if from >= text.len() {
                return None;
            }
        }
        // saphyr from the document declined: the rest of the stream, read as the whole
        // stream is (it starts at a `---` line after a document that ended there, or at the
        // start). It stops, for the block reader, after a document that ends at a `---`.
        match saphyr(source, text, base, from, &mut builder, f, block) {
            Ok(Some(next)) if next > from => from = next,
            Ok(_) => return None,
            Err(e) => return Some(e),
        }
    }
}

/// saphyr's events of `text` from `from` (a `---` line, or 0) fed to `builder`: to the end,
/// or (`one`) to the end of the first document that ends at a `---` line, whose start it
/// returns (unless an anchor or a tag was read before: the end then).
fn saphyr(
    source: &Source,
    text: &str,
    base: Option<usize>,
    from: usize,
    builder: &mut Builder,
    f: &mut dyn FnMut(Document),
    mut one: bool,
) -> Result<Option<usize>, YamlError> {
    let at = Offsets {
        source,
        base: if from == 0 {
            base
        } else {
            Some(base.unwrap_or(0) + from)
        },
    };
    let rest = &text[from..];
    let mut parser = Parser::new_from_str(rest);
    while let Some(event) = parser.next_event() {
        let (event, span) = match event {
            Ok(e) => e,
            Err(err) => {
                let m = err.marker();
                // The scanner's own bound on flow nesting (255 levels), met when it looks
                // ahead of the events the depth limit sees.
                let message = if err.info() == "recursion limit exceeded" {
                    super::too_deep(builder.limits.max_depth)
                } else {
                    err.info().to_string()
                };
                return Err(YamlError {
                    message,
                    offset: at.of(*m),
                });
            }
        };
        // saphyr keeps anchors (and tags' handles) from one document to the next: once one
        // is read, only the stream read on from here is the whole stream's.
        let (anchor, tagged) = match &event {
            Event::Scalar(_, _, anchor, tag) => (*anchor, tag.is_some()),
            Event::SequenceStart(anchor, tag) | Event::MappingStart(anchor, tag) => {
                (*anchor, tag.is_some())
            }
            _ => (0, false),
        };
        one &= anchor == 0 && !tagged;
        let ended = matches!(event, Event::DocumentEnd);
        builder.feed(&at, event, span, f)?;
        if one && ended {
            // Offsets are marker indices here (the block reader reads only such text).
            let end = span.start.index();
            let line_start = end == 0 || rest.as_bytes().get(end - 1) == Some(&b'\n');
            if line_start && block::marker_at(rest.as_bytes(), end, b"---") {
                return Ok(Some(from + end));
            }
        }
    }
    Ok(None)
}

/// Byte offsets of saphyr's markers in the source: of the whole text, or (`base`) of a piece
/// of a source whose offsets are marker indices, starting at byte `base`.
struct Offsets<'a> {
    source: &'a Source,
    base: Option<usize>,
}

impl Offsets<'_> {
    fn of(&self, m: saphyr_parser::Marker) -> usize {
        match self.base {
            None => self.source.offset_of_marker(m.index(), m.line(), m.col()),
            Some(base) => (base + m.index()).min(self.source.text().len()),
        }
    }
}

enum DocEvent {
    Start(usize),
    End(Option<Node>),
}

/// A collection being built. `height` is the largest height of its children so far (a
/// scalar is 0 high, a collection one more than its highest child).
enum Frame {
    Seq {
        start: usize,
        anchor: usize,
        items: Vec<Node>,
        height: usize,
    },
    Map {
        start: usize,
        anchor: usize,
        entries: Vec<(Node, Node)>,
        pending_key: Option<Node>,
        height: usize,
    },
}

struct Builder {
    limits: Limits,
    stack: Vec<Frame>,
    root: Option<Node>,
    /// Anchored nodes of the current document with their heights.
    anchors: HashMap<usize, (Arc<Node>, usize)>,
    doc_start: usize,
    nodes_left: usize,
    total_left: usize,
    /// The index of the next document.
    index: usize,
}

impl Builder {
    /// Drops what it holds of a document it was fed part of (nothing of it was handed
    /// out: a document goes out when it ends), as it was before with `total_left` nodes
    /// left in the source.
    fn rewind(&mut self, total_left: usize) {
        self.stack.clear();
        self.root = None;
        self.anchors.clear();
        self.total_left = total_left;
    }

    /// Takes one event; hands a document to `f` when it ends.
    fn feed(
        &mut self,
        offsets: &Offsets,
        event: Event<'_>,
        span: Span,
        f: &mut dyn FnMut(Document),
    ) -> Result<(), YamlError> {
        match self.push(offsets, event, span)? {
            Some(DocEvent::Start(start)) => {
                self.doc_start = start;
                self.nodes_left = self.limits.max_nodes;
            }
            Some(DocEvent::End(root)) => {
                // `---` followed by nothing (or `null`) is an empty document, which kubectl
                // skips.
                let root = root.filter(|r| {
                    !matches!(&r.resolved().kind, NodeKind::Scalar(s) if s.value == ScalarValue::Null)
                });
                f(Document {
                    index: self.index,
                    root,
                    start: self.doc_start,
                });
                self.index += 1;
            }
            None => {}
        }
        Ok(())
    }

    fn push(
        &mut self,
        offsets: &Offsets,
        event: Event<'_>,
        span: Span,
    ) -> Result<Option<DocEvent>, YamlError> {
        let at = |m: saphyr_parser::Marker| offsets.of(m);
        let start = at(span.start);
        let end = || at(span.end);
        if matches!(
            event,
            Event::Scalar(..)
                | Event::SequenceStart(..)
                | Event::MappingStart(..)
                | Event::Alias(_)
        ) {
            self.count_node(start)?;
        }
        match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => Ok(None),
            Event::DocumentStart(_) => {
                self.anchors.clear();
                self.root = None;
                Ok(Some(DocEvent::Start(start)))
            }
            Event::DocumentEnd => {
                self.anchors.clear();
                Ok(Some(DocEvent::End(self.root.take())))
            }
            Event::Alias(id) => {
                let Some((target, height)) = self.anchors.get(&id) else {
                    return Err(YamlError {
                        message: "unknown anchor".into(),
                        offset: start,
                    });
                };
                let (target, height) = (Arc::clone(target), *height);
                if self.stack.len() + height > self.limits.max_depth {
                    return Err(YamlError {
                        message: format!(
                            "{} (through this alias, which stands for a node {height} levels deep)",
                            super::too_deep(self.limits.max_depth)
                        ),
                        offset: start,
                    });
                }
                let node = Node {
                    kind: NodeKind::Alias(target),
                    span: start..end(),
                };
                self.add(node, 0, height);
                Ok(None)
            }
            Event::Scalar(text, style, anchor, tag) => {
                let style = Style::of(style);
                let value = resolve_tagged(&text, style, tag.as_deref());
                let text = scalar_text(text);
                let node = Node {
                    kind: NodeKind::Scalar(Scalar { text, style, value }),
                    span: start..end(),
                };
                self.add(node, anchor, 0);
                Ok(None)
            }
            Event::SequenceStart(anchor, _) => {
                self.open(start)?;
                self.stack.push(Frame::Seq {
                    start,
                    anchor,
                    items: Vec::new(),
                    height: 0,
                });
                Ok(None)
            }
            Event::MappingStart(anchor, _) => {
                self.open(start)?;
                self.stack.push(Frame::Map {
                    start,
                    anchor,
                    entries: Vec::new(),
                    pending_key: None,
                    height: 0,
                });
                Ok(None)
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let end = end();
                let (kind, start, anchor, height) = match self.stack.pop() {
                    Some(Frame::Seq {
                        start,
                        anchor,
                        items,
                        height,
                    }) => (NodeKind::Seq(items), start, anchor, height),
                    Some(Frame::Map {
                        start,
                        anchor,
                        entries,
                        height,
                        ..
                    }) => (NodeKind::Map(entries), start, anchor, height),
                    None => {
                        return Err(YamlError {
                            message: "unbalanced collection end".into(),
                            offset: start,
                        });
                    }
                };
                let node = Node {
                    kind,
                    span: start..end,
                };
                self.add(node, anchor, height + 1);
                Ok(None)
            }
        }
    }

    fn count_node(&mut self, offset: usize) -> Result<(), YamlError> {
        if self.nodes_left == 0 {
            return Err(YamlError {
                message: format!(
                    "the document holds more than {} YAML nodes: refusing to load it (the limit \
                     bounds memory; Kubernetes objects are far smaller)",
                    self.limits.max_nodes
                ),
                offset,
            });
        }
        if self.total_left == 0 {
            return Err(YamlError {
                message: format!(
                    "the file holds more than {} YAML nodes: refusing to load it (the limit \
                     bounds memory; split the file)",
                    self.limits.max_total_nodes
                ),
                offset,
            });
        }
        self.nodes_left -= 1;
        self.total_left -= 1;
        Ok(())
    }

    /// A collection starts: one level deeper.
    fn open(&self, offset: usize) -> Result<(), YamlError> {
        if self.stack.len() >= self.limits.max_depth {
            return Err(YamlError {
                message: super::too_deep(self.limits.max_depth),
                offset,
            });
        }
        Ok(())
    }

    fn add(&mut self, node: Node, anchor: usize, height: usize) {
        let node = if anchor != 0 {
            // The anchored node stays in place (its span points at the definition) and is
            // shared with the aliases that name it, never copied.
            let shared = Arc::new(node);
            self.anchors.insert(anchor, (Arc::clone(&shared), height));
            Node {
                span: shared.span.clone(),
                kind: NodeKind::Anchor(shared),
            }
        } else {
            node
        };
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq {
                items,
                height: frame_height,
                ..
            }) => {
                items.push(node);
                *frame_height = (*frame_height).max(height);
            }
            Some(Frame::Map {
                entries,
                pending_key,
                height: frame_height,
                ..
            }) => {
                *frame_height = (*frame_height).max(height);
                match pending_key.take() {
                    None => *pending_key = Some(node),
                    Some(key) => entries.push((key, node)),
                }
            }
        }
    }
}
