//! KSM204: a readiness rule reads a status field that Kubernetes omits (zero values, or
//! before the controller's first status write) without a `has()` guard.
//!
//! The analysis walks the rule's AST carrying the set of paths known to be present. CEL's
//! `&&` and `||` are commutative for errors (`err && false` is false), so a guard on either
//! side protects the other; a ternary's condition guards its branches.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;
use std::rc::Rc;

use cel::common::ast::{Expr, LiteralValue};
use cel::parser::Expression;

use crate::core::cel::ParsedRule;
use crate::core::lint::{Context, MEMO_MAX_RULE_BYTES, RuleInfo, RuleSite};
use crate::diag::{Diagnostic, Severity};

pub static INFO: RuleInfo = RuleInfo {
    code: "KSM204",
    name: "unguarded-omitted-field",
    severity: Severity::Warning,
    title: "A readiness rule reads a status field Kubernetes may omit, without has()",
    docs: "\
## What it finds
A readiness rule that reads a status field which Kubernetes leaves out of the object when it
is zero or not yet known, without a `has()` guard: `readyReplicas`, `availableReplicas`,
`updatedReplicas`, `replicas` ... of a Deployment, the optional counters of a StatefulSet or
DaemonSet, the phase and conditions of a Pod, and `self.status` itself for custom resources,
which have no status until their controller first writes one.

## Why it matters
Reading a missing key is an evaluation error in CEL (`no such key: readyReplicas`), not
`false`. A Deployment scaled to zero, or just created, has no `readyReplicas`: the rule fails,
kcm sets the condition False with reason `FailedToEvaluateReadiness` (an error, not \"not
ready\"), and the message hides what is really going on.

## Example
```yaml
readinessRule: self.status.availableReplicas > 0 && self.status.readyReplicas > 0
```

## Fix
Guard each omitted field with `has()`; `&&` stops at the first false guard:
```yaml
readinessRule: >-
  has(self.status.availableReplicas) && has(self.status.readyReplicas) &&
  self.status.availableReplicas > 0 && self.status.readyReplicas > 0
```
",
};

/// Status fields with `omitempty` in the Kubernetes API types (k8s.io/api), per kind.
fn omitted_status_fields(api_version: &str, kind: &str) -> Option<&'static [&'static str]> {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    Some(match (group, kind) {
        ("apps", "Deployment") => &[
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
            "terminatingReplicas",
            "conditions",
            "collisionCount",
        ],
        ("apps", "StatefulSet") => &[
            "observedGeneration",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "currentRevision",
            "updateRevision",
            "collisionCount",
            "conditions",
        ],
        ("apps", "DaemonSet") => &[
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
            "collisionCount",
            "conditions",
        ],
        ("apps", "ReplicaSet") => &[
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "terminatingReplicas",
            "observedGeneration",
            "conditions",
        ],
        ("", "Pod") => &[
            "phase",
            "conditions",
            "message",
            "reason",
            "hostIP",
            "podIP",
            "podIPs",
            "startTime",
            "containerStatuses",
            "initContainerStatuses",
            "qosClass",
        ],
        ("batch", "Job") => &[
            "conditions",
            "startTime",
            "completionTime",
            "active",
            "succeeded",
            "failed",
            "ready",
        ],
        _ => return None,
    })
}

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for site in &ctx.rules {
        if site.compiled.is_err() || site.text.is_empty() {
            continue;
        }
        let Some(parsed) = &site.parsed else { continue };
        let risky = Risky::for_target(site.target_api_version, site.target_kind);
        let found = unguarded_reads_memo(ctx, site, parsed, &risky);
        let Some(first) = found.first() else { continue };
        let names: Vec<String> = found
            .iter()
            .map(|r| format!("`self.{}`", r.path.join(".")))
            .collect();
        let why = match &risky {
            Risky::Fields(_) => {
                if found.len() == 1 {
                    "Kubernetes omits this field when it is zero or not yet set".to_string()
                } else {
                    "Kubernetes omits these fields when they are zero or not yet set".to_string()
                }
            }
            Risky::Status => format!(
                "a {} has no status until its controller first writes one",
                site.target_kind
            ),
        };
        let mut d = ctx
            .diag(
                &INFO,
                format!(
                    "{} {} read without a has() guard: {why}, and the rule then fails with \
                     \"no such key\" instead of returning false",
                    names.join(", "),
                    if found.len() == 1 { "is" } else { "are" }
                ),
                ctx.rule_span(site, first.span.clone()),
            )
            .label("may be missing");
        for r in &found[1..] {
            d = d.secondary(ctx.rule_span(site, r.span.clone()), "may be missing");
        }
        out.push(d.help(format!("guard the rule:\n  {}", guarded_rule(site, &found))));
    }
}

