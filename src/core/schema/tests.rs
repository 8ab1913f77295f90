//! Unit tests on small synthetic schemas.

use serde_json::{Value, json};

use super::node::{parse_field_path, translate_re2};
use super::*;

fn schema(s: Value) -> Schema {
    Schema::compile(&s).expect("schema compiles")
}

fn msgs(s: &Schema, v: Value) -> Vec<String> {
    s.validate_value(&v, &NoRules)
        .into_iter()
        .map(|v| v.message)
        .collect()
}

fn kinds(s: &Schema, v: Value) -> Vec<ViolationKind> {
    s.validate_value(&v, &NoRules)
        .into_iter()
        .map(|v| v.kind)
        .collect()
}

fn obj(props: Value) -> Schema {
    schema(json!({"type": "object", "properties": props}))
}

/// Evaluates rules of the form `true`/`false`/`has(self.x)`.
struct HasRules;
impl RuleEvaluator for HasRules {
    fn eval(&self, rule: &str, value: &Value) -> Option<bool> {
        match rule {
            "true" => Some(true),
            "false" => Some(false),
            r => {
                let field = r.strip_prefix("has(self.")?.strip_suffix(')')?;
                Some(value.get(field).is_some())
            }
        }
    }
}

#[test]
fn types() {
    let s = obj(json!({
        "i": {"type": "integer"}, "n": {"type": "number"}, "s": {"type": "string"},
        "b": {"type": "boolean"}, "a": {"type": "array", "items": {"type": "string"}},
        "o": {"type": "object"}
    }));
    assert!(
        msgs(
            &s,
            json!({"i": 1, "n": 1, "s": "x", "b": true, "a": [], "o": {}})
        )
        .is_empty()
    );
    // kube-openapi accepts whole floats for integers, and integers for numbers
    assert!(msgs(&s, json!({"i": 5.0, "n": 2.5})).is_empty());
    assert_eq!(
        msgs(&s, json!({"i": 5.5})),
        vec![r#"i: Invalid value: "number": i in body must be of type integer: "number""#]
    );
    assert_eq!(
        kinds(&s, json!({"s": 1, "b": "true", "a": {}, "o": [], "n": "1"})),
        vec![ViolationKind::Type; 5]
    );
    assert_eq!(
        msgs(&s, json!({"a": ["x", 1]})),
        vec![r#"a[1]: Invalid value: "integer": a[1] in body must be of type string: "integer""#]
    );
}

#[test]
fn unknown_fields_and_additional_properties() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "known": {"type": "object", "properties": {"x": {"type": "string"}}},
            "map": {"type": "object", "additionalProperties": {"type": "integer"}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                     "properties": {"typed": {"type": "object", "properties": {"y": {"type": "string"}}}}},
            "list": {"type": "array", "x-kubernetes-preserve-unknown-fields": true,
                     "items": {"type": "object", "properties": {"z": {"type": "string"}}}}
        }
    }));
    let vs = s.validate_value(
        &json!({
            "known": {"x": "a", "y": "b"},
            "map": {"a": 1, "b": "two"},
            "free": {"anything": {"deep": [1]}, "typed": {"y": "ok", "nope": 1}},
            "list": [{"z": "a", "extra": true}],
            "top": 1
        }),
        &NoRules,
    );
    let got: Vec<_> = vs.iter().map(|v| (v.kind, v.path_string())).collect();
    assert_eq!(
        got,
        vec![
            (ViolationKind::UnknownField, "known.y".into()),
            (ViolationKind::Type, "map.b".into()),
            // below preserve-unknown-fields, known properties are still pruned
            (ViolationKind::UnknownField, "free.typed.nope".into()),
            (ViolationKind::UnknownField, "top".into()),
        ]
    );
    assert_eq!(vs[0].message, r#"known.y: unknown field "y""#);
}

