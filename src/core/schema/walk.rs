//! The validation walk.
//!
//! Mirrors what the API server does to a custom resource, in this order of
//! concern (see apiextensions-apiserver `pkg/apiserver/customresource_handler.go`):
//! pruning of unknown fields (reported here as [`ViolationKind::UnknownField`]),
//! pruning of non-nullable `null`s without default
//! (`schema/defaulting/prunenulls.go`), defaulting (a missing field with a
//! `default` satisfies `required`), then kube-openapi schema validation,
//! list-type validation (`schema/listtype/validation.go`), embedded-resource /
//! ObjectMeta validation (`schema/objectmeta/validation.go`) and CEL rules
//! (`schema/cel/validation.go`).

use std::fmt::Write;

use serde_json::{Map, Value};

use super::node::{Additional, ListType, Node, Reason, Ty};
use super::values::{json_eq, type_ok};
pub(super) use super::values::{json_type, quote, render_f64, render_value};
use super::{PathSeg, RuleEvaluator, Violation, ViolationKind};

#[derive(Clone, Copy)]
pub(super) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// How a node is being validated.
#[derive(Clone, Copy)]
struct Ctx {
    /// Part of the structural tree (not inside allOf/anyOf/oneOf/not):
    /// unknown fields, list types, embedded resources and rules apply.
    structural: bool,
    /// Report unknown fields (off under an embedded resource's `metadata`,
    /// which is checked as ObjectMeta instead).
    unknown: bool,
    /// The parent array preserved unknown fields: so does this item (the
    /// pruning algorithm's `skipPrune` goes through arrays).
    preserve: bool,
}

const FULL: Ctx = Ctx {
    structural: true,
    unknown: true,
    preserve: false,
};

const BRANCH: Ctx = Ctx {
    structural: false,
    unknown: false,
    preserve: false,
};

pub(super) struct Walker<'a> {
    rules: &'a dyn RuleEvaluator,
    /// Ignore the root's `status` (status subresource on create/update).
    skip_root_status: bool,
    path: Vec<Seg<'a>>,
    pub(super) out: Vec<Violation>,
}

/// A `null` under a non-nullable schema is pruned by the API server
/// (`PruneNonNullableNullsWithoutDefaults`), or replaced by the schema's
/// default (which was validated with the CRD): either way it is not validated.
#[inline]
fn survives_null_pruning(v: &Value, n: &Node) -> bool {
    !v.is_null() || n.nullable
}

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

impl<'a> Walker<'a> {
    pub(super) fn run(
        root: &'a Node,
        value: &'a Value,
        rules: &'a dyn RuleEvaluator,
        resource_root: bool,
        skip_root_status: bool,
    ) -> Vec<Violation> {
        let mut w = Walker {
            rules,
            skip_root_status,
            path: Vec::with_capacity(16),
            out: Vec::new(),
        };
        w.node(root, value, FULL, resource_root);
        w.out
    }

    pub(super) fn push(&mut self, s: Seg<'a>) {
        self.path.push(s);
    }

    pub(super) fn pop(&mut self) {
        self.path.pop();
    }

    fn path_string(&self, extra: &[PathSeg]) -> String {
        let mut s = String::new();
        let mut first = true;
        let mut key = |s: &mut String, k: &str| {
            if !first {
                s.push('.');
            }
            first = false;
            s.push_str(k);
        };
        for seg in &self.path {
            match seg {
                Seg::Key(k) => key(&mut s, k),
                Seg::Index(i) => {
                    let _ = write!(s, "[{i}]");
                }
            }
        }
        for seg in extra {
            match seg {
                PathSeg::Key(k) => key(&mut s, k),
                PathSeg::Index(i) => {
                    let _ = write!(s, "[{i}]");
                }
            }
        }
        if s.is_empty() {
            s.push_str("<root>");
        }
        s
    }

