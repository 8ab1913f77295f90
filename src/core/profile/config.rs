//! `spec.provider.config` as kcm's adapter reads it (`buildProfileSpec`): decoded with Go's
//! JSON rules into its `profileConfig` struct (keys case-sensitive, unknown keys ignored, a
//! wrongly typed value an error with Go's own message), then turned into the Profile spec
//! fields. Decoding also normalises like Go's round trip does: unknown nested fields are
//! dropped and `omitempty` zero values left out.

use serde_json::{Map, Value};

use crate::core::schema::PathSeg;

use crate::api::sveltos::{
    DEFAULT_PRIORITY, DEFAULT_TIER, DRIFT_IGNORE_PATCH, MAX_PRIORITY, MIN_PRIORITY,
    priority_to_tier,
};

/// A Go type, as far as decoding needs it.
#[derive(Debug, Clone, Copy)]
enum Go {
    Str,
    Bool,
    I32,
    Uint,
    /// `metav1.Duration` (a Go duration string).
    Duration,
    List(&'static Go, &'static str),
    /// (type name for messages, fields); a pointer to a struct decodes the same.
    Struct(&'static str, &'static [Field]),
}

#[derive(Debug, Clone, Copy)]
struct Field {
    json: &'static str,
    ty: Go,
    /// `omitempty`: a zero value is left out.
    omitempty: bool,
    /// A pointer: set (even to a zero value) when the JSON has a non-null value.
    pointer: bool,
}

const fn f(json: &'static str, ty: Go) -> Field {
    Field {
        json,
        ty,
        omitempty: true,
        pointer: false,
    }
}

const fn req(json: &'static str, ty: Go) -> Field {
    Field {
        json,
        ty,
        omitempty: false,
        pointer: false,
    }
}

const fn ptr(json: &'static str, ty: Go) -> Field {
    Field {
        json,
        ty,
        omitempty: true,
        pointer: true,
    }
}

const STRINGS: Go = Go::List(&Go::Str, "[]string");

const PATCH_SELECTOR: Go = Go::Struct(
    "PatchSelector",
    &[
        f("group", Go::Str),
        f("version", Go::Str),
        f("kind", Go::Str),
        f("namespace", Go::Str),
        f("name", Go::Str),
        f("annotationSelector", Go::Str),
        f("labelSelector", Go::Str),
    ],
);
const OBJECT_REFERENCE: Go = Go::Struct(
    "ObjectReference",
    &[
        f("kind", Go::Str),
        f("namespace", Go::Str),
        f("name", Go::Str),
        f("uid", Go::Str),
        f("apiVersion", Go::Str),
        f("resourceVersion", Go::Str),
        f("fieldPath", Go::Str),
    ],
);
const SECRET_REFERENCE: Go = Go::Struct(
    "SecretReference",
    &[f("name", Go::Str), f("namespace", Go::Str)],
);
const TEMPLATE_RESOURCE_REF: Go = Go::Struct(
    "TemplateResourceRef",
    &[
        req("resource", OBJECT_REFERENCE),
        req("identifier", Go::Str),
        f("optional", Go::Bool),
        f("ignoreStatusChanges", Go::Bool),
        f("watchFields", STRINGS),
    ],
);
const REMOTE_URL: Go = Go::Struct(
    "RemoteURL",
    &[
        req("url", Go::Str),
        f("interval", Go::Duration),
        ptr("secretRef", SECRET_REFERENCE),
        f("template", Go::Bool),
    ],
);
const POLICY_REF: Go = Go::Struct(
    "PolicyRef",
    &[
        f("namespace", Go::Str),
        f("name", Go::Str),
        f("kind", Go::Str),
        f("path", Go::Str),
        f("deploymentType", Go::Str),
        f("optional", Go::Bool),
        f("tier", Go::I32),
        f("skipNamespaceCreation", Go::Bool),
        ptr("remoteURL", REMOTE_URL),
    ],
);
const PATCH: Go = Go::Struct(
    "Patch",
    &[req("patch", Go::Str), ptr("target", PATCH_SELECTOR)],
);
const DRIFT_EXCLUSION: Go = Go::Struct(
    "DriftExclusion",
    &[req("paths", STRINGS), ptr("target", PATCH_SELECTOR)],
);

