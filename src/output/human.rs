//! Diagnostics for people: source excerpts with labels, help, and the file position, laid
//! out exactly as miette's graphical report handler lays them out (its unicode theme, with or
//! without colour; the tests hold every testdata case and generated ones to miette itself).
//!
//! miette drew each report through its `SourceCode` trait: every label's lines read three
//! times through boxed trait objects, each excerpt line copied into a `String`, every
//! character styled through a formatter, and the text wrapped by textwrap's Unicode segmenter;
//! a file with thousands of findings spent half its lint in the report. Here the same layout
//! is written straight into one buffer: excerpts come from the source's line index, text is
//! wrapped by [`super::wrap`], and escapes are written only in colour.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::BuildHasherDefault;
use std::io::{self, Write};

use unicode_width::UnicodeWidthChar;

use super::wrap::{self, Indent};
use crate::core::codes;
use crate::core::fxhash::FxHasher;
use crate::diag::{Diagnostic, MAX_SHOWN_LINE, Severity, Source};

/// Lines of context above and below a label.
const CONTEXT_LINES: usize = 1;
/// Columns of a tab in an excerpt.
const TAB_WIDTH: usize = 4;
const RESET: &str = "\x1b[0m";

/// The escapes of each part of a report (all empty without colour): miette's ANSI styles.
struct Styles {
    error: &'static str,
    warning: &'static str,
    advice: &'static str,
    help: &'static str,
    link: &'static str,
    linum: &'static str,
    highlights: &'static [&'static str],
}

impl Styles {
    fn new(color: bool) -> Styles {
        if color {
            Styles {
                error: "\x1b[31m",
                warning: "\x1b[33m",
                advice: "\x1b[36m",
                help: "\x1b[36m",
                link: "\x1b[36;1;4m",
                linum: "\x1b[2m",
                highlights: &["\x1b[35;1m", "\x1b[33;1m", "\x1b[32;1m"],
            }
        } else {
            Styles {
                error: "",
                warning: "",
                advice: "",
                help: "",
                link: "",
                linum: "",
                highlights: &[""],
            }
        }
    }
}

/// Appends `text` in `style` (its escape, then the reset; nothing around it without colour).
fn paint(out: &mut String, style: &str, text: &str) {
    out.push_str(style);
    out.push_str(text);
    reset(out, style);
}

/// Ends what was written in `style` (nothing without colour).
fn reset(out: &mut String, style: &str) {
    if !style.is_empty() {
        out.push_str(RESET);
    }
}

fn painted(style: &str, text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2 * style.len());
    paint(&mut out, style, text);
    out
}

/// The text of a report could not be laid out (a label outside its source).
struct Unreadable;

/// A label, sorted among the diagnostic's labels by where it starts.
#[derive(Debug, Clone)]
struct Span<'a> {
    offset: usize,
    len: usize,
    label: Option<&'a str>,
    primary: bool,
}

impl Span<'_> {
    fn end(&self) -> usize {
        self.offset + self.len
    }
}

/// A label as drawn: its lines (a label may hold line breaks) and its colour.
struct Highlight<'a> {
    offset: usize,
    len: usize,
    label: Option<&'a str>,
    style: &'static str,
}

impl Highlight<'_> {
    fn end(&self) -> usize {
        self.offset + self.len
    }

    /// Two highlights are the same label when text and span agree.
    fn same(&self, other: &Highlight) -> bool {
        self.label == other.label && self.offset == other.offset && self.len == other.len
    }
}

/// What a read of a span returns: the bytes of its lines and its context (absolute offsets),
/// the 0-based line of the first, the byte column of the span's start when no context
/// was asked before it, and the count of line breaks read (counted from the start of the
/// file: miette's own arithmetic, which decides when two labels share one excerpt).
struct Contents {
    start: usize,
    end: usize,
    line: usize,
    column: usize,
    line_count: usize,
}

