//! Source files and positions.
//!
//! Every diagnostic points into a [`Source`] by byte range; line and column are computed from
//! the range only when a renderer needs them, so the hot lint path never builds them.
//!
//! A source also knows which of its bytes must never be shown (the values of Secrets, marked
//! by the loader): excerpts are cut from [`Source::masked_text`], where they are starred out.

use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Lines longer than this (bytes) are never shown in excerpts: minified JSON is unreadable
/// there.
pub const MAX_SHOWN_LINE: usize = 1000;

/// A named input text (a file, standard input, or an embedded example).
#[derive(Debug)]
pub struct Source {
    name: String,
    text: String,
    /// Where each line starts, found on first use: a file that parses without a finding
    /// never needs them (the loader takes ASCII offsets from the parser), and a huge one
    /// refused by a budget builds them only after its parse is dropped.
    line_starts: OnceLock<Vec<usize>>,
    /// Lines of the original file before `text` (an [`Source::excerpt`]; 0 for a whole file):
    /// lines are numbered as in the file.
    line_base: usize,
    /// Characters of the file's line before `text` starts (a partial excerpt).
    col_base: usize,
    /// An excerpt cut inside a line.
    partial: bool,
    /// Character and byte offsets coincide (the common case), so columns need no scan.
    ascii: bool,
    /// Ranges never to show, and the masked text once built.
    hidden: Mutex<Hidden>,
}

#[derive(Debug, Default)]
struct Hidden {
    ranges: Vec<Range<usize>>,
    masked: Option<Arc<str>>,
}

