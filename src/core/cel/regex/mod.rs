//! `matches` with Go's regular expressions (RE2 syntax as Go's `regexp/syntax` parses it in
//! Perl mode): a front end that accepts and refuses exactly what Go does, with Go's error
//! messages, and translates the pattern into an equivalent pattern of the `regex` crate with
//! every construct spelled out: `\d`, `\w`, `\s` and `\b` are ASCII-only as in Go, flags are
//! resolved at parse time, and literals and ranges are written as code points.
//!
//! Compiled patterns are kept in a bounded cache shared by all evaluations, so a pattern built
//! at run time is compiled once, not on every evaluation.

mod cache;
mod classes;
mod program;
mod syntax;
#[cfg(test)]
mod tests;

pub use cache::cached;
use program::*;
use syntax::*;

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
