//! A reader of the YAML that manifests are written in, into the events saphyr-parser gives
//! for it: block mappings and sequences indented with spaces, plain keys, one-line plain and
//! quoted values, literal and folded block scalars, one-line flow sequences of scalars, `{}`,
//! comments and `---`. Anything else in a document (other flow collections, anchors, tags,
//! multi-line plain or quoted scalars, escapes, directives, or an error) declines it: saphyr
//! reads it, from its start on as the rest of the stream, and this reader takes the stream
//! back at the `---` line where saphyr ends that document. A tab or a carriage return
//! anywhere leaves the whole text to saphyr.
//!
//! The events, spans included, are saphyr's to the byte: the tests hold the reader to it on
//! the repository's files and on generated and edited documents, and the builder that turns
//! both into trees, with its limits, is one. Only for text whose byte offsets are saphyr's
//! marker indices (ASCII): a marker here is a byte offset in the text read.

use std::borrow::Cow;

use saphyr_parser::{Event, Marker, ScalarStyle, Span};

/// Where the events go as they are read, each with its span: `false` stops the reading
/// (the document is then declined, and what was taken of it is to be dropped).
pub(super) type Sink<'s, 'a> = dyn FnMut(Event<'a>, Span) -> bool + 's;

/// Collections one inside another that this reader follows; deeper documents are saphyr's
/// (and the builder's depth limit).
const MAX_NESTING: usize = 64;

/// The longest implicit key YAML allows.
const MAX_KEY: usize = 1024;

/// Whether `text` may be read here at all: a tab or a carriage return anywhere leaves the
/// whole text to saphyr (both change what indentation and line ends mean).
pub(super) fn readable(text: &str) -> bool {
    memchr::memchr2(b'\t', b'\r', text.as_bytes()).is_none()
}

/// The events of the document of `text` that starts at `start` (the start of the text, or
/// of a `---` line), handed to `out` as they are read, and where the next one starts: the
/// next `---` line or the end of the text. `None` when the document is not one this reader
/// reads, or `out` stopped it: the events handed out are then to be dropped. A text of
/// comments and blank lines before its first `---` (or alone) is no document: no events,
/// and the `---` (or the end) as the next start.
pub(super) fn document<'a>(text: &'a str, start: usize, out: &mut Sink<'_, 'a>) -> Option<usize> {
    let mut r = Reader {
        text,
        b: text.as_bytes(),
        out,
        depth: 0,
    };
    r.document(start)
}

/// Where reading goes on after a node: the first token of the next line that holds one, or
/// the end of the document (a `---` line or the end of the text).
#[derive(Clone, Copy)]
struct Next {
    at: usize,
    /// The token's column; `None` at the end of the document.
    indent: Option<usize>,
}

impl Next {
    /// Whether the next token is inside a collection indented `indent` deep (`None`: the
    /// document's root).
    fn deeper_than(&self, indent: Option<usize>) -> bool {
        match (self.indent, indent) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(a), Some(b)) => a > b,
        }
    }
}

struct Reader<'a, 'o> {
    text: &'a str,
    b: &'a [u8],
    out: &'o mut Sink<'o, 'a>,
    depth: usize,
}

fn mark(at: usize) -> Marker {
    Marker::new(at, 0, 0)
}

fn span(start: usize, end: usize) -> Span {
    Span::new(mark(start), mark(end))
}

