//! Structural-schema validation of Kubernetes custom resources.
//!
//! Validates a JSON value (a manifest) against the `openAPIV3Schema` of a
//! `CustomResourceDefinition` the way the Kubernetes API server (apiextensions
//! v1) does: pruning-relevant unknown fields (which the server drops silently,
//! and which we report), types, `required`, `enum`, `pattern`, lengths, ranges,
//! formats, `nullable`, value validations (`allOf`/`anyOf`/`oneOf`/`not`),
//! `x-kubernetes-*` extensions, list-type uniqueness and
//! `x-kubernetes-validations` (through a caller-provided [`RuleEvaluator`]).
//!
//! The object's top level is checked like the server does for a custom
//! resource: `apiVersion`, `kind` and a standard `metadata` (ObjectMeta).
//!
//! The code is pure: the CRD is passed in as an already-parsed
//! [`serde_json::Value`]. A [`Schema`] is compiled once (patterns are compiled
//! and de-duplicated at that point) and validation does not clone the value.
//! Violations come out in document order as long as the value's maps keep
//! their order (serde_json's `preserve_order` feature).

mod defaults;
mod formats;
mod meta;
mod node;
mod values;
mod walk;

#[cfg(test)]
mod tests;

use std::fmt;

use crate::api::crd::CustomResourceDefinition;
use serde_json::Value;

use node::Node;

/// One custom resource definition, reduced to what validation needs.
#[derive(Debug, Clone)]
pub struct Crd {
    /// `spec.group`, e.g. `k0rdent.mirantis.com`.
    pub group: String,
    /// `spec.names.kind`, e.g. `ServiceSet`.
    pub kind: String,
    /// `spec.names.plural`, e.g. `servicesets`.
    pub plural: String,
    /// `spec.scope == "Namespaced"`.
    pub scope_namespaced: bool,
    /// `spec.versions`, in CRD order.
    pub versions: Vec<CrdVersion>,
}

/// One version of a [`Crd`].
#[derive(Debug, Clone)]
pub struct CrdVersion {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    pub schema: Schema,
    /// `subresources.status` is set: on create/update of the main resource
    /// the API server ignores `status` (see [`Crd::validate_as_create`]).
    pub status_subresource: bool,
}

/// Compiled form of an `openAPIV3Schema` (recursive), built once and cheap to
/// validate with many times.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Node,
    warnings: Vec<String>,
}

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSeg {
    Key(String),
    Index(usize),
}

/// What a [`Violation`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ViolationKind {
    /// A field that the schema does not know (the API server prunes it silently).
    UnknownField,
    Required,
    Type,
    Enum,
    Pattern,
    MinLength,
    MaxLength,
    Minimum,
    Maximum,
    MinItems,
    MaxItems,
    MinProperties,
    MaxProperties,
    Format,
    OneOf,
    AnyOf,
    /// `allOf` is reported through the violations of its branches; this kind
    /// is used only when a branch fails without a more specific violation.
    AllOf,
    Not,
    UniqueItems,
    /// Duplicate in an `x-kubernetes-list-type: map` (by its map keys) or in an
    /// `x-kubernetes-list-type: set`.
    ListMapKeyDuplicate,
    MultipleOf,
    /// An `x-kubernetes-validations` rule evaluated to false.
    Rule,
    /// `apiVersion`/`kind` invalid, or not matching the CRD (group, served
    /// version, kind).
    TypeMeta,
}

/// One validation failure.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// Where in the document; empty for the document itself.
    pub path: Vec<PathSeg>,
    pub kind: ViolationKind,
    /// Like the API server's field error, e.g.
    /// `spec.services[0].helmAction: Unsupported value: "Remove": supported values: "Install", "Uninstall"`.
    pub message: String,
}

impl Violation {
    /// The path rendered like a Kubernetes field path (`spec.services[0].name`).
    pub fn path_string(&self) -> String {
        format_path(&self.path)
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Renders a path like a Kubernetes field path: keys joined with `.`, indexes
/// as `[i]`; keys that are not plain identifiers (e.g. label keys with `/`) are
/// still joined with `.` the way kube-openapi names them. The empty path is
/// rendered as `<root>`.
pub fn format_path(path: &[PathSeg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            PathSeg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            PathSeg::Index(i) => {
                use fmt::Write;
                let _ = write!(s, "[{i}]");
            }
        }
    }
    if s.is_empty() {
        s.push_str("<root>");
    }
    s
}

/// Evaluates `x-kubernetes-validations` rules (CEL).
pub trait RuleEvaluator {
    /// Evaluates an x-kubernetes-validations rule with `self` bound to the
    /// value; `None` = could not evaluate (the rule is skipped).
    fn eval(&self, rule: &str, value: &Value) -> Option<bool>;
}

/// A [`RuleEvaluator`] that evaluates nothing (every rule is skipped).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoRules;

impl RuleEvaluator for NoRules {
    fn eval(&self, _rule: &str, _value: &Value) -> Option<bool> {
        None
    }
}

impl Schema {
    /// Compiles an `openAPIV3Schema` node.
    pub fn compile(open_api_v3_schema: &Value) -> Result<Schema, String> {
        Self::compile_in(&mut node::CompileCx::default(), open_api_v3_schema)
    }

