//! KSM204: a readiness rule reads a status field that Kubernetes omits (zero values, or
//! before the controller's first status write) without a `has()` guard.
//!
//! The analysis walks the rule's compiled tree (where `self` is the variable in slot 0, and
//! its selection chains are fused paths) carrying the set of paths known to be present.
//! CEL's `&&` and `||` are commutative for errors (`err && false` is false), so a guard on
//! either side protects the other; a ternary's condition guards its branches.

use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

use crate::core::cel::ast::{Func, Kind, Node};
use crate::core::cel::{CompiledRule, Value};
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

pub fn check(ctx: &Context, out: &mut Vec<Diagnostic>) {
    for site in &ctx.rules {
        let Ok(rule) = &*site.compiled else { continue };
        if site.text.is_empty() {
            continue;
        }
        let risky = Risky::for_target(site.target_api_version, site.target_kind);
        let analysis = analysis_memo(ctx, site, rule, &risky);
        let found = &analysis.reads;
        let Some(first) = found.first() else { continue };
        let (message, help) = match &analysis.words {
            Some((message, help)) => (message.clone(), help.clone()),
            None => words(site, found, &risky),
        };
        let mut d = ctx
            .diag(&INFO, message, ctx.rule_span(site, first.span.clone()))
            .label("may be missing");
        for r in &found[1..] {
            d = d.secondary(ctx.rule_span(site, r.span.clone()), "may be missing");
        }
        out.push(d.help(help));
    }
}

/// What KSM204 finds in a rule for what its target may omit, and the words of the finding.
#[derive(Debug)]
pub(crate) struct Analysis {
    reads: Vec<Unguarded>,
    /// The finding's message and help when they are the same at every site of the rule (the
    /// fields of a built-in kind; for a custom resource the message names the site's kind):
    /// composed once, not at every site (about 4 % of a lint of SMPs whose rules repeat).
    words: Option<(String, String)>,
}

impl Analysis {
    fn of(site: &RuleSite, rule: &CompiledRule, risky: &Risky) -> Analysis {
        let reads = analyse(rule, risky).0;
        let words = (matches!(risky, Risky::Fields(_)) && !reads.is_empty())
            .then(|| words(site, &reads, risky));
        Analysis { reads, words }
    }
}

/// The message and the help of a finding of `found` in `site`'s rule.
fn words(site: &RuleSite, found: &[Unguarded], risky: &Risky) -> (String, String) {
    let names: Vec<String> = found
        .iter()
        .map(|r| format!("`self.{}`", r.path().join(".")))
        .collect();
    let why = match risky {
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
    let message = format!(
        "{} {} read without a has() guard: {why}, and the rule then fails with \
         \"no such key\" instead of returning false",
        names.join(", "),
        if found.len() == 1 { "is" } else { "are" }
    );
    let help = format!("guard the rule:\n  {}", guarded_rule(site, found));
    (message, help)
}

/// The rule with `has()` guards in front, as the fix to show.
fn guarded_rule(site: &RuleSite, found: &[Unguarded]) -> String {
    // One guard per path that may be missing (the findings' paths are distinct).
    let guards: Vec<String> = found
        .iter()
        .map(|r| format!("has(self.{})", r.path().join(".")))
        .collect();
    let body = site.text.trim();
    let needs_parens = body.contains("||") || body.contains('?');
    let body = if needs_parens {
        format!("({body})")
    } else {
        body.to_string()
    };
    format!("{} && {}", guards.join(" && "), body.replace('\n', " "))
}

/// The slot of `self`, the one variable readiness rules declare.
const SELF: usize = 0;

/// What may be missing in the object a rule reads.
enum Risky {
    /// `self.status.<field>` for these fields.
    Fields(&'static [&'static str]),
    /// `self.status` itself (custom resources and unknown kinds).
    Status,
}

impl Risky {
    fn for_target(api_version: &str, kind: &str) -> Risky {
        crate::api::status::omitted_fields(api_version, kind).map_or(Risky::Status, Risky::Fields)
    }

    /// What the analysis depends on of the target, as a number: the address of the fields'
    /// list (identical lists give identical analyses).
    fn key(&self) -> usize {
        match self {
            Risky::Status => 0,
            Risky::Fields(fields) => fields.as_ptr() as usize,
        }
    }

