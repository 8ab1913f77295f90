//! The tools the MCP server offers: their names, descriptions and schemas, and for each the
//! command line of the verb that answers it. A tool is a verb of this CLI run in the server's
//! process with `-o json`, so its result is the CLI's JSON for the same question.

use std::ffi::OsString;
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// Where a tool reads objects: the cluster, a dump, or nothing (the text it is given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    Objects,
    Nothing,
}

/// A tool: what the assistant sees, and how a call becomes a command line.
pub struct Spec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The JSON Schema of the arguments (an object's properties) and the required ones.
    pub properties: fn() -> Value,
    pub required: &'static [&'static str],
    /// The `kind` of the JSON report it answers with, and the report's other top-level
    /// fields with their JSON types; None: text.
    pub report: Option<(&'static str, &'static [(&'static str, &'static str)])>,
    pub reads: Reads,
}

/// A call turned into the verb's command line (after the program name), with what the verb
/// reads on stdin.
#[derive(Debug, Default, PartialEq)]
pub struct Command {
    /// The verb and its flags.
    pub flags: Vec<OsString>,
    /// Positional arguments, given after `--`.
    pub positional: Vec<OsString>,
    pub stdin: Vec<u8>,
    /// The verb reads the namespace (`--namespace`, or `-A` where it takes it).
    pub namespaced: bool,
    /// The verb takes the server's `--now`.
    pub judged_at_now: bool,
}

fn target_property(what: &str) -> Value {
    json!({
        "type": "string",
        "description": format!("{what}: serviceset/NAME, clusterdeployment/NAME (cld/NAME) or multiclusterservice/NAME (mcs/NAME); a bare NAME is a ServiceSet. All when absent."),
    })
}