/// kcm's `profileConfig`.
const PROFILE_CONFIG: Go = Go::Struct(
    "profileConfig",
    &[
        ptr("priority", Go::I32),
        ptr("maxConsecutiveFailures", Go::Uint),
        f(
            "driftIgnore",
            Go::List(&PATCH_SELECTOR, "[]v1beta1.PatchSelector"),
        ),
        f("stopMatchingBehavior", Go::Str),
        f("syncMode", Go::Str),
        f(
            "templateResourceRefs",
            Go::List(&TEMPLATE_RESOURCE_REF, "[]v1beta1.TemplateResourceRef"),
        ),
        f("policyRefs", Go::List(&POLICY_REF, "[]v1beta1.PolicyRef")),
        f(
            "driftExclusions",
            Go::List(&DRIFT_EXCLUSION, "[]v1beta1.DriftExclusion"),
        ),
        f("patches", Go::List(&PATCH, "[]v1beta1.Patch")),
        f("continueOnError", Go::Bool),
        f("reloader", Go::Bool),
        f("stopOnConflict", Go::Bool),
    ],
);

fn type_name(ty: &Go) -> String {
    match ty {
        Go::Str => "string".into(),
        Go::Bool => "bool".into(),
        Go::I32 => "int32".into(),
        Go::Uint => "uint".into(),
        Go::Duration => "v1.Duration".into(),
        Go::List(_, name) => (*name).into(),
        Go::Struct(name, _) => format!("v1beta1.{name}"),
    }
}

/// Go's name of a JSON value in an UnmarshalTypeError.
fn value_word(v: &Value) -> String {
    match v {
        Value::Bool(_) => "bool".into(),
        Value::Number(n) => format!("number {n}"),
        Value::String(_) => "string".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
        Value::Null => "null".into(),
    }
}

struct Decoder {
    /// The first error, as Go reports it (decoding goes on, as Go's does).
    error: Option<String>,
    /// JSON field names from the top (Go's error context has no indexes).
    stack: Vec<&'static str>,
    /// The path of the value being decoded, indexes included.
    path: Vec<PathSeg>,
    /// Every problem met, where (Go stops at nothing either, but reports only the first).
    issues: Vec<Issue>,
}