    /// Records a violation at the current path (plus `extra`); `detail` gets
    /// the rendered path (kube-openapi repeats it inside the message).
    pub(super) fn emit_at(
        &mut self,
        extra: &[PathSeg],
        kind: ViolationKind,
        detail: impl FnOnce(&str) -> String,
    ) {
        let p = self.path_string(extra);
        let d = detail(&p);
        let mut path: Vec<PathSeg> = self
            .path
            .iter()
            .map(|s| match s {
                Seg::Key(k) => PathSeg::Key((*k).to_string()),
                Seg::Index(i) => PathSeg::Index(*i),
            })
            .collect();
        path.extend_from_slice(extra);
        self.out.push(Violation {
            path,
            kind,
            message: format!("{p}: {d}"),
        });
    }

    pub(super) fn emit(&mut self, kind: ViolationKind, detail: impl FnOnce(&str) -> String) {
        self.emit_at(&[], kind, detail)
    }

    /// `Invalid value: <type>: <p> in body must be of type <t>: "<type>"`
    pub(super) fn type_error(&mut self, expected: &str, v: &Value) {
        let actual = json_type(v);
        self.emit(ViolationKind::Type, |p| {
            format!(
                "Invalid value: \"{actual}\": {p} in body must be of type {expected}: \"{actual}\""
            )
        });
    }

    /// Validates `v` against `n`. `root` marks the resource root, which is
    /// treated as an embedded resource (as the pruning and ObjectMeta
    /// algorithms do with `isResourceRoot`).
    fn node(&mut self, n: &'a Node, v: &'a Value, cx: Ctx, root: bool) {
        if v.is_null() {
            if !n.nullable && n.ty != Ty::Any {
                self.type_error(n.ty.name(), v);
            }
            // CEL rules are not run on null values either.
            return;
        }
        if !type_ok(n.ty, v) {
            self.type_error(n.ty.name(), v);
            return;
        }
        if let Some(allowed) = &n.enum_values
            && !allowed.iter().any(|a| json_eq(a, v))
        {
            self.emit(ViolationKind::Enum, |_| {
                let vals: Vec<String> = allowed
                    .iter()
                    .map(|a| match a {
                        Value::String(s) => quote(s),
                        other => quote(&serde_json::to_string(other).unwrap_or_default()),
                    })
                    .collect();
                format!(
                    "Unsupported value: {}: supported values: {}",
                    render_value(v),
                    vals.join(", ")
                )
            });
        }
        match v {
            Value::String(s) => self.string_checks(n, s, v),
            Value::Number(num) => self.number_checks(n, num, v),
            Value::Array(a) => self.array_checks(n, a, cx),
            Value::Object(m) => self.object_checks(n, m, root || (cx.structural && n.embedded)),
            _ => {}
        }
        self.value_validations(n, v);
        if cx.structural {
            self.run_rules(n, v);
        }
        match v {
            Value::Object(m) => self.object_children(n, m, cx, root),
            Value::Array(a) => {
                let preserve = cx.structural && (n.preserve_unknown || cx.preserve);
                for (i, item) in a.iter().enumerate() {
                    self.push(Seg::Index(i));
                    match &n.items {
                        Some(it) => {
                            // nulls in arrays are not pruned (only replaced by
                            // a default, which was validated with the CRD)
                            if !(item.is_null() && it.has_default && !it.nullable) {
                                let icx = Ctx { preserve, ..cx };
                                self.node(it, item, icx, false);
                            }
                        }
                        None => {
                            if cx.structural && cx.unknown && !preserve {
                                self.unknown_object_fields(item);
                            }
                        }
                    }
                    self.pop();
                }
            }
            _ => {}
        }
    }

