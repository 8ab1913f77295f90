//! The parser of Go's `regexp/syntax` (Perl flags): the parse tree, with Go's errors.

use super::classes::*;
use super::*;

// Parse flags (Go's syntax.Flags).
pub(super) const FOLD_CASE: u16 = 1;
pub(super) const DOT_NL: u16 = 1 << 3;
pub(super) const ONE_LINE: u16 = 1 << 4;
pub(super) const NON_GREEDY: u16 = 1 << 5;
/// Go's `syntax.Perl`: ClassNL | OneLine | PerlX | UnicodeGroups (ClassNL, PerlX and
/// UnicodeGroups never change, so only OneLine is tracked).
pub(super) const PERL: u16 = ONE_LINE;

#[derive(Debug, Clone)]
pub(super) enum Node {
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
pub(super) struct Class {
    pub(super) items: Vec<ClassItem>,
    pub(super) negated: bool,
    pub(super) fold: bool,
}

#[derive(Debug, Clone)]
pub(super) enum ClassItem {
    Range(char, char),
    /// A class written in `regex` syntax (the body of a bracket), possibly negated.
    Set(String, bool),
}

pub(super) enum Item {
    Node(Node),
    LeftParen { capture: bool, flags: u16 },
    Bar,
}

pub(super) struct Parser<'a> {
    whole: &'a str,
    flags: u16,
    stack: Vec<Item>,
}

/// Parses a Go regular expression (Perl flags, as `regexp.Compile`).
pub(super) fn parse(s: &str) -> Result<Node, String> {
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
pub(super) fn parse_repeat(s: &str) -> Option<(i32, i32, &str)> {
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
pub(super) fn parse_int(s: &str) -> Option<(i32, &str)> {
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
            // Only an ASCII letter after the backslash makes a Perl class (`\d`); a wide
            // character there is an escape error, below.
            if let Some(item) = t.get(..2).and_then(perl_class) {
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
            if let Some(item) = t.get(..2).and_then(perl_class) {
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
