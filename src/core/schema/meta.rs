//! TypeMeta and ObjectMeta checks of a resource root or an
//! `x-kubernetes-embedded-resource` (apiextensions-apiserver
//! `pkg/apiserver/schema/objectmeta/validation.go` and `coerce.go`: metadata is
//! decoded strictly into a `metav1.ObjectMeta`, unknown fields are reported,
//! then the usual ObjectMeta validation runs).

use serde_json::Value;

use super::formats::is_date_time;
use super::walk::{Seg, Walker, json_type, quote, render_value};
use super::{PathSeg, ViolationKind};
use crate::api::names::{
    is_dns1035_label, is_dns1123_label, label_value_errors, qualified_name_errors,
};

const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// `path.IsValidPathSegmentName` (names of custom resources).
fn path_segment_errors(name: &str, prefix: bool) -> Vec<String> {
    let mut errs = Vec::new();
    if !prefix && (name == "." || name == "..") {
        errs.push(format!("may not be '{name}'"));
    }
    for bad in ["/", "%"] {
        if name.contains(bad) {
            errs.push(format!("may not contain '{bad}'"));
        }
    }
    errs
}

impl<'a> Walker<'a> {
    fn invalid(&mut self, kind: ViolationKind, v: &Value, detail: String) {
        self.emit(kind, |_| {
            format!("Invalid value: {}: {detail}", render_value(v))
        });
    }

    fn meta_type_error(&mut self, expected: &str, v: &Value) {
        let actual = json_type(v);
        self.emit(ViolationKind::Type, |_| {
            format!("Invalid value: \"{actual}\": must be of type {expected}")
        });
    }

    pub(super) fn check_api_version(&mut self, v: &Value) {
        match v {
            Value::String(s) if s.is_empty() => {
                self.invalid(ViolationKind::TypeMeta, v, "must not be empty".into())
            }
            Value::String(s) if s.matches('/').count() > 1 => self.invalid(
                ViolationKind::TypeMeta,
                v,
                format!("unexpected GroupVersion string: {s}"),
            ),
            Value::String(_) => {}
            _ => self.invalid(ViolationKind::Type, v, "must be a string".into()),
        }
    }

    pub(super) fn check_kind(&mut self, v: &Value) {
        match v {
            Value::String(s) if s.is_empty() => {
                self.invalid(ViolationKind::TypeMeta, v, "must not be empty".into())
            }
            Value::String(s) if !is_dns1035_label(&s.to_ascii_lowercase()) => self.invalid(
                ViolationKind::TypeMeta,
                v,
                "may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".into(),
            ),
            Value::String(_) => {}
            _ => self.invalid(ViolationKind::Type, v, "must be a string".into()),
        }
    }

    /// `metadata.name: Required value: name or generateName is required`
    pub(super) fn missing_name(&mut self) {
        self.emit_at(
            &[PathSeg::Key("metadata".into()), PathSeg::Key("name".into())],
            ViolationKind::Required,
            |_| "Required value: name or generateName is required".to_string(),
        );
    }

    /// Checks `metadata` (the current path) as a `metav1.ObjectMeta`.
    pub(super) fn check_object_meta(&mut self, v: &'a Value, root: bool) {
        let m = match v {
            Value::Object(m) => m,
            Value::Null => {
                if root {
                    self.pop();
                    self.missing_name();
                    self.push(Seg::Key("metadata"));
                }
                return;
            }
            _ => {
                self.meta_type_error("object", v);
                return;
            }
        };
        let non_empty = |k: &str| {
            m.get(k)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        };
        if root && !non_empty("name") && !non_empty("generateName") {
            self.pop();
            self.missing_name();
            self.push(Seg::Key("metadata"));
        }
        for (k, fv) in m {
            self.push(Seg::Key(k));
            match k.as_str() {
                "name" | "generateName" => {
                    if let Some(s) = self.meta_string(fv) {
                        let errs = path_segment_errors(s, k == "generateName");
                        if !errs.is_empty() {
                            self.invalid(ViolationKind::Pattern, fv, errs.join(", "));
                        }
                    }
                }
                "namespace" => {
                    if let Some(s) = self.meta_string(fv)
                        && !s.is_empty()
                        && !is_dns1123_label(s)
                    {
                        self.invalid(
                            ViolationKind::Pattern,
                            fv,
                            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".into(),
                        );
                    }
                }
                "uid" | "resourceVersion" | "selfLink" => {
                    self.meta_string(fv);
                }
                "labels" => self.string_map(fv, true),
                "annotations" => self.string_map(fv, false),
                "generation" | "deletionGracePeriodSeconds" => match fv {
                    Value::Null => {}
                    Value::Number(n) if !n.is_f64() => {}
                    _ => self.meta_type_error("integer", fv),
                },
                "creationTimestamp" | "deletionTimestamp" => match fv {
                    Value::Null => {}
                    Value::String(s) if is_date_time(s) => {}
                    Value::String(_) => self.invalid(
                        ViolationKind::Format,
                        fv,
                        "must be an RFC 3339 date-time".into(),
                    ),
                    _ => self.meta_type_error("string", fv),
                },
                "finalizers" => self.finalizers(fv),
                "ownerReferences" => self.owner_references(fv),
                "managedFields" => match fv {
                    Value::Null | Value::Array(_) => {}
                    _ => self.meta_type_error("array", fv),
                },
                _ => self.emit(ViolationKind::UnknownField, |_| {
                    format!("unknown field {}", quote(k))
                }),
            }
            self.pop();
        }
    }