/// A problem of one value of the provider config, at its path in the config.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    pub path: Vec<PathSeg>,
    pub kind: IssueKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum IssueKind {
    /// A key the Go struct does not have: dropped when decoding. `known` are the keys it has.
    UnknownKey { known: Vec<&'static str> },
    /// A value Go cannot decode into the field's type (Go's message): kcm fails.
    Invalid(String),
}

impl Decoder {
    fn new() -> Decoder {
        Decoder {
            error: None,
            stack: Vec::new(),
            path: Vec::new(),
            issues: Vec::new(),
        }
    }

    fn fail(&mut self, message: String) {
        self.issues.push(Issue {
            path: self.path.clone(),
            kind: IssueKind::Invalid(message.clone()),
        });
        if self.error.is_none() {
            self.error = Some(message);
        }
    }

    fn type_error(&mut self, value: &Value, strct: &str, ty: &Go) {
        // A number that is not a string into a string field: Go says just "number".
        let word = match (value, ty) {
            (Value::Number(_), Go::Str | Go::Bool | Go::List(..) | Go::Struct(..)) => {
                "number".to_string()
            }
            _ => value_word(value),
        };
        self.fail(format!(
            "json: cannot unmarshal {word} into Go struct field {strct}.{} of type {}",
            self.stack.join("."),
            type_name(ty)
        ));
    }

    /// Decodes `value` as `ty` inside struct `strct`; the normalised value, None for a zero
    /// or undecodable one.
    fn decode(&mut self, value: &Value, ty: &Go, strct: &'static str) -> Option<Value> {
        if value.is_null() {
            return None;
        }
        match ty {
            Go::Str => match value {
                Value::String(s) => Some(Value::String(s.clone())),
                _ => {
                    self.type_error(value, strct, ty);
                    None
                }
            },
            Go::Bool => match value {
                Value::Bool(b) => Some(Value::Bool(*b)),
                _ => {
                    self.type_error(value, strct, ty);
                    None
                }
            },
            Go::I32 => match value.as_i64() {
                Some(n) if i32::try_from(n).is_ok() => Some(n.into()),
                _ => {
                    self.type_error(value, strct, ty);
                    None
                }
            },
            Go::Uint => match value.as_u64() {
                Some(n) => Some(n.into()),
                _ => {
                    self.type_error(value, strct, ty);
                    None
                }
            },
            Go::Duration => match value {
                Value::String(s) => match crate::api::duration::parse_go(s) {
                    Ok(ns) => Some(crate::api::duration::format_go(ns).into()),
                    Err(e) => {
                        self.fail(e);
                        None
                    }
                },
                _ => {
                    self.fail(format!(
                        "json: cannot unmarshal {} into Go value of type string",
                        value_word(value).split(' ').next().unwrap_or("")
                    ));
                    None
                }
            },
            Go::List(elem, _) => match value {
                Value::Array(items) => Some(Value::Array(
                    items
                        .iter()
                        .enumerate()
                        .map(|(n, i)| {
                            self.path.push(PathSeg::Index(n));
                            let d = self.decode(i, elem, strct).unwrap_or_else(|| zero_of(elem));
                            self.path.pop();
                            d
                        })
                        .collect(),
                )),
                _ => {
                    self.type_error(value, strct, ty);
                    None
                }
            },
            Go::Struct(name, fields) => match value {
                Value::Object(map) => {
                    let mut out = Map::new();
                    for k in map.keys() {
                        if !fields.iter().any(|f| f.json == k) {
                            let mut path = self.path.clone();
                            path.push(PathSeg::Key(k.clone()));
                            self.issues.push(Issue {
                                path,
                                kind: IssueKind::UnknownKey {
                                    known: fields.iter().map(|f| f.json).collect(),
                                },
                            });
                        }
                    }
                    for field in *fields {
                        let Some(v) = map.get(field.json) else {
                            if !field.omitempty {
                                out.insert(field.json.into(), zero_of(&field.ty));
                            }
                            continue;
                        };
                        self.stack.push(field.json);
                        self.path.push(PathSeg::Key(field.json.into()));
                        let decoded = self.decode(v, &field.ty, name);
                        self.path.pop();
                        self.stack.pop();
                        match decoded {
                            Some(d) if field.pointer || !(field.omitempty && is_zero(&d)) => {
                                out.insert(field.json.into(), d);
                            }
                            _ if !field.omitempty => {
                                out.insert(field.json.into(), zero_of(&field.ty));
                            }
                            _ => {}
                        }
                    }
                    Some(Value::Object(out))
                }
                _ => {
                    self.type_error(value, strct, ty);
                    None
                }
            },
        }
    }
}

fn zero_of(ty: &Go) -> Value {
    match ty {
        Go::Str | Go::Duration => Value::String(String::new()),
        Go::Bool => Value::Bool(false),
        Go::I32 | Go::Uint => 0.into(),
        Go::List(..) => Value::Null,
        Go::Struct(..) => Value::Object(Map::new()),
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(_) => false,
    }
}

/// What the provider config gives the Profile spec.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileConfig {
    /// The config was nil: the spec is left zero (tier 100, continueOnConflict false).
    pub nil: bool,
    /// The priority the tier comes from (None when nil).
    pub priority: Option<i64>,
    /// The spec fields, in kcm's field order (`tier`, `stopMatchingBehavior`, ...), zero
    /// values left out.
    pub spec: Map<String, Value>,
    /// Keys of the config kcm ignores.
    pub ignored_keys: Vec<String>,
}

