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
use crate::core::lint::{ByAddress, Context, MEMO_MAX_RULE_BYTES, RuleInfo, RuleSite};
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

    /// What the analysis depends on of the target, as a number: the address of the fields'
    /// list (identical lists give identical analyses).
    fn key(&self) -> usize {
        match self {
            Risky::Status => 0,
            Risky::Fields(fields) => fields.as_ptr() as usize,
        }
    }

    /// The number of leading path segments that make a risky prefix, if any.
    fn risky_len(&self, path: &[&str]) -> Option<usize> {
        if path.first().copied() != Some("status") {
            return None;
        }
        match self {
            Risky::Status => Some(1),
            Risky::Fields(fields) => {
                let f = path.get(1)?;
                fields.contains(f).then_some(2)
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
/// and on what may be missing in the target. Sites of the same rule text share the tree of
/// one parse (see [`crate::core::lint::compile_rule`]), which is the key. The rule's tree is
/// the one its compile parsed (a rule that compiles is no deeper than the recursion limit, so
/// the walk stays shallow).
fn unguarded_reads_memo(
    ctx: &Context,
    site: &RuleSite,
    parsed: &Rc<ParsedRule>,
    risky: &Risky,
) -> Rc<Vec<Unguarded>> {
    if site.text.len() > MEMO_MAX_RULE_BYTES {
        return Rc::new(analyse_parsed(site.text, parsed, risky).0);
    }
    let key = (ByAddress(parsed.clone()), risky.key());
    ctx.linter
        .unguarded
        .get_or_insert_with(&key, || Rc::new(analyse_parsed(site.text, parsed, risky).0))
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
        facts: Facts::default(),
        work: 0,
        segments: Vec::new(),
        told: Vec::new(),
        terms: Vec::new(),
        path: Vec::new(),
    };
    w.walk(expr);
    // One finding per path, at its first read.
    let mut seen = BTreeSet::new();
    w.found.sort_by_key(|u| u.span.start);
    w.found.retain(|u| seen.insert(u.path.clone()));
    (w.found, w.work)
}

/// A path of the walk: a range of [`Walker::segments`].
type Told = Range<usize>;

/// The walk carries the paths known present as a multiset: a guard adds its paths while
/// the parts it protects are walked, and takes them out after, so each path is added and
/// removed once per guard whatever the size of the rule (the analysis is linear in it).
///
/// The paths borrow their segments from the tree, and the buffers below are stacks that
/// each `&&` / `||` chain and ternary pushes onto and takes its own off when done: the walk
/// allocates once per distinct path known, not per node.
struct Walker<'a> {
    rule: &'a str,
    info: &'a cel::common::ast::SourceInfo,
    risky: &'a Risky,
    found: Vec<Unguarded>,
    /// How many times each path is known.
    facts: Facts<'a>,
    /// Paths added to and taken out of `facts`.
    work: usize,
    /// The segments of the paths in `told`.
    segments: Vec<&'a str>,
    /// The paths the terms of the chains under way tell.
    told: Vec<Told>,
    /// The terms of the chains under way.
    terms: Vec<&'a Expression>,
    /// The path of the read being looked at.
    path: Vec<&'a str>,
}

impl<'a> Walker<'a> {
    /// Adds the paths `told[range]` to the facts (empty ranges are no paths).
    fn add(&mut self, range: Range<usize>) {
        for i in range {
            if self.told[i].is_empty() {
                continue;
            }
            self.work += 1;
            let path = &self.segments[self.told[i].clone()];
            self.facts.add(path);
        }
    }

    /// Takes the paths `told[range]` out of the facts.
    fn remove(&mut self, range: Range<usize>) {
        for i in range {
            if self.told[i].is_empty() {
                continue;
            }
            self.work += 1;
            let path = &self.segments[self.told[i].clone()];
            self.facts.remove(path);
        }
    }

    fn known(&self, path: &[&str]) -> bool {
        self.facts
            .find(path)
            .is_some_and(|i| self.facts.known[i].1 > 0)
    }

    /// Takes the buffers back to the given lengths.
    fn pop(&mut self, segments: usize, told: usize, terms: usize) {
        self.segments.truncate(segments);
        self.told.truncate(told);
        self.terms.truncate(terms);
    }

    /// Walks `e` with the paths `told[range]` known.
    fn walk_with(&mut self, e: &'a Expression, range: Range<usize>) {
        self.add(range.clone());
        self.walk(e);
        self.remove(range);
    }

    /// The terms of a chain of `&&` (or `||`), in order, pushed on `terms`.
    fn chain(&mut self, e: &'a Expression, op: &str) {
        match &e.expr {
            Expr::Call(c) if c.func_name == op && c.target.is_none() && c.args.len() == 2 => {
                self.chain(&c.args[0], op);
                self.chain(&c.args[1], op);
            }
            _ => self.terms.push(e),
        }
    }

    fn walk(&mut self, e: &'a Expression) {
        match &e.expr {
            Expr::Call(call) => {
                let args = &call.args;
                match (call.func_name.as_str(), call.target.as_deref(), args.len()) {
                    (op @ ("_&&_" | "_||_"), None, 2) => {
                        // CEL's && and || are commutative for errors: each term is guarded by
                        // what all the others tell.
                        let (segments, told, terms) =
                            (self.segments.len(), self.told.len(), self.terms.len());
                        self.chain(e, op);
                        let n = self.terms.len() - terms;
                        // What each term tells, followed by an empty range that ends it.
                        for i in 0..n {
                            let t = self.terms[terms + i];
                            if op == "_&&_" {
                                when_true(t, &mut self.segments, &mut self.told);
                            } else {
                                when_false(t, &mut self.segments, &mut self.told);
                            }
                            self.told.push(0..0);
                        }
                        let all = told..self.told.len();
                        self.add(all.clone());
                        let mut from = told;
                        for i in 0..n {
                            let mut to = from;
                            while !self.told[to].is_empty() {
                                to += 1;
                            }
                            let term = self.terms[terms + i];
                            self.remove(from..to);
                            self.walk(term);
                            self.add(from..to);
                            from = to + 1;
                        }
                        self.remove(all);
                        self.pop(segments, told, terms);
                    }
                    ("_?_:_", None, 3) => {
                        self.walk(&args[0]);
                        let (segments, told) = (self.segments.len(), self.told.len());
                        when_true(&args[0], &mut self.segments, &mut self.told);
                        let t = told..self.told.len();
                        self.walk_with(&args[1], t);
                        let f_start = self.told.len();
                        when_false(&args[0], &mut self.segments, &mut self.told);
                        let f = f_start..self.told.len();
                        self.walk_with(&args[2], f);
                        self.segments.truncate(segments);
                        self.told.truncate(told);
                    }
                    _ => {
                        if self.read(e) {
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
                } else if !self.read(e) {
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

    /// If `e` is a `self` path, looks at the read of it and returns true.
    fn read(&mut self, e: &'a Expression) -> bool {
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let is_path = self_path(e, &mut path);
        if is_path {
            self.read_path(e, &path);
        }
        self.path = path;
        is_path
    }

    fn read_path(&mut self, e: &Expression, path: &[&str]) {
        let Some(len) = self.risky.risky_len(path) else {
            return;
        };
        if self.known(&path[..len]) {
            return;
        }
        let risky_from = match self.risky {
            Risky::Status => 1,
            Risky::Fields(_) => 2,
        };
        if let Some(span) = self.chain_span(e, len) {
            self.found.push(Unguarded {
                path: path[..len].iter().map(|s| s.to_string()).collect(),
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

/// The multiset of the paths known present. A path once added stays, at count 0 when no
/// longer known, so that adding it again copies nothing. Rules guard a few paths: they are
/// looked up in order; past [`Facts::FEW`], through an index (a hash map: a rule with many
/// guards stays linear).
#[derive(Default)]
struct Facts<'a> {
    /// The segments of the paths.
    segments: Vec<&'a str>,
    /// Each path (a range of `segments`) and how many times it is known.
    known: Vec<(Range<usize>, u32)>,
    /// The position in `known` of each path, once there are more than [`Facts::FEW`].
    index: Option<HashMap<Vec<&'a str>, usize>>,
}

impl<'a> Facts<'a> {
    const FEW: usize = 16;

    fn find(&self, path: &[&str]) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(path).copied(),
            None => self
                .known
                .iter()
                .position(|(r, _)| self.segments[r.clone()] == *path),
        }
    }

    fn add(&mut self, path: &[&'a str]) {
        if let Some(i) = self.find(path) {
            self.known[i].1 += 1;
            return;
        }
        let start = self.segments.len();
        self.segments.extend_from_slice(path);
        self.known.push((start..self.segments.len(), 1));
        let at = self.known.len() - 1;
        match &mut self.index {
            Some(index) => {
                index.insert(path.to_vec(), at);
            }
            None if self.known.len() > Self::FEW => {
                let index = self
                    .known
                    .iter()
                    .enumerate()
                    .map(|(i, (r, _))| (self.segments[r.clone()].to_vec(), i))
                    .collect();
                self.index = Some(index);
            }
            None => {}
        }
    }

    fn remove(&mut self, path: &[&str]) {
        if let Some(i) = self.find(path) {
            let n = &mut self.known[i].1;
            *n = n.saturating_sub(1);
        }
    }
}

/// `self.a.b` or `self['a'].b` as `["a", "b"]`, pushed on `out`; false (and `out` as it was)
/// if `e` is no such path.
fn self_path<'a>(e: &'a Expression, out: &mut Vec<&'a str>) -> bool {
    if !is_self_path(e) {
        return false;
    }
    let start = out.len();
    let mut cur = e;
    loop {
        match &cur.expr {
            Expr::Select(s) if !s.test => {
                out.push(s.field.as_str());
                cur = &s.operand;
            }
            Expr::Call(c) if c.func_name == "_[_]" && c.target.is_none() && c.args.len() == 2 => {
                match &c.args[1].expr {
                    Expr::Literal(LiteralValue::String(s)) => out.push(s.inner()),
                    _ => {
                        out.truncate(start);
                        return false;
                    }
                }
                cur = &c.args[0];
            }
            Expr::Ident(name) if name == "self" => {
                out[start..].reverse();
                return true;
            }
            _ => {
                out.truncate(start);
                return false;
            }
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

/// Paths known present when `e` evaluates to true, added to `told` (their segments to
/// `segments`).
fn when_true<'a>(e: &'a Expression, segments: &mut Vec<&'a str>, told: &mut Vec<Told>) {
    match &e.expr {
        Expr::Select(s) if s.test => {
            let start = segments.len();
            if self_path(&s.operand, segments) {
                segments.push(s.field.as_str());
                add_prefixes(told, start, segments.len());
            }
        }
        Expr::Call(c) => match (c.func_name.as_str(), c.args.len()) {
            ("_&&_", 2) => {
                when_true(&c.args[0], segments, told);
                when_true(&c.args[1], segments, told);
            }
            ("!_", 1) => when_false(&c.args[0], segments, told),
            ("@in", 2) => {
                if let Expr::Literal(LiteralValue::String(k)) = &c.args[0].expr {
                    let start = segments.len();
                    if self_path(&c.args[1], segments) {
                        segments.push(k.inner());
                        add_prefixes(told, start, segments.len());
                    }
                }
            }
            _ => {}
        },
        _ => {}
    }
}

/// Paths known present when `e` evaluates to false, added to `told`.
fn when_false<'a>(e: &'a Expression, segments: &mut Vec<&'a str>, told: &mut Vec<Told>) {
    if let Expr::Call(c) = &e.expr {
        match (c.func_name.as_str(), c.args.len()) {
            ("_||_", 2) => {
                when_false(&c.args[0], segments, told);
                when_false(&c.args[1], segments, told);
            }
            ("!_", 1) => when_true(&c.args[0], segments, told),
            _ => {}
        }
    }
}

/// Every prefix of the path `segments[start..end]`.
fn add_prefixes(told: &mut Vec<Told>, start: usize, end: usize) {
    for i in start + 1..=end {
        told.push(start..i);
    }
}

#[cfg(test)]
mod tests;
