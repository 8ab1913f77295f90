//! Recursive descent over the tokens, following the `cel` crate's grammar and its visitor:
//! ids are given in the order the visitor gives them, at the offsets of the same tokens.

use super::lexer::{Kind, Token};
use super::tree::{Id, Name, PKind, Tree};
use super::{literal, macros};
use crate::core::cel::value::Value;

/// The expression is not one the `cel` crate accepts (or not one this parser is sure of).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rejected;

type Parsed = Result<Id, Rejected>;

impl Tree<'_> {
    /// A new node at the offsets of `token`, its kind given later.
    fn at(&mut self, token: Token) -> Id {
        self.push(Some((token.start, token.end)), PKind::Unspecified)
    }

    /// A new node whose offsets are given later with [`Tree::place`].
    fn reserve(&mut self) -> Id {
        self.push(None, PKind::Unspecified)
    }

    fn place(&mut self, id: Id, token: Token) {
        self.node_mut(id).at = Some((token.start, token.end));
    }

    /// A new node at the offsets of `id`.
    pub(super) fn copy_of(&mut self, id: Id, kind: PKind) -> Id {
        let at = self.node(id).at;
        self.push(at, kind)
    }

    fn set(&mut self, id: Id, kind: PKind) -> Id {
        self.node_mut(id).kind = kind;
        id
    }
}

pub(super) struct Parser<'s> {
    source: &'s str,
    pub tokens: Vec<Token>,
    pos: usize,
    pub tree: Tree<'s>,
    /// The children of the lists under way (arguments, elements, terms), in order.
    pub stack: Vec<Id>,
    /// The operators of the `&&` / `||` chains under way.
    pub ops: Vec<Id>,
    macros: bool,
    /// `expr` rules open, and the most that may be (the crate's recursion limit).
    depth: u32,
    max_depth: u32,
}

fn reserved(name: &str) -> bool {
    matches!(
        name,
        "as" | "break"
            | "const"
            | "continue"
            | "else"
            | "for"
            | "function"
            | "if"
            | "import"
            | "let"
            | "loop"
            | "package"
            | "namespace"
            | "return"
            | "var"
            | "void"
            | "while"
    )
}

impl<'s> Parser<'s> {
    /// `max_recursion_depth` is the value given to the crate's parser of the same name.
    /// A parser of `source`'s `tokens`, into `tree` (empty, kept for its capacity), with
    /// the stacks given (kept for theirs).
    pub fn new(
        source: &'s str,
        tokens: Vec<Token>,
        tree: Tree<'s>,
        [stack, ops]: [Vec<Id>; 2],
        macros: bool,
        max_recursion_depth: u16,
    ) -> Self {
        // The crate keeps max + 1, and fails on entering a rule with more `expr` rules open
        // than that: at most max + 1 may be open.
        let max_depth = if max_recursion_depth == u16::MAX {
            u32::from(u16::MAX) - 1
        } else {
            u32::from(max_recursion_depth) + 1
        };
        // About a node per token (fewer for brackets, more for macros).
        let mut tree = tree;
        tree.nodes.reserve(tokens.len() + tokens.len() / 2);
        tree.lists.reserve(tokens.len());
        Parser {
            source,
            tokens,
            pos: 0,
            tree,
            stack,
            ops,
            macros,
            depth: 0,
            max_depth,
        }
    }

    /// The byte range of the token the parser stopped at (after a rejection; empty at the end
    /// of the rule).
    pub(super) fn stopped_at(&self) -> std::ops::Range<usize> {
        match self.tokens.get(self.pos).or(self.tokens.last()) {
            Some(t) => t.start as usize..t.end as usize,
            None => 0..0,
        }
    }

    fn peek(&self) -> Kind {
        self.tokens[self.pos].kind
    }

