//! Derive the k0rdent `ServiceSet` that kcm writes for a `ClusterDeployment` or a
//! `MultiClusterService`.
//!
//! This mirrors kcm (k0rdent/kcm, `internal/serviceset/{util,builder}.go`,
//! `internal/controller/{clusterdeployment,multiclusterservice}_controller.go`):
//!
//! * name/namespace: `serviceset.ObjectKey` (CD: the CD's own key; MCS:
//!   `<cd>-<hex(sha256(mcs.name)[:4])>` in the CD namespace, or
//!   `management-<hash>` in the system namespace for self-management);
//! * metadata: one controller ownerReference (`metav1.NewControllerRef`) to the CD
//!   when a CD is given (even for an MCS), else to the MCS; labels from the
//!   StateManagementProvider selector (`extractRequiredLabels`);
//! * `spec.provider`: `StateManagementProviderConfigFromServiceSpec`, then
//!   `selfManagement = (cd == nil)`;
//! * `spec.services`: `ResolveServicesToApply` + `BuildServicesList` with no stored
//!   ServiceSet (so nothing is "locked" and there are no upgrade paths).
//!
//! Objects are handled the way kcm sees them: the inputs are first given the CRD
//! defaults the API server would have applied (a manifest from a file may lack them),
//! then every typed field goes through the same Go JSON round trip (`omitempty`,
//! `metav1.Duration` normalisation, unknown fields dropped) that happens when kcm
//! decodes the CD/MCS and encodes the ServiceSet. The result is the ServiceSet as
//! the API server stores it, i.e. including the ServiceSet CRD defaults.
//!
//! Pure: no I/O, no clock, no printing.

mod gojson;
mod spec;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::api::kcm::{ServiceSource, StateManagementProvider};
use crate::api::kinds::{self, KCM_API_VERSION};
use crate::api::meta::Object;
use crate::api::naming;
use crate::api::selector::{Op, Selector};
use spec::{defaulted_service_spec, provider_config, resolve_services};

pub use crate::api::kcm::DEFAULT_PROVIDER;

const CD_KIND: &str = kinds::CLUSTER_DEPLOYMENT.kind;
const MCS_KIND: &str = kinds::MULTI_CLUSTER_SERVICE.kind;

/// The derived ServiceSet and a one-line explanation for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub service_set: Value,
    pub explanation: String,
}

/// Why kcm writes no ServiceSet for an input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeriveError {
    /// The input is not what kcm accepts (the message says what and where, in kcm's words).
    #[error("{0}")]
    Invalid(String),
    /// The MultiClusterService's `spec.clusterSelector` does not select the ClusterDeployment:
    /// kcm renders no ServiceSet for this pair (not an error of either object).
    #[error(
        "{mcs}: spec.clusterSelector does not select {cd} (its labels do not match), so kcm renders no ServiceSet for it"
    )]
    NotSelected { mcs: String, cd: String },
}

impl From<String> for DeriveError {
    fn from(message: String) -> DeriveError {
        DeriveError::Invalid(message)
    }
}

/// The ServiceSet kcm's ClusterDeployment controller writes for `cd`
/// (`createOrUpdateServiceSet`, key = `client.ObjectKeyFromObject(cd)`).
///
/// `smp` is the StateManagementProvider named by `spec.serviceSpec.provider.name` (or the
/// default one); with `None` no labels are added. `templates` are candidate
/// ServiceTemplates; only those in the CD namespace are used.
pub fn from_cluster_deployment(
    cd: &Value,
    smp: Option<&Value>,
    templates: &[Value],
) -> Result<Derived, DeriveError> {
    let cd_meta = ObjMeta::read(cd, CD_KIND, true)?;
    let service_spec = defaulted_service_spec(cd, &cd_meta.display())?;
    let mut notes = Vec::new();
    if cd_meta.deleting {
        notes.push(
            "the ClusterDeployment is being deleted, kcm no longer updates its ServiceSet"
                .to_string(),
        );
    }
    build(
        Source {
            kind: CD_KIND,
            display: cd_meta.display(),
        },
        &cd_meta.namespace,
        &cd_meta.name,
        Some(&cd_meta),
        None,
        &service_spec,
        smp,
        templates,
        notes,
    )
}