impl<'a> Reader<'a, '_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.b.get(at).copied()
    }

    /// Whether `at` is a space, a line break or the end of the text.
    fn blank(&self, at: usize) -> bool {
        matches!(self.byte(at), None | Some(b' ' | b'\n'))
    }

    fn skip_spaces(&self, mut at: usize) -> usize {
        while self.byte(at) == Some(b' ') {
            at += 1;
        }
        at
    }

    /// The start of the line after the one `at` is on (or the end of the text).
    fn next_line(&self, at: usize) -> usize {
        match memchr::memchr(b'\n', &self.b[at.min(self.b.len())..]) {
            Some(i) => at + i + 1,
            None => self.b.len(),
        }
    }

    /// Whether the line at `at` (a line start) is a document marker, `---` or `...`.
    fn marker_line(&self, at: usize, marker: &[u8; 3]) -> bool {
        marker_at(self.b, at, marker)
    }

    /// Whether a block sequence's `-` is at `at` (followed by a space or the line's end).
    fn dash(&self, at: usize) -> bool {
        self.byte(at) == Some(b'-') && self.blank(at + 1)
    }

    fn push(&mut self, event: Event<'a>, start: usize, end: usize) -> Option<()> {
        (self.out)(event, span(start, end)).then_some(())
    }

    fn scalar(
        &mut self,
        text: Cow<'a, str>,
        style: ScalarStyle,
        start: usize,
        end: usize,
    ) -> Option<()> {
        self.push(Event::Scalar(text, style, 0, None), start, end)
    }

    /// From `at` (a line start), past blank and comment lines, to the next token. `None` at
    /// what this reader leaves alone: a `...` line or a directive.
    fn skip(&self, mut at: usize) -> Option<Next> {
        loop {
            if at >= self.b.len() {
                return Some(Next {
                    at: self.b.len(),
                    indent: None,
                });
            }
            match self.b[at] {
                b'-' if self.marker_line(at, b"---") => {
                    return Some(Next { at, indent: None });
                }
                b'.' if self.marker_line(at, b"...") => return None,
                b'%' => return None,
                _ => {}
            }
            let token = self.skip_spaces(at);
            match self.byte(token) {
                None => {
                    return Some(Next {
                        at: self.b.len(),
                        indent: None,
                    });
                }
                Some(b'\n') => at = token + 1,
                Some(b'#') => at = self.next_line(token),
                Some(_) => {
                    return Some(Next {
                        at: token,
                        indent: Some(token - at),
                    });
                }
            }
        }
    }

    /// The rest of a line after a value: spaces, then a comment or the line's end. The
    /// next token, or `None` when something else follows.
    fn after_value(&self, at: usize) -> Option<Next> {
        let at = self.skip_spaces(at);
        match self.byte(at) {
            None => self.skip(at),
            Some(b'\n') => self.skip(at + 1),
            Some(b'#') if self.byte(at - 1) == Some(b' ') => self.skip(self.next_line(at)),
            Some(_) => None,
        }
    }

    fn document(&mut self, start: usize) -> Option<usize> {
        let explicit = self.marker_line(start, b"---");
        let body = if explicit {
            // `---`, then nothing but a comment on its line.
            let after = self.skip_spaces(start + 3);
            match self.byte(after) {
                None | Some(b'\n') => {}
                Some(b'#') if after > start + 3 => {}
                Some(_) => return None,
            }
            self.next_line(after)
        } else {
            start
        };
        let next = self.skip(body)?;
        let doc_start = match (explicit, next.indent) {
            (true, _) => start,
            // Comments and blank lines only, before a `---` or alone: no document.
            (false, None) => return Some(next.at),
            (false, Some(_)) => next.at,
        };
        self.push(Event::DocumentStart(explicit), doc_start, doc_start)?;
        let next = if next.indent.is_none() {
            // An empty document: saphyr reads an empty plain scalar (null).
            self.scalar(Cow::Borrowed(""), ScalarStyle::Plain, next.at, next.at)?;
            next
        } else {
            let after = self.block_node(next)?;
            if after.indent.is_some() {
                return None;
            }
            after
        };
        self.push(Event::DocumentEnd, next.at, next.at)?;
        Some(next.at)
    }

    /// The collection whose first token is `next`, on a line of its own (a scalar there,
    /// which may go on over several lines, or flow, is declined).
    fn block_node(&mut self, next: Next) -> Option<Next> {
        let indent = next.indent?;
        if self.dash(next.at) {
            self.sequence(next.at, indent, false)
        } else {
            let colon = self.key(next.at)?;
            self.mapping(next.at, colon, indent)
        }
    }

    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= MAX_NESTING).then_some(())
    }

    /// A plain key at `at` followed by `:` and a space or the line's end: the key's end
    /// (where the `:` is).
    fn key(&self, at: usize) -> Option<usize> {
        let first = self.byte(at)?;
        if is_indicator(first) || first == b' ' || first == b'\n' {
            return None;
        }
        let line = &self.b[at..];
        let mut i = 1;
        loop {
            match line.get(i).copied() {
                None | Some(b'\n') => return None,
                Some(b':') if matches!(line.get(i + 1), None | Some(b' ' | b'\n')) => {
                    // A space before the `:` would end the key's span before it.
                    return (line[i - 1] != b' ' && i <= MAX_KEY).then_some(at + i);
                }
                Some(b'#') if line[i - 1] == b' ' => return None,
                Some(_) => i += 1,
            }
            if i > MAX_KEY {
                return None;
            }
        }
    }

    /// A mapping `indent` deep whose first key is at `first`, its `:` at `colon`.
    fn mapping(&mut self, first: usize, colon: usize, indent: usize) -> Option<Next> {
        self.enter()?;
        self.push(Event::MappingStart(0, None), first, first)?;
        let (mut key_at, mut colon) = (first, colon);
        loop {
            self.scalar(
                Cow::Borrowed(&self.text[key_at..colon]),
                ScalarStyle::Plain,
                key_at,
                colon,
            )?;
            let next = self.value(colon, indent)?;
            match next.indent {
                Some(i) if i == indent => {
                    key_at = next.at;
                    colon = self.key(key_at)?;
                }
                Some(i) if i > indent => return None,
                _ => {
                    self.push(Event::MappingEnd, next.at, next.at)?;
                    self.depth -= 1;
                    return Some(next);
                }
            }
        }
    }

    /// A mapping's value, after the `:` at `colon`, in a mapping indented `indent` deep.
    fn value(&mut self, colon: usize, indent: usize) -> Option<Next> {
        let at = self.skip_spaces(colon + 1);
        match self.byte(at) {
            None | Some(b'\n') | Some(b'#') => {
                let next = self.skip(self.next_line(at))?;
                match next.indent {
                    Some(i) if i > indent => self.block_node(next),
                    Some(i) if i == indent && self.dash(next.at) => {
                        self.sequence(next.at, indent, true)
                    }
                    _ => {
                        // No value: null, an empty span at the `:`.
                        self.scalar(Cow::Borrowed(""), ScalarStyle::Plain, colon, colon)?;
                        Some(next)
                    }
                }
            }
            Some(_) => self.inline(at, indent),
        }
    }

    /// A sequence whose first `-` is at `first`, `indent` deep; `indentless` when it is a
    /// mapping's value at the mapping's own indentation.
    fn sequence(&mut self, first: usize, indent: usize, indentless: bool) -> Option<Next> {
        self.enter()?;
        let start = if indentless {
            // saphyr starts such a sequence at its first item's token.
            let item = self.skip_spaces(first + 1);
            if matches!(self.byte(item), None | Some(b'\n' | b'#')) {
                return None;
            }
            item
        } else {
            first
        };
        self.push(Event::SequenceStart(0, None), start, start)?;
        let mut dash = first;
        loop {
            let item = self.skip_spaces(dash + 1);
            let next = match self.byte(item) {
                None | Some(b'\n') | Some(b'#') => {
                    let next = self.skip(self.next_line(item))?;
                    if !next.deeper_than(Some(indent)) {
                        // An empty item.
                        return None;
                    }
                    self.block_node(next)?
                }
                Some(_) if self.dash(item) => return None,
                Some(_) => match self.key(item) {
                    Some(colon) => self.mapping(item, colon, indent + (item - dash))?,
                    None => self.inline(item, indent)?,
                },
            };
            match next.indent {
                Some(i) if i == indent && self.dash(next.at) => dash = next.at,
                Some(i) if i > indent || (i == indent && !indentless) => return None,
                _ => {
                    self.push(Event::SequenceEnd, next.at, next.at)?;
                    self.depth -= 1;
                    return Some(next);
                }
            }
        }
    }

    /// A value that starts on its key's (or its `-`'s) line, at `at`, in a collection
    /// indented `parent` deep.
    fn inline(&mut self, at: usize, parent: usize) -> Option<Next> {
        let next = match self.b[at] {
            b'|' | b'>' => return self.block_scalar(at, parent),
            b'"' | b'\'' => self.quoted(at)?,
            b'[' => self.flow_sequence(at)?,
            b'{' => self.empty_flow(at)?,
            b'-' | b'?' | b':' if self.blank(at + 1) => return None,
            b'?' | b':' => return None,
            c if is_indicator(c) && c != b'-' => return None,
            _ => self.plain(at)?,
        };
        // A value goes on over a line more indented than its collection: not read here.
        if next.deeper_than(Some(parent)) {
            return None;
        }
        Some(next)
    }

    /// A plain scalar on one line.
    fn plain(&mut self, at: usize) -> Option<Next> {
        let line_end = self.next_line(at);
        let line = &self.b[at..line_end];
        let mut end = 0;
        let mut i = 0;
        while i < line.len() {
            match line[i] {
                b'\n' => break,
                b' ' => {}
                b'#' if i > 0 && line[i - 1] == b' ' => break,
                b':' if matches!(line.get(i + 1), None | Some(b' ' | b'\n')) => return None,
                _ => end = i + 1,
            }
            i += 1;
        }
        self.scalar(
            Cow::Borrowed(&self.text[at..at + end]),
            ScalarStyle::Plain,
            at,
            at + end,
        )?;
        self.after_value(at + i)
    }

    /// A quoted scalar on one line, without escapes but `''` in single quotes. saphyr ends
    /// its span at the end of its line (past spaces and a comment).
    fn quoted(&mut self, at: usize) -> Option<Next> {
        let (value, style, close) = self.quoted_text(at)?;
        let end = self.line_end_after(close + 1)?;
        self.scalar(value, style, at, end)?;
        self.after_value(close + 1)
    }

    /// The value of the quoted scalar at `at`, its style and where its closing quote is.
    fn quoted_text(&self, at: usize) -> Option<(Cow<'a, str>, ScalarStyle, usize)> {
        let quote = self.b[at];
        let mut i = at + 1;
        let mut doubled = false;
        let close = loop {
            match self.byte(i)? {
                b'\n' => return None,
                b'\\' if quote == b'"' => return None,
                c if c == quote => {
                    if quote == b'\'' && self.byte(i + 1) == Some(b'\'') {
                        doubled = true;
                        i += 2;
                        continue;
                    }
                    break i;
                }
                _ => i += 1,
            }
        };
        let inner = &self.text[at + 1..close];
        let value = if doubled {
            Cow::Owned(inner.replace("''", "'"))
        } else {
            Cow::Borrowed(inner)
        };
        let style = if quote == b'"' {
            ScalarStyle::DoubleQuoted
        } else {
            ScalarStyle::SingleQuoted
        };
        Some((value, style, close))
    }

    /// A flow sequence on one line of plain and quoted scalars, `[a, "b"]` (or `[ ]`).
    fn flow_sequence(&mut self, at: usize) -> Option<Next> {
        let mut i = self.skip_spaces(at + 1);
        self.push(Event::SequenceStart(0, None), at, i)?;
        if self.byte(i) != Some(b']') {
            loop {
                i = match self.byte(i)? {
                    b'"' | b'\'' => {
                        let (value, style, close) = self.quoted_text(i)?;
                        // In a flow, saphyr ends a quoted scalar's span at the next token.
                        let end = self.skip_spaces(close + 1);
                        self.scalar(value, style, i, end)?;
                        end
                    }
                    c if is_indicator(c) || c == b' ' || c == b'\n' => return None,
                    _ => {
                        let (mut j, mut end) = (i, i);
                        loop {
                            match self.byte(j)? {
                                b',' | b']' => break,
                                b'\n' | b'[' | b'{' | b'}' => return None,
                                b'#' if self.b[j - 1] == b' ' => return None,
                                b':' if matches!(
                                    self.byte(j + 1),
                                    None | Some(b' ' | b'\n' | b',' | b'[' | b']' | b'{' | b'}')
                                ) =>
                                {
                                    return None;
                                }
                                b' ' => {}
                                _ => end = j + 1,
                            }
                            j += 1;
                        }
                        self.scalar(
                            Cow::Borrowed(&self.text[i..end]),
                            ScalarStyle::Plain,
                            i,
                            end,
                        )?;
                        j
                    }
                };
                match self.byte(i)? {
                    b',' => {
                        i = self.skip_spaces(i + 1);
                        // `[a, ]` and `[a,,b]`: left to saphyr.
                        if matches!(self.byte(i), None | Some(b']' | b',' | b'\n')) {
                            return None;
                        }
                    }
                    b']' => break,
                    _ => return None,
                }
            }
        }
        let end = self.line_end_after(i + 1)?;
        self.push(Event::SequenceEnd, i, end)?;
        self.after_value(i + 1)
    }

    /// `{}`.
    fn empty_flow(&mut self, at: usize) -> Option<Next> {
        if self.byte(at + 1) != Some(b'}') {
            return None;
        }
        let end = self.line_end_after(at + 2)?;
        self.push(Event::MappingStart(0, None), at, at + 1)?;
        self.push(Event::MappingEnd, at + 1, end)?;
        self.after_value(at + 2)
    }

    /// After a quoted scalar or a flow collection that ends at `at`: where saphyr ends its
    /// span, the end of the line (past spaces and a comment); `None` when more follows.
    fn line_end_after(&self, at: usize) -> Option<usize> {
        let rest = self.skip_spaces(at);
        match self.byte(rest) {
            None | Some(b'\n') => {}
            Some(b'#') if rest > at => {}
            Some(_) => return None,
        }
        Some(memchr::memchr(b'\n', &self.b[rest..]).map_or(self.b.len(), |i| rest + i))
    }

    /// A block scalar, literal (`|`, `|-`, `|+`) or folded (`>`, `>-`, `>+`, its lines
    /// indented alike), whose header is at `at`, the value of a collection indented `parent`
    /// deep.
    fn block_scalar(&mut self, at: usize, parent: usize) -> Option<Next> {
        let folded = self.b[at] == b'>';
        #[derive(PartialEq)]
        enum Chomp {
            Clip,
            Strip,
            Keep,
        }
        let (chomp, after) = match self.byte(at + 1) {
            Some(b'-') => (Chomp::Strip, at + 2),
            Some(b'+') => (Chomp::Keep, at + 2),
            _ => (Chomp::Clip, at + 1),
        };
        let after = self.skip_spaces(after);
        if self.byte(after) != Some(b'\n') {
            return None;
        }
        // The indentation: the first line with content; blank lines before it no longer.
        let mut line = after + 1;
        let mut blank_before = 0;
        let indent = loop {
            let token = self.skip_spaces(line);
            match self.byte(token) {
                None => return None,
                Some(b'\n') => {
                    blank_before = blank_before.max(token - line);
                    line = token + 1;
                }
                Some(_) => break token - line,
            }
        };
        if indent <= parent || blank_before > indent {
            return None;
        }
        let content_start = line + indent;
        // Lines from the first with content: `value` holds them up to the last one with
        // content, `breaks` the empty lines after it.
        let mut value = String::new();
        let mut lines = 0;
        let mut breaks = 0;
        let mut line = after + 1;
        let end = loop {
            let token = self.skip_spaces(line);
            let spaces = token - line;
            match self.byte(token) {
                // A text that ends inside the scalar without a line break: saphyr reads its
                // last line differently; left to it.
                None if line < self.b.len() => return None,
                None => break self.b.len(),
                Some(b'\n') => {
                    if spaces > indent {
                        return None;
                    }
                    if lines > 0 {
                        breaks += 1;
                    } else {
                        value.push('\n');
                    }
                    line = token + 1;
                }
                Some(_) if spaces < indent => break token,
                // A more indented line of a folded scalar is not folded: not read here.
                Some(_) if folded && spaces > indent => return None,
                Some(_) => {
                    let next = self.next_line(token);
                    if self.b[next - 1] != b'\n' {
                        return None;
                    }
                    if folded && lines > 0 && breaks == 0 {
                        // Folded: a line break between two lines is a space; followed by
                        // empty lines, it is dropped and each of them is a line break.
                        value.push(' ');
                    } else if lines > 0 && !folded {
                        value.push('\n');
                    }
                    for _ in 0..breaks {
                        value.push('\n');
                    }
                    breaks = 0;
                    value.push_str(&self.text[line + indent..next - 1]);
                    lines += 1;
                    line = next;
                }
            }
        };
        match chomp {
            Chomp::Strip => {}
            Chomp::Clip => value.push('\n'),
            Chomp::Keep => {
                for _ in 0..=breaks {
                    value.push('\n');
                }
            }
        }
        let style = if folded {
            ScalarStyle::Folded
        } else {
            ScalarStyle::Literal
        };
        self.scalar(Cow::Owned(value), style, content_start, end)?;
        let next = self.skip(line)?;
        if next.deeper_than(Some(parent)) {
            return None;
        }
        Some(next)
    }
}