    /// Compiles with a shared pattern cache (one per CRD).
    fn compile_in(cx: &mut node::CompileCx, open_api_v3_schema: &Value) -> Result<Schema, String> {
        cx.warnings.clear();
        let root = cx.compile(open_api_v3_schema, "openAPIV3Schema")?;
        Ok(Schema {
            root,
            warnings: std::mem::take(&mut cx.warnings),
        })
    }

    /// A schema that accepts any object (used for CRD versions without a
    /// schema): `x-kubernetes-preserve-unknown-fields: true`.
    pub fn preserve_unknown() -> Schema {
        Schema {
            root: Node::preserve_any(),
            warnings: Vec::new(),
        }
    }

    /// Things in the schema that could not be honoured (e.g. a `pattern` that
    /// the `regex` crate does not compile); they are skipped at validation.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Validates a whole custom resource (a manifest): the schema, plus the
    /// top level as the API server checks it (`apiVersion`, `kind` and
    /// `metadata` as a standard ObjectMeta, name or generateName required).
    /// Does not check that `apiVersion`/`kind` belong to this CRD; see
    /// [`Crd::validate`].
    pub fn validate(&self, value: &Value, rules: &dyn RuleEvaluator) -> Vec<Violation> {
        walk::Walker::run(&self.root, value, rules, true, false)
    }

    /// Validates a value that is not a resource root (no TypeMeta/ObjectMeta
    /// treatment at the top, unless the schema marks it as an embedded
    /// resource).
    /// The property names the schema defines for the object at `path` (empty if the path
    /// leads nowhere known), for "did you mean" hints.
    pub fn known_fields(&self, path: &[PathSeg]) -> Vec<&str> {
        let mut node = &self.root;
        for seg in path {
            let next = match seg {
                PathSeg::Key(k) => node
                    .properties
                    .iter()
                    .find(|(name, _)| name == k)
                    .map(|(_, n)| n)
                    .or(match &node.additional {
                        node::Additional::Schema(n) => Some(&**n),
                        _ => None,
                    }),
                PathSeg::Index(_) => node.items.as_deref(),
            };
            match next {
                Some(n) => node = n,
                None => return Vec::new(),
            }
        }
        node.properties
            .iter()
            .map(|(name, _)| name.as_str())
            .collect()
    }

    pub fn validate_value(&self, value: &Value, rules: &dyn RuleEvaluator) -> Vec<Violation> {
        walk::Walker::run(&self.root, value, rules, false, false)
    }
}

impl Crd {
    /// Parses a `CustomResourceDefinition` (apiextensions.k8s.io/v1, or the
    /// legacy v1beta1 top-level `spec.validation`).
    pub fn from_json(crd: &Value) -> Result<Crd, String> {
        let crd = CustomResourceDefinition(crd);
        let kind = crd.meta().kind();
        if kind != "CustomResourceDefinition" {
            return Err(format!("not a CustomResourceDefinition (kind {kind:?})"));
        }
        if crd.spec().is_none() {
            return Err("CustomResourceDefinition has no spec".into());
        }
        let group = crd.group().ok_or("spec.group missing")?;
        let names_kind = crd.defined_kind().ok_or("spec.names.kind missing")?;
        let plural = crd.plural();
        let scope = crd.scope();
        let legacy = crd.legacy_schema();
        let mut versions = Vec::new();
        let mut cx = node::CompileCx::default();
        for (i, v) in crd.versions().enumerate() {
            let name = v
                .name()
                .ok_or_else(|| format!("spec.versions[{i}].name missing"))?;
            let served = v.served().unwrap_or(false);
            let storage = v.storage().unwrap_or(false);
            let schema = match v.schema().or(legacy) {
                Some(s) => Schema::compile_in(&mut cx, s)
                    .map_err(|e| format!("spec.versions[{i}] ({name}): {e}"))?,
                None => Schema::preserve_unknown(),
            };
            let status_subresource = crd.status_subresource(v);
            versions.push(CrdVersion {
                name: name.to_string(),
                served,
                storage,
                schema,
                status_subresource,
            });
        }
        if versions.is_empty() {
            // legacy single-version form
            if let Some(version) = crd.legacy_version() {
                let schema = match legacy {
                    Some(s) => Schema::compile_in(&mut cx, s)?,
                    None => Schema::preserve_unknown(),
                };
                versions.push(CrdVersion {
                    name: version.to_string(),
                    served: true,
                    storage: true,
                    schema,
                    status_subresource: crd.legacy_status_subresource(),
                });
            } else {
                return Err("spec.versions is empty".into());
            }
        }
        Ok(Crd {
            group: group.to_string(),
            kind: names_kind.to_string(),
            plural: plural.to_string(),
            scope_namespaced: scope == "Namespaced",
            versions,
        })
    }