fn namespace_properties() -> [(&'static str, Value); 2] {
    [
        (
            "namespace",
            json!({"type": "string", "description": "The namespace (default: the server's, or for a dump every namespace)"}),
        ),
        (
            "allNamespaces",
            json!({"type": "boolean", "description": "Every namespace (as kubectl -A)"}),
        ),
    ]
}

fn with_namespaces(mut properties: serde_json::Map<String, Value>) -> Value {
    properties.extend(namespace_properties().map(|(k, v)| (k.to_string(), v)));
    Value::Object(properties)
}

fn object(pairs: &[(&str, Value)]) -> serde_json::Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

pub const SPECS: &[Spec] = &[
    Spec {
        name: "doctor",
        title: "Diagnose services",
        description: "Why services are not deployed: for every ServiceSet (or those of one ServiceSet, ClusterDeployment or MultiClusterService), the chain StateManagementProvider -> ServiceSet -> provider objects (Sveltos Profile/ClusterProfile and ClusterSummary for kcm's default provider, Flux HelmRelease/Kustomization for ksm-flux) -> sources, with each service's state, kcm's verdicts and the first failing link, each finding with its code (see explain) and a hint.",
        properties: || with_namespaces(object(&[("target", target_property("What to diagnose"))])),
        required: &[],
        report: Some((
            "DoctorReport",
            &[
                ("findings", "array"),
                ("summary", "object"),
                ("serviceSets", "array"),
            ],
        )),
        reads: Reads::Objects,
    },
    Spec {
        name: "tree",
        title: "Fleet tree",
        description: "The fleet as a tree: each MultiClusterService with the clusters its selector matches and, for those it does not, the label that decides; per cluster its ServiceSets and their services with state, age and dependsOn edges, and which ServiceSet owns a release two claim.",
        properties: || {
            with_namespaces(object(&[(
                "target",
                target_property("What to root the tree at"),
            )]))
        },
        required: &[],
        report: Some((
            "Tree",
            &[("multiClusterServices", "array"), ("clusters", "array")],
        )),
        reads: Reads::Objects,
    },
    Spec {
        name: "trace",
        title: "Trace a deployed object",
        description: "Who deployed this, from which template, and why is it in this state: from a Flux HelmRelease or Kustomization, a Sveltos ClusterSummary, Profile or ClusterProfile, or a ServiceSet, up the chain to the ClusterDeployment or MultiClusterService and the ServiceTemplate (version, chain, source). Give `start`, or `release` alone to find the service deploying a release.",
        properties: || {
            with_namespaces(object(&[
                (
                    "start",
                    json!({"type": "string", "description": "KIND/NAME: helmrelease/NAME (hr), kustomization/NAME (ks), clustersummary/NAME, profile/NAME, clusterprofile/NAME or serviceset/NAME"}),
                ),
                (
                    "release",
                    json!({"type": "string", "description": "Only the service deployed as this release on the cluster: [NAMESPACE/]NAME"}),
                ),
                (
                    "cluster",
                    json!({"type": "string", "description": "Only services deployed to this cluster: a ClusterDeployment [NAMESPACE/]NAME, or `management`"}),
                ),
            ]))
        },
        required: &[],
        report: Some(("Trace", &[("start", "string"), ("services", "array")])),
        reads: Reads::Objects,
    },
    Spec {
        name: "check",
        title: "Check StateManagementProviders",
        description: "The conditions kcm would set on StateManagementProviders now (the adapter, the provisioners and their CRDs each judged by the SMP's CEL readiness rules as kcm's cel-go runs them), each rule's result with its explanation, and where the conditions kcm recorded differ.",
        properties: || {
            Value::Object(object(&[
                (
                    "smps",
                    json!({"type": "array", "items": {"type": "string"}, "description": "StateManagementProvider names (NAME or smp/NAME); all when absent"}),
                ),
                (
                    "selector",
                    json!({"type": "string", "description": "Only the SMPs whose labels match (a=b,c!=d)"}),
                ),
            ]))
        },
        required: &[],
        report: Some((
            "CheckReport",
            &[("providers", "array"), ("summary", "object")],
        )),
        reads: Reads::Objects,
    },
    Spec {
        name: "eval",
        title: "Evaluate a CEL rule on an object",
        description: "Evaluates a CEL rule on one object as kcm does: `readiness` (StateManagementProvider rules, `self` is the object) or `health` (the Sveltos adapter's health rules, `obj` is the object, with the string extension), bounded in cost and memory; the result with the value of each part of the rule. Secret data is never shown.",
        properties: || {
            Value::Object(object(&[
                (
                    "rule",
                    json!({"type": "string", "description": "The CEL rule"}),
                ),
                (
                    "object",
                    json!({"type": "string", "description": "KIND/NAME as kubectl takes it: deploy/NAME, hr/NAME, helmreleases.helm.toolkit.fluxcd.io/NAME"}),
                ),
                (
                    "namespace",
                    json!({"type": "string", "description": "The object's namespace (default: the server's; for a dump, the one namespace that holds it)"}),
                ),
                (
                    "env",
                    json!({"type": "string", "enum": ["readiness", "health"], "description": "kcm's CEL environment (default readiness)"}),
                ),
                (
                    "message",
                    json!({"type": "string", "description": "With env health: the rule's message expression, shown when the object is unhealthy"}),
                ),
            ]))
        },
        required: &["rule", "object"],
        report: Some((
            "EvalReport",
            &[
                ("rule", "string"),
                ("results", "array"),
                ("summary", "object"),
            ],
        )),
        reads: Reads::Objects,
    },
    Spec {
        name: "lint",
        title: "Lint manifests",
        description: "Lints manifest text (YAML or JSON, one or more documents) as CI would: StateManagementProviders and the other kcm objects against their schemas, CEL rules compiled and type-checked as kcm's cel-go does, semantic checks; each diagnostic with its code, line and column.",
        properties: || {
            Value::Object(object(&[
                (
                    "manifests",
                    json!({"type": "string", "description": "The manifests' text"}),
                ),
                (
                    "strict",
                    json!({"type": "boolean", "description": "Warnings count as errors"}),
                ),
            ]))
        },
        required: &["manifests"],
        report: Some((
            "LintReport",
            &[("diagnostics", "array"), ("summary", "object")],
        )),
        reads: Reads::Nothing,
    },
    Spec {
        name: "render",
        title: "Render a ServiceSet",
        description: "The objects a ServiceSet's adapter writes, as a Kubernetes List: the Sveltos Profile or ClusterProfile of kcm's default provider, or the Flux HelmReleases and Kustomizations of ksm-flux. Findings of the translation come as a second text.",
        properties: || {
            Value::Object(object(&[
                (
                    "serviceset",
                    json!({"type": "string", "description": "The ServiceSet's NAME (or serviceset/NAME); every ServiceSet of the namespace when absent"}),
                ),
                (
                    "namespace",
                    json!({"type": "string", "description": "The ServiceSet's namespace"}),
                ),
                (
                    "selector",
                    json!({"type": "string", "description": "With no name, only the ServiceSets whose labels match (a=b,c!=d)"}),
                ),
            ]))
        },
        required: &[],
        report: Some(("List", &[("apiVersion", "string"), ("items", "array")])),
        reads: Reads::Objects,
    },
    Spec {
        name: "explain",
        title: "Explain a code",
        description: "The documentation of a finding code of lint, render or doctor (e.g. KSM204, KSM609): what it means, why, and what to do.",
        properties: || {
            Value::Object(object(&[(
                "code",
                json!({"type": "string", "description": "The code, e.g. KSM204"}),
            )]))
        },
        required: &["code"],
        report: None,
        reads: Reads::Nothing,
    },
];

pub fn spec(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == name)
}