/// The ServiceSet kcm's MultiClusterService controller writes for `mcs` and one matching
/// ClusterDeployment `cd`, or, with `cd = None`, the self-management ServiceSet
/// (only when `spec.serviceSpec.provider.selfManagement` is true).
pub fn from_multi_cluster_service(
    mcs: &Value,
    cd: Option<&Value>,
    smp: Option<&Value>,
    templates: &[Value],
    system_namespace: &str,
) -> Result<Derived, DeriveError> {
    let mcs_meta = ObjMeta::read(mcs, MCS_KIND, false)?;
    let mcs_display = mcs_meta.display();
    let service_spec = defaulted_service_spec(mcs, &mcs_display)?;
    let self_management = match service_spec
        .get("provider")
        .and_then(|p| p.get("selfManagement"))
    {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(DeriveError::Invalid(format!(
                "{mcs_display}: spec.serviceSpec.provider.selfManagement must be a boolean"
            )));
        }
    };
    let mut notes = Vec::new();
    let cd_meta = match cd {
        None => {
            if !self_management {
                return Err(DeriveError::Invalid(format!(
                    "{mcs_display} does not set spec.serviceSpec.provider.selfManagement, so kcm \
                     renders no management-cluster ServiceSet for it: an MCS renders one ServiceSet \
                     per matching ClusterDeployment, give the ClusterDeployment to render for"
                )));
            }
            if system_namespace.is_empty() {
                return Err(DeriveError::Invalid(
                    "the system namespace must not be empty".to_string(),
                ));
            }
            None
        }
        Some(cd) => {
            let m = ObjMeta::read(cd, CD_KIND, true)?;
            if m.deleting {
                return Err(DeriveError::Invalid(format!(
                    "{} is being deleted: kcm skips it and renders no ServiceSet for {mcs_display}",
                    m.display()
                )));
            }
            check_cluster_selector(mcs, &mcs_display, &m)?;
            Some(m)
        }
    };
    let deps = ServiceSource(mcs).depends_on();
    if !deps.is_empty() {
        let names = deps;
        notes.push(format!(
            "kcm creates it only once the MultiClusterServices it depends on ({}) have deployed \
             their services on this target, which is not checked here",
            names.join(", ")
        ));
    }
    let (ns, name) = key_for(cd_meta.as_ref(), &mcs_meta.name, system_namespace);
    build(
        Source {
            kind: MCS_KIND,
            display: mcs_display,
        },
        &ns,
        &name,
        cd_meta.as_ref(),
        Some(&mcs_meta),
        &service_spec,
        smp,
        templates,
        notes,
    )
}

