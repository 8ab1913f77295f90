//! `matches` with Go's regular expressions (RE2 syntax as Go's `regexp/syntax` parses it in
//! Perl mode): a front end that accepts and refuses exactly what Go does, with Go's error
//! messages, and translates the pattern into an equivalent pattern of the `regex` crate with
//! every construct spelled out: `\d`, `\w`, `\s` and `\b` are ASCII-only as in Go, flags are
//! resolved at parse time, and literals and ranges are written as code points.
//!
//! Compiled patterns are kept in a bounded cache shared by all evaluations, so a pattern built
//! at run time is compiled once, not on every evaluation.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

/// A pattern compiled for matching, with the weight of its program.
#[derive(Debug)]
pub struct Compiled {
    pub re: regex::Regex,
    /// About the cost units of compiling the pattern, and a measure of its program's size:
    /// a Unicode class spelled as UTF-8 byte ranges is by far the heaviest part (about
    /// 20,000 units, 0.3 ms, each time it is repeated), a literal or an ASCII class one.
    pub weight: u64,
}

impl Compiled {
    /// Cost units of matching a text of `len` bytes: linear in the text, steeper for heavy
    /// patterns (the engine may simulate the automaton instead of running a DFA).
    pub fn match_cost(&self, len: usize) -> u64 {
        (len as u64 + 1).saturating_mul(1 + self.weight / 1024) / 4 + 1
    }

    /// Bytes of memory the compiled program takes, about.
    pub fn memory(&self) -> u64 {
        self.weight.saturating_mul(8)
    }
}

/// Go's parse error: `error parsing regexp: <code>: `<expr>``.
fn error(code: &str, expr: &str) -> String {
    format!("error parsing regexp: {code}: `{expr}`")
}

const ERR_INVALID_CHAR_CLASS: &str = "invalid character class";
const ERR_INVALID_CHAR_RANGE: &str = "invalid character class range";
const ERR_INVALID_ESCAPE: &str = "invalid escape sequence";
const ERR_INVALID_NAMED_CAPTURE: &str = "invalid named capture";
const ERR_INVALID_PERL_OP: &str = "invalid or unsupported Perl syntax";
const ERR_INVALID_REPEAT_OP: &str = "invalid nested repetition operator";
const ERR_INVALID_REPEAT_SIZE: &str = "invalid repeat count";
const ERR_MISSING_BRACKET: &str = "missing closing ]";
const ERR_MISSING_PAREN: &str = "missing closing )";
const ERR_MISSING_REPEAT_ARGUMENT: &str = "missing argument to repetition operator";
const ERR_TRAILING_BACKSLASH: &str = "trailing backslash at end of expression";
const ERR_UNEXPECTED_PAREN: &str = "unexpected )";
const ERR_NESTING_DEPTH: &str = "expression nests too deeply";
const ERR_LARGE: &str = "expression too large";

const MAX_REPEAT: i32 = 1000;
const MAX_HEIGHT: usize = 1000;
/// Go's `maxSize`: 128 MB of 40-byte instructions.
const MAX_SIZE: u64 = (128 << 20) / 40;

// Parse flags (Go's syntax.Flags).
const FOLD_CASE: u16 = 1;
const DOT_NL: u16 = 1 << 3;
const ONE_LINE: u16 = 1 << 4;
const NON_GREEDY: u16 = 1 << 5;
/// Go's `syntax.Perl`: ClassNL | OneLine | PerlX | UnicodeGroups (ClassNL, PerlX and
/// UnicodeGroups never change, so only OneLine is tracked).
const PERL: u16 = ONE_LINE;

#[derive(Debug, Clone)]
enum Node {
    Empty,
    Lit(char, bool),
    Class(Class),
    AnyNotNl,
    Any,
    BeginLine,
    EndLine,
    BeginText,
    EndText,
    WordBoundary,
    NoWordBoundary,
    Capture(Box<Node>),
    Star(Box<Node>, bool),
    Plus(Box<Node>, bool),
    Quest(Box<Node>, bool),
    /// `{min,max}`, max -1 for none; the bool: greedy.
    Repeat(Box<Node>, i32, i32, bool),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
}

#[derive(Debug, Clone, Default)]
struct Class {
    items: Vec<ClassItem>,
    negated: bool,
    fold: bool,
}

#[derive(Debug, Clone)]
enum ClassItem {
    Range(char, char),
    /// A class written in `regex` syntax (the body of a bracket), possibly negated.
    Set(String, bool),
}

enum Item {
    Node(Node),
    LeftParen { capture: bool, flags: u16 },
    Bar,
}

struct Parser<'a> {
    whole: &'a str,
    flags: u16,
    stack: Vec<Item>,
}