    fn string_checks(&mut self, n: &Node, s: &str, v: &Value) {
        if let Some(f) = n.format
            && !f.check(s)
        {
            let name = f.name();
            self.emit(ViolationKind::Format, |p| {
                format!(
                    "Invalid value: {}: {p} in body must be of type {name}: {}",
                    render_value(v),
                    quote(s)
                )
            });
        }
        if n.min_length.is_some() || n.max_length.is_some() {
            let len = s.chars().count() as u64;
            if let Some(max) = n.max_length
                && len > max
            {
                let unit = if max == 1 { "byte" } else { "bytes" };
                self.emit(ViolationKind::MaxLength, |_| {
                    format!("Too long: may not be more than {max} {unit}")
                });
            }
            if let Some(min) = n.min_length
                && len < min
            {
                self.emit(ViolationKind::MinLength, |p| {
                    format!(
                        "Invalid value: {}: {p} in body should be at least {min} chars long",
                        render_value(v)
                    )
                });
            }
        }
        if let Some(pat) = &n.pattern
            && let Some(re) = &pat.regex
            && !re.is_match(s)
        {
            self.emit(ViolationKind::Pattern, |p| {
                format!(
                    "Invalid value: {}: {p} in body should match '{}'",
                    render_value(v),
                    pat.source
                )
            });
        }
    }