/// One excerpt line: its 1-based number, where it starts and how many bytes it takes with its
/// line break, and its text (a range of the excerpt).
struct Line {
    number: usize,
    offset: usize,
    length: usize,
    text: std::ops::Range<usize>,
}

impl Line {
    fn line_only(&self, hl: &Highlight) -> bool {
        hl.offset >= self.offset && hl.end() <= self.offset + self.length
    }

    fn applies(&self, hl: &Highlight) -> bool {
        let len = hl.len.max(1);
        let end = self.offset + self.length;
        (hl.offset >= self.offset && hl.offset < end)
            || (hl.offset < self.offset && hl.offset + len > end)
            || (hl.offset + len > self.offset && hl.offset + len <= end)
    }

    fn applies_gutter(&self, hl: &Highlight) -> bool {
        let len = hl.len.max(1);
        let end = self.offset + self.length;
        self.applies(hl)
            && !((hl.offset >= self.offset && hl.offset < end)
                && (hl.offset + len > self.offset && hl.offset + len <= end))
    }

    fn flyby(&self, hl: &Highlight) -> bool {
        hl.offset < self.offset && hl.end() > self.offset + self.length
    }

    fn starts(&self, hl: &Highlight) -> bool {
        hl.offset >= self.offset
    }

    fn ends(&self, hl: &Highlight) -> bool {
        hl.end() >= self.offset && hl.end() <= self.offset + self.length
    }
}

/// How a label's text is drawn: on one line, or the first or a further line of several.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Single,
    First,
    Rest,
}

/// One report being drawn.
struct Report<'a> {
    styles: &'a Styles,
    source: &'a Source,
    /// The text excerpts are cut from (masked where the source hides values).
    text: &'a str,
}

impl<'a> Report<'a> {
    /// Reads the lines around `offset..offset + len` with `before` and `after` lines of
    /// context, as miette reads a span of a text (line breaks are `\n`, `\r\n` and a lone
    /// `\r`), from the whole lines around it that the source's index finds.
    fn read(
        &self,
        offset: usize,
        len: usize,
        before: usize,
        after: usize,
    ) -> Result<Contents, Unreadable> {
        let source = self.source;
        let first = source.line_of(offset);
        let last = source.line_of(offset + len);
        let start = source.offset_of(first.saturating_sub(before + 1).max(1), 0);
        let end = source.offset_of(last + after + 2, 0).max(start);
        let window = self.text.as_bytes().get(start..end).ok_or(Unreadable)?;
        let lines_before = source.line_of(start) - 1;
        let local = offset.checked_sub(start).ok_or(Unreadable)?;
        let inner = context_info(window, local, len, before, after)?;
        Ok(Contents {
            start: start + inner.start,
            end: start + inner.end,
            line: lines_before + inner.line,
            column: inner.column,
            line_count: lines_before + inner.line_count,
        })
    }

    /// The excerpts of the labels: a label whose lines reach those of the one before shares
    /// its excerpt.
    fn snippets(&self, out: &mut String, labels: &[Span]) -> Result<(), Unreadable> {
        let mut contexts: Vec<(Span, Contents)> = Vec::with_capacity(labels.len());
        for right in labels {
            let right_contents =
                match self.read(right.offset, right.len, CONTEXT_LINES, CONTEXT_LINES) {
                    Ok(contents) => contents,
                    Err(Unreadable) => {
                        let _ = writeln!(
                            out,
                            "  [{} `{}` (offset: {}, length: {}): {}]",
                            painted(self.styles.error, "Failed to read contents for label"),
                            painted(self.styles.link, right.label.unwrap_or("<none>")),
                            painted(self.styles.link, &right.offset.to_string()),
                            painted(self.styles.link, &right.len.to_string()),
                            painted(self.styles.warning, "OutOfBounds"),
                        );
                        return Ok(());
                    }
                };
            if let Some((left, left_contents)) = contexts.last()
                && left_contents.line + left_contents.line_count >= right_contents.line
            {
                let merged = Span {
                    offset: left.offset,
                    len: left.end().max(right.end()) - left.offset,
                    label: left.label,
                    primary: false,
                };
                if let Ok(contents) =
                    self.read(merged.offset, merged.len, CONTEXT_LINES, CONTEXT_LINES)
                {
                    contexts.pop();
                    contexts.push((merged, contents));
                    continue;
                }
            }
            contexts.push((right.clone(), right_contents));
        }
        for (context, contents) in &contexts {
            self.context(out, context, contents, labels)?;
        }
        Ok(())
    }