    fn peek_at(&self, ahead: usize) -> Kind {
        self.tokens
            .get(self.pos + ahead)
            .map_or(Kind::Eof, |t| t.kind)
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos];
        if t.kind != Kind::Eof {
            self.pos += 1;
        }
        t
    }

    fn expect(&mut self, kind: Kind) -> Result<Token, Rejected> {
        if self.peek() == kind {
            Ok(self.bump())
        } else {
            Err(Rejected)
        }
    }

    fn text(&self, t: Token) -> &'s str {
        t.text(self.source)
    }

    fn node(&mut self, token: Token, kind: PKind) -> Id {
        let id = self.tree.at(token);
        self.tree.set(id, kind)
    }

    /// `start : expr EOF`
    pub fn start(&mut self) -> Parsed {
        let e = self.expr()?;
        self.expect(Kind::Eof)?;
        self.tree.root = e;
        Ok(e)
    }

    /// `expr : conditionalOr ('?' conditionalOr ':' expr)?`
    fn expr(&mut self) -> Parsed {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(Rejected);
        }
        let cond = self.logic(Kind::Or)?;
        let e = if self.peek() == Kind::Question {
            let op = self.bump();
            let id = self.tree.at(op);
            let if_true = self.logic(Kind::Or)?;
            self.expect(Kind::Colon)?;
            let if_false = self.expr()?;
            let args = self.stack.len();
            self.stack.extend([cond, if_true, if_false]);
            self.call(id, Name::Static("_?_:_"), None, args)?
        } else {
            cond
        };
        self.depth -= 1;
        Ok(e)
    }

    /// `conditionalOr` and `conditionalAnd`: the terms, each operator's id given after the
    /// term that follows it, then a balanced tree of the operators.
    fn logic(&mut self, op: Kind) -> Parsed {
        let term = |p: &mut Self| {
            if op == Kind::Or {
                p.logic(Kind::And)
            } else {
                p.relation()
            }
        };
        let first = term(self)?;
        if self.peek() != op {
            return Ok(first);
        }
        let (terms, ops) = (self.stack.len(), self.ops.len());
        self.stack.push(first);
        while self.peek() == op {
            let t = self.bump();
            let next = term(self)?;
            self.stack.push(next);
            let id = self.tree.at(t);
            self.ops.push(id);
        }
        let function = if op == Kind::Or { "_||_" } else { "_&&_" };
        let n = self.ops.len() - ops;
        let root = self.balanced(function, terms, ops, 0, n - 1);
        self.stack.truncate(terms);
        self.ops.truncate(ops);
        Ok(root)
    }

    /// The crate's balanced tree of the chain of `&&` or `||` whose terms start at
    /// `stack[terms]` and operators at `ops[ops]`, over the operators `lo..=hi`.
    fn balanced(
        &mut self,
        function: &'static str,
        terms: usize,
        ops: usize,
        lo: usize,
        hi: usize,
    ) -> Id {
        let mid = (lo + hi).div_ceil(2);
        let left = if mid == lo {
            self.stack[terms + mid]
        } else {
            self.balanced(function, terms, ops, lo, mid - 1)
        };
        let right = if mid == hi {
            self.stack[terms + mid + 1]
        } else {
            self.balanced(function, terms, ops, mid + 1, hi)
        };
        self.binary(self.ops[ops + mid], function, left, right)
    }

    /// `relation : calc | relation op relation` (one level, left to right).
    fn relation(&mut self) -> Parsed {
        let mut lhs = self.additive()?;
        loop {
            let function = match self.peek() {
                Kind::Lt => "_<_",
                Kind::Le => "_<=_",
                Kind::Ge => "_>=_",
                Kind::Gt => "_>_",
                Kind::Eq => "_==_",
                Kind::Ne => "_!=_",
                Kind::In => "@in",
                _ => return Ok(lhs),
            };
            let t = self.bump();
            let id = self.tree.at(t);
            let rhs = self.additive()?;
            lhs = self.binary(id, function, lhs, rhs);
        }
    }

    fn additive(&mut self) -> Parsed {
        let mut lhs = self.multiplicative()?;
        loop {
            let function = match self.peek() {
                Kind::Plus => "_+_",
                Kind::Minus => "_-_",
                _ => return Ok(lhs),
            };
            let t = self.bump();
            let id = self.tree.at(t);
            let rhs = self.multiplicative()?;
            lhs = self.binary(id, function, lhs, rhs);
        }
    }

    fn multiplicative(&mut self) -> Parsed {
        let mut lhs = self.unary()?;
        loop {
            let function = match self.peek() {
                Kind::Star => "_*_",
                Kind::Slash => "_/_",
                Kind::Percent => "_%_",
                _ => return Ok(lhs),
            };
            let t = self.bump();
            let id = self.tree.at(t);
            let rhs = self.unary()?;
            lhs = self.binary(id, function, lhs, rhs);
        }
    }

    /// `unary : member | '!'+ member | '-'+ member`. A single `-` before a number is the
    /// number's sign (the grammar's first alternative wins); a run of them is taken whole
    /// by the operator, and an even run cancels out.
    fn unary(&mut self) -> Parsed {
        let kind = self.peek();
        if kind != Kind::Excl && kind != Kind::Minus {
            return self.member();
        }
        let mut n = 0;
        while self.peek_at(n) == kind {
            n += 1;
        }
        if kind == Kind::Minus && n == 1 && matches!(self.peek_at(1), Kind::Int | Kind::Float) {
            return self.member();
        }
        let first = self.bump();
        for _ in 1..n {
            self.bump();
        }
        if n % 2 == 0 {
            return self.member_unsigned();
        }
        let id = self.tree.at(first);
        let operand = self.member_unsigned()?;
        let function = if kind == Kind::Excl { "!_" } else { "-_" };
        let args = self.stack.len();
        self.stack.push(operand);
        self.call(id, Name::Static(function), None, args)
    }

    /// A member after a run of unary operators: a `-` here cannot be a sign (the run took
    /// them all), except after `!`, where `!-1` is the literal -1.
    fn member_unsigned(&mut self) -> Parsed {
        if self.peek() == Kind::Minus
            && !(matches!(self.peek_at(1), Kind::Int | Kind::Float)
                && self.tokens[self.pos.saturating_sub(1)].kind == Kind::Excl)
        {
            return Err(Rejected);
        }
        self.member()
    }

    /// `member : primary ('.' id | '.' id '(' args ')' | '[' expr ']')*`
    fn member(&mut self) -> Parsed {
        let mut e = self.primary()?;
        loop {
            match self.peek() {
                Kind::Dot => {
                    let dot = self.bump();
                    match self.peek() {
                        Kind::Ident if self.peek_at(1) == Kind::LParen => {
                            let name = self.bump();
                            let open = self.bump();
                            let id = self.tree.at(open);
                            let args = self.args()?;
                            let function = Name::Src(name.start, name.end);
                            e = self.call(id, function, Some(e), args)?;
                        }
                        Kind::Ident => {
                            let name = self.bump();
                            let field = Name::Src(name.start, name.end);
                            e = self.select(dot, e, field);
                        }
                        Kind::EscIdent => {
                            let name = self.bump();
                            let field = Name::Src(name.start + 1, name.end - 1);
                            e = self.select(dot, e, field);
                        }
                        _ => return Err(Rejected),
                    }
                }
                Kind::LBracket => {
                    let open = self.bump();
                    let id = self.tree.at(open);
                    if self.peek() == Kind::Question {
                        return Err(Rejected);
                    }
                    let index = self.expr()?;
                    self.expect(Kind::RBracket)?;
                    e = self.binary(id, "_[_]", e, index);
                }
                _ => return Ok(e),
            }
        }
    }

    fn select(&mut self, dot: Token, operand: Id, field: Name) -> Id {
        self.node(
            dot,
            PKind::Select {
                operand,
                field,
                test: false,
            },
        )
    }

    /// The arguments of a call, after its `(`, through its `)`: pushed on the stack, from
    /// the place returned.
    fn args(&mut self) -> Result<usize, Rejected> {
        let args = self.stack.len();
        if self.peek() == Kind::RParen {
            self.bump();
            return Ok(args);
        }
        loop {
            let a = self.expr()?;
            self.stack.push(a);
            match self.bump().kind {
                Kind::Comma => {}
                Kind::RParen => return Ok(args),
                _ => return Err(Rejected),
            }
        }
    }

    fn primary(&mut self) -> Parsed {
        match self.peek() {
            Kind::Dot | Kind::Ident => self.name(),
            Kind::LParen => {
                self.bump();
                let e = self.expr()?;
                self.expect(Kind::RParen)?;
                Ok(e)
            }
            Kind::LBracket => self.list(),
            Kind::LBrace => self.map(),
            Kind::Minus => {
                self.bump();
                self.number(true)
            }
            Kind::Int | Kind::Float => self.number(false),
            Kind::Uint => {
                let t = self.bump();
                let v = literal::uint(self.text(t)).ok_or(Rejected)?;
                Ok(self.node(t, PKind::Lit(Value::Uint(v))))
            }
            kind @ (Kind::String | Kind::Bytes) => {
                let t = self.bump();
                let bytes = literal::unquote(self.text(t), kind == Kind::Bytes).ok_or(Rejected)?;
                let value = if kind == Kind::Bytes {
                    Value::Bytes(bytes.into())
                } else {
                    Value::String(String::from_utf8(bytes).map_err(|_| Rejected)?.into())
                };
                Ok(self.node(t, PKind::Lit(value)))
            }
            Kind::True => {
                let t = self.bump();
                Ok(self.node(t, PKind::Lit(Value::Bool(true))))
            }
            Kind::False => {
                let t = self.bump();
                Ok(self.node(t, PKind::Lit(Value::Bool(false))))
            }
            Kind::Null => {
                let t = self.bump();
                Ok(self.node(t, PKind::Lit(Value::Null)))
            }
            _ => Err(Rejected),
        }
    }

    fn number(&mut self, negative: bool) -> Parsed {
        let t = self.bump();
        let text = self.text(t);
        let value = match t.kind {
            Kind::Int => Value::Int(literal::int(text, negative).ok_or(Rejected)?),
            Kind::Float => Value::Double(literal::double(text, negative).ok_or(Rejected)?),
            _ => return Err(Rejected),
        };
        Ok(self.node(t, PKind::Lit(value)))
    }

    /// An identifier, a global call, or a message: `.`? IDENTIFIER then `(`, or
    /// (`.` IDENTIFIER)* then `{`.
    fn name(&mut self) -> Parsed {
        let leading_dot = self.peek() == Kind::Dot;
        if leading_dot {
            self.bump();
        }
        let id_token = self.expect(Kind::Ident)?;
        let name = self.text(id_token);
        match self.peek() {
            Kind::LParen => {
                if reserved(name) {
                    return Err(Rejected);
                }
                let open = self.bump();
                let function = if leading_dot {
                    Name::Owned(format!(".{name}").into())
                } else {
                    Name::Src(id_token.start, id_token.end)
                };
                let id = self.tree.at(open);
                let args = self.args()?;
                self.call(id, function, None, args)
            }
            _ => {
                // A message if the dotted name goes on to a `{`.
                let mut ahead = 0;
                while self.peek_at(ahead) == Kind::Dot && self.peek_at(ahead + 1) == Kind::Ident {
                    ahead += 2;
                }
                if self.peek_at(ahead) == Kind::LBrace {
                    return self.message(leading_dot, id_token, ahead);
                }
                if reserved(name) {
                    return Err(Rejected);
                }
                let ident = if leading_dot {
                    Name::Owned(format!(".{name}").into())
                } else {
                    Name::Src(id_token.start, id_token.end)
                };
                Ok(self.node(id_token, PKind::Ident(ident)))
            }
        }
    }

    /// `'.'? IDENTIFIER ('.' IDENTIFIER)* '{' fields? ','? '}'`, after the first name.
    fn message(&mut self, leading_dot: bool, first: Token, rest: usize) -> Parsed {
        let mut type_name = String::new();
        if leading_dot {
            type_name.push('.');
        }
        type_name.push_str(self.text(first));
        for _ in 0..rest / 2 {
            self.bump();
            let t = self.bump();
            type_name.push('.');
            type_name.push_str(self.text(t));
        }
        let open = self.bump();
        let id = self.tree.at(open);
        let entries = self.stack.len();
        if !self.empty_or_trailing(Kind::RBrace) {
            loop {
                let name = self.bump();
                let field = match name.kind {
                    Kind::Ident => Name::Src(name.start, name.end),
                    Kind::EscIdent => Name::Src(name.start + 1, name.end - 1),
                    _ => return Err(Rejected),
                };
                let col = self.expect(Kind::Colon)?;
                let entry_id = self.tree.at(col);
                let value = self.expr()?;
                self.tree.set(entry_id, PKind::Field { name: field, value });
                self.stack.push(entry_id);
                if self.peek() != Kind::Comma {
                    break;
                }
                self.bump();
                if self.peek() == Kind::RBrace {
                    break;
                }
            }
        }
        self.expect(Kind::RBrace)?;
        let fields = self.take_list(entries);
        Ok(self.tree.set(
            id,
            PKind::Struct {
                type_name: type_name.into(),
                fields,
            },
        ))
    }

    /// The ids pushed on the stack from `from`, taken off as a list.
    fn take_list(&mut self, from: usize) -> super::tree::List {
        let list = self.tree.make_list(&self.stack[from..]);
        self.stack.truncate(from);
        list
    }

    /// `'[' elements? ','? ']'`
    fn list(&mut self) -> Parsed {
        let open = self.bump();
        let id = self.tree.at(open);
        let elements = self.stack.len();
        if !self.empty_or_trailing(Kind::RBracket) {
            loop {
                if self.peek() == Kind::Question {
                    return Err(Rejected);
                }
                let e = self.expr()?;
                self.stack.push(e);
                if self.peek() != Kind::Comma {
                    break;
                }
                self.bump();
                if self.peek() == Kind::RBracket {
                    break;
                }
            }
        }
        self.expect(Kind::RBracket)?;
        let items = self.take_list(elements);
        Ok(self.tree.set(id, PKind::List(items)))
    }

    /// `'{' entries? ','? '}'`: each entry's id (its `:`) comes before its key's.
    fn map(&mut self) -> Parsed {
        let open = self.bump();
        let id = self.tree.at(open);
        let entries = self.stack.len();
        if !self.empty_or_trailing(Kind::RBrace) {
            loop {
                if self.peek() == Kind::Question {
                    return Err(Rejected);
                }
                let entry_id = self.tree.reserve();
                let key = self.expr()?;
                let col = self.expect(Kind::Colon)?;
                self.tree.place(entry_id, col);
                let value = self.expr()?;
                self.tree.set(entry_id, PKind::MapEntry { key, value });
                self.stack.push(entry_id);
                if self.peek() != Kind::Comma {
                    break;
                }
                self.bump();
                if self.peek() == Kind::RBrace {
                    break;
                }
            }
        }
        self.expect(Kind::RBrace)?;
        let entries = self.take_list(entries);
        Ok(self.tree.set(id, PKind::Map(entries)))
    }

    /// At `close`, or at `,` `close` (an empty literal with its optional comma, which is then
    /// taken): no elements.
    fn empty_or_trailing(&mut self, close: Kind) -> bool {
        match self.peek() {
            k if k == close => true,
            Kind::Comma if self.peek_at(1) == close => {
                self.bump();
                true
            }
            _ => false,
        }
    }

    /// A binary operator's call (never a macro).
    fn binary(&mut self, id: Id, function: &'static str, lhs: Id, rhs: Id) -> Id {
        let args = self.tree.make_list(&[lhs, rhs]);
        self.tree.set(
            id,
            PKind::Call {
                func: Name::Static(function),
                target: None,
                args,
            },
        )
    }

    /// A call whose arguments are on the stack from `args` (taken off), or its macro's
    /// expansion.
    fn call(&mut self, id: Id, function: Name, target: Option<Id>, args: usize) -> Parsed {
        if self.macros {
            // A function named with a leading dot is no macro.
            let name = match &function {
                Name::Src(start, end) => &self.source[*start as usize..*end as usize],
                Name::Static(name) => name,
                Name::Owned(_) => "",
            };
            if let Some(expanded) =
                macros::expand(&mut self.tree, id, name, target, &self.stack[args..])?
            {
                self.stack.truncate(args);
                return Ok(expanded);
            }
        }
        let args = self.take_list(args);
        Ok(self.tree.set(
            id,
            PKind::Call {
                func: function,
                target,
                args,
            },
        ))
    }
}