#[test]
fn required_defaults_and_nulls() {
    let s = schema(json!({
        "type": "object",
        "required": ["a", "b", "c", "d"],
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string", "default": "x"},
            "c": {"type": "string", "nullable": true},
            "d": {"type": "string"},
            "e": {"type": "object", "nullable": true},
            "f": {"type": "array", "items": {"type": "string"}},
            "g": {"type": "array", "items": {"type": "string", "nullable": true}}
        }
    }));
    // b has a default, c is nullable (null kept), d is null (pruned -> missing)
    assert_eq!(
        msgs(&s, json!({"c": null, "d": null, "e": null, "g": [null]})),
        vec!["a: Required value", "d: Required value"]
    );
    assert_eq!(
        msgs(&s, json!({"a": "", "c": "", "d": "", "f": ["x", null]})),
        vec![r#"f[1]: Invalid value: "null": f[1] in body must be of type string: "null""#]
    );
}

#[test]
fn enums_strings_numbers() {
    let s = obj(json!({
        "e": {"type": "integer", "enum": [1, 2]},
        "s": {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^\\d+$"},
        "n": {"type": "number", "minimum": 1, "maximum": 10, "exclusiveMaximum": true, "multipleOf": 0.5},
    }));
    assert!(msgs(&s, json!({"e": 2, "s": "12", "n": 9.5})).is_empty());
    assert_eq!(
        msgs(&s, json!({"e": 3})),
        vec![r#"e: Unsupported value: 3: supported values: "1", "2""#]
    );
    // lengths are counted in characters; \d is ASCII-only as in Go
    assert!(msgs(&s, json!({"s": "١٢"})).len() == 1);
    assert_eq!(
        msgs(&s, json!({"s": "1234"})),
        vec!["s: Too long: may not be more than 3 bytes"]
    );
    assert_eq!(
        kinds(&s, json!({"s": "é"})),
        vec![ViolationKind::MinLength, ViolationKind::Pattern]
    );
    assert_eq!(
        msgs(&s, json!({"n": 10})),
        vec!["n: Invalid value: 10: n in body should be less than 10"]
    );
    assert_eq!(
        msgs(&s, json!({"n": 0})),
        vec!["n: Invalid value: 0: n in body should be greater than or equal to 1"]
    );
    assert_eq!(
        kinds(&s, json!({"n": 1.25})),
        vec![ViolationKind::MultipleOf]
    );
}

#[test]
fn arrays_objects_and_list_types() {
    let s = obj(json!({
        "a": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "integer"}},
        "u": {"type": "array", "uniqueItems": true, "items": {"type": "integer"}},
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "map": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
        "o": {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": {"type": "string"}}
    }));
    assert_eq!(
        msgs(&s, json!({"a": [], "o": {}})),
        vec![
            "a: Invalid value: 0: a in body should have at least 1 items",
            "o: Invalid value: 0: o in body should have at least 1 properties"
        ]
    );
    assert_eq!(
        msgs(&s, json!({"a": [1, 2, 3], "o": {"x": "1", "y": "2"}})),
        vec![
            "a: Too many: 3: must have at most 2 items",
            "o: Too many: 2: must have at most 1 item"
        ]
    );
    assert_eq!(
        kinds(&s, json!({"u": [1, 2, 1]})),
        vec![ViolationKind::UniqueItems]
    );
    assert_eq!(
        msgs(&s, json!({"set": ["a", "b", "a", "a"]})),
        vec![r#"set[2]: Duplicate value: "a""#]
    );
    assert_eq!(
        msgs(
            &s,
            json!({"map": [{"name": "a", "port": 1}, {"name": "a", "port": 2}, {"name": "a", "port": 1}]})
        ),
        vec![r#"map[2]: Duplicate value: {"name":"a","port":1}"#]
    );
    assert_eq!(
        msgs(&s, json!({"map": [{"name": "a"}, 5]})),
        vec![
            r#"map[1]: Invalid value: "integer": map[1] in body must be of type object: "integer""#,
            "map[1]: Invalid value: 5: must be an object for an array of list-type map"
        ]
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
    );
}

#[test]
fn int_or_string_and_formats() {
    let s = obj(json!({
        "port": {"x-kubernetes-int-or-string": true,
                 "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "when": {"type": "string", "format": "date-time"},
        "n": {"type": "integer", "format": "int32"},
        "weird": {"type": "string", "format": "no-such-format"}
    }));
    assert!(
        msgs(
            &s,
            json!({"port": 8080, "when": "2024-01-02T03:04:05Z", "n": 99999999999i64, "weird": "x"})
        )
        .is_empty()
    );
    assert!(msgs(&s, json!({"port": "http"})).is_empty());
    assert_eq!(
        msgs(&s, json!({"port": true})),
        vec![
            r#"port: Invalid value: "boolean": port in body must be of type integer,string: "boolean""#
        ]
    );
    assert_eq!(
        msgs(&s, json!({"when": "tomorrow"})),
        vec![
            r#"when: Invalid value: "tomorrow": when in body must be of type date-time: "tomorrow""#
        ]
    );
}

#[test]
fn value_validations() {
    let s = obj(json!({
        "one": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        "any": {"type": "string", "anyOf": [{"pattern": "^x"}, {"maxLength": 1}]},
        "not": {"type": "string", "not": {"enum": ["forbidden"]}},
        "all": {"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 5}]}
    }));
    assert!(
        msgs(
            &s,
            json!({"one": {"a": "1"}, "any": "xyz", "not": "ok", "all": 3})
        )
        .is_empty()
    );
    assert_eq!(
        kinds(
            &s,
            json!({"one": {"a": "1", "b": "2"}, "any": "yz", "not": "forbidden", "all": 9})
        ),
        vec![
            ViolationKind::OneOf,
            ViolationKind::AnyOf,
            ViolationKind::Not,
            ViolationKind::Maximum
        ]
    );
    assert_eq!(
        msgs(&s, json!({"one": {}})),
        vec![
            r#"one: Invalid value: "": "one" must validate one and only one schema (oneOf). Found 0 valid alternatives"#
        ]
    );
}

#[test]
fn embedded_resources() {
    let s = obj(json!({
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                     "x-kubernetes-preserve-unknown-fields": true},
        "strict": {"type": "object", "x-kubernetes-embedded-resource": true,
                   "properties": {"spec": {"type": "object"}}}
    }));
    assert!(
        msgs(
            &s,
            json!({"template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}})
        )
        .is_empty()
    );
    assert_eq!(
        msgs(
            &s,
            json!({"strict": {"kind": "Pod", "metadata": {"labels": {"a": "b"}, "bad": 1}, "spec": {}, "x": 1}})
        ),
        vec![
            "strict.apiVersion: Required value",
            r#"strict.metadata.bad: unknown field "bad""#,
            r#"strict.x: unknown field "x""#,
        ]
    );
}

#[test]
fn resource_root() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object"}
        }
    }));
    let ok = json!({"apiVersion": "example.com/v1", "kind": "Thing",
                    "metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "x"},
                                 "annotations": {"k": "v"}, "uid": "u", "generation": 3,
                                 "creationTimestamp": null, "ownerReferences": [
                                     {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "controller": true}]},
                    "spec": {}});
    assert!(s.validate(&ok, &NoRules).is_empty());
    // the same value is fine as a plain value, but metadata's fields are unknown there
    let vs: Vec<_> = s
        .validate(
            &json!({"metadata": {"generateName": "a-"}, "spec": {}}),
            &NoRules,
        )
        .into_iter()
        .map(|v| v.message)
        .collect();
    assert_eq!(
        vs,
        vec!["apiVersion: Required value", "kind: Required value"]
    );
    let vs: Vec<_> = s
        .validate(
            &json!({"apiVersion": "a/b/c", "kind": "Bad_Kind", "metadata": {"name": "x/y", "labels": {"k": "v".repeat(64)}}}),
            &NoRules,
        )
        .into_iter()
        .map(|v| (v.kind, v.path_string()))
        .collect();
    assert_eq!(
        vs,
        vec![
            (ViolationKind::TypeMeta, "apiVersion".into()),
            (ViolationKind::TypeMeta, "kind".into()),
            (ViolationKind::Pattern, "metadata.name".into()),
            (ViolationKind::MaxLength, "metadata.labels.k".into()),
        ]
    );
}

