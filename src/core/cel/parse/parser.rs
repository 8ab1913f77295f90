//! Recursive descent over the tokens, following the `cel` crate's grammar and its visitor:
//! ids are given in the order the visitor gives them, at the offsets of the same tokens.

use ::cel::common::ast::{
    CallExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, ListExpr, LiteralValue, MapEntryExpr,
    MapExpr, SelectExpr, SourceInfo, StructExpr, StructFieldExpr,
};

use super::lexer::{Kind, Token};
use super::{literal, macros};

/// The expression is not one the `cel` crate accepts (or not one this parser is sure of).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rejected;

type Parsed = Result<IdedExpr, Rejected>;

/// Ids in order, each with the offsets of its token (first byte, last byte).
pub(super) struct Ids {
    pub info: SourceInfo,
    next: u64,
}

impl Ids {
    fn at(&mut self, token: Token) -> u64 {
        let id = self.reserve();
        self.place(id, token);
        id
    }

    /// An id whose offsets are given later with [`Ids::place`].
    fn reserve(&mut self) -> u64 {
        let id = self.next;
        self.next += 1;
        id
    }

    fn place(&mut self, id: u64, token: Token) {
        self.info.add_offset(id, token.start, token.end - 1);
    }

    /// A new id at the offsets of `id`.
    pub fn copy_of(&mut self, id: u64) -> u64 {
        let (start, stop) = self.info.offset_for(id).unwrap_or_default();
        let new = self.reserve();
        self.info.add_offset(new, start, stop);
        new
    }
}

