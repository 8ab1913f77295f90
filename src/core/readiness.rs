//! Readiness of a StateManagementProvider, as kcm's controller computes it
//! (internal/controller/statemanagementprovider): the adapter and provisioner rules evaluated
//! against the referenced objects, the provisioner CRDs checked, the conditions and reasons
//! kcm would set, and `status.ready`.
//!
//! PURE: objects come through [`ObjectLookup`], so the same code serves saved files (`check`
//! offline) and a live snapshot.

use serde::Serialize;
use serde_json::Value;

use crate::core::cel::{self, Clause, CompileError, Environment, Limits};
use crate::core::objects::ObjectId;

pub const COND_RBAC: &str = "RBACReady";
pub const COND_ADAPTER: &str = "AdapterReady";
pub const COND_PROVISIONER: &str = "ProvisionerReady";
pub const COND_PROVISIONER_CRDS: &str = "ProvisionerCRDsReady";

pub const REASON_FAILED_TO_GET: &str = "FailedToGetAdapter";
pub const REASON_FAILED_TO_EVALUATE: &str = "FailedToEvaluateReadiness";
/// Not kcm's: our evaluation budget stopped the rule, so the condition kcm would set is
/// unknown (kcm has no budget and would keep evaluating).
pub const REASON_BUDGET_EXCEEDED: &str = "NotEvaluatedBudgetExceeded";

/// The outcome of one rule on one object, as kcm's `evaluateReadiness` (or, for health rules,
/// the Sveltos adapter's verifier) reaches it.
#[derive(Debug, Clone)]
pub struct RuleOutcome {
    /// true/false, or None when compiling or evaluating failed, or the budget stopped it.
    pub result: Option<bool>,
    pub error: Option<RuleError>,
    /// Our evaluation budget stopped the rule: no verdict (kcm has no budget and would keep
    /// evaluating). Never set together with `result` or `error`.
    pub budget_exceeded: Option<cel::BudgetExceeded>,
    /// The rule broken into clauses with their values (empty when the rule is true or empty).
    pub explanation: Vec<Clause>,
}

#[derive(Debug, Clone)]
pub struct RuleError {
    pub phase: Phase,
    /// The error as the CEL library reports it (e.g. `no such key: readyReplicas`).
    pub message: String,
    /// The message kcm writes into the condition after its prefix
    /// (`failed to compile CEL expression: ...`).
    pub kcm_message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Compile,
    Evaluate,
}

/// When to break a rule into clauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Explain {
    Never,
    /// For a false or failing result (the default of `eval` and `check`).
    WhenNotTrue,
    /// Also for a true result (`-v`).
    Always,
}

/// A rule compiled once, for evaluation against many objects.
pub struct Rule {
    text: String,
    env: Environment,
    compiled: Option<Result<cel::CompiledRule, Vec<CompileError>>>,
}

impl Rule {
    /// A readiness rule. kcm treats the empty string (and only it) as "ready": a rule of
    /// blanks is compiled and fails.
    pub fn new(text: &str, limits: &Limits) -> Rule {
        Rule::in_env(text, limits, Environment::Readiness)
    }