    /// The lines of a span's excerpt.
    fn lines(&self, contents: &Contents) -> (Cow<'a, str>, Vec<Line>) {
        let text = match self.text.get(contents.start..contents.end) {
            Some(text) => Cow::Borrowed(text),
            None => String::from_utf8_lossy(&self.text.as_bytes()[contents.start..contents.end]),
        };
        let mut lines = Vec::new();
        let mut line = contents.line;
        let mut column = 0usize;
        let mut offset = contents.start;
        let mut line_offset = offset;
        let mut text_start = 0usize;
        let mut text_end = 0usize;
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            offset += c.len_utf8();
            let mut at_end_of_file = false;
            match c {
                '\r' if chars.next_if(|&(_, n)| n == '\n').is_some() => {
                    offset += 1;
                    line += 1;
                    column = 0;
                    at_end_of_file = chars.peek().is_none();
                }
                '\r' => {
                    text_end = at + 1;
                    column += 1;
                    at_end_of_file = chars.peek().is_none();
                }
                '\n' => {
                    at_end_of_file = chars.peek().is_none();
                    line += 1;
                    column = 0;
                }
                _ => {
                    text_end = at + c.len_utf8();
                    column += 1;
                }
            }
            let last = chars.peek().is_none();
            if last && !at_end_of_file {
                line += 1;
            }
            if column == 0 || last {
                lines.push(Line {
                    number: line,
                    offset: line_offset,
                    length: offset - line_offset,
                    text: text_start..text_end.max(text_start),
                });
                line_offset = offset;
                text_start = chars.peek().map_or(text.len(), |&(i, _)| i);
                text_end = text_start;
            }
        }
        (text, lines)
    }

    /// One excerpt: its header with the primary label's position, its numbered lines, and the
    /// labels under and beside them.
    /// `contents` is the read of `context` (miette reads it again; the answer is the same).
    fn context(
        &self,
        out: &mut String,
        context: &Span,
        contents: &Contents,
        labels: &[Span],
    ) -> Result<(), Unreadable> {
        let (text, lines) = self.lines(contents);
        let inside = labels
            .iter()
            .filter(|l| context.offset <= l.offset && l.end() <= context.end());
        let primary = inside
            .clone()
            .find(|l| l.primary)
            .or_else(|| inside.clone().next());
        let highlights: Vec<Highlight> = labels
            .iter()
            .zip(self.styles.highlights.iter().cycle())
            .map(|(l, style)| Highlight {
                offset: l.offset,
                len: l.len,
                label: l.label,
                style,
            })
            .collect();
        let max_gutter = lines
            .iter()
            .map(|line| {
                highlights
                    .iter()
                    .filter(|hl| !line.line_only(hl) && line.applies_gutter(hl))
                    .count()
            })
            .max()
            .unwrap_or(0);
        let linum_width = decimal_width(lines.last().map_or(0, |l| l.number));

        push_repeat(out, ' ', linum_width + 2);
        out.push_str("╭─");
        let (line, column) = match primary {
            Some(label) => {
                let c = self.read(label.offset, label.len, 0, 0)?;
                (c.line, c.column)
            }
            None => (contents.line, contents.column),
        };
        out.push('[');
        let position = format!("{}:{}:{}", self.source.name(), line + 1, column + 1);
        paint(out, self.styles.link, &position);
        out.push_str("]\n");

        let mut single = Vec::new();
        for line in &lines {
            self.linum(out, linum_width, Some(line.number));
            self.line_gutter(out, max_gutter, line, &highlights);
            line_text(out, &text[line.text.clone()]);
            single.clear();
            single.extend(
                highlights
                    .iter()
                    .filter(|hl| line.applies(hl) && line.line_only(hl)),
            );
            if !single.is_empty() {
                self.linum(out, linum_width, None);
                self.highlight_gutter(out, max_gutter, line, &highlights, Mode::Single);
                self.single_line_highlights(
                    out,
                    line,
                    &text[line.text.clone()],
                    linum_width,
                    max_gutter,
                    &single,
                    &highlights,
                );
            }
            for hl in highlights
                .iter()
                .filter(|hl| line.applies(hl) && !line.line_only(hl))
            {
                if hl.label.is_some() && line.ends(hl) && !line.starts(hl) {
                    self.multi_line_end(out, &highlights, max_gutter, linum_width, line, hl);
                }
            }
        }
        push_repeat(out, ' ', linum_width + 2);
        out.push_str("╰────\n");
        Ok(())
    }

    /// A line's number, or the dotted bar of a line under it.
    fn linum(&self, out: &mut String, width: usize, number: Option<usize>) {
        out.push(' ');
        match number {
            Some(n) => {
                out.push_str(self.styles.linum);
                let _ = write!(out, "{n:>width$}");
                reset(out, self.styles.linum);
                out.push_str(" │ ");
            }
            None => {
                push_repeat(out, ' ', width);
                out.push_str(" · ");
            }
        }
    }

    /// The gutter of an excerpt line: where multi-line labels start, end or pass.
    fn line_gutter(
        &self,
        out: &mut String,
        max_gutter: usize,
        line: &Line,
        highlights: &[Highlight],
    ) {
        if max_gutter == 0 {
            return;
        }
        let mut gutter = String::new();
        let mut arrow = false;
        for (i, hl) in highlights
            .iter()
            .filter(|hl| line.applies_gutter(hl))
            .enumerate()
        {
            let corner = if line.starts(hl) {
                "╭"
            } else if line.ends(hl) {
                if hl.label.is_some() { "├" } else { "╰" }
            } else if line.flyby(hl) {
                paint(&mut gutter, hl.style, "│");
                continue;
            } else {
                gutter.push(' ');
                continue;
            };
            paint(&mut gutter, hl.style, corner);
            paint(
                &mut gutter,
                hl.style,
                &"─".repeat(max_gutter.saturating_sub(i)),
            );
            paint(&mut gutter, hl.style, "▶");
            arrow = true;
            break;
        }
        out.push_str(&gutter);
        // miette pads by the characters of the gutter, escapes included.
        let pad = if arrow { 1 } else { 3 } + max_gutter.saturating_sub(gutter.chars().count());
        push_repeat(out, ' ', pad);
    }

    /// The gutter of a line under an excerpt line.
    fn highlight_gutter(
        &self,
        out: &mut String,
        max_gutter: usize,
        line: &Line,
        highlights: &[Highlight],
        mode: Mode,
    ) {
        if max_gutter == 0 {
            return;
        }
        let mut columns = 0;
        for (i, hl) in highlights
            .iter()
            .filter(|hl| line.applies_gutter(hl))
            .enumerate()
        {
            if !line.line_only(hl) && line.ends(hl) {
                let repeat = max_gutter.saturating_sub(i) + 2;
                if mode == Mode::Rest {
                    push_repeat(out, ' ', repeat);
                    columns += repeat + 1;
                } else {
                    paint(out, hl.style, "╰");
                    let bars = repeat - usize::from(mode == Mode::First);
                    out.push_str(hl.style);
                    push_repeat(out, '─', bars);
                    reset(out, hl.style);
                    columns += repeat + 1;
                }
                break;
            }
            paint(out, hl.style, "│");
            columns += 1;
        }
        push_repeat(out, ' ', (max_gutter + 3).saturating_sub(columns));
    }

    /// The underlines of the labels within one line, then each label's text, last first.
    #[allow(clippy::too_many_arguments)]
    fn single_line_highlights(
        &self,
        out: &mut String,
        line: &Line,
        text: &str,
        linum_width: usize,
        max_gutter: usize,
        single: &[&Highlight],
        highlights: &[Highlight],
    ) {
        let mut highest = 0;
        let mut offsets = Vec::with_capacity(single.len());
        for hl in single {
            let start = visual_offset(line, text, hl.offset, true).max(highest);
            let end = if hl.len == 0 {
                start + 1
            } else {
                visual_offset(line, text, hl.end(), false).max(start + 1)
            };
            let vbar = (start + end) / 2;
            out.push_str(hl.style);
            push_repeat(out, ' ', start.saturating_sub(highest));
            push_repeat(out, '─', vbar - start);
            out.push(if hl.len == 0 {
                '▲'
            } else if hl.label.is_some() {
                '┬'
            } else {
                '─'
            });
            push_repeat(out, '─', end - vbar - 1);
            reset(out, hl.style);
            highest = highest.max(end);
            offsets.push(vbar);
        }
        out.push('\n');
        for hl in single.iter().rev() {
            let Some(label) = hl.label else { continue };
            let parts: Vec<&str> = label.split('\n').collect();
            for (n, part) in parts.iter().enumerate() {
                let mode = match (parts.len(), n) {
                    (1, _) => Mode::Single,
                    (_, 0) => Mode::First,
                    _ => Mode::Rest,
                };
                self.linum(out, linum_width, None);
                self.highlight_gutter(out, max_gutter, line, highlights, Mode::Single);
                let mut column = 1usize;
                for (other, &vbar) in single.iter().zip(&offsets) {
                    while column < vbar + 1 {
                        out.push(' ');
                        column += 1;
                    }
                    if other.same(hl) {
                        out.push_str(hl.style);
                        match mode {
                            Mode::Single => out.push_str("╰── "),
                            Mode::First => out.push_str("╰─┤ "),
                            Mode::Rest => out.push_str("  │ "),
                        }
                        paint(out, hl.style, part);
                        reset(out, hl.style);
                        out.push('\n');
                        break;
                    }
                    paint(out, other.style, "│");
                    column += 1;
                }
            }
        }
    }

    /// The text of a multi-line label, beside the line it ends on.
    fn multi_line_end(
        &self,
        out: &mut String,
        highlights: &[Highlight],
        max_gutter: usize,
        linum_width: usize,
        line: &Line,
        hl: &Highlight,
    ) {
        self.linum(out, linum_width, None);
        let Some(label) = hl.label else {
            self.highlight_gutter(out, max_gutter, line, highlights, Mode::Single);
            paint(out, hl.style, "─");
            out.push('\n');
            return;
        };
        let parts: Vec<&str> = label.split('\n').collect();
        if parts.len() == 1 {
            self.highlight_gutter(out, max_gutter, line, highlights, Mode::Single);
            paint(out, hl.style, "─");
            out.push(' ');
            paint(out, hl.style, parts[0]);
            out.push('\n');
            return;
        }
        for (n, part) in parts.iter().enumerate() {
            if n > 0 {
                self.linum(out, linum_width, None);
            }
            let mode = if n == 0 { Mode::First } else { Mode::Rest };
            self.highlight_gutter(out, max_gutter, line, highlights, mode);
            paint(out, hl.style, if n == 0 { "┤" } else { "│" });
            out.push(' ');
            paint(out, hl.style, part);
            out.push('\n');
        }
    }
}