/// Parses a Go regular expression (Perl flags, as `regexp.Compile`).
fn parse(s: &str) -> Result<Node, String> {
    let mut p = Parser {
        whole: s,
        flags: PERL,
        stack: Vec::new(),
    };
    let mut t = s;
    let mut last_repeat: &str = "";
    while !t.is_empty() {
        let mut repeat: &str = "";
        let c = t.as_bytes()[0];
        match c {
            b'(' => {
                if t.len() >= 2 && t.as_bytes()[1] == b'?' {
                    t = p.parse_perl_flags(t)?;
                } else {
                    p.stack.push(Item::LeftParen {
                        capture: true,
                        flags: p.flags,
                    });
                    t = &t[1..];
                }
            }
            b'|' => {
                p.concat();
                p.stack.push(Item::Bar);
                t = &t[1..];
            }
            b')' => {
                p.parse_right_paren()?;
                t = &t[1..];
            }
            b'^' => {
                p.push(if p.flags & ONE_LINE != 0 {
                    Node::BeginText
                } else {
                    Node::BeginLine
                });
                t = &t[1..];
            }
            b'$' => {
                p.push(if p.flags & ONE_LINE != 0 {
                    Node::EndText
                } else {
                    Node::EndLine
                });
                t = &t[1..];
            }
            b'.' => {
                p.push(if p.flags & DOT_NL != 0 {
                    Node::Any
                } else {
                    Node::AnyNotNl
                });
                t = &t[1..];
            }
            b'[' => t = p.parse_class(t)?,
            b'*' | b'+' | b'?' => {
                let before = t;
                let after = p.repeat(c, before, &t[1..], last_repeat)?;
                repeat = before;
                t = after;
            }
            b'{' => {
                let before = t;
                match parse_repeat(t) {
                    None => {
                        // Not a repetition: `{` is a literal.
                        p.literal('{');
                        t = &t[1..];
                    }
                    Some((min, max, after)) => {
                        if !(0..=MAX_REPEAT).contains(&min)
                            || max > MAX_REPEAT
                            || (max >= 0 && min > max)
                        {
                            return Err(error(
                                ERR_INVALID_REPEAT_SIZE,
                                &before[..before.len() - after.len()],
                            ));
                        }
                        let after = p.repeat_counted(min, max, before, after, last_repeat)?;
                        repeat = before;
                        t = after;
                    }
                }
            }
            b'\\' => t = p.parse_backslash(t)?,
            _ => {
                let ch = t.chars().next().unwrap_or('\0');
                p.literal(ch);
                t = &t[ch.len_utf8()..];
            }
        }
        last_repeat = repeat;
    }
    p.concat();
    p.alternate();
    if p.stack.len() != 1 {
        return Err(error(ERR_MISSING_PAREN, s));
    }
    match p.stack.pop() {
        Some(Item::Node(n)) => Ok(n),
        _ => Err(error(ERR_MISSING_PAREN, s)),
    }
}

/// Go's `parseRepeat`: `{n}`, `{n,}` or `{n,m}`; `None` if `s` is not of that form; a count
/// too large reads as -1.
fn parse_repeat(s: &str) -> Option<(i32, i32, &str)> {
    let s = s.strip_prefix('{')?;
    let (min, mut s) = parse_int(s)?;
    let max;
    if s.is_empty() {
        return None;
    }
    if !s.starts_with(',') {
        max = min;
    } else {
        s = &s[1..];
        if s.is_empty() {
            return None;
        }
        if s.starts_with('}') {
            max = -1;
        } else {
            let (m, rest) = parse_int(s)?;
            s = rest;
            if m < 0 {
                return Some((-1, m, s.strip_prefix('}')?));
            }
            max = m;
        }
    }
    let rest = s.strip_prefix('}')?;
    Some((min, max, rest))
}

/// Go's `parseInt` of the repetition counts: no leading zeros; -1 when too large.
fn parse_int(s: &str) -> Option<(i32, &str)> {
    let b = s.as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() {
        return None;
    }
    if b.len() >= 2 && b[0] == b'0' && b[1].is_ascii_digit() {
        return None;
    }
    let end = b
        .iter()
        .position(|c| !c.is_ascii_digit())
        .unwrap_or(b.len());
    let mut n: i64 = 0;
    for &c in &b[..end] {
        if n >= 100_000_000 {
            n = -1;
            break;
        }
        n = n * 10 + (c - b'0') as i64;
    }
    Some((n as i32, &s[end..]))
}

impl<'a> Parser<'a> {
    fn push(&mut self, n: Node) {
        self.stack.push(Item::Node(n));
    }

    fn literal(&mut self, c: char) {
        self.push(Node::Lit(c, self.flags & FOLD_CASE != 0));
    }

    /// Replaces the nodes above the topmost `(` or `|` with their concatenation.
    fn concat(&mut self) {
        self.collapse(
            |it| !matches!(it, Item::Node(_)),
            Node::Concat,
            |n| match n {
                Node::Concat(v) => Ok(v),
                other => Err(other),
            },
        );
    }

    /// Replaces the concatenations above the topmost `(` with their alternation.
    fn alternate(&mut self) {
        self.collapse(
            |it| matches!(it, Item::LeftParen { .. }),
            Node::Alt,
            |n| match n {
                Node::Alt(v) => Ok(v),
                other => Err(other),
            },
        );
    }

    /// Replaces the nodes above the topmost item that `stop` matches with one node of the
    /// kind `make` builds, flattening nested nodes of the same kind (`unwrap`).
    fn collapse(
        &mut self,
        stop: impl Fn(&Item) -> bool,
        make: fn(Vec<Node>) -> Node,
        unwrap: fn(Node) -> Result<Vec<Node>, Node>,
    ) {
        let i = self.stack.iter().rposition(stop).map_or(0, |i| i + 1);
        let mut subs: Vec<Node> = Vec::new();
        for it in self.stack.drain(i..) {
            if let Item::Node(n) = it {
                match unwrap(n) {
                    Ok(v) => subs.extend(v),
                    Err(n) => subs.push(n),
                }
            }
        }
        let node = match subs.len() {
            0 => Node::Empty,
            1 => subs.pop().unwrap_or(Node::Empty),
            _ => make(subs),
        };
        self.push(node);
    }

    fn parse_right_paren(&mut self) -> Result<(), String> {
        self.concat();
        self.alternate();
        let n = self.stack.len();
        if n < 2 {
            return Err(error(ERR_UNEXPECTED_PAREN, self.whole));
        }
        let Some(Item::Node(sub)) = self.stack.pop() else {
            return Err(error(ERR_UNEXPECTED_PAREN, self.whole));
        };
        let Some(Item::LeftParen { capture, flags }) = self.stack.pop() else {
            return Err(error(ERR_UNEXPECTED_PAREN, self.whole));
        };
        self.flags = flags;
        self.push(if capture {
            Node::Capture(Box::new(sub))
        } else {
            sub
        });
        Ok(())
    }