    /// The leading path segments that make a risky prefix, if any.
    fn risky_prefix(&self, path: &[&str]) -> Option<Prefix> {
        if path.first().copied() != Some("status") {
            return None;
        }
        match self {
            Risky::Status => Some(Prefix {
                segments: ["status", ""],
                len: 1,
            }),
            Risky::Fields(fields) => {
                let f = path.get(1)?;
                let field = fields.iter().find(|known| **known == *f)?;
                Some(Prefix {
                    segments: ["status", field],
                    len: 2,
                })
            }
        }
    }
}

/// A path that may be missing: `status`, or `status` and one of [`Risky::Fields`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Prefix {
    segments: [&'static str; 2],
    len: usize,
}

/// A read of a path that may be missing.
#[derive(Debug, Clone, PartialEq)]
struct Unguarded {
    /// The risky prefix of the read, e.g. `["status", "readyReplicas"]` (`status` is always
    /// present on built-in kinds, so only `status.<field>` is guarded there).
    prefix: Prefix,
    /// Byte range in the rule text.
    span: Range<usize>,
}

impl Unguarded {
    /// The risky prefix of the read.
    fn path(&self) -> &[&'static str] {
        &self.prefix.segments[..self.prefix.len]
    }
}

/// [`Analysis::of`] a rule site, remembered by the linter: the result depends only on the rule
/// and on what may be missing in the target. Sites of the same rule text share one compile
/// (see [`crate::core::lint::compile_rule`]), which is the key. The tree walked is the
/// compiled one (a rule that compiles is no deeper than the recursion limit, so the walk
/// stays shallow).
fn analysis_memo(
    ctx: &Context,
    site: &RuleSite,
    rule: &CompiledRule,
    risky: &Risky,
) -> Rc<Analysis> {
    if site.text.len() > MEMO_MAX_RULE_BYTES {
        return Rc::new(Analysis::of(site, rule, risky));
    }
    let key = (ByAddress(site.compiled.clone()), risky.key());
    ctx.linter
        .unguarded
        .get_or_insert_with(&key, || Rc::new(Analysis::of(site, rule, risky)))
}

/// [`analyse`] of a readiness rule compiled alone, with no limit on its size: none if it
/// does not compile.
#[cfg(test)]
fn analyse_text(rule: &str, risky: &Risky) -> (Vec<Unguarded>, usize) {
    let limits = crate::core::cel::Limits {
        max_code_points: usize::MAX,
        ..Default::default()
    };
    crate::core::cel::compile_in(rule, &limits, crate::core::cel::Environment::Readiness)
        .map_or_else(|_| (Vec::new(), 0), |compiled| analyse(&compiled, risky))
}

#[cfg(test)]
fn unguarded_reads(rule: &str, risky: &Risky) -> Vec<Unguarded> {
    analyse_text(rule, risky).0
}

/// The unguarded reads of a compiled readiness rule, and the work the walk did (paths added
/// to and taken out of the known facts): linear in the rule.
fn analyse(rule: &CompiledRule, risky: &Risky) -> (Vec<Unguarded>, usize) {
    let mut w = Walker {
        rule: rule.source(),
        risky,
        found: Vec::new(),
        facts: Facts::default(),
        work: 0,
        // Room for the guards and chains of a readiness rule: the stacks do not grow.
        segments: Vec::with_capacity(32),
        told: Vec::with_capacity(32),
        terms: Vec::with_capacity(16),
        path: Vec::with_capacity(8),
    };
    w.walk(rule.tree());
    w.found.sort_by_key(|u| u.span.start);
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
    terms: Vec<&'a Node>,
    /// The path of the read being looked at.
    path: Vec<&'a str>,
}

