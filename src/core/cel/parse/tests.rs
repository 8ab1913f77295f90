//! The parser against the `cel` crate's, expression by expression: where the crate accepts,
//! the tree our builder makes of the crate's nodes and offsets; a rejection where it rejects.

use std::ops::Range;

use ::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue, SourceInfo};

use super::parse;
use crate::core::cel::ast::Kind;
use crate::core::cel::ast::build::{Builder, Sub};
use crate::core::cel::ast::{Name, resolve::Resolver};
use crate::core::cel::value::Value;

/// The crate's parser with the options of `compile.rs`.
pub(super) fn crate_parse(
    source: &str,
    macros: bool,
    depth: u16,
) -> Option<(IdedExpr, SourceInfo)> {
    let parser = if macros {
        ::cel::parser::Parser::new()
    } else {
        ::cel::Env::default().parser()
    };
    parser
        .enable_optional_syntax(false)
        .enable_ident_escape_syntax(true)
        .max_recursion_depth(depth)
        .parse_with_source_info(source)
        .ok()
}

/// The tree our builder makes of the crate's parse of `source`, from its nodes and their
/// offsets: what our parser must make of the rule.
pub(super) fn from_crate(
    source: &str,
    e: &IdedExpr,
    info: &SourceInfo,
    strings_ext: bool,
) -> (Sub, Vec<Name>) {
    let mut b = Builder::new(source, strings_ext);
    let root = add(&mut b, e, info);
    (root, b.names)
}

fn own(source: &str, info: &SourceInfo, id: u64) -> Option<Range<usize>> {
    let (s, e) = info.offset_for(id)?;
    let (s, e) = (s as usize, e as usize + 1);
    (s <= e && e <= source.len() && source.is_char_boundary(s) && source.is_char_boundary(e))
        .then_some(s..e)
}

fn add(b: &mut Builder, e: &IdedExpr, info: &SourceInfo) -> Sub {
    let at = own(b.text.0, info, e.id);
    let unknown = |b: &Builder| b.leaf(at.clone(), Kind::Unresolved("?".into()));
    match &e.expr {
        Expr::Unspecified => unknown(b),
        Expr::Literal(l) => b.leaf(
            at.clone(),
            Kind::Lit(match l {
                LiteralValue::Boolean(v) => Value::Bool(*v.inner()),
                LiteralValue::Int(i) => Value::Int(*i.inner()),
                LiteralValue::UInt(u) => Value::Uint(*u.inner()),
                LiteralValue::Double(d) => Value::Double(*d.inner()),
                LiteralValue::Null => Value::Null,
                LiteralValue::String(s) => Value::string(s.inner()),
                LiteralValue::Bytes(v) => Value::Bytes(std::sync::Arc::from(v.inner())),
            }),
        ),
        Expr::Ident(n) => b.leaf(at.clone(), Kind::Name(Name::Owned(n.as_str().into()))),
        Expr::Select(s) => {
            let operand = add(b, &s.operand, info);
            b.select(at.clone(), operand, &s.field, s.test)
        }
        Expr::Call(c) => {
            let target = c.target.as_ref().map(|t| add(b, t, info));
            let args: Vec<Sub> = c.args.iter().map(|a| add(b, a, info)).collect();
            b.call(at.clone(), &c.func_name, target, args)
        }
        Expr::List(l) if !l.optional_indices.is_empty() => unknown(b),
        Expr::List(l) => {
            let items: Vec<Sub> = l.elements.iter().map(|a| add(b, a, info)).collect();
            b.list(at.clone(), items)
        }
        Expr::Map(m) => {
            let mut entries = Vec::new();
            for en in &m.entries {
                match &en.expr {
                    EntryExpr::MapEntry(me) if !me.optional => {
                        entries.push((add(b, &me.key, info), add(b, &me.value, info)));
                    }
                    _ => return unknown(b),
                }
            }
            b.map(at.clone(), entries)
        }
        Expr::Struct(st) => {
            let mut values = Vec::new();
            for en in &st.entries {
                match &en.expr {
                    EntryExpr::StructField(f) if !f.optional => values.push(add(b, &f.value, info)),
                    _ => return unknown(b),
                }
            }
            b.message(at.clone(), st.type_name.to_string(), &values)
        }
        Expr::Comprehension(c) if c.iter_var2.is_some() => unknown(b),
        Expr::Comprehension(c) => {
            let range = add(b, &c.iter_range, info);
            let parts = [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result]
                .map(|part| add(b, part, info));
            let iter_var = Name::Owned(c.iter_var.as_str().into());
            let accu_var = Name::Owned(c.accu_var.as_str().into());
            b.comprehension(at.clone(), range, iter_var, accu_var, parts)
        }
    }
}

