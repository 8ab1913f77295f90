//! Compiled schema nodes.

use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

use super::PathSeg;
use super::formats::Format;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    /// No `type` (e.g. preserve-unknown-fields, or a value-validation branch).
    Any,
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
    /// `x-kubernetes-int-or-string: true` (kube-openapi: type `integer,string`).
    IntOrString,
}

impl Ty {
    pub(super) fn name(self) -> &'static str {
        match self {
            Ty::Any => "",
            Ty::Object => "object",
            Ty::Array => "array",
            Ty::String => "string",
            Ty::Integer => "integer",
            Ty::Number => "number",
            Ty::Boolean => "boolean",
            Ty::IntOrString => "integer,string",
        }
    }
}

#[derive(Debug, Clone)]
pub(super) enum Additional {
    /// No `additionalProperties`: unknown keys are unknown fields.
    None,
    /// `additionalProperties: true`: anything goes.
    Any,
    /// `additionalProperties: false`.
    False,
    Schema(Box<Node>),
}

#[derive(Debug, Clone)]
pub(super) enum ListType {
    Atomic,
    Set,
    Map(Vec<String>),
}

#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub rule: String,
    /// `message`, trimmed; empty if none.
    pub message: String,
    /// `fieldPath`, parsed; empty if none.
    pub field_path: Vec<PathSeg>,
    /// `reason`: FieldValueInvalid (default), FieldValueForbidden,
    /// FieldValueRequired, FieldValueDuplicate.
    pub reason: Reason,
    /// The rule references `oldSelf` (a transition rule): skipped on create.
    pub uses_old_self: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

#[derive(Debug, Clone)]
pub(super) struct Pattern {
    pub source: String,
    pub regex: Option<Regex>,
}

#[derive(Debug, Clone)]
pub(super) struct Node {
    pub ty: Ty,
    pub nullable: bool,
    pub has_default: bool,
    /// `default` (not null), applied by [`super::Schema::default_and_prune`].
    pub default: Option<Value>,
    pub format: Option<Format>,
    /// Sorted by key for binary search.
    pub properties: Vec<(String, Node)>,
    pub additional: Additional,
    pub items: Option<Box<Node>>,
    pub required: Vec<String>,
    pub enum_values: Option<Vec<Value>>,
    pub pattern: Option<Pattern>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: bool,
    pub exclusive_maximum: bool,
    pub multiple_of: Option<f64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub unique_items: bool,
    pub all_of: Vec<Node>,
    pub any_of: Vec<Node>,
    pub one_of: Vec<Node>,
    pub not: Option<Box<Node>>,
    pub preserve_unknown: bool,
    pub embedded: bool,
    pub list_type: ListType,
    pub rules: Vec<Rule>,
}

impl Node {
    fn empty() -> Node {
        Node {
            ty: Ty::Any,
            nullable: false,
            has_default: false,
            default: None,
            format: None,
            properties: Vec::new(),
            additional: Additional::None,
            items: None,
            required: Vec::new(),
            enum_values: None,
            pattern: None,
            min_length: None,
            max_length: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: false,
            exclusive_maximum: false,
            multiple_of: None,
            min_items: None,
            max_items: None,
            min_properties: None,
            max_properties: None,
            unique_items: false,
            all_of: Vec::new(),
            any_of: Vec::new(),
            one_of: Vec::new(),
            not: None,
            preserve_unknown: false,
            embedded: false,
            list_type: ListType::Atomic,
            rules: Vec::new(),
        }
    }

    pub(super) fn preserve_any() -> Node {
        Node {
            preserve_unknown: true,
            ..Node::empty()
        }
    }

    #[inline]
    pub(super) fn property(&self, key: &str) -> Option<&Node> {
        self.properties
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| &self.properties[i].1)
    }

    /// The schema for the value under `key` (a property, else
    /// `additionalProperties`), as `getSchemaForField` in apiextensions.
    #[inline]
    pub(super) fn schema_for_field(&self, key: &str) -> Option<&Node> {
        self.property(key).or(match &self.additional {
            Additional::Schema(s) => Some(s),
            _ => None,
        })
    }
}

#[derive(Default)]
pub(super) struct CompileCx {
    regexes: HashMap<String, Option<Regex>>,
    pub warnings: Vec<String>,
}

fn u64_of(v: &Value, key: &str, at: &str) -> Result<Option<u64>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_u64()
            .or_else(|| {
                x.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| format!("{at}.{key}: must be a non-negative integer")),
    }
}

fn f64_of(v: &Value, key: &str, at: &str) -> Result<Option<f64>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("{at}.{key}: must be a number")),
    }
}