/// miette's reading of a span from a text: the lines from `before` lines above the span to
/// `after` lines below it (offsets into `input`), the line and byte column where that starts,
/// and the line breaks read. `before` is 0 or 1 (the report asks for no more).
///
/// miette walks the text byte by byte; here a run of bytes between line breaks is taken at
/// once, with the same result.
fn context_info(
    input: &[u8],
    offset: usize,
    len: usize,
    before: usize,
    after: usize,
) -> Result<Contents, Unreadable> {
    debug_assert!(before <= 1, "{before} lines before");
    let last = (offset + len).saturating_sub(1);
    let n = input.len();
    let mut at = 0usize;
    let mut line_count = 0usize;
    let mut start_line = 0usize;
    let mut start_column = 0usize;
    // The start of the line before the span's, once one was read (with one line before).
    let mut line_before: Option<usize> = None;
    let mut line_start = 0usize;
    let mut end_lines = 0usize;
    let mut post_span = false;
    let mut post_span_newline = false;
    while at < n {
        let b = input[at];
        if b == b'\r' || b == b'\n' {
            line_count += 1;
            if b == b'\r' && input.get(at + 1) == Some(&b'\n') {
                at += 1;
            }
            if at < offset {
                start_column = 0;
                if before == 0 || line_before.is_some() {
                    start_line += 1;
                }
                if before > 0 {
                    line_before = Some(line_start);
                }
            } else if at >= offset + len.saturating_sub(1) && post_span {
                start_column = 0;
                if post_span_newline {
                    end_lines += 1;
                } else {
                    post_span_newline = true;
                }
                if end_lines >= after {
                    at += 1;
                    break;
                }
            }
            line_start = at + 1;
            if at >= last {
                post_span = true;
                if end_lines >= after {
                    at += 1;
                    break;
                }
            }
            at += 1;
        } else {
            let run_end = input[at..]
                .iter()
                .position(|&c| c == b'\n' || c == b'\r')
                .map_or(n, |i| at + i);
            // The first byte of the run at or past the span's last one: the scan stops there
            // when no more lines after it are wanted.
            let reached = last.max(at);
            let stop = (reached < run_end && end_lines >= after).then_some(reached);
            let read_to = stop.map_or(run_end, |p| p + 1);
            start_column += offset.min(read_to).saturating_sub(at);
            if reached < run_end {
                post_span = true;
            }
            if let Some(p) = stop {
                at = p + 1;
                break;
            }
            at = run_end;
        }
    }
    if at < last {
        return Err(Unreadable);
    }
    let start = line_before.unwrap_or(if before == 0 { offset } else { 0 });
    Ok(Contents {
        start,
        end: at,
        line: start_line,
        column: if before == 0 { start_column } else { 0 },
        line_count,
    })
}

