//! The parser against the `cel` crate's on every CEL expression the project has, on
//! expressions generated from the grammar, and on one-character mutations of all of them:
//! where the crate accepts, the same tree (kinds, spans, names and the depth the recursion
//! limit measures) as our builder makes of the crate's nodes; where it rejects, a rejection.
//!
//! Expressions come from the cel-spec conformance files (`testdata/cel-spec`, and
//! `KSM_CEL_SPEC_DIR` if set), cel-go's cases (`testdata/cel-go/cases.jsonl`), every rule of
//! the YAML files of `testdata/` and `examples/` (`readinessRule`, `rule`, `expr`, the
//! `rules` of the CEL corpus), and the fuzzers' seeds and regressions (`fuzz/`).

#![allow(clippy::print_stderr)] // the counts compared, shown with --nocapture

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::tests::{big_stack, disagreement};
use crate::diag::Source;
use crate::diag::yaml::{Node, NodeKind, parse_documents};
use crate::testing::Rng;

#[allow(dead_code)]
#[path = "../../../../tests/support/textproto.rs"]
mod textproto;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn cel_spec(dir: &Path, out: &mut BTreeSet<String>) -> usize {
    let mut found = 0;
    let mut paths = Vec::new();
    files(dir, &mut paths);
    for p in paths {
        if p.extension().is_none_or(|e| e != "textproto") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let file = textproto::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        for section in file.msgs("section") {
            for test in section.msgs("test") {
                if let Some(expr) = test.str("expr") {
                    found += 1;
                    out.insert(expr);
                }
            }
        }
    }
    found
}

fn yaml_rules(node: &Node, key: Option<&str>, out: &mut BTreeSet<String>) {
    // An alias's node is walked where its anchor stands: following aliases would walk an
    // alias bomb (testdata/lint/alias-bomb.yaml) to its 9^8 leaves.
    if matches!(node.kind, NodeKind::Alias(_)) {
        return;
    }
    if let Some(entries) = node.as_map() {
        for (k, v) in entries {
            yaml_rules(v, k.key_text(), out);
        }
    } else if let Some(items) = node.as_seq() {
        for item in items {
            yaml_rules(item, key, out);
        }
    } else if let Some(s) = node.as_scalar()
        && matches!(key, Some("readinessRule" | "rule" | "expr" | "expression"))
    {
        out.insert(s.text.clone());
    }
}

fn corpus() -> (BTreeSet<String>, Vec<String>) {
    let mut all = BTreeSet::new();
    let mut counts = Vec::new();
    let mut count = |name: &str, all: &BTreeSet<String>, before: usize| {
        counts.push(format!("{name}: {}", all.len() - before));
    };

    let before = all.len();
    cel_spec(&root().join("testdata/cel-spec"), &mut all);
    if let Some(dir) = std::env::var_os("KSM_CEL_SPEC_DIR") {
        cel_spec(Path::new(&dir), &mut all);
    }
    count("cel-spec", &all, before);

    let before = all.len();
    let cases = std::fs::read_to_string(root().join("testdata/cel-go/cases.jsonl")).unwrap();
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(rule) = v.get("rule").and_then(|r| r.as_str()) {
            all.insert(rule.to_string());
        }
    }
    count("cel-go cases", &all, before);

    let before = all.len();
    let mut paths = Vec::new();
    files(&root().join("testdata"), &mut paths);
    files(&root().join("examples"), &mut paths);
    for p in &paths {
        if !p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        let source = Source::new(p.display().to_string(), text);
        let (docs, _) = parse_documents(&source);
        for doc in docs {
            if let Some(root) = &doc.root {
                yaml_rules(root, None, &mut all);
                // The CEL corpus keeps its rules by id.
                if let Some(rules) = root.get("rules").and_then(Node::as_map) {
                    for (_, v) in rules {
                        if let Some(s) = v.as_scalar() {
                            all.insert(s.text.clone());
                        }
                    }
                }
            }
        }
    }
    count("testdata and examples", &all, before);

    let before = all.len();
    let mut paths = Vec::new();
    files(&root().join("fuzz/seeds/cel"), &mut paths);
    files(&root().join("fuzz/regressions/cel"), &mut paths);
    for p in &paths {
        let bytes = std::fs::read(p).unwrap();
        let rule = bytes.split(|&b| b == 0).next().unwrap_or_default();
        all.insert(String::from_utf8_lossy(rule).into_owned());
    }
    count("fuzz corpora", &all, before);
    (all, counts)
}

const ATOMS: &[&str] = &[
    "a",
    "self",
    "x",
    "_y1",
    ".a",
    "if",
    "in",
    "1",
    "0",
    "-1",
    "1u",
    "0x1F",
    "0x1Fu",
    "1.5",
    ".5",
    "1e3",
    "-2.5e-3",
    "9223372036854775807",
    "9223372036854775808",
    "true",
    "false",
    "null",
    "'s'",
    "\"d\"",
    "'''t'''",
    "r'\\n'",
    "b'\\xff'",
    "br'x'",
    "'\\u00e9'",
    "'é'",
    "'\\ud800'",
    "[]",
    "{}",
    "[,]",
    "A{}",
];

