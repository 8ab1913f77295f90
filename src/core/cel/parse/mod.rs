//! CEL's parser, written for speed: a hand-written lexer and a recursive descent over the
//! `cel` crate's grammar, with the crate's macro expansion and recursion limit, building our
//! tree (`ast`) directly: the tree the crate's parse converted would give, node for node and
//! span for span (the differential tests compare the two).
//!
//! It accepts only what the crate accepts. It gives no messages: whatever it rejects, the
//! crate's parser parses again for its (cel-go's) error messages (see `compile.rs`).

mod lexer;
mod literal;
mod macros;
mod parser;

use crate::core::cel::CompileError;
use crate::core::cel::ast::build::{Builder, Sub};
use crate::core::cel::ast::{Name, Node};

pub(crate) use parser::Rejected;

/// A rule parsed: our tree, its names not resolved yet (see `ast::resolve`).
#[derive(Debug)]
pub(crate) struct Parse {
    pub root: Node,
    /// The depth of the `cel` crate's tree of the rule (a leaf is 1).
    pub depth: usize,
    /// The names of the comprehensions' variables (the tree refers to them by place).
    pub names: Vec<Name>,
    /// Errors cel-go's parser reports that the crate's does not.
    pub errors: Vec<CompileError>,
}

/// Parses `source` as `::cel::parser::Parser::new()` (with `macros`) or
/// `::cel::Env::default().parser()` (without) does, with optional syntax off, escaped
/// identifiers on, and `max_recursion_depth`; `strings_ext` when the string extension's
/// functions are declared.
pub(crate) fn parse(
    source: &str,
    macros: bool,
    strings_ext: bool,
    max_recursion_depth: u16,
) -> Result<Parse, Rejected> {
    let tokens = lexer::tokens(source).map_err(|_| Rejected)?;
    let b = Builder::new(source, strings_ext);
    let mut p = parser::Parser::new(source, tokens, b, macros, max_recursion_depth);
    let Sub { node, depth } = p.start()?;
    Ok(Parse {
        root: node,
        depth: depth as usize,
        names: p.b.names,
        errors: p.b.errors,
    })
}

/// Where [`parse`] stops on a rule it rejects: the byte range of the token it could not take
/// (empty at the end of the rule), or None when the rule cannot even be split into tokens (or
/// is accepted).
pub(crate) fn rejected_at(
    source: &str,
    macros: bool,
    max_recursion_depth: u16,
) -> Option<std::ops::Range<usize>> {
    let tokens = lexer::tokens(source).ok()?;
    let b = Builder::new(source, false);
    let mut p = parser::Parser::new(source, tokens, b, macros, max_recursion_depth);
    match p.start() {
        Ok(_) => None,
        Err(_) => Some(p.stopped_at()),
    }
}

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;