    /// `*`, `+`, `?` (op) applied to the top of the stack.
    fn repeat(
        &mut self,
        op: u8,
        before: &'a str,
        after: &'a str,
        last_repeat: &'a str,
    ) -> Result<&'a str, String> {
        let (after, greedy) = self.repeat_prefix(after, last_repeat)?;
        let sub = self.pop_operand(before, after)?;
        let sub = Box::new(sub);
        let node = match op {
            b'*' => Node::Star(sub, greedy),
            b'+' => Node::Plus(sub, greedy),
            _ => Node::Quest(sub, greedy),
        };
        self.check_limits(&node)?;
        self.push(node);
        Ok(after)
    }

    fn repeat_counted(
        &mut self,
        min: i32,
        max: i32,
        before: &'a str,
        after: &'a str,
        last_repeat: &'a str,
    ) -> Result<&'a str, String> {
        let (after, greedy) = self.repeat_prefix(after, last_repeat)?;
        let sub = self.pop_operand(before, after)?;
        let node = Node::Repeat(Box::new(sub), min, max, greedy);
        self.check_limits(&node)?;
        if (min >= 2 || max >= 2) && !repeat_is_valid(&node, MAX_REPEAT) {
            return Err(error(
                ERR_INVALID_REPEAT_SIZE,
                &before[..before.len() - after.len()],
            ));
        }
        self.push(node);
        Ok(after)
    }

    /// The lazy `?` after a repetition, and Go's refusal of stacked repetitions (`a**`, `a++`).
    fn repeat_prefix(
        &self,
        after: &'a str,
        last_repeat: &'a str,
    ) -> Result<(&'a str, bool), String> {
        let mut after = after;
        let mut greedy = self.flags & NON_GREEDY == 0;
        if after.starts_with('?') {
            after = &after[1..];
            greedy = !greedy;
        }
        if !last_repeat.is_empty() {
            return Err(error(
                ERR_INVALID_REPEAT_OP,
                &last_repeat[..last_repeat.len() - after.len()],
            ));
        }
        Ok((after, greedy))
    }

    fn pop_operand(&mut self, before: &str, after: &str) -> Result<Node, String> {
        match self.stack.last() {
            Some(Item::Node(_)) => match self.stack.pop() {
                Some(Item::Node(n)) => Ok(n),
                _ => unreachable!("checked above"),
            },
            _ => Err(error(
                ERR_MISSING_REPEAT_ARGUMENT,
                &before[..before.len() - after.len()],
            )),
        }
    }

    /// Go's size and height limits on a node about to be pushed.
    fn check_limits(&self, n: &Node) -> Result<(), String> {
        if calc_size(n) > MAX_SIZE {
            return Err(error(ERR_LARGE, self.whole));
        }
        if height(n) > MAX_HEIGHT {
            return Err(error(ERR_NESTING_DEPTH, self.whole));
        }
        Ok(())
    }

    /// `(?flags)`, `(?flags:`, `(?P<name>`, `(?<name>`.
    fn parse_perl_flags(&mut self, s: &'a str) -> Result<&'a str, String> {
        let b = s.as_bytes();
        let starts_with_p = b.len() > 4 && b[2] == b'P' && b[3] == b'<';
        let starts_with_name = b.len() > 3 && b[2] == b'<';
        if starts_with_p || starts_with_name {
            let expr_start = if starts_with_p { 4 } else { 3 };
            let Some(end) = s.find('>') else {
                return Err(error(ERR_INVALID_NAMED_CAPTURE, s));
            };
            let capture = &s[..end + 1];
            let name = &s[expr_start..end];
            if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()) {
                return Err(error(ERR_INVALID_NAMED_CAPTURE, capture));
            }
            self.stack.push(Item::LeftParen {
                capture: true,
                flags: self.flags,
            });
            self.check_height_of_parens()?;
            return Ok(&s[end + 1..]);
        }
        let mut t = &s[2..];
        let mut flags = self.flags;
        let mut sign = 1;
        let mut saw_flag = false;
        while let Some(c) = t.chars().next() {
            t = &t[c.len_utf8()..];
            match c {
                'i' => {
                    flags |= FOLD_CASE;
                    saw_flag = true;
                }
                'm' => {
                    flags &= !ONE_LINE;
                    saw_flag = true;
                }
                's' => {
                    flags |= DOT_NL;
                    saw_flag = true;
                }
                'U' => {
                    flags |= NON_GREEDY;
                    saw_flag = true;
                }
                '-' => {
                    if sign < 0 {
                        break;
                    }
                    sign = -1;
                    // Invert so that the sets above become clears, and back at the end.
                    flags = !flags;
                    saw_flag = false;
                }
                ':' | ')' => {
                    if sign < 0 {
                        if !saw_flag {
                            break;
                        }
                        flags = !flags;
                    }
                    if c == ':' {
                        self.stack.push(Item::LeftParen {
                            capture: false,
                            flags: self.flags,
                        });
                    }
                    self.flags = flags;
                    return Ok(t);
                }
                _ => break,
            }
        }
        Err(error(ERR_INVALID_PERL_OP, &s[..s.len() - t.len()]))
    }

    fn check_height_of_parens(&self) -> Result<(), String> {
        let open = self
            .stack
            .iter()
            .filter(|i| matches!(i, Item::LeftParen { capture: true, .. }))
            .count();
        if open > MAX_HEIGHT {
            return Err(error(ERR_NESTING_DEPTH, self.whole));
        }
        Ok(())
    }

    fn parse_backslash(&mut self, t: &'a str) -> Result<&'a str, String> {
        let b = t.as_bytes();
        if b.len() >= 2 {
            match b[1] {
                b'A' => {
                    self.push(Node::BeginText);
                    return Ok(&t[2..]);
                }
                b'b' => {
                    self.push(Node::WordBoundary);
                    return Ok(&t[2..]);
                }
                b'B' => {
                    self.push(Node::NoWordBoundary);
                    return Ok(&t[2..]);
                }
                b'C' => return Err(error(ERR_INVALID_ESCAPE, &t[..2])),
                b'Q' => {
                    let rest = &t[2..];
                    let (lit, after) = match rest.find("\\E") {
                        Some(i) => (&rest[..i], &rest[i + 2..]),
                        None => (rest, ""),
                    };
                    for c in lit.chars() {
                        self.literal(c);
                    }
                    return Ok(after);
                }
                b'z' => {
                    self.push(Node::EndText);
                    return Ok(&t[2..]);
                }
                b'p' | b'P' => {
                    let (item, rest) = self.parse_unicode_class(t)?;
                    let fold = self.flags & FOLD_CASE != 0;
                    self.push(Node::Class(Class {
                        items: vec![item],
                        negated: false,
                        fold,
                    }));
                    return Ok(rest);
                }
                _ => {}
            }
            if let Some(item) = perl_class(&t[..2]) {
                let fold = self.flags & FOLD_CASE != 0;
                self.push(Node::Class(Class {
                    items: vec![item],
                    negated: false,
                    fold,
                }));
                return Ok(&t[2..]);
            }
        }
        let (c, rest) = parse_escape(t)?;
        match char::from_u32(c) {
            Some(c) => self.literal(c),
            // a surrogate: Go accepts it, and it matches nothing in a valid string
            None => self.push(Node::Class(Class {
                items: vec![ClassItem::Set("\\x{0}-\\x{10FFFF}".into(), false)],
                negated: true,
                fold: false,
            })),
        }
        Ok(rest)
    }

    /// `\pN`, `\p{Name}`, `\PN`, `\P{^Name}`...
    fn parse_unicode_class(&self, s: &'a str) -> Result<(ClassItem, &'a str), String> {
        let mut negated = s.as_bytes()[1] == b'P';
        let t = &s[2..];
        let (seq, mut name, rest) = match t.chars().next() {
            Some('{') => {
                let Some(end) = s.find('}') else {
                    return Err(error(ERR_INVALID_CHAR_RANGE, s));
                };
                (&s[..end + 1], &s[3..end], &s[end + 1..])
            }
            Some(c) => {
                let n = 2 + c.len_utf8();
                (&s[..n], &s[2..n], &s[n..])
            }
            None => (s, "", ""),
        };
        if let Some(n) = name.strip_prefix('^') {
            negated = !negated;
            name = n;
        }
        let Some((set, table_negated)) = unicode_table(name) else {
            return Err(error(ERR_INVALID_CHAR_RANGE, seq));
        };
        Ok((ClassItem::Set(set, negated != table_negated), rest))
    }

    fn parse_class(&mut self, s: &'a str) -> Result<&'a str, String> {
        let mut t = &s[1..];
        let mut class = Class {
            fold: self.flags & FOLD_CASE != 0,
            ..Class::default()
        };
        if t.starts_with('^') {
            class.negated = true;
            t = &t[1..];
        }
        let mut first = true;
        while t.is_empty() || !t.starts_with(']') || first {
            first = false;
            // POSIX [:alnum:]
            if t.len() > 2
                && t.starts_with("[:")
                && let Some(i) = t[2..].find(":]")
            {
                {
                    let name = &t[..i + 4];
                    let Some(item) = posix_class(name) else {
                        return Err(error(ERR_INVALID_CHAR_RANGE, name));
                    };
                    class.items.push(item);
                    t = &t[i + 4..];
                    continue;
                }
            }
            if t.len() >= 2 && t.starts_with('\\') && matches!(t.as_bytes()[1], b'p' | b'P') {
                let (item, rest) = self.parse_unicode_class(t)?;
                class.items.push(item);
                t = rest;
                continue;
            }
            if t.len() >= 2
                && let Some(item) = perl_class(&t[..2])
            {
                class.items.push(item);
                t = &t[2..];
                continue;
            }
            let rng = t;
            let (lo, rest) = parse_class_char(t, s)?;
            t = rest;
            let mut hi = lo;
            if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
                let (h, rest) = parse_class_char(&t[1..], s)?;
                t = rest;
                hi = h;
                if hi < lo {
                    return Err(error(ERR_INVALID_CHAR_RANGE, &rng[..rng.len() - t.len()]));
                }
            }
            // Surrogates cannot be in a string: clip a range to the characters around them.
            let lo = char::from_u32(lo).unwrap_or('\u{E000}');
            let hi = char::from_u32(hi).unwrap_or('\u{D7FF}');
            if lo <= hi {
                class.items.push(ClassItem::Range(lo, hi));
            } else {
                class
                    .items
                    .push(ClassItem::Set("\\x{0}-\\x{10FFFF}".into(), true));
            }
        }
        self.push(Node::Class(class));
        Ok(&t[1..])
    }
}

