//! Source files and positions.
//!
//! Every diagnostic points into a [`Source`] by byte range; line and column are computed from
//! the range only when a renderer needs them, so the hot lint path never builds them.
//!
//! A source also knows which of its bytes must never be shown (the values of Secrets, marked
//! by the loader): excerpts are cut from [`Source::masked_text`], where they are starred out.

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};

/// A named input text (a file, standard input, or an embedded example).
#[derive(Debug)]
pub struct Source {
    name: String,
    text: String,
    line_starts: Vec<usize>,
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
        let mut line_starts = vec![0];
        line_starts.extend(memchr_newlines(&text));
        Arc::new(Source {
            name: name.into(),
            ascii: text.is_ascii(),
            text,
            line_starts,
            hidden: Mutex::default(),
        })
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

    /// Byte offset of a saphyr marker (1-based line, 0-based column in characters).
    pub fn offset_of(&self, line: usize, col_chars: usize) -> usize {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        let end = self
            .line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len());
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
        let line_idx = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line_idx];
        LineCol {
            line: line_idx + 1,
            column: self.text[start..offset].chars().count() + 1,
        }
    }

    /// The text of the 1-based line, without its line break.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
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

fn memchr_newlines(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .map(|(i, _)| i + 1)
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
    fn line_text_strips_line_breaks() {
        let src = Source::new("t", "one\r\ntwo");
        assert_eq!(src.line_text(1), "one");
        assert_eq!(src.line_text(2), "two");
        assert_eq!(src.line_text(3), "");
    }
}
