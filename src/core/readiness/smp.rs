//! The conditions kcm's controller sets on a StateManagementProvider (RBAC, adapter,
//! provisioners, provisioner CRDs) and `status.ready`, from the rules evaluated on the
//! referenced objects.

use serde::Serialize;
use serde_json::Value;

use super::{
    COND_ADAPTER, COND_PROVISIONER, COND_PROVISIONER_CRDS, COND_RBAC, Explain, ObjectLookup,
    REASON_BUDGET_EXCEEDED, REASON_FAILED_TO_EVALUATE, REASON_FAILED_TO_GET, REASON_GVK_ADAPTER,
    REASON_GVK_PROVISIONER, Reference, Rule, RuleOutcome, guess_resource,
};
use crate::api::crd::CustomResourceDefinition;
use crate::api::kcm::StateManagementProvider;
use crate::api::meta::Object;
use crate::core::cel::Limits;
use crate::core::objects::ObjectId;

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
            undetermined: false,
            evaluations: Vec::new(),
        };
    }
    let adapter = view.adapter();
    let provisioners = view.provisioners();

    // kcm's ensureRBAC maps the adapter's and every provisioner's kind first and returns on
    // the first it cannot map: RBACReady False, and the other conditions are not evaluated
    // (they stay as kcm last wrote them, or Unknown with no message when it never did).
    if let Some(rbac_cond) = unmappable(&adapter, &provisioners, lookup) {
        let kept = |type_: &'static str, unknown: &str| {
            recorded_condition(smp, type_).unwrap_or_else(|| Condition {
                type_,
                status: Status::Unknown,
                reason: unknown.into(),
                message: String::new(),
            })
        };
        return SmpCheck {
            smp: id,
            skipped: None,
            conditions: vec![
                rbac_cond,
                kept(COND_ADAPTER, "AdapterUnknown"),
                kept(COND_PROVISIONER, "ProvisionerUnknown"),
                kept(COND_PROVISIONER_CRDS, "ProvisionerCRDsUnknown"),
            ],
            ready: false,
            undetermined: false,
            evaluations: Vec::new(),
        };
    }

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

/// RBACReady as kcm's ensureRBAC sets it when it cannot map a reference's kind
/// (`gvrFromResourceReference`: an apiVersion of more than one `/`, or no REST mapping).
fn unmappable(
    adapter: &Reference,
    provisioners: &[Reference],
    lookup: &dyn ObjectLookup,
) -> Option<Condition> {
    let roles = std::iter::once((adapter, REASON_GVK_ADAPTER))
        .chain(provisioners.iter().map(|p| (p, REASON_GVK_PROVISIONER)));
    for (r, reason) in roles {
        let (group, version) = match r.api_version.split('/').collect::<Vec<_>>()[..] {
            [v] => ("", v),
            [g, v] => (g, v),
            _ => {
                return Some(rbac_failed(
                    reason,
                    format!(
                        "invalid API version {} for resource reference {}",
                        r.api_version,
                        r.go_format()
                    ),
                ));
            }
        };
        if let Some(e) = lookup.unmapped(group, version, &r.kind) {
            return Some(rbac_failed(
                reason,
                format!(
                    "failed to get REST mapping for {group}/{version}, Kind={}: {e}",
                    r.kind
                ),
            ));
        }
    }
    None
}

fn rbac_failed(reason: &str, error: String) -> Condition {
    Condition {
        type_: COND_RBAC,
        status: Status::False,
        reason: reason.into(),
        message: format!("Failed to ensure RBAC: {error}"),
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
                let status = r.status_if_set().unwrap_or("?");
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
    // An apiVersion kcm cannot parse stopped it in ensureRBAC already (`unmappable`).
    let group = crate::api::kinds::group_of(&r.api_version);
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
    // Saved at another served version (`kubectl get` saves the preferred one), it is what
    // kcm reads at the version named: the same fields under that apiVersion.
    let served;
    let object = if Object(object).api_version() == r.api_version {
        object
    } else {
        served = Object(object).served_at(&r.api_version);
        &served
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
            if !CustomResourceDefinition(crd).has_version(gvr.version) {
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