/// A tree with its names resolved (the readiness environment's), as debug text with its
/// depth and the slots it takes.
fn resolved(source: &str, root: Sub, names: &[Name]) -> String {
    let decls = crate::core::cel::Declarations::readiness();
    let Sub { mut node, depth } = root;
    let mut r = Resolver::new(source, names, &decls.variables);
    r.resolve(&mut node);
    format!("depth {depth}, slots {}: {node:?}", r.slot_count)
}

/// Where the two parsers disagree on `source`, if they do: the trees from their roots, each
/// node's kind and span, resolved, with the depth the recursion limit measures.
pub(super) fn disagreement(source: &str, macros: bool, depth: u16) -> Option<String> {
    let theirs = crate_parse(source, macros, depth);
    let ours = parse(source, macros, false, depth).ok();
    match (theirs, ours) {
        (None, None) => None,
        (Some(_), None) => Some("the crate accepts, ours rejects".into()),
        (None, Some(t)) => Some(format!("the crate rejects, ours accepts: {:?}", t.root)),
        (Some((te, ti)), Some(ours)) => {
            let (root, names) = from_crate(source, &te, &ti, false);
            let theirs = resolved(source, root, &names);
            let sub = Sub {
                node: ours.root,
                depth: ours.depth as u32,
            };
            let ours = resolved(source, sub, &ours.names);
            (theirs != ours).then(|| format!("trees differ:\n crate {theirs}\n ours  {ours}"))
        }
    }
}

#[track_caller]
fn agree(cases: &[&str]) {
    for &source in cases {
        for macros in [true, false] {
            if let Some(d) = disagreement(source, macros, 250) {
                panic!("{source:?} (macros: {macros}): {d}");
            }
        }
    }
}

#[track_caller]
fn accepted(cases: &[&str]) {
    for &source in cases {
        assert!(
            parse(source, true, false, 250).is_ok(),
            "{source:?} is rejected"
        );
    }
    agree(cases);
}

#[track_caller]
fn rejected(cases: &[&str]) {
    for &source in cases {
        assert!(
            parse(source, true, false, 250).is_err(),
            "{source:?} is accepted"
        );
    }
    agree(cases);
}

/// The literal a rule is, as its debug text.
fn literal(source: &str) -> String {
    let parsed = parse(source, true, false, 250).unwrap();
    match &parsed.root.kind {
        Kind::Lit(v) => format!("{v:?}"),
        other => panic!("{source}: {other:?}"),
    }
}

fn lit(v: Value) -> String {
    format!("{v:?}")
}

#[test]
fn operators_and_precedence() {
    accepted(&[
        "a + b * c - d / e % f",
        "a * b + c",
        "a < b == c != d <= e >= f > g in h",
        "a || b && c || d",
        "a || b || c || d || e || f || g",
        "a && b && c && d && e",
        "a ? b : c ? d : e",
        "a ? b || c : d && e",
        "(a ? b : c) ? d : e",
        "!a",
        "!!a",
        "!!!a",
        "-a",
        "--a",
        "---a",
        "-a.b",
        "!a.b()",
        "a - -b",
        "1 - 1",
        "1-1",
    ]);
    rejected(&[
        "a ? b ? c : d : e",
        "a ? b",
        "a +",
        "+a",
        "a &&",
        "-!a",
        "!-a",
        "a = b",
    ]);
}