fn parse_class_char<'s>(s: &'s str, whole: &str) -> Result<(u32, &'s str), String> {
    if s.is_empty() {
        return Err(error(ERR_MISSING_BRACKET, whole));
    }
    if s.starts_with('\\') {
        return parse_escape(s);
    }
    let c = s.chars().next().unwrap_or('\0');
    Ok((c as u32, &s[c.len_utf8()..]))
}

/// Go's `parseEscape`: the code point of an ordinary escape sequence.
fn parse_escape(s: &str) -> Result<(u32, &str), String> {
    let t = &s[1..];
    let Some(c) = t.chars().next() else {
        return Err(error(ERR_TRAILING_BACKSLASH, ""));
    };
    let mut t = &t[c.len_utf8()..];
    let invalid = |t: &str| error(ERR_INVALID_ESCAPE, &s[..s.len() - t.len()]);
    match c {
        '1'..='7' | '0' => {
            // A single non-zero digit would be a backreference: not supported.
            if c != '0' && !t.starts_with(|d: char| ('0'..='7').contains(&d)) {
                return Err(invalid(t));
            }
            let mut r = c as u32 - '0' as u32;
            for _ in 1..3 {
                match t.as_bytes().first() {
                    Some(&d @ b'0'..=b'7') => {
                        r = r * 8 + (d - b'0') as u32;
                        t = &t[1..];
                    }
                    _ => break,
                }
            }
            Ok((r, t))
        }
        'x' => {
            let Some(c) = t.chars().next() else {
                return Err(invalid(t));
            };
            t = &t[c.len_utf8()..];
            if c == '{' {
                let mut r: u32 = 0;
                let mut nhex = 0;
                loop {
                    let Some(c) = t.chars().next() else {
                        return Err(invalid(t));
                    };
                    t = &t[c.len_utf8()..];
                    if c == '}' {
                        break;
                    }
                    let Some(v) = c.to_digit(16) else {
                        return Err(invalid(t));
                    };
                    r = r * 16 + v;
                    if r > 0x10FFFF {
                        return Err(invalid(t));
                    }
                    nhex += 1;
                }
                if nhex == 0 {
                    return Err(invalid(t));
                }
                return Ok((r, t));
            }
            let x = c.to_digit(16);
            let Some(c2) = t.chars().next() else {
                return Err(invalid(t));
            };
            t = &t[c2.len_utf8()..];
            match (x, c2.to_digit(16)) {
                (Some(x), Some(y)) => Ok((x * 16 + y, t)),
                _ => Err(invalid(t)),
            }
        }
        'a' => Ok((7, t)),
        'f' => Ok((12, t)),
        'n' => Ok((10, t)),
        'r' => Ok((13, t)),
        't' => Ok((9, t)),
        'v' => Ok((11, t)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c as u32, t)),
        _ => Err(invalid(t)),
    }
}

