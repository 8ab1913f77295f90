//! ServiceSet → the Sveltos Profile (or, for self-management, ClusterProfile) that kcm's own
//! adapter writes for its default provider `ksm-projectsveltos`
//! (kcm `internal/controller/adapters/sveltos`, `ensureProfile` and `profileSpec`).
//!
//! Unlike the Flux translation, kcm builds the Profile all or nothing: the first problem
//! (a missing ClusterDeployment or cluster, a provider config it cannot decode, a template
//! without a chart...) leaves the Profile unwritten and sets the ServiceSet's
//! `ServiceSetProfile` condition to False with kcm's reason and message, which
//! [`Translation::condition`] reproduces. A Profile that would be written is put in its
//! live shape (unknown fields pruned, CRD defaults applied, keys sorted as the API server
//! returns them) and validated against the real Sveltos CRD: what it rejects, kcm cannot
//! write either.
//!
//! PURE: objects in, a translation out. `render` prints it, `doctor` explains a
//! `ServiceSetProfile=False` with it.

mod cluster;
pub mod config;
mod defaults;
mod helm;
mod services;

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value, json};

pub use crate::core::render::codes;
pub use config::{ConfigError, ProfileConfig};
pub use helm::semver;

use crate::api::kcm::{ServiceSet, ServiceTemplate, ServiceType};
use crate::api::meta::Object;
use crate::api::sveltos::{
    self as sv, ClusterRef, ProfileKind, REASON_HELM_CHARTS_BUILD_FAILED,
    REASON_KUSTOMIZATION_REFS_BUILD_FAILED, REASON_POLICY_REFS_BUILD_FAILED,
    REASON_PROFILE_BUILD_FAILED, REASON_PROFILE_NOT_READY, REASON_PROFILE_READY,
};
use crate::api::{kinds, naming};
use crate::core::crds;
use crate::core::render::{Outcome, Rendered, ServiceResult};
use crate::diag::{Diagnostic, Severity};

/// The objects a translation reads besides the ServiceSet.
pub trait Objects {
    /// An object of a kind by namespace and name ("" for cluster-scoped).
    fn get(&self, kind: &kinds::Kind, namespace: &str, name: &str) -> Option<&Value>;
    /// Whether objects of the kind were collected at all, so that one not found is really
    /// absent (a live snapshot lists every kind; `render` gets what the user passes).
    fn has_kind(&self, kind: &kinds::Kind) -> bool;
}

/// An index of a slice of objects by (kind, namespace, name), for [`Objects`].
pub struct Index<'a> {
    by_key: HashMap<(&'a str, &'a str, &'a str), &'a Value>,
    kinds: HashSet<&'a str>,
}

impl<'a> Index<'a> {
    pub fn new(objects: &'a [Value]) -> Index<'a> {
        let mut by_key = HashMap::new();
        let mut kinds = HashSet::new();
        for o in objects {
            let m = Object(o);
            kinds.insert(m.kind());
            by_key
                .entry((m.kind(), m.namespace(), m.name()))
                .or_insert(o);
        }
        Index { by_key, kinds }
    }
}

impl Objects for Index<'_> {
    fn get(&self, kind: &kinds::Kind, namespace: &str, name: &str) -> Option<&Value> {
        self.by_key.get(&(kind.kind, namespace, name)).copied()
    }
    fn has_kind(&self, kind: &kinds::Kind) -> bool {
        self.kinds.contains(kind.kind)
    }
}

/// The `ServiceSetProfile` condition kcm writes after trying.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileCondition {
    /// True when the Profile is written.
    pub ready: bool,
    pub reason: &'static str,
    /// kcm's condition message.
    pub message: String,
    /// The error kcm returns (it shows only in a Warning event and the controller's log;
    /// for reason `ServiceSetProfileNotReady` the condition message does not carry it).
    pub error: Option<String>,
}

/// What kcm's adapter makes of a ServiceSet.
#[derive(Debug)]
pub struct Translation {
    pub kind: ProfileKind,
    pub name: String,
    /// The Profile's namespace ("" for a ClusterProfile).
    pub namespace: String,
    /// The Profile or ClusterProfile in its live shape; None when kcm writes none.
    pub profile: Option<Value>,
    pub condition: ProfileCondition,
    /// The provider config as kcm reads it (None when it cannot be decoded).
    pub config: Option<ProfileConfig>,
    /// The cluster the Profile targets (None when it cannot be resolved).
    pub cluster: Option<ClusterRef>,
    /// Per service: its type and whether it is part of the Profile.
    pub services: Vec<ServiceResult>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Translation {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// The translation as `render` prints it.
    pub fn into_rendered(self) -> Rendered {
        Rendered {
            objects: self.profile.into_iter().collect(),
            services: self.services,
            diagnostics: self.diagnostics,
        }
    }
}

/// What a ServiceSet is translated from.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub service_set: &'a Value,
    /// Templates, Flux HelmCharts and repositories, the ClusterDeployment and its Credential,
    /// the CAPI Cluster or SveltosCluster.
    pub objects: &'a dyn Objects,
}

