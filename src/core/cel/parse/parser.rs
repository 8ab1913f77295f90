//! Recursive descent over the tokens, following the `cel` crate's grammar: our tree built
//! as the rules end (see [`Builder`]), each node placed at the token the crate places it at.

use std::ops::Range;

use super::lexer::{Kind, Token};
use super::{literal, macros};
use crate::core::cel::ast::build::{Builder, Sub};
use crate::core::cel::ast::{self, Name};
use crate::core::cel::value::Value;

/// The expression is not one the `cel` crate accepts (or not one this parser is sure of).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rejected;

type Parsed = Result<Sub, Rejected>;

/// The offsets of a token, as a node placed at it has them.
fn own(t: Token) -> Option<Range<usize>> {
    Some(t.start as usize..t.end as usize)
}

pub(super) struct Parser<'s> {
    source: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    pub b: Builder<'s>,
    /// The children of the lists under way (arguments, elements, terms), in order.
    stack: Vec<Sub>,
    /// The operators of the `&&` / `||` chains under way.
    ops: Vec<Token>,
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

/// What stands in the stack for a term taken out of it.
fn hole() -> Sub {
    Sub {
        node: ast::Node {
            span: ast::span::NO_SPAN,
            kind: ast::Kind::Var(0),
            scalar: false,
        },
        depth: 0,
    }
}

impl<'s> Parser<'s> {
    /// A parser of `source`'s `tokens` into `b`. `max_recursion_depth` is the value given to
    /// the crate's parser of the same name.
    pub fn new(
        source: &'s str,
        tokens: Vec<Token>,
        b: Builder<'s>,
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
        Parser {
            source,
            tokens,
            pos: 0,
            b,
            stack: Vec::new(),
            ops: Vec::new(),
            macros,
            depth: 0,
            max_depth,
        }
    }

    /// The byte range of the token the parser stopped at (after a rejection; empty at the end
    /// of the rule).
    pub(super) fn stopped_at(&self) -> Range<usize> {
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

    fn leaf(&self, token: Token, kind: ast::Kind) -> Sub {
        self.b.leaf(own(token), kind)
    }

    /// `start : expr EOF`
    pub fn start(&mut self) -> Parsed {
        let e = self.expr()?;
        self.expect(Kind::Eof)?;
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
            let if_true = self.logic(Kind::Or)?;
            self.expect(Kind::Colon)?;
            let if_false = self.expr()?;
            let args = self.stack.len();
            self.stack.extend([cond, if_true, if_false]);
            self.call(op, "_?_:_", None, args)?
        } else {
            cond
        };
        self.depth -= 1;
        Ok(e)
    }