    /// The version named `name` (e.g. `v1beta1`), served or not.
    pub fn version(&self, name: &str) -> Option<&CrdVersion> {
        self.versions.iter().find(|v| v.name == name)
    }

    /// The storage version.
    pub fn storage_version(&self) -> Option<&CrdVersion> {
        self.versions.iter().find(|v| v.storage)
    }

    /// `true` when `api_version`/`kind` name this CRD (any version).
    pub fn matches(&self, api_version: &str, kind: &str) -> bool {
        kind == self.kind
            && api_version
                .split_once('/')
                .is_some_and(|(g, _)| g == self.group)
    }

    /// Validates a custom resource of this CRD: checks that `apiVersion` names
    /// this CRD's group and a served version and that `kind` is this CRD's
    /// kind, then validates with that version's [`Schema::validate`].
    pub fn validate(&self, value: &Value, rules: &dyn RuleEvaluator) -> Vec<Violation> {
        self.validate_impl(value, rules, false)
    }

    /// Like [`Crd::validate`], but as the API server treats a create or
    /// update of the main resource: when the version has the status
    /// subresource, the top-level `status` is dropped by the server (its
    /// `PrepareForCreate`/`PrepareForUpdate`) and so is not validated.
    pub fn validate_as_create(&self, value: &Value, rules: &dyn RuleEvaluator) -> Vec<Violation> {
        self.validate_impl(value, rules, true)
    }

    fn validate_impl(
        &self,
        value: &Value,
        rules: &dyn RuleEvaluator,
        skip_status: bool,
    ) -> Vec<Violation> {
        let api_version = value.get("apiVersion").and_then(Value::as_str);
        let kind = value.get("kind").and_then(Value::as_str);
        let mut out = Vec::new();
        let mut schema = None;
        if let Some(av) = api_version {
            match av.split_once('/') {
                Some((g, v)) if g == self.group => match self.version(v) {
                    Some(ver) if ver.served => schema = Some(ver),
                    Some(_) => out.push(type_meta_violation(
                        "apiVersion",
                        av,
                        &format!("version {v:?} of {} is not served", self.group),
                    )),
                    None => {
                        let known: Vec<_> = self
                            .versions
                            .iter()
                            .filter(|v| v.served)
                            .map(|v| format!("\"{}/{}\"", self.group, v.name))
                            .collect();
                        out.push(type_meta_violation(
                            "apiVersion",
                            av,
                            &format!(
                                "no version {v:?} in CRD {}.{}: supported values: {}",
                                self.plural,
                                self.group,
                                known.join(", ")
                            ),
                        ));
                    }
                },
                _ => out.push(type_meta_violation(
                    "apiVersion",
                    av,
                    &format!("group must be {:?}", self.group),
                )),
            }
        }
        if let Some(k) = kind
            && k != self.kind
        {
            out.push(type_meta_violation(
                "kind",
                k,
                &format!("kind must be {:?}", self.kind),
            ));
        }
        let version = match schema {
            Some(v) => v,
            // apiVersion missing or unusable: still validate with the storage
            // version so that the rest of the document gets checked.
            None => match self.storage_version().or(self.versions.first()) {
                Some(v) => v,
                None => return out,
            },
        };
        let skip_status = skip_status && version.status_subresource;
        out.extend(walk::Walker::run(
            &version.schema.root,
            value,
            rules,
            true,
            skip_status,
        ));
        out
    }
}

fn type_meta_violation(field: &str, value: &str, detail: &str) -> Violation {
    Violation {
        path: vec![PathSeg::Key(field.to_string())],
        kind: ViolationKind::TypeMeta,
        message: format!("{field}: Invalid value: {}: {detail}", walk::quote(value)),
    }
}