/// A 1-based line and column; the column counts characters, as editors and kubectl do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<Source> {
        let text = text.into();
        Arc::new(Source {
            name: name.into(),
            ascii: text.is_ascii(),
            text,
            line_starts: OnceLock::new(),
            line_base: 0,
            col_base: 0,
            partial: false,
            hidden: Mutex::default(),
        })
    }

    /// The whole lines around `span`, `context` more on each side, as a source of their own
    /// that numbers lines and columns as this one does and hides what this one hides; and
    /// `span` in it. A finding kept after its file is dropped (one checked across files) keeps
    /// this, not the whole text, so memory does not grow with the sum of the inputs.
    ///
    /// Context lines longer than [`MAX_SHOWN_LINE`] are left out; when the span's own lines or
    /// their neighbours are that long (minified JSON), an excerpt is never shown, and only the
    /// span's text is kept ([`Source::is_partial`]).
    pub fn excerpt(&self, span: Range<usize>, context: usize) -> (Arc<Source>, Range<usize>) {
        let span = self.clamp(span);
        let (first, last) = (self.line_index(span.start), self.line_index(span.end));
        let last_line = self.line_starts().len() - 1;
        let long = |i: usize| {
            let line = &self.text[self.line_range(i)];
            line.trim_end_matches(['\n', '\r']).len() > MAX_SHOWN_LINE
        };
        let near = first.saturating_sub(1)..=(last + 1).min(last_line);
        let (range, line_base, col_base, partial) = if near.clone().any(long) {
            let before = self.text[self.line_starts()[first]..span.start]
                .chars()
                .count();
            (span.clone(), first, before, true)
        } else {
            let mut lo = first;
            while lo > 0 && first - lo < context && !long(lo - 1) {
                lo -= 1;
            }
            let mut hi = last;
            while hi < last_line && hi - last < context && !long(hi + 1) {
                hi += 1;
            }
            let range = self.line_starts()[lo]..self.line_range(hi).end;
            (range, lo, 0, false)
        };
        let text = &self.text[range.clone()];
        let hidden = self.hidden.lock().unwrap_or_else(PoisonError::into_inner);
        let ranges = hidden
            .ranges
            .iter()
            .filter(|r| r.start < range.end && r.end > range.start)
            .map(|r| r.start.max(range.start) - range.start..r.end.min(range.end) - range.start)
            .collect();
        let first_col = if line_base == 0 { self.col_base } else { 0 };
        let excerpt = Arc::new(Source {
            name: self.name.clone(),
            ascii: text.is_ascii(),
            text: text.to_string(),
            line_starts: OnceLock::new(),
            line_base: self.line_base + line_base,
            col_base: col_base + first_col,
            partial: self.partial || partial,
            hidden: Mutex::new(Hidden {
                ranges,
                masked: None,
            }),
        });
        (excerpt, span.start - range.start..span.end - range.start)
    }

    /// A piece of a file's text known only by where it starts: a partial excerpt that
    /// numbers its position as the file does.
    pub fn fragment(name: &str, text: &str, start: LineCol) -> Arc<Source> {
        Arc::new(Source {
            name: name.to_string(),
            ascii: text.is_ascii(),
            text: text.to_string(),
            line_starts: OnceLock::new(),
            line_base: start.line.saturating_sub(1),
            col_base: start.column.saturating_sub(1),
            partial: true,
            hidden: Mutex::default(),
        })
    }

    /// Whether this is an excerpt cut inside its lines, never to be shown as an excerpt.
    pub fn is_partial(&self) -> bool {
        self.partial
    }

    /// Where each line starts (the first at 0), found once.
    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let breaks = memchr::memchr_iter(b'\n', self.text.as_bytes()).count();
            let mut starts = Vec::with_capacity(breaks + 1);
            starts.push(0);
            starts.extend(newlines(&self.text));
            starts
        })
    }

    /// The byte range of the line at `index` (into `line_starts`), with its line break.
    fn line_range(&self, index: usize) -> Range<usize> {
        let start = self.line_starts()[index];
        let end = self
            .line_starts()
            .get(index + 1)
            .copied()
            .unwrap_or(self.text.len());
        start..end
    }

    /// The 0-based index (into `line_starts`) of the line holding a byte offset.
    fn line_index(&self, offset: usize) -> usize {
        match self.line_starts().binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// The index into `line_starts` of a 1-based line of the file; None before the excerpt.
    fn local_line(&self, line: usize) -> Option<usize> {
        line.checked_sub(1 + self.line_base)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Marks a range that excerpts must never show (a Secret's value).
    pub fn hide(&self, range: Range<usize>) {
        let range = self.clamp(range);
        if range.is_empty() {
            return;
        }
        let mut hidden = self.hidden.lock().unwrap_or_else(PoisonError::into_inner);
        hidden.ranges.push(range);
        hidden.masked = None;
    }

    /// How many ranges were hidden so far ([`Source::hide`]).
    pub fn hidden_count(&self) -> usize {
        self.hidden
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .ranges
            .len()
    }

    /// Shows again what was hidden after the first `count` ranges: a reading that is thrown
    /// away takes back what it hid.
    pub fn unhide_after(&self, count: usize) {
        let mut hidden = self.hidden.lock().unwrap_or_else(PoisonError::into_inner);
        if hidden.ranges.len() > count {
            hidden.ranges.truncate(count);
            hidden.masked = None;
        }
    }

    /// The text to cut excerpts from: the text with every hidden byte but line breaks
    /// replaced by `*`, so that offsets, lines and (for ASCII) columns stay where they are.
    /// None when nothing is hidden: show [`Source::text`].
    pub fn masked_text(&self) -> Option<Arc<str>> {
        let mut hidden = self.hidden.lock().unwrap_or_else(PoisonError::into_inner);
        if hidden.ranges.is_empty() {
            return None;
        }
        if hidden.masked.is_none() {
            let mut bytes = self.text.clone().into_bytes();
            for r in &hidden.ranges {
                for b in &mut bytes[r.clone()] {
                    if *b != b'\n' && *b != b'\r' {
                        *b = b'*';
                    }
                }
            }
            // Whole characters were replaced (ranges are clamped to character boundaries).
            let text = String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            hidden.masked = Some(Arc::from(text));
        }
        hidden.masked.clone()
    }

    /// Byte offsets are character indices, and so saphyr's marker indices (an ASCII text that
    /// starts its file).
    pub fn offsets_are_indices(&self) -> bool {
        self.ascii && self.line_base == 0 && self.col_base == 0
    }

    /// Byte offset of a saphyr marker of this source's text: its character index where
    /// characters are bytes (an ASCII text that starts its file), so no line need be found;
    /// else from its line and column ([`Source::offset_of`]).
    pub fn offset_of_marker(&self, index: usize, line: usize, col_chars: usize) -> usize {
        if self.offsets_are_indices() {
            return index.min(self.text.len());
        }
        self.offset_of(line, col_chars)
    }

    /// Byte offset of a saphyr marker (1-based line, 0-based column in characters).
    pub fn offset_of(&self, line: usize, col_chars: usize) -> usize {
        let Some(index) = self.local_line(line.max(1)) else {
            return 0;
        };
        let Some(&start) = self.line_starts().get(index) else {
            return self.text.len();
        };
        let end = self
            .line_starts()
            .get(index + 1)
            .copied()
            .unwrap_or(self.text.len());
        let col_chars = if index == 0 {
            col_chars.saturating_sub(self.col_base)
        } else {
            col_chars
        };
        if self.ascii {
            return (start + col_chars).min(end);
        }
        let line_text = &self.text[start..end];
        start
            + line_text
                .char_indices()
                .nth(col_chars)
                .map_or(line_text.len(), |(i, _)| i)
    }

    /// Line and column (1-based, column in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = self.floor_char_boundary(offset.min(self.text.len()));
        let line_idx = self.line_index(offset);
        let start = self.line_starts()[line_idx];
        let before = if line_idx == 0 { self.col_base } else { 0 };
        let chars = if self.ascii {
            offset - start
        } else {
            self.text[start..offset].chars().count()
        };
        LineCol {
            line: self.line_base + line_idx + 1,
            column: before + chars + 1,
        }
    }

    /// The 1-based line of a byte offset ([`Source::line_col`]'s line, without the column).
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = self.floor_char_boundary(offset.min(self.text.len()));
        self.line_base + self.line_index(offset) + 1
    }

    /// The text of the 1-based line, without its line break.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self
            .local_line(line)
            .and_then(|index| self.line_starts().get(index))
        else {
            return "";
        };
        let end = self
            .line_starts()
            .get(line - self.line_base)
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    fn floor_char_boundary(&self, mut offset: usize) -> usize {
        while offset > 0 && !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    }

    /// A span limited to its first line, without trailing blanks: a collection's span covers
    /// all its lines, and a label on one line reads better.
    pub fn first_line(&self, span: Range<usize>) -> Range<usize> {
        let span = self.clamp(span);
        let first = self.text[span.clone()]
            .split('\n')
            .next()
            .unwrap_or("")
            .trim_end();
        span.start..span.start + first.len()
    }

    /// Clamp a byte range to the text and to character boundaries.
    pub fn clamp(&self, range: Range<usize>) -> Range<usize> {
        let start = self.floor_char_boundary(range.start.min(self.text.len()));
        let end = self
            .floor_char_boundary(range.end.min(self.text.len()))
            .max(start);
        start..end
    }
}