/// The columns of each character of an excerpt line (tabs to the next stop, escapes none).
fn char_widths(text: &str) -> impl Iterator<Item = usize> + '_ {
    let mut column = 0;
    let mut escaped = false;
    text.chars().map(move |c| {
        let width = match (escaped, c) {
            (false, '\t') => TAB_WIDTH - column % TAB_WIDTH,
            (false, '\x1b') => {
                escaped = true;
                0
            }
            (false, c) if c.is_ascii() => usize::from(!c.is_ascii_control()),
            (false, c) => c.width().unwrap_or(0),
            (true, 'm') => {
                escaped = false;
                0
            }
            (true, _) => 0,
        };
        column += width;
        width
    })
}

/// The column of a byte offset of an excerpt line (a character's first column when `start`,
/// else its last; one past the text for an offset past it).
fn visual_offset(line: &Line, text: &str, offset: usize, start: bool) -> usize {
    let mut index = offset.saturating_sub(line.offset);
    while index <= text.len() && !text.is_char_boundary(index) {
        if start {
            index -= 1;
        } else {
            index += 1;
        }
    }
    let width: usize = char_widths(&text[..index.min(text.len())]).sum();
    if index > text.len() { width + 1 } else { width }
}

/// An excerpt line, tabs expanded.
fn line_text(out: &mut String, text: &str) {
    if !text.contains('\t') {
        out.push_str(text);
    } else {
        for (c, width) in text.chars().zip(char_widths(text)) {
            if c == '\t' {
                push_repeat(out, ' ', width);
            } else {
                out.push(c);
            }
        }
    }
    out.push('\n');
}

