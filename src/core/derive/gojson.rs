//! The Go JSON round trip of the typed fields kcm decodes and re-encodes: a table of Go field
//! kinds (`omitempty`, pointers, `metav1.Duration`) per struct, and the function that sends a
//! JSON value through it as `json.Unmarshal` then `json.Marshal` would.

use serde_json::{Map, Value};

use crate::api::duration::{format_go, parse_go};

/// Field kinds of the Go structs kcm decodes and re-encodes.
pub(super) enum F {
    /// `bool` + omitempty: false is dropped.
    Bool,
    /// `*bool` / `*string` + omitempty: kept whenever present.
    OptBool,
    OptStr,
    /// `string` + omitempty: "" is dropped.
    Str,
    /// `string` without omitempty: always written ("" when absent).
    ReqStr,
    /// `int`/`int32` + omitempty: 0 is dropped.
    Int,
    /// `*metav1.Duration` + omitempty: normalised by `time.Duration.String()`.
    OptDur,
    /// `[]string` + omitempty.
    StrList,
    /// `[]string` without omitempty (null when absent).
    ReqStrList,
    /// `*map[string]string` + omitempty.
    OptStrMap,
    /// struct value (not a pointer): always written.
    Obj(&'static [(&'static str, F)]),
    /// `*struct` + omitempty.
    OptObj(&'static [(&'static str, F)]),
    /// `[]struct` + omitempty.
    List(&'static [(&'static str, F)]),
}

// corev1.ObjectReference
pub(super) const OBJECT_REFERENCE: &[(&str, F)] = &[
    ("kind", F::Str),
    ("namespace", F::Str),
    ("name", F::Str),
    ("uid", F::Str),
    ("apiVersion", F::Str),
    ("resourceVersion", F::Str),
    ("fieldPath", F::Str),
];
// addon-controller v1.12.0 TemplateResourceRef
pub(super) const TEMPLATE_RESOURCE_REF: &[(&str, F)] = &[
    ("resource", F::Obj(OBJECT_REFERENCE)),
    ("identifier", F::ReqStr),
    ("optional", F::Bool),
    ("ignoreStatusChanges", F::Bool),
    ("watchFields", F::StrList),
];
pub(super) const SECRET_REFERENCE: &[(&str, F)] = &[("name", F::Str), ("namespace", F::Str)];
pub(super) const REMOTE_URL: &[(&str, F)] = &[
    ("url", F::ReqStr),
    ("interval", F::OptDur),
    ("secretRef", F::OptObj(SECRET_REFERENCE)),
    ("template", F::Bool),
];
// addon-controller v1.12.0 PolicyRef
pub(super) const POLICY_REF: &[(&str, F)] = &[
    ("namespace", F::Str),
    ("name", F::Str),
    ("kind", F::Str),
    ("path", F::Str),
    ("deploymentType", F::Str),
    ("optional", F::Bool),
    ("tier", F::Int),
    ("skipNamespaceCreation", F::Bool),
    ("remoteURL", F::OptObj(REMOTE_URL)),
];
// libsveltos v1.12.0 PatchSelector / DriftExclusion
pub(super) const PATCH_SELECTOR: &[(&str, F)] = &[
    ("version", F::Str),
    ("group", F::Str),
    ("kind", F::Str),
    ("namespace", F::Str),
    ("name", F::Str),
    ("annotationSelector", F::Str),
    ("labelSelector", F::Str),
];
pub(super) const DRIFT_EXCLUSION: &[(&str, F)] = &[
    ("paths", F::ReqStrList),
    ("target", F::OptObj(PATCH_SELECTOR)),
];
// kcm ValuesFrom
pub(super) const VALUES_FROM: &[(&str, F)] = &[("kind", F::ReqStr), ("name", F::ReqStr)];
// addon-controller v1.12.0 Helm{Install,Upgrade,Uninstall}Options
pub(super) const HELM_INSTALL: &[(&str, F)] = &[
    ("createNamespace", F::OptBool),
    ("replace", F::OptBool),
    ("disableHooks", F::Bool),
    ("takeOwnership", F::Bool),
];
pub(super) const HELM_UPGRADE: &[(&str, F)] = &[
    ("force", F::Bool),
    ("resetValues", F::Bool),
    ("reuseValues", F::Bool),
    ("resetThenReuseValues", F::Bool),
    ("recreate", F::Bool),
    ("maxHistory", F::Int),
    ("cleanupOnFail", F::Bool),
    ("subNotes", F::Bool),
    ("upgradeCRDs", F::Bool),
    ("disableHooks", F::Bool),
    ("takeOwnership", F::Bool),
];
pub(super) const HELM_UNINSTALL: &[(&str, F)] = &[
    ("keepHistory", F::Bool),
    ("deletionPropagation", F::Str),
    ("disableHooks", F::Bool),
];
// kcm ServiceHelmOptions
pub(super) const HELM_OPTIONS: &[(&str, F)] = &[
    ("enableClientCache", F::OptBool),
    ("dependencyUpdate", F::OptBool),
    ("wait", F::OptBool),
    ("waitForJobs", F::OptBool),
    ("createNamespace", F::OptBool),
    ("skipCRDs", F::OptBool),
    ("atomic", F::OptBool),
    ("disableHooks", F::OptBool),
    ("disableOpenAPIValidation", F::OptBool),
    ("timeout", F::OptDur),
    ("skipSchemaValidation", F::OptBool),
    ("replace", F::OptBool),
    ("labels", F::OptStrMap),
    ("description", F::OptStr),
    ("uninstallOptions", F::OptObj(HELM_UNINSTALL)),
    ("upgradeOptions", F::OptObj(HELM_UPGRADE)),
    ("installOptions", F::OptObj(HELM_INSTALL)),
];

