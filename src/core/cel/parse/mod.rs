//! CEL's parser, written for speed: the same tree, ids and offsets as the `cel` crate's
//! parser (its `IdedExpr` and `SourceInfo`), kept flat (see [`tree`]), from a hand-written
//! lexer and a recursive descent over the crate's grammar, with the crate's macro expansion
//! and recursion limit.
//!
//! It accepts only what the crate accepts. It gives no messages: whatever it rejects, the
//! crate's parser parses again for its (cel-go's) error messages (see `compile.rs`).

mod lexer;
mod literal;
mod macros;
mod parser;
pub(crate) mod tree;

pub(crate) use parser::Rejected;
pub(crate) use tree::Tree;

/// Parses `source` as `::cel::parser::Parser::new()` (with `macros`) or
/// `::cel::Env::default().parser()` (without) does, with optional syntax off, escaped
/// identifiers on, and `max_recursion_depth`.
pub(crate) fn parse(
    source: &str,
    macros: bool,
    max_recursion_depth: u16,
) -> Result<Tree<'_>, Rejected> {
    let tokens = lexer::tokens(source).map_err(|_| Rejected)?;
    let mut p = parser::Parser::new(source, tokens, macros, max_recursion_depth);
    p.start()?;
    Ok(p.tree)
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
    let mut p = parser::Parser::new(source, tokens, macros, max_recursion_depth);
    match p.start() {
        Ok(_) => None,
        Err(_) => Some(p.stopped_at()),
    }
}

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;
