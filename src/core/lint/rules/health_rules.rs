//! KSM307–KSM312: kcm's health-rule ConfigMaps (label `k0rdent.mirantis.com/health-rule-target`,
//! key `rules`), loaded as kcm's Sveltos adapter loads them (`verify.go`, `rulesFromConfigMap`
//! and `rulesFromDocs`): the `rules` text is YAML read into a list of
//! `{group, version, kind, scope, healthy, message}` with Go's JSON rules (field names matched
//! without regard to case, unknown fields ignored, a value of the wrong type an error that drops
//! the whole ConfigMap); a rule without kind or version, or with a scope other than `Namespaced`
//! or `Cluster`, is dropped with its own error. Positions point inside the embedded `rules`
//! text, at the line and column of the file.

use crate::api::meta::Object;
use crate::api::sveltos::{
    HEALTH_RULE_SCOPES, HEALTH_RULE_TARGET_GLOBAL, HEALTH_RULES_KEY, LABEL_HEALTH_RULE_TARGET,
};
use crate::core::cel::{self, Environment, Limits};
use crate::core::lint::{RuleInfo, key, node_at};
use crate::core::objects::LoadedObject;
use crate::diag::yaml::{self, Node, NodeKind, ScalarValue};
use crate::diag::{Diagnostic, Severity, Source};

pub static UNPARSABLE: RuleInfo = RuleInfo {
    code: "KSM307",
    name: "health-rules-unparsable",
    severity: Severity::Error,
    title: "kcm cannot read the health rules of the ConfigMap",
    docs: "\
## What it finds
The `rules` key of a health-rule ConfigMap is not a YAML list of rules, or a rule's field has
the wrong type (a number for `version`, a list for `healthy`...). kcm decodes it with Go's JSON
rules after converting the YAML.

## Why it matters
kcm drops every rule of the ConfigMap and sets the ServiceSets' `ServiceSetHealthRules`
condition False (`HealthRuleInvalid`, `<ns>/<cm>: parse \"rules\": ...`): its verifier then does
not run, so Helm services are not promoted to Deployed and their dependents wait.

## Example
```yaml
data:
  rules: |
    - group: apps
      version: 1
      kind: Deployment
```

## Fix
Write `rules` as a list of mappings whose values are strings: `version: v1`.
",
};

pub static KIND_VERSION: RuleInfo = RuleInfo {
    code: "KSM308",
    name: "health-rule-kind-version",
    severity: Severity::Error,
    title: "A health rule has no kind or no version",
    docs: "\
## What it finds
A rule of a health-rule ConfigMap without `kind` or without `version` (the core group is
`group: \"\"`, which may be left out).

## Why it matters
kcm drops the rule (`kind and version are required`) and reports the ConfigMap's rules invalid
on every ServiceSet they apply to.

## Example
```yaml
- group: apps
  kind: Deployment
  scope: Namespaced
  healthy: obj.status.readyReplicas == obj.spec.replicas
  message: '\"not ready\"'
```

## Fix
Add the version the rule is written for: `version: v1`.
",
};

pub static SCOPE: RuleInfo = RuleInfo {
    code: "KSM309",
    name: "health-rule-scope",
    severity: Severity::Error,
    title: "A health rule's scope is not Namespaced or Cluster",
    docs: "\
## What it finds
A rule whose `scope` is missing or is not exactly `Namespaced` or `Cluster` (case matters).

## Why it matters
kcm drops the rule (`scope must be \"Namespaced\" or \"Cluster\", got \"...\"`). A scope that
disagrees with the cluster's discovery makes kcm report every object of the kind unhealthy
(`HealthRuleScopeMismatch`).

## Example
```yaml
- version: v1
  kind: PersistentVolume
  scope: cluster
```

## Fix
Use `scope: Namespaced` for namespaced kinds, `scope: Cluster` for cluster-scoped ones.
",
};