/// Decode `v` as the Go type `f` and re-encode it; `None` = the key is omitted. A JSON
/// null is treated as absent (the API server prunes nulls of non-nullable fields).
pub(super) fn go_roundtrip(v: Option<&Value>, f: &F, path: &str) -> Result<Option<Value>, String> {
    let v = v.filter(|v| !v.is_null());
    let bad = |t: &str| Err(format!("{path} must be {t}"));
    match f {
        F::Bool => match v {
            None | Some(Value::Bool(false)) => Ok(None),
            Some(Value::Bool(true)) => Ok(Some(Value::Bool(true))),
            _ => bad("a boolean"),
        },
        F::OptBool => match v {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(Value::Bool(*b))),
            _ => bad("a boolean"),
        },
        F::Str | F::OptStr | F::ReqStr => match v {
            None => Ok(matches!(f, F::ReqStr).then(|| Value::String(String::new()))),
            Some(Value::String(s)) if s.is_empty() && matches!(f, F::Str) => Ok(None),
            Some(Value::String(s)) => Ok(Some(Value::String(s.clone()))),
            _ => bad("a string"),
        },
        F::Int => match v {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_i64() {
                Some(0) => Ok(None),
                Some(i) => Ok(Some(Value::from(i))),
                None => bad("an integer"),
            },
            _ => bad("an integer"),
        },
        F::OptDur => match v {
            None => Ok(None),
            Some(Value::String(s)) => {
                let d = parse_go(s).map_err(|e| format!("{path}: {e}"))?;
                Ok(Some(Value::String(format_go(d))))
            }
            _ => bad("a duration string"),
        },
        F::StrList | F::ReqStrList => match v {
            None => Ok(matches!(f, F::ReqStrList).then_some(Value::Null)),
            Some(Value::Array(a)) => {
                if a.is_empty() && matches!(f, F::StrList) {
                    return Ok(None);
                }
                for x in a {
                    if !x.is_string() {
                        return bad("a list of strings");
                    }
                }
                Ok(Some(Value::Array(a.clone())))
            }
            _ => bad("a list of strings"),
        },
        F::OptStrMap => match v {
            None => Ok(None),
            Some(Value::Object(m)) => {
                for x in m.values() {
                    if !x.is_string() {
                        return bad("a map of strings");
                    }
                }
                Ok(Some(Value::Object(m.clone())))
            }
            _ => bad("a map of strings"),
        },
        F::Obj(fields) | F::OptObj(fields) => match v {
            None if matches!(f, F::OptObj(_)) => Ok(None),
            None => Ok(Some(Value::Object(Map::new()))),
            Some(Value::Object(m)) => {
                let mut out = Map::new();
                for (k, ff) in fields.iter() {
                    if let Some(x) = go_roundtrip(m.get(*k), ff, &format!("{path}.{k}"))? {
                        out.insert((*k).to_string(), x);
                    }
                }
                Ok(Some(Value::Object(out)))
            }
            _ => bad("an object"),
        },
        F::List(fields) => match v {
            None => Ok(None),
            Some(Value::Array(a)) if a.is_empty() => Ok(None),
            Some(Value::Array(a)) => {
                let mut out = Vec::with_capacity(a.len());
                for (i, x) in a.iter().enumerate() {
                    let item = go_roundtrip(Some(x), &F::Obj(fields), &format!("{path}[{i}]"))?;
                    out.push(item.unwrap_or(Value::Object(Map::new())));
                }
                Ok(Some(Value::Array(out)))
            }
            _ => bad("a list"),
        },
    }
}
