//! Readiness of a StateManagementProvider, as kcm's controller computes it
//! (internal/controller/statemanagementprovider): the adapter and provisioner rules evaluated
//! against the referenced objects, the provisioner CRDs checked, the conditions and reasons
//! kcm would set, and `status.ready`.
//!
//! PURE: objects come through [`ObjectLookup`], so the same code serves saved files (`check`
//! offline) and a live snapshot.

use serde::Serialize;
use serde_json::Value;

use crate::api::kcm::StateManagementProvider;
use crate::api::kinds;
use crate::api::meta::{Object, items_at, str_at};
use crate::core::cel::{self, Clause, CompileError, Limits};
use crate::core::objects::ObjectId;

pub const COND_RBAC: &str = "RBACReady";
pub const COND_ADAPTER: &str = "AdapterReady";
pub const COND_PROVISIONER: &str = "ProvisionerReady";
pub const COND_PROVISIONER_CRDS: &str = "ProvisionerCRDsReady";

pub const REASON_FAILED_TO_GET: &str = "FailedToGetAdapter";
pub const REASON_FAILED_TO_EVALUATE: &str = "FailedToEvaluateReadiness";

/// The outcome of one readiness rule on one object, as kcm's `evaluateReadiness` reaches it.
#[derive(Debug, Clone)]
pub struct RuleOutcome {
    /// true/false, or None when compiling or evaluating failed.
    pub result: Option<bool>,
    pub error: Option<RuleError>,
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
    compiled: Option<Result<cel::CompiledRule, Vec<CompileError>>>,
}

impl Rule {
    /// kcm treats the empty string (and only it) as "ready": a rule of blanks is compiled and fails.
    pub fn new(text: &str, limits: &Limits) -> Rule {
        Rule {
            text: text.to_string(),
            compiled: (!text.is_empty()).then(|| cel::compile(text, limits)),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn compile_errors(&self) -> Option<&[CompileError]> {
        match &self.compiled {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }

    /// Evaluates the rule against an object, with the clause breakdown `explain` asks for.
    pub fn evaluate(&self, object: &Value, explain: Explain) -> RuleOutcome {
        let compiled = match &self.compiled {
            None => {
                return RuleOutcome {
                    result: Some(true),
                    error: None,
                    explanation: Vec::new(),
                };
            }
            Some(Err(errors)) => {
                let message = errors
                    .iter()
                    .map(|e| e.message.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                return RuleOutcome {
                    result: None,
                    error: Some(RuleError {
                        phase: Phase::Compile,
                        kcm_message: format!(
                            "failed to compile CEL expression: {}",
                            cel_go_issues(&self.text, errors)
                        ),
                        message,
                    }),
                    explanation: Vec::new(),
                };
            }
            Some(Ok(c)) => c,
        };
        let obj = cel::Object::from_json(object);
        let (result, error) = match compiled.evaluate(&obj) {
            cel::Verdict::True => (Some(true), None),
            cel::Verdict::False => (Some(false), None),
            cel::Verdict::Error(e) => {
                let kcm_message = if e.at_plan {
                    format!("failed to create CEL program: {}", e.message)
                } else if e.message.ends_with("expected bool") {
                    "CEL expression did not return a boolean value".to_string()
                } else {
                    format!("failed to evaluate CEL expression: {}", e.message)
                };
                (
                    None,
                    Some(RuleError {
                        phase: Phase::Evaluate,
                        message: e.message,
                        kcm_message,
                    }),
                )
            }
        };
        let explanation = if explain == Explain::Always
            || (explain == Explain::WhenNotTrue && result != Some(true))
        {
            compiled.explain(&obj)
        } else {
            Vec::new()
        };
        RuleOutcome {
            result,
            error,
            explanation,
        }
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

pub use crate::api::kcm::Reference;

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
        self.get(kinds::CRD.api_version, kinds::CRD.kind, "", name)
    }

    fn resource_of(&self, group: &str, kind: &str) -> Option<String> {
        self.objects.iter().find_map(|o| {
            (Object(o).kind() == kinds::CRD.kind
                && str_at(o, "/spec/group") == group
                && str_at(o, "/spec/names/kind") == kind)
                .then(|| str_at(o, "/spec/names/plural").to_string())
                .filter(|p| !p.is_empty())
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
    /// found (live).
    pub ready: bool,
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
    let view = StateManagementProvider(smp);
    let skipped = if view.meta().is_deleting() {
        Some(Skipped::Deleting)
    } else if view.selector().is_null() {
        Some(Skipped::SelectorNotDefined)
    } else if view.suspended() {
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
            evaluations: Vec::new(),
        };
    }
    let adapter = view.adapter();
    let provisioners = view.provisioners();

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
    let crds_cond = check_provisioner_crds(view, lookup);

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
    SmpCheck {
        smp: id,
        skipped: None,
        conditions,
        ready,
        evaluations,
    }
}

/// Where the conditions kcm last wrote into the SMP's status differ from what the evaluation
/// gives now: `(type, recorded "Status Reason", now "Status Reason")`.
pub fn disagreements(smp: &Value, check: &SmpCheck) -> Vec<(String, String, String)> {
    let recorded: Vec<_> = Object(smp).conditions().collect();
    let mut out = Vec::new();
    for c in &check.conditions {
        if c.reason == "NotEvaluatedOffline" {
            continue;
        }
        let now = format!("{:?} {}", c.status, c.reason);
        let then = recorded
            .iter()
            .find(|r| r.type_() == c.type_)
            .map(|r| {
                let status = r.0.get("status").and_then(Value::as_str).unwrap_or("?");
                format!("{status} {}", r.reason())
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
    let cond = outcome.error.as_ref().map(|e| {
        fail(
            REASON_FAILED_TO_EVALUATE,
            format!("Failed to evaluate {role} readiness: {}", e.kcm_message),
        )
    });
    (true, Some(outcome), cond)
}

fn check_provisioner_crds(smp: StateManagementProvider, lookup: &dyn ObjectLookup) -> Condition {
    let fail = |message: String| Condition {
        type_: COND_PROVISIONER_CRDS,
        status: Status::False,
        reason: "ProvisionerCRDsNotReady".into(),
        message: format!("Failed to validate provisioner CRDs: {message}"),
    };
    for gvr in smp.provisioner_crds() {
        if gvr.group.is_empty() || gvr.version.is_empty() || gvr.resources.is_empty() {
            return fail("invalid GVR".into());
        }
        for name in gvr.crd_names() {
            let Some(crd) = lookup.crd(&name) else {
                return fail(format!(
                    "failed to get CRD {name}: customresourcedefinitions.apiextensions.k8s.io {name:?} not found"
                ));
            };
            let has_version = items_at(crd, "/spec/versions")
                .iter()
                .any(|v| v.get("name").and_then(Value::as_str) == Some(gvr.version));
            if !has_version {
                return fail(format!("version {} not found in CRD {name}", gvr.version));
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

/// A condition as kcm recorded it in the SMP's status (its type as `type_`).
pub fn recorded_condition(smp: &Value, type_: &'static str) -> Option<Condition> {
    let c = Object(smp).condition(type_)?;
    Some(Condition {
        type_,
        status: match c.status() {
            "True" => Status::True,
            "False" => Status::False,
            _ => Status::Unknown,
        },
        reason: c.reason().into(),
        message: c.message().into(),
    })
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