impl ProfileConfig {
    pub fn tier(&self) -> i64 {
        self.spec
            .get("tier")
            .and_then(Value::as_i64)
            .unwrap_or(DEFAULT_TIER)
    }

    pub fn continue_on_conflict(&self) -> bool {
        self.spec.get("continueOnConflict").and_then(Value::as_bool) == Some(true)
    }
}

/// Why a provider config cannot be turned into a Profile spec: kcm's error text after
/// "Failed to build Profile from ServiceSet <name> configuration: ".
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub message: String,
    /// The config key at fault.
    pub key: &'static str,
}

/// Decodes `spec.provider.config` as kcm's `buildProfileSpec` does.
pub fn parse(config: Option<&Value>) -> Result<ProfileConfig, ConfigError> {
    let Some(config) = config.filter(|c| !c.is_null()) else {
        return Ok(ProfileConfig {
            nil: true,
            priority: None,
            spec: Map::new(),
            ignored_keys: Vec::new(),
        });
    };
    let mut dec = Decoder::new();
    let decoded = match config {
        Value::Object(_) => dec.decode(config, &PROFILE_CONFIG, "profileConfig"),
        other => {
            dec.error = Some(format!(
                "json: cannot unmarshal {} into Go value of type sveltos.profileConfig",
                value_word(other).split(' ').next().unwrap_or("")
            ));
            None
        }
    };
    let wrap = |m: String| format!("failed to unmarshal raw config to profile configuration: {m}");
    if let Some(e) = dec.error {
        let key = first_bad_key(config, &e);
        return Err(ConfigError {
            message: wrap(e),
            key,
        });
    }
    let params = decoded.unwrap_or_default();
    let Value::Object(params) = params else {
        unreachable!("a struct decodes to an object")
    };
    let ignored_keys: Vec<String> = config
        .as_object()
        .map(|m| m.keys().filter(|k| !known_key(k)).cloned().collect())
        .unwrap_or_default();
    let priority = params
        .get("priority")
        .and_then(Value::as_i64)
        .unwrap_or(DEFAULT_PRIORITY);
    let Some(tier) = priority_to_tier(priority) else {
        return Err(ConfigError {
            message: format!(
                "failed to convert priority to tier: invalid value {priority}, priority has to be between {MIN_PRIORITY} and {MAX_PRIORITY}"
            ),
            key: "priority",
        });
    };
    let get_bool = |k: &str| params.get(k).and_then(Value::as_bool).unwrap_or(false);
    let get_str = |k: &str| params.get(k).and_then(Value::as_str).unwrap_or("");
    let mut spec = Map::new();
    spec.insert("tier".into(), tier.into());
    let stop_matching = if get_str("stopMatchingBehavior") == "LeavePolicies" {
        "LeavePolicies"
    } else {
        "WithdrawPolicies"
    };
    spec.insert("stopMatchingBehavior".into(), stop_matching.into());
    if !get_str("syncMode").is_empty() {
        spec.insert("syncMode".into(), get_str("syncMode").into());
    }
    if !get_bool("stopOnConflict") {
        spec.insert("continueOnConflict".into(), true.into());
    }
    if get_bool("continueOnError") {
        spec.insert("continueOnError".into(), true.into());
    }
    if get_bool("reloader") {
        spec.insert("reloader".into(), true.into());
    }
    for key in [
        "templateResourceRefs",
        "policyRefs",
        "patches",
        "driftExclusions",
        "maxConsecutiveFailures",
    ] {
        if let Some(v) = params.get(key) {
            spec.insert(key.into(), v.clone());
        }
    }
    if let Some(Value::Array(selectors)) = params.get("driftIgnore") {
        let patches = spec
            .entry("patches")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(p) = patches {
            for target in selectors {
                p.push(serde_json::json!({"target": target, "patch": DRIFT_IGNORE_PATCH}));
            }
        }
    }
    Ok(ProfileConfig {
        nil: false,
        priority: Some(priority),
        spec,
        ignored_keys,
    })
}

