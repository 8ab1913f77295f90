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
    let Spare {
        mut tokens,
        nodes,
        lists,
        stack,
        ops,
    } = SPARE.with(|s| s.take());
    if lexer::tokens_into(source, &mut tokens).is_err() {
        give_back(Spare {
            tokens,
            nodes,
            lists,
            stack,
            ops,
        });
        return Err(Rejected);
    }
    let mut tree = Tree::new(source);
    tree.nodes = nodes;
    tree.lists = lists;
    let mut p = parser::Parser::new(
        source,
        tokens,
        tree,
        [stack, ops],
        macros,
        max_recursion_depth,
    );
    let parsed = p.start();
    let parser::Parser {
        tokens,
        stack,
        ops,
        mut tree,
        ..
    } = p;
    let rejected = parsed.is_err();
    give_back(Spare {
        tokens,
        stack,
        ops,
        // A rejected rule's tree goes back too; an accepted one, once converted (`recycle`).
        nodes: if rejected {
            std::mem::take(&mut tree.nodes)
        } else {
            Vec::new()
        },
        lists: if rejected {
            std::mem::take(&mut tree.lists)
        } else {
            Vec::new()
        },
    });
    parsed.map(|_| tree)
}

/// The vectors of a parse, kept by each thread for the next one (a compile takes a few
/// microseconds: allocating them anew was a good part of it).
#[derive(Default)]
struct Spare {
    tokens: Vec<lexer::Token>,
    nodes: Vec<tree::PNode>,
    lists: Vec<tree::Id>,
    stack: Vec<tree::Id>,
    ops: Vec<tree::Id>,
}

/// The largest capacity kept of each vector (a long rule's are dropped).
const SPARE_MAX: usize = 1 << 12;

thread_local! {
    static SPARE: std::cell::RefCell<Spare> = std::cell::RefCell::new(Spare::default());
}

/// Keeps the vectors given for the next parse of this thread, each emptied, where larger
/// than the one kept and not too large.
fn give_back(spare: Spare) {
    fn keep<T>(kept: &mut Vec<T>, mut v: Vec<T>) {
        if v.capacity() <= SPARE_MAX && v.capacity() > kept.capacity() {
            v.clear();
            *kept = v;
        }
    }
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        keep(&mut s.tokens, spare.tokens);
        keep(&mut s.nodes, spare.nodes);
        keep(&mut s.lists, spare.lists);
        keep(&mut s.stack, spare.stack);
        keep(&mut s.ops, spare.ops);
    });
}

/// Gives a tree's vectors back for the next parse of this thread (the tree is dropped).
pub(crate) fn recycle(tree: Tree<'_>) {
    give_back(Spare {
        nodes: tree.nodes,
        lists: tree.lists,
        ..Spare::default()
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