/// `\d \D \s \S \w \W`: ASCII classes, as in Go.
fn perl_class(s: &str) -> Option<ClassItem> {
    let (body, negated) = match s {
        "\\d" => ("0-9", false),
        "\\D" => ("0-9", true),
        "\\s" => ("\\t\\n\\x0C\\r ", false),
        "\\S" => ("\\t\\n\\x0C\\r ", true),
        "\\w" => ("0-9A-Za-z_", false),
        "\\W" => ("0-9A-Za-z_", true),
        _ => return None,
    };
    Some(ClassItem::Set(body.to_string(), negated))
}

/// `[:alpha:]` and `[:^alpha:]`: Go's ASCII POSIX classes.
fn posix_class(name: &str) -> Option<ClassItem> {
    let (negated, key) = match name.strip_prefix("[:^") {
        Some(rest) => (true, rest.strip_suffix(":]")?),
        None => (false, name.strip_prefix("[:")?.strip_suffix(":]")?),
    };
    let body = match key {
        "alnum" => "0-9A-Za-z",
        "alpha" => "A-Za-z",
        "ascii" => "\\x00-\\x7F",
        "blank" => "\\t ",
        "cntrl" => "\\x00-\\x1F\\x7F",
        "digit" => "0-9",
        "graph" => "!-~",
        "lower" => "a-z",
        "print" => " -~",
        "punct" => "!-/:-@\\[-`{-~",
        "space" => "\\t\\n\\x0B\\x0C\\r ",
        "upper" => "A-Z",
        "word" => "0-9A-Za-z_",
        "xdigit" => "0-9A-Fa-f",
        _ => return None,
    };
    Some(ClassItem::Set(body.to_string(), negated))
}

/// Go's `canonicalName`: a leading capital, the rest lower case, without `_`, `-` or spaces.
fn canonical_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b == b'_' || b == b'-' || b == b' ' {
            continue;
        }
        if out.is_empty() {
            out.push(b.to_ascii_uppercase() as char);
        } else {
            out.push(b.to_ascii_lowercase() as char);
        }
    }
    out
}

/// Go's `unicodeTable` (Go 1.25 and later: names matched ignoring case, `_`, `-` and spaces,
/// with `Any`, `Assigned`, `ASCII`, `LC`, `Cn` and the general category aliases), as the
/// body of a `regex` class and whether it is inverted.
fn unicode_table(name: &str) -> Option<(String, bool)> {
    let canon = canonical_name(name);
    match canon.as_str() {
        "Any" => return Some(("\\x{0}-\\x{10FFFF}".into(), false)),
        "Assigned" => return Some(("\\p{gc=Cn}".into(), true)),
        "Ascii" => return Some(("\\x{0}-\\x{7F}".into(), false)),
        "Lc" => return Some(("\\p{gc=LC}".into(), false)),
        _ => {}
    }
    if let Some(c) = CATEGORIES.iter().find(|c| canonical_name(c) == canon) {
        return Some((format!("\\p{{gc={c}}}"), false));
    }
    if let Some(s) = SCRIPTS.iter().find(|s| canonical_name(s) == canon) {
        return Some((format!("\\p{{sc={s}}}"), false));
    }
    if let Some((_, c)) = CATEGORY_ALIASES
        .iter()
        .find(|(alias, _)| canonical_name(alias) == canon)
    {
        return Some((format!("\\p{{gc={c}}}"), false));
    }
    None
}

/// Go's `unicode.Categories`.
const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Cn", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn",
    "N", "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm",
    "So", "Z", "Zl", "Zp", "Zs",
];

