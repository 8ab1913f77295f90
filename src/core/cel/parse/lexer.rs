//! The tokens of CEL's grammar, as the `cel` crate's lexer makes them: the longest match
//! wins, a keyword beats an identifier of the same length, and anything else is an error.
//! Offsets are bytes, `stop` the last byte of the token (inclusive), as the crate gives them.

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Eq,
    Ne,
    In,
    Lt,
    Le,
    Ge,
    Gt,
    And,
    Or,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    LParen,
    RParen,
    Dot,
    Comma,
    Minus,
    Excl,
    Question,
    Colon,
    Plus,
    Star,
    Slash,
    Percent,
    True,
    False,
    Null,
    Float,
    Int,
    Uint,
    String,
    Bytes,
    Ident,
    /// A backtick-quoted identifier.
    EscIdent,
    Eof,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Token {
    pub kind: Kind,
    /// Byte offset of the first character.
    pub start: u32,
    /// Byte offset just past the last character.
    pub end: u32,
}

impl Token {
    pub fn text<'s>(&self, source: &'s str) -> &'s str {
        &source[self.start as usize..self.end as usize]
    }
}

/// The source does not lex.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct LexError;

/// The tokens of `source`, ending with `Eof`; whitespace and comments are left out.
pub(super) fn tokens(source: &str) -> Result<Vec<Token>, LexError> {
    let mut out = Vec::new();
    tokens_into(source, &mut out)?;
    Ok(out)
}

/// [`tokens`] into `out`.
fn tokens_into(source: &str, out: &mut Vec<Token>) -> Result<(), LexError> {
    out.clear();
    if source.len() > u32::MAX as usize - 1 {
        return Err(LexError);
    }
    let b = source.as_bytes();
    out.reserve(source.len() / 2 + 1);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\r' | b'\n' | 0x0c => {
                i += 1;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        let (kind, len) = token_at(b, i)?;
        out.push(Token {
            kind,
            start: i as u32,
            end: (i + len) as u32,
        });
        i += len;
    }
    out.push(Token {
        kind: Kind::Eof,
        start: b.len() as u32,
        end: b.len() as u32,
    });
    Ok(())
}

fn token_at(b: &[u8], i: usize) -> Result<(Kind, usize), LexError> {
    let next = b.get(i + 1).copied();
    let two = |k2: Kind, second: u8, k1: Option<Kind>| match (next == Some(second), k1) {
        (true, _) => Ok((k2, 2)),
        (false, Some(k)) => Ok((k, 1)),
        (false, None) => Err(LexError),
    };
    Ok(match b[i] {
        b'=' => two(Kind::Eq, b'=', None)?,
        b'!' => two(Kind::Ne, b'=', Some(Kind::Excl))?,
        b'<' => two(Kind::Le, b'=', Some(Kind::Lt))?,
        b'>' => two(Kind::Ge, b'=', Some(Kind::Gt))?,
        b'&' => two(Kind::And, b'&', None)?,
        b'|' => two(Kind::Or, b'|', None)?,
        b'[' => (Kind::LBracket, 1),
        b']' => (Kind::RBracket, 1),
        b'{' => (Kind::LBrace, 1),
        b'}' => (Kind::RBrace, 1),
        b'(' => (Kind::LParen, 1),
        b')' => (Kind::RParen, 1),
        b',' => (Kind::Comma, 1),
        b'-' => (Kind::Minus, 1),
        b'?' => (Kind::Question, 1),
        b':' => (Kind::Colon, 1),
        b'+' => (Kind::Plus, 1),
        b'*' => (Kind::Star, 1),
        b'/' => (Kind::Slash, 1),
        b'%' => (Kind::Percent, 1),
        b'.' => match number(b, i) {
            Some(found) => found,
            None => (Kind::Dot, 1),
        },
        b'0'..=b'9' => number(b, i).ok_or(LexError)?,
        b'"' | b'\'' => (Kind::String, string(b, i).ok_or(LexError)?),
        b'`' => (Kind::EscIdent, escaped_ident(b, i).ok_or(LexError)?),
        c if c.is_ascii_alphabetic() || c == b'_' => word(b, i),
        _ => return Err(LexError),
    })
}

