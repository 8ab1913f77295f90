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
    let mut spare = SPARE.with(|s| std::mem::take(&mut *s.borrow_mut()));
    if lexer::tokens_into(source, &mut spare.tokens).is_err() {
        give_back(spare);
        return Err(Rejected);
    }
    let mut tree = Tree::new(source);
    tree.nodes = std::mem::take(&mut spare.nodes);
    tree.lists = std::mem::take(&mut spare.lists);
    let stacks = [
        std::mem::take(&mut spare.stack),
        std::mem::take(&mut spare.ops),
    ];
    let tokens = std::mem::take(&mut spare.tokens);
    let mut p = parser::Parser::new(source, tokens, tree, stacks, macros, max_recursion_depth);
    let parsed = p.start();
    let parser::Parser {
        tokens,
        stack,
        ops,
        tree,
        ..
    } = p;
    spare.tokens = tokens;
    spare.stack = stack;
    spare.ops = ops;
    match parsed {
        Ok(_) => {
            give_back(spare);
            Ok(tree)
        }
        Err(e) => {
            recycle(tree);
            give_back(spare);
            Err(e)
        }
    }
}

/// The vectors of a parse, kept by each thread for the next one (a compile takes a few
/// microseconds: allocating them anew was a good part of it). Kept only up to this many
/// entries each.
#[derive(Default)]
struct Spare {
    tokens: Vec<lexer::Token>,
    nodes: Vec<tree::PNode>,
    lists: Vec<tree::Id>,
    stack: Vec<tree::Id>,
    ops: Vec<tree::Id>,
}

const SPARE_MAX: usize = 1 << 12;

thread_local! {
    static SPARE: std::cell::RefCell<Spare> = std::cell::RefCell::new(Spare::default());
}

fn give_back(spare: Spare) {
    let fits = |len: usize| len <= SPARE_MAX;
    let spare = Spare {
        tokens: keep(spare.tokens, fits),
        nodes: Vec::new(),
        lists: Vec::new(),
        stack: keep(spare.stack, fits),
        ops: keep(spare.ops, fits),
    };
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        s.tokens = spare.tokens;
        s.stack = spare.stack;
        s.ops = spare.ops;
    });
}

/// The vector emptied, if its capacity is one to keep.
fn keep<T>(mut v: Vec<T>, fits: impl Fn(usize) -> bool) -> Vec<T> {
    v.clear();
    if fits(v.capacity()) { v } else { Vec::new() }
}

/// Gives a tree's vectors back for the next parse of this thread (the tree is dropped).
pub(crate) fn recycle(tree: Tree<'_>) {
    let fits = |len: usize| len <= SPARE_MAX;
    let nodes = keep(tree.nodes, fits);
    let lists = keep(tree.lists, fits);
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        if s.nodes.capacity() < nodes.capacity() {
            s.nodes = nodes;
        }
        if s.lists.capacity() < lists.capacity() {
            s.lists = lists;
        }
    });
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
    let stacks = [Vec::new(), Vec::new()];
    let tree = Tree::new(source);
    let mut p = parser::Parser::new(source, tokens, tree, stacks, macros, max_recursion_depth);
    match p.start() {
        Ok(_) => None,
        Err(_) => Some(p.stopped_at()),
    }
}

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;