/// Every problem of a provider config as kcm's adapter decodes it: keys it drops (at any
/// depth) and values it cannot decode, each at its path in the config. A config that is not
/// an object is one problem at the top.
pub fn issues(config: &Value) -> Vec<Issue> {
    let mut dec = Decoder::new();
    match config {
        Value::Null => {}
        Value::Object(_) => {
            dec.decode(config, &PROFILE_CONFIG, "profileConfig");
        }
        other => dec.fail(format!(
            "json: cannot unmarshal {} into Go value of type sveltos.profileConfig",
            value_word(other).split(' ').next().unwrap_or("")
        )),
    }
    dec.issues
}

/// What the API server refuses in the Profile kcm would write from this config (validated
/// against the real Profile CRD), each at the path of the config value it comes from: kcm
/// decodes the config, then the Profile write fails (`ServiceSetProfileNotReady`).
pub fn rejected(config: &Value, parsed: &ProfileConfig) -> Vec<(Vec<PathSeg>, String)> {
    let mut spec = parsed.spec.clone();
    spec.insert("clusterSelector".into(), serde_json::json!({}));
    let mut profile = serde_json::json!({
        "apiVersion": crate::api::kinds::PROFILE.api_version,
        "kind": crate::api::kinds::PROFILE.kind,
        "metadata": {"name": "config", "namespace": "config"},
        "spec": Value::Object(spec),
    });
    crate::core::crds::default_and_prune(&mut profile);
    let Some(violations) = crate::core::crds::validate(&profile) else {
        return Vec::new();
    };
    // Patches are the config's, then one per driftIgnore selector.
    let own_patches = config
        .get("patches")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    violations
        .into_iter()
        .filter_map(|v| {
            let [PathSeg::Key(spec), PathSeg::Key(field), rest @ ..] = v.path.as_slice() else {
                return None;
            };
            if spec != "spec" {
                return None;
            }
            let mut path = match (field.as_str(), rest.first()) {
                ("patches", Some(PathSeg::Index(i))) if *i >= own_patches => vec![
                    PathSeg::Key("driftIgnore".into()),
                    PathSeg::Index(i - own_patches),
                ],
                ("tier", _) => vec![PathSeg::Key("priority".into())],
                (f, _) if known_key(f) => vec![PathSeg::Key(f.into())],
                _ => return None,
            };
            if path.len() == 1 || field != "patches" {
                path.extend(rest.iter().cloned());
            }
            // A path into what the config does not have (a default) points at its parent.
            while path.len() > 1 && !has_path(config, &path) {
                path.pop();
            }
            Some((path, v.message))
        })
        .collect()
}

fn has_path(v: &Value, path: &[PathSeg]) -> bool {
    let mut cur = v;
    for seg in path {
        cur = match (seg, cur) {
            (PathSeg::Key(k), Value::Object(m)) => match m.get(k) {
                Some(x) => x,
                None => return false,
            },
            (PathSeg::Index(i), Value::Array(a)) => match a.get(*i) {
                Some(x) => x,
                None => return false,
            },
            _ => return false,
        };
    }
    true
}

fn known_key(k: &str) -> bool {
    let Go::Struct(_, fields) = PROFILE_CONFIG else {
        return false;
    };
    fields.iter().any(|f| f.json == k)
}