/// The rule with `has()` guards in front, as the fix to show.
fn guarded_rule(site: &RuleSite, found: &[Unguarded]) -> String {
    let mut guards: Vec<String> = Vec::new();
    for r in found {
        // Guard every prefix that may be missing, outermost first.
        for depth in r.risky_from..=r.path.len() {
            let g = format!("has(self.{})", r.path[..depth].join("."));
            if !guards.contains(&g) {
                guards.push(g);
            }
        }
    }
    let body = site.text.trim();
    let needs_parens = body.contains("||") || body.contains('?');
    let body = if needs_parens {
        format!("({body})")
    } else {
        body.to_string()
    };
    format!("{} && {}", guards.join(" && "), body.replace('\n', " "))
}

/// What may be missing in the object a rule reads.
enum Risky {
    /// `self.status.<field>` for these fields.
    Fields(&'static [&'static str]),
    /// `self.status` itself (custom resources and unknown kinds).
    Status,
}

impl Risky {
    fn for_target(api_version: &str, kind: &str) -> Risky {
        omitted_status_fields(api_version, kind).map_or(Risky::Status, Risky::Fields)
    }

    /// The number of leading path segments that make a risky prefix, if any.
    fn risky_len(&self, path: &[String]) -> Option<usize> {
        if path.first().map(String::as_str) != Some("status") {
            return None;
        }
        match self {
            Risky::Status => Some(1),
            Risky::Fields(fields) => {
                let f = path.get(1)?;
                fields.contains(&f.as_str()).then_some(2)
            }
        }
    }
}

/// A read of a path that may be missing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unguarded {
    /// The risky prefix of the read, e.g. `["status", "readyReplicas"]`.
    path: Vec<String>,
    /// The first segment index that may be missing (for guards: `status` is always present
    /// on built-in kinds, so only `status.<field>` is guarded there).
    risky_from: usize,
    /// Byte range in the rule text.
    span: Range<usize>,
}

/// [`analyse`] of a rule site, remembered by the linter: the result depends only on the rule
/// text and the target's apiVersion and kind. The rule's tree is the one its compile parsed
/// (a rule that compiles is no deeper than the recursion limit, so the walk stays shallow).
fn unguarded_reads_memo(
    ctx: &Context,
    site: &RuleSite,
    parsed: &ParsedRule,
    risky: &Risky,
) -> Rc<Vec<Unguarded>> {
    if site.text.len() > MEMO_MAX_RULE_BYTES {
        return Rc::new(analyse_parsed(site.text, parsed, risky).0);
    }
    let key = (
        site.text.to_string(),
        site.target_api_version.to_string(),
        site.target_kind.to_string(),
    );
    ctx.linter
        .unguarded
        .get_or_insert_with(key, || Rc::new(analyse_parsed(site.text, parsed, risky).0))
}

/// [`analyse_parsed`] of a rule parsed alone (no size limit): none if it does not parse.
#[cfg(test)]
fn analyse(rule: &str, risky: &Risky) -> (Vec<Unguarded>, usize) {
    crate::core::cel::parse_alone(rule).map_or_else(
        || (Vec::new(), 0),
        |parsed| analyse_parsed(rule, &parsed, risky),
    )
}

#[cfg(test)]
fn unguarded_reads(rule: &str, risky: &Risky) -> Vec<Unguarded> {
    analyse(rule, risky).0
}

/// The unguarded reads, and the work the walk did (paths added to and taken out of the
/// known facts): linear in the rule.
fn analyse_parsed(rule: &str, parsed: &ParsedRule, risky: &Risky) -> (Vec<Unguarded>, usize) {
    let ParsedRule { expr, info } = parsed;
    let mut w = Walker {
        rule,
        info,
        risky,
        found: Vec::new(),
        facts: HashMap::new(),
        work: 0,
    };
    w.walk(expr);
    // One finding per path, at its first read.
    let mut seen = BTreeSet::new();
    w.found.sort_by_key(|u| u.span.start);
    w.found.retain(|u| seen.insert(u.path.clone()));
    (w.found, w.work)
}

