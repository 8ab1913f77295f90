//! CEL's parser, written for speed: the same tree, ids and offsets as the `cel` crate's
//! parser (its `IdedExpr` and `SourceInfo`), from a hand-written lexer and a recursive
//! descent over the crate's grammar, with the crate's macro expansion and recursion limit.
//!
//! It accepts only what the crate accepts. It gives no messages: whatever it rejects, the
//! crate's parser parses again for its (cel-go's) error messages (see `compile.rs`).

mod lexer;
mod literal;
mod macros;
mod parser;

use ::cel::common::ast::{IdedExpr, SourceInfo};

pub(crate) use parser::Rejected;

/// Parses `source` as `::cel::parser::Parser::new()` (with `macros`) or
/// `::cel::Env::default().parser()` (without) does, with optional syntax off, escaped
/// identifiers on, and `max_recursion_depth`.
pub(crate) fn parse(
    source: &str,
    macros: bool,
    max_recursion_depth: u16,
) -> Result<(IdedExpr, SourceInfo), Rejected> {
    let tokens = lexer::tokens(source).map_err(|_| Rejected)?;
    let mut p = parser::Parser::new(source, tokens, macros, max_recursion_depth);
    let e = p.start()?;
    Ok((e, p.ids.info))
}

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;