#[test]
fn negative_literals_are_folded_as_the_crate_folds_them() {
    assert_eq!(literal("-1"), lit(Value::Int(-1)));
    assert_eq!(literal("- 1"), lit(Value::Int(-1)));
    assert_eq!(literal("--1"), lit(Value::Int(1)));
    assert_eq!(literal("-1.5"), lit(Value::Double(-1.5)));
    assert_eq!(literal("-9223372036854775808"), lit(Value::Int(i64::MIN)));
    assert_eq!(literal("-0x8000000000000000"), lit(Value::Int(i64::MIN)));
    accepted(&[
        "-1",
        "--1",
        "---1",
        "----1",
        "-1.5",
        "--1.5",
        "-1u",
        "-1.foo",
        "-1.foo()",
        "-1[0]",
        "-1 * -2",
        "a*-1",
        "!-1",
        "!!-1",
        "-(1)",
        "-9223372036854775808",
        "-0x8000000000000000",
        "1 - -9223372036854775808",
    ]);
    rejected(&[
        "9223372036854775808",
        "--9223372036854775808",
        "0x8000000000000000",
        "-(9223372036854775808)",
        "18446744073709551616u",
        "1e309",
        "-1e309",
        "!--1",
    ]);
}

#[test]
fn literals_in_every_form() {
    assert_eq!(literal("0x1F"), lit(Value::Int(31)));
    assert_eq!(literal("0x1Fu"), lit(Value::Uint(31)));
    assert_eq!(literal("007"), lit(Value::Int(7)));
    assert_eq!(literal(".5e1"), lit(Value::Double(5.0)));
    assert_eq!(
        literal(r"'\x41\101\u0041\U00000041'"),
        lit(Value::string("AAAA"))
    );
    assert_eq!(literal(r"b'\xff'"), lit(Value::Bytes(vec![0xff].into())));
    accepted(&[
        "1",
        "1u",
        "1U",
        "0u",
        "0x0",
        "18446744073709551615u",
        "0xFFFFFFFFFFFFFFFFu",
        "1.5",
        "1e5",
        "1E+5",
        "1.5e-5",
        ".5",
        "true",
        "false",
        "null",
        r#""a""#,
        "'a'",
        r#""""a"b""""#,
        "'''a\nb'''",
        "'''a\r\nb\rc'''",
        r"r'\n'",
        r#"R"\q""#,
        r"r'''\'''",
        "b'a'",
        "B'a'",
        r"br'\n'",
        r"BR'\n'",
        r"bR'''\x'''",
        r"'\a\b\f\n\r\t\v\\\?\`\'\x0a\X0A\u00e9\U0001F600\012\377'",
        r"b'\a\b\f\n\r\t\v\\\?\`\'\x0a\X0A\012\377'",
        "'é' + \"😀\"",
        "''",
        "''''''",
        "'''a''' + '''b'''",
    ]);
    rejected(&[
        r"'\ud800'",
        r"'\U00110000'",
        r"b'\u0041'",
        r"b'\U00000041'",
        "'a",
        "'''a'",
        "rb'x'",
        "0x",
        "1e",
        "1.5u",
        "1_000",
        "a.5",
        "1..2",
    ]);
}

#[test]
fn names_calls_and_selections() {
    accepted(&[
        "a",
        ".a",
        "a.b.c",
        ".a.b",
        "f()",
        "f(1, 2)",
        ".f(1)",
        "a.f()",
        "a.b.f(1)",
        "a.f(1).g(2)[3].h",
        "a[0][1]",
        "a.`b-c`",
        "a.`b.c/d e`.f",
        "a.if",
        "a.if()",
        "a.`if`",
        "_a1",
        "ifx",
    ]);
    rejected(&[
        "if",
        ".if",
        "if(1)",
        ".while(1)",
        "a.in",
        "a.true",
        "a.null",
        "a.`b`()",
        "a.?b",
        "a[?0]",
        "`a`",
        "a.``",
        "f(1,)",
        "f(,)",
        "a.",
        "a[]",
        ".",
        "",
        " ",
        "// only a comment",
        "1 + ()",
        "@foo",
    ]);
}