/// Go's `unicode.CategoryAliases` (Unicode's PropertyValueAliases for gc).
const CATEGORY_ALIASES: &[(&str, &str)] = &[
    ("Cased_Letter", "LC"),
    ("Close_Punctuation", "Pe"),
    ("Combining_Mark", "M"),
    ("Connector_Punctuation", "Pc"),
    ("Control", "Cc"),
    ("Currency_Symbol", "Sc"),
    ("Dash_Punctuation", "Pd"),
    ("Decimal_Number", "Nd"),
    ("Enclosing_Mark", "Me"),
    ("Final_Punctuation", "Pf"),
    ("Format", "Cf"),
    ("Initial_Punctuation", "Pi"),
    ("Letter", "L"),
    ("Letter_Number", "Nl"),
    ("Line_Separator", "Zl"),
    ("Lowercase_Letter", "Ll"),
    ("Mark", "M"),
    ("Math_Symbol", "Sm"),
    ("Modifier_Letter", "Lm"),
    ("Modifier_Symbol", "Sk"),
    ("Nonspacing_Mark", "Mn"),
    ("Number", "N"),
    ("Open_Punctuation", "Ps"),
    ("Other", "C"),
    ("Other_Letter", "Lo"),
    ("Other_Number", "No"),
    ("Other_Punctuation", "Po"),
    ("Other_Symbol", "So"),
    ("Paragraph_Separator", "Zp"),
    ("Private_Use", "Co"),
    ("Punctuation", "P"),
    ("Separator", "Z"),
    ("Space_Separator", "Zs"),
    ("Spacing_Mark", "Mc"),
    ("Surrogate", "Cs"),
    ("Symbol", "S"),
    ("Titlecase_Letter", "Lt"),
    ("Unassigned", "Cn"),
    ("Uppercase_Letter", "Lu"),
    ("cntrl", "Cc"),
    ("digit", "Nd"),
    ("punct", "P"),
];

/// Go's `unicode.Scripts` (Unicode 15.0).
const SCRIPTS: &[&str] = &[
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];

/// Go's `repeatIsValid`: nested counted repetitions multiply to at most `n` copies.
fn repeat_is_valid(re: &Node, n: i32) -> bool {
    let mut n = n;
    if let Node::Repeat(_, min, max, _) = re {
        let mut m = *max;
        if m == 0 {
            return true;
        }
        if m < 0 {
            m = *min;
        }
        if m > n {
            return false;
        }
        if m > 0 {
            n /= m;
        }
    }
    children(re).iter().all(|s| repeat_is_valid(s, n))
}

fn children(n: &Node) -> Vec<&Node> {
    match n {
        Node::Capture(s) | Node::Star(s, _) | Node::Plus(s, _) | Node::Quest(s, _) => vec![s],
        Node::Repeat(s, ..) => vec![s],
        Node::Concat(v) | Node::Alt(v) => v.iter().collect(),
        _ => Vec::new(),
    }
}

/// Go's `calcSize`.
fn calc_size(n: &Node) -> u64 {
    let size = match n {
        Node::Lit(..) => 1,
        Node::Capture(s) | Node::Star(s, _) => 2 + calc_size(s),
        Node::Plus(s, _) | Node::Quest(s, _) => 1 + calc_size(s),
        Node::Concat(v) => v.iter().map(calc_size).sum(),
        Node::Alt(v) => v.iter().map(calc_size).sum::<u64>() + (v.len() as u64).saturating_sub(1),
        Node::Repeat(s, min, max, _) => {
            let sub = calc_size(s);
            if *max == -1 {
                if *min == 0 {
                    2 + sub
                } else {
                    1 + *min as u64 * sub
                }
            } else {
                *max as u64 * sub + (*max - *min) as u64
            }
        }
        _ => 0,
    };
    size.max(1)
}

/// The compile weight of a node (see [`Compiled::weight`]).
fn weight(n: &Node) -> u64 {
    let w = match n {
        Node::Lit(_, fold) => 1 + *fold as u64,
        Node::Class(c) => {
            let items: u64 = c
                .items
                .iter()
                .map(|item| match item {
                    ClassItem::Range(_, hi) if (*hi as u32) < 0x80 => 1,
                    ClassItem::Range(lo, hi) => 8 + (*hi as u64 - *lo as u64) / 4096,
                    ClassItem::Set(body, _) if body.contains("\\p{") => 20_000,
                    ClassItem::Set(..) => 1,
                })
                .sum();
            items * (1 + c.negated as u64) * (1 + c.fold as u64)
        }
        Node::AnyNotNl | Node::Any => 16,
        Node::Capture(s) | Node::Star(s, _) | Node::Plus(s, _) | Node::Quest(s, _) => 1 + weight(s),
        Node::Repeat(s, min, max, _) => {
            let times = if *max >= 0 { *max } else { *min }.max(1) as u64;
            1 + times.saturating_mul(weight(s))
        }
        Node::Concat(v) | Node::Alt(v) => v.iter().map(weight).fold(0, u64::saturating_add),
        _ => 1,
    };
    w.max(1)
}

fn height(n: &Node) -> usize {
    1 + children(n).into_iter().map(height).max().unwrap_or(0)
}

/// Writes the `regex` crate equivalent of a node.
fn emit(n: &Node, out: &mut String) {
    match n {
        Node::Empty => out.push_str("(?:)"),
        Node::Lit(c, fold) => {
            if *fold {
                out.push_str("(?i:");
            }
            let _ = write!(out, "\\x{{{:X}}}", *c as u32);
            if *fold {
                out.push(')');
            }
        }
        Node::Class(c) => {
            if c.fold {
                out.push_str("(?i:");
            }
            out.push('[');
            if c.negated {
                out.push('^');
            }
            for item in &c.items {
                match item {
                    ClassItem::Range(lo, hi) => {
                        let _ = write!(out, "\\x{{{:X}}}-\\x{{{:X}}}", *lo as u32, *hi as u32);
                    }
                    ClassItem::Set(body, negated) => {
                        out.push('[');
                        if *negated {
                            out.push('^');
                        }
                        out.push_str(body);
                        out.push(']');
                    }
                }
            }
            if c.items.is_empty() && !c.negated {
                // `[]` cannot be written: a class that matches nothing
                out.push_str("^\\x{0}-\\x{10FFFF}");
            }
            out.push(']');
            if c.fold {
                out.push(')');
            }
        }
        Node::AnyNotNl => out.push_str("[^\\n]"),
        Node::Any => out.push_str("[\\x{0}-\\x{10FFFF}]"),
        Node::BeginLine => out.push_str("(?m:^)"),
        Node::EndLine => out.push_str("(?m:$)"),
        Node::BeginText => out.push_str("\\A"),
        Node::EndText => out.push_str("\\z"),
        Node::WordBoundary => out.push_str("(?-u:\\b)"),
        Node::NoWordBoundary => out.push_str("(?-u:\\B)"),
        Node::Capture(s) => {
            out.push_str("(?:");
            emit(s, out);
            out.push(')');
        }
        Node::Star(s, greedy) | Node::Plus(s, greedy) | Node::Quest(s, greedy) => {
            out.push_str("(?:");
            emit(s, out);
            out.push(')');
            out.push(match n {
                Node::Star(..) => '*',
                Node::Plus(..) => '+',
                _ => '?',
            });
            if !greedy {
                out.push('?');
            }
        }
        Node::Repeat(s, min, max, greedy) => {
            out.push_str("(?:");
            emit(s, out);
            out.push(')');
            if *max == -1 {
                let _ = write!(out, "{{{min},}}");
            } else {
                let _ = write!(out, "{{{min},{max}}}");
            }
            if !greedy {
                out.push('?');
            }
        }
        Node::Concat(v) => {
            out.push_str("(?:");
            for s in v {
                emit(s, out);
            }
            out.push(')');
        }
        Node::Alt(v) => {
            out.push_str("(?:");
            for (i, s) in v.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(s, out);
            }
            out.push(')');
        }
    }
}