fn digits(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i
}

fn hex_digits(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_hexdigit() {
        i += 1;
    }
    i
}

/// The end of `EXPONENT` at `i`, if one is there.
fn exponent(b: &[u8], i: usize) -> Option<usize> {
    if !matches!(b.get(i), Some(b'e' | b'E')) {
        return None;
    }
    let mut j = i + 1;
    if matches!(b.get(j), Some(b'+' | b'-')) {
        j += 1;
    }
    let end = digits(b, j);
    (end > j).then_some(end)
}

/// The longest of `NUM_FLOAT`, `NUM_INT` and `NUM_UINT` at `i` (which is a digit or a `.`).
fn number(b: &[u8], i: usize) -> Option<(Kind, usize)> {
    if b[i] == b'.' {
        // '.' DIGIT+ EXPONENT?
        let end = digits(b, i + 1);
        if end == i + 1 {
            return None;
        }
        let end = exponent(b, end).unwrap_or(end);
        return Some((Kind::Float, end - i));
    }
    let mut best = (Kind::Int, digits(b, i) - i);
    let int_end = i + best.1;
    // DIGIT+ ('u' | 'U')
    if matches!(b.get(int_end), Some(b'u' | b'U')) {
        best = (Kind::Uint, best.1 + 1);
    }
    // '0x' HEXDIGIT+ ('u' | 'U')?
    if b[i] == b'0' && b.get(i + 1) == Some(&b'x') {
        let end = hex_digits(b, i + 2);
        if end > i + 2 {
            let (kind, end) = if matches!(b.get(end), Some(b'u' | b'U')) {
                (Kind::Uint, end + 1)
            } else {
                (Kind::Int, end)
            };
            if end - i > best.1 {
                best = (kind, end - i);
            }
        }
    }
    // DIGIT+ '.' DIGIT+ EXPONENT? | DIGIT+ EXPONENT
    let mut float_end = None;
    if b.get(int_end) == Some(&b'.') {
        let frac = digits(b, int_end + 1);
        if frac > int_end + 1 {
            float_end = Some(exponent(b, frac).unwrap_or(frac));
        }
    }
    if float_end.is_none() {
        float_end = exponent(b, int_end);
    }
    if let Some(end) = float_end
        && end - i > best.1
    {
        best = (Kind::Float, end - i);
    }
    Some(best)
}

/// An identifier or keyword at `i`; a string or bytes literal if one starts there with a
/// prefix (`r`, `b`, `br` ...) and is longer.
fn word(b: &[u8], i: usize) -> (Kind, usize) {
    let mut end = i + 1;
    while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
        end += 1;
    }
    let len = end - i;
    let kind = match &b[i..end] {
        b"in" => Kind::In,
        b"true" => Kind::True,
        b"false" => Kind::False,
        b"null" => Kind::Null,
        _ => Kind::Ident,
    };
    let literal = match b[i] {
        b'r' | b'R' => raw_string(b, i + 1).map(|n| (Kind::String, n + 1)),
        b'b' | b'B' => {
            let after = i + 1;
            match b.get(after) {
                Some(b'"' | b'\'') => string(b, after).map(|n| (Kind::Bytes, n + 1)),
                Some(b'r' | b'R') => raw_string(b, after + 1).map(|n| (Kind::Bytes, n + 2)),
                _ => None,
            }
        }
        _ => None,
    };
    match literal {
        Some((k, n)) if n > len => (k, n),
        _ => (kind, len),
    }
}

fn escaped_ident(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len()
        && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'_' | b'.' | b'-' | b'/' | b' '))
    {
        j += 1;
    }
    (j > i + 1 && b.get(j) == Some(&b'`')).then_some(j + 1 - i)
}