/// A failure of one build step: the condition kcm writes and the diagnostics saying why.
struct Failed {
    reason: &'static str,
    /// kcm's error (`failed to build helm charts\n...`).
    error: String,
}

struct Builder<'a> {
    ss: ServiceSet<'a>,
    objects: &'a dyn Objects,
    label: String,
    diagnostics: Vec<Diagnostic>,
    /// Service name → the problem that concerns it.
    service_problems: HashMap<String, String>,
}

impl Builder<'_> {
    fn error(&mut self, code: &'static str, message: String, help: Option<String>) {
        let mut d = Diagnostic::error(code, format!("{}: {message}", self.label));
        if let Some(h) = help {
            d = d.help(h);
        }
        self.diagnostics.push(d);
    }

    fn note(&mut self, code: &'static str, severity: Severity, message: String, help: &str) {
        let mut d = Diagnostic::new(code, severity, format!("{}: {message}", self.label));
        if !help.is_empty() {
            d = d.help(help);
        }
        self.diagnostics.push(d);
    }
}

/// Translates a ServiceSet as kcm's adapter does.
pub fn translate(inputs: &Inputs) -> Translation {
    let ss = ServiceSet(inputs.service_set);
    let self_management = ss.provider_self_management();
    let kind = if self_management {
        ProfileKind::ClusterProfile
    } else {
        ProfileKind::Profile
    };
    let mut t = Translation {
        kind,
        name: ss.name().to_string(),
        namespace: if self_management {
            String::new()
        } else {
            ss.namespace().to_string()
        },
        profile: None,
        condition: ProfileCondition {
            ready: false,
            reason: REASON_PROFILE_NOT_READY,
            message: sv::MESSAGE_PROFILE_NOT_READY.into(),
            error: None,
        },
        config: None,
        cluster: None,
        services: Vec::new(),
        diagnostics: Vec::new(),
    };
    if ss.meta().kind() != kinds::SERVICE_SET.kind || ss.name().is_empty() {
        t.diagnostics.push(Diagnostic::error(
            codes::INVALID_SERVICESET,
            "not a ServiceSet with a name",
        ));
        return t;
    }
    let mut b = Builder {
        ss,
        objects: inputs.objects,
        label: format!("ServiceSet {}/{}", ss.namespace(), ss.name()),
        diagnostics: Vec::new(),
        service_problems: HashMap::new(),
    };
    let built = build(&mut b, &mut t, self_management);
    t.diagnostics = std::mem::take(&mut b.diagnostics);
    let service_types = service_types(&b);
    match built {
        Ok(profile) => {
            t.condition = ProfileCondition {
                ready: true,
                reason: REASON_PROFILE_READY,
                message: sv::MESSAGE_PROFILE_READY.into(),
                error: None,
            };
            for svc in ss.services() {
                t.services.push(ServiceResult {
                    name: svc.name().into(),
                    namespace: svc.namespace().into(),
                    template: svc.template().into(),
                    service_type: service_types.get(svc.name()).copied().flatten(),
                    outcome: Outcome::Rendered { index: 0 },
                });
            }
            t.profile = Some(profile);
        }
        Err(failed) => {
            let message = match failed.reason {
                REASON_PROFILE_BUILD_FAILED => format!(
                    "Failed to build Profile from ServiceSet {} configuration: {}",
                    ss.name(),
                    failed.error
                ),
                REASON_HELM_CHARTS_BUILD_FAILED => format!(
                    "Failed to build Helm Charts from ServiceSet {} configuration: {}",
                    ss.name(),
                    failed.error
                ),
                REASON_KUSTOMIZATION_REFS_BUILD_FAILED => format!(
                    "Failed to build KustomizationRefs from ServiceSet {} configuration: {}",
                    ss.name(),
                    failed.error
                ),
                REASON_POLICY_REFS_BUILD_FAILED => format!(
                    "Failed to build PolicyRefs from ServiceSet {} configuration: {}",
                    ss.name(),
                    failed.error
                ),
                _ => sv::MESSAGE_PROFILE_NOT_READY.to_string(),
            };
            let error = if failed.reason == REASON_PROFILE_NOT_READY {
                Some(failed.error.clone())
            } else {
                None
            };
            let profile_disp = match kind {
                ProfileKind::Profile => format!("Profile {}/{}", ss.namespace(), ss.name()),
                ProfileKind::ClusterProfile => format!("ClusterProfile {}", ss.name()),
            };
            let mut summary = format!(
                "kcm writes no {profile_disp}: ServiceSetProfile=False {}: {message}",
                failed.reason
            );
            if let Some(e) = &error {
                summary.push_str(&format!(
                    " (kcm's error, in its log and a Warning event: {e})"
                ));
            }
            t.diagnostics
                .push(Diagnostic::error(codes::PROFILE_NOT_WRITTEN, summary).help(
                    "none of the ServiceSet's services is deployed or updated until this is fixed",
                ));
            for svc in ss.services() {
                let own = b.service_problems.get(svc.name()).cloned();
                t.services.push(ServiceResult {
                    name: svc.name().into(),
                    namespace: svc.namespace().into(),
                    template: svc.template().into(),
                    service_type: service_types.get(svc.name()).copied().flatten(),
                    outcome: Outcome::Failed {
                        message: own.unwrap_or_else(|| message.clone()),
                    },
                });
            }
            t.condition = ProfileCondition {
                ready: false,
                reason: failed.reason,
                message,
                error,
            };
        }
    }
    t
}