/// Whether the line of `b` that starts at `at` is the document marker `marker` (`---` or
/// `...`, followed by a space or the line's end).
pub(super) fn marker_at(b: &[u8], at: usize, marker: &[u8; 3]) -> bool {
    b.get(at..).is_some_and(|rest| rest.starts_with(marker))
        && matches!(b.get(at + 3), None | Some(b' ' | b'\n'))
}

/// Bytes that start something other than a plain scalar, or that saphyr refuses there.
fn is_indicator(c: u8) -> bool {
    matches!(
        c,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

#[cfg(test)]
mod tests {
    //! The block reader against saphyr: for every text, the documents (trees, spans, values,
    //! starts) and the error read with it first are those saphyr alone reads.

    use super::*;
    use crate::diag::Source;
    use crate::diag::yaml::{Document, Limits, Node, NodeKind, YamlError, build};
    use crate::testing::Rng;

    fn read_all(text: &str, block_first: bool) -> (Vec<Document>, Option<YamlError>) {
        read_within(text, &Limits::default(), block_first)
    }

    fn read_within(
        text: &str,
        limits: &Limits,
        block_first: bool,
    ) -> (Vec<Document>, Option<YamlError>) {
        let source = Source::new("t.yaml", text);
        let mut docs = Vec::new();
        let err = build::read(&source, None, limits, &mut |d| docs.push(d), block_first);
        (docs, err)
    }

    /// How many documents the block reader reads before it declines one.
    fn read_here(text: &str) -> usize {
        if !readable(text) || !text.is_ascii() {
            return 0;
        }
        let (mut from, mut n) = (0, 0);
        while from < text.len() {
            let mut started = 0;
            let mut count = |e: Event, _: Span| {
                started += usize::from(matches!(e, Event::DocumentStart(_)));
                true
            };
            match document(text, from, &mut count) {
                Some(next) if next > from => {
                    n += started;
                    from = next;
                }
                _ => break,
            }
        }
        n
    }

    /// A tree written out with its spans, an alias as where it is (not what it stands for:
    /// the repository's hostile files expand to gigabytes).
    fn show(node: &Node, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(out, "{:?}", node.span);
        match &node.kind {
            NodeKind::Scalar(s) => {
                let _ = write!(out, "{:?}{:?}{:?}", s.text, s.style, s.value);
            }
            NodeKind::Seq(items) => {
                out.push('[');
                for item in items {
                    show(item, out);
                    out.push(',');
                }
                out.push(']');
            }
            NodeKind::Map(entries) => {
                out.push('{');
                for (k, v) in entries {
                    show(k, out);
                    out.push(':');
                    show(v, out);
                    out.push(',');
                }
                out.push('}');
            }
            NodeKind::Anchor(inner) => {
                out.push('&');
                show(inner, out);
            }
            NodeKind::Alias(target) => {
                let _ = write!(out, "*{:?}", target.span);
            }
        }
        out.push('\n');
    }

    fn shown(docs: &[Document], err: &Option<YamlError>) -> String {
        let mut out = String::new();
        for d in docs {
            out.push_str(&format!("doc {} at {}: ", d.index, d.start));
            if let Some(root) = &d.root {
                show(root, &mut out);
            }
            out.push('\n');
        }
        out.push_str(&format!("{err:?}"));
        out
    }

    #[track_caller]
    fn same(text: &str) {
        same_within(text, &Limits::default());
    }

    #[track_caller]
    fn same_within(text: &str, limits: &Limits) {
        let (saphyr, saphyr_err) = read_within(text, limits, false);
        let (ours, our_err) = read_within(text, limits, true);
        let (ours, theirs) = (shown(&ours, &our_err), shown(&saphyr, &saphyr_err));
        if ours != theirs {
            let first = ours
                .lines()
                .zip(theirs.lines())
                .find(|(a, b)| a != b)
                .unwrap_or(("", ""));
            let excerpt: String = text.chars().take(400).collect();
            panic!(
                "read differently: here {:?}, saphyr {:?}, in {excerpt:?}",
                first.0, first.1
            );
        }
    }

    #[test]
    fn reads_what_saphyr_reads_in_the_repository() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (mut files, mut read) = (0, 0);
        let mut dirs: Vec<_> = ["testdata", "crds", "examples"]
            .iter()
            .map(|d| root.join(d))
            .collect();
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let yaml = path
                    .extension()
                    .is_some_and(|x| x == "yaml" || x == "yml" || x == "json");
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                if !yaml {
                    continue;
                }
                same(&text);
                files += 1;
                read += read_here(&text);
            }
        }
        assert!(files > 100, "{files} files");
        // Most documents in the repository are plain block YAML: read here, not declined.
        assert!(
            read > files / 2,
            "{read} documents read here in {files} files"
        );
    }

    #[test]
    fn reads_what_saphyr_reads_by_hand() {
        for text in [
            "",
            "\n\n# c\n",
            "a: b\n",
            "a: b",
            "# x\n\na: 1\n",
            "a:\nb: 1\n",
            "a: # c\nb:",
            "a: \"q\" # c\n",
            "a: \"q\"   \nb: 'it''s'\n",
            "a: 'q'",
            "a: 'q' # c",
            "a: |\n  x\n\n  y\n\n\nb: 1\n",
            "a: |+\n  x\n\n# c\nb: 1",
            "a: |-  \n  x\nb: |\n  y\n  ",
            "a: |\n\n  x\n",
            "a: |\n  x\n   y\n  # not a comment\nb: 1\n",
            "a: |\n  x",
            "a: |\n    x\n  b: 1\n",
            "a:\n  - x\n  - y\nb: 1\n",
            "a:\n- x\n-\n  y: 1\n",
            "a:\n- b: 1\n  c: 2\n- d\ne: 1",
            "- a: 1\n  b: 2\n- c\n",
            "- a:\n  - x\n",
            "- |\n  x\n- y\n",
            "---\na: 1\n---\nb: 2\n",
            "# x\n---\na: 1\n...\n---\nb: 2\n",
            "---\n# only\n---\n--- # c\na: 1\n",
            "a: 1\n---\n",
            "---\n",
            "---",
            "--- a\n",
            "a: [] # c\nb: {}\nc: [ ]\n",
            "k: [a, \"b\" ,c d ,  'e'] # x\nl: [a,b]\nm: [ a ]\nn: [a, ]\no: {a: 1}\n",
            "- [a, b]\n- [c]\n",
            "a: x # c\n# d\n\nb: y\n",
            "a:b: c\nhttp://x: 1\na b: c\n",
            "a : 1\n",
            "a: b: c\n",
            "a: b:\n",
            "a: -1\nb: --x\nc: - x\n",
            "a: x\n  y\n",
            "a:\n  x\n",
            "a: 1\n  b: 2\n",
            "a:\n  b: 1\n c: 2\n",
            "- x\n  - y\n",
            "  a: 1\n  b: 2\n",
            "a: 1\n- b\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: 1\n%YAML 1.2\n---\nb: 1\n",
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a: \"x\\ny\"\n",
            "a: 'x\n  y'\n",
            "a:\tb\n",
            "a: b\r\nc: d\r\n",
            "a: >\n  x\n  y\n",
            "a: |2\n   x\n",
            "? a\n: b\n",
            "a: yes\nb: 0x1F\nc: 1e3\nd: ~\ne: null\nf: 0o17\n",
            "-\n- a\n",
            "- - a\n",
            "a:\n-\n  b: 1\n",
            "a: |\nb: 1\n",
            "a: |\n  x\n \n  y\n",
            "a: |\n  x\n     \n  y\n",
            "a: |\n    \n  x\n",
            "a:\n  b:\n    c:\n      d: |-\n        x\n        y\ne: 1\n",
            "a: >\n  x\n  y\n\n  z\n\n\n  w\nb: >-\n\n  x\n  y\nc: >+\n  x\n\n",
            "a: >-\n  x\n   y\n  z\n",
            // Declined documents among read ones: saphyr's, then the block reader's again.
            "a: >\n  x\n---\nb: 1\n---\nc: [1]\n---\nd: 2\n",
            "a: 1\n---\nb: >\n  x\n...\n---\nc: 1\n",
            "a: &x 1\n---\nb: 1\n---\nc: *x\n",
            "a: !t 1\n---\nb: 1\n",
            "--- |\nfoo\n---\nbar\n---\na: 1\n",
            "a: 1\n--- >\n  x\n---\nb: 2\n",
            "a: [1,\n---\nb: 1\n",
            "a: \"x\n---\nb: 1\n",
        ] {
            same(text);
        }
    }

    /// A small deterministic generator of the YAML manifests are written in, with the
    /// constructs the reader declines mixed in, and some of its texts then cut or edited.
    struct Gen(Rng);

    impl std::ops::Deref for Gen {
        type Target = Rng;
        fn deref(&self) -> &Rng {
            &self.0
        }
    }

    impl std::ops::DerefMut for Gen {
        fn deref_mut(&mut self) -> &mut Rng {
            &mut self.0
        }
    }

    impl Gen {
        fn pad(&mut self, out: &mut String) {
            if self.chance(10) {
                out.push_str(self.pick(&[" ", "  ", " # c", "  #c"]));
            }
        }

        fn filler(&mut self, out: &mut String, indent: usize) {
            while self.chance(12) {
                match self.below(3) {
                    0 => out.push('\n'),
                    1 => out.push_str(&format!("{}# note\n", " ".repeat(self.below(indent + 3)))),
                    _ => out.push_str(&format!("{}\n", " ".repeat(self.below(indent + 3)))),
                }
            }
        }

        fn scalar(&mut self) -> &'static str {
            if self.chance(4) {
                // Declined (or refused by saphyr).
                return self.pick(&[
                    "a: b",
                    "\"a\\nb\"",
                    "[a]",
                    "{a: b}",
                    "&a x",
                    "*a",
                    "!!str 1",
                    "? x",
                    "%x",
                    "@x",
                    "`x",
                    "- x",
                    ": x",
                    "'x",
                    "\"x",
                    "x:",
                    "[] x",
                    "'q' x",
                ]);
            }
            self.pick(&[
                "x",
                "1",
                "true",
                "null",
                "~",
                "x y",
                "http://a:b",
                "a#b",
                "-1",
                "--x",
                "0x1F",
                "1e3",
                "'q'",
                "'it''s'",
                "\"q\"",
                "\"\"",
                "''",
                "[]",
                "{}",
                "a-b.c/d",
                "v1beta1",
                "has(self.status) && self.status.x == 1",
                "'a: b'",
                "\"a # b\"",
                "x #c",
                "x  ",
                "1.5",
                "-.inf",
                "0o17",
                "+1",
                "yes",
                "No",
                "2024-01-01",
                "'#'",
                "a,b[c]{d}",
            ])
        }

        fn key(&mut self) -> &'static str {
            if self.chance(3) {
                return self.pick(&["-x", "'q'", "\"q\"", "a #b", "? a", "[a]", "&a k", "a "]);
            }
            self.pick(&[
                "a",
                "name",
                "spec",
                "a.b/c",
                "x-y",
                "k8s.io/app",
                "a:b",
                "url",
                "<<",
                "1",
                "true",
            ])
        }

        fn literal(&mut self, out: &mut String, parent: usize) {
            let header = if self.chance(5) {
                self.pick(&["|2", "| # c", ">1"])
            } else {
                self.pick(&[
                    "|", "|-", "|+", "|  ", "|-  ", "|+ ", ">", ">-", ">+", ">- ",
                ])
            };
            out.push_str(header);
            out.push('\n');
            let indent = parent + 1 + self.below(3) - usize::from(self.chance(5));
            for _ in 0..1 + self.below(4) {
                match self.below(6) {
                    0 => out.push('\n'),
                    1 => out.push_str(&format!("{}\n", " ".repeat(self.below(indent + 1)))),
                    2 if self.chance(10) => out.push_str(&format!("{}\n", " ".repeat(indent + 2))),
                    2 => out.push_str(&format!("{}  more\n", " ".repeat(indent))),
                    3 => out.push_str(&format!("{}# kept\n", " ".repeat(indent))),
                    _ => out.push_str(&format!("{}self.x == 1\n", " ".repeat(indent))),
                }
            }
        }

        /// ` scalar`, maybe a comment, and the line's end.
        fn scalar_line(&mut self, out: &mut String) {
            out.push(' ');
            let s = self.scalar();
            out.push_str(s);
            self.pad(out);
            out.push('\n');
        }

        /// A value after `key:` (the `:` written), in a mapping `indent` deep.
        fn value(&mut self, out: &mut String, indent: usize, depth: usize) {
            match self.below(if depth > 4 { 3 } else { 7 }) {
                0 | 1 => self.scalar_line(out),
                2 => {
                    out.push(' ');
                    self.literal(out, indent);
                }
                // Nothing on the line: an empty value, or a collection below.
                n => {
                    self.pad(out);
                    out.push('\n');
                    self.filler(out, indent);
                    if n == 4 {
                        let inner = indent + 1 + self.below(3);
                        self.mapping(out, inner, depth + 1);
                    } else if n > 4 {
                        let inner = if self.chance(50) { indent } else { indent + 2 };
                        self.sequence(out, inner, depth + 1);
                    }
                }
            }
        }

        fn mapping(&mut self, out: &mut String, indent: usize, depth: usize) {
            for i in 0..1 + self.below(4) {
                if i > 0 || !out.ends_with("- ") {
                    out.push_str(&" ".repeat(indent));
                }
                let key = self.key();
                out.push_str(key);
                out.push(':');
                self.value(out, indent, depth);
                self.filler(out, indent);
            }
        }

        fn sequence(&mut self, out: &mut String, indent: usize, depth: usize) {
            for _ in 0..1 + self.below(3) {
                out.push_str(&" ".repeat(indent));
                out.push('-');
                match self.below(if depth > 4 { 2 } else { 6 }) {
                    0 | 1 => self.scalar_line(out),
                    2 => {
                        out.push(' ');
                        self.literal(out, indent);
                    }
                    3 => {
                        out.push('\n');
                        self.mapping(out, indent + 2, depth + 1);
                    }
                    4 if self.chance(20) => {
                        out.push_str(self.pick(&["\n", " - x\n", " \n"]));
                    }
                    4 => {
                        out.push(' ');
                        self.literal(out, indent);
                    }
                    _ => {
                        out.push(' ');
                        self.mapping(out, indent + 2, depth + 1);
                    }
                }
                self.filler(out, indent);
            }
        }

        fn text(&mut self) -> String {
            let mut out = String::new();
            if self.chance(10) {
                out.push_str(self.pick(&["# head\n", "\n", "%YAML 1.2\n---\n"]));
            }
            for d in 0..1 + self.below(3) {
                if d > 0 || self.chance(30) {
                    out.push_str(if self.chance(5) {
                        self.pick(&["...\n---\n", "--- x\n"])
                    } else {
                        self.pick(&["---\n", "--- # c\n"])
                    });
                }
                if self.chance(90) {
                    if self.chance(15) {
                        self.sequence(&mut out, 0, 0);
                    } else {
                        let indent = usize::from(self.chance(5));
                        self.mapping(&mut out, indent, 0);
                    }
                }
                self.filler(&mut out, 0);
            }
            if self.chance(10) {
                out.pop();
            }
            if self.chance(15) {
                // An edit: a cut, or a byte YAML gives a meaning to.
                for _ in 0..1 + self.below(3) {
                    if out.is_empty() {
                        break;
                    }
                    let at = self.below(out.len());
                    if self.chance(50) {
                        let end = (at + 1 + self.below(8)).min(out.len());
                        out.replace_range(at..end, "");
                    } else {
                        let b = self.pick(&[
                            " ", "\n", "-", ":", "#", "|", "'", "\"", "[", "}", "&", "\t", "...",
                        ]);
                        out.insert_str(at, b);
                    }
                }
            }
            out
        }
    }

    #[test]
    fn meets_the_limits_where_saphyr_meets_them() {
        // A node limit met while the block reader reads declines the document: saphyr reads
        // it again and says where, and the documents before it are handed out once.
        let text = "a: 1\nb: 2\n---\na: 1\nb:\n  c: 3\n  d: [ ]\n---\na: 1\n---\nx: |\n  y\nz: 1\n";
        // Nodes per document: 5, 9, 3, 5.
        for (max_nodes, max_total_nodes, read, message) in [
            (9, 20, 3, "the file holds more than 20 YAML nodes"),
            (8, 100, 1, "the document holds more than 8 YAML nodes"),
        ] {
            let limits = Limits {
                max_nodes,
                max_total_nodes,
                ..Limits::default()
            };
            for cut in 0..text.len() {
                same_within(&text[..cut], &limits);
            }
            let (docs, err) = read_within(text, &limits, true);
            assert_eq!(docs.len(), read);
            assert!(err.is_some_and(|e| e.message.starts_with(message)));
        }
        let limits = Limits {
            max_nodes: 9,
            max_total_nodes: 25,
            ..Limits::default()
        };
        let mut g = Gen(Rng(7));
        for _ in 0..2_000 {
            same_within(&g.text(), &limits);
        }
    }

    #[test]
    fn reads_what_saphyr_reads_in_generated_documents() {
        let mut g = Gen(Rng(0x9e37_79b9_7f4a_7c15));
        let (mut read, mut all) = (0, 0);
        for _ in 0..20_000 {
            let text = g.text();
            same(&text);
            read += read_here(&text);
            all += read_all(&text, false).0.len();
        }
        // The generator writes mostly what the reader reads: the comparison is mostly of
        // documents read here, not declined.
        assert!(read * 5 > all * 2, "{read} of {all} documents read here");
    }
}