impl<'a> Walker<'a> {
    /// Adds the paths `told[range]` to the facts (`add`), or takes them out.
    fn tell(&mut self, range: Range<usize>, add: bool) {
        for i in range {
            if self.told[i].is_empty() {
                continue;
            }
            self.work += 1;
            let path = &self.segments[self.told[i].clone()];
            if add {
                self.facts.add(path);
            } else {
                self.facts.remove(path);
            }
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
    fn walk_with(&mut self, e: &'a Node, range: Range<usize>) {
        self.tell(range.clone(), true);
        self.walk(e);
        self.tell(range, false);
    }

    /// The terms of a chain of `&&` (or `||`), in order, pushed on `terms`.
    fn chain(&mut self, e: &'a Node, op: Func) {
        match operator(e, op, 2) {
            Some(args) => {
                self.chain(&args[0], op);
                self.chain(&args[1], op);
            }
            None => self.terms.push(e),
        }
    }

    fn walk(&mut self, e: &'a Node) {
        match &e.kind {
            Kind::Call {
                func: op @ (Func::And | Func::Or),
                target: None,
                args,
                ..
            } if args.len() == 2 => {
                let op = *op;
                // CEL's && and || are commutative for errors: each term is guarded by what
                // all the others tell.
                let (segments, told, terms) =
                    (self.segments.len(), self.told.len(), self.terms.len());
                self.chain(e, op);
                let n = self.terms.len() - terms;
                // What each term tells, followed by an empty range that ends it.
                for i in 0..n {
                    let t = self.terms[terms + i];
                    if op == Func::And {
                        when_true(t, &mut self.segments, &mut self.told);
                    } else {
                        when_false(t, &mut self.segments, &mut self.told);
                    }
                    self.told.push(0..0);
                }
                let all = told..self.told.len();
                self.tell(all.clone(), true);
                let mut from = told;
                for i in 0..n {
                    let mut to = from;
                    while !self.told[to].is_empty() {
                        to += 1;
                    }
                    let term = self.terms[terms + i];
                    self.tell(from..to, false);
                    self.walk(term);
                    self.tell(from..to, true);
                    from = to + 1;
                }
                self.tell(all, false);
                self.pop(segments, told, terms);
            }
            Kind::Call {
                func: Func::Cond,
                target: None,
                args,
                ..
            } if args.len() == 3 => {
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
            Kind::Call { target, args, .. } => {
                if self.read(e) {
                    return;
                }
                if let Some(t) = target {
                    self.walk(t);
                }
                for a in args {
                    self.walk(a);
                }
            }
            Kind::Select { operand, test, .. } => {
                // has(self.a.b): `self.a` is read, `b` only tested.
                if *test || !self.read(e) {
                    self.walk(operand);
                }
            }
            Kind::Path { .. } => {
                self.read(e);
            }
            Kind::InSet { arg, .. } => self.walk(arg),
            Kind::Comprehension(c) => {
                for part in [
                    &c.range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ] {
                    self.walk(part);
                }
            }
            Kind::List(items) => {
                for item in items {
                    self.walk(item);
                }
            }
            Kind::Map(entries) => {
                for (k, v) in entries {
                    self.walk(k);
                    self.walk(v);
                }
            }
            Kind::Lit(_)
            | Kind::TypeIdent(..)
            | Kind::Var(_)
            | Kind::Unresolved(_)
            | Kind::Name(_)
            | Kind::Struct(_) => {}
        }
    }

    /// If `e` is a `self` path, looks at the read of it and returns true.
    fn read(&mut self, e: &'a Node) -> bool {
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let is_path = self_path(e, &mut path);
        if is_path {
            self.read_path(e, &path);
        }
        self.path = path;
        is_path
    }

    fn read_path(&mut self, e: &Node, path: &[&str]) {
        let Some(prefix) = self.risky.risky_prefix(path) else {
            return;
        };
        if self.known(&path[..prefix.len]) {
            return;
        }
        let Some(span) = self.chain_span(e, prefix.len) else {
            return;
        };
        // One finding per path, at its first read (the walk does not go in the text's
        // order). There are few paths that may be missing: a scan finds the path's.
        match self.found.iter_mut().find(|u| u.prefix == prefix) {
            Some(u) if u.span.start <= span.start => {}
            Some(u) => u.span = span,
            None => self.found.push(Unguarded { prefix, span }),
        }
    }

    /// The source range of a `self.a.b` chain: from `self` to the end of its `depth`-th
    /// field (and from the parentheses around `self` closed on the way).
    fn chain_span(&self, e: &Node, depth: usize) -> Option<Range<usize>> {
        let bytes = self.rule.as_bytes();
        if e.span.start > e.span.end {
            return None;
        }
        let ws = |i: usize| i < bytes.len() && bytes[i].is_ascii_whitespace();
        // The node's span starts at `self`, or at parentheses around it.
        let mut start = e.span.start;
        while start < bytes.len() && (bytes[start] == b'(' || ws(start)) {
            start += 1;
        }
        if !self.rule[start..].starts_with("self") {
            return None;
        }
        // Walk forward over `.field` / `['field']` segments.
        let mut i = start + "self".len();
        let mut closed = 0;
        for _ in 0..depth {
            while ws(i) || bytes.get(i) == Some(&b')') {
                closed += usize::from(bytes[i] == b')');
                i += 1;
            }
            match bytes.get(i) {
                Some(b'.') => {
                    i += 1;
                    while ws(i) {
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
        // Back over the parentheses closed.
        while closed > 0 && start > e.span.start {
            start -= 1;
            closed -= usize::from(bytes[start] == b'(');
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

/// The arguments of `e` if it is a call of the operator `op` with `n` arguments.
fn operator(e: &Node, op: Func, n: usize) -> Option<&[Node]> {
    match &e.kind {
        Kind::Call {
            func,
            target: None,
            args,
            ..
        } if *func == op && args.len() == n => Some(args),
        _ => None,
    }
}

/// The string of a string literal.
fn string_literal(e: &Node) -> Option<&str> {
    match &e.kind {
        Kind::Lit(Value::String(s)) => Some(s),
        _ => None,
    }
}

/// `self.a.b` or `self['a'].b` as `["a", "b"]`, pushed on `out`; false (and `out` as it was)
/// if `e` is no such path.
fn self_path<'a>(e: &'a Node, out: &mut Vec<&'a str>) -> bool {
    let start = out.len();
    let mut cur = e;
    loop {
        match &cur.kind {
            Kind::Select {
                operand,
                field,
                test: false,
            } => {
                out.push(field);
                cur = operand;
            }
            Kind::Call {
                func: Func::Index,
                target: None,
                args,
                ..
            } if args.len() == 2 => match string_literal(&args[1]) {
                Some(key) => {
                    out.push(key);
                    cur = &args[0];
                }
                None => break,
            },
            Kind::Path { slot, fields, .. } if *slot == SELF => {
                out.extend(fields.iter().rev().map(|f| &**f));
                out[start..].reverse();
                return true;
            }
            Kind::Var(slot) if *slot == SELF => {
                out[start..].reverse();
                return true;
            }
            _ => break,
        }
    }
    out.truncate(start);
    false
}

/// Paths known present when `e` evaluates to true, added to `told` (their segments to
/// `segments`).
fn when_true<'a>(e: &'a Node, segments: &mut Vec<&'a str>, told: &mut Vec<Told>) {
    if let Kind::Select {
        operand,
        field,
        test: true,
    } = &e.kind
    {
        let start = segments.len();
        if self_path(operand, segments) {
            segments.push(field);
            add_prefixes(told, start, segments.len());
        }
    } else if let Some(args) = operator(e, Func::And, 2) {
        when_true(&args[0], segments, told);
        when_true(&args[1], segments, told);
    } else if let Some(args) = operator(e, Func::Not, 1) {
        when_false(&args[0], segments, told);
    } else if let Some(args) = operator(e, Func::In, 2)
        && let Some(key) = string_literal(&args[0])
    {
        let start = segments.len();
        if self_path(&args[1], segments) {
            segments.push(key);
            add_prefixes(told, start, segments.len());
        }
    }
}

/// Paths known present when `e` evaluates to false, added to `told`.
fn when_false<'a>(e: &'a Node, segments: &mut Vec<&'a str>, told: &mut Vec<Told>) {
    if let Some(args) = operator(e, Func::Or, 2) {
        when_false(&args[0], segments, told);
        when_false(&args[1], segments, told);
    } else if let Some(args) = operator(e, Func::Not, 1) {
        when_true(&args[0], segments, told);
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