pub static IGNORED_KEY: RuleInfo = RuleInfo {
    code: "KSM310",
    name: "health-rule-ignored-key",
    severity: Severity::Warning,
    title: "kcm ignores a key of a health rule, or the ConfigMap has no rules",
    docs: "\
## What it finds
A key of a rule that is not one of group, version, kind, scope, healthy, message (a typo such as
`healty`); or a health-rule ConfigMap without a `rules` key, or with an empty one; or a target
label that is empty.

## Why it matters
kcm ignores unknown keys silently: a misspelt `healthy` leaves the expression empty, which does
not compile, and the rule is dropped. A ConfigMap without rules adds nothing.

## Example
```yaml
- version: v1
  kind: Pod
  scope: Namespaced
  healty: obj.status.phase == \"Running\"
```

## Fix
Spell the key as kcm reads it.
",
};

pub static EMPTY_EXPRESSION: RuleInfo = RuleInfo {
    code: "KSM311",
    name: "health-rule-expression-empty",
    severity: Severity::Error,
    title: "A health rule has no healthy or no message expression",
    docs: "\
## What it finds
A rule whose `healthy` or `message` is missing or empty (or only spaces).

## Why it matters
kcm compiles both expressions; an empty one is a CEL syntax error, so kcm drops the rule
(`healthy: compile: ...` or `message: compile: ...`) and reports the ConfigMap's rules invalid.
`message` is not optional.

## Example
```yaml
- version: v1
  kind: PersistentVolume
  scope: Cluster
  healthy: obj.status.phase == \"Bound\"
```

## Fix
Give both: `message: '\"volume not bound\"'` (a CEL string literal, or an expression that
returns a string).
",
};

/// The fields of kcm's `ruleDoc`.
const FIELDS: &[&str] = &["group", "version", "kind", "scope", "healthy", "message"];

/// Whether an object is a health-rule ConfigMap (kcm selects them by the label only).
pub fn is_health_rule_config_map(json: &serde_json::Value) -> bool {
    let object = Object(json);
    object.kind() == "ConfigMap"
        && object.api_version() == "v1"
        && object.has_label(LABEL_HEALTH_RULE_TARGET)
}

/// One rule as kcm reads it, with where each field is in the `rules` text.
#[derive(Debug, Default)]
pub struct RuleDoc {
    pub index: usize,
    pub group: String,
    pub version: String,
    pub kind: String,
    pub scope: String,
    pub healthy: String,
    pub message: String,
    /// Span of the rule in the `rules` text.
    pub span: std::ops::Range<usize>,
    /// Span of each field's value, by field name.
    pub field_spans: Vec<(&'static str, std::ops::Range<usize>)>,
}

/// A problem at a span of the `rules` text.
#[derive(Debug)]
pub struct Problem {
    pub info: &'static RuleInfo,
    pub message: String,
    pub span: std::ops::Range<usize>,
}

fn go_type(node: &Node) -> &'static str {
    match &node.resolved().kind {
        NodeKind::Seq(_) => "array",
        NodeKind::Map(_) => "object",
        NodeKind::Scalar(s) => match s.value {
            ScalarValue::Bool(_) => "bool",
            ScalarValue::Int(_) | ScalarValue::Uint(_) | ScalarValue::Float(_) => "number",
            ScalarValue::Null => "null",
            ScalarValue::String => "string",
        },
        NodeKind::Alias(_) | NodeKind::Anchor(_) => "value",
    }
}