fn schema_object(v: Value) -> Arc<JsonObject> {
    match v {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

impl Spec {
    pub fn tool(&self) -> Tool {
        let input = json!({
            "type": "object",
            "properties": (self.properties)(),
            "required": self.required,
            "additionalProperties": false,
        });
        let annotations = ToolAnnotations::with_title(self.title)
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            // A tool that reads the cluster sees a world that changes; one that reads only
            // its arguments does not.
            .open_world(self.reads == Reads::Objects);
        let tool = Tool::new(self.name, self.description, schema_object(input))
            .with_title(self.title)
            .with_annotations(annotations);
        match self.report {
            Some((kind, fields)) => {
                let mut properties = serde_json::Map::new();
                properties.insert("kind".into(), json!({"const": kind}));
                let mut required = vec!["kind"];
                if kind != "List" {
                    properties.insert("version".into(), json!({"type": "integer"}));
                    properties.insert("tool".into(), json!({"type": "object"}));
                    required.extend(["version", "tool"]);
                }
                for (field, type_) in fields.iter() {
                    properties.insert((*field).into(), json!({"type": type_}));
                    required.push(field);
                }
                tool.with_raw_output_schema(schema_object(json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                })))
            }
            None => tool,
        }
    }
}

/// A call's arguments, read by the tool's schema (the transport does not check them).
pub struct Arguments<'a> {
    spec: &'static Spec,
    args: &'a JsonObject,
}

fn invalid(message: String) -> McpError {
    McpError::invalid_params(message, None)
}

impl<'a> Arguments<'a> {
    pub fn new(spec: &'static Spec, args: &'a JsonObject) -> Result<Self, McpError> {
        let properties = (spec.properties)();
        for key in args.keys() {
            if properties.get(key).is_none() {
                return Err(invalid(format!(
                    "{}: no argument {key:?} (it takes {})",
                    spec.name,
                    properties
                        .as_object()
                        .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
                        .unwrap_or_default()
                )));
            }
        }
        for key in spec.required {
            if matches!(args.get(*key), None | Some(Value::Null)) {
                return Err(invalid(format!("{}: `{key}` is required", spec.name)));
            }
        }
        Ok(Arguments { spec, args })
    }