fn bool_of(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

impl CompileCx {
    pub(super) fn compile(&mut self, v: &Value, at: &str) -> Result<Node, String> {
        let obj = match v {
            Value::Object(o) => o,
            Value::Bool(true) => return Ok(Node::preserve_any()),
            _ => return Err(format!("{at}: schema must be an object")),
        };
        let mut n = Node::empty();
        n.preserve_unknown = bool_of(v, "x-kubernetes-preserve-unknown-fields");
        n.embedded = bool_of(v, "x-kubernetes-embedded-resource");
        n.nullable = bool_of(v, "nullable");
        n.default = obj.get("default").filter(|d| !d.is_null()).cloned();
        n.has_default = n.default.is_some();
        n.ty = match obj.get("type").and_then(Value::as_str) {
            None | Some("") => Ty::Any,
            Some("object") => Ty::Object,
            Some("array") => Ty::Array,
            Some("string") => Ty::String,
            Some("integer") => Ty::Integer,
            Some("number") => Ty::Number,
            Some("boolean") => Ty::Boolean,
            Some(other) => {
                self.warnings
                    .push(format!("{at}.type: unknown type {other:?}; not checked"));
                Ty::Any
            }
        };
        if bool_of(v, "x-kubernetes-int-or-string") {
            n.ty = Ty::IntOrString;
        }
        if let Some(f) = obj.get("format").and_then(Value::as_str) {
            // Like StripUnsupportedFormatsPostProcessorForVersion: only string
            // formats are validated (int32/int64/float/double are not range
            // checked by kube-openapi); unknown formats are ignored.
            if matches!(n.ty, Ty::Any | Ty::String | Ty::IntOrString) {
                n.format = Format::from_name(f);
            }
        }
        if let Some(Value::Object(props)) = obj.get("properties") {
            let mut list = Vec::with_capacity(props.len());
            for (k, p) in props {
                list.push((k.clone(), self.compile(p, &format!("{at}.properties.{k}"))?));
            }
            list.sort_by(|a, b| a.0.cmp(&b.0));
            n.properties = list;
        }
        n.additional = match obj.get("additionalProperties") {
            None | Some(Value::Null) => Additional::None,
            Some(Value::Bool(true)) => Additional::Any,
            Some(Value::Bool(false)) => Additional::False,
            Some(s) => Additional::Schema(Box::new(
                self.compile(s, &format!("{at}.additionalProperties"))?,
            )),
        };
        n.items = match obj.get("items") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => match a.first() {
                // tuple form is not structural; use the first schema
                Some(s) => Some(Box::new(self.compile(s, &format!("{at}.items[0]"))?)),
                None => None,
            },
            Some(s) => Some(Box::new(self.compile(s, &format!("{at}.items"))?)),
        };
        if let Some(Value::Array(r)) = obj.get("required") {
            n.required = r
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect();
        }
        if let Some(Value::Array(e)) = obj.get("enum") {
            n.enum_values = Some(e.clone());
        }
        if let Some(p) = obj.get("pattern").and_then(Value::as_str) {
            let regex = self.regex(p, at);
            n.pattern = Some(Pattern {
                source: p.to_string(),
                regex,
            });
        }
        n.min_length = u64_of(v, "minLength", at)?;
        n.max_length = u64_of(v, "maxLength", at)?;
        n.minimum = f64_of(v, "minimum", at)?;
        n.maximum = f64_of(v, "maximum", at)?;
        n.exclusive_minimum = bool_of(v, "exclusiveMinimum");
        n.exclusive_maximum = bool_of(v, "exclusiveMaximum");
        n.multiple_of = f64_of(v, "multipleOf", at)?.filter(|m| *m > 0.0);
        n.min_items = u64_of(v, "minItems", at)?;
        n.max_items = u64_of(v, "maxItems", at)?;
        n.min_properties = u64_of(v, "minProperties", at)?;
        n.max_properties = u64_of(v, "maxProperties", at)?;
        n.unique_items = bool_of(v, "uniqueItems");
        for (key, dst) in [
            ("allOf", &mut n.all_of),
            ("anyOf", &mut n.any_of),
            ("oneOf", &mut n.one_of),
        ] {
            if let Some(Value::Array(a)) = obj.get(key) {
                for (i, s) in a.iter().enumerate() {
                    dst.push(self.compile(s, &format!("{at}.{key}[{i}]"))?);
                }
            }
        }
        if let Some(s) = obj.get("not").filter(|s| !s.is_null()) {
            n.not = Some(Box::new(self.compile(s, &format!("{at}.not"))?));
        }
        n.list_type = match obj.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") => ListType::Set,
            Some("map") => ListType::Map(
                obj.get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => ListType::Atomic,
        };
        if let Some(Value::Array(rules)) = obj.get("x-kubernetes-validations") {
            for r in rules {
                let Some(rule) = r.get("rule").and_then(Value::as_str) else {
                    continue;
                };
                let message = r
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim()
                    .to_string();
                let field_path = r
                    .get("fieldPath")
                    .and_then(Value::as_str)
                    .map(parse_field_path)
                    .unwrap_or_default();
                let reason = match r.get("reason").and_then(Value::as_str) {
                    Some("FieldValueForbidden") => Reason::Forbidden,
                    Some("FieldValueRequired") => Reason::Required,
                    Some("FieldValueDuplicate") => Reason::Duplicate,
                    _ => Reason::Invalid,
                };
                n.rules.push(Rule {
                    rule: rule.to_string(),
                    message,
                    field_path,
                    reason,
                    uses_old_self: mentions_ident(rule, "oldSelf"),
                });
            }
        }
        Ok(n)
    }

    fn regex(&mut self, pattern: &str, at: &str) -> Option<Regex> {
        if let Some(r) = self.regexes.get(pattern) {
            return r.clone();
        }
        let compiled = match Regex::new(&translate_re2(pattern)) {
            Ok(r) => Some(r),
            Err(e) => {
                self.warnings.push(format!(
                    "{at}.pattern: {pattern:?} does not compile ({e}); not checked"
                ));
                None
            }
        };
        self.regexes.insert(pattern.to_string(), compiled.clone());
        compiled
    }
}