/// The ServiceSets kcm would create for the ClusterDeployments and MultiClusterServices of
/// `main`: a ClusterDeployment's own, and for a MultiClusterService one per ClusterDeployment
/// of `all` it selects, plus the self-management one (or, when it selects none, the error
/// that explains why there is none). With a MultiClusterService in `main`, its
/// ClusterDeployments are the clusters it targets, not inputs of their own. The
/// StateManagementProviders and ServiceTemplates come from `all`.
pub fn service_sets(
    main: &[Value],
    all: &[Value],
    system_namespace: &str,
) -> Result<Vec<Derived>, DeriveError> {
    fn kind(v: &Value) -> &str {
        crate::api::Object(v).kind()
    }
    fn of_kind<'a>(all: &'a [Value], k: &'a str) -> impl Iterator<Item = &'a Value> {
        all.iter().filter(move |o| kind(o) == k)
    }
    let templates: Vec<Value> = of_kind(all, kinds::SERVICE_TEMPLATE.kind)
        .cloned()
        .collect();
    let smp_for = |source: &Value| -> Option<&Value> {
        let name = ServiceSource(source).provider_name();
        of_kind(all, kinds::STATE_MANAGEMENT_PROVIDER.kind)
            .find(|o| crate::api::Object(o).name() == name)
    };
    let cds: Vec<&Value> = of_kind(all, CD_KIND).collect();
    let has_mcs = main.iter().any(|o| kind(o) == MCS_KIND);
    let mut out = Vec::new();
    for source in main {
        match kind(source) {
            CD_KIND if !has_mcs => {
                out.push(from_cluster_deployment(
                    source,
                    smp_for(source),
                    &templates,
                )?);
            }
            MCS_KIND => {
                let before = out.len();
                for cd in &cds {
                    match from_multi_cluster_service(
                        source,
                        Some(cd),
                        smp_for(source),
                        &templates,
                        system_namespace,
                    ) {
                        Ok(d) => out.push(d),
                        // A ClusterDeployment the MultiClusterService does not select gets no
                        // ServiceSet.
                        Err(DeriveError::NotSelected { .. }) => {}
                        Err(e) => return Err(e),
                    }
                }
                if ServiceSource(source).self_management() || out.len() == before {
                    out.push(from_multi_cluster_service(
                        source,
                        None,
                        smp_for(source),
                        &templates,
                        system_namespace,
                    )?);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// `serviceset.ObjectKey`: the (namespace, name) of the ServiceSet an MCS produces for
/// `cd` (or for the management cluster when `cd` is `None`).
pub fn object_key(cd: Option<&Value>, mcs: &Value, system_namespace: &str) -> (String, String) {
    let cd = cd.map(|cd| (Object(cd).namespace(), Object(cd).name()));
    naming::mcs_service_set_key(cd, Object(mcs).name(), system_namespace)
}

/// `extractRequiredLabels` (builder.go): the labels a ServiceSet needs so that the
/// StateManagementProvider's `spec.selector` selects it. `matchLabels` are copied; an `In`
/// expression gives the first of its sorted values; `Exists` gives `""` (unless already
/// set); negative and range requirements are ignored. A nil selector is an error, and so is
/// a selector `metav1.LabelSelectorAsSelector` rejects.
pub fn selector_labels(selector: &Value) -> Result<BTreeMap<String, String>, String> {
    if selector.is_null() {
        return Err("selector cannot be nil".to_string());
    }
    let reqs = Selector::parse(selector)?;
    let mut out = BTreeMap::new();
    // maps.Copy(result, selector.MatchLabels)
    if let Some(Value::Object(ml)) = selector.get("matchLabels") {
        for (k, v) in ml {
            if let Value::String(v) = v {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    for r in reqs.requirements() {
        match r.op {
            Op::Equals | Op::In => {
                // sets.String.List() is sorted; In takes the first value.
                let vals: BTreeSet<&String> = r.values.iter().collect();
                if let Some(first) = vals.into_iter().next() {
                    out.insert(r.key.clone(), first.clone());
                }
            }
            Op::Exists => {
                out.entry(r.key.clone()).or_default();
            }
            Op::NotIn | Op::DoesNotExist => {}
        }
    }
    Ok(out)
}

struct Source {
    kind: &'static str,
    display: String,
}

#[derive(Debug, Clone)]
struct ObjMeta {
    kind: &'static str,
    name: String,
    namespace: String,
    uid: Option<String>,
    labels: BTreeMap<String, String>,
    deleting: bool,
}

impl ObjMeta {
    fn read(obj: &Value, kind: &'static str, namespaced: bool) -> Result<ObjMeta, String> {
        if !obj.is_object() {
            return Err(format!("a {kind} must be a JSON object"));
        }
        if let Some(k) = obj.get("kind").and_then(Value::as_str)
            && k != kind
        {
            return Err(format!("expected a {kind}, got a {k}"));
        }
        let name = Object(obj).name();
        if name.is_empty() {
            return Err(format!("the {kind} has no metadata.name"));
        }
        let namespace = Object(obj).namespace();
        if namespaced && namespace.is_empty() {
            return Err(format!(
                "{kind} {name} has no metadata.namespace (needed for the ServiceSet namespace)"
            ));
        }
        let uid = Some(crate::api::Object(obj).uid())
            .filter(|u| !u.is_empty())
            .map(str::to_string);
        let mut labels = BTreeMap::new();
        match Object(obj).labels() {
            Value::Null => {}
            Value::Object(m) => {
                for (k, v) in m {
                    let Value::String(v) = v else {
                        return Err(format!("{kind} {name}: label {k} is not a string"));
                    };
                    labels.insert(k.clone(), v.clone());
                }
            }
            _ => return Err(format!("{kind} {name}: metadata.labels is not an object")),
        }
        let deleting = crate::api::Object(obj).is_deleting();
        Ok(ObjMeta {
            kind,
            name: name.to_string(),
            namespace: if namespaced {
                namespace.to_string()
            } else {
                String::new()
            },
            uid,
            labels,
            deleting,
        })
    }

    fn display(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

fn key_for(cd: Option<&ObjMeta>, mcs_name: &str, system_namespace: &str) -> (String, String) {
    naming::mcs_service_set_key(
        cd.map(|c| (c.namespace.as_str(), c.name.as_str())),
        mcs_name,
        system_namespace,
    )
}

#[allow(clippy::too_many_arguments)]
fn build(
    source: Source,
    ss_namespace: &str,
    ss_name: &str,
    cd: Option<&ObjMeta>,
    mcs: Option<&ObjMeta>,
    service_spec: &Map<String, Value>,
    smp: Option<&Value>,
    templates: &[Value],
    mut notes: Vec<String>,
) -> Result<Derived, DeriveError> {
    let ctx = &source.display;
    // StateManagementProviderConfigFromServiceSpec, then SelfManagement = (cd == nil).
    let mut provider = provider_config(service_spec, ctx)?;
    let provider_name = provider
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    provider.remove("selfManagement");
    if cd.is_none() {
        provider.insert("selfManagement".into(), Value::Bool(true));
    }

    // Labels from the StateManagementProvider selector.
    let labels = match smp {
        None => None,
        Some(smp) => {
            if let Some(n) = crate::api::Object(smp).name_if_set()
                && n != provider_name
            {
                return Err(DeriveError::Invalid(format!(
                    "{ctx} uses StateManagementProvider {provider_name}, but {n} was given"
                )));
            }
            let sel = StateManagementProvider(smp).selector();
            Some(selector_labels(sel).map_err(|e| {
                format!(
                    "failed to extract required labels from StateManagementProvider \
                     {provider_name} selector: {e}"
                )
            })?)
        }
    };

    let services = resolve_services(service_spec, ss_namespace, templates, ctx, &mut notes)?;

    // metadata
    let mut meta = Map::new();
    meta.insert("name".into(), Value::String(ss_name.to_string()));
    meta.insert("namespace".into(), Value::String(ss_namespace.to_string()));
    if let Some(labels) = &labels
        && !labels.is_empty()
    {
        let m: Map<String, Value> = labels
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        meta.insert("labels".into(), Value::Object(m));
    }
    let owner = cd
        .or(mcs)
        .ok_or_else(|| DeriveError::Invalid("internal: no owner".into()))?;
    match &owner.uid {
        Some(uid) => {
            let r = naming::controller_ref(KCM_API_VERSION, owner.kind, &owner.name, uid);
            meta.insert("ownerReferences".into(), Value::Array(vec![r]));
        }
        None => notes.push(format!(
            "no ownerReference: {} has no metadata.uid",
            owner.display()
        )),
    }

    // spec (ServiceSetSpec: cluster is not omitempty, the rest is)
    let mut spec = Map::new();
    spec.insert(
        "cluster".into(),
        Value::String(cd.map(|c| c.name.clone()).unwrap_or_default()),
    );
    if let Some(mcs) = mcs {
        spec.insert("multiClusterService".into(), mcs.name.clone().into());
    }
    spec.insert("provider".into(), Value::Object(provider));
    let n_services = services.len();
    if !services.is_empty() {
        spec.insert("services".into(), Value::Array(services));
    }

    let mut ss = Map::new();
    ss.insert("apiVersion".into(), KCM_API_VERSION.into());
    ss.insert("kind".into(), kinds::SERVICE_SET.kind.into());
    ss.insert("metadata".into(), Value::Object(meta));
    ss.insert("spec".into(), Value::Object(spec));

    let label_note = match &labels {
        Some(_) => "labels from its selector".to_string(),
        None => {
            format!("selector labels unknown, StateManagementProvider {provider_name} not given")
        }
    };
    let target = match (cd, source.kind) {
        (Some(cd), MCS_KIND) => format!(" for {}", cd.display()),
        (None, _) => " for the management cluster".to_string(),
        _ => String::new(),
    };
    let mut explanation = format!(
        "derived ServiceSet {ss_namespace}/{ss_name} from {}{target} (provider {provider_name}, \
         {label_note}; {n_services} service(s))",
        source.display
    );
    for n in notes {
        explanation.push_str("; ");
        explanation.push_str(&n);
    }
    Ok(Derived {
        service_set: Value::Object(ss),
        explanation,
    })
}

/// An MCS only renders for ClusterDeployments its `spec.clusterSelector` selects. An
/// empty selector selects none (`if !selector.Empty()` guards the List).
fn check_cluster_selector(mcs: &Value, mcs_display: &str, cd: &ObjMeta) -> Result<(), DeriveError> {
    let sel = match ServiceSource(mcs).cluster_selector() {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v) => v.clone(),
    };
    let reqs = Selector::parse(&sel).map_err(|e| {
        format!("{mcs_display}: failed to convert ClusterSelector to selector: {e}")
    })?;
    if reqs.is_empty() {
        return Err(DeriveError::Invalid(format!(
            "{mcs_display} has an empty spec.clusterSelector, which kcm treats as selecting no \
             ClusterDeployment"
        )));
    }
    if !reqs.matches_map(&cd.labels) {
        return Err(DeriveError::NotSelected {
            mcs: mcs_display.to_string(),
            cd: cd.display(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