fn service_types<'a>(b: &Builder<'a>) -> HashMap<&'a str, Option<ServiceType>> {
    let ns = b.ss.namespace();
    b.ss.services()
        .map(|svc| {
            let ty = b
                .objects
                .get(&kinds::SERVICE_TEMPLATE, ns, svc.template())
                .and_then(|t| ServiceTemplate(t).service_type());
            (svc.name(), ty)
        })
        .collect()
}

/// kcm's `profileSpec` and `createOrUpdate(Cluster)Profile`, step by step.
fn build(b: &mut Builder, t: &mut Translation, self_management: bool) -> Result<Value, Failed> {
    let ss = b.ss;
    let ns = ss.namespace();

    // 1. The cluster, and what a ClusterDeployment's Credential adds.
    let cluster::Resolved {
        cluster,
        template_resource_refs,
        credential_policy_refs,
        in_management_cluster,
    } = cluster::resolve(b, self_management)?;
    t.cluster = Some(cluster.clone());

    // 2. The provider config.
    let config = match config::parse(ss.provider_config()) {
        Ok(c) => c,
        Err(e) => {
            b.error(
                codes::PROVIDER_CONFIG,
                format!("spec.provider.config: {}", e.message),
                Some(config_help()),
            );
            return Err(Failed {
                reason: REASON_PROFILE_BUILD_FAILED,
                error: format!("failed to build profile from config\n{}", e.message),
            });
        }
    };
    if config.nil {
        b.note(
            codes::NIL_CONFIG,
            Severity::Warning,
            "spec.provider.config is nil: kcm leaves the Profile spec zero, so it gets tier 100 (outranking every priority-derived tier, about 2.1e9: it wins every conflict) and continueOnConflict false (the first conflict stops its later charts)".into(),
            "give the ServiceSet's ClusterDeployment/MultiClusterService a provider config (even {}) or leave serviceSpec.provider.name empty so kcm writes one",
        );
    }
    for key in &config.ignored_keys {
        let hint = sv::CONFIG_KEYS
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(k, _)| format!(" (did you mean {k}?)"))
            .unwrap_or_default();
        b.note(
            codes::CONFIG_KEY_IGNORED,
            Severity::Warning,
            format!(
                "spec.provider.config.{key} is not a key kcm's adapter reads: it is ignored{hint}"
            ),
            &config_help(),
        );
    }
    let defaulted = defaults::defaulted(ss, &config, b.objects);
    let mut spec = config.spec.clone();
    t.config = Some(config);

    // 3. Helm charts, then Kustomization and policy references, in service order.
    let helm_charts = services::helm_charts(b)?;
    let kustomization_refs = services::source_refs(b, ServiceType::Kustomize)?;
    let resource_refs = services::source_refs(b, ServiceType::Resource)?;

    spec.insert("clusterSelector".into(), json!({}));
    spec.insert("clusterRefs".into(), json!([cluster.to_json()]));
    if !template_resource_refs.is_empty() {
        let list = spec
            .entry("templateResourceRefs")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(l) = list {
            l.extend(template_resource_refs);
        }
    }
    if !helm_charts.is_empty() {
        spec.insert("helmCharts".into(), Value::Array(helm_charts));
    }
    if !kustomization_refs.is_empty() {
        spec.insert("kustomizationRefs".into(), Value::Array(kustomization_refs));
    }
    let mut policy_refs: Vec<Value> = match spec.remove("policyRefs") {
        Some(Value::Array(p)) => p,
        _ => Vec::new(),
    };
    policy_refs.extend(resource_refs);
    policy_refs.extend(credential_policy_refs);
    // applyProfileSpecDefaults.
    spec.entry("syncMode")
        .or_insert_with(|| "Continuous".into());
    if spec.get("tier").and_then(Value::as_i64).unwrap_or(0) == 0 {
        spec.insert("tier".into(), sv::DEFAULT_TIER.into());
    }
    spec.entry("stopMatchingBehavior")
        .or_insert_with(|| "WithdrawPolicies".into());
    for p in &mut policy_refs {
        default_deployment_type(p);
    }
    if !policy_refs.is_empty() {
        spec.insert("policyRefs".into(), Value::Array(policy_refs));
    }
    if let Some(Value::Array(k)) = spec.get_mut("kustomizationRefs") {
        for r in k {
            default_deployment_type(r);
        }
    }
    if let Some(Value::Array(h)) = spec.get_mut("helmCharts") {
        for c in h {
            if let Value::Object(m) = c
                && m.get("helmChartAction")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .is_empty()
            {
                m.insert("helmChartAction".into(), "Install".into());
            }
        }
    }

    // 4. The object kcm creates.
    let mut metadata = Map::new();
    metadata.insert("name".into(), ss.name().into());
    if t.kind == ProfileKind::Profile {
        metadata.insert("namespace".into(), ns.into());
    }
    metadata.insert("labels".into(), json!({sv::LABEL_KCM_MANAGED: "true"}));
    if ss.paused() {
        metadata.insert(
            "annotations".into(),
            json!({sv::ANNOTATION_PROFILE_PAUSED: "true"}),
        );
    }
    if (t.kind == ProfileKind::ClusterProfile || in_management_cluster)
        && let Some(uid) = ss.meta().uid_if_set()
    {
        metadata.insert(
            "ownerReferences".into(),
            json!([naming::controller_ref(
                kinds::KCM_API_VERSION,
                kinds::SERVICE_SET.kind,
                ss.name(),
                uid
            )]),
        );
    }
    let mut profile = json!({
        "apiVersion": t.kind.kind().api_version,
        "kind": t.kind.kind().kind,
        "metadata": Value::Object(metadata),
        "spec": Value::Object(spec),
    });
    // 5. As the API server stores it, and whether it accepts it.
    crds::default_and_prune(&mut profile);
    if let Some(violations) = crds::validate(&profile)
        && !violations.is_empty()
    {
        let kind = t.kind.kind().kind;
        for v in &violations {
            b.error(
                codes::PROFILE_REJECTED,
                format!("the API server rejects the {kind} kcm writes: {v}"),
                Some(format!(
                    "kcm's {kind} write fails: ServiceSetProfile stays False (ServiceSetProfileNotReady, \"Profile is not ready\"), the error only in a Warning event; fix the ServiceSet's provider config or templates"
                )),
            );
        }
        let details: Vec<String> = violations.iter().map(|v| v.to_string()).collect();
        let what = if t.kind == ProfileKind::Profile {
            "Profile"
        } else {
            "ClusterProfile"
        };
        return Err(Failed {
            reason: REASON_PROFILE_NOT_READY,
            error: format!(
                "failed to create or update {what}: failed to create {what} for ServiceSet {}: {} \"{}\" is invalid: {}",
                ss.name(),
                what,
                ss.name(),
                details.join(", ")
            ),
        });
    }
    sort_keys(&mut profile);
    if !defaulted.is_empty() {
        b.note(
            codes::PROFILE_DEFAULTS,
            Severity::Info,
            format!("defaults kcm applies: {}", defaulted.join("; ")),
            "set a value in spec.provider.config (or the service's helmOptions/helmAction) to choose it; the Profile CRD's own defaults fill the rest (installOptions.createNamespace and replace true, upgradeOptions.maxHistory 2...)",
        );
    }
    Ok(profile)
}

fn default_deployment_type(r: &mut Value) {
    if let Value::Object(m) = r
        && m.get("deploymentType")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
    {
        m.insert("deploymentType".into(), "Remote".into());
    }
}

fn config_help() -> String {
    let keys: Vec<String> = sv::CONFIG_KEYS
        .iter()
        .map(|(k, what)| format!("{k}: {what}"))
        .collect();
    format!(
        "kcm's Sveltos adapter reads these keys of spec.provider.config (case-sensitive; others are ignored):\n{}",
        keys.join("\n")
    )
}

/// kcm's `getHelmCharts`: every service's template must exist; invalid Helm templates are
/// Sorts every object's keys, as the API server returns objects.
fn sort_keys(v: &mut Value) {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = std::mem::take(m).into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (k, mut v) in entries {
                sort_keys(&mut v);
                m.insert(k, v);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