/// The length of `ESC_SEQ` at `i` (a backslash), if valid.
fn escape(b: &[u8], i: usize) -> Option<usize> {
    let hex = |from: usize, n: usize| {
        (from + n <= b.len() && b[from..from + n].iter().all(u8::is_ascii_hexdigit))
            .then_some(from + n - i)
    };
    match *b.get(i + 1)? {
        b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'"' | b'\'' | b'\\' | b'?' | b'`' => {
            Some(2)
        }
        b'0'..=b'3' => (matches!(b.get(i + 2), Some(b'0'..=b'7'))
            && matches!(b.get(i + 3), Some(b'0'..=b'7')))
        .then_some(4),
        b'x' | b'X' => hex(i + 2, 2),
        b'u' => hex(i + 2, 4),
        b'U' => hex(i + 2, 8),
        _ => None,
    }
}

/// The longest (non-raw) `STRING` at `i` (a quote): triple-quoted, or single-quoted.
fn string(b: &[u8], i: usize) -> Option<usize> {
    let q = b[i];
    let triple = if b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
        // (ESC_SEQ | ~'\\')*? then the closing triple: the first one.
        let mut j = i + 3;
        loop {
            if j >= b.len() {
                break None;
            }
            if b[j] == q && b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q) {
                break Some(j + 3 - i);
            }
            if b[j] == b'\\' {
                match escape(b, j) {
                    Some(n) => j += n,
                    None => break None,
                }
            } else {
                j += 1;
            }
        }
    } else {
        None
    };
    if triple.is_some() {
        return triple;
    }
    let mut j = i + 1;
    loop {
        match *b.get(j)? {
            c if c == q => return Some(j + 1 - i),
            b'\n' | b'\r' => return None,
            b'\\' => j += escape(b, j)?,
            _ => j += 1,
        }
    }
}