/// Reads a `rules` text as kcm does: the rules, or the error that drops them all, and the
/// ignored keys (warnings).
pub fn parse_rules(text: &str) -> (Vec<RuleDoc>, Vec<Problem>) {
    let mut problems = Vec::new();
    let source = Source::new("rules", text);
    let (docs, err) = yaml::parse_documents(&source);
    if let Some(e) = err {
        problems.push(Problem {
            info: &UNPARSABLE,
            message: format!("parse \"rules\": {}", e.message),
            span: e.offset..e.offset,
        });
        return (Vec::new(), problems);
    }
    let Some(root) = docs.into_iter().find_map(|d| d.root) else {
        return (Vec::new(), problems);
    };
    let root = root.resolved().clone();
    let items = match &root.kind {
        NodeKind::Seq(items) => items.clone(),
        NodeKind::Scalar(s) if s.value == ScalarValue::Null => Vec::new(),
        _ => {
            problems.push(Problem {
                info: &UNPARSABLE,
                message: format!(
                    "parse \"rules\": json: cannot unmarshal {} into Go value of type []sveltos.ruleDoc",
                    go_type(&root)
                ),
                span: root.span.clone(),
            });
            return (Vec::new(), problems);
        }
    };
    let mut rules = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let item = item.resolved();
        let mut doc = RuleDoc {
            index,
            span: item.span.clone(),
            ..RuleDoc::default()
        };
        match &item.kind {
            NodeKind::Scalar(s) if s.value == ScalarValue::Null => {}
            NodeKind::Map(entries) => {
                for (k, v) in entries {
                    let key = k.key_text().unwrap_or("");
                    // Go's encoding/json matches field names without regard to case.
                    let Some(field) = FIELDS.iter().find(|f| f.eq_ignore_ascii_case(key)) else {
                        problems.push(Problem {
                            info: &IGNORED_KEY,
                            message: format!(
                                "rule #{index}: kcm ignores the key {key:?} (it reads {})",
                                FIELDS.join(", ")
                            ),
                            span: k.span.clone(),
                        });
                        continue;
                    };
                    let v = v.resolved();
                    let text = match &v.kind {
                        NodeKind::Scalar(s) if s.value == ScalarValue::String => s.text.clone(),
                        NodeKind::Scalar(s) if s.value == ScalarValue::Null => String::new(),
                        _ => {
                            problems.push(Problem {
                                info: &UNPARSABLE,
                                message: format!(
                                    "parse \"rules\": json: cannot unmarshal {} into Go struct field ruleDoc.{field} of type string",
                                    go_type(v)
                                ),
                                span: v.span.clone(),
                            });
                            return (Vec::new(), problems);
                        }
                    };
                    doc.field_spans.push((field, v.span.clone()));
                    match *field {
                        "group" => doc.group = text,
                        "version" => doc.version = text,
                        "kind" => doc.kind = text,
                        "scope" => doc.scope = text,
                        "healthy" => doc.healthy = text,
                        _ => doc.message = text,
                    }
                }
            }
            _ => {
                problems.push(Problem {
                    info: &UNPARSABLE,
                    message: format!(
                        "parse \"rules\": json: cannot unmarshal {} into Go value of type sveltos.ruleDoc",
                        go_type(item)
                    ),
                    span: item.span.clone(),
                });
                return (Vec::new(), problems);
            }
        }
        rules.push(doc);
    }
    (rules, problems)
}

pub static COMPILE_ERROR: RuleInfo = RuleInfo {
    code: "KSM312",
    name: "health-rule-expression-invalid",
    severity: Severity::Error,
    title: "A health rule's healthy or message expression does not compile",
    docs: "\
## What it finds
A rule whose `healthy` or `message` expression does not compile in kcm's health-rule CEL
environment: a syntax error, or a name that is not declared there (the object is `obj`, not
`self`; the Kubernetes CEL libraries are not available, the cel-go string extension is).

## Why it matters
kcm compiles both expressions when it loads the ConfigMap; a compile error drops the rule
(`healthy: compile: ...` or `message: compile: ...`) and reports the ConfigMap's rules invalid
(condition `ServiceSetHealthRules` False, reason `HealthRuleInvalid`).

## Example
```yaml
healthy: self.status.readyReplicas == self.spec.replicas
```

## Fix
Write the expression against `obj`, with the standard library and the string extension only:
`healthy: obj.status.readyReplicas == obj.spec.replicas`. `kubectl ksm eval --env health` runs
it against a saved object.
",
};

impl RuleDoc {
    pub fn span_of(&self, field: &str) -> std::ops::Range<usize> {
        self.field_spans
            .iter()
            .find(|(f, _)| *f == field)
            .map_or(self.span.clone(), |(_, s)| s.clone())
    }