    pub fn string(&self, key: &str) -> Result<Option<&'a str>, McpError> {
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(invalid(format!(
                "{}: `{key}` must be a string",
                self.spec.name
            ))),
        }
    }

    pub fn boolean(&self, key: &str) -> Result<bool, McpError> {
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid(format!(
                "{}: `{key}` must be a boolean",
                self.spec.name
            ))),
        }
    }

    pub fn strings(&self, key: &str) -> Result<Vec<&'a str>, McpError> {
        match self.args.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str().ok_or_else(|| {
                        invalid(format!(
                            "{}: `{key}` must be a list of strings",
                            self.spec.name
                        ))
                    })
                })
                .collect(),
            Some(_) => Err(invalid(format!(
                "{}: `{key}` must be a list of strings",
                self.spec.name
            ))),
        }
    }
}

/// The StateManagementProvider's resource as kubectl names it shortest (`smp`).
fn smp_resource() -> &'static str {
    let k = &crate::api::kinds::STATE_MANAGEMENT_PROVIDER;
    k.short_names.first().copied().unwrap_or(k.plural)
}

/// The command line a call of a tool that runs a verb gives (explain is answered directly).
pub fn command(spec: &'static Spec, args: &JsonObject) -> Result<Command, McpError> {
    let a = Arguments::new(spec, args)?;
    let mut c = Command {
        flags: vec![spec.name.into()],
        ..Command::default()
    };
    let flag = |c: &mut Command, name: &str, value: &str| {
        c.flags.extend([name.into(), value.into()]);
    };
    match spec.name {
        "doctor" | "tree" => {
            c.positional.extend(a.string("target")?.map(OsString::from));
            c.namespaced = true;
            c.judged_at_now = true;
        }
        "trace" => {
            let start = a.string("start")?;
            let release = a.string("release")?;
            if start.is_none() && release.is_none() {
                return Err(invalid("trace: give `start`, or `release`".into()));
            }
            c.positional.extend(start.map(OsString::from));
            if let Some(r) = release {
                flag(&mut c, "--release", r);
            }
            if let Some(x) = a.string("cluster")? {
                flag(&mut c, "--cluster", x);
            }
            c.namespaced = true;
            c.judged_at_now = true;
        }
        "check" => {
            // Always KIND/NAME: a bare name that is also a file's would be read as that file.
            for name in a.strings("smps")? {
                c.positional.push(if name.contains('/') {
                    name.into()
                } else {
                    format!("{}/{name}", smp_resource()).into()
                });
            }
            if let Some(s) = a.string("selector")? {
                flag(&mut c, "--selector", s);
            }
        }
        "eval" => {
            // The rule comes on stdin: any text is a rule, none is taken for a flag.
            c.stdin = a.string("rule")?.unwrap_or_default().as_bytes().to_vec();
            flag(&mut c, "--rule-file", "-");
            if let Some(e) = a.string("env")? {
                flag(&mut c, "--env", e);
            }
            if let Some(m) = a.string("message")? {
                flag(&mut c, "--message", m);
            }
            c.positional.extend(a.string("object")?.map(OsString::from));
            c.namespaced = true;
        }
        "lint" => {
            c.stdin = a
                .string("manifests")?
                .unwrap_or_default()
                .as_bytes()
                .to_vec();
            if a.boolean("strict")? {
                c.flags.push("--strict".into());
            }
            c.positional.push("-".into());
        }
        "render" => {
            c.positional
                .extend(a.string("serviceset")?.map(OsString::from));
            if let Some(s) = a.string("selector")? {
                flag(&mut c, "--selector", s);
            }
            c.namespaced = true;
        }
        other => {
            return Err(invalid(format!("{other}: not a verb's tool")));
        }
    }
    Ok(c)
}