/// The longest raw `STRING` whose quotes start at `i` (just after the `r`), without the `r`.
fn raw_string(b: &[u8], i: usize) -> Option<usize> {
    let q = *b.get(i)?;
    if q != b'"' && q != b'\'' {
        return None;
    }
    if b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q) {
        let mut j = i + 3;
        while j + 2 < b.len() {
            if b[j] == q && b[j + 1] == q && b[j + 2] == q {
                return Some(j + 3 - i);
            }
            j += 1;
        }
    }
    let mut j = i + 1;
    loop {
        match *b.get(j)? {
            c if c == q => return Some(j + 1 - i),
            b'\n' | b'\r' => return None,
            _ => j += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Kind::*;
    use super::*;

    fn kinds(s: &str) -> Vec<(Kind, &str)> {
        tokens(s)
            .unwrap()
            .into_iter()
            .filter(|t| t.kind != Eof)
            .map(|t| (t.kind, t.text(s)))
            .collect()
    }

    #[test]
    fn operators_take_the_longest_match() {
        assert_eq!(
            kinds("a<=b!=!c>=d<e>f==g&&h||i"),
            vec![
                (Ident, "a"),
                (Le, "<="),
                (Ident, "b"),
                (Ne, "!="),
                (Excl, "!"),
                (Ident, "c"),
                (Ge, ">="),
                (Ident, "d"),
                (Lt, "<"),
                (Ident, "e"),
                (Gt, ">"),
                (Ident, "f"),
                (Eq, "=="),
                (Ident, "g"),
                (And, "&&"),
                (Ident, "h"),
                (Or, "||"),
                (Ident, "i"),
            ]
        );
        for bad in ["=", "&", "|", "a = b", "#", "$", "\u{b}", "é", "@x"] {
            assert_eq!(tokens(bad), Err(LexError), "{bad:?}");
        }
    }

    #[test]
    fn keywords_beat_identifiers_of_the_same_length_only() {
        assert_eq!(
            kinds("in inx true truex false null nullx _in"),
            vec![
                (In, "in"),
                (Ident, "inx"),
                (True, "true"),
                (Ident, "truex"),
                (False, "false"),
                (Null, "null"),
                (Ident, "nullx"),
                (Ident, "_in"),
            ]
        );
    }

    #[test]
    fn numbers() {
        let cases: &[(&str, &[(Kind, &str)])] = &[
            ("1", &[(Int, "1")]),
            ("01", &[(Int, "01")]),
            ("1u", &[(Uint, "1u")]),
            ("1U", &[(Uint, "1U")]),
            ("0x1F", &[(Int, "0x1F")]),
            ("0x1Fu", &[(Uint, "0x1Fu")]),
            ("0x", &[(Int, "0"), (Ident, "x")]),
            ("0X1", &[(Int, "0"), (Ident, "X1")]),
            ("1.5", &[(Float, "1.5")]),
            (".5", &[(Float, ".5")]),
            (".5e3", &[(Float, ".5e3")]),
            ("1e5", &[(Float, "1e5")]),
            ("1E-5", &[(Float, "1E-5")]),
            ("1.5e+3", &[(Float, "1.5e+3")]),
            ("1e", &[(Int, "1"), (Ident, "e")]),
            ("1e+", &[(Int, "1"), (Ident, "e"), (Plus, "+")]),
            ("1.", &[(Int, "1"), (Dot, ".")]),
            ("1.e5", &[(Int, "1"), (Dot, "."), (Ident, "e5")]),
            ("1.5u", &[(Float, "1.5"), (Ident, "u")]),
            ("a.5", &[(Ident, "a"), (Float, ".5")]),
            ("1..2", &[(Int, "1"), (Dot, "."), (Float, ".2")]),
            ("1_0", &[(Int, "1"), (Ident, "_0")]),
        ];
        for (s, want) in cases {
            assert_eq!(kinds(s), want.to_vec(), "{s}");
        }
    }

    #[test]
    fn strings_in_every_quoting() {
        let cases: &[(&str, &[(Kind, &str)])] = &[
            (r#""a""#, &[(String, r#""a""#)]),
            ("'a'", &[(String, "'a'")]),
            (r#""""a"b""""#, &[(String, r#""""a"b""""#)]),
            ("'''a\n'b'''", &[(String, "'''a\n'b'''")]),
            ("''''''", &[(String, "''''''")]),
            ("''", &[(String, "''")]),
            (r#"r"\q""#, &[(String, r#"r"\q""#)]),
            (r"R'\'", &[(String, r"R'\'")]),
            ("r'''\\'''", &[(String, "r'''\\'''")]),
            ("b'a'", &[(Bytes, "b'a'")]),
            ("B\"\\xff\"", &[(Bytes, "B\"\\xff\"")]),
            ("br'\\q'", &[(Bytes, "br'\\q'")]),
            ("BR'''x'''", &[(Bytes, "BR'''x'''")]),
            ("rb'x'", &[(Ident, "rb"), (String, "'x'")]),
            ("r", &[(Ident, "r")]),
            ("bx'y'", &[(Ident, "bx"), (String, "'y'")]),
            // The first closing triple ends the literal.
            (
                "'''a''' + '''b'''",
                &[(String, "'''a'''"), (Plus, "+"), (String, "'''b'''")],
            ),
            // A failed triple quote is an empty string and more.
            ("'''a'", &[(String, "''"), (String, "'a'")]),
            ("r'''a'", &[(String, "r''"), (String, "'a'")]),
            (
                r"'\a\b\f\n\r\t\v\\\?\`\'\x0a\X0A\u00e9\U0001F600\012'",
                &[(
                    String,
                    r"'\a\b\f\n\r\t\v\\\?\`\'\x0a\X0A\u00e9\U0001F600\012'",
                )],
            ),
            ("'é'", &[(String, "'é'")]),
        ];
        for (s, want) in cases {
            assert_eq!(kinds(s), want.to_vec(), "{s}");
        }
        for bad in [
            "'a", "'a\nb'", "'\\q'", "'\\x1'", "'\\u12'", "'\\400'", "'''a", "\"\\\"", "r'a\n'",
        ] {
            assert_eq!(tokens(bad), Err(LexError), "{bad:?}");
        }
    }

    #[test]
    fn escaped_identifiers_comments_and_whitespace() {
        assert_eq!(
            kinds("a.`b-c/d e.f_1` // x\n\t\r\x0c+"),
            vec![
                (Ident, "a"),
                (Dot, "."),
                (EscIdent, "`b-c/d e.f_1`"),
                (Plus, "+")
            ]
        );
        for bad in ["``", "`a", "`a+b`", "/", "/ /"] {
            let t = tokens(bad);
            assert!(
                t.is_err() || t.unwrap().iter().any(|t| t.kind == Slash),
                "{bad:?}"
            );
        }
    }
}