/// Size limit of one compiled program (the `regex` crate's own measure).
const COMPILED_SIZE_LIMIT: usize = 32 << 20;

/// Compiles a Go regular expression. The error is Go's message (`error parsing regexp: ...`).
pub fn compile(pattern: &str) -> Result<Compiled, String> {
    let node = parse(pattern)?;
    let size = calc_size(&node);
    if size > MAX_SIZE {
        return Err(error(ERR_LARGE, pattern));
    }
    if height(&node) > MAX_HEIGHT {
        return Err(error(ERR_NESTING_DEPTH, pattern));
    }
    let mut translated = String::with_capacity(pattern.len() * 4);
    emit(&node, &mut translated);
    let re = regex::RegexBuilder::new(&translated)
        .size_limit(COMPILED_SIZE_LIMIT)
        .nest_limit(u32::MAX)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => error(ERR_LARGE, pattern),
            other => error(ERR_INVALID_CHAR_CLASS, &format!("{pattern} ({other})")),
        })?;
    Ok(Compiled {
        re,
        weight: weight(&node).saturating_add(pattern.len() as u64),
    })
}

/// A compiled pattern or Go's error, and when it was last used.
type Entry = (Result<Arc<Compiled>, String>, u64);

/// The bounded cache of compiled patterns.
struct Cache {
    entries: HashMap<Arc<str>, Entry>,
    /// Sum of the cached patterns' weights.
    weight: u64,
    clock: u64,
}