    /// kcm's validation before compiling (`rulesFromDocs`).
    pub fn validate(&self) -> Option<Problem> {
        if self.kind.is_empty() || self.version.is_empty() {
            return Some(Problem {
                info: &KIND_VERSION,
                message: format!("rule #{}: kind and version are required", self.index),
                span: self.span.start..self.span.start,
            });
        }
        if !HEALTH_RULE_SCOPES.contains(&self.scope.as_str()) {
            return Some(Problem {
                info: &SCOPE,
                message: format!(
                    "rule #{}: scope must be \"Namespaced\" or \"Cluster\", got {:?}",
                    self.index, self.scope
                ),
                span: self.span_of("scope"),
            });
        }
        for (field, text) in [("healthy", &self.healthy), ("message", &self.message)] {
            if text.trim().is_empty() {
                return Some(Problem {
                    info: &EMPTY_EXPRESSION,
                    message: format!(
                        "rule #{}: {field} is {}: kcm compiles it and fails ({field}: compile: syntax error), dropping the rule",
                        self.index,
                        if self.field_spans.iter().any(|(f, _)| *f == field) {
                            "empty"
                        } else {
                            "missing"
                        }
                    ),
                    span: self.span_of(field),
                });
            }
        }
        let limits = Limits::default();
        for (field, text) in [("healthy", &self.healthy), ("message", &self.message)] {
            if let Err(errors) = cel::compile_in(text, &limits, Environment::Health) {
                let first = errors
                    .first()
                    .map_or_else(|| "invalid expression".to_string(), |e| e.message.clone());
                return Some(Problem {
                    info: &COMPILE_ERROR,
                    message: format!(
                        "rule #{}: {field}: compile: {first}: kcm drops the rule",
                        self.index
                    ),
                    span: self.span_of(field),
                });
            }
        }
        None
    }
}