/// `true` if `ident` occurs in `src` as a whole identifier.
fn mentions_ident(src: &str, ident: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    src.match_indices(ident).any(|(i, _)| {
        let before = src[..i].chars().next_back();
        let after = src[i + ident.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Parses an `x-kubernetes-validations` `fieldPath` such as `.spec.foo`,
/// `.spec['a.b']` or `.list[0]` into path segments.
pub(super) fn parse_field_path(s: &str) -> Vec<PathSeg> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'.' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                if j > start {
                    out.push(PathSeg::Key(s[start..j].to_string()));
                }
                i = j;
            }
            b'[' => {
                if i + 1 < b.len() && b[i + 1] == b'\'' {
                    // ['key'] with \' escapes
                    let mut key = String::new();
                    let mut j = i + 2;
                    let mut chars = s[j..].char_indices();
                    let mut end = s.len();
                    while let Some((off, c)) = chars.next() {
                        if c == '\\' {
                            if let Some((_, n)) = chars.next() {
                                key.push(n);
                            }
                        } else if c == '\'' {
                            end = j + off;
                            break;
                        } else {
                            key.push(c);
                        }
                    }
                    out.push(PathSeg::Key(key));
                    j = end + 1;
                    // skip to after ']'
                    while j < b.len() && b[j] != b']' {
                        j += 1;
                    }
                    i = j + 1;
                } else {
                    let start = i + 1;
                    let mut j = start;
                    while j < b.len() && b[j] != b']' {
                        j += 1;
                    }
                    let inner = &s[start..j.min(s.len())];
                    match inner.parse::<usize>() {
                        Ok(n) => out.push(PathSeg::Index(n)),
                        Err(_) => out.push(PathSeg::Key(inner.to_string())),
                    }
                    i = j + 1;
                }
            }
            _ => {
                // leading name without a dot
                let start = i;
                let mut j = i;
                while j < b.len() && b[j] != b'.' && b[j] != b'[' {
                    j += 1;
                }
                out.push(PathSeg::Key(s[start..j].to_string()));
                i = j;
            }
        }
    }
    out
}

/// Rewrites a Go RE2 pattern so that the `regex` crate gives it Go's meaning:
/// the Perl classes `\d`, `\w`, `\s` (and `\b`, `\B`) are ASCII-only in Go but
/// Unicode-aware in the `regex` crate.
pub(super) fn translate_re2(p: &str) -> String {
    let mut out = String::with_capacity(p.len() + 8);
    let mut in_class = false;
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push('\\');
                    break;
                };
                let repl = match (in_class, n) {
                    (false, 'd') => Some("[0-9]"),
                    (false, 'D') => Some("[^0-9]"),
                    (false, 'w') => Some("[0-9A-Za-z_]"),
                    (false, 'W') => Some("[^0-9A-Za-z_]"),
                    (false, 's') => Some("[\\t\\n\\f\\r ]"),
                    (false, 'S') => Some("[^\\t\\n\\f\\r ]"),
                    (false, 'b') => Some("(?-u:\\b)"),
                    (false, 'B') => Some("(?-u:\\B)"),
                    (true, 'd') => Some("0-9"),
                    (true, 'w') => Some("0-9A-Za-z_"),
                    (true, 's') => Some("\\t\\n\\f\\r "),
                    _ => None,
                };
                match repl {
                    Some(r) => out.push_str(r),
                    None => {
                        out.push('\\');
                        out.push(n);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                // a leading ']' is a literal in RE2
                if chars.peek() == Some(&']') {
                    out.push_str("\\]");
                    chars.next();
                }
                continue;
            }
            '[' if in_class => {
                // `[:alpha:]` style classes, or a literal '[' (escape it: the
                // regex crate treats a bare '[' inside a class as nesting)
                if chars.peek() == Some(&':') {
                    // copy `[:name:]` through
                    out.push('[');
                    let mut prev = '[';
                    for c2 in chars.by_ref() {
                        out.push(c2);
                        if prev == ':' && c2 == ']' {
                            break;
                        }
                        prev = c2;
                    }
                } else {
                    out.push_str("\\[");
                }
            }
            '&' | '~' if in_class => {
                // class set operators (`&&`, `~~`) in the regex crate, literals in RE2
                out.push('\\');
                out.push(c);
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}