    fn number_checks(&mut self, n: &Node, num: &serde_json::Number, v: &Value) {
        let Some(x) = num.as_f64() else { return };
        if let Some(max) = n.maximum {
            let bad = if n.exclusive_maximum {
                x >= max
            } else {
                x > max
            };
            if bad {
                let rel = if n.exclusive_maximum {
                    "less than"
                } else {
                    "less than or equal to"
                };
                self.emit(ViolationKind::Maximum, |p| {
                    format!(
                        "Invalid value: {}: {p} in body should be {rel} {}",
                        render_value(v),
                        render_f64(max)
                    )
                });
            }
        }
        if let Some(min) = n.minimum {
            let bad = if n.exclusive_minimum {
                x <= min
            } else {
                x < min
            };
            if bad {
                let rel = if n.exclusive_minimum {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                self.emit(ViolationKind::Minimum, |p| {
                    format!(
                        "Invalid value: {}: {p} in body should be {rel} {}",
                        render_value(v),
                        render_f64(min)
                    )
                });
            }
        }
        if let Some(m) = n.multiple_of {
            let q = x / m;
            if (q - q.round()).abs() > 1e-9 {
                self.emit(ViolationKind::MultipleOf, |p| {
                    format!(
                        "Invalid value: {}: {p} in body should be a multiple of {}",
                        render_value(v),
                        render_f64(m)
                    )
                });
            }
        }
    }

    fn array_checks(&mut self, n: &Node, a: &'a [Value], cx: Ctx) {
        let len = a.len() as u64;
        if let Some(max) = n.max_items
            && len > max
        {
            let unit = if max == 1 { "item" } else { "items" };
            self.emit(ViolationKind::MaxItems, |_| {
                format!("Too many: {len}: must have at most {max} {unit}")
            });
        }
        if let Some(min) = n.min_items
            && len < min
        {
            self.emit(ViolationKind::MinItems, |p| {
                format!("Invalid value: {len}: {p} in body should have at least {min} items")
            });
        }
        if n.unique_items
            && a.iter()
                .enumerate()
                .any(|(i, x)| a[..i].iter().any(|y| json_eq(x, y)))
        {
            self.emit(ViolationKind::UniqueItems, |p| {
                format!("Invalid value: \"\": {p} in body shouldn't contain duplicates")
            });
        }
        if cx.structural {
            match &n.list_type {
                ListType::Atomic => {}
                ListType::Set => self.list_set(a),
                ListType::Map(keys) => self.list_map(a, keys),
            }
        }
    }

    /// `x-kubernetes-list-type: set`: each value is reported once, at its
    /// second occurrence.
    fn list_set(&mut self, a: &'a [Value]) {
        for (i, x) in a.iter().enumerate() {
            let earlier = a[..i].iter().filter(|y| *y == x).count();
            if earlier == 1 {
                self.push(Seg::Index(i));
                self.emit(ViolationKind::ListMapKeyDuplicate, |_| {
                    format!("Duplicate value: {}", render_value(x))
                });
                self.pop();
            }
        }
    }

    /// `x-kubernetes-list-type: map`: items must be objects; the tuple of map
    /// keys (a missing key counts as "unspecified") must be unique.
    fn list_map(&mut self, a: &'a [Value], keys: &[String]) {
        for (i, x) in a.iter().enumerate() {
            if !x.is_null() && !x.is_object() {
                self.push(Seg::Index(i));
                self.emit(ViolationKind::Type, |_| {
                    format!(
                        "Invalid value: {}: must be an object for an array of list-type map",
                        render_value(x)
                    )
                });
                self.pop();
                return;
            }
        }
        if a.len() <= 1 || keys.is_empty() {
            return;
        }
        let key_of = |x: &'a Value| -> Vec<Option<&'a Value>> {
            keys.iter().map(|k| x.get(k.as_str())).collect()
        };
        let same = |p: &[Option<&Value>], q: &[Option<&Value>]| {
            p.iter().zip(q).all(|(x, y)| match (x, y) {
                (None, None) => true,
                (Some(x), Some(y)) => x == y,
                _ => false,
            })
        };
        let all: Vec<Vec<Option<&Value>>> = a.iter().map(key_of).collect();
        for i in 0..all.len() {
            let earlier = all[..i].iter().filter(|k| same(k, &all[i])).count();
            if earlier == 1 {
                let mut shown = Map::new();
                for (k, v) in keys.iter().zip(&all[i]) {
                    if let Some(v) = v {
                        shown.insert(k.clone(), (*v).clone());
                    }
                }
                self.push(Seg::Index(i));
                self.emit(ViolationKind::ListMapKeyDuplicate, |_| {
                    format!(
                        "Duplicate value: {}",
                        serde_json::to_string(&Value::Object(shown)).unwrap_or_default()
                    )
                });
                self.pop();
            }
        }
    }

    fn object_checks(&mut self, n: &Node, m: &'a Map<String, Value>, embedded: bool) {
        let len = m.len() as u64;
        if let Some(max) = n.max_properties
            && len > max
        {
            let unit = if max == 1 { "item" } else { "items" };
            self.emit(ViolationKind::MaxProperties, |_| {
                format!("Too many: {len}: must have at most {max} {unit}")
            });
        }
        if let Some(min) = n.min_properties
            && len < min
        {
            self.emit(ViolationKind::MinProperties, |p| {
                format!("Invalid value: {len}: {p} in body should have at least {min} properties")
            });
        }
        for r in &n.required {
            let schema = n.schema_for_field(r);
            let present = match m.get(r.as_str()) {
                // a non-nullable null is pruned (or defaulted when it has a default)
                Some(Value::Null) => schema.is_none_or(|s| s.nullable || s.has_default),
                Some(_) => true,
                // defaulting fills a missing field that has a default
                None => schema.is_some_and(|s| s.has_default),
            };
            if !present {
                self.emit_at(&[PathSeg::Key(r.clone())], ViolationKind::Required, |_| {
                    "Required value".to_string()
                });
            }
        }
        if embedded {
            for f in ["apiVersion", "kind"] {
                if !m.contains_key(f) && !n.required.iter().any(|r| r == f) {
                    self.emit_at(
                        &[PathSeg::Key(f.to_string())],
                        ViolationKind::Required,
                        |_| "Required value".to_string(),
                    );
                }
            }
        }
    }

    fn object_children(&mut self, n: &'a Node, m: &'a Map<String, Value>, cx: Ctx, root: bool) {
        let embedded = root || (cx.structural && n.embedded);
        let preserve = n.preserve_unknown || cx.preserve || matches!(n.additional, Additional::Any);
        if root && !m.contains_key("metadata") {
            self.missing_name();
        }
        for (k, v) in m {
            if root && self.skip_root_status && k == "status" {
                continue;
            }
            self.push(Seg::Key(k));
            if embedded && META_FIELDS.contains(&k.as_str()) {
                match k.as_str() {
                    "apiVersion" => self.check_api_version(v),
                    "kind" => self.check_kind(v),
                    _ => self.check_object_meta(v, root),
                }
                if let Some(p) = n.property(k)
                    && survives_null_pruning(v, p)
                {
                    let ccx = Ctx {
                        unknown: false,
                        preserve: false,
                        ..cx
                    };
                    self.node(p, v, ccx, false);
                }
                self.pop();
                continue;
            }
            let child_cx = Ctx {
                preserve: false,
                ..cx
            };
            if let Some(p) = n.property(k) {
                if survives_null_pruning(v, p) {
                    self.node(p, v, child_cx, false);
                }
            } else if let Additional::Schema(ap) = &n.additional {
                if survives_null_pruning(v, ap) {
                    self.node(ap, v, child_cx, false);
                }
            } else if cx.structural && cx.unknown && !preserve {
                self.emit(ViolationKind::UnknownField, |_| {
                    format!("unknown field {}", quote(k))
                });
            }
            self.pop();
        }
    }

    /// Below a field without schema (an array without `items`), every field of
    /// an object item is unknown.
    fn unknown_object_fields(&mut self, v: &'a Value) {
        if let Value::Object(m) = v {
            for k in m.keys() {
                self.push(Seg::Key(k));
                self.emit(ViolationKind::UnknownField, |_| {
                    format!("unknown field {}", quote(k))
                });
                self.pop();
            }
        }
    }

    /// Validates `v` against `n` in branch mode, returning the violations
    /// instead of recording them.
    fn branch(&mut self, n: &'a Node, v: &'a Value) -> Vec<Violation> {
        let saved = std::mem::take(&mut self.out);
        self.node(n, v, BRANCH, false);
        std::mem::replace(&mut self.out, saved)
    }

    fn value_validations(&mut self, n: &'a Node, v: &'a Value) {
        for b in &n.all_of {
            let errs = self.branch(b, v);
            self.out.extend(errs);
        }
        if !n.any_of.is_empty() {
            let mut ok = false;
            for b in &n.any_of {
                if self.branch(b, v).is_empty() {
                    ok = true;
                    break;
                }
            }
            if !ok {
                self.emit(ViolationKind::AnyOf, |p| {
                    format!(
                        "Invalid value: \"\": \"{p}\" must validate at least one schema (anyOf)"
                    )
                });
            }
        }
        if !n.one_of.is_empty() {
            let mut matched = 0;
            for b in &n.one_of {
                if self.branch(b, v).is_empty() {
                    matched += 1;
                }
            }
            if matched != 1 {
                self.emit(ViolationKind::OneOf, |p| {
                    format!(
                        "Invalid value: \"\": \"{p}\" must validate one and only one schema (oneOf). Found {matched} valid alternatives"
                    )
                });
            }
        }
        if let Some(b) = &n.not
            && self.branch(b, v).is_empty()
        {
            self.emit(ViolationKind::Not, |p| {
                format!("Invalid value: \"\": \"{p}\" must not validate the schema (not)")
            });
        }
    }

    fn run_rules(&mut self, n: &'a Node, v: &'a Value) {
        for r in &n.rules {
            if r.uses_old_self {
                continue; // transition rule: only evaluated on update
            }
            if self.rules.eval(&r.rule, v) != Some(false) {
                continue;
            }
            let detail = if r.message.is_empty() {
                format!("failed rule: {}", r.rule.trim())
            } else {
                r.message.clone()
            };
            let compound = matches!(v, Value::Object(_) | Value::Array(_));
            self.emit_at(&r.field_path, ViolationKind::Rule, |_| match r.reason {
                Reason::Forbidden => format!("Forbidden: {detail}"),
                Reason::Required => format!("Required value: {detail}"),
                Reason::Duplicate if compound => "Duplicate value".to_string(),
                Reason::Duplicate => format!("Duplicate value: {}", render_value(v)),
                Reason::Invalid if compound => format!("Invalid value: {detail}"),
                Reason::Invalid => format!("Invalid value: {}: {detail}", render_value(v)),
            });
        }
    }
}