/// Lints a health-rule ConfigMap: its `rules` text read and validated as kcm does, every
/// position inside the embedded text.
pub fn check(object: &LoadedObject, out: &mut Vec<Diagnostic>) {
    let source = &object.source;
    let config_map = Object(&object.json);
    let (ns, name) = (config_map.namespace(), config_map.name());
    let at = |node: &Node| source.first_line(node.span.clone());
    let target = config_map.label(LABEL_HEALTH_RULE_TARGET);
    let label_path = [
        key("metadata"),
        key("labels"),
        key(LABEL_HEALTH_RULE_TARGET),
    ];
    let label_node = node_at(&object.node, &label_path);
    if target.is_empty() {
        let span = label_node.map_or(object.node.span.start..object.node.span.start, at);
        out.push(
            Diagnostic::new(IGNORED_KEY.code, IGNORED_KEY.severity,
                format!("ConfigMap {ns}/{name}: the {LABEL_HEALTH_RULE_TARGET} label is empty: kcm applies a ConfigMap to the ServiceSets of its namespace only when the value is {HEALTH_RULE_TARGET_GLOBAL:?} or the name of the ServiceSet's ClusterDeployment or MultiClusterService"))
                .at(source, span),
        );
    }
    let rules_node =
        node_at(&object.node, &[key("data"), key(HEALTH_RULES_KEY)]).map(Node::resolved);
    let text = config_map.data_str(HEALTH_RULES_KEY).unwrap_or("");
    let Some(rules_node) = rules_node.filter(|_| !text.trim().is_empty()) else {
        let span = object.node.span.start..object.node.span.start;
        out.push(
            Diagnostic::new(IGNORED_KEY.code, IGNORED_KEY.severity,
                format!("ConfigMap {ns}/{name} is labelled {LABEL_HEALTH_RULE_TARGET} but has no data.{HEALTH_RULES_KEY}: kcm loads no rule from it"))
                .at(source, span),
        );
        return;
    };
    let inner = |range: std::ops::Range<usize>| {
        let start = rules_node.value_offset_in_source(source, range.start);
        let end = if range.end > range.start {
            rules_node.value_offset_in_source(source, range.end - 1) + 1
        } else {
            start
        };
        source.first_line(start..end.max(start))
    };
    let (rules, problems) = parse_rules(text);
    let mut push = |p: Problem| {
        out.push(
            Diagnostic::new(
                p.info.code,
                p.info.severity,
                format!("{ns}/{name}: {}", p.message),
            )
            .at(source, inner(p.span)),
        );
    };
    for p in problems {
        push(p);
    }
    for r in &rules {
        if let Some(p) = r.validate() {
            push(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::core::lint::test_support::lint_text;

    const HEAD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: team-rules\n  namespace: team-a\n  labels:\n    k0rdent.mirantis.com/health-rule-target: global\ndata:\n  rules: |\n";

    fn lint_rules(rules: &str) -> Vec<String> {
        let indented: String = rules.lines().map(|l| format!("    {l}\n")).collect();
        lint_text(&format!("{HEAD}{indented}"))
    }

    #[test]
    fn valid_rules_pass() {
        let out = lint_rules(
            "- group: apps\n  version: v1\n  kind: Deployment\n  scope: Namespaced\n  healthy: obj.status.readyReplicas == obj.spec.replicas\n  message: '\"not ready\"'\n- Version: v1\n  Kind: PersistentVolume\n  Scope: Cluster\n  healthy: obj.status.phase == \"Bound\"\n  message: obj.status.phase",
        );
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn kcm_load_errors_at_their_place_inside_the_rules() {
        let out = lint_rules(
            "- group: apps\n  kind: Deployment\n  scope: Namespaced\n  healthy: 'true'\n  message: '\"\"'\n- version: v1\n  kind: Pod\n  scope: namespaced\n  healty: 'true'\n  message: '\"\"'\n- version: v1\n  kind: PersistentVolume\n  scope: Cluster\n  healthy: 'true'",
        );
        assert_eq!(
            out,
            [
                "KSM308 10:7 team-a/team-rules: rule #0: kind and version are required",
                "KSM309 17:14 team-a/team-rules: rule #1: scope must be \"Namespaced\" or \"Cluster\", got \"namespaced\"",
                "KSM310 18:7 team-a/team-rules: rule #1: kcm ignores the key \"healty\" (it reads group, version, kind, scope, healthy, message)",
                "KSM311 20:7 team-a/team-rules: rule #2: message is missing: kcm compiles it and fails (message: compile: syntax error), dropping the rule",
            ]
        );
    }

    #[test]
    fn expressions_compile_in_the_health_environment() {
        // `obj` is declared and the string extension is there: these compile in kcm.
        let out = lint_rules(
            "- version: v1\n  kind: Pod\n  scope: Namespaced\n  healthy: obj.metadata.name.lowerAscii().indexOf('x') < 0\n  message: '\"%s\".format([obj.metadata.name])'",
        );
        assert!(out.is_empty(), "{out:?}");
        // `self` is the readiness environment's variable, not the health one's.
        let out = lint_rules(
            "- version: v1\n  kind: Pod\n  scope: Namespaced\n  healthy: self.status.phase == 'Running'\n  message: '\"\"'",
        );
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(
            out[0].starts_with("KSM312 13:16 team-a/team-rules: rule #0: healthy: compile: ")
                && out[0].contains("self")
                && out[0].ends_with("kcm drops the rule"),
            "{out:?}"
        );
        let out = lint_rules(
            "- version: v1\n  kind: Pod\n  scope: Namespaced\n  healthy: 'true'\n  message: obj.status.phase +",
        );
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(
            out[0].starts_with("KSM312 14:16 team-a/team-rules: rule #0: message: compile: "),
            "{out:?}"
        );
    }

    #[test]
    fn a_wrongly_typed_field_drops_every_rule() {
        let out = lint_rules("- version: 1\n  kind: Pod\n  scope: Namespaced");
        assert_eq!(
            out,
            [
                "KSM307 10:16 team-a/team-rules: parse \"rules\": json: cannot unmarshal number into Go struct field ruleDoc.version of type string"
            ]
        );
        let out = lint_rules("group: apps");
        assert!(
            out[0].contains("cannot unmarshal object into Go value of type []sveltos.ruleDoc"),
            "{out:?}"
        );
        let out = lint_rules("- [unclosed");
        assert!(out[0].starts_with("KSM307"), "{out:?}");
    }

    #[test]
    fn a_config_map_without_rules_or_target_is_said() {
        let out = lint_text(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: a\n  labels:\n    k0rdent.mirantis.com/health-rule-target: \"\"\n",
        );
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out.iter().all(|l| l.starts_with("KSM310")), "{out:?}");
        // Without the label it is not a health-rule ConfigMap: not linted.
        assert!(
            lint_text(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  rules: '{'\n"
            )
            .is_empty()
        );
    }
}