#[test]
fn aggregates_and_messages() {
    accepted(&[
        "[]",
        "[,]",
        "[1]",
        "[1,]",
        "[1, 2, 3]",
        "[[1], [2, [3]]]",
        "{}",
        "{,}",
        "{1: 2}",
        "{1: 2,}",
        "{'a': 1, 'b': [2], 3: {4: 5}}",
        "A{}",
        "A{,}",
        "a.b.C{}",
        ".a.B{f: 1}",
        "A{f: 1, g: 2,}",
        "A{`f-g`: 1}",
        "if{f: 1}",
        "a.if{f: 1}",
        "A{f: B{g: [1]}}.f",
        "{1: 2}[1]",
    ]);
    rejected(&[
        "[1,,]",
        "[,1]",
        "{1}",
        "{1: 2,,}",
        "{:2}",
        "A{f}",
        "A{1: 2}",
        "A{f: 1,,}",
        "[?a]",
        "{?a: 1}",
        "A{?f: 1}",
        "A{f: 1",
        "a.`b`{}",
        "a.b(){}",
    ]);
}

#[test]
fn macros_expand_as_the_crate_expands_them() {
    accepted(&[
        "has(a.b)",
        "has(a.b.c)",
        "has(has(a.b))",
        "x.all(y, y > 0)",
        "x.exists(y, y > 0)",
        "x.exists_one(y, y > 0)",
        "x.existsOne(y, y > 0)",
        "x.map(y, y * 2)",
        "x.map(y, y > 0, y * 2)",
        "x.filter(y, y > 0)",
        "x.all(y, y.exists(z, z == y))",
        "[1, 2].map(y, [y].filter(z, z > 1))",
        "has(a.b) && a.b.exists(c, has(c.d))",
        "x.has(a.b)",
        "all(x, y, z)",
        "x.all(y)",
        "x.map(a, b, c, d)",
        ".has(a.b)",
        "x.all(y, y)",
    ]);
    rejected(&[
        "has(a)",
        "has(a[0])",
        "has(1)",
        "x.all(y.z, true)",
        "x.map(1, 2)",
        "x.filter(f(), true)",
        "x.exists_one([y], true)",
    ]);
    // Without macros, these are calls.
    assert!(parse("has(a)", false, false, 250).is_ok());
    assert!(crate_parse("has(a)", false, 250).is_some());
}

#[test]
fn whitespace_comments_and_offsets() {
    accepted(&[
        "a\n.b // c\n.d",
        "\t a \r\n+\x0cb",
        "'é' == a.`e`",
        "'😀é' + b.c",
        "[\n  1,\n  2\n]",
        "x // trailing",
    ]);
    rejected(&["a\u{b}b", "a é", "a\u{a0}+b", "a.`é`"]);
}

#[test]
fn the_recursion_limit_counts_as_the_crate_counts() {
    let cases = [
        "1 + 1",
        "(1 + 1)",
        "[[[1]]]",
        "(((1)))",
        "{1: {2: {3: 'none'}}}",
        "type(type(type(1)))",
        "[{'a': size([])}]",
        "{}.map(a, a.map(b, b.map(c, c)))",
        "a ? b : c ? d : e ? f : g",
        "a[b[c[d]]]",
        "A{f: A{f: A{f: 1}}}",
        "f(g(h(1)))",
        "!!!!!!!!!!a",
        "--------------1",
        "a.b.c.d.e.f.g.h.i",
        "1 + 2 + 3 + 4 + 5 + 6 + 7 + 8",
        "a || b || c || d || e || f",
    ];
    for source in cases {
        for depth in 0..6 {
            for macros in [true, false] {
                if let Some(d) = disagreement(source, macros, depth) {
                    panic!("{source:?} (depth {depth}): {d}");
                }
            }
        }
    }
    let deep = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
    big_stack(move || {
        assert!(parse(&deep(250), true, false, 250).is_ok());
        assert!(parse(&deep(251), true, false, 250).is_err());
        for n in [249, 250, 251] {
            assert_eq!(disagreement(&deep(n), true, 250), None, "{n}");
        }
    });
}

/// Runs `f` on a thread with the compiler's stack: the crate's parser recurses deeply.
pub(super) fn big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}