#[test]
fn rules() {
    let s = schema(json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "n": {"type": "integer",
                    "x-kubernetes-validations": [{"rule": "false"}]}},
                "x-kubernetes-validations": [
                    {"rule": "has(self.a)", "message": "a is required "},
                    {"rule": "has(self.b)", "fieldPath": ".b", "reason": "FieldValueRequired", "message": "b!"},
                    {"rule": "self == oldSelf", "message": "immutable"},
                    {"rule": "has(self.c)", "reason": "FieldValueForbidden"},
                    {"rule": "unknown()"}
                ]
            }
        }
    }));
    let vs = s.validate_value(&json!({"spec": {"n": 1}}), &HasRules);
    let got: Vec<_> = vs
        .iter()
        .map(|v| (v.kind, v.path_string(), v.message.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                ViolationKind::Rule,
                "spec".into(),
                "spec: Invalid value: a is required".into()
            ),
            (
                ViolationKind::Rule,
                "spec.b".into(),
                "spec.b: Required value: b!".into()
            ),
            (
                ViolationKind::Rule,
                "spec".into(),
                "spec: Forbidden: failed rule: has(self.c)".into()
            ),
            (
                ViolationKind::Rule,
                "spec.n".into(),
                "spec.n: Invalid value: 1: failed rule: false".into()
            ),
        ]
    );
    // NoRules skips everything
    assert!(
        s.validate_value(&json!({"spec": {"n": 1}}), &NoRules)
            .is_empty()
    );
}