    /// A rule of one of kcm's CEL environments (a health rule's `healthy` expression has no
    /// empty-means-true shortcut: it is compiled, and the empty text does not compile).
    pub fn in_env(text: &str, limits: &Limits, env: Environment) -> Rule {
        let compile = !text.is_empty() || env == Environment::Health;
        Rule {
            text: text.to_string(),
            env,
            compiled: compile.then(|| cel::compile_in(text, limits, env)),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn env(&self) -> Environment {
        self.env
    }

    pub fn compile_errors(&self) -> Option<&[CompileError]> {
        match &self.compiled {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }

    /// The value of the rule as a health rule's `message`: the string it evaluates to, and
    /// the empty string when it fails or is not a string (as the verifier does).
    pub fn message_for(&self, object: &Value) -> String {
        match &self.compiled {
            Some(Ok(c)) => match c.value(&cel_object(object)) {
                Ok(cel::Value::String(s)) => s.to_string(),
                _ => String::new(),
            },
            _ => String::new(),
        }
    }

    /// Evaluates the rule against an object, with the clause breakdown `explain` asks for.
    pub fn evaluate(&self, object: &Value, explain: Explain) -> RuleOutcome {
        let compiled = match &self.compiled {
            None => {
                return RuleOutcome {
                    result: Some(true),
                    error: None,
                    budget_exceeded: None,
                    explanation: Vec::new(),
                };
            }
            Some(Err(errors)) => {
                let message = errors
                    .iter()
                    .map(|e| e.message.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                let issues = cel_go_issues(&self.text, errors);
                return RuleOutcome {
                    result: None,
                    error: Some(RuleError {
                        phase: Phase::Compile,
                        kcm_message: match self.env {
                            Environment::Readiness => {
                                format!("failed to compile CEL expression: {issues}")
                            }
                            Environment::Health => format!("healthy: compile: {issues}"),
                        },
                        message,
                    }),
                    budget_exceeded: None,
                    explanation: Vec::new(),
                };
            }
            Some(Ok(c)) => c,
        };
        let obj = cel_object(object);
        let (verdict, explanation) = compiled.evaluate_explained(
            &obj,
            match explain {
                Explain::Never => cel::Explain::Never,
                Explain::WhenNotTrue => cel::Explain::WhenNotTrue,
                Explain::Always => cel::Explain::Always,
            },
        );
        let (result, error, budget_exceeded) = match verdict {
            cel::Verdict::True => (Some(true), None, None),
            cel::Verdict::False => (Some(false), None, None),
            cel::Verdict::BudgetExceeded(b) => (None, None, Some(b)),
            cel::Verdict::Error(e) => {
                let kcm_message = match (self.env, e.stage) {
                    (Environment::Readiness, cel::Stage::Program) => {
                        format!("failed to create CEL program: {}", e.message)
                    }
                    (Environment::Readiness, cel::Stage::Result) => {
                        "CEL expression did not return a boolean value".to_string()
                    }
                    (Environment::Readiness, cel::Stage::Eval) => {
                        format!("failed to evaluate CEL expression: {}", e.message)
                    }
                    (Environment::Health, cel::Stage::Program) => {
                        format!("healthy: program: {}", e.message)
                    }
                    (Environment::Health, cel::Stage::Result) => format!(
                        "healthy expression returned {}, want bool",
                        go_type_of_result(compiled, &obj)
                    ),
                    (Environment::Health, cel::Stage::Eval) => {
                        format!("evaluate healthy: {}", e.message)
                    }
                };
                (
                    None,
                    Some(RuleError {
                        phase: Phase::Evaluate,
                        message: e.message,
                        kcm_message,
                    }),
                    None,
                )
            }
        };
        RuleOutcome {
            result,
            error,
            budget_exceeded,
            explanation,
        }
    }
}

/// The object as CEL sees it; a Secret's data never shows in explanations.
fn cel_object(object: &Value) -> cel::Object {
    let obj = cel::Object::from_json(object);
    if crate::core::objects::is_secret(object) {
        obj.redacting(crate::core::objects::SECRET_DATA_PATHS)
    } else {
        obj
    }
}

/// Go's `%T` of what a health rule's `healthy` returned, as the verifier's error names it.
fn go_type_of_result(compiled: &cel::CompiledRule, obj: &cel::Object) -> &'static str {
    match compiled.value(obj) {
        Ok(cel::Value::Int(_)) => "int64",
        Ok(cel::Value::Uint(_)) => "uint64",
        Ok(cel::Value::Double(_)) => "float64",
        Ok(cel::Value::String(_)) => "string",
        Ok(cel::Value::Bytes(_)) => "[]uint8",
        Ok(cel::Value::Null) => "structpb.NullValue",
        Ok(cel::Value::List(_)) => "[]ref.Val",
        Ok(cel::Value::Map(_)) => "map[ref.Val]ref.Val",
        Ok(cel::Value::Timestamp(_)) => "time.Time",
        Ok(cel::Value::Duration(_)) => "time.Duration",
        Ok(cel::Value::Type(_)) => "*types.Type",
        _ => "bool",
    }
}

/// cel-go's `issues.Err()` text: `ERROR: <input>:L:C: message` with the source line and a caret.
fn cel_go_issues(rule: &str, errors: &[CompileError]) -> String {
    errors
        .iter()
        .map(|e| {
            let Some(span) = &e.span else {
                return format!("ERROR: <input>:1:1: {}", e.message);
            };
            let start = span.start.min(rule.len());
            let line_start = rule[..start].rfind('\n').map_or(0, |i| i + 1);
            let line_no = rule[..start].matches('\n').count() + 1;
            let col = rule[line_start..start].chars().count();
            let line_text = rule[line_start..].lines().next().unwrap_or("");
            format!(
                "ERROR: <input>:{line_no}:{}: {}\n | {line_text}\n | {}^",
                col + 1,
                e.message,
                ".".repeat(col)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A reference of an SMP (`spec.adapter`, `spec.provisioner[]`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reference {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub readiness_rule: String,
}

impl Reference {
    fn from_json(v: &Value) -> Reference {
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        Reference {
            api_version: s("apiVersion"),
            kind: s("kind"),
            name: s("name"),
            namespace: s("namespace"),
            readiness_rule: s("readinessRule"),
        }
    }

    /// Go's `%s` of the struct, as kcm's error messages print it.
    fn go_format(&self) -> String {
        format!(
            "{{{} {} {} {} {}}}",
            self.api_version, self.kind, self.name, self.namespace, self.readiness_rule
        )
    }
}

/// Where a referenced object comes from: saved files or a live snapshot.
pub trait ObjectLookup {
    /// The object with this apiVersion, kind, namespace ("" for cluster-wide) and name.
    fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<&Value>;
    /// A CustomResourceDefinition by name (`<plural>.<group>`).
    fn crd(&self, name: &str) -> Option<&Value>;
    /// The plural resource of a kind, for messages (`deployments.apps`); None if unknown.
    fn resource_of(&self, group: &str, kind: &str) -> Option<String>;
}

/// An in-memory set of objects (files, a dump).
#[derive(Debug, Default)]
pub struct ObjectSet {
    objects: Vec<Value>,
}

impl ObjectSet {
    pub fn new(objects: Vec<Value>) -> ObjectSet {
        ObjectSet { objects }
    }

    pub fn len(&self) -> usize {
        self.objects.len()
    }

    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

impl ObjectLookup for ObjectSet {
    fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<&Value> {
        self.objects.iter().find(|o| {
            let id = ObjectId::of(o);
            id.api_version == api_version
                && id.kind == kind
                && id.namespace == namespace
                && id.name == name
        })
    }

    fn crd(&self, name: &str) -> Option<&Value> {
        self.get(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "",
            name,
        )
    }

    fn resource_of(&self, group: &str, kind: &str) -> Option<String> {
        self.objects.iter().find_map(|o| {
            let id = ObjectId::of(o);
            if id.kind != "CustomResourceDefinition" {
                return None;
            }
            let spec = o.get("spec")?;
            (spec.get("group")?.as_str()? == group
                && spec.pointer("/names/kind")?.as_str()? == kind)
                .then(|| spec.pointer("/names/plural")?.as_str().map(str::to_string))?
        })
    }
}

/// The plural resource name Kubernetes would guess for a kind (apimachinery's
/// UnsafeGuessKindToResource), for messages when discovery is not at hand.
pub fn guess_resource(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.is_empty() {
        return lower;
    }
    if lower.ends_with('s')
        || lower.ends_with("sh")
        || lower.ends_with("ch")
        || lower.ends_with('x')
        || lower.ends_with('z')
    {
        return format!("{lower}es");
    }
    if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    format!("{lower}s")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Status {
    True,
    False,
    Unknown,
}

/// A condition as kcm would set it.
#[derive(Debug, Clone, Serialize)]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: &'static str,
    pub status: Status,
    pub reason: String,
    pub message: String,
}

/// One rule evaluation of the check, for the report.
#[derive(Debug, Clone)]
pub struct Evaluation {
    /// `adapter` or `provisioner[i]`.
    pub role: String,
    pub reference: Reference,
    pub found: bool,
    pub outcome: Option<RuleOutcome>,
}

/// Why kcm does not reconcile an SMP at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Skipped {
    /// `spec.selector` is nil: event StateManagementProviderSelectorNotDefined.
    SelectorNotDefined,
    /// `spec.suspend: true`: event StateManagementProviderSuspended.
    Suspended,
    /// `metadata.deletionTimestamp` is set.
    Deleting,
}

#[derive(Debug, Clone)]
pub struct SmpCheck {
    pub smp: ObjectId,
    pub skipped: Option<Skipped>,
    pub conditions: Vec<Condition>,
    /// What kcm would write into `status.ready`, with RBACReady taken as True (offline) or as
    /// found (live). False when `undetermined`.
    pub ready: bool,
    /// A rule exceeded our evaluation budget: what kcm would write is not known.
    pub undetermined: bool,
    pub evaluations: Vec<Evaluation>,
}

/// How RBACReady is known.
#[derive(Debug, Clone)]
pub enum Rbac {
    /// Not evaluated (offline): reported as Unknown, and `ready` assumes kcm succeeds.
    NotEvaluated,
    Known(Condition),
}

/// Checks an SMP as kcm's reconcile would.
pub fn check_smp(
    smp: &Value,
    lookup: &dyn ObjectLookup,
    rbac: Rbac,
    limits: &Limits,
    explain: Explain,
) -> SmpCheck {
    let id = ObjectId::of(smp);
    let spec = smp.get("spec").cloned().unwrap_or(Value::Null);
    let skipped = if smp
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        Some(Skipped::Deleting)
    } else if spec.get("selector").is_none_or(Value::is_null) {
        Some(Skipped::SelectorNotDefined)
    } else if spec.get("suspend").and_then(Value::as_bool) == Some(true) {
        Some(Skipped::Suspended)
    } else {
        None
    };
    if skipped.is_some() {
        return SmpCheck {
            smp: id,
            skipped,
            conditions: Vec::new(),
            ready: false,
            undetermined: false,
            evaluations: Vec::new(),
        };
    }
    let adapter = Reference::from_json(spec.get("adapter").unwrap_or(&Value::Null));
    let provisioners: Vec<Reference> = spec
        .get("provisioner")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(Reference::from_json).collect())
        .unwrap_or_default();

    let mut evaluations = Vec::new();
    let adapter_cond = {
        let (found, outcome, cond) = ensure(&adapter, "adapter", lookup, limits, explain);
        evaluations.push(Evaluation {
            role: "adapter".into(),
            reference: adapter.clone(),
            found,
            outcome,
        });
        cond.unwrap_or_else(|| {
            ok_or_not(
                COND_ADAPTER,
                "Adapter",
                "adapter",
                evaluations[0].outcome.as_ref().and_then(|o| o.result) == Some(true),
            )
        })
    };

    // kcm stops at the first provisioner it cannot get or evaluate; a false one does not stop it.
    let mut prov_cond: Option<Condition> = None;
    let mut all_ready = true;
    for (i, p) in provisioners.iter().enumerate() {
        let (found, outcome, cond) = ensure(p, "provisioner", lookup, limits, explain);
        if prov_cond.is_none() {
            if let Some(c) = cond {
                prov_cond = Some(c);
            } else {
                all_ready &= outcome.as_ref().and_then(|o| o.result) == Some(true);
            }
        }
        evaluations.push(Evaluation {
            role: format!("provisioner[{i}]"),
            reference: p.clone(),
            found,
            outcome,
        });
    }
    let prov_cond = prov_cond
        .unwrap_or_else(|| ok_or_not(COND_PROVISIONER, "Provisioner", "provisioner", all_ready));
    let crds_cond = check_provisioner_crds(&spec, lookup);

    let rbac_cond = match rbac {
        Rbac::NotEvaluated => Condition {
            type_: COND_RBAC,
            status: Status::Unknown,
            reason: "NotEvaluatedOffline".into(),
            message: format!(
                "not evaluated offline: kcm creates ServiceAccount {0}-sa, ClusterRole {0}-cr and ClusterRoleBinding {0}-crb",
                id.name
            ),
        },
        Rbac::Known(c) => c,
    };
    let rbac_ok = rbac_cond.status == Status::True || rbac_cond.reason == "NotEvaluatedOffline";
    let conditions = vec![rbac_cond, adapter_cond, prov_cond, crds_cond];
    let ready = rbac_ok && conditions.iter().skip(1).all(|c| c.status == Status::True);
    let undetermined = conditions
        .iter()
        .any(|c| c.reason == REASON_BUDGET_EXCEEDED);
    SmpCheck {
        smp: id,
        skipped: None,
        conditions,
        ready,
        undetermined,
        evaluations,
    }
}

/// Where the conditions kcm last wrote into the SMP's status differ from what the evaluation
/// gives now: `(type, recorded "Status Reason", now "Status Reason")`.
pub fn disagreements(smp: &Value, check: &SmpCheck) -> Vec<(String, String, String)> {
    let recorded: Vec<&Value> = smp
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut out = Vec::new();
    for c in &check.conditions {
        if c.reason == "NotEvaluatedOffline" {
            continue;
        }
        let now = format!("{:?} {}", c.status, c.reason);
        let then = recorded
            .iter()
            .find(|r| r.get("type").and_then(Value::as_str) == Some(c.type_))
            .map(|r| {
                format!(
                    "{} {}",
                    r.get("status").and_then(Value::as_str).unwrap_or("?"),
                    r.get("reason").and_then(Value::as_str).unwrap_or("")
                )
            })
            .unwrap_or_else(|| "(not written)".into());
        if then != now {
            out.push((c.type_.to_string(), then, now));
        }
    }
    out
}

fn ok_or_not(type_: &'static str, title: &str, lower: &str, ready: bool) -> Condition {
    if ready {
        Condition {
            type_,
            status: Status::True,
            reason: format!("{title}EnsuredSuccessfully"),
            message: format!("Successfully ensured {lower}"),
        }
    } else {
        Condition {
            type_,
            status: Status::False,
            reason: format!("{title}NotReady"),
            message: format!("{lower} not ready"),
        }
    }
}

/// Gets and evaluates one reference; returns a condition when kcm would stop with an error.
fn ensure(
    r: &Reference,
    role: &str,
    lookup: &dyn ObjectLookup,
    limits: &Limits,
    explain: Explain,
) -> (bool, Option<RuleOutcome>, Option<Condition>) {
    let type_ = if role == "adapter" {
        COND_ADAPTER
    } else {
        COND_PROVISIONER
    };
    let fail = |reason: &str, message: String| Condition {
        type_,
        status: Status::False,
        reason: reason.to_string(),
        message,
    };
    let parts: Vec<&str> = r.api_version.split('/').collect();
    let group = match parts.as_slice() {
        [_] => "",
        [g, _] => g,
        _ => {
            let msg = format!(
                "Failed to get {role} object: failed to get GVK from resource reference {0}: invalid API version {1} for resource reference {0}",
                r.go_format(),
                r.api_version
            );
            return (false, None, Some(fail(REASON_FAILED_TO_GET, msg)));
        }
    };
    let Some(object) = lookup.get(&r.api_version, &r.kind, &r.namespace, &r.name) else {
        let resource = lookup
            .resource_of(group, &r.kind)
            .unwrap_or_else(|| guess_resource(&r.kind));
        let qualified = if group.is_empty() {
            resource
        } else {
            format!("{resource}.{group}")
        };
        let msg = format!(
            "Failed to get {role} object: {qualified} {:?} not found",
            r.name
        );
        return (false, None, Some(fail(REASON_FAILED_TO_GET, msg)));
    };
    let rule = Rule::new(&r.readiness_rule, limits);
    let outcome = rule.evaluate(object, explain);
    let cond = match (&outcome.error, &outcome.budget_exceeded) {
        (Some(e), _) => Some(fail(
            REASON_FAILED_TO_EVALUATE,
            format!("Failed to evaluate {role} readiness: {}", e.kcm_message),
        )),
        (None, Some(b)) => Some(Condition {
            type_,
            status: Status::Unknown,
            reason: REASON_BUDGET_EXCEEDED.into(),
            message: format!("{role} readiness not known: the rule {}", b.message()),
        }),
        (None, None) => None,
    };
    (true, Some(outcome), cond)
}

fn check_provisioner_crds(spec: &Value, lookup: &dyn ObjectLookup) -> Condition {
    let fail = |message: String| Condition {
        type_: COND_PROVISIONER_CRDS,
        status: Status::False,
        reason: "ProvisionerCRDsNotReady".into(),
        message: format!("Failed to validate provisioner CRDs: {message}"),
    };
    for gvr in spec
        .get("provisionerCRDs")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let s = |k: &str| gvr.get(k).and_then(Value::as_str).unwrap_or("");
        let (group, version) = (s("group"), s("version"));
        let resources: Vec<&str> = gvr
            .get("resources")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if group.is_empty() || version.is_empty() || resources.is_empty() {
            return fail("invalid GVR".into());
        }
        for resource in resources {
            let name = format!("{resource}.{group}");
            let Some(crd) = lookup.crd(&name) else {
                return fail(format!(
                    "failed to get CRD {name}: customresourcedefinitions.apiextensions.k8s.io {name:?} not found"
                ));
            };
            let has_version = crd
                .pointer("/spec/versions")
                .and_then(Value::as_array)
                .is_some_and(|vs| {
                    vs.iter()
                        .any(|v| v.get("name").and_then(Value::as_str) == Some(version))
                });
            if !has_version {
                return fail(format!("version {version} not found in CRD {name}"));
            }
        }
    }
    Condition {
        type_: COND_PROVISIONER_CRDS,
        status: Status::True,
        reason: "ProvisionerCRDsEnsuredSuccessfully".into(),
        message: "Successfully ensured provisioner CRDs".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(name: &str, ns: &str, status: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns}, "status": status})
    }

    fn crd(plural: &str, group: &str, kind: &str, versions: &[&str]) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "names": {"kind": kind, "plural": plural},
                     "versions": versions.iter().map(|v| json!({"name": v})).collect::<Vec<_>>()}})
    }

    fn smp(adapter_rule: &str, prov_rule: &str) -> Value {
        json!({"apiVersion": "k0rdent.mirantis.com/v1beta1", "kind": "StateManagementProvider",
            "metadata": {"name": "ksm-flux"},
            "spec": {
                "adapter": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "flux-adapter", "namespace": "kcm-system", "readinessRule": adapter_rule},
                "provisioner": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "helm-controller", "namespace": "flux-system", "readinessRule": prov_rule}],
                "provisionerCRDs": [{"group": "helm.toolkit.fluxcd.io", "version": "v2", "resources": ["helmreleases"]}],
                "selector": {"matchLabels": {"ksm.k0rdent.mirantis.com/adapter": "flux-adapter"}},
                "suspend": false}})
    }

    fn set() -> ObjectSet {
        ObjectSet::new(vec![
            deployment(
                "flux-adapter",
                "kcm-system",
                json!({"replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 1}),
            ),
            deployment(
                "helm-controller",
                "flux-system",
                json!({"observedGeneration": 1}),
            ),
            crd(
                "helmreleases",
                "helm.toolkit.fluxcd.io",
                "HelmRelease",
                &["v2"],
            ),
        ])
    }

    fn conds(c: &SmpCheck) -> Vec<String> {
        c.conditions
            .iter()
            .map(|c| format!("{} {:?} {}: {}", c.type_, c.status, c.reason, c.message))
            .collect()
    }

    #[test]
    fn ready_provider() {
        let c = check_smp(
            &smp("self.status.readyReplicas == self.status.replicas", ""),
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        assert!(c.ready, "{:?}", conds(&c));
        assert_eq!(
            conds(&c)[1],
            "AdapterReady True AdapterEnsuredSuccessfully: Successfully ensured adapter"
        );
    }

    #[test]
    fn scaled_to_zero_provisioner_fails_to_evaluate_like_kcm() {
        let c = check_smp(
            &smp("", "self.status.availableReplicas > 0"),
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        assert!(!c.ready);
        assert_eq!(
            conds(&c)[2],
            "ProvisionerReady False FailedToEvaluateReadiness: Failed to evaluate provisioner readiness: failed to evaluate CEL expression: no such key: availableReplicas"
        );
    }

    #[test]
    fn false_rule_and_compile_errors() {
        let c = check_smp(
            &smp(
                "self.status.readyReplicas == 2",
                "has(self.status.readyReplicas)",
            ),
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        assert_eq!(
            conds(&c)[1],
            "AdapterReady False AdapterNotReady: adapter not ready"
        );
        assert_eq!(
            conds(&c)[2],
            "ProvisionerReady False ProvisionerNotReady: provisioner not ready"
        );
        assert!(
            !c.evaluations[0]
                .outcome
                .as_ref()
                .unwrap()
                .explanation
                .is_empty()
        );
        let c = check_smp(
            &smp("status.ready", ""),
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        assert!(conds(&c)[1].starts_with("AdapterReady False FailedToEvaluateReadiness: Failed to evaluate adapter readiness: failed to compile CEL expression: ERROR: <input>:1:1: undeclared reference to 'status'"), "{:?}", conds(&c));
    }

    #[test]
    fn missing_objects_and_crds() {
        let mut s = smp("", "");
        s["spec"]["adapter"]["name"] = json!("nope");
        s["spec"]["provisionerCRDs"][0]["version"] = json!("v2beta1");
        let c = check_smp(
            &s,
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        assert_eq!(
            conds(&c)[1],
            "AdapterReady False FailedToGetAdapter: Failed to get adapter object: deployments.apps \"nope\" not found"
        );
        assert_eq!(
            conds(&c)[3],
            "ProvisionerCRDsReady False ProvisionerCRDsNotReady: Failed to validate provisioner CRDs: version v2beta1 not found in CRD helmreleases.helm.toolkit.fluxcd.io"
        );
        s["spec"]["provisionerCRDs"][0]["resources"] = json!(["kustomizations"]);
        let c = check_smp(
            &s,
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        assert!(conds(&c)[3].ends_with("failed to get CRD kustomizations.helm.toolkit.fluxcd.io: customresourcedefinitions.apiextensions.k8s.io \"kustomizations.helm.toolkit.fluxcd.io\" not found"));
        s["spec"]["provisionerCRDs"][0]["group"] = json!("");
        let c = check_smp(
            &s,
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        assert!(conds(&c)[3].ends_with("invalid GVR"));
    }

    #[test]
    fn skipped_providers() {
        let mut s = smp("", "");
        s["spec"]["suspend"] = json!(true);
        assert_eq!(
            check_smp(
                &s,
                &set(),
                Rbac::NotEvaluated,
                &Limits::default(),
                Explain::WhenNotTrue
            )
            .skipped,
            Some(Skipped::Suspended)
        );
        s["spec"].as_object_mut().unwrap().remove("selector");
        assert_eq!(
            check_smp(
                &s,
                &set(),
                Rbac::NotEvaluated,
                &Limits::default(),
                Explain::WhenNotTrue
            )
            .skipped,
            Some(Skipped::SelectorNotDefined)
        );
    }

    #[test]
    fn invalid_api_version_message_matches_kcm() {
        let mut s = smp("", "");
        s["spec"]["adapter"]["apiVersion"] = json!("a/b/c");
        let c = check_smp(
            &s,
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::WhenNotTrue,
        );
        assert_eq!(
            conds(&c)[1],
            "AdapterReady False FailedToGetAdapter: Failed to get adapter object: failed to get GVK from resource reference {a/b/c Deployment flux-adapter kcm-system }: invalid API version a/b/c for resource reference {a/b/c Deployment flux-adapter kcm-system }"
        );
    }

    #[test]
    fn recorded_status_is_compared_with_the_evaluation() {
        let mut s = smp("self.status.readyReplicas == 2", "");
        s["status"] = json!({"ready": true, "conditions": [
            {"type": "AdapterReady", "status": "True", "reason": "AdapterEnsuredSuccessfully"},
            {"type": "ProvisionerReady", "status": "True", "reason": "ProvisionerEnsuredSuccessfully"}]});
        let c = check_smp(
            &s,
            &set(),
            Rbac::NotEvaluated,
            &Limits::default(),
            Explain::Never,
        );
        let d = disagreements(&s, &c);
        assert_eq!(
            d[0],
            (
                "AdapterReady".into(),
                "True AdapterEnsuredSuccessfully".into(),
                "False AdapterNotReady".into()
            )
        );
        assert_eq!(d[1].0, "ProvisionerCRDsReady");
        assert_eq!(d[1].1, "(not written)");
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn resource_guessing() {
        assert_eq!(guess_resource("Deployment"), "deployments");
        assert_eq!(guess_resource("Policy"), "policies");
        assert_eq!(guess_resource("Ingress"), "ingresses");
        assert_eq!(guess_resource("Gateway"), "gateways");
    }
}