fn newlines(text: &str) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters_not_bytes() {
        let src = Source::new("t", "a: é\nbb: x\n");
        let off = src.text().find('x').unwrap();
        assert_eq!(src.line_col(off), LineCol { line: 2, column: 5 });
        let e = src.text().find('é').unwrap();
        assert_eq!(src.line_col(e + 2), LineCol { line: 1, column: 5 });
    }

    #[test]
    fn offset_of_ascii_fast_path_agrees_and_clamps() {
        let src = Source::new("t", "ab: 1\nkey: value\n");
        assert_eq!(&src.text()[src.offset_of(2, 5)..][..5], "value");
        assert_eq!(src.offset_of(1, 99), 6);
    }

    #[test]
    fn offset_of_converts_saphyr_markers() {
        let src = Source::new("t", "é: 1\nkey: value\n");
        assert_eq!(src.offset_of(1, 1), 2);
        assert_eq!(&src.text()[src.offset_of(2, 5)..][..5], "value");
        assert_eq!(src.offset_of(9, 0), src.text().len());
    }

    #[test]
    fn hidden_ranges_are_starred_out_of_excerpts_keeping_offsets() {
        let src = Source::new("t", "password: hunter2\ncert: |\n  é1\n  x\nnext: 1\n");
        assert!(src.masked_text().is_none());
        let text = src.text();
        let pw = text.find("hunter2").unwrap();
        src.hide(pw..pw + 7);
        let cert = text.find("é1").unwrap();
        src.hide(cert..text.find("next").unwrap() - 1);
        let masked = src.masked_text().unwrap();
        assert_eq!(
            &*masked,
            "password: *******\ncert: |\n  ***\n***\nnext: 1\n"
        );
        assert_eq!(masked.len(), text.len());
        assert_eq!(src.text(), text);
    }

    #[test]
    fn an_excerpt_numbers_lines_as_the_file_and_hides_what_it_hides() {
        let text = "a: 1\nb: é2\nsecret: hunter2\nname: x\nc: 3\nd: 4\n";
        let src = Source::new("f.yaml", text);
        let pw = text.find("hunter2").unwrap();
        src.hide(pw..pw + 7);
        let at = text.find("x\n").unwrap();
        let (ex, span) = src.excerpt(at..at + 1, 1);
        assert_eq!(ex.name(), "f.yaml");
        assert_eq!(ex.text(), "secret: hunter2\nname: x\nc: 3\n");
        assert_eq!(&ex.text()[span.clone()], "x");
        assert_eq!(ex.line_col(span.start), src.line_col(at));
        assert_eq!(ex.line_col(span.start), LineCol { line: 4, column: 7 });
        assert_eq!(ex.line_text(3), "secret: hunter2");
        assert_eq!(ex.line_text(2), "");
        assert_eq!(ex.line_text(9), "");
        assert_eq!(ex.offset_of(4, 6), span.start);
        assert_eq!(ex.offset_of(1, 0), 0);
        assert_eq!(ex.offset_of(9, 0), ex.text().len());
        assert_eq!(
            &*ex.masked_text().unwrap(),
            "secret: *******\nname: x\nc: 3\n"
        );
        // At the edges of the file the context is cut short; an excerpt of an excerpt works.
        let (first, s) = src.excerpt(0..1, 3);
        assert_eq!(first.line_col(s.start), LineCol { line: 1, column: 1 });
        assert_eq!(first.text().lines().count(), 4);
        let (inner, s) = ex.excerpt(span, 0);
        assert_eq!(inner.text(), "name: x\n");
        assert_eq!(inner.line_col(s.start), LineCol { line: 4, column: 7 });
        assert!(inner.masked_text().is_none());
        assert!(!inner.is_partial());
    }

    #[test]
    fn an_excerpt_of_a_long_line_keeps_the_span_and_its_position() {
        let mut text = String::from("kind: List\nitems: [");
        for i in 0..200 {
            text.push_str(&format!("{{\"name\": \"é{i}\"}}, "));
        }
        text.push_str("]\n");
        let src = Source::new("f.json", text.as_str());
        let at = text.find("é150").unwrap();
        let (ex, span) = src.excerpt(at..at + "é150".len(), 2);
        assert!(ex.is_partial());
        assert_eq!(ex.text(), "é150");
        assert_eq!(ex.line_col(span.start), src.line_col(at));
        assert_eq!(ex.line_col(span.end), src.line_col(at + "é150".len()));
        let col = src.line_col(at).column;
        assert_eq!(ex.offset_of(2, col - 1), span.start);
        // A long line two lines away is left out of the context instead.
        let src = Source::new("g", format!("a: 1\nb: 2\nc: 3\n{}\n", "x".repeat(2000)));
        let at = src.text().find("b: 2").unwrap();
        let (ex, _) = src.excerpt(at..at + 1, 2);
        assert!(!ex.is_partial());
        assert_eq!(ex.text(), "a: 1\nb: 2\nc: 3\n");
    }

    #[test]
    fn line_text_strips_line_breaks() {
        let src = Source::new("t", "one\r\ntwo");
        assert_eq!(src.line_text(1), "one");
        assert_eq!(src.line_text(2), "two");
        assert_eq!(src.line_text(3), "");
    }
}