type Path = Vec<String>;

/// The walk carries the paths known present as a multiset: a guard adds its paths while
/// the parts it protects are walked, and takes them out after, so each path is added and
/// removed once per guard whatever the size of the rule (the analysis is linear in it).
struct Walker<'a> {
    rule: &'a str,
    info: &'a cel::common::ast::SourceInfo,
    risky: &'a Risky,
    found: Vec<Unguarded>,
    facts: HashMap<Path, u32>,
    /// Paths added to and taken out of `facts`.
    work: usize,
}

impl Walker<'_> {
    fn add(&mut self, facts: &[Path]) {
        self.work += facts.len();
        for f in facts {
            *self.facts.entry(f.clone()).or_insert(0) += 1;
        }
    }

    fn remove(&mut self, facts: &[Path]) {
        self.work += facts.len();
        for f in facts {
            if let Some(n) = self.facts.get_mut(f) {
                *n -= 1;
                if *n == 0 {
                    self.facts.remove(f);
                }
            }
        }
    }

    /// Walks `e` with `facts` known.
    fn walk_with(&mut self, e: &Expression, facts: &[Path]) {
        self.add(facts);
        self.walk(e);
        self.remove(facts);
    }

    /// The terms of a chain of `&&` (or `||`), and what each tells when it is true (false).
    fn chain<'e>(e: &'e Expression, op: &str) -> Vec<&'e Expression> {
        let mut terms = Vec::new();
        let mut stack = vec![e];
        while let Some(e) = stack.pop() {
            match &e.expr {
                Expr::Call(c) if c.func_name == op && c.target.is_none() && c.args.len() == 2 => {
                    stack.push(&c.args[1]);
                    stack.push(&c.args[0]);
                }
                _ => terms.push(e),
            }
        }
        terms
    }

    fn walk(&mut self, e: &Expression) {
        match &e.expr {
            Expr::Call(call) => {
                let args = &call.args;
                match (call.func_name.as_str(), call.target.as_deref(), args.len()) {
                    (op @ ("_&&_" | "_||_"), None, 2) => {
                        // CEL's && and || are commutative for errors: each term is guarded by
                        // what all the others tell.
                        let terms = Self::chain(e, op);
                        let told: Vec<Vec<Path>> = terms
                            .iter()
                            .map(|t| {
                                let mut f = Vec::new();
                                if op == "_&&_" {
                                    when_true(t, &mut f);
                                } else {
                                    when_false(t, &mut f);
                                }
                                f
                            })
                            .collect();
                        for t in &told {
                            self.add(t);
                        }
                        for (term, own) in terms.iter().zip(&told) {
                            self.remove(own);
                            self.walk(term);
                            self.add(own);
                        }
                        for t in &told {
                            self.remove(t);
                        }
                    }
                    ("_?_:_", None, 3) => {
                        self.walk(&args[0]);
                        let mut t = Vec::new();
                        when_true(&args[0], &mut t);
                        self.walk_with(&args[1], &t);
                        let mut f = Vec::new();
                        when_false(&args[0], &mut f);
                        self.walk_with(&args[2], &f);
                    }
                    _ => {
                        if let Some(path) = self_path(e) {
                            self.read(e, &path);
                            return;
                        }
                        if let Some(t) = &call.target {
                            self.walk(t);
                        }
                        for a in args {
                            self.walk(a);
                        }
                    }
                }
            }
            Expr::Select(sel) => {
                if sel.test {
                    // has(self.a.b): `self.a` is read, `b` only tested.
                    self.walk(&sel.operand);
                } else if let Some(path) = self_path(e) {
                    self.read(e, &path);
                } else {
                    self.walk(&sel.operand);
                }
            }
            Expr::Comprehension(c) => {
                self.walk(&c.iter_range);
                self.walk(&c.accu_init);
                self.walk(&c.loop_cond);
                self.walk(&c.loop_step);
                self.walk(&c.result);
            }
            Expr::List(l) => {
                for el in &l.elements {
                    self.walk(el);
                }
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        self.walk(&me.key);
                        self.walk(&me.value);
                    }
                }
            }
            _ => {}
        }
    }

    fn read(&mut self, e: &Expression, path: &[String]) {
        let Some(len) = self.risky.risky_len(path) else {
            return;
        };
        if self.facts.contains_key(&path[..len]) {
            return;
        }
        let prefix = path[..len].to_vec();
        let risky_from = match self.risky {
            Risky::Status => 1,
            Risky::Fields(_) => 2,
        };
        if let Some(span) = self.chain_span(e, len) {
            self.found.push(Unguarded {
                path: prefix,
                risky_from,
                span,
            });
        }
    }

    /// The source range of a `self.a.b` chain: from `self` to the end of its last field.
    fn chain_span(&mut self, e: &Expression, depth: usize) -> Option<Range<usize>> {
        let mut root = e;
        loop {
            root = match &root.expr {
                Expr::Select(s) => &s.operand,
                Expr::Call(c) if c.func_name == "_[_]" => &c.args[0],
                _ => break,
            };
        }
        // The parsers' offsets are bytes.
        let (start, _) = self.info.offset_for(root.id)?;
        let start = (start as usize).min(self.rule.len());
        // Walk forward over `.field` / `['field']` segments.
        let bytes = self.rule.as_bytes();
        let mut i = start + "self".len();
        for _ in 0..depth {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            match bytes.get(i) {
                Some(b'.') => {
                    i += 1;
                    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_')
                    {
                        i += 1;
                    }
                }
                Some(b'[') => {
                    let close = self.rule[i..].find(']')?;
                    i += close + 1;
                }
                _ => break,
            }
        }
        Some(start..i)
    }
}