    fn meta_string(&mut self, v: &'a Value) -> Option<&'a str> {
        match v {
            Value::String(s) => Some(s),
            Value::Null => None,
            _ => {
                self.meta_type_error("string", v);
                None
            }
        }
    }

    fn string_map(&mut self, v: &'a Value, labels: bool) {
        let m = match v {
            Value::Null => return,
            Value::Object(m) => m,
            _ => return self.meta_type_error("object", v),
        };
        let mut total = 0usize;
        for (k, val) in m {
            self.push(Seg::Key(k));
            let key_to_check = if labels {
                k.clone()
            } else {
                k.to_ascii_lowercase()
            };
            let errs = qualified_name_errors(&key_to_check);
            if !errs.is_empty() {
                let kv = Value::String(k.clone());
                self.invalid(ViolationKind::Pattern, &kv, errs.join(", "));
            }
            match val {
                Value::String(s) => {
                    total += k.len() + s.len();
                    if labels {
                        let errs = label_value_errors(s);
                        if !errs.is_empty() {
                            let kind = if s.len() > 63 {
                                ViolationKind::MaxLength
                            } else {
                                ViolationKind::Pattern
                            };
                            self.invalid(kind, val, errs.join(", "));
                        }
                    }
                }
                Value::Null => {}
                _ => self.meta_type_error("string", val),
            }
            self.pop();
        }
        if !labels && total > TOTAL_ANNOTATION_SIZE_LIMIT {
            self.emit(ViolationKind::MaxLength, |_| {
                format!("Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes")
            });
        }
    }

    fn finalizers(&mut self, v: &'a Value) {
        let a = match v {
            Value::Null => return,
            Value::Array(a) => a,
            _ => return self.meta_type_error("array", v),
        };
        for (i, f) in a.iter().enumerate() {
            self.push(Seg::Index(i));
            if let Some(s) = self.meta_string(f) {
                let errs = qualified_name_errors(s);
                if !errs.is_empty() {
                    self.invalid(ViolationKind::Pattern, f, errs.join(", "));
                }
            }
            self.pop();
        }
    }

    fn owner_references(&mut self, v: &'a Value) {
        let a = match v {
            Value::Null => return,
            Value::Array(a) => a,
            _ => return self.meta_type_error("array", v),
        };
        for (i, r) in a.iter().enumerate() {
            self.push(Seg::Index(i));
            match r {
                Value::Object(m) => {
                    for f in ["apiVersion", "kind", "name", "uid"] {
                        let present = m
                            .get(f)
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty());
                        if !present {
                            self.emit_at(
                                &[PathSeg::Key(f.to_string())],
                                ViolationKind::Required,
                                |_| "Required value".to_string(),
                            );
                        }
                    }
                    for (k, fv) in m {
                        self.push(Seg::Key(k));
                        match k.as_str() {
                            "apiVersion" | "kind" | "name" | "uid" => {
                                self.meta_string(fv);
                            }
                            "controller" | "blockOwnerDeletion" => {
                                if !matches!(fv, Value::Null | Value::Bool(_)) {
                                    self.meta_type_error("boolean", fv);
                                }
                            }
                            _ => self.emit(ViolationKind::UnknownField, |_| {
                                format!("unknown field {}", quote(k))
                            }),
                        }
                        self.pop();
                    }
                }
                Value::Null => {}
                _ => self.meta_type_error("object", r),
            }
            self.pop();
        }
    }
}