#[test]
fn compile_warnings_and_crd_parsing() {
    let s = schema(json!({"type": "string", "pattern": "(?<=x)y"}));
    assert_eq!(s.warnings().len(), 1, "{:?}", s.warnings());
    assert!(s.validate_value(&json!("anything"), &NoRules).is_empty());
    assert!(Crd::from_json(&json!({"kind": "ConfigMap"})).is_err());
    let crd = Crd::from_json(&json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"},
                 "scope": "Cluster",
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object",
                                 "properties": {"spec": {"type": "object"}, "status": {"type": "object"}}}}}]}
    }))
    .unwrap();
    assert!(!crd.scope_namespaced);
    assert!(crd.matches("example.com/v1", "Thing"));
    assert!(!crd.matches("example.org/v1", "Thing"));
    let doc = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"},
                     "spec": {}, "status": {"x": 1}});
    assert_eq!(crd.validate(&doc, &NoRules).len(), 1);
    assert!(crd.validate_as_create(&doc, &NoRules).is_empty());
}

#[test]
fn helpers() {
    assert_eq!(
        parse_field_path(".spec['a.b'].list[2].x"),
        vec![
            PathSeg::Key("spec".into()),
            PathSeg::Key("a.b".into()),
            PathSeg::Key("list".into()),
            PathSeg::Index(2),
            PathSeg::Key("x".into())
        ]
    );
    assert_eq!(
        translate_re2(r"^\d+[\w.-]*\s$"),
        r"^[0-9]+[0-9A-Za-z_.-]*[\t\n\f\r ]$"
    );
    assert_eq!(translate_re2(r"[]a]"), r"[\]a]");
    assert_eq!(translate_re2(r"[[:alpha:]&]"), r"[[:alpha:]\&]");
    assert_eq!(format_path(&[]), "<root>");
    assert_eq!(
        format_path(&[
            PathSeg::Key("a".into()),
            PathSeg::Index(0),
            PathSeg::Key("b".into())
        ]),
        "a[0].b"
    );
    for p in [
        r"^([a-zA-Z0-9_\-.\\\/]|\[[0-9]{1,5}\])+$",
        r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$",
    ] {
        assert!(regex::Regex::new(&translate_re2(p)).is_ok(), "{p}");
    }
}