const BINARY: &[&str] = &[
    "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "in", "&&", "||",
];

fn generate(rng: &mut Rng, depth: usize) -> String {
    if depth == 0 {
        return rng.pick(ATOMS).to_string();
    }
    let d = depth - 1;
    match rng.below(16) {
        0 | 1 => rng.pick(ATOMS).to_string(),
        2 | 3 => format!(
            "{} {} {}",
            generate(rng, d),
            rng.pick(BINARY),
            generate(rng, d)
        ),
        4 => format!(
            "{}{}",
            rng.pick(&["!", "-", "--", "!!", "-!", "!-"]),
            generate(rng, d)
        ),
        5 => format!(
            "{} ? {} : {}",
            generate(rng, d),
            generate(rng, d),
            generate(rng, d)
        ),
        6 => format!("({})", generate(rng, d)),
        7 => format!(
            "{}.{}",
            generate(rng, d),
            rng.pick(&["b", "`c-d`", "if", "in", "f()", "g(1, 2)", "?h"])
        ),
        8 => format!("{}[{}]", generate(rng, d), generate(rng, d)),
        9 => {
            let n = rng.below(4);
            let items: Vec<String> = (0..n).map(|_| generate(rng, d)).collect();
            let comma = if rng.below(3) == 0 { "," } else { "" };
            format!("[{}{comma}]", items.join(", "))
        }
        10 => {
            let n = rng.below(3);
            let items: Vec<String> = (0..n)
                .map(|_| format!("{}: {}", generate(rng, d), generate(rng, d)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        11 => {
            let n = rng.below(3);
            let items: Vec<String> = (0..n)
                .map(|_| format!("{}: {}", rng.pick(&["f", "`g-h`", "if"]), generate(rng, d)))
                .collect();
            format!("{}{{{}}}", rng.pick(&["A", "a.B", ".C"]), items.join(", "))
        }
        12 => {
            let m = rng.pick(&["all", "exists", "exists_one", "existsOne", "filter", "map"]);
            let var = rng.pick(&["v", "v", "v.w", "1"]);
            if m == "map" && rng.below(2) == 0 {
                format!(
                    "{}.map({var}, {}, {})",
                    generate(rng, d),
                    generate(rng, d),
                    generate(rng, d)
                )
            } else {
                format!("{}.{m}({var}, {})", generate(rng, d), generate(rng, d))
            }
        }
        13 => format!("has({})", generate(rng, d)),
        14 => format!(
            "{}({})",
            rng.pick(&["f", ".f", "size", "if"]),
            generate(rng, d)
        ),
        _ => format!("{} // c\n", generate(rng, d)),
    }
}

const MUTATION_CHARS: &[char] = &[
    '(', ')', '[', ']', '{', '}', '.', ',', ':', '?', '!', '-', '+', '\'', '"', '\\', '`', ' ',
    '\n', '0', '1', 'u', 'e', 'x', 'a', '_', '=', '&', '|', '<', 'é',
];

/// One-character deletions, insertions and replacements of `source`.
fn mutations(rng: &mut Rng, source: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    for _ in 0..n {
        let at = rng.below(chars.len() + 1);
        let c = MUTATION_CHARS[rng.below(MUTATION_CHARS.len())];
        let mut m = chars.clone();
        match rng.below(3) {
            0 if at < m.len() => {
                m.remove(at);
            }
            1 if at < m.len() => m[at] = c,
            _ => m.insert(at, c),
        }
        out.push(m.into_iter().collect());
    }
    out
}

#[derive(Default)]
struct Tally {
    accepted: usize,
    rejected: usize,
    failures: Vec<String>,
}

impl Tally {
    fn check(&mut self, source: &str, macros: bool, depth: u16) {
        let accepted = super::tests::crate_parse(source, macros, depth).is_some();
        if accepted {
            self.accepted += 1;
        } else {
            self.rejected += 1;
        }
        if let Some(d) = disagreement(source, macros, depth)
            && self.failures.len() < 20
        {
            self.failures
                .push(format!("{source:?} (macros: {macros}, depth {depth}): {d}"));
        }
    }
}

#[test]
fn every_expression_of_the_project_parses_as_the_crate_parses_it() {
    big_stack(|| {
        let (corpus, counts) = corpus();
        assert!(corpus.len() > 1_000, "{counts:?}");
        let mut t = Tally::default();
        for source in &corpus {
            t.check(source, true, 250);
            t.check(source, false, 250);
        }
        eprintln!(
            "corpus ({}): {} accepted, {} rejected",
            counts.join(", "),
            t.accepted,
            t.rejected
        );
        assert!(t.failures.is_empty(), "{}", t.failures.join("\n"));
        // Both paths are exercised.
        assert!(t.accepted > 1_000 && t.rejected > 0);
    });
}

#[test]
fn mutated_expressions_are_rejected_where_the_crate_rejects_them() {
    big_stack(|| {
        let (corpus, _) = corpus();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut t = Tally::default();
        for source in corpus.iter().filter(|s| s.len() <= 2_000) {
            for m in mutations(&mut rng, source, 3) {
                t.check(&m, true, 250);
            }
        }
        eprintln!(
            "mutations: {} accepted, {} rejected",
            t.accepted, t.rejected
        );
        assert!(t.failures.is_empty(), "{}", t.failures.join("\n"));
        assert!(t.rejected > 1_000 && t.accepted > 1_000);
    });
}

#[test]
fn generated_expressions_parse_as_the_crate_parses_them() {
    big_stack(|| {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut t = Tally::default();
        for i in 0..4_000 {
            let source = generate(&mut rng, 1 + i % 5);
            let depth = if i % 4 == 0 { (i % 7) as u16 } else { 250 };
            t.check(&source, i % 3 != 0, depth);
            for m in mutations(&mut rng, &source, 1) {
                t.check(&m, true, 250);
            }
        }
        eprintln!(
            "generated: {} accepted, {} rejected",
            t.accepted, t.rejected
        );
        assert!(t.failures.is_empty(), "{}", t.failures.join("\n"));
        assert!(t.accepted > 1_000 && t.rejected > 1_000);
    });
}

#[test]
fn paths_made_in_the_resolution_are_those_the_check_and_fusion_make() {
    use crate::core::cel::compile::build;
    use crate::core::cel::{Declarations, Environment};
    big_stack(|| {
        let (corpus, _) = corpus();
        let mut rng = Rng(0x5851_f42d_4c95_7f2d);
        let mut sources: Vec<String> = corpus.iter().cloned().collect();
        for i in 0..2_000 {
            sources.push(generate(&mut rng, 1 + i % 5));
            sources.push(selections(&mut rng, 1 + i % 3));
        }
        let envs = [
            (Declarations::readiness(), Environment::Readiness.options()),
            (Declarations::health(), Environment::Health.options()),
        ];
        let (mut compared, mut paths, mut failures) = (0, 0, Vec::new());
        for source in &sources {
            for (decls, options) in &envs {
                let built = |direct_paths| {
                    let parsed = super::parse(source, true, decls.strings_ext, 250).ok()?;
                    let built = build(source, parsed, decls, *options, direct_paths);
                    Some(without_indexes(&format!("{built:?}")))
                };
                let (Some(direct), Some(fused)) = (built(true), built(false)) else {
                    continue;
                };
                compared += 1;
                paths += usize::from(direct.contains("Path {"));
                if direct != fused && failures.len() < 10 {
                    failures.push(format!("{source:?}:\n direct {direct}\n fused  {fused}"));
                }
            }
        }
        eprintln!("compiled both ways: {compared}, with paths: {paths}");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(compared > 2_000 && paths > 200, "{compared} / {paths}");
    });
}

/// Selections from the declared variables (and from others), as rules write them and not:
/// parenthesized at any level, spaced, commented, indexed, tested with `has()`, shadowed.
fn selections(rng: &mut Rng, depth: usize) -> String {
    let mut e = rng
        .pick(&["self", "obj", "(self)", "( obj )", "a", "v", "self.v"])
        .to_string();
    for _ in 0..1 + rng.below(4) {
        let field = rng.pick(&["status", "b", "`x-y`", "readyReplicas", "in"]);
        e = match rng.below(7) {
            0 => format!("({e}).{field}"),
            1 => format!("{e} . {field}"),
            2 => format!("{e} // c\n.{field}"),
            3 => format!("{e}['{field}']"),
            _ => format!("{e}.{field}"),
        };
    }
    let e = match rng.below(5) {
        0 => format!("has({e})"),
        1 => format!("({e})"),
        _ => e,
    };
    if depth == 0 {
        return e;
    }
    let inner = selections(rng, depth - 1);
    match rng.below(6) {
        0 => format!("{e} == {inner}"),
        1 => format!("{e}.all(v, {inner})"),
        2 => format!("[{e}].exists(self, {inner})"),
        3 => format!("{inner} && {e} > 0"),
        4 => format!("{e}.map(obj, {inner})"),
        _ => format!("size({e}) + size({inner})"),
    }
}

/// A debug text without the contents of the maps' lookup indexes (hash maps, whose order
/// changes from run to run; they index the entries, which are in order).
fn without_indexes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["strings: Some({", "others: Some({"]
        .iter()
        .filter_map(|m| rest.find(m).map(|i| i + m.len()))
        .min()
    {
        out.push_str(&rest[..at]);
        let mut depth = 1;
        let mut end = rest.len();
        for (i, c) in rest[at..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = at + i;
                break;
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}