/// At most this many patterns, and this much weight summed over them (about 32 MiB of
/// programs), stay compiled.
const CACHE_ENTRIES: usize = 1024;
const CACHE_WEIGHT: u64 = 4 << 20;

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// A compiled pattern from the cache, compiling it on a miss; the bool tells a miss.
pub fn cached(pattern: &str) -> (Result<Arc<Compiled>, String>, bool) {
    {
        let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cache) = guard.as_mut() {
            cache.clock += 1;
            let clock = cache.clock;
            if let Some((r, used)) = cache.entries.get_mut(pattern) {
                *used = clock;
                return (r.clone(), false);
            }
        }
    }
    let result = compile(pattern).map(Arc::new);
    let weight = match &result {
        Ok(c) => c.weight,
        Err(e) => e.len() as u64,
    };
    let mut guard = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(|| Cache {
        entries: HashMap::new(),
        weight: 0,
        clock: 0,
    });
    if weight <= CACHE_WEIGHT / 4 {
        while cache.entries.len() >= CACHE_ENTRIES || cache.weight + weight > CACHE_WEIGHT {
            let Some(oldest) = cache
                .entries
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((r, _)) = cache.entries.remove(&oldest) {
                cache.weight -= match &r {
                    Ok(c) => c.weight,
                    Err(e) => e.len() as u64,
                };
            }
        }
        cache.clock += 1;
        let clock = cache.clock;
        cache
            .entries
            .insert(Arc::from(pattern), (result.clone(), clock));
        cache.weight += weight;
    }
    (result, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, text: &str) -> Result<bool, String> {
        compile(pattern).map(|c| c.re.is_match(text))
    }

    #[test]
    fn accepts_what_go_accepts() {
        assert_eq!(m(r"\Q.*\E", ".*"), Ok(true));
        assert_eq!(m(r"\Q.*\E", "ab"), Ok(false));
        assert_eq!(m("a{", "a{"), Ok(true));
        assert_eq!(m("a{,2}", "a{,2}"), Ok(true));
        assert_eq!(m("x{2,1", "x{2,1"), Ok(true));
        assert_eq!(m(r"\101", "A"), Ok(true));
        assert_eq!(m(r"\0", "\0"), Ok(true));
        assert_eq!(m(r"[\012-\015]", "\r"), Ok(true));
        assert_eq!(m(r"\x41\x{42}", "AB"), Ok(true));
        assert_eq!(m(r"\xff", "a"), Ok(false));
        assert_eq!(m(r"\xff", "ÿ"), Ok(true));
        assert_eq!(m("(?P<x>a)(?<y>b)", "ab"), Ok(true));
        assert_eq!(m("(?U)^a+$", "aaa"), Ok(true));
        assert_eq!(m("(?i)^école$", "ÉCOLE"), Ok(true));
        assert_eq!(m("a|", "x"), Ok(true));
        assert_eq!(m("c\\z", "abc"), Ok(true));
        assert_eq!(m("[[:alpha:]]+", "abc"), Ok(true));
        assert_eq!(m("[[:^alpha:]]", "abc"), Ok(false));
        assert_eq!(m(r"\p{Greek}", "αβγ"), Ok(true));
        assert_eq!(m(r"\p{greek}", "αβγ"), Ok(true));
        assert_eq!(m(r"\pL", "é"), Ok(true));
        assert_eq!(m(r"\p{^L}", "é"), Ok(false));
        assert_eq!(m(r"\PL", "1"), Ok(true));
        assert_eq!(m(r"\p{Letter}", "é"), Ok(true));
        assert_eq!(m(r"\p{Any}", "é"), Ok(true));
        assert_eq!(m(r"\p{ASCII}", "é"), Ok(false));
        assert_eq!(m(r"\p{Canadian_Aboriginal}", "ᐁ"), Ok(true));
        assert_eq!(m("(?:a)", "a"), Ok(true));
        assert_eq!(m("(?i)(?-i:a)", "A"), Ok(false));
        assert_eq!(m("(?i:a)A", "AA"), Ok(true));
        assert_eq!(m("(?i:a)A", "aa"), Ok(false));
        assert_eq!(m("(?:[a-z]{4}){0,250}", "abcd"), Ok(true));
        assert_eq!(m("a*{", "aa{"), Ok(true));
        assert_eq!(m(r"[^\x00-\x{10FFFF}]", "a"), Ok(false));
        assert_eq!(m(r"\_", "_"), Ok(true));
        assert_eq!(m("(?)a", "a"), Ok(true));
    }

    #[test]
    fn ascii_perl_classes_and_boundaries_as_go() {
        assert_eq!(m(r"^\w$", "é"), Ok(false));
        assert_eq!(m(r"^\d$", "٣"), Ok(false));
        assert_eq!(m(r"^\s$", "\u{a0}"), Ok(false));
        assert_eq!(m(r"^\s$", "\u{b}"), Ok(false));
        assert_eq!(m(r"^[[:space:]]$", "\u{b}"), Ok(true));
        assert_eq!(m(r"\bwörld\b", "héllo wörld ✓"), Ok(true));
        assert_eq!(m(r"(?i)\w", "ſ"), Ok(true));
        assert_eq!(m(r"(?i)\W", "ſ"), Ok(false));
        assert_eq!(m(r"(?i)[k]", "\u{212a}"), Ok(true));
        assert_eq!(m("^.$", "🎉"), Ok(true));
        assert_eq!(m("a.b", "a\nb"), Ok(false));
        assert_eq!(m("(?s)a.b", "a\nb"), Ok(true));
        assert_eq!(m("[^a]", "\n"), Ok(true));
        assert_eq!(m("a$", "a\n"), Ok(false));
        assert_eq!(m("(?m)^b$", "a\nb"), Ok(true));
    }

    #[test]
    fn refuses_what_go_refuses_with_its_message() {
        let e = |p: &str| compile(p).err().unwrap_or_else(|| panic!("{p} compiled"));
        assert_eq!(
            e("(?x) a b"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?x`"
        );
        assert_eq!(
            e("a++"),
            "error parsing regexp: invalid nested repetition operator: `++`"
        );
        assert_eq!(
            e("a**"),
            "error parsing regexp: invalid nested repetition operator: `**`"
        );
        assert_eq!(
            e("a{1001}"),
            "error parsing regexp: invalid repeat count: `{1001}`"
        );
        assert_eq!(
            e(r"\u00e9"),
            "error parsing regexp: invalid escape sequence: `\\u`"
        );
        assert_eq!(
            e(r"(a)\1"),
            "error parsing regexp: invalid escape sequence: `\\1`"
        );
        assert_eq!(
            e(r"c\Z"),
            "error parsing regexp: invalid escape sequence: `\\Z`"
        );
        assert_eq!(
            e("a(?=b)"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
        );
        assert_eq!(
            e("(?>a)"),
            "error parsing regexp: invalid or unsupported Perl syntax: `(?>`"
        );
        assert_eq!(e("("), "error parsing regexp: missing closing ): `(`");
        assert_eq!(e(")"), "error parsing regexp: unexpected ): `)`");
        assert_eq!(e("[a"), "error parsing regexp: missing closing ]: `[a`");
        assert_eq!(
            e("[z-a]"),
            "error parsing regexp: invalid character class range: `z-a`"
        );
        assert_eq!(
            e("*"),
            "error parsing regexp: missing argument to repetition operator: `*`"
        );
        assert_eq!(
            e("\\"),
            "error parsing regexp: trailing backslash at end of expression: ``"
        );
        assert_eq!(
            e(r"\C"),
            "error parsing regexp: invalid escape sequence: `\\C`"
        );
        assert_eq!(
            e(r"\p{Nope}"),
            "error parsing regexp: invalid character class range: `\\p{Nope}`"
        );
        assert_eq!(
            e("[[:nope:]]"),
            "error parsing regexp: invalid character class range: `[:nope:]`"
        );
        assert_eq!(
            e("(?P<>a)"),
            "error parsing regexp: invalid named capture: `(?P<>`"
        );
        assert_eq!(
            e(r"\Q\E*"),
            "error parsing regexp: missing argument to repetition operator: `*`"
        );
        assert!(compile("((((((((((x{2}){2}){2}){2}){2}){2}){2}){2}){2}){2})").is_err());
        assert!(compile("(?:[a-z]{4}){0,251}").is_err());
        assert!(compile(&format!("{}{}", "(".repeat(1000), ")".repeat(1000))).is_err());
        assert!(compile(&format!("{}{}", "(".repeat(999), ")".repeat(999))).is_ok());
        assert!(compile(r"\p{Garay}").is_err());
        assert!(compile("a{100000}").is_err());
    }

    #[test]
    fn the_cache_compiles_a_pattern_once() {
        let p = "^cache-test-[0-9]+$";
        let (_, miss1) = cached(p);
        let (r, miss2) = cached(p);
        assert!(miss1 && !miss2);
        assert!(r.unwrap().re.is_match("cache-test-42"));
    }
}