pub(super) struct Parser<'s> {
    source: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    pub ids: Ids,
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
    pub fn new(
        source: &'s str,
        tokens: Vec<Token>,
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
        let mut info = SourceInfo::default();
        info.source = source.to_string();
        Parser {
            source,
            tokens,
            pos: 0,
            ids: Ids { info, next: 1 },
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

    fn node(&mut self, token: Token, expr: Expr) -> IdedExpr {
        IdedExpr {
            id: self.ids.at(token),
            expr,
        }
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
            let id = self.ids.at(op);
            let if_true = self.logic(Kind::Or)?;
            self.expect(Kind::Colon)?;
            let if_false = self.expr()?;
            self.call(id, "_?_:_", None, vec![cond, if_true, if_false])?
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
        let mut terms = vec![first];
        let mut ops = Vec::new();
        while self.peek() == op {
            let t = self.bump();
            terms.push(term(self)?);
            ops.push(self.ids.at(t));
        }
        let function = if op == Kind::Or { "_||_" } else { "_&&_" };
        let mut terms: Vec<Option<IdedExpr>> = terms.into_iter().map(Some).collect();
        Ok(balanced(function, &mut terms, &ops, 0, ops.len() - 1))
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
            let id = self.ids.at(t);
            let rhs = self.additive()?;
            lhs = self.call(id, function, None, vec![lhs, rhs])?;
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
            let id = self.ids.at(t);
            let rhs = self.multiplicative()?;
            lhs = self.call(id, function, None, vec![lhs, rhs])?;
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
            let id = self.ids.at(t);
            let rhs = self.unary()?;
            lhs = self.call(id, function, None, vec![lhs, rhs])?;
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
        let id = self.ids.at(first);
        let operand = self.member_unsigned()?;
        let function = if kind == Kind::Excl { "!_" } else { "-_" };
        self.call(id, function, None, vec![operand])
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
                            let id = self.ids.at(open);
                            let args = self.args()?;
                            let function = self.text(name);
                            e = self.call(id, function, Some(e), args)?;
                        }
                        Kind::Ident => {
                            let name = self.bump();
                            let field = self.text(name).to_string();
                            e = self.select(dot, e, field);
                        }
                        Kind::EscIdent => {
                            let name = self.bump();
                            let text = self.text(name);
                            let field = text[1..text.len() - 1].to_string();
                            e = self.select(dot, e, field);
                        }
                        _ => return Err(Rejected),
                    }
                }
                Kind::LBracket => {
                    let open = self.bump();
                    let id = self.ids.at(open);
                    if self.peek() == Kind::Question {
                        return Err(Rejected);
                    }
                    let index = self.expr()?;
                    self.expect(Kind::RBracket)?;
                    e = self.call(id, "_[_]", None, vec![e, index])?;
                }
                _ => return Ok(e),
            }
        }
    }

    fn select(&mut self, dot: Token, operand: IdedExpr, field: String) -> IdedExpr {
        self.node(
            dot,
            Expr::Select(SelectExpr {
                operand: Box::new(operand),
                field,
                test: false,
            }),
        )
    }

    /// The arguments of a call, after its `(`, through its `)`.
    fn args(&mut self) -> Result<Vec<IdedExpr>, Rejected> {
        let mut args = Vec::new();
        if self.peek() == Kind::RParen {
            self.bump();
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
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
                Ok(self.node(t, Expr::Literal(LiteralValue::UInt(v.into()))))
            }
            kind @ (Kind::String | Kind::Bytes) => {
                let t = self.bump();
                let bytes = literal::unquote(self.text(t), kind == Kind::Bytes).ok_or(Rejected)?;
                let value = if kind == Kind::Bytes {
                    LiteralValue::Bytes(bytes.into())
                } else {
                    LiteralValue::String(String::from_utf8(bytes).map_err(|_| Rejected)?.into())
                };
                Ok(self.node(t, Expr::Literal(value)))
            }
            Kind::True => {
                let t = self.bump();
                Ok(self.node(t, Expr::Literal(LiteralValue::Boolean(true.into()))))
            }
            Kind::False => {
                let t = self.bump();
                Ok(self.node(t, Expr::Literal(LiteralValue::Boolean(false.into()))))
            }
            Kind::Null => {
                let t = self.bump();
                Ok(self.node(t, Expr::Literal(LiteralValue::Null)))
            }
            _ => Err(Rejected),
        }
    }

    fn number(&mut self, negative: bool) -> Parsed {
        let t = self.bump();
        let text = self.text(t);
        let value = match t.kind {
            Kind::Int => LiteralValue::Int(literal::int(text, negative).ok_or(Rejected)?.into()),
            Kind::Float => {
                LiteralValue::Double(literal::double(text, negative).ok_or(Rejected)?.into())
            }
            _ => return Err(Rejected),
        };
        Ok(self.node(t, Expr::Literal(value)))
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
                    format!(".{name}")
                } else {
                    name.to_string()
                };
                let id = self.ids.at(open);
                let args = self.args()?;
                self.call(id, &function, None, args)
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
                    format!(".{name}")
                } else {
                    name.to_string()
                };
                Ok(self.node(id_token, Expr::Ident(ident)))
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
        let id = self.ids.at(open);
        let mut entries = Vec::new();
        if !self.empty_or_trailing(Kind::RBrace) {
            loop {
                let name = self.bump();
                let field = match name.kind {
                    Kind::Ident => self.text(name).to_string(),
                    Kind::EscIdent => {
                        let text = self.text(name);
                        text[1..text.len() - 1].to_string()
                    }
                    _ => return Err(Rejected),
                };
                let col = self.expect(Kind::Colon)?;
                let entry_id = self.ids.at(col);
                let value = self.expr()?;
                entries.push(IdedEntryExpr {
                    id: entry_id,
                    expr: EntryExpr::StructField(StructFieldExpr {
                        field,
                        value,
                        optional: false,
                    }),
                });
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
        Ok(IdedExpr {
            id,
            expr: Expr::Struct(StructExpr { type_name, entries }),
        })
    }

    /// `'[' elements? ','? ']'`
    fn list(&mut self) -> Parsed {
        let open = self.bump();
        let id = self.ids.at(open);
        let mut elements = Vec::new();
        if !self.empty_or_trailing(Kind::RBracket) {
            loop {
                if self.peek() == Kind::Question {
                    return Err(Rejected);
                }
                elements.push(self.expr()?);
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
        Ok(IdedExpr {
            id,
            expr: Expr::List(ListExpr::new(elements)),
        })
    }

    /// `'{' entries? ','? '}'`: each entry's id (its `:`) comes before its key's.
    fn map(&mut self) -> Parsed {
        let open = self.bump();
        let id = self.ids.at(open);
        let mut entries = Vec::new();
        if !self.empty_or_trailing(Kind::RBrace) {
            loop {
                if self.peek() == Kind::Question {
                    return Err(Rejected);
                }
                let entry_id = self.ids.reserve();
                let key = self.expr()?;
                let col = self.expect(Kind::Colon)?;
                self.ids.place(entry_id, col);
                let value = self.expr()?;
                entries.push(IdedEntryExpr {
                    id: entry_id,
                    expr: EntryExpr::MapEntry(MapEntryExpr {
                        key,
                        value,
                        optional: false,
                    }),
                });
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
        Ok(IdedExpr {
            id,
            expr: Expr::Map(MapExpr { entries }),
        })
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

    /// A call, or its macro's expansion.
    fn call(
        &mut self,
        id: u64,
        function: &str,
        target: Option<IdedExpr>,
        args: Vec<IdedExpr>,
    ) -> Parsed {
        let (target, args) = if self.macros {
            match macros::expand(&mut self.ids, id, function, target, args)? {
                Ok(expanded) => return Ok(expanded),
                Err(call) => call,
            }
        } else {
            (target, args)
        };
        Ok(IdedExpr {
            id,
            expr: Expr::Call(CallExpr {
                func_name: function.to_string(),
                target: target.map(Box::new),
                args,
            }),
        })
    }
}

/// The crate's balanced tree of a chain of `&&` or `||`.
fn balanced(
    function: &str,
    terms: &mut [Option<IdedExpr>],
    ops: &[u64],
    lo: usize,
    hi: usize,
) -> IdedExpr {
    let mid = (lo + hi).div_ceil(2);
    let left = if mid == lo {
        terms[mid].take().unwrap_or_default()
    } else {
        balanced(function, terms, ops, lo, mid - 1)
    };
    let right = if mid == hi {
        terms[mid + 1].take().unwrap_or_default()
    } else {
        balanced(function, terms, ops, mid + 1, hi)
    };
    IdedExpr {
        id: ops[mid],
        expr: Expr::Call(CallExpr {
            func_name: function.to_string(),
            target: None,
            args: vec![left, right],
        }),
    }
}