/// The top-level key a decode error is about (for pointing at it).
fn first_bad_key(config: &Value, error: &str) -> &'static str {
    let Go::Struct(_, fields) = PROFILE_CONFIG else {
        return "";
    };
    fields
        .iter()
        .map(|f| f.json)
        .find(|k| {
            config.get(*k).is_some()
                && (error.contains(&format!(".{k} ")) || error.contains(&format!(".{k}.")))
        })
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nil_config_leaves_the_spec_zero() {
        let c = parse(None).unwrap();
        assert!(c.nil && c.spec.is_empty());
        assert_eq!(c.tier(), 100);
        assert!(!c.continue_on_conflict());
        assert!(parse(Some(&Value::Null)).unwrap().nil);
    }

    #[test]
    fn defaults_of_an_empty_config() {
        let c = parse(Some(&json!({}))).unwrap();
        assert_eq!(
            Value::Object(c.spec.clone()),
            json!({"tier": 2147483547, "stopMatchingBehavior": "WithdrawPolicies", "continueOnConflict": true})
        );
        assert_eq!(c.priority, Some(100));
    }

    #[test]
    fn every_key_maps_as_kcm_maps_it() {
        let c = parse(Some(&json!({"priority": 500, "stopOnConflict": true, "continueOnError": true,
            "reloader": true, "syncMode": "ContinuousWithDriftDetection",
            "stopMatchingBehavior": "LeavePolicies", "maxConsecutiveFailures": 3,
            "patches": [{"patch": "p"}],
            "driftIgnore": [{"kind": "Deployment", "name": "x", "unknown": 1}],
            "driftExclusions": [{"paths": ["/spec/replicas"]}],
            "templateResourceRefs": [{"identifier": "a", "resource": {"kind": "Secret", "name": "s"}, "optional": false}],
            "policyRefs": [{"kind": "ConfigMap", "name": "c", "namespace": "n"}],
            "Priority": 1, "dependsOn": ["x"]})))
        .unwrap();
        assert_eq!(c.tier(), 2147483147);
        assert!(!c.continue_on_conflict());
        assert_eq!(c.ignored_keys, ["Priority", "dependsOn"]);
        let spec = Value::Object(c.spec);
        assert_eq!(spec["stopMatchingBehavior"], "LeavePolicies");
        assert_eq!(spec["maxConsecutiveFailures"], 3);
        assert_eq!(spec["patches"].as_array().unwrap().len(), 2);
        assert_eq!(
            spec["patches"][1],
            json!({"target": {"kind": "Deployment", "name": "x"}, "patch": DRIFT_IGNORE_PATCH})
        );
        assert_eq!(
            spec["templateResourceRefs"][0],
            json!({"resource": {"kind": "Secret", "name": "s"}, "identifier": "a"})
        );
    }

    #[test]
    fn go_type_errors_and_priority_range() {
        let e = parse(Some(&json!({"priority": "high"}))).unwrap_err();
        assert_eq!(
            e.message,
            "failed to unmarshal raw config to profile configuration: json: cannot unmarshal string into Go struct field profileConfig.priority of type int32"
        );
        assert_eq!(e.key, "priority");
        let e = parse(Some(&json!({"templateResourceRefs": [{"identifier": 3}]}))).unwrap_err();
        assert!(
            e.message.ends_with(
                "Go struct field TemplateResourceRef.templateResourceRefs.identifier of type string"
            ),
            "{}",
            e.message
        );
        assert_eq!(e.key, "templateResourceRefs");
        let e = parse(Some(&json!({"priority": 3000000000i64}))).unwrap_err();
        assert!(e.message.contains("cannot unmarshal number 3000000000 into Go struct field profileConfig.priority of type int32"));
        let e = parse(Some(&json!({"priority": 0}))).unwrap_err();
        assert_eq!(
            e.message,
            "failed to convert priority to tier: invalid value 0, priority has to be between 1 and 2147483646"
        );
        assert!(
            parse(Some(&json!({"syncMode": "Sometimes"}))).is_ok(),
            "the API server judges syncMode"
        );
        assert!(parse(Some(&json!("x"))).is_err());
    }
}