fn push_repeat(out: &mut String, c: char, n: usize) {
    out.extend(std::iter::repeat_n(c, n));
}

fn decimal_width(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The texts this thread filled (messages by severity, then help), each as it was drawn, for
/// the colour and width they were drawn with: findings repeat their message and help (the
/// same mistake in many objects, in many files), and finding a text again costs a fraction
/// of filling it. Bounded: texts up to [`Filled::MAX_TEXT`] bytes, [`Filled::MAX_BYTES`]
/// of drawings (then it starts over).
#[derive(Default)]
struct Filled {
    /// Per kind of text (a severity's message, help), the text and its drawing.
    kinds: [HashMap<Box<str>, Box<str>, BuildHasherDefault<FxHasher>>; KINDS],
    /// The colour and width of the drawings.
    drawn: Option<(bool, usize)>,
    /// Bytes of the texts and drawings kept.
    bytes: usize,
}

thread_local! {
    /// This thread's filled texts, kept from one file's report to the next.
    static FILLED: std::cell::RefCell<Filled> = std::cell::RefCell::default();
}

/// The kinds of text [`Filled`] keeps apart: a message by its severity (its mark), help.
const KINDS: usize = 4;
const HELP: usize = 3;

fn message_kind(severity: Severity) -> usize {
    match severity {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Info => 2,
    }
}

impl Filled {
    const MAX_TEXT: usize = 1 << 10;
    const MAX_BYTES: usize = 1 << 20;

    /// Forgets drawings made with another colour or width.
    fn drawing_for(&mut self, color: bool, width: usize) {
        if self.drawn != Some((color, width)) {
            self.clear();
            self.drawn = Some((color, width));
        }
    }

    fn clear(&mut self) {
        for map in &mut self.kinds {
            map.clear();
        }
        self.bytes = 0;
    }

    /// Appends `text` drawn by `draw` (which appends it to the string it is given), as drawn
    /// before when it was.
    fn fill(&mut self, out: &mut String, kind: usize, text: &str, draw: impl FnOnce(&mut String)) {
        if text.len() > Self::MAX_TEXT {
            return draw(out);
        }
        if let Some(drawn) = self.kinds[kind].get(text) {
            out.push_str(drawn);
            return;
        }
        let start = out.len();
        draw(out);
        let drawn = &out[start..];
        if self.bytes + text.len() + drawn.len() > Self::MAX_BYTES {
            self.clear();
        }
        self.bytes += text.len() + drawn.len();
        self.kinds[kind].insert(text.into(), drawn.into());
    }
}

/// Draws one diagnostic: its code, its message after the severity's mark, the excerpts of its
/// labels, and its help.
fn report(
    out: &mut String,
    d: &Diagnostic,
    styles: &Styles,
    width: usize,
    filled: &mut Filled,
) -> Result<(), Unreadable> {
    // The severity's style and mark, and the message's first indent without colour.
    let (style, icon, plain_first) = match d.severity {
        Severity::Error => (styles.error, "×", "  × "),
        Severity::Warning => (styles.warning, "⚠", "  ⚠ "),
        Severity::Info => (styles.advice, "☞", "  ☞ "),
    };
    let name = codes::find(d.code).map_or("", |r| r.name);
    out.push_str(style);
    out.push_str(d.code);
    if !name.is_empty() {
        out.push('(');
        out.push_str(name);
        out.push(')');
    }
    reset(out, style);
    out.push_str("\n\n");

    let (first, rest) = if style.is_empty() {
        // Without colour the indents are constant.
        (Cow::Borrowed(plain_first), Cow::Borrowed("  │ "))
    } else {
        (
            Cow::Owned(format!("  {} ", painted(style, icon))),
            Cow::Owned(format!("  {} ", painted(style, "│"))),
        )
    };
    filled.fill(out, message_kind(d.severity), &d.message, |out| {
        wrap::fill(
            out,
            &d.message,
            width.saturating_sub(2),
            Indent {
                text: &first,
                width: 4,
            },
            Indent {
                text: &rest,
                width: 4,
            },
        )
    });
    out.push('\n');

    if let Some(source) = d.source.as_ref().filter(|_| !d.labels.is_empty()) {
        let masked = source.masked_text();
        let report = Report {
            styles,
            source,
            text: masked.as_deref().unwrap_or(source.text()),
        };
        let mut labels: Vec<Span> = d
            .labels
            .iter()
            .enumerate()
            .map(|(i, l)| Span {
                offset: l.span.start,
                len: l.span.len(),
                label: l.message.as_deref(),
                primary: i == 0,
            })
            .collect();
        // miette's order (an unstable sort by start: the same comparisons give the same order).
        labels.sort_unstable_by_key(|l| l.offset);
        report.snippets(out, &labels)?;
    }

    if let Some(help) = &d.help {
        let first = if styles.help.is_empty() {
            Cow::Borrowed("  help: ")
        } else {
            Cow::Owned(painted(styles.help, "  help: "))
        };
        filled.fill(out, HELP, help, |out| {
            wrap::fill(
                out,
                help,
                width.saturating_sub(2),
                Indent {
                    text: &first,
                    width: 8,
                },
                Indent::plain("        "),
            )
        });
        out.push('\n');
    }
    Ok(())
}

/// Renders diagnostics for people, laid out for `width` columns (the terminal's, or
/// [`super::DEFAULT_WIDTH`]): source excerpts with labels, help, and the file position.
pub fn render(
    out: &mut dyn Write,
    diags: &[Diagnostic],
    color: bool,
    width: usize,
) -> io::Result<()> {
    let styles = Styles::new(color);
    let mut text = String::new();
    FILLED.with_borrow_mut(|filled| {
        filled.drawing_for(color, width);
        for d in diags {
            let d = displayed(d);
            text.clear();
            if report(&mut text, &d, &styles, width, filled).is_err() {
                text.clear();
                let _ = writeln!(text, "{}: {}", d.code, d.message);
            }
            out.write_all(text.trim_end().as_bytes())?;
            out.write_all(b"\n\n")?;
        }
        Ok(())
    })
}

/// The diagnostic as drawn: one without a position names its file in the message, and one
/// whose excerpt would hold a very long line (minified JSON) names its position instead of
/// showing it.
pub fn displayed(d: &Diagnostic) -> Cow<'_, Diagnostic> {
    if d.labels.is_empty()
        && let Some(file) = d.file()
    {
        return Cow::Owned(Diagnostic {
            message: format!("{file}: {}", d.message),
            ..d.clone()
        });
    }
    if let Some((source, (start, end))) = d.source.as_ref().zip(d.position())
        && excerpt_too_wide(source, start.line, end.line)
    {
        return Cow::Owned(Diagnostic {
            message: format!(
                "{}:{}:{}: {}",
                source.name(),
                start.line,
                start.column,
                d.message
            ),
            labels: Vec::new(),
            ..d.clone()
        });
    }
    Cow::Borrowed(d)
}

/// Whether a line of the excerpt around `first..=last` (one line of context each side) is
/// too long to show.
fn excerpt_too_wide(source: &Source, first: usize, last: usize) -> bool {
    source.is_partial()
        || (first.saturating_sub(1).max(1)..=last + 1)
            .any(|line| source.line_text(line).len() > MAX_SHOWN_LINE)
}