/// The namespace flags of a call: its own, or the server's.
pub fn namespace_flags(
    args: &JsonObject,
    spec: &'static Spec,
    default: Option<&str>,
) -> Result<Vec<OsString>, McpError> {
    let a = Arguments::new(spec, args)?;
    let takes_all = (spec.properties)().get("allNamespaces").is_some();
    if takes_all && a.boolean("allNamespaces")? {
        return Ok(vec!["--all-namespaces".into()]);
    }
    Ok(match a.string("namespace")?.or(default) {
        Some(n) => vec!["--namespace".into(), n.into()],
        None => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    fn strings(v: &[OsString]) -> Vec<&str> {
        v.iter().map(|s| s.to_str().unwrap()).collect()
    }

    #[test]
    fn every_tool_is_read_only_with_an_object_input_schema_and_a_report_schema_but_explain() {
        for spec in SPECS {
            let t = spec.tool();
            let a = t.annotations.as_ref().unwrap();
            assert_eq!(a.read_only_hint, Some(true), "{}", spec.name);
            assert_eq!(a.destructive_hint, Some(false), "{}", spec.name);
            assert_eq!(t.input_schema["type"], "object");
            assert_eq!(t.input_schema["additionalProperties"], false);
            for r in spec.required {
                assert!((spec.properties)().get(*r).is_some(), "{}: {r}", spec.name);
            }
            assert_eq!(t.output_schema.is_some(), spec.name != "explain");
        }
    }

    #[test]
    fn calls_become_the_verbs_command_lines_with_positionals_apart() {
        let c = command(spec("doctor").unwrap(), &args(json!({"target": "cld/dev"}))).unwrap();
        assert_eq!(strings(&c.flags), ["doctor"]);
        assert_eq!(strings(&c.positional), ["cld/dev"]);
        assert!(c.namespaced && c.judged_at_now);

        let c = command(
            spec("check").unwrap(),
            &args(json!({"smps": ["a", "smp/b"]})),
        )
        .unwrap();
        assert_eq!(strings(&c.positional), ["smp/a", "smp/b"]);

        let c = command(
            spec("eval").unwrap(),
            &args(json!({"rule": "-x", "object": "deploy/x", "env": "health"})),
        )
        .unwrap();
        assert_eq!(c.stdin, b"-x");
        assert_eq!(
            strings(&c.flags),
            ["eval", "--rule-file", "-", "--env", "health"]
        );
        assert_eq!(strings(&c.positional), ["deploy/x"]);

        let c = command(spec("lint").unwrap(), &args(json!({"manifests": "a: b"}))).unwrap();
        assert_eq!(
            (c.stdin.as_slice(), strings(&c.positional)),
            (&b"a: b"[..], vec!["-"])
        );
    }

    #[test]
    fn arguments_outside_the_schema_or_of_the_wrong_type_are_invalid_params() {
        let doctor = spec("doctor").unwrap();
        for bad in [
            json!({"target": 5}),
            json!({"allNamespaces": "yes"}),
            json!({"nope": 1}),
        ] {
            let e = command(doctor, &args(bad.clone()))
                .and_then(|_| namespace_flags(&args(bad.clone()), doctor, None))
                .unwrap_err();
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{bad}");
        }
        let e = command(spec("eval").unwrap(), &args(json!({"rule": "true"}))).unwrap_err();
        assert!(e.message.contains("`object` is required"), "{}", e.message);
        let e = command(spec("trace").unwrap(), &args(json!({}))).unwrap_err();
        assert!(e.message.contains("start"), "{}", e.message);
    }

    #[test]
    fn a_calls_namespace_wins_over_the_servers_and_all_namespaces_over_both() {
        let doctor = spec("doctor").unwrap();
        let f = namespace_flags(&args(json!({})), doctor, Some("kcm-system")).unwrap();
        assert_eq!(strings(&f), ["--namespace", "kcm-system"]);
        let f = namespace_flags(&args(json!({"namespace": "x"})), doctor, Some("y")).unwrap();
        assert_eq!(strings(&f), ["--namespace", "x"]);
        let f = namespace_flags(&args(json!({"allNamespaces": true})), doctor, Some("y")).unwrap();
        assert_eq!(strings(&f), ["--all-namespaces"]);
        let render = spec("render").unwrap();
        assert!(namespace_flags(&args(json!({"allNamespaces": true})), render, None).is_err());
    }
}