/// `self.a.b` or `self['a'].b` as `["a", "b"]`.
fn self_path(e: &Expression) -> Option<Vec<String>> {
    if !is_self_path(e) {
        return None;
    }
    let mut path = Vec::new();
    let mut cur = e;
    loop {
        match &cur.expr {
            Expr::Select(s) if !s.test => {
                path.push(s.field.clone());
                cur = &s.operand;
            }
            Expr::Call(c) if c.func_name == "_[_]" && c.target.is_none() && c.args.len() == 2 => {
                match &c.args[1].expr {
                    Expr::Literal(LiteralValue::String(s)) => path.push(s.inner().to_string()),
                    _ => return None,
                }
                cur = &c.args[0];
            }
            Expr::Ident(name) if name == "self" => {
                path.reverse();
                return Some(path);
            }
            _ => return None,
        }
    }
}

/// Whether [`self_path`] has a path for `e` (found without allocating).
fn is_self_path(e: &Expression) -> bool {
    let mut cur = e;
    loop {
        match &cur.expr {
            Expr::Select(s) if !s.test => cur = &s.operand,
            Expr::Call(c) if c.func_name == "_[_]" && c.target.is_none() && c.args.len() == 2 => {
                if !matches!(&c.args[1].expr, Expr::Literal(LiteralValue::String(_))) {
                    return false;
                }
                cur = &c.args[0];
            }
            Expr::Ident(name) => return name == "self",
            _ => return false,
        }
    }
}

/// Paths known present when `e` evaluates to true, added to `out`.
fn when_true(e: &Expression, out: &mut Vec<Path>) {
    match &e.expr {
        Expr::Select(s) if s.test => {
            if let Some(mut p) = self_path(&s.operand) {
                p.push(s.field.clone());
                add_prefixes(out, &p);
            }
        }
        Expr::Call(c) => match (c.func_name.as_str(), c.args.len()) {
            ("_&&_", 2) => {
                when_true(&c.args[0], out);
                when_true(&c.args[1], out);
            }
            ("!_", 1) => when_false(&c.args[0], out),
            ("@in", 2) => {
                if let (Expr::Literal(LiteralValue::String(k)), Some(mut p)) =
                    (&c.args[0].expr, self_path(&c.args[1]))
                {
                    p.push(k.inner().to_string());
                    add_prefixes(out, &p);
                }
            }
            _ => {}
        },
        _ => {}
    }
}

/// Paths known present when `e` evaluates to false, added to `out`.
fn when_false(e: &Expression, out: &mut Vec<Path>) {
    if let Expr::Call(c) = &e.expr {
        match (c.func_name.as_str(), c.args.len()) {
            ("_||_", 2) => {
                when_false(&c.args[0], out);
                when_false(&c.args[1], out);
            }
            ("!_", 1) => when_true(&c.args[0], out),
            _ => {}
        }
    }
}

fn add_prefixes(out: &mut Vec<Path>, path: &[String]) {
    for i in 1..=path.len() {
        out.push(path[..i].to_vec());
    }
}

#[cfg(test)]
mod tests;