    /// `conditionalOr` and `conditionalAnd`: the terms and operators, then the crate's
    /// balanced tree of the operators.
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
            self.ops.push(t);
        }
        let function = if op == Kind::Or { "_||_" } else { "_&&_" };
        let n = self.ops.len() - ops;
        let root = self.balanced(function, terms, ops, 0, n - 1);
        self.stack.truncate(terms);
        self.ops.truncate(ops);
        Ok(root)
    }

    /// The crate's balanced tree of the chain of `&&` or `||` whose terms start at
    /// `stack[terms]` and operators at `ops[ops]`, over the operators `lo..=hi` (the terms
    /// are taken out of the stack).
    fn balanced(
        &mut self,
        function: &'static str,
        terms: usize,
        ops: usize,
        lo: usize,
        hi: usize,
    ) -> Sub {
        let mid = (lo + hi).div_ceil(2);
        let left = if mid == lo {
            std::mem::replace(&mut self.stack[terms + mid], hole())
        } else {
            self.balanced(function, terms, ops, lo, mid - 1)
        };
        let right = if mid == hi {
            std::mem::replace(&mut self.stack[terms + mid + 1], hole())
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
            let rhs = self.additive()?;
            lhs = self.binary(t, function, lhs, rhs);
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
            let rhs = self.multiplicative()?;
            lhs = self.binary(t, function, lhs, rhs);
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
            let rhs = self.unary()?;
            lhs = self.binary(t, function, lhs, rhs);
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
        let operand = self.member_unsigned()?;
        let function = if kind == Kind::Excl { "!_" } else { "-_" };
        let args = self.stack.len();
        self.stack.push(operand);
        self.call(first, function, None, args)
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
                            let args = self.args()?;
                            e = self.call(open, self.text(name), Some(e), args)?;
                        }
                        Kind::Ident => {
                            let name = self.bump();
                            e = self.b.select(own(dot), e, self.text(name), false);
                        }
                        Kind::EscIdent => {
                            let name = self.bump();
                            let field =
                                &self.source[name.start as usize + 1..name.end as usize - 1];
                            e = self.b.select(own(dot), e, field, false);
                        }
                        _ => return Err(Rejected),
                    }
                }
                Kind::LBracket => {
                    let open = self.bump();
                    if self.peek() == Kind::Question {
                        return Err(Rejected);
                    }
                    let index = self.expr()?;
                    self.expect(Kind::RBracket)?;
                    e = self.binary(open, "_[_]", e, index);
                }
                _ => return Ok(e),
            }
        }
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
                Ok(self.leaf(t, ast::Kind::Lit(Value::Uint(v))))
            }
            kind @ (Kind::String | Kind::Bytes) => {
                let t = self.bump();
                let bytes = literal::unquote(self.text(t), kind == Kind::Bytes).ok_or(Rejected)?;
                let value = if kind == Kind::Bytes {
                    Value::Bytes(bytes.into())
                } else {
                    Value::String(String::from_utf8(bytes).map_err(|_| Rejected)?.into())
                };
                Ok(self.leaf(t, ast::Kind::Lit(value)))
            }
            Kind::True => {
                let t = self.bump();
                Ok(self.leaf(t, ast::Kind::Lit(Value::Bool(true))))
            }
            Kind::False => {
                let t = self.bump();
                Ok(self.leaf(t, ast::Kind::Lit(Value::Bool(false))))
            }
            Kind::Null => {
                let t = self.bump();
                Ok(self.leaf(t, ast::Kind::Lit(Value::Null)))
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
        Ok(self.leaf(t, ast::Kind::Lit(value)))
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
                let args = self.args()?;
                if leading_dot {
                    // A function named with a leading dot is no macro.
                    let function = format!(".{name}");
                    let args = self.stack.drain(args..);
                    Ok(self.b.call(own(open), &function, None, args))
                } else {
                    self.call(open, name, None, args)
                }
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
                Ok(self.leaf(id_token, ast::Kind::Name(ident)))
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
        let values = self.stack.len();
        if !self.empty_or_trailing(Kind::RBrace) {
            loop {
                let name = self.bump();
                if !matches!(name.kind, Kind::Ident | Kind::EscIdent) {
                    return Err(Rejected);
                }
                self.expect(Kind::Colon)?;
                let value = self.expr()?;
                self.stack.push(value);
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
        let message = self.b.message(own(open), type_name, &self.stack[values..]);
        self.stack.truncate(values);
        Ok(message)
    }

    /// `'[' elements? ','? ']'`
    fn list(&mut self) -> Parsed {
        let open = self.bump();
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
        let items = self.stack.drain(elements..);
        Ok(self.b.list(own(open), items))
    }

    /// `'{' entries? ','? '}'`: the keys and values pushed in turn.
    fn map(&mut self) -> Parsed {
        let open = self.bump();
        let entries = self.stack.len();
        if !self.empty_or_trailing(Kind::RBrace) {
            loop {
                if self.peek() == Kind::Question {
                    return Err(Rejected);
                }
                let key = self.expr()?;
                self.stack.push(key);
                self.expect(Kind::Colon)?;
                let value = self.expr()?;
                self.stack.push(value);
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
        let mut drained = self.stack.drain(entries..);
        let pairs = std::iter::from_fn(move || Some((drained.next()?, drained.next()?)));
        Ok(self.b.map(own(open), pairs))
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

    /// A binary operator's call at `op` (never a macro).
    fn binary(&mut self, op: Token, function: &'static str, lhs: Sub, rhs: Sub) -> Sub {
        self.b.call(own(op), function, None, [lhs, rhs])
    }

    /// A call placed at `at` whose arguments are on the stack from `args` (taken off), or
    /// its macro's expansion.
    fn call(&mut self, at: Token, function: &str, target: Option<Sub>, args: usize) -> Parsed {
        let n = self.stack.len() - args;
        if self.macros && macros::is_macro(function, target.is_some(), n) {
            let args = self.stack.drain(args..).collect();
            return macros::expand(&mut self.b, own(at), function, target, args);
        }
        let args = self.stack.drain(args..);
        Ok(self.b.call(own(at), function, target, args))
    }
}
